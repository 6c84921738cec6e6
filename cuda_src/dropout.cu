// Seeded dropout:  y[i] = keep(seed, i) ? x[i] / (1 - p) : 0, the mask from Philox 4x32-10 (specs/dropout.py fixes
// it bit for bit: element i takes word i % 4 of the generator's block for counter (g mod 2^32, g >> 32, 0, 0),
// g = i / 4, and is kept where that word >= ceil(p * 2^32)).
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/dropout.md):
//   v1 naive    one thread per element, one generator call per element (three of its four words thrown away)
//   v2 vec      one thread per 128-bit packet, one generator call per four elements, every word used
//   v3 resident as many threads as the GPU holds at once, each taking packet after packet: what v2 does once per
//               thread for eight 16-bit elements (read the seed and p, the threshold, 1/(1-p), the ten round keys)
//               done once for many packets, and two packets loaded before either is computed (faster than v2 in
//               16-bit, slower in fp32: see the step's comment)
//
// The generator is written out below (twenty lines). It is the function curand calls curand_Philox4x32_10 in
// curand_philox4x32_x.h; curand's state API (curand_init + curand4) would also fit v2, but each curand4 call
// computes the next block ahead of time, one generator call per four elements wasted, and its header is not in
// every CUDA toolkit install. Spec: specs/dropout.py. Triton side: triton_src/dropout.py.
//
// Memory-bound once the generator runs once per four elements: x read once, y written once; the seed and p are read
// from device memory by every thread (a broadcast served from cache), so no call waits on the host for them.
#include "lab.h"

using DropoutLauncher = cudaError_t (*)(lab::DType, const void* x, const int64_t* seed, const float* p, void* y,
                                        int64_t n, cudaStream_t);
cudaError_t launch_dropout_naive(lab::DType dtype, const void* x, const int64_t* seed, const float* p, void* y,
                                 int64_t n, cudaStream_t stream);
cudaError_t launch_dropout_vec(lab::DType dtype, const void* x, const int64_t* seed, const float* p, void* y,
                               int64_t n, cudaStream_t stream);
cudaError_t launch_dropout_resident(lab::DType dtype, const void* x, const int64_t* seed, const float* p, void* y,
                                    int64_t n, cudaStream_t stream);

#ifdef __CUDACC__
#include "lab_device.cuh"

// ---- the generator: Philox 4x32 with 10 rounds (Salmon et al., SC 2011) ----------------------------------------
// Each round multiplies two of the four counter words by constants (the 64-bit products' high and low halves),
// mixes in the key and permutes; the key is bumped by the Weyl constants between rounds. The ten rounds' keys
// depend on the seed alone: v3 computes them once per thread and keeps them in registers.
constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

struct RoundKeys {
  uint32_t k0[10], k1[10];
};

__device__ __forceinline__ RoundKeys round_keys(uint2 key) {
  RoundKeys r;
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    r.k0[round] = key.x + round * kPhiloxW0;  // wraps mod 2^32, as the generator's key bumps do
    r.k1[round] = key.y + round * kPhiloxW1;
  }
  return r;
}

__device__ __forceinline__ uint4 philox4x32_10(uint4 counter, const RoundKeys& keys) {
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi0 = __umulhi(kPhiloxM0, counter.x), lo0 = kPhiloxM0 * counter.x;
    const uint32_t hi1 = __umulhi(kPhiloxM1, counter.z), lo1 = kPhiloxM1 * counter.z;
    counter = make_uint4(hi1 ^ counter.y ^ keys.k0[round], lo1, hi0 ^ counter.w ^ keys.k1[round], lo0);
  }
  return counter;
}

// What every thread reads once: the key (the seed's two words), the least word that keeps an element and the scale.
struct DropoutParams {
  uint2 key;
  uint64_t threshold;  // ceil(p * 2^32), p clamped to [0, 1]: exact, p * 2^32 only raises p's exponent
  float scale;         // 1 / (1 - p)
};

