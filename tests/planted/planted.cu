// Deliberately wrong CUDA implementations: each op registered below plants one hazard that the checker
// (compare/check.py) must reject. tests/test_planted.py builds this file with
// compare.build.build("planted", path=...) and runs every op through compare.check.check_case.
//
// The gelu_* ops claim to compute GELU (tanh approximation, specs/gelu.py) of any float tensor; the softmax_* ops
// a row softmax of an (M, N) tensor (specs/softmax.py). Same two-half layout as cuda_src/<op>.cu: nvcc sees only
// the kernels and launchers, the C++ compiler only the torch binding.
#include "lab.h"

namespace planted {
enum class Gelu : int { correct, zeros, full_blocks_only, off_by_one, bf16_math, textbook_tanh };
enum class Softmax : int { correct, no_max };
}  // namespace planted

cudaError_t launch_planted_gelu(planted::Gelu kind, lab::DType dtype, const void* x, void* y, int64_t n,
                                cudaStream_t stream);
cudaError_t launch_planted_softmax(planted::Softmax kind, lab::DType dtype, const void* x, void* y, int64_t rows,
                                   int64_t launch_rows, int64_t cols, cudaStream_t stream);
cudaError_t launch_planted_softmax_race(lab::DType dtype, const void* x, void* y, float* row_max, float* row_sum,
                                        int64_t rows, int64_t cols, cudaStream_t stream);

#ifdef __CUDACC__
#include "lab_device.cuh"

namespace {

constexpr int kThreads = 256;
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubicCoeff = 0.044715f;

// The correct math, in fp32: 0.5·(1 + tanh(u)) == 1 / (1 + e^(-2u)).
__device__ __forceinline__ float gelu_ok(float v) {
  const float u = kSqrt2OverPi * (v + kCubicCoeff * v * v * v);
  return v / (1.0f + expf(-2.0f * u));
}

// A correct kernel, for the patterns whose bug is in the binding (returns its input, in place, wrong stride,
// cached).
template <typename T>
__global__ void gelu_correct_kernel(const T* x, T* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = lab::from_float<T>(gelu_ok(lab::to_float(x[i])));
}

// Writes zeros: a stub left in place of the math.
template <typename T>
__global__ void gelu_zeros_kernel(const T*, T* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = lab::from_float<T>(0.0f);
}

// Tail unwritten: no bounds check, because the launcher (below) only launches full blocks: n / kThreads of them,
// rounded down. The last n % kThreads elements are never written.
template <typename T>
__global__ void gelu_full_blocks_kernel(const T* x, T* y, int64_t) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  y[i] = lab::from_float<T>(gelu_ok(lab::to_float(x[i])));
}

// Off-by-one bound: `i < n - 1`, so the very last element is never written.
template <typename T>
__global__ void gelu_off_by_one_kernel(const T* x, T* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n - 1) y[i] = lab::from_float<T>(gelu_ok(lab::to_float(x[i])));
}

// Too low a precision: the input is rounded to bf16 (8-bit mantissa) before the math and the result again after,
// a "fast path" staged through bf16. About 3 significant digits: outside any fp32 or fp16 tolerance.
template <typename T>
__global__ void gelu_bf16_kernel(const T* x, T* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = __bfloat162float(__float2bfloat16_rn(lab::to_float(x[i])));
    y[i] = lab::from_float<T>(__bfloat162float(__float2bfloat16_rn(gelu_ok(v))));
  }
}

// Produces NaN: the textbook tanh(u) = (e^2u - 1) / (e^2u + 1). expf(2u) is inf once u > 44.4 (x > ~10.05) and
// inf / inf is NaN. gelu's check inputs are 3·N(0, 1): the larger check shapes have a few such elements.
template <typename T>
__global__ void gelu_textbook_tanh_kernel(const T* x, T* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = lab::to_float(x[i]);
    const float u = kSqrt2OverPi * (v + kCubicCoeff * v * v * v);
    const float e = expf(2.0f * u);
    y[i] = lab::from_float<T>(0.5f * v * (1.0f + (e - 1.0f) / (e + 1.0f)));
  }
}

