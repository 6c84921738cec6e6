// mbarrier, TMA and wgmma (sm_90 / sm_90a): the warpgroup tensor-core path of matmul.cu v5, fp8_matmul.cu v3 and
// attention.cu v4, the driver call that encodes their TMA tensor maps, and the block-tile grid and paired stores the
// matmuls' launchers and epilogues share with matmul.cu v4. Each inline-asm instruction is a function named after it
// (PTX ISA names in quotes); nothing here decides tiling or order, the kernels do. Included only in the
// `#ifdef __CUDACC__` half.
//
// Accumulator layout of wgmma with an fp32 D, m64nN (the same for every input type; "Matrix fragment for wgmma D",
// PTX ISA): warp w of the warpgroup holds rows 16w + g and 16w + g + 8 (g = lane / 4, t = lane % 4); of its N / 2
// registers, 4j + {0, 1} are the first row at columns 8j + 2t + {0, 1}, and 4j + {2, 3} the second row at the same
// columns: mma.sync's m16n8 C fragment (lab_mma.cuh), repeated along N.
//
// A operand from registers, 16-bit types, m64nNk16 ("Register fragment for matrix A", PTX ISA): four 32-bit registers
// of two elements each, the lower column in the low half; warp w holds rows 16w + g and 16w + g + 8: a0 = (row g,
// columns 2t, 2t+1), a1 = (row g+8, same columns), a2 = (row g, columns 2t+8, 2t+9), a3 = (row g+8, columns 2t+8,
// 2t+9): mma.sync's m16n8k16 A fragment (lab_mma.cuh) per warp. So the accumulator registers 8i..8i+7 of an m64nN
// product, packed pairwise ({d[8i], d[8i+1]}, {d[8i+2], d[8i+3]}, ...), are the A operand of columns 16i..16i+15 of
// that product taken as the k of the next (FlashAttention's P).
#pragma once

#include <cuda.h>  // CUtensorMap and its enums (types only: nothing from libcuda is linked)

#include <algorithm>  // std::min, std::max (launch_persistent)
#include <cstdint>
#include <type_traits>

#include "lab_async.cuh"  // smem_address
#include "lab_device.cuh"

// wgmma and setmaxnreg exist only in the architecture-specific sm_90a target; the kernels that use them do so under
// the same condition and trap otherwise.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define LAB_SM90A 1
#endif

// The "+f" operands of eight consecutive accumulator registers d[i..i+7]: wgmma's accumulator operand lists (64 or
// 128 registers a thread) are built from these.
#define LAB_WGMMA_F32X8(d, i)                                                                                       \
  "+f"(d[(i)]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), "+f"(d[(i) + 4]), "+f"(d[(i) + 5]),          \
      "+f"(d[(i) + 6]), "+f"(d[(i) + 7])

namespace lab {

// ---- mbarrier and TMA (sm_90): barriers in shared memory that count arrivals and bytes. --------------------------
// A barrier completes a phase when `count` arrivals and every byte announced with expect_tx have come in; a waiter
// names the phase by its parity (0, 1, 0, ...), so a barrier is reused once per phase with no reset.
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(count) : "memory");
}

// One arrival that also announces `bytes` to come from asynchronous copies completing on this barrier.
__device__ __forceinline__ void mbarrier_expect_bytes(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar)) : "memory");
}

// Blocks until the barrier's phase with this parity has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "wait_%=:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n @!done bra wait_%=;\n}\n" ::"r"(
          smem_address(bar)),
      "r"(parity)
      : "memory");
}

// A cluster barrier without release semantics ("barrier.cluster.arrive.relaxed"): it orders nothing the thread did
// before it, so it waits for none of the thread's stores; its wait still acquires. For a barrier that only says
// "every block has initialised its mbarriers" (fence_mbarrier_init orders that part).
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory"); }

