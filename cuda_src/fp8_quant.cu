// fp8 e4m3 quantization with one scale per group of G elements of a row: x (M, N) float32 or bfloat16 to q (M, N)
// float8_e4m3fn and scales (M, N / G) float32, scale = absmax / 448 (1 for a group of zeros), q = e4m3(x / scale).
// The spec (specs/fp8_quant.py) fixes every bit: both divisions correctly rounded (__fdiv_rn, which this file
// writes out so that no compiler flag can turn it into an approximate one; v4 gets the same quotients from a
// reciprocal), the cast rounding to nearest even and
// saturating (__nv_cvt_float_to_fp8 with __NV_SATFINITE: PTX cvt.rn.satfinite.e4m3x2.f32 on sm_89 and later).
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/fp8_quant.md):
//   v1 naive    one block of 256 threads per group: a pass for the absmax (a block reduction), a second pass that
//               reads x again and writes q one byte at a time
//   v2 vec      one warp per group, eight groups per block: 128-bit loads of x, the absmax by warp shuffles, and
//               each packet's quotients packed into one 32- or 64-bit store of q (groups that are not whole packets,
//               or unaligned views, fall back to v1)
//   v3 regs     each group read once, into registers: every thread holds up to 32 values of its group (8 packets
//               of fp32, 4 of bf16), issues all of its loads before it uses any, and quantizes from registers (v2
//               read each packet twice, the second time from cache, with one load in flight per lane); as many
//               threads per group as its packets need (a power of two: four in bf16 at G = 128, so eight groups
//               share a warp where v2 left half of one warp idle), reduced by shuffles within a warp, or by the
//               block for groups of 64 threads or more (groups longer than 256 threads' 32 values fall back to v2)
//   v4 rcp      v3 with each correctly rounded quotient from the group's reciprocal and two fmas (Markstein's
//               correction) instead of a division: in 16-bit inputs on an H200 v3 runs out of instructions before it
//               runs out of bandwidth (results/nvidia-h200/fp8_quant.md, commit 5276a11), and __fdiv_rn is most of them
//
// Memory-bound: x read once from memory (v1 and v2's second pass finds it in cache), q and the scales written once.
// Triton side: triton_src/fp8_quant.py.
#include "lab.h"

cudaError_t launch_fp8_quant_naive(lab::DType dtype, const void* x, void* q, float* scales, int64_t n_groups,
                                   int64_t group, cudaStream_t stream);
cudaError_t launch_fp8_quant_vec(lab::DType dtype, const void* x, void* q, float* scales, int64_t n_groups,
                                 int64_t group, cudaStream_t stream);
cudaError_t launch_fp8_quant_regs(lab::DType dtype, const void* x, void* q, float* scales, int64_t n_groups,
                                  int64_t group, cudaStream_t stream);
cudaError_t launch_fp8_quant_rcp(lab::DType dtype, const void* x, void* q, float* scales, int64_t n_groups,
                                 int64_t group, cudaStream_t stream);

#ifdef __CUDACC__
#include <cuda_fp8.h>

#include "lab_device.cuh"

constexpr float kE4m3Max = 448.0f;

__device__ __forceinline__ float scale_of(float absmax) {
  return absmax == 0.0f ? 1.0f : __fdiv_rn(absmax, kE4m3Max);
}

__device__ __forceinline__ uint8_t to_e4m3(float v, float scale) {
  return __nv_cvt_float_to_fp8(__fdiv_rn(v, scale), __NV_SATFINITE, __NV_E4M3);
}

// ---- v1 naive: one block per group, two passes over it. ----------------------------------------------------------
template <typename T>
__global__ void fp8_quant_naive_kernel(const T* __restrict__ x, uint8_t* __restrict__ q, float* __restrict__ scales,
                                       int64_t n_groups, int64_t group) {
  for (int64_t g = blockIdx.x; g < n_groups; g += gridDim.x) {  // 64-bit: M·N may pass 2^31
    const T* xg = x + g * group;
    float absmax = 0.0f;
    for (int64_t j = threadIdx.x; j < group; j += blockDim.x) absmax = fmaxf(absmax, fabsf(lab::to_float(xg[j])));
    const float scale = scale_of(lab::block_reduce_max(absmax));
    if (threadIdx.x == 0) scales[g] = scale;
    for (int64_t j = threadIdx.x; j < group; j += blockDim.x) q[g * group + j] = to_e4m3(lab::to_float(xg[j]), scale);
  }
}

