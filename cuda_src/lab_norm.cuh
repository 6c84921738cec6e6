// What the norms' .cu files share (cuda_src/layernorm.cu, cuda_src/rmsnorm.cu). Device half only.
//
// Both normalize each row of a row-major (M, N) tensor with fp32 statistics of the row, and both backwards sum a
// gradient over all M rows (dweight, and for LayerNorm dbias). What differs is the arithmetic per element, which
// stays in each .cu; what is the same is here: how a row is spread over threads and held in registers, and the
// two-stage sum over rows (partial rows in a workspace, then a sum per column); the sums over a row's threads, up to
// a thread-block cluster's, are lab_cluster.cuh's (shared with softmax.cu).
#pragma once
#include <climits>
#include <type_traits>

#include "lab_cluster.cuh"  // the sums over a row's threads, warp to cluster, and the cluster launch
#include "lab_device.cuh"
#include "lab_hopper.cuh"   // mbarriers and the bulk copy (v8)
#include "lab_staged.cuh"   // v8's ring, v10's pushed sums

namespace lab {

// ---- Launch shapes. ------------------------------------------------------------------------------------------

// Blocks for a grid-stride loop over rows: one block per row up to the grid's limit, so that M >= 2^31 rows still
// works (each block then takes several); at any realistic M every block takes one row.
inline unsigned int row_grid(int64_t rows) { return static_cast<unsigned int>(rows < INT_MAX ? rows : INT_MAX); }

// Calls body(std::integral_constant<int, K>{}) with K the smallest power of two >= needed, from kFirst up to kLast
// (the caller makes sure kLast suffices): one kernel instantiation per K, since a register array needs a
// compile-time size.
template <int kFirst, int kLast, typename Body>
auto with_pow2(int64_t needed, Body&& body) {
  if constexpr (kFirst < kLast) {
    if (needed > kFirst) return with_pow2<kFirst * 2, kLast>(needed, body);
  }
  return body(std::integral_constant<int, kFirst>{});
}

inline int64_t pow2_at_least(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// ---- The sum over rows: partial rows, then a sum per column. --------------------------------------------------
// A backward adds each row's dy·x̂ (and dy) into every column's dweight (and dbias). Every step after v1 does it in
// two stages: each block sums the rows it took into one partial row per gradient, stored in a workspace laid out
// [gradient][part][column] (part = the block's index, parts = its grid), and sum_partials adds the parts of each
// column and writes the gradient in the parameters' dtype. v1 adds straight into one fp32 row with atomics: for it
// the workspace has one part. No atomics in the two-stage form, and a fixed order of addition: the same inputs give
// the same bits on every call.
template <typename T, int kGrads>
struct GradOutputs {
  T* grad[kGrads];  // dweight (, dbias): N each
};

// A 32-column tile per block, its parts split over 8 rows of threads (each sums every 8th part, in order), the 8
// sums then added by the first row: 32 consecutive floats per load, 8 loads in flight per column.
constexpr int kSumCols = 32;
constexpr int kSumSlices = 8;

template <typename T, int kGrads>
__global__ void __launch_bounds__(kSumCols * kSumSlices) sum_partials_kernel(const float* __restrict__ partials,
                                                                            int64_t parts, int64_t cols,
                                                                            GradOutputs<T, kGrads> out) {
  __shared__ float slice_sums[kSumSlices][kSumCols];
  const int g = blockIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kSumCols + threadIdx.x;
  const float* column = partials + g * parts * cols + col;
  float s = 0.0f;
  if (col < cols)
    for (int64_t p = threadIdx.y; p < parts; p += kSumSlices) s += column[p * cols];
  slice_sums[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y != 0 || col >= cols) return;
  for (int i = 1; i < kSumSlices; ++i) s += slice_sums[i][threadIdx.x];
  T* grad = out.grad[0];
#pragma unroll
  for (int i = 1; i < kGrads; ++i)  // a select, not an indexed load: a kernel parameter indexed at run time would
    if (g == i) grad = out.grad[i];  // be copied to local memory first
  grad[col] = from_float<T>(s);
}

// Few partial rows (v1's one; the clusters' of v5 and v10, tens of them): a thread a column, adding its parts in
// order with eight loads in flight, and no barrier. With the tile above, each thread of a block of 256 adds a few
// parts and the block then meets in shared memory for a handful of loads: under ncu (caches flushed before it) v10's
// second kernel at bf16 32K-64K waited on its loads and its barrier at under half of DRAM
// (results/nvidia-h100-80gb-hbm3/norm-long-rows-ncu/). In timed calls, where the partial rows come from L2, this
// kernel bought little (results/nvidia-h100-80gb-hbm3/norm-backward-few-partials/).
constexpr int64_t kSumFewParts = 64;
constexpr int kSumColumnThreads = 256;

template <typename T, int kGrads>
__global__ void __launch_bounds__(kSumColumnThreads) sum_partial_columns_kernel(const float* __restrict__ partials,
                                                                               int64_t parts, int64_t cols,
                                                                               GradOutputs<T, kGrads> out) {
  const int g = blockIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kSumColumnThreads + threadIdx.x;
  if (col >= cols) return;
  const float* column = partials + g * parts * cols + col;
  float s = 0.0f;
#pragma unroll 8
  for (int64_t p = 0; p < parts; ++p) s += column[p * cols];
  T* grad = out.grad[0];
#pragma unroll
  for (int i = 1; i < kGrads; ++i)  // a select, as in sum_partials_kernel
    if (g == i) grad = out.grad[i];
  grad[col] = from_float<T>(s);
}

template <typename T, int kGrads>
cudaError_t sum_partials(const float* partials, int64_t parts, int64_t cols, GradOutputs<T, kGrads> out,
                         cudaStream_t stream) {
  if (parts <= kSumFewParts) {
    const dim3 grid(static_cast<unsigned int>((cols + kSumColumnThreads - 1) / kSumColumnThreads), kGrads);
    sum_partial_columns_kernel<T, kGrads><<<grid, kSumColumnThreads, 0, stream>>>(partials, parts, cols, out);
    return cudaGetLastError();
  }
  const dim3 grid(static_cast<unsigned int>((cols + kSumCols - 1) / kSumCols), kGrads);
  sum_partials_kernel<T, kGrads><<<grid, dim3(kSumCols, kSumSlices), 0, stream>>>(partials, parts, cols, out);
  return cudaGetLastError();
}

// ---- v2 (warp per row, one element per lane at a time). -------------------------------------------------------
// Elements lane, lane + 32, ... of a row (kItems of them) widened to fp32: each load instruction of the warp reads
// 32 consecutive elements. 0 past the row's end, which adds nothing to a sum of x, x² or dy.
template <int kItems, typename T>
__device__ __forceinline__ void load_lane_items(float (&v)[kItems], const T* __restrict__ row, int cols) {
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const int c = threadIdx.x + 32 * j;
    v[j] = c < cols ? to_float(row[c]) : 0.0f;
  }
}

// v2's backward keeps kGrads rows of N fp32 sums per warp in shared memory ([warp][gradient][column], dynamic
// shared memory of blockDim.y · kGrads · N floats): a warp's lanes add into its own rows only, lane l into columns
// l, l + 32, ..., so neither atomics nor barriers are needed until the end. Each lane zeroes the columns it will add
// into, before its first row.
template <int kGrads>
__device__ __forceinline__ float* own_warp_sums(float* warp_sums, int cols) {
  float* mine = warp_sums + static_cast<int64_t>(threadIdx.y) * kGrads * cols;
  for (int g = 0; g < kGrads; ++g)
    for (int c = threadIdx.x; c < cols; c += 32) mine[g * cols + c] = 0.0f;
  return mine;
}

// After the last row: the block adds its warps' sums per column (in warp order) and writes its partial rows.
// Every column of every part is written, whether or not the block had rows, so the workspace holds nothing from
// an earlier call.
template <int kGrads>
__device__ __forceinline__ void write_warp_sums(const float* warp_sums, float* __restrict__ partials, int cols) {
  __syncthreads();  // every warp's last additions are visible
  const int warps = blockDim.y, threads = 32 * warps;
  for (int c = threadIdx.y * 32 + threadIdx.x; c < cols; c += threads)
    for (int g = 0; g < kGrads; ++g) {
      float s = 0.0f;
      for (int w = 0; w < warps; ++w) s += warp_sums[(w * kGrads + g) * cols + c];
      partials[(static_cast<int64_t>(g) * gridDim.x + blockIdx.x) * cols + c] = s;
    }
}

// ---- v3/v4 (rows in 16-byte packets, held as loaded). ---------------------------------------------------------
// A row is cut into 16-byte packets (kVec = 4 fp32 or 8 fp16/bf16 elements). A row's S threads hold packets rank,
// rank + S, rank + 2·S, ...: at each step the S threads read S consecutive packets, one LDG.128 each.
// `vec`: every row starts 16-byte aligned (each base pointer is, and N is a multiple of kVec), so a packet is wholly
// inside the row or wholly past its end and moves as one 16-byte access. Without it (an odd N, a base offset by a
// few elements) a packet moves element by element with a bounds check: same values, more instructions. The branch
// is uniform. Element e of packet p is column p·kVec + e in both cases, so the layout never depends on `vec`.
// Column indices are 32-bit: these paths take rows of at most 8192 packets.
template <typename T>
__device__ __forceinline__ uint4 load_words(const T* __restrict__ row, int packet, int cols, bool vec) {
  constexpr int kVec = Packet<T>::kSize;
  if (vec) return packet * kVec < cols ? __ldg(reinterpret_cast<const uint4*>(row + packet * kVec)) : uint4{};
  float v[kVec];
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    const int e = packet * kVec + k;
    v[k] = e < cols ? to_float(row[e]) : 0.0f;
  }
  return pack_words<T>(v);  // exact: the values came from T
}