__device__ __forceinline__ DropoutParams read_params(const int64_t* seed, const float* p_ptr) {
  const uint64_t s = static_cast<uint64_t>(*seed);
  const float p = *p_ptr;
  const float clamped = fminf(fmaxf(p, 0.0f), 1.0f);
  return {make_uint2(static_cast<uint32_t>(s), static_cast<uint32_t>(s >> 32)),
          static_cast<uint64_t>(ceilf(clamped * 4294967296.0f)), 1.0f / (1.0f - p)};
}

__device__ __forceinline__ uint4 group_words(uint64_t group, const RoundKeys& keys) {
  return philox4x32_10(make_uint4(static_cast<uint32_t>(group), static_cast<uint32_t>(group >> 32), 0u, 0u), keys);
}

__device__ __forceinline__ uint32_t word_of(const uint4& w, int lane) {
  return lane == 0 ? w.x : lane == 1 ? w.y : lane == 2 ? w.z : w.w;
}

// A select, not a multiply: a dropped inf or NaN is 0 (x * 0 would be NaN).
__device__ __forceinline__ float dropped_or_scaled(float v, uint32_t word, const DropoutParams& d) {
  return word >= d.threshold ? v * d.scale : 0.0f;
}

// One element: its group's four words computed, one kept.
template <typename T>
__device__ __forceinline__ void dropout_element(const T* __restrict__ x, T* __restrict__ y, int64_t i,
                                                const DropoutParams& d) {
  const uint4 w = group_words(static_cast<uint64_t>(i) / 4, round_keys(d.key));
  y[i] = lab::from_float<T>(dropped_or_scaled(lab::to_float(x[i]), word_of(w, static_cast<int>(i % 4)), d));
}

// ---- v1 naive: one thread per element, one generator call per element. ------------------------------------------
// The shape of the textbook kernel (and of Triton's tutorial): each thread asks the generator for its own element.
// Philox returns four words per call; three are thrown away, so ten rounds of integer multiplies are paid per
// element instead of per four, and at copy bandwidth that integer work is what limits the kernel.
template <typename T>
__global__ void dropout_naive_kernel(const T* __restrict__ x, const int64_t* __restrict__ seed,
                                     const float* __restrict__ p, T* __restrict__ y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // 64-bit: n may exceed 2^31
  if (i < n) dropout_element(x, y, i, read_params(seed, p));
}

cudaError_t launch_dropout_naive(lab::DType dtype, const void* x, const int64_t* seed, const float* p, void* y,
                                 int64_t n, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kThreads = 1024;
    dropout_naive_kernel<T><<<lab::blocks_for(n, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(x), seed, p, static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

// ---- v2 vec: one thread per 128-bit packet, one generator call per four elements. --------------------------------
// A packet holds 4 fp32 or 8 fp16/bf16 elements, one or two whole groups (packets start at multiples of 4), so a
// thread calls the generator once per group and uses all four words. The tail past the last whole packet goes
// element by element, as in v1, in the same launch.
template <typename T>
__global__ void dropout_vec_kernel(const T* __restrict__ x, const int64_t* __restrict__ seed,
                                   const float* __restrict__ p, T* __restrict__ y, int64_t n) {
  constexpr int kPack = lab::Packet<T>::kSize;
  static_assert(kPack % 4 == 0, "a packet holds whole groups of four elements");
  const int64_t n_packets = n / kPack;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const DropoutParams d = read_params(seed, p);
  if (i < n_packets) {
    lab::Packet<T> packet = lab::load_packet(x + i * kPack);
#pragma unroll
    for (int g = 0; g < kPack / 4; ++g) {
      const uint4 w = group_words(static_cast<uint64_t>(i) * (kPack / 4) + g, round_keys(d.key));
#pragma unroll
      for (int lane = 0; lane < 4; ++lane) {
        const int k = 4 * g + lane;
        packet.v[k] = lab::from_float<T>(dropped_or_scaled(lab::to_float(packet.v[k]), word_of(w, lane), d));
      }
    }
    lab::store_packet(y + i * kPack, packet);
  } else {
    const int64_t j = n_packets * kPack + (i - n_packets);
    if (j < n) dropout_element(x, y, j, d);
  }
}

cudaError_t launch_dropout_vec(lab::DType dtype, const void* x, const int64_t* seed, const float* p, void* y,
                               int64_t n, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kThreads = 256;
    constexpr int kPack = lab::Packet<T>::kSize;
    if (lab::is_aligned16(x) && lab::is_aligned16(y)) {
      const int64_t threads = n / kPack + n % kPack;
      dropout_vec_kernel<T><<<lab::blocks_for(threads, kThreads), kThreads, 0, stream>>>(
          static_cast<const T*>(x), seed, p, static_cast<T*>(y), n);
    } else {
      // x or y not 16-byte aligned (a sliced view), where a 128-bit access would fault: v1's kernel, element by
      // element (the same words, each group's generated four times)
      dropout_naive_kernel<T><<<lab::blocks_for(n, kThreads), kThreads, 0, stream>>>(
          static_cast<const T*>(x), seed, p, static_cast<T*>(y), n);
    }
    return cudaGetLastError();
  });
}

