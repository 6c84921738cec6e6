// Softmax over the last dimension of a 2-D (M, N) tensor, numerically stable:
//   y[r, c] = exp(x[r, c] - max_r) / sum_c' exp(x[r, c'] - max_r)
// Subtracting the row max makes every exponent <= 0, so exp never overflows (x = 1e4 would otherwise give inf / inf).
//
// A reduction, but still memory-bound: the least any kernel can do is read each element once and write it once
// (2 · M · N · itemsize bytes), with a few flops per element. The whole game is how many times a kernel touches
// the row in HBM, and keeping enough loads in flight while it does. Spec: specs/softmax.py. Triton side:
// triton_src/softmax.py.
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/softmax.md):
//   v1 naive    one block per row, shared-memory tree reductions, three passes over the row in HBM
//   v2 warp     + rows of up to 256 16-byte packets (N <= 1024 fp32, 2048 fp16/bf16): one warp per row, the row
//               held in registers, shuffle reductions: one pass
//   v3 block    + rows of up to 8192 packets (N <= 32768 fp32, 65536 fp16/bf16): one block per row, the row held in
//               registers across the block: one pass
//   v4 online   + longer rows: running max and rescaled sum in one pass (Milakov & Gimelshein), then a pass to write
//   v5 split    + longer rows too few to fill the GPU: several blocks per row, a kernel for per-slice (max, sum) and
//               one that merges them and writes
//   v6 cluster  + rows of up to 8 blocks' worth (Hopper on): a row across the blocks of a thread-block cluster, held
//               in registers, the blocks' (max, sum) merged through distributed shared memory: one read, one launch
//   v7 staged_cluster  + v6's longest rows over a cluster of 8 or 16 blocks of 512 threads, each block a part of
//               every row of its cluster staged in a ring of shared memory by bulk copies, each block's (max, sum)
//               pair pushed into the others' shared memory (the norms' v10/v11): one read, loads in flight throughout
//   v8 resident + few long rows held on chip across every SM at once: SMs / M blocks a row, one an SM, each its
//               part in shared memory (bulk copies) and registers, the parts' (max, sum) pairs merged through
//               global memory across one grid-wide barrier (a cooperative launch): one read, no cluster to place
//   v9 grid_ring + v7's overlap on v8's placement: groups of blocks over every SM, each group a run of rows, each
//               block its part of them in a ring of shared memory; the parts' pairs passed through L2 as flagged
//               words, a row written two rows after its pair: one read, loads in flight while rows are written
//
// Each step adds a path for the rows it is good at and hands every other shape to the step before (its launcher's
// first line), so every row runs every shape, and the ladder at a shape shows what each step bought there.
// Short rows stay well below copy bandwidth, as does a copy of the same bytes there: too little work per launch to
// fill the GPU (measured: results/nvidia-h200/softmax.md).
#include "lab.h"

// One launcher per step, each for a row-major (rows, cols) x and y on `stream`.
cudaError_t launch_softmax_naive(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                 cudaStream_t stream);
cudaError_t launch_softmax_warp(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                cudaStream_t stream);
cudaError_t launch_softmax_block(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                 cudaStream_t stream);
cudaError_t launch_softmax_online(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                  cudaStream_t stream);
// How many blocks cuda:split gives each row: more than 1 only where it takes v5's own path, whose two kernels pass a
// (max, sum) pair per row slice through `workspace` (rows · splits float2, allocated by the caller).
int64_t softmax_split_count(lab::DType dtype, int64_t rows, int64_t cols);
cudaError_t launch_softmax_split(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                 void* workspace, cudaStream_t stream);
// Whether cuda:cluster takes such rows itself (compute capability 9.0 on, rows it can hold); other rows take v5.
bool softmax_cluster_takes(lab::DType dtype, int64_t cols);
cudaError_t launch_softmax_cluster(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                   cudaStream_t stream);
cudaError_t launch_softmax_staged_cluster(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                          cudaStream_t stream);
// How many blocks cuda:resident gives each row of this x and y: 0 where it does not take them (the rows go to v7),
// else its own path, whose blocks pass a (max, sum) pair each through `workspace` (rows · parts float2, allocated by
// the caller).
int64_t softmax_resident_parts(lab::DType dtype, const void* x, const void* y, int64_t rows, int64_t cols);
cudaError_t launch_softmax_resident(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                    int64_t parts, void* workspace, cudaStream_t stream);
// How many 64-bit words cuda:grid_ring needs for this x and y: 0 where it does not take them (the rows go to v8),
// else its own path's, which must be zero at the call and are left zero by it (see v9).
int64_t softmax_grid_ring_words(lab::DType dtype, const void* x, const void* y, int64_t rows, int64_t cols);
cudaError_t launch_softmax_grid_ring(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                     void* words, cudaStream_t stream);

#ifdef __CUDACC__
#include <climits>
#include <type_traits>

#include <cooperative_groups.h>

#include "lab_cluster.cuh"
#include "lab_device.cuh"
#include "lab_staged.cuh"  // v7: the ring of rows and the pushed sums (shared with the norms)

// Every kernel loops over rows with a grid stride so that M >= 2^31 (more rows than a grid may have blocks) still
// works; at any realistic M the grid covers all rows and the loop runs once.
inline unsigned int row_blocks(int64_t blocks) {
  return static_cast<unsigned int>(blocks < INT_MAX ? blocks : INT_MAX);
}

// One call, typed: what every step's launcher gets. `vec`: every row starts 16-byte aligned (both base pointers are
// and N is a multiple of the packet), so v2-v5 may read and write whole packets.
template <typename T>
struct SoftmaxCall {
  const T* x;
  T* y;
  int64_t rows, cols;
  bool vec;
  cudaStream_t stream;

  int64_t packets() const { return (cols + lab::Packet<T>::kSize - 1) / lab::Packet<T>::kSize; }  // per row
};

// The extern launchers' common half: the dtype's instantiation and the call, then `step` (a step's launcher).
template <typename Step>
cudaError_t dispatch_softmax(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                             cudaStream_t stream, Step step) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    const bool vec = lab::is_aligned16(x) && lab::is_aligned16(y) && cols % lab::Packet<T>::kSize == 0;
    return step(SoftmaxCall<T>{static_cast<const T*>(x), static_cast<T*>(y), rows, cols, vec, stream});
  });
}

// ---- v1 naive: one block per row, shared-memory tree reductions, three passes. ---------------------------------
// Pass 1 finds the row max, pass 2 sums exp(x - max), pass 3 writes exp(x - max) / sum: the row is read from HBM
// three times (L2 catches some of it), and each reduction is a log2(256)-step tree in shared memory with a
// __syncthreads per step, during which no loads are in flight. Narrow loads, accurate expf.
constexpr int kNaiveThreads = 256;  // a power of two, for the halving tree

template <typename Op>
__device__ float naive_tree_reduce(float* scratch, float v, Op op) {
  const int tid = threadIdx.x;
  scratch[tid] = v;
  __syncthreads();
  for (int stride = kNaiveThreads / 2; stride > 0; stride /= 2) {
    if (tid < stride) scratch[tid] = op(scratch[tid], scratch[tid + stride]);
    __syncthreads();
  }
  const float result = scratch[0];
  __syncthreads();  // everyone has read scratch[0] before the next reduction overwrites it
  return result;
}

template <typename T>
__global__ void softmax_naive_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t cols) {
  __shared__ float scratch[kNaiveThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;  // 64-bit: M·N may exceed 2^31
    T* yr = y + row * cols;
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += kNaiveThreads) m = fmaxf(m, lab::to_float(xr[c]));
    m = naive_tree_reduce(scratch, m, [](float a, float b) { return fmaxf(a, b); });
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += kNaiveThreads) s += expf(lab::to_float(xr[c]) - m);
    s = naive_tree_reduce(scratch, s, [](float a, float b) { return a + b; });
    for (int64_t c = threadIdx.x; c < cols; c += kNaiveThreads)
      yr[c] = lab::from_float<T>(expf(lab::to_float(xr[c]) - m) / s);
  }
}

template <typename T>
cudaError_t run_naive(const SoftmaxCall<T>& c) {
  softmax_naive_kernel<T><<<row_blocks(c.rows), kNaiveThreads, 0, c.stream>>>(c.x, c.y, c.rows, c.cols);
  return cudaGetLastError();
}

cudaError_t launch_softmax_naive(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                 cudaStream_t stream) {
  return dispatch_softmax(dtype, x, y, rows, cols, stream, [](const auto& c) { return run_naive(c); });
}