// `v` stored into the shared memory of block `rank` of this block's cluster, at the address `local` has in this
// block's, as an asynchronous store completing (with its bytes) on that block's barrier at the address `bar` has
// here ("st.async", "mapa"). Nothing before it in this thread has to be visible first: unlike a release, it waits
// for none of the thread's earlier stores.
__device__ __forceinline__ uint32_t cluster_address(const void* local, unsigned rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem_address(local)), "r"(rank));
  return remote;
}
__device__ __forceinline__ void store_async_to_block(float* local, float v, uint64_t* bar, unsigned rank) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];\n" ::"r"(
                   cluster_address(local, rank)),
               "f"(v), "r"(cluster_address(bar, rank))
               : "memory");
}
__device__ __forceinline__ void store_async_to_block(float2* local, float2 v, uint64_t* bar, unsigned rank) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];\n" ::"r"(
                   cluster_address(local, rank)),
               "f"(v.x), "f"(v.y), "r"(cluster_address(bar, rank))
               : "memory");
}

// This block's rank in its cluster ("%cluster_ctarank"): 0 .. blocks a cluster - 1.
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

// One arrival on the barrier of block `rank` of this block's cluster at the address `bar` has here (rank may be this
// block's own), with the default release at the scope of the block: for a release of shared memory this thread's
// block has finished reading (wgmma's reads of a stage, complete once its group is waited for), where nothing this
// thread wrote needs to reach the other block first. A release at the scope of the cluster
// (`mbarrier.arrive.release.cluster`) puts a memory barrier before every arrival, which the warp waits out: in v8 of
// matmul it stalled the consumers more than everything else together (ncu at 49a860b: the "membar" stall,
// results/nvidia-h100-80gb-hbm3/matmul-multicast/profile.md).
__device__ __forceinline__ void mbarrier_arrive_in_block(uint64_t* bar, unsigned rank) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_address(bar, rank)) : "memory");
}

// `bytes` (a multiple of 16) of global memory at `src` into shared memory at `dst`, both 16-byte aligned, as one bulk
// asynchronous copy completing on `bar` (its bytes announced there first): no tensor map, a contiguous run only.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   smem_address(dst)),
               "l"(src), "r"(bytes), "r"(smem_address(bar))
               : "memory");
}

// One box of a 2-D tensor map (coordinates: column, row) into shared memory, completing on `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int col, int row, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row), "r"(smem_address(bar))
      : "memory");
}

// One box of a 3-D tensor map (coordinates: column, row, matrix) into shared memory, completing on `bar`.
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, int col, int row, int matrix,
                                            uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::
          "r"(smem_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row), "r"(matrix), "r"(smem_address(bar))
      : "memory");
}

// One box of shared memory into a 2-D tensor map at (column, row), as a bulk asynchronous group of this thread:
// the copy engine writes only the part of the box inside the tensor (rows and columns past its edges are dropped).
// The threads that wrote the box must each have run fence_proxy_async_shared, and met this one at a barrier, first.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int col, int row) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(smem_address(src)), "r"(col), "r"(row)
               : "memory");
}

// Closes the bulk group of the TMA stores this thread issued since the last commit.
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

// Waits until at most kPending of this thread's committed store groups still read their shared memory: the boxes
// of the others may be written again (their writes to global memory may still be in flight).
template <int kPending>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

// Waits until at most kPending of this thread's committed store groups are unfinished, their writes done.
template <int kPending>
__device__ __forceinline__ void tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Makes this thread's earlier writes to shared memory visible to the copy engine (the async proxy): before a TMA
// store reads what ordinary stores wrote.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Named barrier `id` (1-15; 0 is __syncthreads') for `threads` threads, a multiple of 32: one warpgroup's threads
// meet without stopping the others.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// ---- wgmma (sm_90a): the warpgroup tensor-core path, operands read from shared memory. ---------------------------
// A wgmma shared-memory matrix descriptor for a 128-byte-swizzled tile ("matrix descriptor"): start address,
// leading and stride byte offsets (all in 16-byte units), swizzle mode 1 = 128 B in bits 62-63. Tiles start on
// 1024-byte boundaries, so the base-offset field stays 0.
__device__ __forceinline__ uint64_t smem_descriptor(const void* tile, uint32_t leading_bytes, uint32_t stride_bytes) {
  return static_cast<uint64_t>((smem_address(tile) & 0x3FFFF) >> 4) |
         static_cast<uint64_t>((leading_bytes >> 4) & 0x3FFF) << 16 |
         static_cast<uint64_t>((stride_bytes >> 4) & 0x3FFF) << 32 | 1ull << 62;
}

// Makes initialized barriers visible to the copy engine (the async proxy), not just to the other threads.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