// ---- Row softmax helpers: one block per row, three passes (max, sum, write). ---------------------------------
__device__ float block_sum(float v) {
  __shared__ float partial[32];
  __syncthreads();  // a previous call's readers are done with `partial`
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) total += partial[w];
  return total;
}

__device__ float block_max(float v) {
  __shared__ float partial[32];
  __syncthreads();
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  float m = -INFINITY;
  for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) m = fmaxf(m, partial[w]);
  return m;
}

// Correct, except that the launcher may give it fewer blocks than rows (softmax_half_rows).
template <typename T>
__global__ void softmax_rows_kernel(const T* x, T* y, int64_t cols) {
  const T* xr = x + static_cast<int64_t>(blockIdx.x) * cols;
  T* yr = y + static_cast<int64_t>(blockIdx.x) * cols;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, lab::to_float(xr[c]));
  m = block_max(m);
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf(lab::to_float(xr[c]) - m);
  const float inv = 1.0f / block_sum(s);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = lab::from_float<T>(expf(lab::to_float(xr[c]) - m) * inv);
}

// Produces NaN: no max subtraction. exp(x) overflows for x > 88, and the "large magnitudes" check inputs (rows
// around +1e4) give inf / inf = NaN; rows around -1e4 give 0 / 0.
template <typename T>
__global__ void softmax_no_max_kernel(const T* x, T* y, int64_t cols) {
  const T* xr = x + static_cast<int64_t>(blockIdx.x) * cols;
  T* yr = y + static_cast<int64_t>(blockIdx.x) * cols;
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf(lab::to_float(xr[c]));
  const float inv = 1.0f / block_sum(s);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = lab::from_float<T>(expf(lab::to_float(xr[c])) * inv);
}

template <typename T>
__global__ void softmax_row_max_kernel(const T* x, float* row_max, int64_t cols) {
  const T* xr = x + static_cast<int64_t>(blockIdx.x) * cols;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, lab::to_float(xr[c]));
  m = block_max(m);
  if (threadIdx.x == 0) row_max[blockIdx.x] = m;
}

// Data race between blocks: a row is split over gridDim.x blocks (blockIdx.x = the chunk, so a row's blocks are
// launched together), and each adds its partial sum into row_sum[row] with a plain read ... write instead of
// atomicAdd. The read happens before the chunk is reduced, so blocks running at the same time read the same old
// value and all but the last addition are lost: the sum is too small and the row's outputs too large. Wrong
// whenever a row has more than one chunk (N > 256) and its blocks overlap in time, which they do at every check
// shape (the grid is at most a few thousand blocks).
template <typename T>
__global__ void softmax_racy_sum_kernel(const T* x, const float* row_max, float* row_sum, int64_t cols) {
  __shared__ float old;
  const int64_t row = blockIdx.y;
  if (threadIdx.x == 0) old = row_sum[row];  // the bug, part 1: a plain read of a value other blocks update
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const float e = c < cols ? expf(lab::to_float(x[row * cols + c]) - row_max[row]) : 0.0f;
  const float part = block_sum(e);  // block_sum's __syncthreads also publishes `old`
  if (threadIdx.x == 0) row_sum[row] = old + part;  // the bug, part 2: a plain write (atomicAdd would be right)
}

template <typename T>
__global__ void softmax_scale_kernel(const T* x, const float* row_max, const float* row_sum, T* y, int64_t cols) {
  const int64_t row = blockIdx.y;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c < cols) y[row * cols + c] = lab::from_float<T>(expf(lab::to_float(x[row * cols + c]) - row_max[row]) / row_sum[row]);
}

}  // namespace