template <typename T>
__device__ __forceinline__ void store_words(T* __restrict__ row, int packet, int cols, bool vec,
                                            const float (&v)[Packet<T>::kSize]) {
  constexpr int kVec = Packet<T>::kSize;
  if (vec) {
    if (packet * kVec < cols) *reinterpret_cast<uint4*>(row + packet * kVec) = pack_words<T>(v);
    return;
  }
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    const int e = packet * kVec + k;
    if (e < cols) row[e] = from_float<T>(v[k]);
  }
}

// One thread's kPacks packets of a row, kept in registers as loaded: four 32-bit words per packet, so a register
// holds two fp16/bf16 elements instead of one widened value, and 4·kPacks registers hold 16·kPacks bytes of the
// row in every dtype. Elements are widened to fp32 where a pass reads them. Past the row's end: zeros.
template <typename T, int kPacks>
struct RowWords {
  static constexpr int kVec = Packet<T>::kSize;
  uint4 p[kPacks];

  __device__ __forceinline__ void load(const T* row, int rank, int size, int cols, bool vec) {
#pragma unroll
    for (int i = 0; i < kPacks; ++i) p[i] = load_words(row, rank + i * size, cols, vec);  // all issued first
  }

  __device__ __forceinline__ float operator()(int i, int k) const { return word_element<T>(p[i], k); }

