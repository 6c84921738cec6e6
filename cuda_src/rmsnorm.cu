// RMSNorm over the last dimension of a 2-D (M, N) tensor, with weight, forward and backward:
//   y = x · rstd · w,   rstd = 1 / sqrt(mean(x²) + eps)
// Backward: dx = rstd · (w·dy - x̂·mean(w·dy·x̂)),  dw = Σ_rows dy·x̂  (x̂ = x·rstd).
//
// cuda_src/layernorm.cu without the mean and the bias: one statistic per row and one gradient reduced across rows.
// Memory-bound both ways (spec: specs/rmsnorm.py). Triton side: triton_src/rmsnorm.py.
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/rmsnorm.md, -backward.md, -fwd-bwd.md):
//   v1 naive    one block per row, shared-memory block reductions, the row read twice (Σx², output); backward:
//               one block per row for dx, dw added into an fp32 buffer with atomicAdd
//
// The forward saves rstd (fp32, M) for the backward.
#include "lab.h"

constexpr float kRmsNormEps = 1e-6f;  // the spec's (specs/rmsnorm.py)

cudaError_t launch_rmsnorm_naive(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                                 int64_t cols, cudaStream_t stream);
// workspace: cols floats, the fp32 sums of dw (zeroed here before the kernel adds into them).
cudaError_t launch_rmsnorm_naive_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                          const float* rstd, void* dx, void* dw, float* workspace, int64_t rows,
                                          int64_t cols, cudaStream_t stream);

#ifdef __CUDACC__
#include "lab_norm.cuh"

constexpr int kNaiveThreads = 256;

// ---- v1 naive: a block per row, each thread striding over the row. ------------------------------------------
template <typename T>
__global__ void rmsnorm_naive_kernel(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                                     float* __restrict__ rstd, int64_t rows, int64_t cols, float eps) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    float sq = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float v = lab::to_float(xr[c]);
      sq += v * v;
    }
    const float rs = rsqrtf(lab::block_reduce_sum(sq) / static_cast<float>(cols) + eps);
    T* yr = y + row * cols;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      yr[c] = lab::from_float<T>(lab::to_float(xr[c]) * rs * lab::to_float(w[c]));
    if (threadIdx.x == 0) rstd[row] = rs;
  }
}

// dx needs one sum over its row; dw a sum over rows, which every block adds into with atomics.
template <typename T>
__global__ void rmsnorm_naive_backward_kernel(const T* __restrict__ dy, const T* __restrict__ x,
                                              const T* __restrict__ w, const float* __restrict__ rstd,
                                              T* __restrict__ dx, float* __restrict__ dw_sum, int64_t rows,
                                              int64_t cols) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    const T* dyr = dy + row * cols;
    const float rs = rstd[row];
    float wdy_xhat = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      wdy_xhat += lab::to_float(w[c]) * lab::to_float(dyr[c]) * lab::to_float(xr[c]) * rs;
    const float c_xhat = lab::block_reduce_sum(wdy_xhat) / static_cast<float>(cols);
    T* dxr = dx + row * cols;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float xhat = lab::to_float(xr[c]) * rs;
      const float g = lab::to_float(dyr[c]);
      dxr[c] = lab::from_float<T>((lab::to_float(w[c]) * g - xhat * c_xhat) * rs);
      atomicAdd(dw_sum + c, g * xhat);
    }
  }
}

cudaError_t launch_rmsnorm_naive(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                                 int64_t cols, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    rmsnorm_naive_kernel<T><<<lab::row_grid(rows), kNaiveThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(w), static_cast<T*>(y), rstd, rows, cols, kRmsNormEps);
    return cudaGetLastError();
  });
}

cudaError_t launch_rmsnorm_naive_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                          const float* rstd, void* dx, void* dw, float* workspace, int64_t rows,
                                          int64_t cols, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    cudaError_t err = cudaMemsetAsync(workspace, 0, cols * sizeof(float), stream);
    if (err != cudaSuccess) return err;
    rmsnorm_naive_backward_kernel<T><<<lab::row_grid(rows), kNaiveThreads, 0, stream>>>(
        static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<const T*>(w), rstd, static_cast<T*>(dx),
        workspace, rows, cols);
    if ((err = cudaGetLastError()) != cudaSuccess) return err;
    return lab::cast_from_float(workspace, static_cast<T*>(dw), cols, stream);
  });
}