#ifdef LAB_SM90A
// The stage ring of a warp-specialized wgmma kernel (matmul.cu v5 and v7, fp8_matmul.cu v3 to v5): Cfg::Stages
// stages of an A tile (Cfg::kAStageBytes) and a B tile, A's first, in the dynamic shared memory, in the swizzled
// layout TMA writes and wgmma reads. 128-byte swizzling repeats every 1024 bytes and wgmma locates rows within that
// pattern from the address bits, so the ring starts on a 1024-byte boundary (Cfg::kSmemBytes keeps 1024 bytes of
// slack for it). Two barriers per stage: full[s] completes when stage s's bytes have landed (the consumers wait on
// it), empty[s] when every consumer warp is done reading it (the producer waits on it before refilling). Ends with
// the only block-wide barrier: from there on the warpgroups meet only on full/empty.
extern __shared__ unsigned char ring_smem[];

// reading_blocks: the blocks whose consumers read each stage (matmul.cu v8: both blocks of a cluster, whose producers
// each write into both), one arrival per consumer warp of each.
template <typename Cfg>
__device__ __forceinline__ void ring_setup(unsigned char*& a_tiles, unsigned char*& b_tiles, uint64_t* full,
                                           uint64_t* empty, int reading_blocks = 1) {
  unsigned char* smem = ring_smem + ((1024 - smem_address(ring_smem) % 1024) % 1024);
  a_tiles = smem;
  b_tiles = smem + Cfg::Stages * Cfg::kAStageBytes;
  if (threadIdx.x == 0) {
    for (int s = 0; s < Cfg::Stages; ++s) {
      mbarrier_init(&full[s], 1);  // the producer's expect_tx arrival; bytes do the rest
      mbarrier_init(&empty[s], Cfg::kConsumers * 4 * reading_blocks);
    }
    fence_mbarrier_init();
  }
  __syncthreads();
}

// One box of a 2-D tensor map into shared memory at `dst` in every block of this block's cluster whose bit is set in
// `blocks` (rank r: bit r), at the address `dst` has here, each copy completing on that block's barrier at the
// address `bar` has here: one read of global memory for blocks that need the same box (sm_90a).
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, int col, int row,
                                                      uint64_t* bar, uint16_t blocks) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row), "r"(smem_address(bar)), "h"(blocks)
      : "memory");
}

// Orders this warpgroup's earlier register and shared-memory accesses before the wgmma instructions that follow.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

