// Rows staged in shared memory by the copy engine, and sums pushed across a thread-block cluster (sm_90): what the
// norms' v8-v11 (lab_norm.cuh, layernorm.cu, rmsnorm.cu) and softmax's v7 (softmax.cu) share. Device half only.
#pragma once
#include <cstdint>
#include <type_traits>

#include "lab_cluster.cuh"  // add() for the sums, kClusterMaxBlocks, cooperative_groups
#include "lab_device.cuh"   // Packet
#include "lab_hopper.cuh"   // mbarriers, the bulk copy, st.async into another block's shared memory

namespace lab {

// ---- A ring of rows in shared memory (the norms' v8 on, softmax's v7). ------------------------------------------
// A block takes rows blockIdx.x, blockIdx.x + gridDim.x, ... one at a time, all its threads on one row. Its dynamic
// shared memory is a ring of `stages` slots, each one row of x and then one of dy, filled by bulk copies
// (cp.async.bulk, two a row) that complete on the slot's barrier: the rows of the next stages - 1 turns are on
// their way while this one is reduced and its dx written, whatever the registers hold. The block's j-th row sits in
// slot j % stages, and its barrier's phase of that row has parity (j / stages) % 2. Thread 0 issues every copy; a
// slot is refilled only after the block-wide barrier of its row's sum, which every thread reaches after reading its
// packets of the slot. Rows must be 16-byte aligned (`vec`): a bulk copy moves whole 16-byte units.
constexpr int kStagedSlotAlign = 128;

template <typename T, int kArrays = 2>  // a slot holds a row of x and one of dy (the norms' backward), or x alone
struct StagedRows {
  uint64_t* full;        // one barrier per slot, at the start of the dynamic shared memory
  unsigned char* slots;  // then the slots, kStagedSlotAlign-aligned
  int stages;
  unsigned row_bytes;
  int64_t slot_bytes;

  // The dynamic shared memory a ring of `stages` slots takes for rows of `cols` elements.
  __host__ __device__ static int64_t bytes(int stages, int64_t cols) {
    return kStagedSlotAlign + stages * slot_size(cols);
  }
  __host__ __device__ static int64_t slot_size(int64_t cols) {
    const int64_t all = kArrays * cols * static_cast<int64_t>(sizeof(T));
    return (all + kStagedSlotAlign - 1) / kStagedSlotAlign * kStagedSlotAlign;
  }

  __device__ StagedRows(unsigned char* smem, int stages_, int cols)
      : full(reinterpret_cast<uint64_t*>(smem)),
        slots(smem + kStagedSlotAlign),
        stages(stages_),
        row_bytes(static_cast<unsigned>(cols * sizeof(T))),
        slot_bytes(slot_size(cols)) {}

  // The barriers, and the block's first `stages` rows on their way. Every thread calls it. `cols` is the rows'
  // stride in elements (a row's bytes, the ring's: its constructor's); the block takes rows first, first + step, ...
  // (v8, v9: blockIdx.x and gridDim.x; v10, v11: its cluster's rows, each block a part of every row).
  __device__ void start(const T* x, const T* dy, int64_t rows, int cols) {
    init();
    for (int s = 0; s < stages; ++s) issue(s, blockIdx.x + int64_t{s} * gridDim.x, x, dy, rows, cols);
  }
  __device__ void start(const T* x, const T* dy, int64_t rows, int cols, int64_t first, int64_t step) {
    init();
    for (int s = 0; s < stages; ++s) issue(s, first + s * step, x, dy, rows, cols);
  }
  // The slots' barriers, initialised by thread 0 before any copy is issued.
  __device__ void init() {
    if (threadIdx.x == 0) {
      for (int s = 0; s < stages; ++s) mbarrier_init(&full[s], 1);
      fence_mbarrier_init();
    }
    __syncthreads();
  }

  // Thread 0: `row` (if there is one) into `slot`.
  __device__ void issue(int slot, int64_t row, const T* x, const T* dy, int64_t rows, int cols) {
    if (threadIdx.x != 0 || row >= rows) return;
    unsigned char* dst = slots + slot * slot_bytes;
    mbarrier_expect_bytes(&full[slot], kArrays * row_bytes);
    bulk_load(dst, x + row * cols, row_bytes, &full[slot]);
    if constexpr (kArrays == 2) bulk_load(dst + row_bytes, dy + row * cols, row_bytes, &full[slot]);
  }

