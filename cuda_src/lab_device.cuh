// Device-side helpers shared by the kernels of every op (included only in the `#ifdef __CUDACC__` half).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "lab.h"

namespace lab {

// Math is done in fp32 registers whatever the storage type: fp16/bf16 inputs are widened on load and rounded once
// on store, so the only low-precision error is the final rounding.
__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// One 16-byte (128-bit) packet of T: a single LDG.128/STG.128 moves 4 fp32 or 8 fp16/bf16 values. Wide accesses
// cut the number of memory instructions per byte by 4x versus 32-bit ones, which is what lets a streaming kernel
// keep enough bytes in flight to saturate HBM.
template <typename T>
struct alignas(16) Packet {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

template <typename T>
__device__ __forceinline__ Packet<T> load_packet(const T* p) {
  Packet<T> out;
  *reinterpret_cast<uint4*>(&out) = __ldg(reinterpret_cast<const uint4*>(p));
  return out;
}

template <typename T>
__device__ __forceinline__ void store_packet(T* p, const Packet<T>& packet) {
  *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(&packet);
}

inline bool is_aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; }

// Calls body.template operator()<T>() with T the CUDA storage type for `dtype`; returns cudaErrorInvalidValue for a
// type the launcher was not built for (the host half rejects those first, with a message).
template <typename Body>
cudaError_t dispatch_float_types(DType dtype, Body&& body) {
  switch (dtype) {
    case DType::f32: return body(float{});
    case DType::f16: return body(__half{});
    case DType::bf16: return body(__nv_bfloat16{});
  }
  return cudaErrorInvalidValue;
}

inline unsigned int blocks_for(int64_t work_items, int threads_per_block) {
  return static_cast<unsigned int>((work_items + threads_per_block - 1) / threads_per_block);
}

// ---- Reductions across a warp and across a block (fp32). -------------------------------------------------------
// A butterfly of register shuffles: after log2(32) = 5 steps every lane holds the result, with no shared memory and
// no __syncthreads. All 32 lanes of the warp must call it.
__device__ __forceinline__ float warp_reduce_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ float warp_reduce_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Each warp reduces in registers, one value per warp goes through shared memory, and every warp then reduces those
// (at most 32) values itself, so every thread gets the result without a third step. blockDim must be 1-D and a
// multiple of 32, and every thread of the block must call it (it contains __syncthreads).
template <float (*WarpReduce)(float)>
__device__ __forceinline__ float block_reduce(float v, float identity) {
  __shared__ float per_warp[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = WarpReduce(v);
  __syncthreads();  // the previous call's readers are done with per_warp before it is overwritten
  if (lane == 0) per_warp[warp] = v;
  __syncthreads();
  return WarpReduce(lane < static_cast<int>(blockDim.x / 32) ? per_warp[lane] : identity);
}

__device__ __forceinline__ float block_reduce_sum(float v) { return block_reduce<warp_reduce_sum>(v, 0.0f); }
__device__ __forceinline__ float block_reduce_max(float v) { return block_reduce<warp_reduce_max>(v, -INFINITY); }

}  // namespace lab