  // The sum of the held elements (zeros past the end add nothing), in kVec independent chains.
  __device__ __forceinline__ float sum() const {
    float s[kVec] = {};
#pragma unroll
    for (int i = 0; i < kPacks; ++i)
#pragma unroll
      for (int k = 0; k < kVec; ++k) s[k] += (*this)(i, k);
#pragma unroll
    for (int k = 1; k < kVec; ++k) s[0] += s[k];
    return s[0];
  }

  // The sum of f(element) over the elements inside the row (f(0) need not be 0: LayerNorm's (0 - mean)²). With
  // `vec` a packet is wholly inside or wholly past the end: one test per packet instead of one per element.
  template <typename F>
  __device__ __forceinline__ float sum(int rank, int size, int cols, bool vec, F f) const {
    float s[kVec] = {};
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
      const int first = (rank + i * size) * kVec;
      if (vec) {
        if (first < cols)
#pragma unroll
          for (int k = 0; k < kVec; ++k) s[k] += f((*this)(i, k));
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k)
          if (first + k < cols) s[k] += f((*this)(i, k));
      }
    }
#pragma unroll
    for (int k = 1; k < kVec; ++k) s[0] += s[k];
    return s[0];
  }

  // Between passes over 16-bit elements: the next pass widens them again from the words. Left to itself the
  // compiler widens once and keeps every fp32 copy live across the row's reduction (twice the registers), then
  // spills; lab::opaque hides the words' values so it cannot. fp32 words are their own values: nothing to do.
  __device__ __forceinline__ void rewiden() {
    if constexpr (sizeof(T) < 4) {
#pragma unroll
      for (int i = 0; i < kPacks; ++i) opaque(p[i]);
    }
  }
};

// ---- Rows taken by groups of threads. -------------------------------------------------------------------------
// A block of (S, R) threads takes R rows at a time, S threads per row (S a multiple of 32): thread (rank, slot)
// holds packets rank, rank + S, ... of row base + slot. S = 32 is a warp per row (v3), S > 32 a row across warps
// (v4). Every thread runs every iteration of the loop over rows, those whose row lies past the end (`active`
// false) with nothing loaded and nothing stored, so that the barriers of a reduction across warps are reached by
// the whole block.
struct RowSlots {
  __device__ static int rank() { return threadIdx.x; }
  __device__ static int size() { return blockDim.x; }
  __device__ static int64_t first() { return static_cast<int64_t>(blockIdx.x) * blockDim.y; }
  __device__ static int64_t step() { return static_cast<int64_t>(gridDim.x) * blockDim.y; }
};

// A backward's packets of x and dy in `row` (this thread's share, rank of size); a row slot past the last row
// (returns false) holds zeros, which add 0 to every sum.
template <typename T, int kPacks>
__device__ __forceinline__ bool load_backward_slot(RowWords<T, kPacks>& xr, RowWords<T, kPacks>& gr,
                                                   const T* __restrict__ x, const T* __restrict__ dy, int64_t row,
                                                   int64_t rows, int cols, int rank, int size, bool vec) {
  const bool active = row < rows;
  const int64_t offset = active ? row * cols : 0;
  const int held = active ? cols : 0;
  xr.load(x + offset, rank, size, held, vec);
  gr.load(dy + offset, rank, size, held, vec);
  return active;
}