cudaError_t launch_fp8_quant_naive(lab::DType dtype, const void* x, void* q, float* scales, int64_t n_groups,
                                   int64_t group, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kThreads = 256;
    const unsigned int blocks = static_cast<unsigned int>(n_groups < (1 << 30) ? n_groups : (1 << 30));
    fp8_quant_naive_kernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(x),
                                                               static_cast<uint8_t*>(q), scales, n_groups, group);
    return cudaGetLastError();
  });
}

// ---- v2 vec: one warp per group, 128-bit loads, packed stores. ---------------------------------------------------
// A packet of kPack values (4 fp32, 8 bf16) becomes kPack bytes of q: one 32-bit (fp32) or 64-bit (bf16) store.
template <int kPack>
struct QuantBytes;
template <>
struct QuantBytes<4> {
  using Word = uint32_t;
};
template <>
struct QuantBytes<8> {
  using Word = uint2;
};

// quotient(v): v / scale correctly rounded (a division in v2 and v3, a reciprocal and two fmas in v4).
template <typename T, typename Quotient>
__device__ __forceinline__ typename QuantBytes<lab::Packet<T>::kSize>::Word quantize_packet(
    const lab::Packet<T>& packet, Quotient quotient) {
  constexpr int kPack = lab::Packet<T>::kSize;
  typename QuantBytes<kPack>::Word word;
  uint8_t* bytes = reinterpret_cast<uint8_t*>(&word);
#pragma unroll
  for (int k = 0; k < kPack; ++k) {
    bytes[k] = __nv_cvt_float_to_fp8(quotient(lab::to_float(packet.v[k])), __NV_SATFINITE, __NV_E4M3);
  }
  return word;
}

template <typename T>
__device__ __forceinline__ typename QuantBytes<lab::Packet<T>::kSize>::Word quantize_packet(
    const lab::Packet<T>& packet, float scale) {
  return quantize_packet<T>(packet, [scale](float v) { return __fdiv_rn(v, scale); });
}

// v / scale correctly rounded without a division: q = v·r with r = 1/scale correctly rounded (once per group), the
// remainder v − q·scale, exact in one fma, and q corrected by remainder·r in a second. Markstein's theorem: with r
// within half an ulp of 1/scale and q within one ulp of v/scale, the corrected q is the correctly rounded quotient
// as long as the remainder (about 2^-24·|v|) is not subnormal, that is for |v| from 2^-100 up. Below that the
// quotient may be off, but in a group whose scale is at least 2^-80 it is below 2^-20, far under e4m3's smallest
// subnormal (2^-9): such values quantize to zero either way. So a group with scale >= kSmallestReciprocalScale takes
// this path for all its values, and a group with a smaller scale divides (its reciprocal could also overflow). Three
// FMA-pipe instructions where __fdiv_rn takes about ten and a branch to its slow path.
constexpr float kSmallestReciprocalScale = 0x1p-80f;

__device__ __forceinline__ float divide_by_reciprocal(float v, float scale, float reciprocal) {
  const float q = __fmul_rn(v, reciprocal);
  return __fmaf_rn(__fmaf_rn(-q, scale, v), reciprocal, q);
}

constexpr int kVecWarpsPerBlock = 8;

template <typename T>
__global__ void fp8_quant_vec_kernel(const T* __restrict__ x, uint8_t* __restrict__ q, float* __restrict__ scales,
                                     int64_t n_groups, int64_t group) {
  constexpr int kPack = lab::Packet<T>::kSize;
  using Word = typename QuantBytes<kPack>::Word;
  const int lane = threadIdx.x % 32;
  const int64_t packets = group / kPack;
  const int64_t g = static_cast<int64_t>(blockIdx.x) * kVecWarpsPerBlock + threadIdx.x / 32;
  if (g >= n_groups) return;  // a whole warp leaves together: the shuffles below see all 32 lanes or none
  const T* xg = x + g * group;
  float absmax = 0.0f;
  for (int64_t p = lane; p < packets; p += 32) {
    const lab::Packet<T> packet = lab::load_packet(xg + p * kPack);
#pragma unroll
    for (int k = 0; k < kPack; ++k) absmax = fmaxf(absmax, fabsf(lab::to_float(packet.v[k])));
  }
  const float scale = scale_of(lab::warp_reduce_max(absmax));
  if (lane == 0) scales[g] = scale;
  Word* qg = reinterpret_cast<Word*>(q + g * group);
  for (int64_t p = lane; p < packets; p += 32) qg[p] = quantize_packet<T>(lab::load_packet(xg + p * kPack), scale);
}