// ---- Shared by v2-v5: a thread's share of a row, cached in registers in its storage type. ---------------------
// A row is cut into 16-byte packets (4 fp32 or 8 fp16/bf16 elements). Of a group of `stride` threads (a warp, a
// block), thread t holds packets t, t + stride, t + 2·stride, ...: at each step the group reads `stride` consecutive
// packets, one LDG.128 per thread, and all kPacks loads are issued before the first is used.
// The packets stay as loaded (four 32-bit words each) and each pass widens them to fp32 as it reads them; the math
// stays fp32. For fp16/bf16 this is what lets the register file hold bytes: a register keeps two elements, not one
// widened value, so 32 registers cache 128 bytes of the row in every dtype. (The first version widened on load: an
// fp16 thread held 64 bytes where an fp32 thread held 128, an SM had half the bytes in flight, and v2 took 90
// registers for an fp16 row of N = 1024, room for 20 warps per SM instead of 64.)
// The price, for fp16/bf16 only: each pass widens again (lab::opaque keeps the compiler from keeping widened
// copies), and the store recomputes exp(x - max), which a 16-bit packet could not have kept without rounding it:
// two exponentials per element. MUFU.EX2 issues 16 per clock per SM; an fp16 row at copy bandwidth on an H200 is
// about 4 elements per clock per SM (4.2e12 B/s / 4 B per element / (132 SMs · 2e9 clocks/s)), so 8 exponentials.
// fp32 packets are their own fp32 values, and there the compiler keeps exp(x - max) from the sum for the store.
// Elements past the end of the row read as -inf: they drop out of the max, and exp(-inf - max) = 0 drops them out
// of the sum. lab::fast_exp is MUFU.EX2 after a multiply by log2(e): two instructions instead of expf's ~20, with
// a relative error of about 2^-21 plus 2^-24·|x - max|, well inside the fp32 tolerance for every exponent that
// matters (terms below e^-100 vanish next to the row's largest term, which is exactly 1).
// Column indices are 32-bit: callers pass a row pointer and at most 2^31 - 1 columns from it.
template <typename T, int kPacks>
struct CachedRow {
  static constexpr int kVec = lab::Packet<T>::kSize;
  uint4 p[kPacks];  // as words: two 16-bit values share a register (lab::word_element)

  // With `vec` (every row starts 16-byte aligned: the base pointers are and N is a multiple of the packet) a packet
  // is wholly inside the row or wholly past its end, and is one LDG.128. Without it (a sliced view, an odd N) it is
  // read element by element with a bounds check: same results, more instructions. The branch is uniform and taken
  // once, outside the loop, so the vector path is straight-line code.
  __device__ __forceinline__ void load(const T* row, int first, int stride, int cols, bool vec) {
    if (vec) {
      const int packets = cols / kVec;
#pragma unroll
      for (int i = 0; i < kPacks; ++i) {
        const int c = first + i * stride;
        p[i] = c < packets ? __ldg(reinterpret_cast<const uint4*>(row + c * kVec)) : lab::splat_words<T>(-INFINITY);
      }
    } else {
#pragma unroll
      for (int i = 0; i < kPacks; ++i) {
        float v[kVec];
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const int e = (first + i * stride) * kVec + k;
          v[k] = e < cols ? lab::to_float(row[e]) : -INFINITY;
        }
        p[i] = lab::pack_words<T>(v);  // exact: the values came from T
      }
    }
  }

  // The reductions keep one partial per packet lane (kVec independent chains of kPacks steps instead of one chain
  // of kPacks · kVec), since the compiler may not reassociate them itself.
  __device__ __forceinline__ float max() const {
    float m[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) m[k] = x(0, k);
#pragma unroll
    for (int i = 1; i < kPacks; ++i)
#pragma unroll
      for (int k = 0; k < kVec; ++k) m[k] = fmaxf(m[k], x(i, k));
#pragma unroll
    for (int k = 1; k < kVec; ++k) m[0] = fmaxf(m[0], m[k]);
    return m[0];
  }

  // Whether a cached element is NaN. fmaxf drops NaN, so a share of the row holding only -inf and NaN has max -inf,
  // the value that marks a share with nothing to add: the paths that skip such a share ask this first, or the NaN
  // (which makes the whole row NaN) would be lost. Only those rare paths pay for it.
  __device__ __forceinline__ bool any_nan() const {
    bool found = false;
#pragma unroll
    for (int i = 0; i < kPacks; ++i)
#pragma unroll
      for (int k = 0; k < kVec; ++k) found |= x(i, k) != x(i, k);
    return found;
  }

  // Sum of exp(x - m). m must be finite or +inf: with m = -inf, exp(-inf - (-inf)) is NaN.
  __device__ __forceinline__ float exp_sum(float m) {
    widen_again();
    float s[kVec] = {};
#pragma unroll
    for (int i = 0; i < kPacks; ++i)
#pragma unroll
      for (int k = 0; k < kVec; ++k) s[k] += lab::fast_exp(x(i, k) - m);
#pragma unroll
    for (int k = 1; k < kVec; ++k) s[0] += s[k];
    return s[0];
  }

  // Writes exp(x - m) · inv_sum for the cached elements that lie inside the row (packets as in load).
  __device__ __forceinline__ void store(T* row, int first, int stride, int cols, bool vec, float m,
                                        float inv_sum) {
    widen_again();
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
      float v[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k) v[k] = lab::fast_exp(x(i, k) - m) * inv_sum;
      if (vec) {
        const int c = first + i * stride;
        if (c < cols / kVec) lab::store_words(row + c * kVec, lab::pack_words<T>(v));
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const int e = (first + i * stride) * kVec + k;
          if (e < cols) row[e] = lab::from_float<T>(v[k]);
        }
      }
    }
  }

 private:
  __device__ __forceinline__ float x(int i, int k) const { return lab::word_element<T>(p[i], k); }

  // Each pass widens 16-bit elements itself: the compiler would otherwise widen once, keep the fp32 copies live
  // (twice the registers), and spill. fp32 needs no widening, and there the compiler may keep exp(x - m) from
  // exp_sum for the store (same registers, one exponential per element).
  __device__ __forceinline__ void widen_again() {
    if constexpr (sizeof(T) < 4) {
#pragma unroll
      for (int i = 0; i < kPacks; ++i) lab::opaque(p[i]);
    }
  }
};

// Packets per thread in v2, v3 and v5: 32 registers of row (128 bytes) per thread. A thread of a v3 block then needs
// about 55 registers, under the 64 that a 1024-thread block allows.
constexpr int kCachedPacks = 8;

// One row held whole by a group of threads: load, max, sum, store, with the group's reductions in between. The
// group is a warp (v2), a block (v3) or a thread-block cluster (v6).
struct WarpGroup {
  __device__ static int rank() { return threadIdx.x; }
  __device__ static int size() { return 32; }
  __device__ static float reduce_max(float v) { return lab::warp_reduce_max(v); }
  __device__ static float reduce_sum(float v) { return lab::warp_reduce_sum(v); }
};

struct BlockGroup {
  __device__ static int rank() { return threadIdx.x; }
  __device__ static int size() { return blockDim.x; }
  __device__ static float reduce_max(float v) { return lab::block_reduce_max(v); }
  __device__ static float reduce_sum(float v) { return lab::block_reduce_sum(v); }
};

template <int kPacks, typename Group, typename T>
__device__ __forceinline__ void softmax_cached_row(Group& group, const T* xr, T* yr, int cols, bool vec) {
  CachedRow<T, kPacks> r;
  r.load(xr, group.rank(), group.size(), cols, vec);
  const float m = group.reduce_max(r.max());
  const float inv_sum = 1.0f / group.reduce_sum(r.exp_sum(m));
  r.store(yr, group.rank(), group.size(), cols, vec, m, inv_sum);
}

// ---- v2 warp: one warp per row for rows of up to 32 · 8 packets, the row in registers, shuffle reductions. -------
// Versus v1: one read of the row instead of three (it stays in registers between the passes), 128-bit loads, and
// both reductions are 5 register shuffles with no shared memory and no __syncthreads. Four warps (rows) per block.
// kPacks (packets per lane) is a template parameter so the cache is a fixed-size register array; the launcher picks
// the smallest that holds the row.
// __launch_bounds__(128, 8): at most 64 registers, so that 8 blocks (32 rows) fit on an SM: M = 4096 rows are then
// all in flight at once on 132 SMs, where a second wave would pay the load latency again.
constexpr int kWarpRowsPerBlock = 4;

template <typename T, int kPacks>
__global__ void __launch_bounds__(32 * kWarpRowsPerBlock, 8) softmax_warp_kernel(const T* __restrict__ x,
                                                                                 T* __restrict__ y, int64_t rows,
                                                                                 int cols, bool vec) {
  WarpGroup group;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + threadIdx.y; row < rows;
       row += static_cast<int64_t>(gridDim.x) * kWarpRowsPerBlock)
    softmax_cached_row<kPacks>(group, x + row * cols, y + row * cols, cols, vec);
}

// Calls body(std::integral_constant<int, K>{}) with K the smallest power of two >= needed, starting from kFirst and
// capped at kLast (the caller makes sure kLast suffices). One kernel instantiation per K: the register cache
// must have a compile-time size.
template <int kFirst, int kLast, typename Body>
cudaError_t with_packs(int64_t needed, Body&& body) {
  if constexpr (kFirst < kLast) {
    if (needed > kFirst) return with_packs<kFirst * 2, kLast>(needed, body);
  }
  return body(std::integral_constant<int, kFirst>{});
}

