// Rotary position embedding, interleaved layout (GPT-J), q of shape (B, S, H, D), tables cos/sin (S, D/2):
//   y[2i] = q[2i] cos[s,i] - q[2i+1] sin[s,i],   y[2i+1] = q[2i+1] cos[s,i] + q[2i] sin[s,i]   (i < D/2)
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/rope_interleaved.md):
//   v1 naive    one thread per pair (2i, 2i + 1): two narrow loads of q side by side, two of the tables, two stores
//   v2 vec      one thread per 16-byte packet of q, which holds whole pairs: one 128-bit load and store of q and
//               one 64-bit load of each table (half a packet: a pair takes one entry); rows that are not whole
//               packets, or unaligned views, fall back to v1
//
// The same work as the half-split layout (cuda_src/rope.cu), with a pair's two values adjacent instead of D/2 apart:
// a packet of q is rotated on its own, where the half-split kernel pairs a packet of the first half with one of the
// second. Spec: specs/rope_interleaved.py. Triton side: triton_src/rope_interleaved.py.
#include "lab_rope.cuh"

cudaError_t launch_rope_interleaved_naive(lab::DType dtype, const void* q, const void* cos, const void* sin, void* y,
                                          int64_t rows, int64_t seq_len, int64_t heads, int64_t half,
                                          cudaStream_t stream);
cudaError_t launch_rope_interleaved_vec(lab::DType dtype, const void* q, const void* cos, const void* sin, void* y,
                                        int64_t rows, int64_t seq_len, int64_t heads, int64_t half,
                                        cudaStream_t stream);

#ifdef __CUDACC__
#include "lab_device.cuh"

// ---- v1 naive: one thread per pair. ------------------------------------------------------------------------------
template <typename T>
__global__ void rope_interleaved_naive_kernel(const T* __restrict__ q, const T* __restrict__ cos,
                                              const T* __restrict__ sin, T* __restrict__ y, int64_t rows,
                                              int64_t seq_len, int64_t heads, int64_t half) {
  const int64_t pair = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // 64-bit: q may pass 2^31
  if (pair >= rows * half) return;
  const int64_t row = pair / half, i = pair % half;
  const int64_t at = 2 * pair, table = lab::rope_token_of(row, seq_len, heads) * half + i;
  const float a = lab::to_float(q[at]), b = lab::to_float(q[at + 1]);
  const float c = lab::to_float(cos[table]), s = lab::to_float(sin[table]);
  y[at] = lab::from_float<T>(a * c - b * s);
  y[at + 1] = lab::from_float<T>(b * c + a * s);
}

cudaError_t launch_rope_interleaved_naive(lab::DType dtype, const void* q, const void* cos, const void* sin, void* y,
                                          int64_t rows, int64_t seq_len, int64_t heads, int64_t half,
                                          cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kThreads = 256;
    rope_interleaved_naive_kernel<T><<<lab::blocks_for(rows * half, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(q), static_cast<const T*>(cos), static_cast<const T*>(sin), static_cast<T*>(y), rows,
        seq_len, heads, half);
    return cudaGetLastError();
  });
}

// ---- v2 vec: one thread per 16-byte packet of q, whole pairs. -----------------------------------------------------
// A packet of kPack values holds kPack / 2 pairs, whose table entries are kPack / 2 consecutive values of each
// table: 8 bytes, one 64-bit load each.
template <typename T>
struct alignas(8) TableHalfPacket {
  T v[lab::Packet<T>::kSize / 2];
};

template <typename T>
__global__ void rope_interleaved_vec_kernel(const T* __restrict__ q, const T* __restrict__ cos,
                                            const T* __restrict__ sin, T* __restrict__ y, int64_t rows,
                                            int64_t seq_len, int64_t heads, int64_t half) {
  constexpr int kPack = lab::Packet<T>::kSize, kPairs = kPack / 2;
  const int64_t packets_per_row = 2 * half / kPack;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= rows * packets_per_row) return;
  const int64_t row = t / packets_per_row;
  const int64_t table = lab::rope_token_of(row, seq_len, heads) * half + (t % packets_per_row) * kPairs;
  lab::Packet<T> packet = lab::load_packet(q + t * kPack);
  TableHalfPacket<T> c, s;
  *reinterpret_cast<uint2*>(&c) = __ldg(reinterpret_cast<const uint2*>(cos + table));
  *reinterpret_cast<uint2*>(&s) = __ldg(reinterpret_cast<const uint2*>(sin + table));
#pragma unroll
  for (int k = 0; k < kPairs; ++k) {
    const float a = lab::to_float(packet.v[2 * k]), b = lab::to_float(packet.v[2 * k + 1]);
    const float ck = lab::to_float(c.v[k]), sk = lab::to_float(s.v[k]);
    packet.v[2 * k] = lab::from_float<T>(a * ck - b * sk);
    packet.v[2 * k + 1] = lab::from_float<T>(b * ck + a * sk);
  }
  lab::store_packet(y + t * kPack, packet);
}

cudaError_t launch_rope_interleaved_vec(lab::DType dtype, const void* q, const void* cos, const void* sin, void* y,
                                        int64_t rows, int64_t seq_len, int64_t heads, int64_t half,
                                        cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kPack = lab::Packet<T>::kSize;
    // q's rows must be whole packets (then so are the tables' rows, in 8-byte halves) and every pointer aligned
    const bool aligned = lab::is_aligned16(q) && lab::is_aligned16(y) &&
                         (reinterpret_cast<std::uintptr_t>(cos) & 7) == 0 &&
                         (reinterpret_cast<std::uintptr_t>(sin) & 7) == 0;
    if ((2 * half) % kPack != 0 || !aligned) {
      return launch_rope_interleaved_naive(dtype, q, cos, sin, y, rows, seq_len, heads, half, stream);
    }
    constexpr int kThreads = 256;
    rope_interleaved_vec_kernel<T><<<lab::blocks_for(rows * (2 * half / kPack), kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(q), static_cast<const T*>(cos), static_cast<const T*>(sin), static_cast<T*>(y), rows,
        seq_len, heads, half);
    return cudaGetLastError();
  });
}

#else  // host half: the torch binding

at::Tensor rope_interleaved_naive(const at::Tensor& q, const at::Tensor& cos, const at::Tensor& sin) {
  return lab::run_rope(q, cos, sin, "rope_interleaved", "naive", launch_rope_interleaved_naive);
}
at::Tensor rope_interleaved_vec(const at::Tensor& q, const at::Tensor& cos, const at::Tensor& sin) {
  return lab::run_rope(q, cos, sin, "rope_interleaved", "vec", launch_rope_interleaved_vec);
}

TORCH_LIBRARY(lab_rope_interleaved, m) {
  m.def("naive(Tensor q, Tensor cos, Tensor sin) -> Tensor");
  m.def("vec(Tensor q, Tensor cos, Tensor sin) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_rope_interleaved, CUDA, m) {
  m.impl("naive", &rope_interleaved_naive);
  m.impl("vec", &rope_interleaved_vec);
}

#endif
