// GELU, tanh approximation:  y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/gelu.md):
//   v1 naive    the textbook kernel: one thread per element, 1024-thread blocks, narrow loads, libm tanhf
//   v2 vec      128-bit packets, one per thread, and tanh rewritten exactly as one exp2 and one fast divide
//
// One file, two halves. nvcc compiles it with __CUDACC__ defined and sees only the kernels and their launchers;
// the C++ compiler compiles it again without __CUDACC__ and sees only the torch binding. nvcc never parses the torch
// headers, which is what keeps a cold build in seconds. Spec: specs/gelu.py. Triton side: triton_src/gelu.py.
//
// Every element is read once and written once and the math is a few flops, so the roofline is memory: the goal is
// the device's copy bandwidth (bytes read + bytes written per second).
#include "lab.h"

cudaError_t launch_gelu_naive(lab::DType dtype, const void* x, void* y, int64_t n, cudaStream_t stream);
cudaError_t launch_gelu_vec(lab::DType dtype, const void* x, void* y, int64_t n, cudaStream_t stream);

#ifdef __CUDACC__
#include "lab_device.cuh"

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubicCoeff = 0.044715f;

// ---- v1 naive: the textbook version. One thread per element, 1024-thread blocks, libm tanhf. ------------------
// It is correct and simple, and stays well short of copy bandwidth: each thread issues one narrow load and one
// narrow store, and the accurate tanhf is a long instruction sequence, so too few bytes are in flight (measured:
// results/nvidia-h200/gelu.md).
template <typename T>
__global__ void gelu_naive_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // 64-bit: n may exceed 2^31
  if (i < n) {
    float v = lab::to_float(x[i]);
    float u = kSqrt2OverPi * (v + kCubicCoeff * v * v * v);
    y[i] = lab::from_float<T>(0.5f * v * (1.0f + tanhf(u)));
  }
}

cudaError_t launch_gelu_naive(lab::DType dtype, const void* x, void* y, int64_t n, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kThreads = 1024;
    gelu_naive_kernel<T><<<lab::blocks_for(n, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

// ---- v2 vec: 128-bit packets, a cheap exact rewrite of tanh, one packet per thread. ----------------------------
// 0.5 * (1 + tanh(u)) == 1 / (1 + exp(-2u)), so GELU is x / (1 + exp(-2u)): one MUFU.EX2 and one fast divide
// instead of tanhf. This form also avoids the cancellation in 1 + tanh(u) for negative x, so it stays within fp32
// tolerance everywhere; the hardware tanh.approx.f32 (relative error ~2^-11) would not.
// For x < ~-10 the denominator overflows to inf and __fdividef returns 0: the true value there is below 1e-37.
__device__ __forceinline__ float gelu_fast(float v) {
  float u = kSqrt2OverPi * (v + kCubicCoeff * v * v * v);
  return __fdividef(v, 1.0f + __expf(-2.0f * u));
}

// Thread i < n_packets handles packet i; the next (n % packet) threads handle the scalar tail, so any n works in one
// launch. One packet per thread with a grid that covers the tensor beats a grid-stride loop here: every load is
// issued up front and the block scheduler keeps all SMs full until the very end.
template <typename T>
__global__ void gelu_vec_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  constexpr int kPack = lab::Packet<T>::kSize;
  const int64_t n_packets = n / kPack;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n_packets) {
    lab::Packet<T> p = lab::load_packet(x + i * kPack);
#pragma unroll
    for (int k = 0; k < kPack; ++k) p.v[k] = lab::from_float<T>(gelu_fast(lab::to_float(p.v[k])));
    lab::store_packet(y + i * kPack, p);
  } else {
    const int64_t j = n_packets * kPack + (i - n_packets);
    if (j < n) y[j] = lab::from_float<T>(gelu_fast(lab::to_float(x[j])));
  }
}

// Same math, one element per thread: used only when a pointer is not 16-byte aligned (a sliced view), where a
// 128-bit access would fault.
template <typename T>
__global__ void gelu_unaligned_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = lab::from_float<T>(gelu_fast(lab::to_float(x[i])));
}

cudaError_t launch_gelu_vec(lab::DType dtype, const void* x, void* y, int64_t n, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kThreads = 256;  // small blocks: finer-grained tail, same occupancy as 1024 for this kernel
    constexpr int kPack = lab::Packet<T>::kSize;
    if (lab::is_aligned16(x) && lab::is_aligned16(y)) {
      const int64_t threads = n / kPack + n % kPack;
      gelu_vec_kernel<T><<<lab::blocks_for(threads, kThreads), kThreads, 0, stream>>>(
          static_cast<const T*>(x), static_cast<T*>(y), n);
    } else {
      gelu_unaligned_kernel<T><<<lab::blocks_for(n, kThreads), kThreads, 0, stream>>>(
          static_cast<const T*>(x), static_cast<T*>(y), n);
    }
    return cudaGetLastError();
  });
}

#else  // host half: the torch binding

#include "lab_torch.h"

at::Tensor gelu_naive(const at::Tensor& x) { return lab::unary_elementwise(x, "gelu", "naive", launch_gelu_naive); }
at::Tensor gelu_vec(const at::Tensor& x) { return lab::unary_elementwise(x, "gelu", "vec", launch_gelu_vec); }

TORCH_LIBRARY(lab_gelu, m) {
  m.def("naive(Tensor x) -> Tensor");
  m.def("vec(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_gelu, CUDA, m) {
  m.impl("naive", &gelu_naive);
  m.impl("vec", &gelu_vec);
}

#endif