constexpr int64_t kWarpMaxPackets = 32 * kCachedPacks;

// The warp kernel with the smallest cache that holds the row; longer rows go to v1.
template <typename T>
cudaError_t run_warp(const SoftmaxCall<T>& c) {
  if (c.packets() > kWarpMaxPackets) return run_naive(c);
  return with_packs<1, kCachedPacks>((c.packets() + 31) / 32, [&](auto packs) {
    constexpr int kPacks = decltype(packs)::value;
    const dim3 block(32, kWarpRowsPerBlock);
    const unsigned int grid = row_blocks((c.rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock);
    softmax_warp_kernel<T, kPacks><<<grid, block, 0, c.stream>>>(c.x, c.y, c.rows, static_cast<int>(c.cols), c.vec);
    return cudaGetLastError();
  });
}

cudaError_t launch_softmax_warp(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                cudaStream_t stream) {
  return dispatch_softmax(dtype, x, y, rows, cols, stream, [](const auto& c) { return run_warp(c); });
}

// ---- v3 block: one block per row for rows of up to 1024 · 8 packets, the row in registers across the block. -----
// Same single read as v2 for rows too long for one warp: the two reductions go warp shuffles -> 32 values in shared
// memory -> warp shuffles (lab::block_reduce_*), two __syncthreads each instead of v1's ten. Each thread caches 8
// packets and the block has as few threads as that allows (a multiple of 32): 256 at N = 8192 fp32 or 16384 fp16, so
// several blocks (rows) share an SM and one block's loads overlap another's reductions. (A first version used
// 1024-thread blocks with 8 values each: one block per SM, and HBM idle during every reduction.)
// __launch_bounds__: a 1024-thread block (the longest rows) fails to launch if a thread uses more than
// 65536 / 1024 = 64 registers, so ptxas must plan for it.
constexpr int kMaxBlockThreads = 1024;

template <typename T>
__global__ void __launch_bounds__(kMaxBlockThreads) softmax_block_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                                         int64_t rows, int cols, bool vec) {
  BlockGroup group;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x)
    softmax_cached_row<kCachedPacks>(group, x + row * cols, y + row * cols, cols, vec);
}

constexpr int64_t kBlockMaxPackets = int64_t{kMaxBlockThreads} * kCachedPacks;

// Rows longer than a warp holds and short enough for a block: kCachedPacks packets per thread, as few threads as
// that allows (a multiple of 32). Every other row goes to v2 (which sends the longest to v1).
template <typename T>
cudaError_t run_block(const SoftmaxCall<T>& c) {
  const int64_t packets = c.packets();
  if (packets <= kWarpMaxPackets || packets > kBlockMaxPackets) return run_warp(c);
  const int threads = static_cast<int>(((packets + kCachedPacks - 1) / kCachedPacks + 31) / 32 * 32);
  softmax_block_kernel<T><<<row_blocks(c.rows), threads, 0, c.stream>>>(c.x, c.y, c.rows, static_cast<int>(c.cols),
                                                                        c.vec);
  return cudaGetLastError();
}

cudaError_t launch_softmax_block(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                 cudaStream_t stream) {
  return dispatch_softmax(dtype, x, y, rows, cols, stream, [](const auto& c) { return run_block(c); });
}

// A part of a row's max m and sum s of exp(x - m): what v4 merges across its threads, v5 across a row's slices and v7
// across its threads and blocks. m = -inf: the part held nothing but -inf (s is 0) or also a NaN (s is NaN, which
// fmaxf left out of m); such a part adds its s as it is, never rescaled by exp(-inf + inf) = NaN.
struct MaxSum {
  float m, s;
};
// The part's sum taken against the row's max m (>= the part's).
__device__ __forceinline__ float rescaled(MaxSum a, float m) {
  return a.m == -INFINITY ? a.s : a.s * lab::fast_exp(a.m - m);
}

// ---- v4 online: rows too long for registers; one pass for max and sum together, one to write. --------------------
// Versus a v1-style max pass + sum pass: each thread keeps a running max m and a sum s of exp(x - m); when a new
// step raises the max, s is rescaled by exp(m_old - m_new) (Milakov & Gimelshein 2018, "Online normalizer
// calculation for softmax"). The row is read twice instead of three times, and the second read may hit L2.
// Each step a thread loads kOnlineUnroll packets and only then updates its state, so kOnlineUnroll independent
// 16-byte loads are in flight per thread; the write pass goes by the same steps.
// Hazard: while a thread has seen only -inf, m_new = -inf and exp(m - m_new) = exp(-inf + inf) = NaN, so such a
// step is skipped (s stays 0, or becomes NaN if the step held a NaN, which fmaxf left out of the max). Likewise when
// merging threads, a thread with m = -inf contributes its s as it is: 0, or the NaN that makes the row NaN.
// Limit: one block per row, so with fewer rows than SMs most of the GPU idles; v5 sends such rows to its split
// kernels instead.
constexpr int kOnlineThreads = 1024;
constexpr int kOnlineUnroll = 4;

template <typename T>
__global__ void __launch_bounds__(kOnlineThreads) softmax_online_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                                        int64_t rows, int64_t cols, bool vec) {
  constexpr int64_t kStep = int64_t{kOnlineUnroll} * kOnlineThreads * lab::Packet<T>::kSize;  // elements
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    float m = -INFINITY, s = 0.0f;
    for (int64_t start = 0; start < cols; start += kStep) {
      CachedRow<T, kOnlineUnroll> r;
      r.load(xr + start, threadIdx.x, kOnlineThreads, static_cast<int>(min(cols - start, kStep)), vec);
      const float m_new = fmaxf(m, r.max());
      if (m_new == -INFINITY) {  // only -inf (and NaN) so far: nothing to add, and rescaling would make NaN
        if (r.any_nan()) s = NAN;
        continue;
      }
      s = s * lab::fast_exp(m - m_new) + r.exp_sum(m_new);
      m = m_new;
    }
    // Merge the threads' (m, s): rescale every s to the row max, then sum.
    const float row_max = lab::block_reduce_max(m);
    const float inv_sum = 1.0f / lab::block_reduce_sum(rescaled({m, s}, row_max));
    for (int64_t start = 0; start < cols; start += kStep) {
      CachedRow<T, kOnlineUnroll> r;
      const int left = static_cast<int>(min(cols - start, kStep));
      r.load(xr + start, threadIdx.x, kOnlineThreads, left, vec);
      r.store(y + row * cols + start, threadIdx.x, kOnlineThreads, left, vec, row_max, inv_sum);
    }
  }
}

// Rows too long for a block to hold; shorter rows go to v3 (and from there to v2 and v1).
template <typename T>
cudaError_t run_online(const SoftmaxCall<T>& c) {
  if (c.packets() <= kBlockMaxPackets) return run_block(c);
  softmax_online_kernel<T><<<row_blocks(c.rows), kOnlineThreads, 0, c.stream>>>(c.x, c.y, c.rows, c.cols, c.vec);
  return cudaGetLastError();
}

cudaError_t launch_softmax_online(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                  cudaStream_t stream) {
  return dispatch_softmax(dtype, x, y, rows, cols, stream, [](const auto& c) { return run_online(c); });
}

// ---- v5 split: rows too long for one block's registers and too few for v4 to fill the GPU (M = 32, N = 256K). ----
// v4 runs one 1024-thread block per row, so M = 32 rows keep 32 of an H200's 132 SMs busy. Here each row is cut into
// slices of 256 threads · 8 packets (32 KB), one block per slice, as many blocks as v3 would run for M · slices rows.
// Kernel 1 caches its slice in registers as v3 does and writes the slice's (max, sum of exp(x - max)); kernel 2
// reads the row's pairs, merges them as v4 merges its threads (each sum rescaled by exp(max - row max)), reads its
// slice again and writes it. The second read comes from L2 when the input fits there (32 rows of 256K fp32 are
// 32 MB; an H200's L2 holds 60 MB), so HBM still sees each element read once and written once; the cost is a
// second launch. Hazard: a slice of nothing but -inf has max -inf; its sum is taken as 0, never exp(-inf + inf), or
// as NaN if the slice holds a NaN (fmaxf leaves NaN out of the max).
// Tried and dropped: L2 hints so that output lines could not push input lines out before their second read (kernel
// 1's loads evict-last, kernel 2's stores streaming) left both kernels' times as they were (rows cuda:keep and
// triton:keep of results/nvidia-h200/softmax.md at commit ad21dae). What ncu finds instead: each kernel at about
// two-thirds of DRAM bandwidth, its one and a half to two waves of short blocks ramping up and draining
// (results/nvidia-h100-80gb-hbm3/softmax-long-rows-profile.md).
constexpr int kSplitThreads = 256;

template <typename T>
constexpr int64_t split_slice_cols() {
  return int64_t{kSplitThreads} * kCachedPacks * lab::Packet<T>::kSize;
}

