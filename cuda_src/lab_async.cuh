// cp.async (sm_80+): copies global -> shared memory that bypass registers and complete asynchronously, the staging of
// the tensor-core matmuls (matmul.cu v4, fp8_matmul.cu v2), matmul.cu v6 and attention.cu v2. Device code only.
#pragma once

#include <cstdint>

namespace lab {

// A shared-memory pointer as the 32-bit address PTX's .shared instructions take.
__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- cp.async ------------------------------------------------------------------------------------------------------
// 16 bytes global→shared, asynchronously; with valid == false nothing is read and the 16 bytes become zeros.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}

// The same for one 4-byte element (a copy that transposes, or rows not 16-byte aligned), through L1: ".cg" takes only
// 16 bytes, ".ca" 4, 8 or 16. With valid == false nothing is read and the 4 bytes become a zero.
__device__ __forceinline__ void cp_async_4(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0) : "memory");
}

// Closes the group of copies this thread issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

}  // namespace lab