// v3/v4's backward: each thread adds dy·x̂ (and dy) of every row it takes into registers, acc[g][i][k] for
// gradient g at element k of its packet i: a thread holds the same columns in every row, so its sums are its own
// and need neither shared memory nor atomics while the rows go by. At the end the block's R row slots are added
// per column and the block writes its partial rows: per packet step i, each thread puts its sums in shared memory
// as [gradient][slot][rank][element] (the S threads' packets of step i are kVec·S consecutive columns), then the
// block's threads take those columns in order, add the R slots and store: consecutive threads, consecutive
// columns. Every column of the block's partial rows is written.
// A row held by several blocks (v5: a cluster's, each holding packets first_packet + rank + i·packet_stride) sums
// into one partial row per gradient, `part` of `parts`, each block writing its own columns of it.
template <typename T, int kGrads, int kPacks, int kMaxThreads>
__device__ __forceinline__ void write_register_sums(const float (&acc)[kGrads][kPacks][Packet<T>::kSize],
                                                    float* __restrict__ partials, int cols, int first_packet,
                                                    int packet_stride, int64_t part, int64_t parts) {
  constexpr int kVec = Packet<T>::kSize;  // 4 or 8: whole float4s
  __shared__ float4 stage[kGrads * kMaxThreads * kVec / 4];
  const int S = blockDim.x, R = blockDim.y, rank = threadIdx.x, slot = threadIdx.y;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    __syncthreads();  // the previous step's readers (or the last row's reductions) are done
#pragma unroll
    for (int g = 0; g < kGrads; ++g)
#pragma unroll
      for (int h = 0; h < kVec / 4; ++h)
        stage[((g * R + slot) * S + rank) * (kVec / 4) + h] =
            make_float4(acc[g][i][4 * h], acc[g][i][4 * h + 1], acc[g][i][4 * h + 2], acc[g][i][4 * h + 3]);
    __syncthreads();
    const float* sums = reinterpret_cast<const float*>(stage);
    const int first_col = (first_packet + i * packet_stride) * kVec;  // step i's columns: first_col + q, q < S·kVec
    for (int q = slot * S + rank; q < S * kVec && first_col + q < cols; q += S * R)
      for (int g = 0; g < kGrads; ++g) {
        float s = 0.0f;
        for (int r = 0; r < R; ++r) s += sums[(g * R + r) * S * kVec + q];
        partials[(static_cast<int64_t>(g) * parts + part) * cols + first_col + q] = s;
      }
  }
}

// One block's rows, one partial row per block (v3, v4).
template <typename T, int kGrads, int kPacks, int kMaxThreads>
__device__ __forceinline__ void write_register_sums(const float (&acc)[kGrads][kPacks][Packet<T>::kSize],
                                                    float* __restrict__ partials, int cols) {
  write_register_sums<T, kGrads, kPacks, kMaxThreads>(acc, partials, cols, 0, blockDim.x, blockIdx.x, gridDim.x);
}

// ---- v5 (a row across the blocks of a thread-block cluster: lab_cluster.cuh). ---------------------------------
// v5's forward rows: the rows of this block's cluster, each loaded once into kPacks packets a thread and handed to
// forward(r, row, rank, size, total), `total` adding a value over the cluster's threads (cluster_row_sum, its slot
// alternating with each sum). Every thread of the cluster runs every row.
template <typename T, int kPacks, int kMaxThreads, typename Forward>
__device__ __forceinline__ void cluster_forward_rows(const T* __restrict__ x, int64_t rows, int cols, bool vec,
                                                     int blocks_per_cluster, Forward forward) {
  const ClusterSlots slots{blocks_per_cluster};
  const int rank = slots.rank(), size = slots.size();
  int parity = 0;
  const auto total = [&parity](float v) {
    const float s = cluster_row_sum<kMaxThreads>(v, parity);
    parity ^= 1;
    return s;
  };
  for (int64_t row = slots.first(); row < rows; row += slots.step()) {  // the same rows for the whole cluster
    RowWords<T, kPacks> r;
    r.load(x + row * cols, rank, size, cols, vec);
    forward(r, row, rank, size, total);
  }
  cluster_done();
}

// v5's launch, given its kernel (whose last parameters are partials, rows, cols, vec and blocks per cluster, after
// `args`): one wave of resident clusters of `blocks` blocks, each writing kGrads partial rows, then the sum over
// them (sum_partials). Called with no workspace, it only says how many floats the workspace needs. Where no
// cluster of that size fits, `fallback` (the step before) runs instead.
template <int kGrads, typename Kernel, typename Call, typename Fallback, typename... Args>
cudaError_t launch_in_clusters(Kernel kernel, const Call& c, int threads, int blocks, Fallback fallback,
                               Args... args) {
  const int64_t clusters = resident_clusters(kernel, threads, blocks, c.rows);
  if (clusters == 0) return fallback();
  if (!c.workspace) return c.needs(kGrads * clusters * c.cols);
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config =
      cluster_config(static_cast<unsigned int>(clusters * blocks), threads, blocks, c.stream, &attribute);
  if (cudaError_t err = cudaLaunchKernelEx(&config, kernel, args..., c.workspace, c.rows, static_cast<int>(c.cols),
                                           c.vec, blocks);
      err != cudaSuccess)
    return err;
  return sum_partials(c.workspace, clusters, c.cols, c.grads(), c.stream);
}