template <typename T>
__global__ void __launch_bounds__(kSplitThreads) softmax_split_stats_kernel(const T* __restrict__ x,
                                                                            float2* __restrict__ stats, int64_t rows,
                                                                            int64_t cols, int64_t splits, bool vec) {
  constexpr int64_t kSlice = split_slice_cols<T>();
  for (int64_t item = blockIdx.x; item < rows * splits; item += gridDim.x) {  // item = row · splits + slice
    const int64_t row = item / splits, start = item % splits * kSlice;
    CachedRow<T, kCachedPacks> r;
    r.load(x + row * cols + start, threadIdx.x, kSplitThreads, static_cast<int>(min(cols - start, kSlice)), vec);
    const float m = lab::block_reduce_max(r.max());
    // m is the same in every thread, so every thread takes the same branch (each has a block reduction)
    const float s = lab::block_reduce_sum(m == -INFINITY ? (r.any_nan() ? NAN : 0.0f) : r.exp_sum(m));
    if (threadIdx.x == 0) stats[item] = make_float2(m, s);
  }
}

template <typename T>
__global__ void __launch_bounds__(kSplitThreads) softmax_split_write_kernel(const T* __restrict__ x,
                                                                            T* __restrict__ y,
                                                                            const float2* __restrict__ stats,
                                                                            int64_t rows, int64_t cols,
                                                                            int64_t splits, bool vec) {
  constexpr int64_t kSlice = split_slice_cols<T>();
  for (int64_t item = blockIdx.x; item < rows * splits; item += gridDim.x) {
    const int64_t row = item / splits, start = item % splits * kSlice;
    const int left = static_cast<int>(min(cols - start, kSlice));
    CachedRow<T, kCachedPacks> r;
    r.load(x + row * cols + start, threadIdx.x, kSplitThreads, left, vec);  // first: in flight during the merge
    const float2* row_stats = stats + row * splits;
    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < splits; i += kSplitThreads) m = fmaxf(m, row_stats[i].x);
    const float row_max = lab::block_reduce_max(m);
    float s = 0.0f;
    for (int64_t i = threadIdx.x; i < splits; i += kSplitThreads) {
      const float2 slice = row_stats[i];
      s += rescaled({slice.x, slice.y}, row_max);
    }
    r.store(y + row * cols + start, threadIdx.x, kSplitThreads, left, vec, row_max,
            1.0f / lab::block_reduce_sum(s));
  }
}

constexpr int packet_size(lab::DType dtype) { return dtype == lab::DType::f32 ? 4 : 8; }

int64_t softmax_split_count(lab::DType dtype, int64_t rows, int64_t cols) {
  const int64_t packets = (cols + packet_size(dtype) - 1) / packet_size(dtype);
  if (packets <= kBlockMaxPackets) return 1;  // v2 or v3 hold the row
  const int sms = lab::sm_count();
  if (rows >= 2 * int64_t{sms}) return 1;  // v4: at least two rows per SM
  const int64_t slice_packets = int64_t{kSplitThreads} * kCachedPacks;
  return (packets + slice_packets - 1) / slice_packets;
}

// Long rows too few to fill the GPU, `splits` (softmax_split_count) blocks each; every other shape goes to v4.
template <typename T>
cudaError_t run_split(const SoftmaxCall<T>& c, float2* stats, int64_t splits) {
  if (splits == 1) return run_online(c);
  const unsigned int grid = row_blocks(c.rows * splits);
  softmax_split_stats_kernel<T><<<grid, kSplitThreads, 0, c.stream>>>(c.x, stats, c.rows, c.cols, splits, c.vec);
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  softmax_split_write_kernel<T><<<grid, kSplitThreads, 0, c.stream>>>(c.x, c.y, stats, c.rows, c.cols, splits,
                                                                      c.vec);
  return cudaGetLastError();
}

cudaError_t launch_softmax_split(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                 void* workspace, cudaStream_t stream) {
  const int64_t splits = softmax_split_count(dtype, rows, cols);
  float2* stats = static_cast<float2*>(workspace);
  return dispatch_softmax(dtype, x, y, rows, cols, stream,
                          [&](const auto& c) { return run_split(c, stats, splits); });
}

// ---- v6 cluster: a row across the blocks of a thread-block cluster (Hopper on), read once, one launch. ----------
// v5 reads a long row twice (the second time mostly from L2) in two launches, because no block can hold the row
// and blocks cannot see each other's sums. A thread-block cluster can: up to 8 blocks that the hardware runs at
// once, each reading the others' shared memory. Here a row of up to 8 · 8192 packets (256K fp32, 512K fp16/bf16
// elements) is held by a cluster of 2-8 blocks, each thread caching 8 packets as in v3, and v3's row runs with the
// cluster as its group: the max and then the sum over the block (lab::row_sum) and then over the cluster's blocks
// through distributed shared memory (lab::cluster_row_sum: one cluster barrier each). So the row is read once and
// written once in one launch, as v3 does for rows a block holds.
// Both merges give every thread of the cluster the same bits: the max is exact in any order, and the cluster's
// sums are added in block order by every thread.
// (Merging each thread's (max, sum) pair instead, as v4 merges its threads, would take one cluster barrier a row,
// not two; but a thread's own sum then needs the -inf and NaN tests of v4's merge before the row's max is known,
// and with them ptxas spills at the 64 registers a 1024-thread block allows.)
// The launch is one wave of the clusters the GPU holds at once, each taking row after row (lab::launch_rows_in_
// clusters); every other shape goes to v5 (rows a block holds, longer rows, GPUs without clusters).

// The max over a row's threads, under the names lab::row_sum and lab::cluster_sum_wait combine values with (found
// by argument-dependent lookup).
struct RowMax {
  float value;
};
__device__ __forceinline__ RowMax add(RowMax a, RowMax b) { return {fmaxf(a.value, b.value)}; }
__device__ __forceinline__ RowMax warp_sum(RowMax v) { return {lab::warp_reduce_max(v.value)}; }

// A row across the cluster's threads: thread `rank` of `size`, the rows lab::ClusterSlots gives the cluster. Rank and
// size come from the cluster's own registers (the block's rank in it, its block count), which equal ClusterSlots'
// blockIdx.x % blocks and blocks for 1-D clusters; ptxas knows their range, and with ClusterSlots' arithmetic
// instead it spilled at the 64 registers of a 1024-thread block (CUDA 13.0; commit d41cefa says how much). Each
// row's two merges use the same one of the two slots of their type (parity), the next row's the other.
struct ClusterGroup {
  lab::ClusterSlots slots;
  int parity;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __device__ int rank() const {
    return static_cast<int>(cooperative_groups::this_cluster().block_rank() * blockDim.x + threadIdx.x);
  }
  __device__ int size() const {
    return static_cast<int>(cooperative_groups::this_cluster().num_blocks() * blockDim.x);
  }
#else  // no clusters before compute capability 9.0: the launcher never starts v6 there (lab::has_clusters)
  __device__ int rank() const { return slots.rank(); }
  __device__ int size() const { return slots.size(); }
#endif
  __device__ float reduce_max(float v) { return lab::cluster_row_sum<kMaxBlockThreads>(RowMax{v}, parity).value; }
  __device__ float reduce_sum(float v) {
    const float s = lab::cluster_row_sum<kMaxBlockThreads>(v, parity);
    parity ^= 1;
    return s;
  }
};

constexpr int64_t kClusterMaxPackets = kBlockMaxPackets * lab::kClusterMaxBlocks;

template <typename T>
__global__ void __launch_bounds__(kMaxBlockThreads) softmax_cluster_kernel(const T* __restrict__ x,
                                                                           T* __restrict__ y, int64_t rows,
                                                                           int cols, bool vec,
                                                                           int blocks_per_cluster) {
  ClusterGroup group{{blocks_per_cluster}, 0};
  for (int64_t row = group.slots.first(); row < rows; row += group.slots.step())  // the same rows for the cluster
    softmax_cached_row<kCachedPacks>(group, x + row * cols, y + row * cols, cols, vec);
  lab::cluster_done();
}

bool softmax_cluster_takes(lab::DType dtype, int64_t cols) {
  const int64_t packets = (cols + packet_size(dtype) - 1) / packet_size(dtype);
  return packets > kBlockMaxPackets && packets <= kClusterMaxPackets && lab::has_clusters();
}

// Rows v6 takes (softmax_cluster_takes): blocks of as few threads as hold the row at 8 packets a thread (a multiple
// of 32), in clusters of the fewest blocks (a power of two, 2 to 8) that hold it. Where no such cluster fits on the
// GPU at once, v4 (the step before v5 that needs no workspace).
template <typename T>
cudaError_t run_cluster(const SoftmaxCall<T>& c) {
  const int64_t packets = c.packets();
  const int blocks = lab::cluster_blocks(packets, kBlockMaxPackets);
  const int64_t per_block = (packets + blocks - 1) / blocks;
  const int threads = static_cast<int>(((per_block + kCachedPacks - 1) / kCachedPacks + 31) / 32 * 32);
  return lab::launch_rows_in_clusters(softmax_cluster_kernel<T>, c.rows, threads, blocks, c.stream,
                                      [&] { return run_online(c); }, c.x, c.y, c.rows, static_cast<int>(c.cols),
                                      c.vec);
}

