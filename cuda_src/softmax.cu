// Softmax over the last dimension of a 2-D (M, N) tensor, numerically stable:
//   y[r, c] = exp(x[r, c] - max_r) / sum_c' exp(x[r, c'] - max_r)
// Subtracting the row max makes every exponent <= 0, so exp never overflows (x = 1e4 would otherwise give inf / inf).
//
// A reduction, but still memory-bound: the least any kernel can do is read each element once and write it once
// (2 · M · N · itemsize bytes), with a few flops per element. The whole game is how many times a kernel touches
// the row in HBM, and keeping enough loads in flight while it does. Spec: specs/softmax.py. Triton side:
// triton_src/softmax.py.
//
// v1 naive     one block per row, shared-memory tree reductions, three passes over the row in HBM
// v2 warp      N <= 1024: one warp per row, the row held in registers, shuffle reductions: one pass
// v3 block     N <= 32768: one block per row, the row held in registers across the block: one pass
// v4 online    longer rows: running max and rescaled sum in one pass (Milakov & Gimelshein), then a pass to write
// `fast` is v2/v3/v4 behind one launcher that picks by N.
#include "lab.h"

cudaError_t launch_softmax_naive(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                 cudaStream_t stream);
cudaError_t launch_softmax_fast(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                cudaStream_t stream);

#ifdef __CUDACC__
#include <climits>
#include <type_traits>

#include "lab_device.cuh"

// Every kernel loops over rows with a grid stride so that M >= 2^31 (more rows than a grid may have blocks) still
// works; at any realistic M the grid covers all rows and the loop runs once.
inline unsigned int row_blocks(int64_t blocks) {
  return static_cast<unsigned int>(blocks < INT_MAX ? blocks : INT_MAX);
}

// ---- v1 naive: one block per row, shared-memory tree reductions, three passes. ---------------------------------
// Pass 1 finds the row max, pass 2 sums exp(x - max), pass 3 writes exp(x - max) / sum: the row is read from HBM
// three times (L2 catches some of it), and each reduction is a log2(256)-step tree in shared memory with a
// __syncthreads per step, during which no loads are in flight. Narrow loads, accurate expf.
constexpr int kNaiveThreads = 256;  // a power of two, for the halving tree

template <typename Op>
__device__ float naive_tree_reduce(float* scratch, float v, Op op) {
  const int tid = threadIdx.x;
  scratch[tid] = v;
  __syncthreads();
  for (int stride = kNaiveThreads / 2; stride > 0; stride /= 2) {
    if (tid < stride) scratch[tid] = op(scratch[tid], scratch[tid + stride]);
    __syncthreads();
  }
  const float result = scratch[0];
  __syncthreads();  // everyone has read scratch[0] before the next reduction overwrites it
  return result;
}

template <typename T>
__global__ void softmax_naive_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t cols) {
  __shared__ float scratch[kNaiveThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;  // 64-bit: M·N may exceed 2^31
    T* yr = y + row * cols;
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += kNaiveThreads) m = fmaxf(m, lab::to_float(xr[c]));
    m = naive_tree_reduce(scratch, m, [](float a, float b) { return fmaxf(a, b); });
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += kNaiveThreads) s += expf(lab::to_float(xr[c]) - m);
    s = naive_tree_reduce(scratch, s, [](float a, float b) { return a + b; });
    for (int64_t c = threadIdx.x; c < cols; c += kNaiveThreads)
      yr[c] = lab::from_float<T>(expf(lab::to_float(xr[c]) - m) / s);
  }
}

cudaError_t launch_softmax_naive(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                 cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    softmax_naive_kernel<T><<<row_blocks(rows), kNaiveThreads, 0, stream>>>(static_cast<const T*>(x),
                                                                            static_cast<T*>(y), rows, cols);
    return cudaGetLastError();
  });
}

// ---- Shared by v2-v4: a row is handled in chunks of one 16-byte packet (4 fp32 or 8 fp16/bf16 elements). -------
// With `vec` (the row starts 16-byte aligned, i.e. the base pointer is and N is a multiple of the packet) a chunk is
// one LDG.128 and is either wholly inside the row or wholly past its end. Without it (a sliced view, an odd N) the
// same chunk is read element by element with a bounds check: same results, more instructions.
// Elements past the end read as -inf: they drop out of the max, and exp(-inf - max) = 0 drops them out of the sum.
template <typename T>
using Chunk = float[lab::Packet<T>::kSize];