#else  // host half: the torch binding

#include <tuple>

#include "lab_torch.h"

// x (M, N) and a weight of N: CUDA, contiguous, one dtype, one device.
static lab::DType check_rmsnorm(const at::Tensor& x, const at::Tensor& w) {
  lab::check_cuda_input(x, "rmsnorm", "x");
  lab::check_cuda_input(w, "rmsnorm", "weight");
  LAB_CHECK(x.dim() == 2, "rmsnorm: x has ", x.dim(), " dimensions (sizes ", x.sizes(),
            "); this kernel takes a 2-D (M, N) tensor and normalizes each row");
  LAB_CHECK(w.dim() == 1 && w.size(0) == x.size(1), "rmsnorm: weight must have N = ", x.size(1),
            " elements, one per column of x; got sizes ", w.sizes());
  LAB_CHECK_TYPE(w.scalar_type() == x.scalar_type(), "rmsnorm: x is ", x.scalar_type(), " but weight is ",
                 w.scalar_type(), "; pass them in one dtype");
  LAB_CHECK(w.device() == x.device(), "rmsnorm: x is on ", x.device(), " but weight is on ", w.device());
  return lab::float_dtype(x, "rmsnorm", "x");
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_naive(const at::Tensor& x, const at::Tensor& w) {
  const lab::DType dtype = check_rmsnorm(x, w);
  const int64_t rows = x.size(0), cols = x.size(1);
  at::Tensor y = at::empty_like(x);
  at::Tensor rstd = at::empty({rows}, x.options().dtype(at::kFloat));
  if (x.numel() == 0) return {y, rstd};  // a zero-block grid is a launch error
  c10::cuda::CUDAGuard guard(x.device());
  lab::check_launch(launch_rmsnorm_naive(dtype, x.const_data_ptr(), w.const_data_ptr(), y.mutable_data_ptr(),
                                         rstd.mutable_data_ptr<float>(), rows, cols, lab::current_stream()),
                    "rmsnorm", "naive");
  return {y, rstd};
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_naive_backward(const at::Tensor& dy, const at::Tensor& x,
                                                          const at::Tensor& w, const at::Tensor& rstd) {
  const lab::DType dtype = check_rmsnorm(x, w);
  lab::check_cuda_input(dy, "rmsnorm", "dy");
  LAB_CHECK(dy.sizes() == x.sizes() && dy.scalar_type() == x.scalar_type(), "rmsnorm: dy must match x (sizes ",
            x.sizes(), ", ", x.scalar_type(), "); got sizes ", dy.sizes(), ", ", dy.scalar_type());
  lab::check_cuda_input(rstd, "rmsnorm", "rstd");
  LAB_CHECK(rstd.scalar_type() == at::kFloat && rstd.numel() == x.size(0), "rmsnorm: rstd must be the forward's: "
            "float32, one per row (", x.size(0), "); got ", rstd.scalar_type(), " sizes ", rstd.sizes());
  const int64_t rows = x.size(0), cols = x.size(1);
  at::Tensor dx = at::empty_like(x), dw = at::empty_like(w);
  if (cols == 0) return {dx, dw};
  if (rows == 0) return {dx, dw.zero_()};
  c10::cuda::CUDAGuard guard(x.device());
  at::Tensor workspace = at::empty({cols}, x.options().dtype(at::kFloat));
  lab::check_launch(launch_rmsnorm_naive_backward(dtype, dy.const_data_ptr(), x.const_data_ptr(), w.const_data_ptr(),
                                                  rstd.const_data_ptr<float>(), dx.mutable_data_ptr(),
                                                  dw.mutable_data_ptr(), workspace.mutable_data_ptr<float>(), rows,
                                                  cols, lab::current_stream()),
                    "rmsnorm", "naive_backward");
  return {dx, dw};
}

TORCH_LIBRARY(lab_rmsnorm, m) {
  m.def("naive(Tensor x, Tensor weight) -> (Tensor, Tensor)");
  m.def("naive_backward(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(lab_rmsnorm, CUDA, m) {
  m.impl("naive", &rmsnorm_naive);
  m.impl("naive_backward", &rmsnorm_naive_backward);
}

#endif
