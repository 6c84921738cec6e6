// Host-side glue shared by every op's binding (included only in the host half of cuda_src/<op>.cu, which the C++
// compiler builds; nvcc never sees torch headers). Checks raise a Python exception that names the op and says what
// to do, instead of letting a bad tensor reach a kernel.
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <initializer_list>

#include "lab.h"

namespace lab {

inline DType float_dtype(const at::Tensor& t, const char* op, const char* arg) {
  switch (t.scalar_type()) {
    case at::kFloat: return DType::f32;
    case at::kHalf: return DType::f16;
    case at::kBFloat16: return DType::bf16;
    default:
      TORCH_CHECK_TYPE(false, op, ": ", arg, " has dtype ", t.scalar_type(),
                       "; this kernel takes float32, float16 or bfloat16");
  }
}

// The rules every kernel here relies on: device memory, dense row-major layout, fewer than 2^63 elements.
inline void check_cuda_input(const at::Tensor& t, const char* op, const char* arg) {
  TORCH_CHECK(t.defined(), op, ": ", arg, " is an undefined tensor");
  TORCH_CHECK(t.is_cuda(), op, ": ", arg, " is on ", t.device(), "; move it to a CUDA device first (.cuda())");
  TORCH_CHECK(t.is_contiguous(), op, ": ", arg, " is not contiguous (sizes ", t.sizes(), ", strides ", t.strides(),
              "); pass .contiguous()");
}

inline cudaStream_t current_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

inline void check_launch(cudaError_t err, const char* op, const char* impl) {
  TORCH_CHECK(err == cudaSuccess, op, ":", impl, " kernel launch failed: ", cudaGetErrorString(err));
}

// y = f(x) elementwise, for any launcher with the elementwise signature.
using UnaryLauncher = cudaError_t (*)(DType, const void* x, void* y, int64_t n, cudaStream_t);

inline at::Tensor unary_elementwise(const at::Tensor& x, const char* op, const char* impl, UnaryLauncher launch) {
  check_cuda_input(x, op, "x");
  DType dtype = float_dtype(x, op, "x");
  at::Tensor y = at::empty_like(x);
  if (x.numel() == 0) return y;  // a zero-block grid is a launch error, and there is nothing to do
  c10::cuda::CUDAGuard guard(x.device());
  check_launch(launch(dtype, x.const_data_ptr(), y.mutable_data_ptr(), x.numel(), current_stream()), op, impl);
  return y;
}

// out = f(a, b) elementwise over two tensors of one shape and dtype.
using BinaryLauncher = cudaError_t (*)(DType, const void* a, const void* b, void* out, int64_t n, cudaStream_t);

inline at::Tensor binary_elementwise(const at::Tensor& a, const at::Tensor& b, const char* op, const char* impl,
                                     BinaryLauncher launch) {
  check_cuda_input(a, op, "a");
  check_cuda_input(b, op, "b");
  TORCH_CHECK(a.sizes() == b.sizes(), op, ": shapes differ: ", a.sizes(), " vs ", b.sizes(),
              " (this kernel does not broadcast)");
  TORCH_CHECK_TYPE(a.scalar_type() == b.scalar_type(), op, ": dtypes differ: ", a.scalar_type(), " vs ",
                   b.scalar_type());
  TORCH_CHECK(a.device() == b.device(), op, ": inputs are on different devices: ", a.device(), " vs ", b.device());
  DType dtype = float_dtype(a, op, "a");
  at::Tensor out = at::empty_like(a);
  if (a.numel() == 0) return out;
  c10::cuda::CUDAGuard guard(a.device());
  check_launch(launch(dtype, a.const_data_ptr(), b.const_data_ptr(), out.mutable_data_ptr(), a.numel(),
                      current_stream()),
               op, impl);
  return out;
}

}  // namespace lab
