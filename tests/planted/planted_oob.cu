// A GELU kernel that is numerically right and still wrong: its bounds check is off by one (`i <= n`), so the thread
// with i == n reads x[n] and writes y[n], one element past the end of both tensors. The values it returns are exact,
// so compare/check.py passes it: under torch's caching allocator the stray element usually lands in the slack of a
// rounded-up block and nobody looks there. compute-sanitizer's memcheck must report it (tests/test_sanitize.py runs
// `compare.sanitize.sanitize(gelu, cu=this file)`, which builds it with compare.build.build("planted_oob", path=...)
// and calls the ops as torch.ops.lab_planted_oob.*).
//
// gelu_in_bounds is the same kernel with `i < n`: the control, run right after the faulty row in the same process, so
// it also shows that the faulty row's reports are not put on the row after it.
//
// The stray thread exists when n is not a multiple of the block (256 threads): the grid covers n threads rounded up.
// Same two-half layout as cuda_src/<op>.cu: nvcc sees only the kernels and launchers, the C++ compiler the binding.
#include "lab.h"

cudaError_t launch_gelu_one_past_end(lab::DType dtype, const void* x, void* y, int64_t n, cudaStream_t stream);
cudaError_t launch_gelu_in_bounds(lab::DType dtype, const void* x, void* y, int64_t n, cudaStream_t stream);

#ifdef __CUDACC__
#include "lab_device.cuh"

namespace {

constexpr int kThreads = 256;
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubicCoeff = 0.044715f;

// 0.5·(1 + tanh(u)) == 1 / (1 + e^(-2u)), in fp32.
__device__ __forceinline__ float gelu(float v) {
  const float u = kSqrt2OverPi * (v + kCubicCoeff * v * v * v);
  return v / (1.0f + expf(-2.0f * u));
}

}  // namespace

template <typename T>
__global__ void gelu_one_past_end_kernel(const T* x, T* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i <= n) y[i] = lab::from_float<T>(gelu(lab::to_float(x[i])));  // the bug: <= instead of <
}

template <typename T>
__global__ void gelu_in_bounds_kernel(const T* x, T* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = lab::from_float<T>(gelu(lab::to_float(x[i])));
}

cudaError_t launch_gelu_one_past_end(lab::DType dtype, const void* x, void* y, int64_t n, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    gelu_one_past_end_kernel<T><<<lab::blocks_for(n, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

cudaError_t launch_gelu_in_bounds(lab::DType dtype, const void* x, void* y, int64_t n, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    gelu_in_bounds_kernel<T><<<lab::blocks_for(n, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

#else  // host half: the torch binding

#include "lab_torch.h"

at::Tensor gelu_one_past_end(const at::Tensor& x) {
  return lab::unary_elementwise(x, "planted_oob", "gelu_one_past_end", launch_gelu_one_past_end);
}

at::Tensor gelu_in_bounds(const at::Tensor& x) {
  return lab::unary_elementwise(x, "planted_oob", "gelu_in_bounds", launch_gelu_in_bounds);
}

TORCH_LIBRARY(lab_planted_oob, m) {
  m.def("gelu_one_past_end(Tensor x) -> Tensor");
  m.def("gelu_in_bounds(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_planted_oob, CUDA, m) {
  m.impl("gelu_one_past_end", &gelu_one_past_end);
  m.impl("gelu_in_bounds", &gelu_in_bounds);
}

#endif
