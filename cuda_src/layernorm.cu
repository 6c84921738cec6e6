// LayerNorm over the last dimension of a 2-D (M, N) tensor, with weight and bias, forward and backward:
//   y = (x - mean) · rstd · w + b,   rstd = 1 / sqrt(mean((x - mean)²) + eps)
// Backward: dx = rstd · (w·dy - mean(w·dy) - x̂·mean(w·dy·x̂)),  dw = Σ_rows dy·x̂,  db = Σ_rows dy  (x̂ = (x - mean)·rstd).
//
// Memory-bound both ways (spec: specs/layernorm.py, which counts the bytes). The backward's dw and db are sums
// over all M rows, a reduction across rows: the part where the ways of writing it differ most. Triton side:
// triton_src/layernorm.py.
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/layernorm.md, -backward.md, -fwd-bwd.md):
//   v1 naive    one block per row, shared-memory block reductions, the row read three times (mean, variance,
//               output); backward: one block per row for dx, dw and db added into fp32 buffers with atomicAdd
//
// The forward saves mean and rstd (fp32, M each) for the backward.
#include "lab.h"

constexpr float kLayerNormEps = 1e-5f;  // the spec's (specs/layernorm.py)

cudaError_t launch_layernorm_naive(lab::DType dtype, const void* x, const void* w, const void* b, void* y, float* mean,
                                   float* rstd, int64_t rows, int64_t cols, cudaStream_t stream);
// workspace: 2 · cols floats, the fp32 sums of dw and db (zeroed here before the kernel adds into them).
cudaError_t launch_layernorm_naive_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                            const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                            float* workspace, int64_t rows, int64_t cols, cudaStream_t stream);

#ifdef __CUDACC__
#include "lab_norm.cuh"

constexpr int kNaiveThreads = 256;

// ---- v1 naive: a block per row, each thread striding over the row. ------------------------------------------
// Two block reductions for the statistics: the mean, then the squared deviations from it. A single pass of Σx and
// Σx² would lose the variance to cancellation on rows far from zero (the spec's "large offset" inputs).
template <typename T>
__global__ void layernorm_naive_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                       T* __restrict__ y, float* __restrict__ mean, float* __restrict__ rstd,
                                       int64_t rows, int64_t cols, float eps) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += lab::to_float(xr[c]);
    const float mu = lab::block_reduce_sum(sum) / static_cast<float>(cols);
    float sq = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float d = lab::to_float(xr[c]) - mu;
      sq += d * d;
    }
    const float rs = rsqrtf(lab::block_reduce_sum(sq) / static_cast<float>(cols) + eps);
    T* yr = y + row * cols;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      yr[c] = lab::from_float<T>((lab::to_float(xr[c]) - mu) * rs * lab::to_float(w[c]) + lab::to_float(b[c]));
    if (threadIdx.x == 0) {
      mean[row] = mu;
      rstd[row] = rs;
    }
  }
}

// dx needs two sums over its row; dw and db need a sum over rows, which every block adds into with atomics:
// simple, and contended (each column's address takes M additions one after another).
template <typename T>
__global__ void layernorm_naive_backward_kernel(const T* __restrict__ dy, const T* __restrict__ x,
                                                const T* __restrict__ w, const float* __restrict__ mean,
                                                const float* __restrict__ rstd, T* __restrict__ dx,
                                                float* __restrict__ dw_sum, float* __restrict__ db_sum, int64_t rows,
                                                int64_t cols) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    const T* dyr = dy + row * cols;
    const float mu = mean[row], rs = rstd[row];
    float wdy_xhat = 0.0f, wdy = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float g = lab::to_float(w[c]) * lab::to_float(dyr[c]);
      wdy_xhat += g * (lab::to_float(xr[c]) - mu) * rs;
      wdy += g;
    }
    const float c_xhat = lab::block_reduce_sum(wdy_xhat) / static_cast<float>(cols);
    const float c_mean = lab::block_reduce_sum(wdy) / static_cast<float>(cols);
    T* dxr = dx + row * cols;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float xhat = (lab::to_float(xr[c]) - mu) * rs;
      const float g = lab::to_float(dyr[c]);
      dxr[c] = lab::from_float<T>((lab::to_float(w[c]) * g - c_mean - xhat * c_xhat) * rs);
      atomicAdd(dw_sum + c, g * xhat);
      atomicAdd(db_sum + c, g);
    }
  }
}

cudaError_t launch_layernorm_naive(lab::DType dtype, const void* x, const void* w, const void* b, void* y, float* mean,
                                   float* rstd, int64_t rows, int64_t cols, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    layernorm_naive_kernel<T><<<lab::row_grid(rows), kNaiveThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(b), static_cast<T*>(y), mean, rstd,
        rows, cols, kLayerNormEps);
    return cudaGetLastError();
  });
}