cudaError_t launch_softmax_cluster(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                   cudaStream_t stream) {
  return dispatch_softmax(dtype, x, y, rows, cols, stream, [](const auto& c) { return run_cluster(c); });
}

// ---- v7 staged cluster: v6's rows, each block's part of every row staged by bulk copies. ---------------------
// v6 holds a row in registers across a cluster of up to 8 blocks of 1024 threads and reads the next row only after
// writing this one: at 32 x 256K, one row per cluster and wave, DRAM 16-29% busy (results/nvidia-h200/
// softmax-profile.md). v7 cuts each row into C contiguous parts (C a power of two up to 16, a non-portable cluster
// size on Hopper), one per block of 512 threads, each part at most 4096 packets (64 KB) so that a block's ring holds
// two or three of its parts: the next rows' parts are on their way while this one is reduced and written. Each
// thread takes its own (max, sum of exp(x - max)) pair, the block merges its threads' pairs as v4 does (one block
// reduction), and the block's pair goes to every block of the cluster by st.async (lab::PushedClusterSums): one
// exchange a row, with no cluster barrier. (v6 gives this up for registers; a 512-thread block has 128 a thread.)
// Rows: v6's longest (kStagedFewestBlocks), whose packets split into C whole parts, 16-byte aligned. Against v5 and
// v6 in one run on the H200 (results/nvidia-h200/softmax-staged-cluster/README.md): at 32 x 256K ahead of both in
// fp32, in fp16/bf16 ahead of v6 and behind v5; 4 x 4M is past v6's rows (v5's). The pair in place of a max
// exchange and then a sum exchange was ahead in 7 of 9 long-row cells, by up to a tenth
// (results/nvidia-h200/softmax-staged-pair/README.md).
constexpr int kStagedThreads = 512;
constexpr int64_t kStagedPartPackets = int64_t{kStagedThreads} * kCachedPacks;
constexpr int kStagedMaxBlocks = 16;
// v7 takes rows of more than four such parts (clusters of 8 or 16: fp32 N > 64K, fp16/bf16 N > 128K) and hands the
// shorter ones to v6: in clusters of four, at 16-bit 64 x 128K, it ran at little more than half v6's speed
// (results/nvidia-h200/softmax-staged-cluster/README.md, run 3; not profiled yet).
constexpr int kStagedFewestBlocks = 8;
constexpr int64_t kSoftmaxRingBytes = 200 * 1024;  // of a block's shared memory (one block an SM)

// A thread's MaxSum over its packets, and MaxSum's merge under the names lab::block_sum_alternating and
// lab::PushedClusterSums combine values with.
template <typename T, int kPacks>
__device__ __forceinline__ MaxSum max_sum(CachedRow<T, kPacks>& r) {
  const float m = r.max();
  MaxSum pair{m, 0.0f};
  if (m != -INFINITY) pair.s = r.exp_sum(m);
  else if (r.any_nan()) pair.s = NAN;
  return pair;
}
__device__ __forceinline__ MaxSum add(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  return {m, rescaled(a, m) + rescaled(b, m)};  // the same bits either way round
}
__device__ __forceinline__ MaxSum shfl_xor(MaxSum v, int offset) {
  return {lab::shfl_xor(v.m, offset), lab::shfl_xor(v.s, offset)};
}
__device__ __forceinline__ MaxSum warp_sum(MaxSum v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = add(v, shfl_xor(v, offset));
  return v;
}
__device__ __forceinline__ void store_async_to_block(MaxSum* local, MaxSum v, uint64_t* bar, unsigned rank) {
  lab::store_async_to_block(&local->m, v.m, bar, rank);
  lab::store_async_to_block(&local->s, v.s, bar, rank);
}

// This thread's packets of a row's part staged in `slot` (packets rank, rank + threads, ...), -inf past the part's
// `part_packets` (v7, v9).
template <typename T, int kPacks>
__device__ __forceinline__ CachedRow<T, kPacks> slot_packets(const uint4* slot, int part_packets, int rank,
                                                             int threads) {
  CachedRow<T, kPacks> r;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int packet = rank + i * threads;
    r.p[i] = packet < part_packets ? slot[packet] : lab::splat_words<T>(-INFINITY);
  }
  return r;
}

template <typename T>
__global__ void __launch_bounds__(kStagedThreads) softmax_staged_cluster_kernel(const T* __restrict__ x,
                                                                                T* __restrict__ y, int64_t rows,
                                                                                int cols, int stages,
                                                                                int blocks_per_cluster) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(lab::kStagedSlotAlign) unsigned char ring_memory[];
  __shared__ MaxSum warp_pairs[2][kStagedThreads / 32];  // alternate rows use alternate sets
  constexpr int kVec = lab::Packet<T>::kSize;
  const int rank = threadIdx.x;
  [[maybe_unused]] const auto [part, block_rank, offset, cluster, clusters] =
      lab::cluster_part(cols, blocks_per_cluster);  // this block's columns: offset, offset + part
  const int part_packets = part / kVec;
  lab::PushedClusterSums<MaxSum, kStagedMaxBlocks> pairs;
  pairs.start(blocks_per_cluster);
  lab::StagedRows<T, 1> ring(ring_memory, stages, part);
  ring.start(x + offset, nullptr, rows, cols, cluster, clusters);
  auto turn = ring.turn_of(0);
  int set = 0;
  for (int64_t row = cluster; row < rows; row += clusters, ring.next(turn), set ^= 1) {
    auto r = slot_packets<T, kCachedPacks>(ring.landed(turn), part_packets, rank, kStagedThreads);
    const MaxSum block = lab::block_sum_alternating<kStagedThreads>(max_sum(r), warp_pairs[set]);
    ring.release(turn, row, x + offset, nullptr, rows, cols, clusters);  // every thread holds its packets
    pairs.push(block);
    const MaxSum whole = pairs.wait();
    r.store(y + row * cols + offset, rank, kStagedThreads, part, true, whole.m, 1.0f / whole.s);
  }
#else
  __trap();  // clusters need compute capability 9.0; the launcher never sends such a GPU here
#endif
}

// v7's rows (see above); every other row, and where no such cluster fits, to v6.
template <typename T>
cudaError_t run_staged_cluster(const SoftmaxCall<T>& c) {
  const int64_t packets = c.packets();
  const auto fallback = [&] { return run_cluster(c); };
  if (!c.vec || !lab::has_clusters() || packets <= kStagedPartPackets * (kStagedFewestBlocks / 2) ||
      packets > kStagedPartPackets * kStagedMaxBlocks)
    return fallback();
  int blocks = kStagedFewestBlocks;
  while (int64_t{blocks} * kStagedPartPackets < packets) blocks *= 2;
  if (packets % blocks != 0) return fallback();
  const int64_t part = c.cols / blocks;
  const auto kernel = softmax_staged_cluster_kernel<T>;
  const int64_t slot = lab::StagedRows<T, 1>::slot_size(part);
  const int stages = static_cast<int>(kSoftmaxRingBytes / slot < 3 ? kSoftmaxRingBytes / slot : 3);
  if (stages < 2) return fallback();
  const int64_t smem = lab::StagedRows<T, 1>::bytes(stages, part);
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem));
      err != cudaSuccess)
    return err;
  if (blocks > lab::kClusterMaxBlocks) {
    if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
        err != cudaSuccess)
      return err;
  }
  const lab::ClusterRings rings{
      stages, smem, lab::resident_clusters(kernel, kStagedThreads, blocks, c.rows, static_cast<size_t>(smem))};
  if (rings.clusters == 0) return fallback();
  return lab::launch_cluster_rings(kernel, rings, blocks, kStagedThreads, c.stream, c.x, c.y, c.rows,
                                   static_cast<int>(c.cols));
}

cudaError_t launch_softmax_staged_cluster(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                          cudaStream_t stream) {
  return dispatch_softmax(dtype, x, y, rows, cols, stream, [](const auto& c) { return run_staged_cluster(c); });
}

// One wave of `blocks` blocks of `kernel`, each with `smem` bytes of dynamic shared memory, launched cooperatively:
// the driver runs every block at once or refuses the launch (v8's grid-wide barrier, v9's waits between blocks).
template <typename Kernel, typename... Args>
cudaError_t launch_cooperative(Kernel kernel, int64_t blocks, int threads, int64_t smem, cudaStream_t stream,
                               Args... args) {
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem));
      err != cudaSuccess)
    return err;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned int>(blocks));
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = static_cast<size_t>(smem);
  config.stream = stream;
  cudaLaunchAttribute cooperative;
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, args...);
}