// Whether the norms' v7 (prefetch) backward runs its own kernel on a cluster of `blocks`, or keeps v5's. On clusters
// of two blocks (fp32 rows of 8K-16K elements, four packets a thread) v7's kernel ran behind v5's in both norms on
// the H100 and the H200 (results/<gpu>/layernorm-backward.md and rmsnorm-backward.md: H100 at a43cc19, H200 at
// 02ae7ed in the file's history; not profiled), and with this rule the two are level there (H200 at a430eec); on
// larger clusters v7's own kernel is level or ahead.
inline bool prefetch_pays(int blocks) { return blocks > 2; }

// v5's shape for a row of `packets`: `blocks` per cluster (cluster_blocks) of `threads` threads, each holding the
// fewest packets (a power of two up to kMaxPacks) that hold the row; calls launch(packs, blocks) with packs a
// std::integral_constant.
template <int kMaxPacks, typename Launch>
cudaError_t with_cluster_shape(int64_t packets, int threads, Launch launch) {
  const int blocks = cluster_blocks(packets, int64_t{threads} * kMaxPacks);
  const int64_t held = int64_t{blocks} * threads;
  return with_pow2<1, kMaxPacks>((packets + held - 1) / held, [&](auto packs) { return launch(packs, blocks); });
}

// ---- v8 (a block's next rows staged in shared memory by the copy engine; sm_90). ------------------------------
// The ring of rows: lab::StagedRows (lab_staged.cuh).

// v8's partial rows: one row slot a block, so each thread stores its own sums, kVec consecutive columns a packet
// (float4 stores; the columns of a part are 16-byte aligned since N is a multiple of kVec). Every column of the
// block's partial rows is written. v10's: the block's `width` columns from `offset` of its cluster's partial row
// `part` of `parts` (the cluster's blocks write the row's parts).
template <typename T, int kGrads, int kPacks>
__device__ __forceinline__ void write_thread_sums(const float (&acc)[kGrads][kPacks][Packet<T>::kSize],
                                                  float* __restrict__ partials, int width, int cols, int64_t part,
                                                  int64_t parts, int offset) {
  constexpr int kVec = Packet<T>::kSize;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int first = (threadIdx.x + i * blockDim.x) * kVec;
    if (first >= width) continue;
#pragma unroll
    for (int g = 0; g < kGrads; ++g) {
      float4* dst = reinterpret_cast<float4*>(partials + (static_cast<int64_t>(g) * parts + part) * cols + offset +
                                              first);
#pragma unroll
      for (int h = 0; h < kVec / 4; ++h)
        dst[h] = make_float4(acc[g][i][4 * h], acc[g][i][4 * h + 1], acc[g][i][4 * h + 2], acc[g][i][4 * h + 3]);
    }
  }
}

template <typename T, int kGrads, int kPacks>
__device__ __forceinline__ void write_thread_sums(const float (&acc)[kGrads][kPacks][Packet<T>::kSize],
                                                  float* __restrict__ partials, int cols) {
  write_thread_sums<T, kGrads, kPacks>(acc, partials, cols, cols, blockIdx.x, gridDim.x, 0);
}

// How many slots v8's ring has: about kStagedRingBytes of shared memory a multiprocessor, shared among the blocks
// its registers let it hold (`blocks`), between 2 and kStagedMaxStages slots a block. A slot holds kArrays·N elements,
// so short rows get more slots and long rows fewer, for about the same bytes in flight a multiprocessor.
constexpr int64_t kStagedRingBytes = 160 * 1024;
constexpr int kStagedMaxStages = 8;

template <typename T, int kArrays = 2>
int staged_stages(int64_t cols, int blocks) {
  const int64_t fit = kStagedRingBytes / (blocks > 0 ? blocks : 1) / StagedRows<T, kArrays>::slot_size(cols);
  return static_cast<int>(fit < 2 ? 2 : (fit > kStagedMaxStages ? kStagedMaxStages : fit));
}

// v8's rows, in both norms, among those one block holds (at most kMaxThreads · kMaxPacks packets: v4's): fp16/bf16
// rows of more than 512 packets (N > 4096), 16-byte aligned, on Hopper. For them, launch(packs, threads) with the
// threads a row (a power of two up to kMaxThreads, at least kStagedMinPacks packets a thread) and the packets a
// thread (a power of two up to kMaxPacks, as a std::integral_constant); for every other row fallback(), the step
// before. No fp32 instantiation of `launch` is made. The rows `cuda:staged`, `staged2` and `staged4` of
// results/nvidia-h200/norm-backward-staged/ say why these rows: on shorter 16-bit rows, or with one packet a thread,
// v8 ran level with or behind v7; on fp32 rows it was ahead in one norm and behind in the other; on the 16-bit rows
// it takes, where v4's kernel holds a quarter of the warps, it was ahead in both.
constexpr int64_t kStagedShortestPackets = 513;
constexpr int kStagedMinPacks = 2;