// Closes the batch of wgmma instructions issued since the last commit.
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most kPending committed batches are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Pins the accumulator registers in place for the compiler (no instruction is emitted). wgmma writes them
// asynchronously, but to the compiler the asm statement wrote them when it was issued: placed right after
// wgmma_wait_group, this keeps arithmetic on the accumulators from being scheduled before the wait, since it must
// read what this statement "wrote". (CUTLASS's warpgroup_fence_operand.)
template <int kRegisters>
__device__ __forceinline__ void wgmma_fence_operand(float (&d)[kRegisters]) {
#pragma unroll
  for (int i = 0; i < kRegisters; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The same for registers a wgmma reads as its A operand: placed after the wait, it keeps them live (unchanged) until
// the wgmma that reads them asynchronously is known to be done.
template <int kRegisters>
__device__ __forceinline__ void wgmma_fence_operand(uint32_t (&a)[kRegisters]) {
#pragma unroll
  for (int i = 0; i < kRegisters; ++i) asm volatile("" : "+r"(a[i])::"memory");
}

// ---- 16-bit wgmma m64nNk16, N = 64 or 128 (attention.cu v4): A from shared memory or registers. ---------------------
// The accumulator operand lists of 32 and 64 registers, and the "+f" operands that fill them.
#define LAB_WGMMA_D32                                                                                                  \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "              \
  "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define LAB_WGMMA_D64                                                                                                  \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "              \
  "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, "          \
  "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define LAB_WGMMA_F32X32(d)                                                                                            \
  LAB_WGMMA_F32X8(d, 0), LAB_WGMMA_F32X8(d, 8), LAB_WGMMA_F32X8(d, 16), LAB_WGMMA_F32X8(d, 24)
#define LAB_WGMMA_F32X64(d)                                                                                            \
  LAB_WGMMA_F32X32(d), LAB_WGMMA_F32X8(d, 32), LAB_WGMMA_F32X8(d, 40), LAB_WGMMA_F32X8(d, 48),                         \
      LAB_WGMMA_F32X8(d, 56)

// One wgmma of the given shape ("m64n64k16" / "m64n128k16") and 16-bit type ("f16" / "bf16"). SOURCES is the operand
// text after the accumulator list (A's descriptor or register list, then B's descriptor), SCALE_D the operand that
// holds `accumulate`, TRANS_B the text after imm-scale-b (imm-trans-a, where the form has one, then imm-trans-b), the
// variadic arguments the input constraints. scale-d is a predicate (false: d is overwritten, not read, so no
// instruction needs to zero it first), set from an integer as CUTLASS does; imm-scale-a and imm-scale-b = 1.
#define LAB_WGMMA_16BIT(SHAPE, TYPE, DLIST, SOURCES, SCALE_D, TRANS_B, OUTPUTS, ...)                                   \
  asm volatile("{\n .reg .pred accumulate;\n setp.ne.b32 accumulate, " SCALE_D ", 0;\n"                                \
               "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " " DLIST ", " SOURCES                      \
               ", accumulate, 1, 1" TRANS_B ";\n}\n"                                                                   \
               : OUTPUTS                                                                                               \
               : __VA_ARGS__)

// The four (N, type) forms of one operand pattern, the operand numbers given for each N: the kernels name N and T as
// template arguments.
#define LAB_WGMMA_16BIT_FORMS(T, N, SRC32, SRC64, SCALE32, SCALE64, TRANS32, TRANS64, d, ...)                          \
  static_assert(N == 64 || N == 128, "m64n64k16 or m64n128k16");                                                       \
  if constexpr (N == 64 && std::is_same_v<T, __half>) {                                                                \
    LAB_WGMMA_16BIT("m64n64k16", "f16", LAB_WGMMA_D32, SRC32, SCALE32, TRANS32, LAB_WGMMA_F32X32(d), __VA_ARGS__);     \
  } else if constexpr (N == 64) {                                                                                      \
    LAB_WGMMA_16BIT("m64n64k16", "bf16", LAB_WGMMA_D32, SRC32, SCALE32, TRANS32, LAB_WGMMA_F32X32(d),                  \
                    __VA_ARGS__);                                                                                      \
  } else if constexpr (std::is_same_v<T, __half>) {                                                                    \
    LAB_WGMMA_16BIT("m64n128k16", "f16", LAB_WGMMA_D64, SRC64, SCALE64, TRANS64, LAB_WGMMA_F32X64(d),                  \
                    __VA_ARGS__);                                                                                      \
  } else {                                                                                                             \
    LAB_WGMMA_16BIT("m64n128k16", "bf16", LAB_WGMMA_D64, SRC64, SCALE64, TRANS64, LAB_WGMMA_F32X64(d),                 \
                    __VA_ARGS__);                                                                                      \
  }

// d (64×N fp32, N / 2 a thread) = A (64×16) · B (16×N), plus d where `accumulate`; both operands in shared memory
// through descriptors, A K-major, B K-major (kTransB false) or MN-major (true: imm-trans-b, 16-bit types only).
template <typename T, int N, bool kTransB>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  LAB_WGMMA_16BIT_FORMS(T, N, "%32, %33", "%64, %65", "%34", "%66", ", 0, %35", ", 0, %67", d, "l"(desc_a),
                        "l"(desc_b), "r"(static_cast<int>(accumulate)), "n"(kTransB ? 1 : 0));
}

// The same with A (64×16, K-major) from registers, four a thread in the layout above; this form has no imm-trans-a.
// The registers are read asynchronously: they must stay unchanged until a wait covers this wgmma.
template <typename T, int N, bool kTransB>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b, bool accumulate) {
  LAB_WGMMA_16BIT_FORMS(T, N, "{%32, %33, %34, %35}, %36", "{%64, %65, %66, %67}, %68", "%37", "%69", ", %38",
                        ", %70", d, "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
                        "r"(static_cast<int>(accumulate)), "n"(kTransB ? 1 : 0));
}
#undef LAB_WGMMA_16BIT_FORMS
#undef LAB_WGMMA_16BIT
#undef LAB_WGMMA_F32X64
#undef LAB_WGMMA_F32X32
#undef LAB_WGMMA_D64
#undef LAB_WGMMA_D32