// ---- v8 resident: few long rows held on chip across every SM at once. ------------------------------------------
// v7 ties a row to a cluster, and the GPU places clusters unevenly: on an H200 15 clusters of 8 blocks fit at once
// (120 SMs) and 7 of 16, so 32 rows take three or five rounds, the last with most SMs idle (results/nvidia-h200/
// softmax-profile.md, the last two sections: SMs active 65-68% of v7's cycles). v8 asks for no placement: a row
// gets parts = SMs / M blocks of 512 threads, every block of the grid resident at once (one an SM, which a
// cooperative launch guarantees or refuses), each block a contiguous part of the row that stays on chip from its
// read to its write. The part goes into shared memory by bulk copies, up to what a block may have (227 KB on
// Hopper), and the rest into registers, 16 packets a thread at most (128 KB a block): 32 rows of 256K fp32 (32 MB)
// are 248 KB an SM. Each thread takes the max of its elements, then its sum of exp(x - max); the block merges its
// threads' pairs as v7 does and stores one pair; one grid-wide barrier; then every block of a row reads the row's
// pairs and merges them in the same order (the same bits in every block) and writes its part. One read, one write,
// one launch, and every SM busy until its part is written; the cost is the barrier, and no loads in flight while
// the pairs are merged.
// What it bought (results/nvidia-h200/softmax.md and softmax-resident/, at d94c4f4): ahead of v5 and v7 in fp32 at
// 32 x 256K, behind them in 16-bit. Its phases run one after another on each SM (read, the pass for the pair, the
// barrier, the output pass, the writes) with nothing resident beside its block to overlap them, where a copy
// overlaps its reads and writes: `ncu`'s DRAM throughput over the kernel is in softmax-profile.md, "v8 at M = 32".
// Rows: those v3's block cannot hold (its rows go to v3 as before), at most SMs / 2 of them, 16-byte aligned, with
// parts that fit; every other shape goes to v7.
constexpr int kResidentThreads = 512;
constexpr int kResidentHeldPacks = 16;  // packets a thread holds in registers past its block's shared memory
constexpr int64_t kResidentHeldPackets = int64_t{kResidentThreads} * kResidentHeldPacks;
constexpr int kResidentCopyPackets = 4096;  // 64 KB a bulk copy

template <typename T>
__global__ void __launch_bounds__(kResidentThreads, 1)
    softmax_resident_kernel(const T* __restrict__ x, T* __restrict__ y, float2* pairs, int64_t cols, int parts,
                            int staged_cap) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(lab::kStagedSlotAlign) unsigned char part_memory[];
  __shared__ MaxSum warp_pairs[2][kResidentThreads / 32];
  constexpr int kVec = lab::Packet<T>::kSize;
  // This block's part of its row: packets first, first + 1, ..., the first `staged` of them in shared memory and
  // the rest (`held`) in registers. A row's packets split into parts that differ by at most one.
  const int64_t row = blockIdx.x / parts, row_packets = cols / kVec;
  const int j = static_cast<int>(blockIdx.x % parts);
  const int64_t base = row_packets / parts, extra = row_packets % parts;
  const int part_packets = static_cast<int>(base + (j < extra ? 1 : 0));
  const int64_t first = j * base + (j < extra ? j : extra);
  const int staged = part_packets < staged_cap ? part_packets : staged_cap;
  const int held_cols = (part_packets - staged) * kVec;
  const T* xp = x + row * cols + first * kVec;
  T* yp = y + row * cols + first * kVec;
  uint64_t* landed = reinterpret_cast<uint64_t*>(part_memory);
  const uint4* slot = reinterpret_cast<const uint4*>(part_memory + lab::kStagedSlotAlign);
  if (threadIdx.x == 0) {
    lab::mbarrier_init(landed, 1);
    lab::fence_mbarrier_init();
    lab::mbarrier_expect_bytes(landed, static_cast<unsigned>(staged) * 16u);
    for (int q = 0; q < staged; q += kResidentCopyPackets) {  // copies of the size v7's are, all on one barrier
      const int packets = staged - q < kResidentCopyPackets ? staged - q : kResidentCopyPackets;
      lab::bulk_load(part_memory + lab::kStagedSlotAlign + int64_t{q} * 16, xp + int64_t{q} * kVec,
                     static_cast<unsigned>(packets) * 16u, landed);
    }
  }
  CachedRow<T, kResidentHeldPacks> held;  // -inf past the part's end, as everywhere
  held.load(xp + int64_t{staged} * kVec, threadIdx.x, kResidentThreads, held_cols, true);
  __syncthreads();  // the barrier is initialised before anyone waits on it
  lab::mbarrier_wait(landed, 0);

  float m = held.max();
  for (int q = threadIdx.x; q < staged; q += kResidentThreads) {
    CachedRow<T, 1> packet{{slot[q]}};
    m = fmaxf(m, packet.max());
  }
  float s = 0.0f;
  if (m != -INFINITY) {
    s = held.exp_sum(m);
    for (int q = threadIdx.x; q < staged; q += kResidentThreads) {
      CachedRow<T, 1> packet{{slot[q]}};
      s += packet.exp_sum(m);
    }
  } else {  // nothing but -inf and NaN here: the sum is NaN if a NaN is (fmaxf left it out of m), else 0
    bool nan = held.any_nan();
    for (int q = threadIdx.x; q < staged; q += kResidentThreads) {
      CachedRow<T, 1> packet{{slot[q]}};
      nan |= packet.any_nan();
    }
    s = nan ? NAN : 0.0f;
  }
  const MaxSum part_pair = lab::block_sum_alternating<kResidentThreads>(MaxSum{m, s}, warp_pairs[0]);
  if (threadIdx.x == 0) pairs[blockIdx.x] = make_float2(part_pair.m, part_pair.s);  // blockIdx.x = row · parts + j
  cooperative_groups::this_grid().sync();  // orders every block's pair before every read of it

  // The row's pairs, one a thread (parts <= kResidentThreads), merged in the same order by every block of the row.
  // Read past L1 (__ldcg): they were written during this kernel.
  MaxSum row_pair{-INFINITY, 0.0f};  // adds nothing: add() leaves the other pair as it is
  if (threadIdx.x < parts) {
    const float2 p = __ldcg(pairs + row * parts + threadIdx.x);
    row_pair = {p.x, p.y};
  }
  const MaxSum whole = lab::block_sum_alternating<kResidentThreads>(row_pair, warp_pairs[1]);
  const float inv_sum = 1.0f / whole.s;
  for (int q = threadIdx.x; q < staged; q += kResidentThreads) {
    CachedRow<T, 1> packet{{slot[q]}};
    packet.store(yp, q, 0, staged * kVec, true, whole.m, inv_sum);
  }
  held.store(yp + int64_t{staged} * kVec, threadIdx.x, kResidentThreads, held_cols, true, whole.m, inv_sum);
#else
  __trap();  // bulk copies need compute capability 9.0; the launcher never sends such a GPU here
#endif
}

// What v8 needs of the GPU for a dtype: the packets a block's shared memory stages, 0 where v8 cannot run.
template <typename T>
int resident_staged_cap() {
  if (!lab::has_clusters()) return 0;  // compute capability 9.0 on: the bulk copy
  cudaFuncAttributes attributes;
  if (cudaFuncGetAttributes(&attributes, softmax_resident_kernel<T>) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  const int64_t bytes = lab::device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin) -
                        static_cast<int64_t>(attributes.sharedSizeBytes) - lab::kStagedSlotAlign;
  return bytes > 0 ? static_cast<int>(bytes / 16) : 0;
}

template <typename T>
int64_t resident_parts(const SoftmaxCall<T>& c) {
  const int64_t packets = c.packets(), sms = lab::sm_count();
  if (!c.vec || packets <= kBlockMaxPackets || c.rows < 1 || c.rows > sms / 2) return 0;
  const int64_t parts = sms / c.rows;
  const int cap = resident_staged_cap<T>();
  if (cap == 0 || parts > kResidentThreads || (packets + parts - 1) / parts > cap + kResidentHeldPackets) return 0;
  return parts;
}

int64_t softmax_resident_parts(lab::DType dtype, const void* x, const void* y, int64_t rows, int64_t cols) {
  int64_t parts = 0;
  dispatch_softmax(dtype, x, const_cast<void*>(y), rows, cols, nullptr, [&](const auto& c) {
    parts = resident_parts(c);
    return cudaSuccess;
  });
  return parts;
}

// One wave: rows · parts blocks (at most one an SM), as a cooperative launch, the shared memory sized for the
// largest part. The caller has checked the shape (softmax_resident_parts).
template <typename T>
cudaError_t run_resident(const SoftmaxCall<T>& c, int64_t parts, float2* pairs) {
  const auto kernel = softmax_resident_kernel<T>;
  const int cap = resident_staged_cap<T>();
  const int64_t largest = (c.packets() + parts - 1) / parts;
  const int64_t smem = lab::kStagedSlotAlign + 16 * (largest < cap ? largest : cap);
  return launch_cooperative(kernel, c.rows * parts, kResidentThreads, smem, c.stream, c.x, c.y, pairs, c.cols,
                            static_cast<int>(parts), cap);
}

