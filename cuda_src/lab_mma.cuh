// mma.sync and ldmatrix (sm_80+): the per-warp tensor-core path of matmul.cu v4 and attention.cu v2. Device code only.
//
// Fragment layouts of mma.m16n8k16 with 16-bit operands ("Matrix Fragments for mma.m16n8k16", PTX ISA), for lane l,
// g = l / 4 and t = l % 4; every 32-bit register holds two elements, the lower column (A, C) or row (B) in its low
// half:
//   A (16×16, row-major): a0 = (row g, cols 2t, 2t+1), a1 = (row g+8, same cols), a2 = (row g, cols 2t+8, 2t+9),
//                         a3 = (row g+8, cols 2t+8, 2t+9)
//   B (16×8, k-major):    b0 = (k 2t, 2t+1; column g), b1 = (k 2t+8, 2t+9; column g)
//   C, D (16×8, fp32):    c0, c1 = (row g, cols 2t, 2t+1), c2, c3 = (row g+8, same cols)
#pragma once

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <type_traits>

namespace lab {

// Four 8×8 matrices of 16-bit elements from shared memory, in mma's operand layout: lanes 8i..8i+7 give the row
// addresses of matrix i, and every lane receives one 32-bit register (two elements) of each: register i of lane l
// holds row l / 4, columns 2(l % 4) and 2(l % 4) + 1 of matrix i.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// The same, each matrix transposed on the way: register i of lane l holds rows 2(l % 4) and 2(l % 4) + 1 of column
// l / 4 of matrix i (rows stored k-major come out as mma's B operand).
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// d += a·b for one 16×8×16 tile; a: 4 registers of 2 elements (16×16, row-major), b: 2 registers (16×8, k-major).
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t b0, const uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

}  // namespace lab