// v9 takes rows from `shortest` packets on instead (kLeanShortestPackets).
template <typename T, int kMaxThreads, int kMaxPacks, typename Call, typename Launch, typename Fallback>
cudaError_t with_staged_shape(const Call& c, Launch launch, Fallback fallback,
                              int64_t shortest = kStagedShortestPackets) {
  const int64_t packets = c.packets();
  if constexpr (sizeof(T) == 2) {
    if (c.vec && has_clusters() && packets >= shortest && packets <= int64_t{kMaxThreads} * kMaxPacks) {
      const int64_t wanted = pow2_at_least((packets + kStagedMinPacks - 1) / kStagedMinPacks);
      const int threads = static_cast<int>(wanted > kMaxThreads ? kMaxThreads : wanted);
      return with_pow2<kStagedMinPacks, kMaxPacks>((packets + threads - 1) / threads,
                                                   [&](auto packs) { return launch(packs, threads); });
    }
  }
  return fallback();
}

// v9's rows, from v8's shape rule: 16-bit rows of 512 packets (N = 4096, which v8 hands to v7 and v9 takes in
// blocks of 256 threads) up to what its packets a thread allow. Measured on the H200 at bf16 4096 x 4K-16K, one GPU
// for all three steps (results/nvidia-h200/norm-backward-lean/): ahead of v7 at 4K in both norms, ahead of v8 at
// 8K-16K in LayerNorm, level with it at 8K in RMSNorm and behind it at 16K, where RMSNorm's v9 hands its rows to v8.
constexpr int64_t kLeanShortestPackets = 512;

// v9's blocks a multiprocessor holds at least, for __launch_bounds__: with two packets a thread, 1024 threads (64
// registers each, as v8's kernel takes), so that two blocks of 512 share a multiprocessor as in v8; left to itself
// the compiler gave v9's kernel more, and one block (results/nvidia-h200/norm-backward-lean/, run 1). With four
// packets, one block.
constexpr int lean_min_blocks(int threads, int packs) { return packs <= 2 ? 1024 / threads : 1; }

// v8's and v12's launch shape: one wave of resident blocks of `threads` of `kernel`, each with a ring of rows of
// kArrays arrays (staged_stages' slots), its shared memory set as the kernel's dynamic maximum.
struct BlockRings {
  int stages;
  int64_t smem;
  unsigned int grid;
};
template <typename T, int kArrays, typename Kernel>
cudaError_t block_rings(Kernel kernel, int threads, int64_t cols, int64_t rows, BlockRings* rings) {
  int blocks = 0;  // per multiprocessor, as far as its registers and threads go
  if (cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0); err != cudaSuccess)
    return err;
  rings->stages = staged_stages<T, kArrays>(cols, blocks);
  rings->smem = StagedRows<T, kArrays>::bytes(rings->stages, cols);
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(rings->smem));
      err != cudaSuccess)
    return err;
  rings->grid = resident_grid(kernel, threads, static_cast<size_t>(rings->smem), rows);
  return cudaSuccess;
}

// v8's launch, given its kernel (whose last parameters are partials, rows, cols and stages, after `args`): one wave
// of resident blocks of `threads`, each with its ring, then the sum over their partial rows (sum_partials). Called
// with no workspace, it only says how many floats the workspace needs.
template <typename T, int kGrads, typename Kernel, typename Call, typename... Args>
cudaError_t launch_staged(Kernel kernel, const Call& c, int threads, Args... args) {
  BlockRings rings;
  if (cudaError_t err = block_rings<T, 2>(kernel, threads, c.cols, c.rows, &rings); err != cudaSuccess) return err;
  if (!c.workspace) return c.needs(kGrads * int64_t{rings.grid} * c.cols);
  kernel<<<rings.grid, threads, static_cast<size_t>(rings.smem), c.stream>>>(args..., c.workspace, c.rows,
                                                                             static_cast<int>(c.cols), rings.stages);
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  return sum_partials(c.workspace, rings.grid, c.cols, c.grads(), c.stream);
}