cudaError_t launch_planted_gelu(planted::Gelu kind, lab::DType dtype, const void* x, void* y, int64_t n,
                                cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* xt = static_cast<const T*>(x);
    T* yt = static_cast<T*>(y);
    const unsigned int blocks = lab::blocks_for(n, kThreads);
    switch (kind) {
      case planted::Gelu::correct: gelu_correct_kernel<T><<<blocks, kThreads, 0, stream>>>(xt, yt, n); break;
      case planted::Gelu::zeros: gelu_zeros_kernel<T><<<blocks, kThreads, 0, stream>>>(xt, yt, n); break;
      case planted::Gelu::full_blocks_only: {
        const unsigned int full = static_cast<unsigned int>(n / kThreads);  // the bug: floor, not ceil
        if (full) gelu_full_blocks_kernel<T><<<full, kThreads, 0, stream>>>(xt, yt, n);
        break;
      }
      case planted::Gelu::off_by_one: gelu_off_by_one_kernel<T><<<blocks, kThreads, 0, stream>>>(xt, yt, n); break;
      case planted::Gelu::bf16_math: gelu_bf16_kernel<T><<<blocks, kThreads, 0, stream>>>(xt, yt, n); break;
      case planted::Gelu::textbook_tanh:
        gelu_textbook_tanh_kernel<T><<<blocks, kThreads, 0, stream>>>(xt, yt, n);
        break;
    }
    return cudaGetLastError();
  });
}

cudaError_t launch_planted_softmax(planted::Softmax kind, lab::DType dtype, const void* x, void* y, int64_t rows,
                                   int64_t launch_rows, int64_t cols, cudaStream_t stream) {
  (void)rows;
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (launch_rows == 0) return cudaSuccess;
    const unsigned int grid = static_cast<unsigned int>(launch_rows);
    if (kind == planted::Softmax::no_max) {
      softmax_no_max_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), cols);
    } else {
      softmax_rows_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), cols);
    }
    return cudaGetLastError();
  });
}

cudaError_t launch_planted_softmax_race(lab::DType dtype, const void* x, void* y, float* row_max, float* row_sum,
                                        int64_t rows, int64_t cols, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* xt = static_cast<const T*>(x);
    softmax_row_max_kernel<T><<<static_cast<unsigned int>(rows), kThreads, 0, stream>>>(xt, row_max, cols);
    const dim3 grid(lab::blocks_for(cols, kThreads), static_cast<unsigned int>(rows));
    softmax_racy_sum_kernel<T><<<grid, kThreads, 0, stream>>>(xt, row_max, row_sum, cols);
    softmax_scale_kernel<T><<<grid, kThreads, 0, stream>>>(xt, row_max, row_sum, static_cast<T*>(y), cols);
    return cudaGetLastError();
  });
}

#else  // host half: the torch binding

#include <ATen/ops/zeros.h>

#include <map>
#include <tuple>
#include <vector>

#include "lab_torch.h"

namespace {

at::Tensor gelu_with(const at::Tensor& x, planted::Gelu kind, const char* name) {
  lab::check_cuda_input(x, "planted", name);
  const lab::DType dtype = lab::float_dtype(x, "planted", name);
  at::Tensor y = at::empty_like(x);
  if (x.numel() == 0) return y;
  c10::cuda::CUDAGuard guard(x.device());
  lab::check_launch(launch_planted_gelu(kind, dtype, x.const_data_ptr(), y.mutable_data_ptr(), x.numel(),
                                        lab::current_stream()), "planted", name);
  return y;
}

void gelu_into(const at::Tensor& x, at::Tensor& y) {
  if (x.numel() == 0) return;
  c10::cuda::CUDAGuard guard(x.device());
  lab::check_launch(launch_planted_gelu(planted::Gelu::correct, lab::float_dtype(x, "planted", "x"),
                                        x.const_data_ptr(), y.mutable_data_ptr(), x.numel(), lab::current_stream()),
                    "planted", "gelu");
}

at::Tensor softmax_with(const at::Tensor& x, planted::Softmax kind, bool half_rows, const char* name,
                        bool check_layout = true) {
  if (check_layout) lab::check_cuda_input(x, "planted", name);
  TORCH_CHECK(x.dim() == 2, "planted: ", name, " takes a 2-D tensor");
  at::Tensor y = at::empty(x.sizes(), x.options());
  if (x.numel() == 0) return y;
  const int64_t rows = x.size(0);
  const int64_t launch_rows = half_rows ? (rows + 1) / 2 : rows;  // half_rows: the bug, grid sized for M / 2
  c10::cuda::CUDAGuard guard(x.device());
  lab::check_launch(launch_planted_softmax(kind, lab::float_dtype(x, "planted", name), x.const_data_ptr(),
                                           y.mutable_data_ptr(), rows, launch_rows, x.size(1),
                                           lab::current_stream()),
                    "planted", name);
  return y;
}

using CacheKey = std::tuple<std::vector<int64_t>, int, int>;

// Heap-allocated and never freed: a static map of tensors would be destroyed after the CUDA runtime at exit.
std::map<CacheKey, at::Tensor>& result_cache() {
  static auto* cache = new std::map<CacheKey, at::Tensor>();
  return *cache;
}

// Stale cached result: outputs memoized by (op, shape, dtype, device), as if the op depended on the shape only.
// The first call at a shape is right; later calls with other inputs of that shape get the first call's answer.
// The input is validated before the lookup (a non-contiguous input is refused, never served from the cache).
template <typename Compute>
at::Tensor cached(int op, const at::Tensor& x, Compute compute) {
  lab::check_cuda_input(x, "planted", op == 0 ? "gelu_cached" : "softmax_cached");
  const CacheKey key{x.sizes().vec(), static_cast<int>(x.scalar_type()) * 64 + op, static_cast<int>(x.get_device())};
  auto& cache = result_cache();
  auto found = cache.find(key);
  if (found == cache.end()) found = cache.emplace(key, compute(x)).first;
  return found->second.clone();
}

}  // namespace

