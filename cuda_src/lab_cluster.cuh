// Sums over the threads that hold a row: a warp, a block's warps, a thread-block cluster's blocks (distributed shared
// memory, Hopper on), and the launch of kernels whose rows span a cluster. Shared by the norms (lab_norm.cuh,
// layernorm.cu, rmsnorm.cu: v4's rows across warps, v5 and v7's across a cluster) and softmax.cu (v6). Device half
// only.
#pragma once
#include <cooperative_groups.h>

#include <cstdint>

#include "lab_device.cuh"

namespace lab {

// ---- A sum over a row's threads. ------------------------------------------------------------------------------
// The values summed may be of any type V with add(V, V) and warp_sum(V) found for it (float and float2 here; a
// kernel file may declare its own, such as softmax's pairs of max and sum, which argument-dependent lookup finds).
__device__ __forceinline__ float add(float a, float b) { return a + b; }
__device__ __forceinline__ float2 add(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float warp_sum(float v) { return warp_reduce_sum(v); }
__device__ __forceinline__ float2 warp_sum(float2 v) {
  return make_float2(warp_reduce_sum(v.x), warp_reduce_sum(v.y));
}

// The sum over the S threads of this thread's row (one value, or two at once as a float2: one pair of barriers for
// both). A warp (S = 32): five shuffles. Across warps: each warp's sum goes through shared memory and every thread
// adds its row's S/32 warp sums, in warp order, so every thread of the row gets the same bits. Every thread of the
// block must call it (barriers when S > 32; the branch is uniform).
template <int kMaxThreads, typename V>
__device__ __forceinline__ V row_sum(V v) {
  v = warp_sum(v);
  if (blockDim.x == 32) return v;
  __shared__ V per_warp[kMaxThreads / 32];
  const int warps = blockDim.x / 32;
  const int first = threadIdx.y * warps;
  __syncthreads();  // the previous call's readers are done with per_warp
  if (threadIdx.x % 32 == 0) per_warp[first + threadIdx.x / 32] = v;
  __syncthreads();
  V s = per_warp[first];
  for (int w = 1; w < warps; ++w) s = add(s, per_warp[first + w]);
  return s;
}

// The same sum over a block of kThreads threads (one row) with one barrier where row_sum takes two, and no loop over
// the warps: each warp's sum goes to `slots` (kThreads / 32 of them), then lane l of every warp reads slot
// l % (kThreads / 32) and the warp adds them by shuffles, each lane in the same order as its partner (a + b = b + a),
// so every thread gets the same bits. The caller alternates between two sets of slots from one call to the next:
// a call's writes then never meet the previous call's reads, which the barrier of the call between them orders
// before them (row_sum's first barrier does that for its one set).
__device__ __forceinline__ float shfl_xor(float v, int offset) { return __shfl_xor_sync(0xffffffffu, v, offset); }
__device__ __forceinline__ float2 shfl_xor(float2 v, int offset) {
  return make_float2(shfl_xor(v.x, offset), shfl_xor(v.y, offset));
}

template <int kThreads, typename V>
__device__ __forceinline__ V block_sum_alternating(V v, V* slots) {
  constexpr int kWarps = kThreads / 32;
  static_assert(kWarps >= 2 && kWarps <= 32 && (kWarps & (kWarps - 1)) == 0, "a power of two of warps, 2 to 32");
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = v;
  __syncthreads();
  V s = slots[threadIdx.x % kWarps];
#pragma unroll
  for (int offset = kWarps / 2; offset > 0; offset /= 2) s = add(s, shfl_xor(s, offset));
  return s;
}

// ---- A row across the blocks of a thread-block cluster (Hopper on). -------------------------------------------
// A cluster is up to kClusterMaxBlocks blocks that the hardware runs at once on neighbouring SMs, each able to read
// the others' shared memory (distributed shared memory). Thread `rank` of block r of a cluster of C blocks of S
// threads holds packets r·S + rank + i·C·S of the cluster's row (ClusterSlots), so C blocks hold a row C times as
// long as one block does, and the row is still read once.
constexpr int kClusterMaxBlocks = 8;  // the largest cluster every Hopper GPU runs (portable size)

// The sum over the whole cluster of a value each thread holds: first over the block (row_sum), then the blocks'
// sums through distributed shared memory: each block leaves its sum in its own shared memory, one cluster barrier,
// and every thread adds the C sums, read from each block's shared memory in rank order, so every thread of the
// cluster gets the same bits. Two slots, alternating with the row (`parity`): a block writes a slot again two rows
// later, after the next row's barrier, which every block passes only once it has read this row's sums. Every
// thread of the cluster must call it, the same number of times.
// In two halves for a caller with work to put between them (the norms' v7: the next row's loads):
// cluster_sum_arrive leaves the block's sum and arrives at the barrier (release: the sum is visible to the cluster
// once every block has arrived), cluster_sum_wait waits there (acquire) and adds the sums. The barrier's release
// covers what the thread did before arriving, not what it issues between the halves: loads issued there stay in
// flight across the wait.
template <typename V>
__device__ __forceinline__ V* cluster_sum_slots() {
  __shared__ V slots[2];  // one pair per block, whichever half names it
  return slots;
}

template <int kMaxThreads, typename V>
__device__ __forceinline__ void cluster_sum_arrive(V v, int parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  v = row_sum<kMaxThreads>(v);
  if (threadIdx.x == 0 && threadIdx.y == 0) cluster_sum_slots<V>()[parity] = v;
  (void)cooperative_groups::this_cluster().barrier_arrive();
#else
  __trap();  // clusters need compute capability 9.0; the launchers never send such a GPU here
#endif
}

template <typename V>
__device__ __forceinline__ V cluster_sum_wait(int parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  cluster.barrier_wait();
  V* slot = &cluster_sum_slots<V>()[parity];
  V s = *cluster.map_shared_rank(slot, 0);
  for (unsigned int r = 1; r < cluster.num_blocks(); ++r) s = add(s, *cluster.map_shared_rank(slot, r));
  return s;
#else
  __trap();
  return V{};
#endif
}

template <int kMaxThreads, typename V>
__device__ __forceinline__ V cluster_row_sum(V v, int parity) {
  cluster_sum_arrive<kMaxThreads>(v, parity);
  return cluster_sum_wait<V>(parity);
}

// The cluster barrier a block passes before it exits: no block's shared memory may go while another of its
// cluster can still read it.
__device__ __forceinline__ void cluster_done() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cooperative_groups::this_cluster().sync();
#endif
}

// The rows of a cluster of `blocks` blocks (1-D clusters: consecutive blocks), each row across all of them: thread
// rank and row size in threads, and the rows of this block's cluster, first and step.
struct ClusterSlots {
  int blocks;
  __device__ int rank() const { return static_cast<int>(blockIdx.x % blocks) * blockDim.x + threadIdx.x; }
  __device__ int size() const { return blocks * static_cast<int>(blockDim.x); }
  __device__ int64_t first() const { return blockIdx.x / blocks; }
  __device__ int64_t step() const { return gridDim.x / blocks; }
};

// Clusters run on compute capability 9.0 and later.
inline bool has_clusters() { return device_attribute(cudaDevAttrComputeCapabilityMajor) >= 9; }

// A launch of `kernel` in clusters of `blocks` blocks (1-D), `grid` blocks in all (a multiple of `blocks`).
inline cudaLaunchConfig_t cluster_config(unsigned int grid, int threads, int blocks, cudaStream_t stream,
                                         cudaLaunchAttribute* attribute, size_t smem = 0) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  attribute->id = cudaLaunchAttributeClusterDimension;
  attribute->val.clusterDim.x = static_cast<unsigned int>(blocks);
  attribute->val.clusterDim.y = 1;
  attribute->val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  return config;
}