// ---- v10 (v9's rows over a thread-block cluster: each block a contiguous part of every row; sm_90). -----------
// Rows longer than one of v9's blocks holds (2048 packets: 512 threads of four), 16-byte aligned, fp32 included:
// spread over the fewest blocks C (a power of two, 2 to kClusterMaxBlocks) whose parts hold them, each part a C-th of
// the row (N a multiple of C packets), its threads two or kLeanClusterPacks packets each
// (with_lean_cluster_packs_shape).
constexpr int kLeanClusterThreads = 512;
constexpr int kLeanClusterPacks = 4;
constexpr int64_t kLeanClusterPartPackets = int64_t{kLeanClusterThreads} * kLeanClusterPacks;
// v11's forward rows: more than 4096 packets (fp32 from 32K elements, fp16/bf16 from 64K). On the H200 its first
// run (results/nvidia-h200/norm-forward-staged/README.md) had it ahead of v4/v5 on those and behind or level on the
// rows of 4096 packets (fp32 16K, 16-bit 32K), which v4 holds in one block of 1024 threads.
constexpr int64_t kStagedForwardShortestPackets = 2 * kLeanClusterPartPackets + 1;

// v10's and v11's row sums across a cluster: lab::PushedClusterSums (lab_staged.cuh).

// v11 (the forward) takes rows from `shortest` packets on: kStagedForwardShortestPackets; `packs`: packets a thread
// (v10: with_lean_cluster_packs_shape).
template <typename Call, typename Launch, typename Fallback>
cudaError_t with_lean_cluster_shape(const Call& c, Launch launch, Fallback fallback,
                                    int64_t shortest = kLeanClusterPartPackets + 1, int packs = kLeanClusterPacks) {
  const int64_t packets = c.packets(), part_packets = int64_t{kLeanClusterThreads} * packs;
  if (!c.vec || !has_clusters() || packets < shortest || packets > part_packets * kClusterMaxBlocks)
    return fallback();
  const int blocks = cluster_blocks(packets, part_packets);
  if (packets % blocks != 0) return fallback();  // a part must be whole packets, 16-byte aligned
  return launch(blocks);
}

// v10's threads hold two packets where the row fits a cluster of such parts (1024 packets: 16-bit rows up to 64K
// elements, fp32 up to 32K), four beyond. With two the kernel takes at most 64 registers (lean_min_blocks), so two
// blocks and their rings share an SM, and a cluster has twice the blocks. Against four on the H200
// (results/nvidia-h200/norm-backward-two-packs/): ahead at 16-bit 32K-64K and fp32 32K, level at fp32 16K.
// v11 keeps four: with the same rule it was behind or level at bf16 and fp32 32K-64K
// (results/nvidia-h200/norm-forward-two-packs/README.md).
// launch(blocks, packs), packs a std::integral_constant; fallback() for the rows v10 does not take.
constexpr int kLeanClusterFewPacks = 2;
template <typename Call, typename Launch, typename Fallback>
cudaError_t with_lean_cluster_packs_shape(const Call& c, Launch launch, Fallback fallback) {
  if (c.packets() <= int64_t{kLeanClusterThreads} * kLeanClusterFewPacks * kClusterMaxBlocks)
    return with_lean_cluster_shape(
        c, [&](int blocks) { return launch(blocks, std::integral_constant<int, kLeanClusterFewPacks>{}); }, fallback,
        kLeanClusterPartPackets + 1, kLeanClusterFewPacks);
  return with_lean_cluster_shape(
      c, [&](int blocks) { return launch(blocks, std::integral_constant<int, kLeanClusterPacks>{}); }, fallback);
}

// v10's and v11's rings in clusters of `blocks` blocks of kLeanClusterThreads (lab::ClusterRings, lab_staged.cuh).
template <typename T, int kArrays, typename Kernel>
cudaError_t cluster_rings(Kernel kernel, int64_t part, int blocks, int64_t rows, ClusterRings* rings) {
  int per_sm = 0;  // blocks a multiprocessor holds, as far as its registers and threads go
  if (cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kLeanClusterThreads, 0);
      err != cudaSuccess)
    return err;
  rings->stages = staged_stages<T, kArrays>(part, per_sm);
  rings->smem = StagedRows<T, kArrays>::bytes(rings->stages, part);
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(rings->smem));
      err != cudaSuccess)
    return err;
  rings->clusters = resident_clusters(kernel, kLeanClusterThreads, blocks, rows, static_cast<size_t>(rings->smem));
  return cudaSuccess;
}

// v10's launch, given its kernel (whose last parameters are partials, rows, cols, stages and the blocks of a cluster,
// after `args`): one wave of resident clusters of `blocks` blocks, each block with a ring of its parts of the rows,
// then the sum over the clusters' partial rows. `fallback` where no such cluster fits. Called with no workspace, it
// only says how many floats the workspace needs.
template <typename T, int kGrads, typename Kernel, typename Call, typename Fallback, typename... Args>
cudaError_t launch_staged_clusters(Kernel kernel, const Call& c, int blocks, Fallback fallback, Args... args) {
  ClusterRings rings;
  if (cudaError_t err = cluster_rings<T, 2>(kernel, c.cols / blocks, blocks, c.rows, &rings); err != cudaSuccess)
    return err;
  if (rings.clusters == 0) return fallback();
  if (!c.workspace) return c.needs(kGrads * rings.clusters * c.cols);
  if (cudaError_t err = launch_cluster_rings(kernel, rings, blocks, kLeanClusterThreads, c.stream, args...,
                                             c.workspace, c.rows, static_cast<int>(c.cols));
      err != cudaSuccess)
    return err;
  return sum_partials(c.workspace, rings.clusters, c.cols, c.grads(), c.stream);
}