cudaError_t launch_fp8_quant_vec(lab::DType dtype, const void* x, void* q, float* scales, int64_t n_groups,
                                 int64_t group, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kPack = lab::Packet<T>::kSize;
    // whole packets per group, x 16-byte and q kPack-byte aligned (q is ours: a fresh tensor, so always aligned)
    if (group % kPack != 0 || !lab::is_aligned16(x)) {
      return launch_fp8_quant_naive(dtype, x, q, scales, n_groups, group, stream);
    }
    const int64_t blocks = (n_groups + kVecWarpsPerBlock - 1) / kVecWarpsPerBlock;
    fp8_quant_vec_kernel<T><<<static_cast<unsigned int>(blocks), 32 * kVecWarpsPerBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<uint8_t*>(q), scales, n_groups, group);
    return cudaGetLastError();
  });
}

// ---- v3 regs: each group read once into registers, quantized from them. ------------------------------------------
constexpr int kRegsValues = 32;     // values a thread holds: 8 packets of fp32, 4 of bf16 (16-bit values held as
                                    // floats once converted: 32 registers either way)
constexpr int kRegsThreads = 256;  // the most threads per group, and the block size for groups of fewer

// The max over the `width` consecutive lanes of each segment of the warp (width a power of two, at most 32).
__device__ __forceinline__ float segment_reduce_max(float v, int width) {
  for (int offset = width / 2; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// threads_per_group: a power of two; up to 32 the groups are segments of a warp, beyond it one group per block
// (blockDim = threads_per_group) and the block reduces.
template <typename T, bool kByReciprocal>
__global__ void __launch_bounds__(kRegsThreads) fp8_quant_regs_kernel(
    const T* __restrict__ x, uint8_t* __restrict__ q, float* __restrict__ scales, int64_t n_groups, int64_t group,
    int threads_per_group) {
  constexpr int kPack = lab::Packet<T>::kSize;
  constexpr int kRegsPackets = kRegsValues / kPack;
  using Word = typename QuantBytes<kPack>::Word;
  const int64_t packets = group / kPack;
  const int rank = threadIdx.x % threads_per_group;
  const int64_t g = static_cast<int64_t>(blockIdx.x) * (blockDim.x / threads_per_group) +
                    threadIdx.x / threads_per_group;
  const bool live = g < n_groups;  // threads past the last group still take part in the reduction's shuffles
  const T* xg = x + g * group;
  lab::Packet<T> held[kRegsPackets];
  float absmax = 0.0f;
#pragma unroll
  for (int i = 0; i < kRegsPackets; ++i) {  // unrolled: held[] stays in registers, and the loads all go out first
    const int64_t p = rank + static_cast<int64_t>(i) * threads_per_group;
    if (live && p < packets) held[i] = lab::load_packet(xg + p * kPack);
  }
#pragma unroll
  for (int i = 0; i < kRegsPackets; ++i) {
    if (live && rank + static_cast<int64_t>(i) * threads_per_group < packets) {
#pragma unroll
      for (int k = 0; k < kPack; ++k) absmax = fmaxf(absmax, fabsf(lab::to_float(held[i].v[k])));
    }
  }
  absmax = threads_per_group > 32 ? lab::block_reduce_max(absmax) : segment_reduce_max(absmax, threads_per_group);
  if (!live) return;
  const float scale = scale_of(absmax);
  if (rank == 0) scales[g] = scale;
  Word* qg = reinterpret_cast<Word*>(q + g * group);
  const auto quantize_held = [&](auto quotient) {
#pragma unroll
    for (int i = 0; i < kRegsPackets; ++i) {
      const int64_t p = rank + static_cast<int64_t>(i) * threads_per_group;
      if (p < packets) qg[p] = quantize_packet<T>(held[i], quotient);
    }
  };
  // v4: the reciprocal once per group, and the choice of path once per group (every value of a group takes the
  // same one, so the warp does not diverge per value as a test of each value would make it)
  if (kByReciprocal && scale >= kSmallestReciprocalScale) {
    const float reciprocal = __frcp_rn(scale);
    quantize_held([=](float v) { return divide_by_reciprocal(v, scale, reciprocal); });
  } else {
    quantize_held([=](float v) { return __fdiv_rn(v, scale); });
  }
}

template <bool kByReciprocal>
static cudaError_t launch_regs_kernel(lab::DType dtype, const void* x, void* q, float* scales, int64_t n_groups,
                                      int64_t group, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kPack = lab::Packet<T>::kSize;
    const int64_t packets = group / kPack;
    int threads_per_group = 1;  // the fewest (a power of two) that hold the group, kRegsValues values each
    while (static_cast<int64_t>(threads_per_group) * (kRegsValues / kPack) < packets) threads_per_group *= 2;
    if (group % kPack != 0 || !lab::is_aligned16(x) || threads_per_group > kRegsThreads) {
      return launch_fp8_quant_vec(dtype, x, q, scales, n_groups, group, stream);
    }
    const int threads = threads_per_group > 32 ? threads_per_group : kRegsThreads;
    const int64_t groups_per_block = threads / threads_per_group;
    const int64_t blocks = (n_groups + groups_per_block - 1) / groups_per_block;
    if (blocks > 0x7fffffff) return launch_fp8_quant_vec(dtype, x, q, scales, n_groups, group, stream);
    fp8_quant_regs_kernel<T, kByReciprocal><<<static_cast<unsigned int>(blocks), threads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<uint8_t*>(q), scales, n_groups, group, threads_per_group);
    return cudaGetLastError();
  });
}