// ---- v3 resident: a grid the GPU holds at once, each thread taking packets in turn. -------------------------------
// Profiled at the bench's largest shape (results/nvidia-h200/dropout-profile.md, commit b0e1a4f), v2's 16-bit
// kernel issues more than twice the generator's instructions per element, and its integer pipe is the busiest
// unit: every thread pays its set-up (two loads, the clamp, ceil and the IEEE division, the ten round keys, a
// 64-bit index) for one packet of eight elements. Here a thread pays it once: the round keys sit in twenty
// registers for the generator calls of every packet it takes, and the threshold is a 32-bit compare (p = 1, whose threshold 2^32 no word
// reaches, is a flag folded into the same predicate). Each turn loads two packets before computing either, so
// twice the bytes are in flight per thread while the generator runs.
// What it bought (that profile, and results/nvidia-h200/dropout.md at the same commit): fewer instructions and the
// best 16-bit row at the largest shapes, still short of the copy; in fp32 it is slower than v2. Its registers let
// fewer threads fit, and a thread's loop waits on its own loads: latency, not the integer pipe or the memory, is
// what limits it now.
struct ResidentParams {
  RoundKeys keys;
  uint32_t threshold;  // min(ceil(p * 2^32), 2^32 - 1)
  bool keep_none;      // ceil(p * 2^32) = 2^32: no word reaches it
  float scale;
};

template <typename T>
__device__ __forceinline__ lab::Packet<T> dropout_packet(lab::Packet<T> packet, uint64_t first_group,
                                                          const ResidentParams& d) {
  constexpr int kPack = lab::Packet<T>::kSize;
#pragma unroll
  for (int g = 0; g < kPack / 4; ++g) {
    const uint4 w = group_words(first_group + g, d.keys);
#pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const int k = 4 * g + lane;
      const bool keep = word_of(w, lane) >= d.threshold && !d.keep_none;
      packet.v[k] = lab::from_float<T>(keep ? lab::to_float(packet.v[k]) * d.scale : 0.0f);
    }
  }
  return packet;
}

template <typename T>
__global__ void dropout_resident_kernel(const T* __restrict__ x, const int64_t* __restrict__ seed,
                                        const float* __restrict__ p, T* __restrict__ y, int64_t n) {
  constexpr int kPack = lab::Packet<T>::kSize;
  const DropoutParams once = read_params(seed, p);
  const ResidentParams d{round_keys(once.key), static_cast<uint32_t>(min(once.threshold, uint64_t{0xFFFFFFFFu})),
                         once.threshold > 0xFFFFFFFFull, once.scale};
  const int64_t n_packets = n / kPack;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + stride < n_packets; i += 2 * stride) {  // two packets per turn, both loaded first
    const lab::Packet<T> a = lab::load_packet(x + i * kPack);
    const lab::Packet<T> b = lab::load_packet(x + (i + stride) * kPack);
    lab::store_packet(y + i * kPack, dropout_packet<T>(a, static_cast<uint64_t>(i) * (kPack / 4), d));
    lab::store_packet(y + (i + stride) * kPack,
                      dropout_packet<T>(b, static_cast<uint64_t>(i + stride) * (kPack / 4), d));
  }
  if (i < n_packets) {
    lab::store_packet(y + i * kPack,
                      dropout_packet<T>(lab::load_packet(x + i * kPack), static_cast<uint64_t>(i) * (kPack / 4), d));
  }
  // The tail past the last whole packet (fewer than kPack elements): one thread each, as v1.
  const int64_t j = n_packets * kPack + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j < n) dropout_element(x, y, j, once);
}