// v11's launch (the forward: x alone in the ring, no partial rows), given its kernel, whose last parameters are rows,
// cols, stages and the blocks of a cluster, after `args`; `fallback` where no such cluster fits.
template <typename T, typename Kernel, typename Call, typename Fallback, typename... Args>
cudaError_t launch_staged_forward_clusters(Kernel kernel, const Call& c, int blocks, Fallback fallback,
                                           Args... args) {
  ClusterRings rings;
  if (cudaError_t err = cluster_rings<T, 1>(kernel, c.cols / blocks, blocks, c.rows, &rings); err != cudaSuccess)
    return err;
  if (rings.clusters == 0) return fallback();
  return launch_cluster_rings(kernel, rings, blocks, kLeanClusterThreads, c.stream, args..., c.rows,
                              static_cast<int>(c.cols));
}

// ---- v12 (the forward's 16-bit rows of 4K-8K elements, one wave of blocks, each with v8's ring; sm_90). --------
// v4 gives such a row to one block, which loads it, reduces it, writes y and exits; at these N its kernel was bound
// by neither the DRAM nor issue but by waiting on memory (results/nvidia-h200/layernorm-profile.md, last section).
// v12 keeps v8's ring for the forward (x alone): one wave of resident blocks of packets / kRingForwardPacks
// threads, each staging its rows several ahead by bulk copies, so that a block's next rows are on their way while
// it reduces one. Its rows come from its first run, on 16-bit rows of 512-2048 packets
// (results/nvidia-h200/norm-forward-ring/README.md): ahead of v4 at N = 4K and 8K in both norms, behind at 16K in
// LayerNorm and level in RMSNorm, so it hands rows of more than 1024 packets to v11.
constexpr int kRingForwardPacks = 4;
constexpr int64_t kRingForwardShortestPackets = 512;
constexpr int64_t kRingForwardLongestPackets = 1024;

// v12's rows: fp16/bf16, 16-byte aligned, 512-1024 packets, on Hopper. For them launch(threads), threads a
// std::integral_constant (128 or 256: at most kRingForwardPacks packets a thread); for every other row fallback().
template <typename T, typename Call, typename Launch, typename Fallback>
cudaError_t with_ring_forward_shape(const Call& c, Launch launch, Fallback fallback) {
  if constexpr (sizeof(T) == 2) {
    const int64_t packets = c.packets();
    if (c.vec && has_clusters() && packets >= kRingForwardShortestPackets && packets <= kRingForwardLongestPackets)
      return packets <= 128 * kRingForwardPacks ? launch(std::integral_constant<int, 128>{})
                                                : launch(std::integral_constant<int, 256>{});
  }
  return fallback();
}

// v12's launch, given its kernel (whose last parameters are rows, cols and the ring's stages, after `args`): v8's
// shape (block_rings) for rings of x alone.
template <typename T, typename Kernel, typename Call, typename... Args>
cudaError_t launch_ring_forward(Kernel kernel, int threads, const Call& c, Args... args) {
  BlockRings rings;
  if (cudaError_t err = block_rings<T, 1>(kernel, threads, c.cols, c.rows, &rings); err != cudaSuccess) return err;
  kernel<<<rings.grid, threads, static_cast<size_t>(rings.smem), c.stream>>>(args..., c.rows,
                                                                             static_cast<int>(c.cols), rings.stages);
  return cudaGetLastError();
}

// v12's loop over a block's rows (blockIdx.x, + gridDim.x, ...), shared by the norms' kernels: each row taken from
// the ring into registers (kPacks packets a thread), then row(index, xs, release). release() frees the row's slot
// for the ring's next bulk copy; call it once every thread holds its packets (after the row's first block-wide sum).
template <typename T, int kThreads, int kPacks, typename Row>
__device__ __forceinline__ void for_each_ring_row(unsigned char* ring_memory, const T* __restrict__ x, int64_t rows,
                                                  int cols, int stages, Row row) {
  StagedRows<T, 1> ring(ring_memory, stages, cols);
  ring.start(x, nullptr, rows, cols);
  auto turn = ring.turn_of(0);
  for (int64_t index = blockIdx.x; index < rows; index += gridDim.x, ring.next(turn)) {
    RowWords<T, kPacks> xs;
    ring.take(turn, xs, static_cast<int>(threadIdx.x), kThreads, cols);
    row(index, xs, [&] { ring.release(turn, index, x, nullptr, rows, cols); });
  }
}

}  // namespace lab
