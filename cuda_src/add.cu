// Elementwise add:  out = x + y  (same shape, no broadcasting)
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/add.md):
//   v1 naive    one thread per element, 1024-thread blocks, two narrow loads and one narrow store
//   v2 vec      128-bit packets, one per thread: 4-8x fewer memory instructions per byte
//
// Two loads, one store, one flop per element: nothing but memory traffic, so the goal is the device's copy bandwidth
// (3 · n · itemsize bytes per call). Same two steps as cuda_src/gelu.cu, which has the longer story; here there is
// no math to hide latency behind, so the width of each memory instruction is the whole difference.
// Spec: specs/add.py. Triton side: triton_src/add.py.
#include "lab.h"

cudaError_t launch_add_naive(lab::DType dtype, const void* x, const void* y, void* out, int64_t n,
                             cudaStream_t stream);
cudaError_t launch_add_vec(lab::DType dtype, const void* x, const void* y, void* out, int64_t n,
                           cudaStream_t stream);

#ifdef __CUDACC__
#include "lab_device.cuh"

// ---- v1 naive: one thread per element, 1024-thread blocks. -----------------------------------------------------
// Each thread issues two narrow (2- or 4-byte) loads and one narrow store. A warp's accesses are coalesced into full
// 128-byte lines, so no byte is wasted, but the SM needs 4-8x more memory instructions per byte than with 16-byte
// accesses, and too few bytes are in flight to cover HBM latency.
template <typename T>
__global__ void add_naive_kernel(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // 64-bit: n may exceed 2^31
  if (i < n) out[i] = lab::from_float<T>(lab::to_float(x[i]) + lab::to_float(y[i]));
}

cudaError_t launch_add_naive(lab::DType dtype, const void* x, const void* y, void* out, int64_t n,
                             cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kThreads = 1024;
    add_naive_kernel<T><<<lab::blocks_for(n, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(y), static_cast<T*>(out), n);
    return cudaGetLastError();
  });
}

// ---- v2 vec: 128-bit packets, one packet per thread. -----------------------------------------------------------
// One LDG.128 per input and one STG.128 per thread move 4 (fp32) or 8 (fp16/bf16) elements: 4-8x fewer memory
// instructions per byte than v1, so every thread has 32 bytes of loads in flight before it first waits.
// Thread i < n_packets handles packet i; the next (n % packet) threads handle the scalar tail, so any n works in one
// launch. A grid that covers the whole tensor (no grid-stride loop) issues every load up front, the layout with
// which GELU's v2 reaches copy bandwidth (measured: results/nvidia-h200/gelu.md, results/nvidia-h200/add.md).
template <typename T>
__global__ void add_vec_kernel(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out, int64_t n) {
  constexpr int kPack = lab::Packet<T>::kSize;
  const int64_t n_packets = n / kPack;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n_packets) {
    lab::Packet<T> a = lab::load_packet(x + i * kPack);
    const lab::Packet<T> b = lab::load_packet(y + i * kPack);
#pragma unroll
    for (int k = 0; k < kPack; ++k) a.v[k] = lab::from_float<T>(lab::to_float(a.v[k]) + lab::to_float(b.v[k]));
    lab::store_packet(out + i * kPack, a);
  } else {
    const int64_t j = n_packets * kPack + (i - n_packets);
    if (j < n) out[j] = lab::from_float<T>(lab::to_float(x[j]) + lab::to_float(y[j]));
  }
}

cudaError_t launch_add_vec(lab::DType dtype, const void* x, const void* y, void* out, int64_t n,
                           cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kThreads = 256;  // small blocks: finer-grained tail, same occupancy as 1024 for this kernel
    constexpr int kPack = lab::Packet<T>::kSize;
    const T* xt = static_cast<const T*>(x);
    const T* yt = static_cast<const T*>(y);
    T* outt = static_cast<T*>(out);
    if (lab::is_aligned16(x) && lab::is_aligned16(y) && lab::is_aligned16(out)) {
      const int64_t threads = n / kPack + n % kPack;
      add_vec_kernel<T><<<lab::blocks_for(threads, kThreads), kThreads, 0, stream>>>(xt, yt, outt, n);
    } else {
      // A sliced view need not start on a 16-byte boundary, and a misaligned 128-bit access faults: fall back to
      // v1's one element per thread, which any alignment allows.
      add_naive_kernel<T><<<lab::blocks_for(n, kThreads), kThreads, 0, stream>>>(xt, yt, outt, n);
    }
    return cudaGetLastError();
  });
}

#else  // host half: the torch binding

#include "lab_torch.h"

at::Tensor add_naive(const at::Tensor& x, const at::Tensor& y) {
  return lab::binary_elementwise(x, y, "add", "naive", launch_add_naive);
}
at::Tensor add_vec(const at::Tensor& x, const at::Tensor& y) {
  return lab::binary_elementwise(x, y, "add", "vec", launch_add_vec);
}

TORCH_LIBRARY(lab_add, m) {
  m.def("naive(Tensor x, Tensor y) -> Tensor");
  m.def("vec(Tensor x, Tensor y) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_add, CUDA, m) {
  m.impl("naive", &add_naive);
  m.impl("vec", &add_vec);
}

#endif
