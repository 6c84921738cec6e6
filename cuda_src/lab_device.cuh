// Device-side helpers shared by the kernels of every op (included only in the `#ifdef __CUDACC__` half).
#pragma once
#include <climits>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <type_traits>
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

// ---- A packet kept in registers as four 32-bit words (uint4). ------------------------------------------------
// For a kernel that caches 16-bit data in registers: as a Packet<__half>, each of the 8 values gets a 32-bit register
// of its own, twice the registers of the 16 bytes it holds; as words, two values share one. Elements are widened
// to fp32 where they are used, and results are packed back two to a word.
template <typename T>
__device__ __forceinline__ float word_element(const uint4& packet, int k) {  // k: compile-time after unrolling
  const uint32_t* words = reinterpret_cast<const uint32_t*>(&packet);
  if constexpr (sizeof(T) == 4) {
    return __uint_as_float(words[k]);
  } else {
    const uint32_t w = words[k / 2];
    if constexpr (std::is_same_v<T, __half>)
      return __half2float(__ushort_as_half(static_cast<unsigned short>(k % 2 ? w >> 16 : w & 0xffffu)));
    else  // bf16 is the top half of an fp32
      return __uint_as_float(k % 2 ? w & 0xffff0000u : w << 16);
  }
}

// Two floats as one 32-bit word of fp16/bf16 (each rounded to nearest), the first in the low half: the order of two
// adjacent elements in memory, and of an mma operand register's pair.
template <typename T>
__device__ __forceinline__ uint32_t pack_pair(float lo, float hi) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
}

template <typename T>
__device__ __forceinline__ uint4 pack_words(const float (&v)[Packet<T>::kSize]) {
  uint4 out;
  uint32_t* words = reinterpret_cast<uint32_t*>(&out);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if constexpr (sizeof(T) == 4) {
      words[j] = __float_as_uint(v[j]);
    } else {
      words[j] = pack_pair<T>(v[2 * j], v[2 * j + 1]);
    }
  }
  return out;
}

// Stores one packet's words as one STG.128, whatever the compiler makes of the code around it. A plain uint4
// assignment is a struct copy, which the compiler splits into four 32-bit stores and may fail to merge again: nvcc
// 13.0 left softmax's split-write and cluster kernels with four STG.32 per packet, and ncu found them at half the
// speed of the same kernels in Triton (results/nvidia-h100-80gb-hbm3/softmax-profile.md). The PTX store here is the
// plain one (weak, write-back), as one instruction.
__device__ __forceinline__ void store_words(void* p, const uint4& w) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w)
               : "memory");
}

template <typename T>
__device__ __forceinline__ uint4 splat_words(float v) {  // every element v
  float f[Packet<T>::kSize];
#pragma unroll
  for (int k = 0; k < Packet<T>::kSize; ++k) f[k] = v;
  return pack_words<T>(f);
}

// Hides the words' values from the compiler, ptxas included, at the cost of one PRMT per word (an identity byte
// permute, which ptxas does not look through). Whatever was derived from the words before it (widened fp32 copies
// of 16-bit elements, say) cannot be reused after it and is recomputed from the words instead of being kept live:
// for data cached narrow and widened in several passes. An empty asm statement is not enough: it hides the values
// from NVVM only, and ptxas then merges the widenings of the passes and keeps every fp32 copy live.
__device__ __forceinline__ void opaque(uint4& w) {
  asm volatile(
      "prmt.b32 %0, %0, 0, 0x3210;\n\t"
      "prmt.b32 %1, %1, 0, 0x3210;\n\t"
      "prmt.b32 %2, %2, 0, 0x3210;\n\t"
      "prmt.b32 %3, %3, 0, 0x3210;"
      : "+r"(w.x), "+r"(w.y), "+r"(w.z), "+r"(w.w));
}

// 2^x as one MUFU.EX2, results below 2^-126 flushed to 0 (relative error about 2^-22; 2^-inf = 0). For kernels that
// fold log2(e) into a scale they apply anyway (FlashAttention's exponent: one FFMA, then this).
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// e^x as MUFU.EX2 of x · log2(e), results below 2^-126 flushed to 0: two instructions. __expf without -ftz=true
// (this lab's flags) also rescales around that range, three more instructions, for results far below every atol
// here. Relative error about 2^-21 plus 2^-24·|x|, as __expf's.
__device__ __forceinline__ float fast_exp(float x) { return exp2_approx(x * 1.4426950408889634f); }

inline bool is_aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; }

// An attribute of the current device (0 if the runtime cannot say; the error is cleared so that it cannot surface
// later as a launch error).
inline int device_attribute(cudaDeviceAttr attribute) {
  int device = 0, value = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&value, attribute, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return value;
}

// The current device's SM count (0 if the runtime cannot say). For launchers that size their grid to the GPU.
inline int sm_count() { return device_attribute(cudaDevAttrMultiProcessorCount); }

// Blocks of `kernel` (at `threads` per block) that the whole GPU holds at once, at most `cap`, at least 1: the grid
// of a kernel whose blocks each take many pieces of the work in turn (a norm backward's partial rows, dropout v3's
// packets), where more blocks than fit at once would only add blocks, not bandwidth.
template <typename Kernel>
unsigned int resident_grid(Kernel kernel, int threads, size_t dynamic_smem, int64_t cap) {
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, dynamic_smem) != cudaSuccess) {
    (void)cudaGetLastError();  // the launch reports whatever made the query fail
    per_sm = 1;
  }
  int64_t blocks = int64_t{per_sm > 0 ? per_sm : 1} * (sm_count() > 0 ? sm_count() : 1);
  if (blocks > cap) blocks = cap;
  if (blocks > INT_MAX) blocks = INT_MAX;
  return static_cast<unsigned int>(blocks > 0 ? blocks : 1);
}

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