// A warpgroup gives back registers (dec) or claims them (inc) so that one warpgroup may hold more than an even
// share of the register file; every warp of the warpgroup executes it.
template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
#endif  // LAB_SM90A

// Whether the current GPU runs sm_90a code (compute capability 9.0 exactly). The wgmma kernels are built without
// their instructions for any other architecture and would only trap, so their launchers refuse to start them there.
inline bool runs_sm90a() {
  return device_attribute(cudaDevAttrComputeCapabilityMajor) == 9 &&
         device_attribute(cudaDevAttrComputeCapabilityMinor) == 0;
}

// ---- Tensor maps (driver API, the launchers): how the copy engine sees a matrix. -------------------------------
// C++ alias of the driver's tensor-map encoder; the function is fetched at run time through the runtime API, so the
// extension does not link libcuda (absent on build machines without a driver).
using EncodeTiledFn = decltype(&cuTensorMapEncodeTiled);

// The driver's tensor-map encoder, looked up once.
inline EncodeTiledFn tensor_map_encoder() {
  static EncodeTiledFn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      p = nullptr;
    return reinterpret_cast<EncodeTiledFn>(p);
  }();
  return fn;
}

// The tensor-map element type of T. The copy engine only moves bytes (no conversion, zero fill is zero bytes), so
// 8-bit floats travel as UINT8.
template <typename T>
constexpr CUtensorMapDataType tensor_map_type() {
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, uint8_t>,
                "tensor maps here carry fp16, bf16 or bytes");
  if constexpr (std::is_same_v<T, __half>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

// A tensor of kRank dimensions (dims innermost first, byte strides of the outer ones) as a TMA source: boxes of
// box_rows rows × 128 bytes of columns (the widest box 128-byte swizzling allows) × 1 of each outer dimension,
// swizzled; reads past the edges return zeros. Strides must be multiples of 16 bytes and the base 16-byte aligned,
// or the encoder refuses.
template <typename T, int kRank>
bool encode_swizzled_map(CUtensorMap* map, const T* base, const cuuint64_t (&dims)[kRank],
                         const cuuint64_t (&strides)[kRank - 1], int box_rows) {
  const EncodeTiledFn encode = tensor_map_encoder();
  if (!encode) return false;
  cuuint32_t box[kRank], element_strides[kRank];
  for (int i = 0; i < kRank; ++i) box[i] = element_strides[i] = 1;
  box[0] = 128 / sizeof(T);
  box[1] = static_cast<cuuint32_t>(box_rows);
  return encode(map, tensor_map_type<T>(), kRank, const_cast<T*>(base), dims, strides, box, element_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// A row-major rows×cols matrix (the row pitch cols·sizeof(T)), boxes of box_rows rows × 128 bytes.
template <typename T>
bool encode_tensor_map(CUtensorMap* map, const T* base, int64_t rows, int64_t cols, int box_rows) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t row_stride[1] = {static_cast<cuuint64_t>(cols) * sizeof(T)};
  return encode_swizzled_map(map, base, dims, row_stride, box_rows);
}

// `matrices` row-major rows×cols matrices one after another, as one 3-D source (coordinates: column, row, matrix),
// boxes of box_rows rows × 128 bytes of one matrix: a box never reaches into the next matrix, whose rows would
// otherwise follow the last row of this one; rows past `rows` read as zeros instead.
template <typename T>
bool encode_tensor_map_3d(CUtensorMap* map, const T* base, int64_t matrices, int64_t rows, int64_t cols,
                          int box_rows) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(matrices)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(cols) * sizeof(T),
                                 static_cast<cuuint64_t>(rows) * static_cast<cuuint64_t>(cols) * sizeof(T)};
  return encode_swizzled_map(map, base, dims, strides, box_rows);
}

// ---- Block tiles over C (matmul.cu v4 and v5, fp8_matmul.cu v3): grid order, launch, paired stores. -------------
constexpr int kTileGroupM = 8;