cudaError_t launch_softmax_resident(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                    int64_t parts, void* workspace, cudaStream_t stream) {
  float2* pairs = static_cast<float2*>(workspace);
  return dispatch_softmax(dtype, x, y, rows, cols, stream,
                          [&](const auto& c) { return run_resident(c, parts, pairs); });
}

// ---- v9 grid_ring: v7's ring of row parts over groups of blocks that fill every SM, pairs through L2. ------------
// v7 runs a row's parts in one cluster and the GPU places clusters unevenly; v8 places every block at once but runs
// each SM's work in phases (read, reduce, barrier, write) with nothing to overlap them (results/nvidia-h200/
// softmax-profile.md, "v8 at M = 32"). v9 keeps v8's placement and v7's overlap: the grid is `groups` groups of
// `parts` blocks, one block an SM (a cooperative launch: every block resident at once, or the launch is refused),
// and group g takes rows g, g + groups, ..., each of its blocks the same part of every such row, staged by bulk
// copies in a ring of shared memory (v7's lab::StagedRows) that holds the next rows while this one is reduced. A
// block publishes its part's (max, sum) pair of a row as two 64-bit words in global memory, each the fp32 value
// with a flag above it (one store, so a reader sees the value and its flag together; the norms' Triton v10 passes
// its sums the same way), and writes the row's output kGridRingLag rows later: by then its partners have long
// published that row's pairs, so it seldom waits, and its loads of the rows ahead stay in flight while it writes.
// Every block of a row reads the row's pairs (L2, never L1) and merges them in the same order, the same bits in
// each. The words must be zero when a call starts: the last block of a row to read them (a counter a row) zeroes
// them for the next call, so the buffer the binding keeps a device and stream stays zeroed between calls with no
// memset launch; under CUDA-graph capture a zeroed buffer of the graph's own is made instead.
// Rows: up to 4 · SMs of those v3's block cannot hold, in parts of up to kGridRingPartPackets packets, aligned,
// with a ring of at least kGridRingFewestStages slots; the parts a row are those that give the fewest rows a group
// times elements a part (32 rows on 132 SMs: 4 groups of 33). Other shapes go to v8. Checked on an H100, not yet
// timed (results/nvidia-h100-80gb-hbm3/softmax-grid-ring/).
constexpr int kGridRingThreads = 512;
constexpr int kGridRingPacks = 4;  // packets a thread holds of a part
constexpr int64_t kGridRingPartPackets = int64_t{kGridRingThreads} * kGridRingPacks;
constexpr int kGridRingLag = 2;  // rows between a row's pair and its output
constexpr int kGridRingStages = 6;  // slots of the ring at most: the row written, the lag, the rows ahead
constexpr int kGridRingFewestStages = kGridRingLag + 2;
constexpr unsigned long long kPublished = 1ull << 32;  // a word's flag, above its fp32 value
// Rows v9 takes at most, per SM: few enough that its kept words stay small (at most 4 · SMs rows · SMs parts · 16
// bytes); more rows fill the GPU one block a row (v4).
constexpr int64_t kGridRingMostRowsPerSm = 4;

__device__ __forceinline__ void store_relaxed(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;\n" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long load_relaxed(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
  return v;
}

template <typename T>
__global__ void __launch_bounds__(kGridRingThreads, 1)
    softmax_grid_ring_kernel(const T* __restrict__ x, T* __restrict__ y, unsigned long long* words, int64_t rows,
                             int cols, int parts, int groups, int stages) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(lab::kStagedSlotAlign) unsigned char ring_memory[];
  __shared__ MaxSum warp_pairs[2][kGridRingThreads / 32];  // alternate reductions use alternate sets
  constexpr int kVec = lab::Packet<T>::kSize;
  // This block's part of its group's rows: packets first, first + 1, ...; a row's parts differ by at most one.
  const int group = static_cast<int>(blockIdx.x / parts), j = static_cast<int>(blockIdx.x % parts);
  const int row_packets = cols / kVec, base = row_packets / parts, extra = row_packets % parts;
  const int part_packets = base + (j < extra ? 1 : 0), first = j * base + (j < extra ? j : extra);
  const int part = part_packets * kVec;
  const T* xp = x + int64_t{first} * kVec;
  T* yp = y + int64_t{first} * kVec;
  unsigned* done = reinterpret_cast<unsigned*>(words + rows * parts * 2);  // a row's readers so far
  lab::StagedRows<T, 1> ring(ring_memory, stages, part);
  ring.start(xp, nullptr, rows, cols, group, groups);
  const int64_t turns = (rows - group + groups - 1) / groups;  // the group's rows (every group has one or more)
  auto pair_turn = ring.turn_of(0), out_turn = pair_turn;
  int set = 0;
  for (int64_t k = 0; k < turns + kGridRingLag; ++k) {
    if (k < turns) {  // row k: this part's pair, published
      const int64_t row = group + k * groups;
      auto r = slot_packets<T, kGridRingPacks>(ring.landed(pair_turn), part_packets, threadIdx.x, kGridRingThreads);
      const MaxSum mine = lab::block_sum_alternating<kGridRingThreads>(max_sum(r), warp_pairs[set]);
      set ^= 1;
      if (threadIdx.x == 0) {
        unsigned long long* w = words + (row * parts + j) * 2;
        store_relaxed(w, kPublished | __float_as_uint(mine.m));
        store_relaxed(w + 1, kPublished | __float_as_uint(mine.s));
      }
      ring.next(pair_turn);
    }
    if (k >= kGridRingLag) {  // row k - lag: its pairs merged, this part written, the slot refilled
      const int64_t row = group + (k - kGridRingLag) * groups;
      // landed turns ago: no wait
      auto r = slot_packets<T, kGridRingPacks>(ring.landed(out_turn), part_packets, threadIdx.x, kGridRingThreads);
      MaxSum theirs{-INFINITY, 0.0f};  // adds nothing
      if (threadIdx.x < parts) {
        const unsigned long long* w = words + (row * parts + threadIdx.x) * 2;
        unsigned long long m = load_relaxed(w), s = load_relaxed(w + 1);
        while (!(m & s & kPublished)) {
          __nanosleep(32);
          m = load_relaxed(w), s = load_relaxed(w + 1);
        }
        theirs = {__uint_as_float(static_cast<unsigned>(m)), __uint_as_float(static_cast<unsigned>(s))};
      }
      const MaxSum whole = lab::block_sum_alternating<kGridRingThreads>(theirs, warp_pairs[set]);
      set ^= 1;
      // Past the reduction's barrier every thread has read its packets of the slot and its word pair of the row.
      ring.release(out_turn, row, xp, nullptr, rows, cols, groups);
      if (threadIdx.x == 0 && atomicAdd(done + row, 1u) == static_cast<unsigned>(parts - 1)) {
        for (int t = 0; t < 2 * parts; ++t) store_relaxed(words + row * parts * 2 + t, 0);  // the row's last reader
        done[row] = 0;
      }
      r.store(yp + row * cols, threadIdx.x, kGridRingThreads, part, true, whole.m, 1.0f / whole.s);
      ring.next(out_turn);
    }
  }
#else
  __trap();  // bulk copies need compute capability 9.0; the launcher never sends such a GPU here
#endif
}

// v9's grid for a call: `parts` blocks a row (0: v9 does not take the rows), `groups` groups, a ring of `stages`
// slots in `smem` bytes of dynamic shared memory a block.
struct GridRingPlan {
  int64_t parts = 0, groups = 0;
  int stages = 0;
  int64_t smem = 0;
};

template <typename T>
GridRingPlan grid_ring_plan(const SoftmaxCall<T>& c) {
  GridRingPlan best;
  const int64_t packets = c.packets(), sms = lab::sm_count();
  if (!c.vec || !lab::has_clusters() || packets <= kBlockMaxPackets || c.rows < 1 ||
      c.rows > kGridRingMostRowsPerSm * sms || c.cols > INT_MAX)
    return best;
  int64_t best_turns = 0;
  for (int64_t parts = 2; parts <= sms; ++parts) {
    const int64_t largest = (packets + parts - 1) / parts;  // packets of the largest part
    if (largest > kGridRingPartPackets) continue;
    const int64_t slot = lab::StagedRows<T, 1>::slot_size(largest * lab::Packet<T>::kSize);
    const int stages = static_cast<int>(std::min<int64_t>(kGridRingStages, kSoftmaxRingBytes / slot));
    if (stages < kGridRingFewestStages) continue;
    const int64_t groups = std::min(sms / parts, c.rows), turns = (c.rows + groups - 1) / groups;
    // A block's elements: turns · packets / parts; fewer parts where it ties (fewer pairs to merge).
    if (best.parts == 0 || turns * best.parts < best_turns * parts)
      best = {parts, groups, stages, lab::StagedRows<T, 1>::bytes(stages, largest * lab::Packet<T>::kSize)},
      best_turns = turns;
  }
  return best;
}