template <typename T>
__device__ __forceinline__ void load_chunk(const T* row, int64_t chunk, int64_t cols, bool vec, Chunk<T>& v) {
  constexpr int kVec = lab::Packet<T>::kSize;
  const int64_t first = chunk * kVec;
  if (vec && first < cols) {
    const lab::Packet<T> p = lab::load_packet(row + first);
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = lab::to_float(p.v[k]);
  } else {
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = first + k < cols ? lab::to_float(row[first + k]) : -INFINITY;
  }
}

// Stores v · scale for the elements of the chunk that lie inside the row.
template <typename T>
__device__ __forceinline__ void store_chunk(T* row, int64_t chunk, int64_t cols, bool vec, const Chunk<T>& v,
                                            float scale) {
  constexpr int kVec = lab::Packet<T>::kSize;
  const int64_t first = chunk * kVec;
  if (vec && first < cols) {
    lab::Packet<T> p;
#pragma unroll
    for (int k = 0; k < kVec; ++k) p.v[k] = lab::from_float<T>(v[k] * scale);
    lab::store_packet(row + first, p);
  } else {
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      if (first + k < cols) row[first + k] = lab::from_float<T>(v[k] * scale);
  }
}

// __expf is MUFU.EX2 after a multiply by log2(e): a few instructions instead of expf's ~20, with a relative error
// of about 2^-21 plus 2^-24·|x - max|, well inside the fp32 tolerance for every exponent that matters (terms
// below e^-100 vanish next to the row's largest term, which is exactly 1). In v2/v3 each element's exponential
// is computed once, overwriting the cached x, and reused by the store instead of being recomputed.

// ---- v2 warp: one warp per row for N <= 1024, the row in registers, shuffle reductions. ------------------------
// Versus v1: one read of the row instead of three (it stays in registers between the passes), 128-bit loads, and
// both reductions are 5 register shuffles with no shared memory and no __syncthreads. Four warps (rows) per block.
// Lane l holds chunks l, l + 32, l + 64, ...: at every step the warp reads 32 consecutive packets, 512 bytes.
// kPacks (chunks per lane) is a template parameter so the cache is a fixed-size register array; the launcher picks
// the smallest that holds the row.
constexpr int kWarpRowsPerBlock = 4;

template <typename T, int kPacks>
__global__ void softmax_warp_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t cols,
                                    bool vec) {
  constexpr int kVec = lab::Packet<T>::kSize;
  const int lane = threadIdx.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + threadIdx.y; row < rows;
       row += static_cast<int64_t>(gridDim.x) * kWarpRowsPerBlock) {
    Chunk<T> v[kPacks];
    float m = -INFINITY;
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      load_chunk(x + row * cols, lane + p * 32, cols, vec, v[p]);
#pragma unroll
      for (int k = 0; k < kVec; ++k) m = fmaxf(m, v[p][k]);
    }
    m = lab::warp_reduce_max(m);
    float s = 0.0f;
#pragma unroll
    for (int p = 0; p < kPacks; ++p)
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        v[p][k] = __expf(v[p][k] - m);  // computed once, kept for the store
        s += v[p][k];
      }
    const float inv_sum = 1.0f / lab::warp_reduce_sum(s);
#pragma unroll
    for (int p = 0; p < kPacks; ++p) store_chunk(y + row * cols, lane + p * 32, cols, vec, v[p], inv_sum);
  }
}

// ---- v3 block: one block per row for N <= 32768, the row in registers across up to 1024 threads. ---------------
// Same single read as v2 for rows too long for one warp: thread t holds chunks t, t + blockDim, ... and the two
// reductions go warp shuffles -> 32 values in shared memory -> warp shuffles (lab::block_reduce_*), two
// __syncthreads each instead of v1's ten. Each thread caches 32 values (kPacks · packet) and the block has as few
// threads as that allows: 256 at N = 8192 fp32, so 4 blocks (rows) share an SM and one block's loads overlap
// another's reductions. (A first version used 1024-thread blocks with 8 values each: one block per SM, idle HBM
// during every reduction, and 0.57 of copy bandwidth at M = 4096, N = 8192 fp32 on an H200.)
// __launch_bounds__: a 1024-thread block (N = 32768) fails to launch if a thread uses more than 65536 / 1024 = 64
// registers, so ptxas must plan for it.
constexpr int kMaxBlockThreads = 1024;

