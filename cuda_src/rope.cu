// Rotary position embedding, half-split layout (GPT-NeoX, Llama), q of shape (B, S, H, D), tables cos/sin (S, D/2):
//   y[i] = q[i] cos[s,i] - q[i + D/2] sin[s,i],   y[i + D/2] = q[i + D/2] cos[s,i] + q[i] sin[s,i]   (i < D/2)
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/rope.md):
//   v1 naive    one thread per pair (i, i + D/2): two narrow loads of q, two of the tables, two narrow stores
//   v2 vec      one thread per 16-byte packet of a row's first half and the matching packet of its second half:
//               every load and store 128 bits wide (half rows that are not whole packets, or unaligned views,
//               fall back to v1)
//
// Memory-bound: q is read once and y written once; the tables are H times smaller than q and every head of a token
// reads the same row of them, from cache after the first. Spec: specs/rope.py. Triton side: triton_src/rope.py.
#include "lab_rope.cuh"

cudaError_t launch_rope_naive(lab::DType dtype, const void* q, const void* cos, const void* sin, void* y,
                              int64_t rows, int64_t seq_len, int64_t heads, int64_t half, cudaStream_t stream);
cudaError_t launch_rope_vec(lab::DType dtype, const void* q, const void* cos, const void* sin, void* y,
                            int64_t rows, int64_t seq_len, int64_t heads, int64_t half, cudaStream_t stream);

#ifdef __CUDACC__
#include "lab_device.cuh"

// ---- v1 naive: one thread per pair. ------------------------------------------------------------------------------
// Each thread loads its two elements of q and its entry of each table and stores two outputs: 2- or 4-byte accesses,
// too few bytes in flight per thread to reach the memory's bandwidth.
template <typename T>
__global__ void rope_naive_kernel(const T* __restrict__ q, const T* __restrict__ cos, const T* __restrict__ sin,
                                  T* __restrict__ y, int64_t rows, int64_t seq_len, int64_t heads, int64_t half) {
  const int64_t pair = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // 64-bit: q may pass 2^31
  if (pair >= rows * half) return;
  const int64_t row = pair / half, i = pair % half;
  const int64_t at = row * 2 * half + i, table = lab::rope_token_of(row, seq_len, heads) * half + i;
  const float a = lab::to_float(q[at]), b = lab::to_float(q[at + half]);
  const float c = lab::to_float(cos[table]), s = lab::to_float(sin[table]);
  y[at] = lab::from_float<T>(a * c - b * s);
  y[at + half] = lab::from_float<T>(b * c + a * s);
}

cudaError_t launch_rope_naive(lab::DType dtype, const void* q, const void* cos, const void* sin, void* y,
                              int64_t rows, int64_t seq_len, int64_t heads, int64_t half, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kThreads = 256;
    rope_naive_kernel<T><<<lab::blocks_for(rows * half, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(q), static_cast<const T*>(cos), static_cast<const T*>(sin), static_cast<T*>(y), rows,
        seq_len, heads, half);
    return cudaGetLastError();
  });
}

// ---- v2 vec: one thread per 16-byte packet of the first half, with its partner packet in the second half. ---------
// Four 128-bit loads (q's two packets, the tables' two) and two 128-bit stores per thread, kPack pairs each.
template <typename T>
__global__ void rope_vec_kernel(const T* __restrict__ q, const T* __restrict__ cos, const T* __restrict__ sin,
                                T* __restrict__ y, int64_t rows, int64_t seq_len, int64_t heads, int64_t half) {
  constexpr int kPack = lab::Packet<T>::kSize;
  const int64_t packets_per_half = half / kPack;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= rows * packets_per_half) return;
  const int64_t row = t / packets_per_half, i = (t % packets_per_half) * kPack;
  const int64_t at = row * 2 * half + i, table = lab::rope_token_of(row, seq_len, heads) * half + i;
  lab::Packet<T> first = lab::load_packet(q + at), second = lab::load_packet(q + at + half);
  const lab::Packet<T> c = lab::load_packet(cos + table), s = lab::load_packet(sin + table);
#pragma unroll
  for (int k = 0; k < kPack; ++k) {
    const float a = lab::to_float(first.v[k]), b = lab::to_float(second.v[k]);
    const float ck = lab::to_float(c.v[k]), sk = lab::to_float(s.v[k]);
    first.v[k] = lab::from_float<T>(a * ck - b * sk);
    second.v[k] = lab::from_float<T>(b * ck + a * sk);
  }
  lab::store_packet(y + at, first);
  lab::store_packet(y + at + half, second);
}

cudaError_t launch_rope_vec(lab::DType dtype, const void* q, const void* cos, const void* sin, void* y,
                            int64_t rows, int64_t seq_len, int64_t heads, int64_t half, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kPack = lab::Packet<T>::kSize;
    const bool aligned = lab::is_aligned16(q) && lab::is_aligned16(cos) && lab::is_aligned16(sin) &&
                         lab::is_aligned16(y);
    if (half % kPack != 0 || !aligned) {  // packets would straddle the two halves, or fault: v1
      return launch_rope_naive(dtype, q, cos, sin, y, rows, seq_len, heads, half, stream);
    }
    constexpr int kThreads = 256;
    rope_vec_kernel<T><<<lab::blocks_for(rows * (half / kPack), kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(q), static_cast<const T*>(cos), static_cast<const T*>(sin), static_cast<T*>(y), rows,
        seq_len, heads, half);
    return cudaGetLastError();
  });
}

#else  // host half: the torch binding

at::Tensor rope_naive(const at::Tensor& q, const at::Tensor& cos, const at::Tensor& sin) {
  return lab::run_rope(q, cos, sin, "rope", "naive", launch_rope_naive);
}
at::Tensor rope_vec(const at::Tensor& q, const at::Tensor& cos, const at::Tensor& sin) {
  return lab::run_rope(q, cos, sin, "rope", "vec", launch_rope_vec);
}

TORCH_LIBRARY(lab_rope, m) {
  m.def("naive(Tensor q, Tensor cos, Tensor sin) -> Tensor");
  m.def("vec(Tensor q, Tensor cos, Tensor sin) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_rope, CUDA, m) {
  m.impl("naive", &rope_naive);
  m.impl("vec", &rope_vec);
}

#endif