// The 64-bit words v9 needs for this x and y: two a part of a row, then a 32-bit counter a row (0: the rows go to
// v8, which takes them or hands them on).
int64_t softmax_grid_ring_words(lab::DType dtype, const void* x, const void* y, int64_t rows, int64_t cols) {
  int64_t words = 0;
  dispatch_softmax(dtype, x, const_cast<void*>(y), rows, cols, nullptr, [&](const auto& c) {
    const GridRingPlan plan = grid_ring_plan(c);
    if (plan.parts > 0) words = rows * plan.parts * 2 + (rows + 1) / 2;
    return cudaSuccess;
  });
  return words;
}

template <typename T>
cudaError_t run_grid_ring(const SoftmaxCall<T>& c, unsigned long long* words) {
  const GridRingPlan plan = grid_ring_plan(c);
  return launch_cooperative(softmax_grid_ring_kernel<T>, plan.groups * plan.parts, kGridRingThreads, plan.smem,
                            c.stream, c.x, c.y, words, c.rows, static_cast<int>(c.cols), static_cast<int>(plan.parts),
                            static_cast<int>(plan.groups), plan.stages);
}

cudaError_t launch_softmax_grid_ring(lab::DType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                                     void* words, cudaStream_t stream) {
  return dispatch_softmax(dtype, x, y, rows, cols, stream, [&](const auto& c) {
    return run_grid_ring(c, static_cast<unsigned long long*>(words));
  });
}

#else  // host half: the torch binding

#include <map>
#include <mutex>
#include <utility>

#include <ATen/ops/zeros.h>  // v9's words

#include "lab_torch.h"

// launch(dtype, x, y) starts the kernels for a checked, non-empty x on the current device and stream.
template <typename Launch>
at::Tensor softmax_rows(const at::Tensor& x, const char* impl, Launch launch) {
  lab::check_cuda_input(x, "softmax", "x");
  LAB_CHECK(x.dim() == 2, "softmax: x has ", x.dim(), " dimensions (sizes ", x.sizes(),
            "); this kernel takes a 2-D (M, N) tensor and normalizes each row");
  const lab::DType dtype = lab::float_dtype(x, "softmax", "x");
  at::Tensor y = at::empty_like(x);
  if (x.numel() == 0) return y;  // M = 0 or N = 0: nothing to do, and a zero-block grid is a launch error
  c10::cuda::CUDAGuard guard(x.device());
  lab::check_launch(launch(dtype, x, y), "softmax", impl);
  return y;
}

// Rows v1-v4: the launcher takes the tensors as they are.
using SoftmaxLaunch = cudaError_t (*)(lab::DType, const void*, void*, int64_t, int64_t, cudaStream_t);

at::Tensor softmax_step(const at::Tensor& x, const char* impl, SoftmaxLaunch launch) {
  return softmax_rows(x, impl, [launch](lab::DType dtype, const at::Tensor& x, at::Tensor& y) {
    return launch(dtype, x.const_data_ptr(), y.mutable_data_ptr(), x.size(0), x.size(1), lab::current_stream());
  });
}

at::Tensor softmax_naive(const at::Tensor& x) { return softmax_step(x, "naive", launch_softmax_naive); }
at::Tensor softmax_warp(const at::Tensor& x) { return softmax_step(x, "warp", launch_softmax_warp); }
at::Tensor softmax_block(const at::Tensor& x) { return softmax_step(x, "block", launch_softmax_block); }
at::Tensor softmax_online(const at::Tensor& x) { return softmax_step(x, "online", launch_softmax_online); }

// v5 also allocates its split kernels' (max, sum) per row slice, where it takes them.
cudaError_t split_rows(lab::DType dtype, const at::Tensor& x, at::Tensor& y) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const int64_t splits = softmax_split_count(dtype, rows, cols);
  at::Tensor stats;
  if (splits > 1) stats = at::empty({rows * splits * 2}, x.options().dtype(at::kFloat));
  return launch_softmax_split(dtype, x.const_data_ptr(), y.mutable_data_ptr(), rows, cols,
                              stats.defined() ? stats.mutable_data_ptr() : nullptr, lab::current_stream());
}

at::Tensor softmax_split(const at::Tensor& x) { return softmax_rows(x, "split", split_rows); }

// v6 takes the rows it holds in a cluster and hands the others to v5, with v5's workspace.
at::Tensor softmax_cluster(const at::Tensor& x) {
  return softmax_rows(x, "cluster", [](lab::DType dtype, const at::Tensor& x, at::Tensor& y) {
    if (!softmax_cluster_takes(dtype, x.size(1))) return split_rows(dtype, x, y);
    return launch_softmax_cluster(dtype, x.const_data_ptr(), y.mutable_data_ptr(), x.size(0), x.size(1),
                                  lab::current_stream());
  });
}

// v7 takes v6's rows where it can; whatever v6 would hand to v5 goes there with v5's workspace.
cudaError_t staged_cluster_rows(lab::DType dtype, const at::Tensor& x, at::Tensor& y) {
  if (!softmax_cluster_takes(dtype, x.size(1))) return split_rows(dtype, x, y);
  return launch_softmax_staged_cluster(dtype, x.const_data_ptr(), y.mutable_data_ptr(), x.size(0), x.size(1),
                                       lab::current_stream());
}

at::Tensor softmax_staged_cluster(const at::Tensor& x) {
  return softmax_rows(x, "staged_cluster", staged_cluster_rows);
}

// v8 allocates its blocks' (max, sum) pairs where it takes the rows, and hands the others to v7.
cudaError_t resident_rows(lab::DType dtype, const at::Tensor& x, at::Tensor& y) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const int64_t parts = softmax_resident_parts(dtype, x.const_data_ptr(), y.const_data_ptr(), rows, cols);
  if (parts == 0) return staged_cluster_rows(dtype, x, y);
  at::Tensor pairs = at::empty({rows * parts * 2}, x.options().dtype(at::kFloat));
  return launch_softmax_resident(dtype, x.const_data_ptr(), y.mutable_data_ptr(), rows, cols, parts,
                                 pairs.mutable_data_ptr(), lab::current_stream());
}

at::Tensor softmax_resident(const at::Tensor& x) { return softmax_rows(x, "resident", resident_rows); }

// v9's words for x: zero when a call starts and left zero by it, so kept between calls, one buffer a device and
// stream (two streams' calls at once would otherwise share one). Under CUDA-graph capture a zeroed buffer of the
// graph's own instead: a kept one grown there would be zeroed only by the graph's replays, never for a later call.
// The kept buffers live as long as the process (never freed at exit, after the allocator may be gone).
at::Tensor grid_ring_words(const at::Tensor& x, int64_t count) {
  const cudaStream_t stream = lab::current_stream();
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  LAB_CHECK(cudaStreamIsCapturing(stream, &capture) == cudaSuccess, "softmax: cudaStreamIsCapturing failed");
  const at::TensorOptions options = x.options().dtype(at::kLong);
  if (capture != cudaStreamCaptureStatusNone) return at::zeros({count}, options);
  static std::mutex lock;
  static auto* kept = new std::map<std::pair<int, cudaStream_t>, at::Tensor>();
  std::lock_guard<std::mutex> guard(lock);
  at::Tensor& words = (*kept)[{x.get_device(), stream}];
  if (!words.defined() || words.numel() < count) words = at::zeros({count}, options);
  return words;
}

// v9 takes the rows it can with those words, and hands the others to v8.
at::Tensor softmax_grid_ring(const at::Tensor& x) {
  return softmax_rows(x, "grid_ring", [](lab::DType dtype, const at::Tensor& x, at::Tensor& y) {
    const int64_t rows = x.size(0), cols = x.size(1);
    const int64_t count = softmax_grid_ring_words(dtype, x.const_data_ptr(), y.const_data_ptr(), rows, cols);
    if (count == 0) return resident_rows(dtype, x, y);
    at::Tensor words = grid_ring_words(x, count);
    return launch_softmax_grid_ring(dtype, x.const_data_ptr(), y.mutable_data_ptr(), rows, cols,
                                    words.mutable_data_ptr(), lab::current_stream());
  });
}

TORCH_LIBRARY(lab_softmax, m) {
  m.def("naive(Tensor x) -> Tensor");
  m.def("warp(Tensor x) -> Tensor");
  m.def("block(Tensor x) -> Tensor");
  m.def("online(Tensor x) -> Tensor");
  m.def("split(Tensor x) -> Tensor");
  m.def("cluster(Tensor x) -> Tensor");
  m.def("staged_cluster(Tensor x) -> Tensor");
  m.def("resident(Tensor x) -> Tensor");
  m.def("grid_ring(Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_softmax, CUDA, m) {
  m.impl("naive", &softmax_naive);
  m.impl("warp", &softmax_warp);
  m.impl("block", &softmax_block);
  m.impl("online", &softmax_online);
  m.impl("split", &softmax_split);
  m.impl("cluster", &softmax_cluster);
  m.impl("staged_cluster", &softmax_staged_cluster);
  m.impl("resident", &softmax_resident);
  m.impl("grid_ring", &softmax_grid_ring);
}

#endif
