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

#include <string>

#include "lab.h"

namespace lab {

// Error messages are assembled as text here and only text reaches TORCH_CHECK. The extension may be built by a
// different g++ than torch was, one that links its own copy of the C++ runtime: streaming an integer into torch's
// message builder then crashed the process (seen on the GPU machines), where strings went through fine.
// Use LAB_CHECK / LAB_CHECK_TYPE with any mix of strings, integers, sizes, devices and dtypes.
inline std::string text(const char* s) { return s; }
inline std::string text(const std::string& s) { return s; }
inline std::string text(int64_t v) { return std::to_string(v); }
inline std::string text(int v) { return std::to_string(v); }
inline std::string text(size_t v) { return std::to_string(v); }
inline std::string text(c10::IntArrayRef d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}
inline std::string text(const c10::Device& d) { return d.str(); }
inline std::string text(c10::ScalarType t) { return c10::toString(t); }

template <typename... Parts>
std::string msg(const Parts&... parts) {
  std::string out;
  ((out += text(parts)), ...);
  return out;
}

#define LAB_CHECK(cond, ...) TORCH_CHECK(cond, ::lab::msg(__VA_ARGS__))
#define LAB_CHECK_TYPE(cond, ...) TORCH_CHECK_TYPE(cond, ::lab::msg(__VA_ARGS__))

inline DType float_dtype(const at::Tensor& t, const char* op, const char* arg) {
  switch (t.scalar_type()) {
    case at::kFloat: return DType::f32;
    case at::kHalf: return DType::f16;
    case at::kBFloat16: return DType::bf16;
    default:
      LAB_CHECK_TYPE(false, op, ": ", arg, " has dtype ", t.scalar_type(),
                     "; this kernel takes float32, float16 or bfloat16");
  }
}

// The rules every kernel here relies on: device memory, dense row-major layout, fewer than 2^63 elements.
inline void check_cuda_input(const at::Tensor& t, const char* op, const char* arg) {
  LAB_CHECK(t.defined(), op, ": ", arg, " is an undefined tensor");
  LAB_CHECK(t.is_cuda(), op, ": ", arg, " is on ", t.device(), "; move it to a CUDA device first (.cuda())");
  LAB_CHECK(t.is_contiguous(), op, ": ", arg, " is not contiguous (sizes ", t.sizes(), ", strides ", t.strides(),
            "); pass .contiguous()");
}

inline cudaStream_t current_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

inline void check_launch(cudaError_t err, const char* op, const char* impl) {
  LAB_CHECK(err == cudaSuccess, op, ":", impl, " kernel launch failed: ", cudaGetErrorString(err));
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
  LAB_CHECK(a.sizes() == b.sizes(), op, ": shapes differ: ", a.sizes(), " vs ", b.sizes(),
            " (this kernel does not broadcast)");
  LAB_CHECK_TYPE(a.scalar_type() == b.scalar_type(), op, ": dtypes differ: ", a.scalar_type(), " vs ",
                 b.scalar_type());
  LAB_CHECK(a.device() == b.device(), op, ": inputs are on different devices: ", a.device(), " vs ", b.device());
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