  // Where the block's j-th row sits: slot j % stages, its barrier's phase parity (j / stages) % 2. v9 keeps one and
  // steps it (next) instead of dividing a 64-bit j every row.
  struct Turn {
    int slot;
    unsigned parity;
  };
  __device__ Turn turn_of(int64_t j) const {
    return Turn{static_cast<int>(j % stages), static_cast<unsigned>((j / stages) & 1)};
  }
  __device__ void next(Turn& t) const {
    if (++t.slot == stages) t.slot = 0, t.parity ^= 1u;
  }

  // The block's j-th row, once it has landed: this thread's packets of x and dy (rank, rank + size, ...; zeros past
  // the row's end), into the norms' RowWords (lab_norm.cuh) or any type that holds packets in an array `p`.
  template <typename Words>
  __device__ void take(int64_t j, Words& xs, Words& gs, int rank, int size, int cols) const {
    take(turn_of(j), xs, gs, rank, size, cols);
  }
  template <typename Words>
  __device__ void take(Turn t, Words& xs, Words& gs, int rank, int size, int cols) const {
    constexpr int kPacks = std::extent<decltype(Words::p)>::value;
    const uint4* xr = landed(t);
    const uint4* gr = reinterpret_cast<const uint4*>(slots + t.slot * slot_bytes + row_bytes);
    const int packets = cols / Packet<T>::kSize;
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
      const int packet = rank + i * size;
      xs.p[i] = packet < packets ? xr[packet] : uint4{};
      gs.p[i] = packet < packets ? gr[packet] : uint4{};
    }
  }

  // x alone (the norms' v11).
  template <typename Words>
  __device__ void take(Turn t, Words& xs, int rank, int size, int cols) const {
    static_assert(kArrays == 1, "a ring of x alone");
    constexpr int kPacks = std::extent<decltype(Words::p)>::value;
    const uint4* xr = landed(t);
    const int packets = cols / Packet<T>::kSize;
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
      const int packet = rank + i * size;
      xs.p[i] = packet < packets ? xr[packet] : uint4{};
    }
  }

  // The slot of turn t, once its row has landed (softmax's v7 reads its packets itself).
  __device__ const uint4* landed(Turn t) const {
    mbarrier_wait(&full[t.slot], t.parity);
    return reinterpret_cast<const uint4*>(slots + t.slot * slot_bytes);
  }

  // After the block-wide barrier of the j-th row's sum (every thread has read that slot): thread 0 refills it with
  // the row `stages` turns on.
  __device__ void release(int64_t j, int64_t row, const T* x, const T* dy, int64_t rows, int cols) {
    release(turn_of(j), row, x, dy, rows, cols);
  }
  __device__ void release(Turn t, int64_t row, const T* x, const T* dy, int64_t rows, int cols) {
    issue(t.slot, row + int64_t{stages} * gridDim.x, x, dy, rows, cols);
  }
  __device__ void release(Turn t, int64_t row, const T* x, const T* dy, int64_t rows, int cols, int64_t step) {
    issue(t.slot, row + stages * step, x, dy, rows, cols);
  }
};

// ---- A block's part of its cluster's rows (the norms' v10 and v11, softmax's v7). -------------------------------
// Their launch: in clusters of `blocks` blocks, each with a ring of `stages` slots of its part of a row (`smem` bytes
// of dynamic shared memory), as many clusters as one wave holds (0: none fits).
struct ClusterRings {
  int stages;
  int64_t smem;
  int64_t clusters;
};

// One wave of `rings`' clusters of `kernel` (blocks of `threads`), whose last parameters are the ring's stages and
// the blocks of a cluster, after `args`.
template <typename Kernel, typename... Args>
cudaError_t launch_cluster_rings(Kernel kernel, const ClusterRings& rings, int blocks, int threads,
                                 cudaStream_t stream, Args... args) {
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config = cluster_config(static_cast<unsigned int>(rings.clusters * blocks), threads,
                                                   blocks, stream, &attribute, static_cast<size_t>(rings.smem));
  return cudaLaunchKernelEx(&config, kernel, args..., rings.stages, blocks);
}