// Grouped tile order for L2 reuse: block ids run down kTileGroupM tile-rows, then one tile-column right, so the
// blocks resident at one time share a few row panels of A and column panels of B instead of streaming all of B.
__device__ __forceinline__ void grouped_tile(int id, int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
  const int per_group = kTileGroupM * tiles_n;
  const int first_m = id / per_group * kTileGroupM;
  const int group_rows = min(tiles_m - first_m, kTileGroupM);
  const int in_group = id % per_group;
  tile_m = first_m + in_group % group_rows;
  tile_n = in_group / group_rows;
}

// One block per Cfg::BM × Cfg::BN tile of the m × n output, in a 1-D grid (the kernels order the tiles themselves).
template <typename Cfg, typename Kernel, typename... Args>
cudaError_t launch_over_tiles(Kernel kernel, int64_t m, int64_t n, cudaStream_t stream, Args... args) {
  // Above 48 KB of dynamic shared memory a kernel must opt in.
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes);
  if (err != cudaSuccess) return err;
  const int64_t tiles = static_cast<int64_t>(blocks_for(m, Cfg::BM)) * blocks_for(n, Cfg::BN);
  if (tiles > 0x7fffffff) return cudaErrorInvalidConfiguration;
  kernel<<<static_cast<unsigned int>(tiles), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(args...);
  return cudaGetLastError();
}

// A persistent grid (fp8_matmul.cu v4 and v5, matmul.cu v7): one block per SM, never more blocks than the
// Cfg::BM × Cfg::BN tiles of the m × n output; each block walks tiles blockIdx.x, + gridDim.x, ... itself.
template <typename Cfg, typename Kernel, typename... Args>
cudaError_t launch_persistent(Kernel kernel, int smem_bytes, int64_t m, int64_t n, cudaStream_t stream,
                              Args... args) {
  const int64_t tiles = static_cast<int64_t>(blocks_for(m, Cfg::BM)) * blocks_for(n, Cfg::BN);
  if (tiles > 0x7fffffff) return cudaErrorInvalidConfiguration;
  const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
  if (err != cudaSuccess) return err;
  const int blocks = static_cast<int>(std::min<int64_t>(tiles, std::max(sm_count(), 1)));
  kernel<<<blocks, Cfg::kThreads, smem_bytes, stream>>>(args...);
  return cudaGetLastError();
}

// (x, y) into C[row][col], C[row][col + 1], as one 32-bit store where both are in range and n is even: the two
// adjacent columns an accumulator fragment holds (above, and lab_mma.cuh).
template <typename T>
__device__ __forceinline__ void store_pair(T* c, int row, int col, int m, int n, float x, float y) {
  if (row >= m || col >= n) return;
  T* p = c + static_cast<int64_t>(row) * n + col;
  if (col + 1 < n && n % 2 == 0) {
    *reinterpret_cast<uint32_t*>(p) = pack_pair<T>(x, y);
  } else {
    p[0] = from_float<T>(x);
    if (col + 1 < n) p[1] = from_float<T>(y);
  }
}

// C through shared memory for TMA stores (fp8_matmul.cu v5, matmul.cu v7): a thread's column pairs of accumulator
// group j (the layout above: rows local_row and local_row + 8 of the warpgroup's 64, columns 8j + 2t + {0, 1})
// rounded to 16-bit T and written into `box`, the box of 64 rows × 128 bytes holding those columns, swizzled as a
// tensor map's 128-byte mode lays it out: columns 8j..8j+7 are the 16-byte chunk j % 8 of their row, its place
// XORed with the row's index mod 8 (local_row % 8 = lane / 4, the same for both rows). So the eight rows a warp's
// store touches fall in eight different chunks: no bank conflicts.
template <typename T>
__device__ __forceinline__ void stage_pairs(unsigned char* box, int local_row, int j, int lane, float top0,
                                            float top1, float bottom0, float bottom1) {
  static_assert(sizeof(T) == 2, "a 128-byte row of the box holds 64 16-bit values");
  unsigned char* top = box + local_row * 128 + (((j % 8) ^ (lane / 4)) << 4) + (lane % 4) * 4;
  *reinterpret_cast<uint32_t*>(top) = pack_pair<T>(top0, top1);
  *reinterpret_cast<uint32_t*>(top + 8 * 128) = pack_pair<T>(bottom0, bottom1);
}

}  // namespace lab