cudaError_t launch_layernorm_naive_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                            const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                            float* workspace, int64_t rows, int64_t cols, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    float* dw_sum = workspace;
    float* db_sum = workspace + cols;
    cudaError_t err = cudaMemsetAsync(workspace, 0, 2 * cols * sizeof(float), stream);
    if (err != cudaSuccess) return err;
    layernorm_naive_backward_kernel<T><<<lab::row_grid(rows), kNaiveThreads, 0, stream>>>(
        static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<const T*>(w), mean, rstd,
        static_cast<T*>(dx), dw_sum, db_sum, rows, cols);
    if ((err = cudaGetLastError()) != cudaSuccess) return err;
    if ((err = lab::cast_from_float(dw_sum, static_cast<T*>(dw), cols, stream)) != cudaSuccess) return err;
    return lab::cast_from_float(db_sum, static_cast<T*>(db), cols, stream);
  });
}

#else  // host half: the torch binding

#include <tuple>

#include "lab_torch.h"

// x (M, N), and each vector of N parameters: CUDA, contiguous, one dtype, one device.
static lab::DType check_layernorm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  lab::check_cuda_input(x, "layernorm", "x");
  lab::check_cuda_input(w, "layernorm", "weight");
  lab::check_cuda_input(b, "layernorm", "bias");
  LAB_CHECK(x.dim() == 2, "layernorm: x has ", x.dim(), " dimensions (sizes ", x.sizes(),
            "); this kernel takes a 2-D (M, N) tensor and normalizes each row");
  for (const at::Tensor* p : {&w, &b}) {
    LAB_CHECK(p->dim() == 1 && p->size(0) == x.size(1), "layernorm: weight and bias must have N = ", x.size(1),
              " elements, one per column of x; got sizes ", p->sizes());
    LAB_CHECK_TYPE(p->scalar_type() == x.scalar_type(), "layernorm: x is ", x.scalar_type(),
                   " but a parameter is ", p->scalar_type(), "; pass them in one dtype");
    LAB_CHECK(p->device() == x.device(), "layernorm: x is on ", x.device(), " but a parameter is on ", p->device());
  }
  return lab::float_dtype(x, "layernorm", "x");
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_naive(const at::Tensor& x, const at::Tensor& w,
                                                               const at::Tensor& b) {
  const lab::DType dtype = check_layernorm(x, w, b);
  const int64_t rows = x.size(0), cols = x.size(1);
  at::Tensor y = at::empty_like(x);
  at::Tensor mean = at::empty({rows}, x.options().dtype(at::kFloat));
  at::Tensor rstd = at::empty({rows}, x.options().dtype(at::kFloat));
  if (x.numel() == 0) return {y, mean, rstd};  // a zero-block grid is a launch error
  c10::cuda::CUDAGuard guard(x.device());
  lab::check_launch(launch_layernorm_naive(dtype, x.const_data_ptr(), w.const_data_ptr(), b.const_data_ptr(),
                                           y.mutable_data_ptr(), mean.mutable_data_ptr<float>(),
                                           rstd.mutable_data_ptr<float>(), rows, cols, lab::current_stream()),
                    "layernorm", "naive");
  return {y, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_naive_backward(const at::Tensor& dy, const at::Tensor& x,
                                                                        const at::Tensor& w, const at::Tensor& b,
                                                                        const at::Tensor& mean,
                                                                        const at::Tensor& rstd) {
  const lab::DType dtype = check_layernorm(x, w, b);
  lab::check_cuda_input(dy, "layernorm", "dy");
  LAB_CHECK(dy.sizes() == x.sizes() && dy.scalar_type() == x.scalar_type(), "layernorm: dy must match x (sizes ",
            x.sizes(), ", ", x.scalar_type(), "); got sizes ", dy.sizes(), ", ", dy.scalar_type());
  for (const at::Tensor* s : {&mean, &rstd}) {
    lab::check_cuda_input(*s, "layernorm", "mean/rstd");
    LAB_CHECK(s->scalar_type() == at::kFloat && s->numel() == x.size(0), "layernorm: mean and rstd must be the "
              "forward's: float32, one per row (", x.size(0), "); got ", s->scalar_type(), " sizes ", s->sizes());
  }
  const int64_t rows = x.size(0), cols = x.size(1);
  at::Tensor dx = at::empty_like(x), dw = at::empty_like(w), db = at::empty_like(b);
  if (cols == 0) return {dx, dw, db};
  if (rows == 0) return {dx, dw.zero_(), db.zero_()};
  c10::cuda::CUDAGuard guard(x.device());
  at::Tensor workspace = at::empty({2 * cols}, x.options().dtype(at::kFloat));
  lab::check_launch(launch_layernorm_naive_backward(dtype, dy.const_data_ptr(), x.const_data_ptr(), w.const_data_ptr(),
                                                    mean.const_data_ptr<float>(), rstd.const_data_ptr<float>(),
                                                    dx.mutable_data_ptr(), dw.mutable_data_ptr(),
                                                    db.mutable_data_ptr(), workspace.mutable_data_ptr<float>(), rows,
                                                    cols, lab::current_stream()),
                    "layernorm", "naive_backward");
  return {dx, dw, db};
}

TORCH_LIBRARY(lab_layernorm, m) {
  m.def("naive(Tensor x, Tensor weight, Tensor bias) -> (Tensor, Tensor, Tensor)");
  m.def("naive_backward(Tensor dy, Tensor x, Tensor weight, Tensor bias, Tensor mean, Tensor rstd) -> "
        "(Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(lab_layernorm, CUDA, m) {
  m.impl("naive", &layernorm_naive);
  m.impl("naive_backward", &layernorm_naive_backward);
}

#endif