// Blocks per cluster for a row of `packets` when a block holds at most `per_block`: the smallest power of two from
// 2 (a row that one block holds is not a cluster's) up to kClusterMaxBlocks; the caller checks the row fits.
inline int cluster_blocks(int64_t packets, int64_t per_block) {
  int blocks = 2;
  while (blocks < kClusterMaxBlocks && blocks * per_block < packets) blocks *= 2;
  return blocks;
}

// Clusters of `blocks` blocks of `kernel` (with `smem` bytes of dynamic shared memory a block) that the GPU holds at
// once, at most `cap`; 0 where it holds none (or cannot say), which the launchers take as "no cluster path here".
template <typename Kernel>
int64_t resident_clusters(Kernel kernel, int threads, int blocks, int64_t cap, size_t smem = 0) {
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config =
      cluster_config(static_cast<unsigned int>(blocks), threads, blocks, nullptr, &attribute, smem);
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return clusters < cap ? clusters : cap;
}

// One wave of resident clusters of `blocks` blocks of `threads` threads of `kernel` (whose last parameter, after
// `args`, is the blocks per cluster), every cluster taking rows first, first + step, ... (ClusterSlots); `fallback`
// (the step before) where no cluster of that size fits.
template <typename Kernel, typename Fallback, typename... Args>
cudaError_t launch_rows_in_clusters(Kernel kernel, int64_t rows, int threads, int blocks, cudaStream_t stream,
                                    Fallback fallback, Args... args) {
  const int64_t clusters = resident_clusters(kernel, threads, blocks, rows);
  if (clusters == 0) return fallback();
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config =
      cluster_config(static_cast<unsigned int>(clusters * blocks), threads, blocks, stream, &attribute);
  return cudaLaunchKernelEx(&config, kernel, args..., blocks);
}

}  // namespace lab