// The C blocks of a 1-D cluster are consecutive in the grid: block b is block b % C of cluster b / C, and takes the
// columns offset to offset + part (a C-th of the row) of the rows cluster, cluster + clusters, ...
struct ClusterPart {
  int part, block_rank, offset;
  int64_t cluster, clusters;
};
__device__ __forceinline__ ClusterPart cluster_part(int cols, int blocks) {
  const int part = cols / blocks, block_rank = static_cast<int>(blockIdx.x % blocks);
  return {part, block_rank, block_rank * part, blockIdx.x / blocks, gridDim.x / blocks};
}

// ---- Sums pushed across a cluster (the norms' v10 and v11, softmax's v7). ---------------------------------------
// v10's and v11's row sums across a cluster, pushed rather than pulled. Each block's sum of a row goes by its threads
// r < C straight into block r's shared memory (st.async), each store completing on a barrier of block r that counts
// bytes; a block waits on its own barrier for the row's C sums and adds them in rank order, so every block gets the
// same bits. A cluster barrier a row (cluster_sum_arrive / wait) would do the same with a release at every arrival,
// which waits for the arriving thread's earlier stores (the last row's dx) to be acknowledged: v10's first version
// did that, and under ncu its warps stalled on it more than on anything else (results/nvidia-h200/
// norm-backward-lean-cluster/README.md). Two sets of slots and barriers, for alternate sums: a block pushes into a
// set again two sums on, after the next sum's block-wide barrier of every block it pushes to, so each has read the
// set and waited out its phase. Every thread of the cluster calls start, then push and wait for each sum. No cluster
// barrier at the end either: a block receives only the sums it waits for, so once it has its last row's, no other
// block will touch its shared memory and it may exit.
template <typename V, int kMaxBlocks = kClusterMaxBlocks>  // kMaxBlocks: 16 for a non-portable cluster (softmax)
struct PushedClusterSums {
  V (*slots)[kMaxBlocks];  // [set][the sender's rank in the cluster]
  uint64_t* arrived;       // [set]: one arrival (this block's thread 0, announcing C sums' bytes) and the bytes
  int blocks;
  unsigned rank, uses;  // uses: sums so far; set uses % 2, its barrier's phase parity (uses / 2) % 2

  // The barriers, then a cluster barrier: no block pushes before every block's barriers are ready. A relaxed one
  // (the barriers' initialisation is fenced): with release semantics each thread waited there for its earlier
  // memory operations (results/nvidia-h200/norm-forward-staged/README.md, section 3). Called before anything else.
  __device__ void start(int blocks_) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ V set_slots[2][kMaxBlocks];
    __shared__ uint64_t set_arrived[2];
    slots = set_slots, arrived = set_arrived, blocks = blocks_, uses = 0;
    rank = cooperative_groups::this_cluster().block_rank();
    if (threadIdx.x == 0) {
      mbarrier_init(&arrived[0], 1);
      mbarrier_init(&arrived[1], 1);
      fence_mbarrier_init();
    }
    cluster_arrive_relaxed();
    cluster_wait();
#endif
  }
  // The block's sum of this row (every thread holding it) to every block of the cluster.
  __device__ void push(V block_sum) {
    const int set = uses & 1;
    if (threadIdx.x == 0) mbarrier_expect_bytes(&arrived[set], blocks * static_cast<unsigned>(sizeof(V)));
    if (threadIdx.x < blocks) store_async_to_block(&slots[set][rank], block_sum, &arrived[set], threadIdx.x);
  }
  // The row's sum over the cluster, once the C sums have landed here.
  __device__ V wait() {
    const int set = uses & 1;
    mbarrier_wait(&arrived[set], (uses >> 1) & 1);
    ++uses;
    V s = slots[set][0];
    for (int r = 1; r < blocks; ++r) s = add(s, slots[set][r]);
    return s;
  }
};

}  // namespace lab
