// What the norms' .cu files share (cuda_src/layernorm.cu, cuda_src/rmsnorm.cu). Device half only.
#pragma once
#include <climits>

#include "lab_device.cuh"

namespace lab {

// Blocks for a grid-stride loop over rows: one block per row up to the grid's limit, so that M >= 2^31 rows still
// works (each block then takes several); at any realistic M every block takes one row.
inline unsigned int row_grid(int64_t rows) { return static_cast<unsigned int>(rows < INT_MAX ? rows : INT_MAX); }

// The weight (and bias) gradients are accumulated in fp32, then written in the parameters' dtype by this kernel.
template <typename T>
__global__ void cast_from_float_kernel(const float* __restrict__ src, T* __restrict__ dst, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = from_float<T>(src[i]);
}

template <typename T>
cudaError_t cast_from_float(const float* src, T* dst, int64_t n, cudaStream_t stream) {
  constexpr int kThreads = 256;
  cast_from_float_kernel<T><<<blocks_for(n, kThreads), kThreads, 0, stream>>>(src, dst, n);
  return cudaGetLastError();
}

}  // namespace lab