template <typename T, int kPacks>
__global__ void __launch_bounds__(kMaxBlockThreads) softmax_block_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t cols,
                                     bool vec) {
  constexpr int kVec = lab::Packet<T>::kSize;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    Chunk<T> v[kPacks];
    float m = -INFINITY;
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      load_chunk(x + row * cols, threadIdx.x + p * static_cast<int64_t>(blockDim.x), cols, vec, v[p]);
#pragma unroll
      for (int k = 0; k < kVec; ++k) m = fmaxf(m, v[p][k]);
    }
    m = lab::block_reduce_max(m);
    float s = 0.0f;
#pragma unroll
    for (int p = 0; p < kPacks; ++p)
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        v[p][k] = __expf(v[p][k] - m);
        s += v[p][k];
      }
    const float inv_sum = 1.0f / lab::block_reduce_sum(s);
#pragma unroll
    for (int p = 0; p < kPacks; ++p)
      store_chunk(y + row * cols, threadIdx.x + p * static_cast<int64_t>(blockDim.x), cols, vec, v[p], inv_sum);
  }
}

// ---- v4 online: rows too long for registers (N > 32768); one pass for max and sum together, one to write. ------
// Versus a v1-style max pass + sum pass: each thread keeps a running max m and a sum s of exp(x - m); when a new
// chunk raises the max, s is rescaled by exp(m_old - m_new) (Milakov & Gimelshein 2018, "Online normalizer
// calculation for softmax"). The row is read twice instead of three times, and the second read may hit L2.
// Each thread first loads kUnroll chunks and only then updates its state, so kUnroll independent 16-byte loads
// are in flight per thread: with one row per block and few rows, this is what keeps HBM busy.
// Hazard: while a thread has seen only -inf, m_new = -inf and exp(m - m_new) = exp(-inf + inf) = NaN, so such a
// chunk is skipped (s stays 0). Likewise when merging threads, a thread with m = -inf contributes 0, not NaN.
// Limit: one block per row, so with fewer rows than SMs (M = 32, N = 262144) most of the GPU idles; the next
// step would split each row over several blocks and merge their (m, s) pairs in a second kernel.
constexpr int kOnlineThreads = 1024;
constexpr int kOnlineUnroll = 4;

template <typename T>
__global__ void __launch_bounds__(kOnlineThreads) softmax_online_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t cols,
                                      bool vec) {
  constexpr int kVec = lab::Packet<T>::kSize;
  const int64_t chunks = (cols + kVec - 1) / kVec;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    float m = -INFINITY, s = 0.0f;
    for (int64_t c0 = threadIdx.x; c0 < chunks; c0 += kOnlineUnroll * kOnlineThreads) {
      Chunk<T> v[kOnlineUnroll];
      float m_new = m;
#pragma unroll
      for (int u = 0; u < kOnlineUnroll; ++u) load_chunk(xr, c0 + u * kOnlineThreads, cols, vec, v[u]);
#pragma unroll
      for (int u = 0; u < kOnlineUnroll; ++u)
#pragma unroll
        for (int k = 0; k < kVec; ++k) m_new = fmaxf(m_new, v[u][k]);
      if (m_new == -INFINITY) continue;  // only -inf so far: nothing to add, and rescaling would make NaN
      s *= __expf(m - m_new);
#pragma unroll
      for (int u = 0; u < kOnlineUnroll; ++u)
#pragma unroll
        for (int k = 0; k < kVec; ++k) s += __expf(v[u][k] - m_new);
      m = m_new;
    }
    // Merge the threads' (m, s): rescale every s to the row max, then sum.
    const float row_max = lab::block_reduce_max(m);
    const float inv_sum = 1.0f / lab::block_reduce_sum(m == -INFINITY ? 0.0f : s * __expf(m - row_max));
    for (int64_t c = threadIdx.x; c < chunks; c += kOnlineThreads) {
      Chunk<T> v;
      load_chunk(xr, c, cols, vec, v);
#pragma unroll
      for (int k = 0; k < kVec; ++k) v[k] = __expf(v[k] - row_max);
      store_chunk(y + row * cols, c, cols, vec, v, inv_sum);
    }
  }
}

