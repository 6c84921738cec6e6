// Shared by both halves of every cuda_src/<op>.cu: the device half (compiled by nvcc, `__CUDACC__` defined)
// and the host half (compiled by the C++ compiler). Only what both sides must agree on lives here.
#pragma once
#include <cstdint>
#include <cuda_runtime_api.h>

namespace lab {
// Element types the launchers accept. The host half maps at::ScalarType onto this; the device half dispatches
// on it to a template instantiation. Keeping torch out of the device half is what makes a cold build take seconds
// instead of minutes (nvcc never parses the torch headers).
enum class DType : int { f32 = 0, f16 = 1, bf16 = 2 };
}  // namespace lab