cudaError_t launch_dropout_resident(lab::DType dtype, const void* x, const int64_t* seed, const float* p, void* y,
                                    int64_t n, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kThreads = 256;
    constexpr int kPack = lab::Packet<T>::kSize;
    if (!lab::is_aligned16(x) || !lab::is_aligned16(y)) return launch_dropout_vec(dtype, x, seed, p, y, n, stream);
    const int64_t packets = n / kPack;
    const int64_t wanted = (packets + 2 * kThreads - 1) / (2 * kThreads);  // two packets per thread at least
    const unsigned int grid = lab::resident_grid(dropout_resident_kernel<T>, kThreads, 0, wanted > 0 ? wanted : 1);
    dropout_resident_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(x), seed, p,
                                                               static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

#else  // host half: the torch binding

#include "lab_torch.h"

static at::Tensor run_dropout(const at::Tensor& x, const at::Tensor& seed, const at::Tensor& p, const char* impl,
                               DropoutLauncher launch) {
  lab::check_cuda_input(x, "dropout", "x");
  lab::check_cuda_input(seed, "dropout", "seed");
  lab::check_cuda_input(p, "dropout", "p");
  const lab::DType dtype = lab::float_dtype(x, "dropout", "x");
  LAB_CHECK_TYPE(seed.scalar_type() == at::kLong, "dropout: seed has dtype ", seed.scalar_type(),
                 "; pass one int64 element");
  LAB_CHECK_TYPE(p.scalar_type() == at::kFloat, "dropout: p has dtype ", p.scalar_type(),
                 "; pass one float32 element");
  LAB_CHECK(seed.numel() == 1 && p.numel() == 1, "dropout: seed and p must hold one element each (got sizes ",
            seed.sizes(), " and ", p.sizes(), ")");
  LAB_CHECK(seed.device() == x.device() && p.device() == x.device(), "dropout: seed and p must be on ", x.device(),
            " with x (got ", seed.device(), " and ", p.device(), ")");
  at::Tensor y = at::empty_like(x);
  if (x.numel() == 0) return y;
  c10::cuda::CUDAGuard guard(x.device());
  lab::check_launch(launch(dtype, x.const_data_ptr(), seed.const_data_ptr<int64_t>(), p.const_data_ptr<float>(),
                           y.mutable_data_ptr(), x.numel(), lab::current_stream()),
                    "dropout", impl);
  return y;
}

at::Tensor dropout_naive(const at::Tensor& x, const at::Tensor& seed, const at::Tensor& p) {
  return run_dropout(x, seed, p, "naive", launch_dropout_naive);
}
at::Tensor dropout_vec(const at::Tensor& x, const at::Tensor& seed, const at::Tensor& p) {
  return run_dropout(x, seed, p, "vec", launch_dropout_vec);
}
at::Tensor dropout_resident(const at::Tensor& x, const at::Tensor& seed, const at::Tensor& p) {
  return run_dropout(x, seed, p, "resident", launch_dropout_resident);
}

TORCH_LIBRARY(lab_dropout, m) {
  m.def("naive(Tensor x, Tensor seed, Tensor p) -> Tensor");
  m.def("vec(Tensor x, Tensor seed, Tensor p) -> Tensor");
  m.def("resident(Tensor x, Tensor seed, Tensor p) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_dropout, CUDA, m) {
  m.impl("naive", &dropout_naive);
  m.impl("vec", &dropout_vec);
  m.impl("resident", &dropout_resident);
}

#endif