// Writes nothing: the output is allocated and returned, no kernel is launched. The checker fills the caching
// allocator's free memory with NaN first, so this reads back as NaN.
at::Tensor gelu_unwritten(const at::Tensor& x) {
  lab::check_cuda_input(x, "planted", "gelu_unwritten");
  return at::empty(x.sizes(), x.options());
}

at::Tensor gelu_zeros(const at::Tensor& x) { return gelu_with(x, planted::Gelu::zeros, "gelu_zeros"); }

// Returns its input: the kernel computes y, the binding returns x.
at::Tensor gelu_returns_input(const at::Tensor& x) {
  gelu_with(x, planted::Gelu::correct, "gelu_returns_input");
  return x;
}

// Writes into its input: an in-place kernel behind an out-of-place schema.
at::Tensor gelu_in_place(const at::Tensor& x) {
  lab::check_cuda_input(x, "planted", "gelu_in_place");
  at::Tensor alias = x;
  gelu_into(x, alias);
  return x;
}

at::Tensor gelu_tail_unwritten(const at::Tensor& x) {
  return gelu_with(x, planted::Gelu::full_blocks_only, "gelu_tail_unwritten");
}

at::Tensor gelu_off_by_one(const at::Tensor& x) { return gelu_with(x, planted::Gelu::off_by_one, "gelu_off_by_one"); }

// Wrong stride: no contiguity check (lab::check_cuda_input is skipped), and x is read as numel() contiguous elements
// from its data pointer into a contiguous output. Right for contiguous inputs only.
at::Tensor gelu_wrong_stride(const at::Tensor& x) {
  TORCH_CHECK(x.is_cuda(), "planted: gelu_wrong_stride takes a CUDA tensor");
  at::Tensor y = at::empty(x.sizes(), x.options());  // contiguous, whatever x's layout
  gelu_into(x, y);
  return y;
}

at::Tensor gelu_low_precision(const at::Tensor& x) {
  return gelu_with(x, planted::Gelu::bf16_math, "gelu_low_precision");
}

at::Tensor gelu_textbook_tanh(const at::Tensor& x) {
  return gelu_with(x, planted::Gelu::textbook_tanh, "gelu_textbook_tanh");
}

at::Tensor gelu_cached(const at::Tensor& x) {
  return cached(0, x, [](const at::Tensor& t) { return gelu_with(t, planted::Gelu::correct, "gelu_cached"); });
}

at::Tensor softmax_half_rows(const at::Tensor& x) {
  return softmax_with(x, planted::Softmax::correct, /*half_rows=*/true, "softmax_half_rows");
}

