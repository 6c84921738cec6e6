// What the two RoPE layouts share (cuda_src/rope.cu, half-split; cuda_src/rope_interleaved.cu, GPT-J's pairs): in
// the device half, the token a row of q belongs to; in the host half, the checks of q and its tables and the call
// of a launcher. Specs: specs/rope.py, specs/rope_interleaved.py.
#pragma once
#include "lab.h"

#ifdef __CUDACC__
namespace lab {

// Row r of q (one token's one head, D values) belongs to token (r / heads) % seq_len.
__device__ __forceinline__ int64_t rope_token_of(int64_t row, int64_t seq_len, int64_t heads) {
  return (row / heads) % seq_len;
}

}  // namespace lab

#else  // host half

#include "lab_torch.h"

namespace lab {

// A launcher of either layout: rows = B·S·H rows of q, each of 2·half values, and (seq_len, half) tables.
using RopeLauncher = cudaError_t (*)(DType, const void* q, const void* cos, const void* sin, void* y, int64_t rows,
                                     int64_t seq_len, int64_t heads, int64_t half, cudaStream_t);

// q (B, S, H, D) with D even, cos and sin (S, D/2) in q's dtype on q's device; y a new tensor like q.
inline at::Tensor run_rope(const at::Tensor& q, const at::Tensor& cos, const at::Tensor& sin, const char* op,
                           const char* impl, RopeLauncher launch) {
  check_cuda_input(q, op, "q");
  check_cuda_input(cos, op, "cos");
  check_cuda_input(sin, op, "sin");
  const DType dtype = float_dtype(q, op, "q");
  LAB_CHECK(q.dim() == 4 && q.size(3) % 2 == 0, op, ": q must be (B, S, H, D) with D even (got sizes ", q.sizes(),
            ")");
  const int64_t seq_len = q.size(1), heads = q.size(2), half = q.size(3) / 2;
  for (const at::Tensor* table : {&cos, &sin}) {
    LAB_CHECK_TYPE(table->scalar_type() == q.scalar_type(), op, ": the tables' dtype ", table->scalar_type(),
                   " differs from q's ", q.scalar_type());
    LAB_CHECK(table->dim() == 2 && table->size(0) == seq_len && table->size(1) == half, op,
              ": cos and sin must be (S, D/2) = [", seq_len, ", ", half, "] (got sizes ", table->sizes(), ")");
    LAB_CHECK(table->device() == q.device(), op, ": the tables are on ", table->device(), ", q on ", q.device());
  }
  at::Tensor y = at::empty_like(q);
  if (q.numel() == 0) return y;
  c10::cuda::CUDAGuard guard(q.device());
  check_launch(launch(dtype, q.const_data_ptr(), cos.const_data_ptr(), sin.const_data_ptr(), y.mutable_data_ptr(),
                      q.numel() / (2 * half), seq_len, heads, half, current_stream()),
               op, impl);
  return y;
}

}  // namespace lab

#endif