cudaError_t launch_fp8_quant_regs(lab::DType dtype, const void* x, void* q, float* scales, int64_t n_groups,
                                  int64_t group, cudaStream_t stream) {
  return launch_regs_kernel<false>(dtype, x, q, scales, n_groups, group, stream);
}

// ---- v4 rcp: v3 with each quotient from the group's reciprocal (divide_by_reciprocal). -----------------------------
cudaError_t launch_fp8_quant_rcp(lab::DType dtype, const void* x, void* q, float* scales, int64_t n_groups,
                                 int64_t group, cudaStream_t stream) {
  return launch_regs_kernel<true>(dtype, x, q, scales, n_groups, group, stream);
}

#else  // host half: the torch binding

#include "lab_torch.h"

using Fp8QuantLauncher = cudaError_t (*)(lab::DType, const void*, void*, float*, int64_t, int64_t, cudaStream_t);

static std::tuple<at::Tensor, at::Tensor> run_fp8_quant(const at::Tensor& x, const at::Tensor& group,
                                                        const char* impl, Fp8QuantLauncher launch) {
  lab::check_cuda_input(x, "fp8_quant", "x");
  LAB_CHECK_TYPE(x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16, "fp8_quant: x has dtype ",
                 x.scalar_type(), "; this kernel takes float32 or bfloat16");
  LAB_CHECK(x.dim() == 2, "fp8_quant: x must be (M, N) (got sizes ", x.sizes(), ")");
  LAB_CHECK(group.numel() == 1 && group.device().is_cpu() && group.scalar_type() == at::kLong,
            "fp8_quant: group, the group size, must be one int64 on the CPU (got shape ", group.sizes(), ", dtype ",
            group.scalar_type(), ", on ", group.device(), ")");
  const int64_t g = group.item<int64_t>(), m = x.size(0), n = x.size(1);
  LAB_CHECK(g >= 1 && n % g == 0, "fp8_quant: the group size ", g, " must divide N = ", n);
  at::Tensor q = at::empty({m, n}, x.options().dtype(at::kFloat8_e4m3fn));
  at::Tensor scales = at::empty({m, n / g}, x.options().dtype(at::kFloat));
  if (x.numel() == 0) return {q, scales};
  c10::cuda::CUDAGuard guard(x.device());
  lab::check_launch(launch(lab::float_dtype(x, "fp8_quant", "x"), x.const_data_ptr(), q.mutable_data_ptr(),
                           scales.mutable_data_ptr<float>(), scales.numel(), g, lab::current_stream()),
                    "fp8_quant", impl);
  return {q, scales};
}

std::tuple<at::Tensor, at::Tensor> fp8_quant_naive(const at::Tensor& x, const at::Tensor& group) {
  return run_fp8_quant(x, group, "naive", launch_fp8_quant_naive);
}
std::tuple<at::Tensor, at::Tensor> fp8_quant_vec(const at::Tensor& x, const at::Tensor& group) {
  return run_fp8_quant(x, group, "vec", launch_fp8_quant_vec);
}
std::tuple<at::Tensor, at::Tensor> fp8_quant_regs(const at::Tensor& x, const at::Tensor& group) {
  return run_fp8_quant(x, group, "regs", launch_fp8_quant_regs);
}
std::tuple<at::Tensor, at::Tensor> fp8_quant_rcp(const at::Tensor& x, const at::Tensor& group) {
  return run_fp8_quant(x, group, "rcp", launch_fp8_quant_rcp);
}

TORCH_LIBRARY(lab_fp8_quant, m) {
  m.def("naive(Tensor x, Tensor group) -> (Tensor, Tensor)");
  m.def("vec(Tensor x, Tensor group) -> (Tensor, Tensor)");
  m.def("regs(Tensor x, Tensor group) -> (Tensor, Tensor)");
  m.def("rcp(Tensor x, Tensor group) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(lab_fp8_quant, CUDA, m) {
  m.impl("naive", &fp8_quant_naive);
  m.impl("vec", &fp8_quant_vec);
  m.impl("regs", &fp8_quant_regs);
  m.impl("rcp", &fp8_quant_rcp);
}

#endif