at::Tensor softmax_no_max(const at::Tensor& x) {
  return softmax_with(x, planted::Softmax::no_max, /*half_rows=*/false, "softmax_no_max");
}

// Wrong stride: no contiguity check; row r is read at x + r·N, whatever x.stride(0) is.
at::Tensor softmax_wrong_stride(const at::Tensor& x) {
  TORCH_CHECK(x.is_cuda(), "planted: softmax_wrong_stride takes a CUDA tensor");
  return softmax_with(x, planted::Softmax::correct, false, "softmax_wrong_stride", /*check_layout=*/false);
}

// Stale cached result, as gelu_cached. softmax's special inputs are checked at the shapes of its random ones, so
// the second call at a shape already gets a stale answer.
at::Tensor softmax_cached(const at::Tensor& x) {
  return cached(1, x, [](const at::Tensor& t) {
    return softmax_with(t, planted::Softmax::correct, false, "softmax_cached");
  });
}

at::Tensor softmax_race(const at::Tensor& x) {
  lab::check_cuda_input(x, "planted", "softmax_race");
  TORCH_CHECK(x.dim() == 2, "planted: softmax_race takes a 2-D tensor");
  at::Tensor y = at::empty_like(x);
  if (x.numel() == 0) return y;
  c10::cuda::CUDAGuard guard(x.device());
  const auto f32 = x.options().dtype(at::kFloat);
  at::Tensor row_max = at::empty({x.size(0)}, f32);
  at::Tensor row_sum = at::zeros({x.size(0)}, f32);
  lab::check_launch(launch_planted_softmax_race(lab::float_dtype(x, "planted", "x"), x.const_data_ptr(),
                                                y.mutable_data_ptr(), row_max.mutable_data_ptr<float>(),
                                                row_sum.mutable_data_ptr<float>(), x.size(0), x.size(1),
                                                lab::current_stream()),
                    "planted", "softmax_race");
  return y;
}

TORCH_LIBRARY(lab_planted, m) {
  m.def("gelu_unwritten(Tensor x) -> Tensor");
  m.def("gelu_zeros(Tensor x) -> Tensor");
  m.def("gelu_returns_input(Tensor x) -> Tensor");
  m.def("gelu_in_place(Tensor x) -> Tensor");
  m.def("gelu_tail_unwritten(Tensor x) -> Tensor");
  m.def("gelu_off_by_one(Tensor x) -> Tensor");
  m.def("gelu_wrong_stride(Tensor x) -> Tensor");
  m.def("gelu_low_precision(Tensor x) -> Tensor");
  m.def("gelu_textbook_tanh(Tensor x) -> Tensor");
  m.def("gelu_cached(Tensor x) -> Tensor");
  m.def("softmax_half_rows(Tensor x) -> Tensor");
  m.def("softmax_no_max(Tensor x) -> Tensor");
  m.def("softmax_wrong_stride(Tensor x) -> Tensor");
  m.def("softmax_cached(Tensor x) -> Tensor");
  m.def("softmax_race(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_planted, CUDA, m) {
  m.impl("gelu_unwritten", &gelu_unwritten);
  m.impl("gelu_zeros", &gelu_zeros);
  m.impl("gelu_returns_input", &gelu_returns_input);
  m.impl("gelu_in_place", &gelu_in_place);
  m.impl("gelu_tail_unwritten", &gelu_tail_unwritten);
  m.impl("gelu_off_by_one", &gelu_off_by_one);
  m.impl("gelu_wrong_stride", &gelu_wrong_stride);
  m.impl("gelu_low_precision", &gelu_low_precision);
  m.impl("gelu_textbook_tanh", &gelu_textbook_tanh);
  m.impl("gelu_cached", &gelu_cached);
  m.impl("softmax_half_rows", &softmax_half_rows);
  m.impl("softmax_no_max", &softmax_no_max);
  m.impl("softmax_wrong_stride", &softmax_wrong_stride);
  m.impl("softmax_cached", &softmax_cached);
  m.impl("softmax_race", &softmax_race);
}

#endif