// Calls body(std::integral_constant<int, K>{}) with K the smallest power of two >= needed, starting from kFirst and
// capped at kLast (the caller makes sure kLast suffices). One kernel instantiation per K: the register cache
// must have a compile-time size. (v2 only: a row of N <= 1024 in one warp wants the smallest cache that holds it.)
template <int kFirst, int kLast, typename Body>
cudaError_t with_packs(int64_t needed, Body&& body) {
  if constexpr (kFirst < kLast) {
    if (needed > kFirst) return with_packs<kFirst * 2, kLast>(needed, body);
  }
  return body(std::integral_constant<int, kFirst>{});
}

cudaError_t launch_softmax_fast(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = lab::Packet<T>::kSize;
    constexpr int kMaxPacks = 32 / kVec;  // 32 cached fp32 values per thread: 8 packets of fp32, 4 of fp16/bf16
    const T* xt = static_cast<const T*>(x);
    T* yt = static_cast<T*>(y);
    const bool vec = lab::is_aligned16(x) && lab::is_aligned16(y) && cols % kVec == 0;
    const int64_t chunks = (cols + kVec - 1) / kVec;
    if (chunks <= 32 * kMaxPacks) {  // N <= 1024: v2
      return with_packs<1, kMaxPacks>((chunks + 31) / 32, [&](auto packs) {
        constexpr int kPacks = decltype(packs)::value;
        const dim3 block(32, kWarpRowsPerBlock);
        const unsigned int grid = row_blocks((rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock);
        softmax_warp_kernel<T, kPacks><<<grid, block, 0, stream>>>(xt, yt, rows, cols, vec);
        return cudaGetLastError();
      });
    }
    if (chunks <= kMaxBlockThreads * kMaxPacks) {  // N <= 32768: v3, kMaxPacks chunks per thread, fewest threads
      const int threads = static_cast<int>(((chunks + kMaxPacks - 1) / kMaxPacks + 31) / 32 * 32);
      softmax_block_kernel<T, kMaxPacks><<<row_blocks(rows), threads, 0, stream>>>(xt, yt, rows, cols, vec);
      return cudaGetLastError();
    }
    softmax_online_kernel<T><<<row_blocks(rows), kOnlineThreads, 0, stream>>>(xt, yt, rows, cols, vec);  // v4
    return cudaGetLastError();
  });
}

#else  // host half: the torch binding

#include "lab_torch.h"

using RowLauncher = cudaError_t (*)(lab::DType, const void* x, void* y, int64_t rows, int64_t cols,
                                    cudaStream_t);

at::Tensor softmax_rows(const at::Tensor& x, const char* impl, RowLauncher launch) {
  lab::check_cuda_input(x, "softmax", "x");
  LAB_CHECK(x.dim() == 2, "softmax: x has ", x.dim(), " dimensions (sizes ", x.sizes(),
            "); this kernel takes a 2-D (M, N) tensor and normalizes each row");
  const lab::DType dtype = lab::float_dtype(x, "softmax", "x");
  at::Tensor y = at::empty_like(x);
  if (x.numel() == 0) return y;  // M = 0 or N = 0: nothing to do, and a zero-block grid is a launch error
  c10::cuda::CUDAGuard guard(x.device());
  lab::check_launch(launch(dtype, x.const_data_ptr(), y.mutable_data_ptr(), x.size(0), x.size(1),
                           lab::current_stream()),
                    "softmax", impl);
  return y;
}

at::Tensor softmax_naive(const at::Tensor& x) { return softmax_rows(x, "naive", launch_softmax_naive); }
at::Tensor softmax_fast(const at::Tensor& x) { return softmax_rows(x, "fast", launch_softmax_fast); }

TORCH_LIBRARY(lab_softmax, m) {
  m.def("naive(Tensor x) -> Tensor");
  m.def("fast(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_softmax, CUDA, m) {
  m.impl("naive", &softmax_naive);
  m.impl("fast", &softmax_fast);
}

#endif
