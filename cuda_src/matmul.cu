// Matrix multiply C = A @ B, A M×K and B K×N row-major, fp32 accumulation, C in the input dtype.
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/matmul.md):
//   v1 naive      one thread per output element, a K-long dot product straight from global memory
//   v2 smem       32×32 output tiles, the A and B tiles staged through shared memory
//   v3 regblock   128×128 block tiles, an 8×8 patch of C per thread in registers, vector loads, double buffering
//   v4 mma        fp16/bf16 on the tensor cores: ldmatrix + mma.sync, a 4-stage cp.async pipeline
//   v5 wgmma      Hopper's warpgroup MMA fed by TMA, producer and consumer warpgroups on mbarriers
//   v6 warptile   fp32 only, the fp32 path's step after v3 regblock: 64×64 warp tiles, 16×8 outputs a thread,
//                 BK = 16, a 3-stage cp.async ring, fragments double-buffered in registers
//   v7 tmastore   fp16/bf16, the tensor-core path's step after v5: v5 on a persistent grid (one block per SM,
//                 the next tile's K tiles loaded during this one's epilogue), C written through shared memory by
//                 TMA stores
//   v8 multicast  + clusters of two blocks computing the tiles one above the other, each copying half of their
//                 shared B tile into both blocks' shared memory (TMA multicast): a third less read from L2
//
// In the order of siboehm's SGEMM worklog: each kernel's comment says what it changes against the one before and
// why that should be faster (v6, which returns to fp32 after the tensor-core steps, against v3; v7 against v5; v8
// against v7), and v4 to v8 say inside the kernel what each stage of it does. The PTX instructions and the driver call they use are
// wrapped, in the lab's headers and one section before v1, so the kernels read as the algorithm. Spec:
// specs/matmul.py. Triton side: triton_src/matmul.py.
//
// At 4096³ a GEMM does ~1400 flops per byte it must move (fp16), so memory bandwidth never limits a good kernel: what
// limits it is how many operands each loaded byte feeds (data reuse in shared memory and registers) and, on the
// tensor-core path, keeping the MMA units fed. The yardstick is cuBLAS (torch:eager) at the same shape and dtype.
#include "lab.h"

cudaError_t launch_matmul_naive(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                int64_t k, cudaStream_t stream);
cudaError_t launch_matmul_smem(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                               int64_t k, cudaStream_t stream);
cudaError_t launch_matmul_regblock(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                   int64_t k, cudaStream_t stream);
cudaError_t launch_matmul_mma(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                              int64_t k, cudaStream_t stream);
cudaError_t launch_matmul_wgmma(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                int64_t k, cudaStream_t stream);
cudaError_t launch_matmul_warptile(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                   int64_t k, cudaStream_t stream);
cudaError_t launch_matmul_tmastore(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                   int64_t k, cudaStream_t stream);
cudaError_t launch_matmul_multicast(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                    int64_t k, cudaStream_t stream);

#ifdef __CUDACC__
#include <type_traits>

#include "lab_async.cuh"
#include "lab_cluster.cuh"
#include "lab_device.cuh"
#include "lab_hopper.cuh"
#include "lab_mma.cuh"

// ==== PTX and driver wrappers =====================================================================================
// Each inline-asm instruction v4 to v6 use, as a function named after it, and the driver call that encodes v5's
// TMA tensor maps: the lab's headers hold those other kernels share, this section the rest (v5's 16-bit wgmma).
// Nothing here decides tiling or order; the kernels below do. (PTX ISA names in quotes.)

// cp.async and smem_address: lab_async.cuh (shared with fp8_matmul.cu and attention.cu).
using lab::cp_async_4;
using lab::cp_async_16;
using lab::cp_async_commit;
using lab::cp_async_wait;
using lab::smem_address;


// ldmatrix and mma.sync (sm_80+, v4), the per-warp tensor-core path: lab_mma.cuh (shared with attention.cu).
using lab::ldmatrix_x4;
using lab::ldmatrix_x4_trans;
using lab::mma_16816;

// mbarrier, TMA, wgmma and setmaxnreg (sm_90 / sm_90a, v5 and v7), the tensor-map encoder (their launchers), the
// block-tile grid and paired stores of v4 and v5, and v7's persistent launch and staged C (lab::launch_persistent,
// lab::stage_pairs, TMA stores, named barriers): lab_hopper.cuh (shared with fp8_matmul.cu).
using lab::encode_tensor_map;
using lab::grouped_tile;
using lab::launch_over_tiles;
using lab::mbarrier_arrive;
using lab::mbarrier_expect_bytes;
using lab::mbarrier_wait;
using lab::smem_descriptor;
using lab::store_pair;
using lab::tma_load_2d;

#ifdef LAB_SM90A
using lab::setmaxnreg_dec;
using lab::setmaxnreg_inc;
using lab::wgmma_commit_group;
using lab::wgmma_fence;
using lab::wgmma_wait_group;

// d (64×256 fp32, 128 per thread) += A (64×16, K-major) · B (16×256, MN-major: imm-trans-b = 1).
#define LAB_WGMMA_M64N256K16(TYPE)                                                                                    \
  asm volatile(                                                                                                        \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " "                                                 \
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "              \
      "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "                \
      "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "                \
      "%59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, "                \
      "%78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, "                \
      "%97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, "            \
      "%114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "                          \
      "%128, %129, 1, 1, 1, 0, 1;\n"                                                                                   \
      : LAB_WGMMA_F32X8(d, 0), LAB_WGMMA_F32X8(d, 8), LAB_WGMMA_F32X8(d, 16), LAB_WGMMA_F32X8(d, 24),                  \
        LAB_WGMMA_F32X8(d, 32), LAB_WGMMA_F32X8(d, 40), LAB_WGMMA_F32X8(d, 48), LAB_WGMMA_F32X8(d, 56),                \
        LAB_WGMMA_F32X8(d, 64), LAB_WGMMA_F32X8(d, 72), LAB_WGMMA_F32X8(d, 80), LAB_WGMMA_F32X8(d, 88),                \
        LAB_WGMMA_F32X8(d, 96), LAB_WGMMA_F32X8(d, 104), LAB_WGMMA_F32X8(d, 112), LAB_WGMMA_F32X8(d, 120)              \
      : "l"(desc_a), "l"(desc_b))

template <typename T>
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  if constexpr (std::is_same_v<T, __half>) {
    LAB_WGMMA_M64N256K16("f16");
  } else {
    LAB_WGMMA_M64N256K16("bf16");
  }
}
#undef LAB_WGMMA_M64N256K16
#endif  // LAB_SM90A

// ==== The steps ===================================================================================================

// ---- v1 naive: one thread per output element, a K-long dot product straight from global memory. ------------------
// threadIdx.x runs along N, so a warp reads one A element (a broadcast) and 32 consecutive B elements (one coalesced
// 128-byte line) per step, and writes 32 consecutive C elements. Still, every operand is fetched from L1/L2 once per
// multiply-add: 2 loads per FMA keep the load pipes, not the FMA units, busy. In fp16/bf16 it is much further behind
// cuBLAS than in fp32, since cuBLAS uses the tensor cores there (measured: results/nvidia-h200/matmul.md).
template <typename T>
__global__ void matmul_naive_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n,
                                    int k) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  const T* a_row = a + static_cast<int64_t>(row) * k;  // 64-bit: row * k can pass 2^31
  float acc = 0.0f;
  for (int i = 0; i < k; ++i) acc += lab::to_float(a_row[i]) * lab::to_float(b[static_cast<int64_t>(i) * n + col]);
  c[static_cast<int64_t>(row) * n + col] = lab::from_float<T>(acc);
}

cudaError_t launch_matmul_naive(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                int64_t k, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    const dim3 threads(32, 8);
    const dim3 blocks(lab::blocks_for(n, threads.x), lab::blocks_for(m, threads.y));
    if (blocks.y > 65535) return cudaErrorInvalidConfiguration;
    matmul_naive_kernel<T><<<blocks, threads, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b),
                                                          static_cast<T*>(c), static_cast<int>(m),
                                                          static_cast<int>(n), static_cast<int>(k));
    return cudaGetLastError();
  });
}

// ---- v2 smem: 32×32 output tiles, the A and B tiles staged through shared memory. --------------------------------
// Each element a block loads from global memory is now used by 32 threads from shared memory instead of being
// fetched 32 times, so global/L2 traffic drops 32×. The inner loop still does one shared-memory load per FMA (As is
// a broadcast, Bs one conflict-free row), so shared-memory bandwidth is the new limit (measured:
// results/nvidia-h200/matmul.md).
constexpr int kSmemTile = 32;

template <typename T>
__global__ void matmul_smem_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int m, int n,
                                   int k) {
  // Widened to fp32 on the way in, so the inner loop is the same for every dtype.
  __shared__ float as[kSmemTile][kSmemTile];
  __shared__ float bs[kSmemTile][kSmemTile];
  const int tx = threadIdx.x, ty = threadIdx.y;  // a warp is one ty: As[ty][i] broadcasts, Bs[i][tx] is one row
  const int row = blockIdx.y * kSmemTile + ty;
  const int col = blockIdx.x * kSmemTile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < k; k0 += kSmemTile) {
    // Out-of-range elements load as 0 and so add nothing: any M, N, K works.
    as[ty][tx] = (row < m && k0 + tx < k) ? lab::to_float(a[static_cast<int64_t>(row) * k + k0 + tx]) : 0.0f;
    bs[ty][tx] = (k0 + ty < k && col < n) ? lab::to_float(b[static_cast<int64_t>(k0 + ty) * n + col]) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kSmemTile; ++i) acc += as[ty][i] * bs[i][tx];
    __syncthreads();  // the next tile overwrites what slower warps may still be reading
  }
  if (row < m && col < n) c[static_cast<int64_t>(row) * n + col] = lab::from_float<T>(acc);
}

cudaError_t launch_matmul_smem(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                               int64_t k, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    const dim3 threads(kSmemTile, kSmemTile);
    const dim3 blocks(lab::blocks_for(n, kSmemTile), lab::blocks_for(m, kSmemTile));
    if (blocks.y > 65535) return cudaErrorInvalidConfiguration;
    matmul_smem_kernel<T><<<blocks, threads, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b),
                                                         static_cast<T*>(c), static_cast<int>(m),
                                                         static_cast<int>(n), static_cast<int>(k));
    return cudaGetLastError();
  });
}

// ---- v3 regblock: 128×128 block tiles, 8×8 outputs per thread held in registers, BK = 8, double-buffered. -------
// What changes against smem, and why each helps:
//  * Register blocking: each thread keeps an 8×8 accumulator tile and, per k, loads 8 A values and 8 B values from
//    shared memory for 64 FMAs: 4 FMAs per shared-memory float instead of 1, so the FMA units become the limit.
//  * 128-bit shared-memory loads: the 8 values come as two float4 loads each. For that, the A tile is stored
//    transposed (As[k][m]): a thread's 4 consecutive rows of A are then 4 consecutive floats. A thread's outputs
//    are two 4×4 quadrants 64 apart (rows ty*4.. and 64+ty*4.., likewise columns), so the 16 threads along a row
//    read 256 contiguous bytes of Bs: no bank conflicts (a contiguous 8×8 patch per thread would make 32-byte
//    strides and 2-way conflicts).
//  * Vector global loads: each thread fetches 4 consecutive elements of A and of B per k-tile (one 16-byte load for
//    fp32, 8 bytes for fp16/bf16) when the row allows it; edges fall back to checked scalar loads.
//  * Double buffering: the next k-tile's global loads are issued into registers before the current tile's FMAs, and
//    land in the other shared buffer after them, so global latency hides behind 512 FMAs per thread and one
//    __syncthreads per k-tile suffices.
// fp16/bf16 are widened to fp32 on load: this is the SIMT fp32 kernel for every dtype (tensor cores are v4).
// fp16/bf16 therefore run at about the fp32 rate (measured: results/nvidia-h200/matmul.md; cuBLAS with TF32 off).
constexpr int kRbBM = 128, kRbBN = 128, kRbBK = 8, kRbThreads = 256;
constexpr int kRbPadA = 4;  // As rows are 132 floats: the two k-halves a warp stores to land in different banks
// 2 caps registers at 128 so two 256-thread blocks share an SM (16 warps to hide shared-memory latency and each
// other's barriers); ptxas then spills a few pointer values, reloaded from L1 once per k-tile (6 loads per 512 FMAs),
// which costs less than halving the warps.
constexpr int kRbMinBlocks = 2;

// Four consecutive T as one aligned load/store (16 bytes of fp32, 8 of fp16/bf16).
template <typename T>
struct alignas(4 * sizeof(T)) Quad {
  T v[4];
};

// Elements p[0..3] widened to fp32; those at or past `valid` read as 0 (and are not touched).
template <typename T, bool kVec>
__device__ __forceinline__ float4 load4(const T* p, int valid) {
  if (kVec && valid >= 4) {
    const Quad<T> q = *reinterpret_cast<const Quad<T>*>(p);
    return make_float4(lab::to_float(q.v[0]), lab::to_float(q.v[1]), lab::to_float(q.v[2]), lab::to_float(q.v[3]));
  }
  float4 out;
  out.x = valid > 0 ? lab::to_float(p[0]) : 0.0f;
  out.y = valid > 1 ? lab::to_float(p[1]) : 0.0f;
  out.z = valid > 2 ? lab::to_float(p[2]) : 0.0f;
  out.w = valid > 3 ? lab::to_float(p[3]) : 0.0f;
  return out;
}

template <typename T, bool kVec>
__device__ __forceinline__ void store4(T* p, int valid, const float* v) {
  if (kVec && valid >= 4) {
    Quad<T> q;
#pragma unroll
    for (int i = 0; i < 4; ++i) q.v[i] = lab::from_float<T>(v[i]);
    *reinterpret_cast<Quad<T>*>(p) = q;
    return;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
    if (i < valid) p[i] = lab::from_float<T>(v[i]);
}

// kVec: every row of A, B and C starts 4-element aligned (K % 4 == 0, N % 4 == 0, aligned bases), so 4-element
// groups that are fully in range can use one vector access.
template <typename T, bool kVec>
__global__ void __launch_bounds__(kRbThreads, kRbMinBlocks) matmul_regblock_kernel(const T* __restrict__ a,
                                                                                   const T* __restrict__ b,
                                                                                   T* __restrict__ c, int m, int n,
                                                                                   int k) {
  __shared__ __align__(16) float as[2][kRbBK][kRbBM + kRbPadA];
  __shared__ __align__(16) float bs[2][kRbBK][kRbBN];
  const int tid = threadIdx.x;
  const int bm = blockIdx.y * kRbBM, bn = blockIdx.x * kRbBN;
  // Loading: the A tile is 128 rows × 8 k (two 4-wide pieces per row), the B tile 8 k × 128 columns (32 per row).
  const int a_row = tid / 2, a_k = (tid % 2) * 4;
  const int b_k = tid / 32, b_col = (tid % 32) * 4;
  const bool a_row_ok = bm + a_row < m;
  const T* a_src = a + static_cast<int64_t>(a_row_ok ? bm + a_row : 0) * k + a_k;
  // Computing: thread (ty, tx) owns rows {ty*4 + i, 64 + ty*4 + i} and columns {tx*4 + j, 64 + tx*4 + j}.
  const int ty = tid / 16, tx = tid % 16;

  float acc[8][8] = {};
  const int k_tiles = (k + kRbBK - 1) / kRbBK;

  auto fetch = [&](int k0, float4& a_val, float4& b_val) {
    a_val = load4<T, kVec>(a_src + k0, a_row_ok ? k - (k0 + a_k) : 0);
    const bool b_row_ok = k0 + b_k < k;
    const T* b_src = b + (b_row_ok ? static_cast<int64_t>(k0 + b_k) * n + bn + b_col : 0);
    b_val = load4<T, kVec>(b_src, b_row_ok ? n - (bn + b_col) : 0);
  };
  auto stash = [&](int buf, const float4& a_val, const float4& b_val) {
    as[buf][a_k + 0][a_row] = a_val.x;
    as[buf][a_k + 1][a_row] = a_val.y;
    as[buf][a_k + 2][a_row] = a_val.z;
    as[buf][a_k + 3][a_row] = a_val.w;
    *reinterpret_cast<float4*>(&bs[buf][b_k][b_col]) = b_val;
  };

  float4 a_next, b_next;
  fetch(0, a_next, b_next);
  stash(0, a_next, b_next);
  __syncthreads();
  for (int t = 0; t < k_tiles; ++t) {
    const int cur = t & 1;
    const bool more = t + 1 < k_tiles;
    if (more) fetch((t + 1) * kRbBK, a_next, b_next);  // in flight during the FMAs below
#pragma unroll
    for (int kk = 0; kk < kRbBK; ++kk) {
      const float4 a_lo = *reinterpret_cast<const float4*>(&as[cur][kk][ty * 4]);
      const float4 a_hi = *reinterpret_cast<const float4*>(&as[cur][kk][64 + ty * 4]);
      const float4 b_lo = *reinterpret_cast<const float4*>(&bs[cur][kk][tx * 4]);
      const float4 b_hi = *reinterpret_cast<const float4*>(&bs[cur][kk][64 + tx * 4]);
      const float av[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
      const float bv[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += av[i] * bv[j];
    }
    if (more) stash(cur ^ 1, a_next, b_next);  // the other buffer: last read before the previous barrier
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = bm + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
    if (row >= m) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = bn + half * 64 + tx * 4;
      if (col < n) store4<T, kVec>(c + static_cast<int64_t>(row) * n + col, n - col, &acc[i][half * 4]);
    }
  }
}

cudaError_t launch_matmul_regblock(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                   int64_t k, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr uintptr_t kAlign = 4 * sizeof(T);
    const bool vec = k % 4 == 0 && n % 4 == 0 && reinterpret_cast<uintptr_t>(a) % kAlign == 0 &&
                     reinterpret_cast<uintptr_t>(b) % kAlign == 0 && reinterpret_cast<uintptr_t>(c) % kAlign == 0;
    const dim3 blocks(lab::blocks_for(n, kRbBN), lab::blocks_for(m, kRbBM));
    if (blocks.y > 65535) return cudaErrorInvalidConfiguration;
    auto kernel = vec ? matmul_regblock_kernel<T, true> : matmul_regblock_kernel<T, false>;
    kernel<<<blocks, kRbThreads, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c),
                                             static_cast<int>(m), static_cast<int>(n), static_cast<int>(k));
    return cudaGetLastError();
  });
}

// ---- v4 mma: tensor cores (fp16/bf16 in, fp32 accumulate) via mma.sync, fed by ldmatrix and a cp.async pipeline. --
// What changes against regblock, and why each helps:
//  * mma.sync.m16n8k16: one warp-wide instruction does a 16×8×16 product (4096 flops) on the tensor cores, which
//    have ~15× the fp32 FMA throughput for fp16/bf16. The per-thread register layout of its operands is fixed by
//    PTX; ldmatrix loads exactly that layout from shared memory, four 8×8 matrices per instruction (.trans for B,
//    which is stored k-major and needed n-major).
//  * Tiles (MmaTile below): 128×128 per block, 4 warps each owning 64×64 (4×8 mma tiles, 128 fp32 accumulators
//    per thread), BK = 32. A 64×64 warp tile needs 8 ldmatrix.x4 per 32 mma: enough reuse that shared memory keeps up.
//  * Padded shared rows (A: BK+8, B: BN+8 halves): the 8 rows one ldmatrix phase reads then fall in 8 different
//    16-byte bank groups, so ldmatrix is conflict-free.
//  * cp.async 4-stage pipeline: global→shared copies bypass registers and run asynchronously; three k-tiles are in
//    flight while the fourth is multiplied, which hides DRAM/L2 latency with one __syncthreads per k-tile. Rows past
//    M/N or K are zero-filled by cp.async's src-size operand (0 bytes read, 16 bytes of zeros written).
//  * Grouped tile order: consecutive blocks walk 8 row-tiles down before moving right, so the A and B tiles a wave
//    of blocks shares stay in L2.
// When K or N is not a multiple of 8 (or a base is misaligned), 16-byte cp.async would straddle rows; those shapes
// take the same kernel with checked scalar loads instead (kAligned = false), correct but without the async copies.
// Far above regblock, still well short of cuBLAS (measured: results/nvidia-h200/matmul.md). Seven tile shapes
// (128×128 with BK 32/64, 128×256, 256×128, 4 or 8 warps, 3 or 4 stages) all landed close together, this one on top,
// so the tile is not what limits it. On Hopper, mma.sync is the older per-warp tensor-core path; cuBLAS and Triton's
// tl.dot use wgmma instead (warpgroup-wide, asynchronous, operands read straight from shared memory, fed by TMA).
// Closing the gap takes such a kernel: v5.
//
// The block tile: BM×BN×BK per block, WarpsM×WarpsN warps (each owning a (BM/WarpsM)×(BN/WarpsN) piece), Stages
// k-tiles in the pipeline, kMinBlocks blocks per SM asked of the register allocator. 128×128×32, 4 warps of 64×64,
// 4 stages: 128 accumulators per thread, 74 KB of shared memory, two blocks per SM.
struct MmaTile {
  static constexpr int BM = 128, BN = 128, BK = 32, WarpsM = 2, WarpsN = 2, Stages = 4;
  static constexpr int kMinBlocks = 2;
  static constexpr int kThreads = WarpsM * WarpsN * 32;
  static constexpr int kWarpM = BM / WarpsM, kWarpN = BN / WarpsN;  // one warp's tile
  static constexpr int kTilesM = kWarpM / 16, kTilesN = kWarpN / 8;  // m16n8 mma tiles per warp
  static constexpr int kAStride = BK + 8, kBStride = BN + 8;        // padded rows, in elements
  static constexpr int kAStage = BM * kAStride, kBStage = BK * kBStride;
  static constexpr int kSmemBytes = Stages * (kAStage + kBStage) * 2;
  static constexpr int kAChunks = BM * BK / 8 / kThreads, kBChunks = BK * BN / 8 / kThreads;  // 16 B per thread
  static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0 && BK % 16 == 0, "warp tiles are whole ldmatrix.x4 loads");
  static_assert(BM * BK % (8 * kThreads) == 0 && BK * BN % (8 * kThreads) == 0, "chunks split evenly");
};
// Eight consecutive elements (row, col..col+7) of a rows×cols row-major matrix into 16 bytes of shared memory.
template <typename T, bool kAligned>
__device__ __forceinline__ void load_chunk8(T* dst, const T* src, int row, int col, int rows, int cols) {
  if constexpr (kAligned) {
    // cols % 8 == 0 here, so a chunk is wholly inside or wholly outside the matrix.
    const bool valid = row < rows && col < cols;
    cp_async_16(smem_address(dst), valid ? src + static_cast<int64_t>(row) * cols + col : src, valid);
  } else {
    Quad<T> lo, hi;
    const T zero = lab::from_float<T>(0.0f);
    const T* p = src + (row < rows ? static_cast<int64_t>(row) * cols + col : 0);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      lo.v[e] = (row < rows && col + e < cols) ? p[e] : zero;
      hi.v[e] = (row < rows && col + 4 + e < cols) ? p[4 + e] : zero;
    }
    reinterpret_cast<Quad<T>*>(dst)[0] = lo;
    reinterpret_cast<Quad<T>*>(dst)[1] = hi;
  }
}

// The k loop of v4 and v6: k-tiles staged through a ring of kStages shared-memory stages by cp.async, tile t
// multiplied while the next kStages-1 land, one __syncthreads a tile. load(stage, k0) issues this thread's copies of
// the k-tile at k0 into a stage; multiply(stage) multiplies the tile a stage holds.
template <int kStages, int kBK, typename Load, typename Multiply>
__device__ __forceinline__ void cp_async_ring(int k, Load&& load, Multiply&& multiply) {
  const int k_tiles = (k + kBK - 1) / kBK;
  // Prologue: stages 0..S-2 in flight. Every iteration commits one group (possibly empty), so "tile t has landed"
  // is always "all but the newest S-2 groups are complete".
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load(s, s * kBK);
    cp_async_commit();
  }
  for (int t = 0; t < k_tiles; ++t) {
    // Wait for this thread's copies of tile t, then a barrier: it makes every thread's copies of tile t
    // visible, and guarantees all warps are done with tile t-1, whose stage the prefetch below overwrites.
    cp_async_wait<kStages - 2>();
    __syncthreads();
    // Prefetch tile t + S-1 into that freed stage; it lands while this tile and the next S-2 are multiplied.
    const int next = t + kStages - 1;
    if (next < k_tiles) load(next % kStages, next * kBK);
    cp_async_commit();
    multiply(t % kStages);
  }
  // The trailing groups are empty (no tile past the last), but none may be left pending at exit.
  cp_async_wait<0>();
}

template <typename T, bool kAligned>
__global__ void __launch_bounds__(MmaTile::kThreads, MmaTile::kMinBlocks) matmul_mma_kernel(const T* __restrict__ a,
                                                                                            const T* __restrict__ b,
                                                                                            T* __restrict__ c, int m,
                                                                                            int n, int k) {
  using Cfg = MmaTile;
  // 1. Shared memory: a ring of Stages k-tiles, all A tiles first, then all B tiles (rows padded, see above).
  extern __shared__ __align__(16) unsigned char mma_smem[];
  T* as = reinterpret_cast<T*>(mma_smem);  // [stage][BM][kAStride]
  T* bs = as + Cfg::Stages * Cfg::kAStage;  // [stage][BK][kBStride]

  // 2. Which output tile this block computes (grouped order), and which 64×64 piece of it each warp owns.
  int tile_m, tile_n;
  grouped_tile(static_cast<int>(blockIdx.x), (m + Cfg::BM - 1) / Cfg::BM, (n + Cfg::BN - 1) / Cfg::BN, tile_m, tile_n);
  const int bm = tile_m * Cfg::BM, bn = tile_n * Cfg::BN;

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm = (warp / Cfg::WarpsN) * Cfg::kWarpM, wn = (warp % Cfg::WarpsN) * Cfg::kWarpN;

  // 3. Issuing one k-tile's copies: A is BM rows of BK/8 16-byte chunks, B is BK rows of BN/8 chunks; the block's
  //    threads take consecutive chunks (kAChunks + kBChunks each), so a warp reads whole 16-byte-aligned runs.
  auto load_stage = [&](int stage, int k0) {
    T* a_dst = as + stage * Cfg::kAStage;
    T* b_dst = bs + stage * Cfg::kBStage;
#pragma unroll
    for (int i = 0; i < Cfg::kAChunks; ++i) {
      const int chunk = tid + i * Cfg::kThreads;
      const int r = chunk / (Cfg::BK / 8), col = chunk % (Cfg::BK / 8) * 8;
      load_chunk8<T, kAligned>(a_dst + r * Cfg::kAStride + col, a, bm + r, k0 + col, m, k);
    }
#pragma unroll
    for (int i = 0; i < Cfg::kBChunks; ++i) {
      const int chunk = tid + i * Cfg::kThreads;
      const int r = chunk / (Cfg::BN / 8), col = chunk % (Cfg::BN / 8) * 8;
      load_chunk8<T, kAligned>(b_dst + r * Cfg::kBStride + col, b, k0 + r, bn + col, k, n);
    }
  };

  // 4. The warp's 64×64 piece of C as kTilesM × kTilesN m16n8 accumulators, 4 fp32 registers each.
  float acc[Cfg::kTilesM][Cfg::kTilesN][4] = {};
  // 5. The k loop (cp_async_ring, above): Stages-1 k-tiles in flight while the body below multiplies the tile that
  //    `stage` holds, after the barrier that makes every thread's copies of it visible.
  cp_async_ring<Cfg::Stages, Cfg::BK>(k, load_stage, [&](int stage) {
    // 6. Multiply the tile, one k16 slice at a time: fragments of A and B from shared memory into registers, then
    //    kTilesM × kTilesN mma.sync, each a 16×8×16 product accumulated in place.
    const T* a_tile = as + stage * Cfg::kAStage;
    const T* b_tile = bs + stage * Cfg::kBStage;
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; kk += 16) {
      uint32_t af[Cfg::kTilesM][4], bf[Cfg::kTilesN / 2][4];
      // ldmatrix.x4: lanes 0-15 address rows 0-15 at column kk, lanes 16-31 the same rows at kk+8; the four 8×8
      // results are exactly mma's a0..a3 (A) and, transposed, b0/b1 of two adjacent n8 tiles (B).
#pragma unroll
      for (int i = 0; i < Cfg::kTilesM; ++i)
        ldmatrix_x4(af[i], smem_address(a_tile + (wm + i * 16 + lane % 16) * Cfg::kAStride + kk + (lane / 16) * 8));
#pragma unroll
      for (int j = 0; j < Cfg::kTilesN / 2; ++j)
        ldmatrix_x4_trans(bf[j],
                          smem_address(b_tile + (kk + lane % 16) * Cfg::kBStride + wn + j * 16 + (lane / 16) * 8));
      // Each A fragment meets every B fragment: 4 × 8 mma per 4 + 4 ldmatrix.
#pragma unroll
      for (int i = 0; i < Cfg::kTilesM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::kTilesN; ++j)
          mma_16816<T>(acc[i][j], af[i], bf[j / 2][(j % 2) * 2], bf[j / 2][(j % 2) * 2 + 1]);
    }
  });

  // 7. Epilogue, straight from registers to C. Accumulator layout of m16n8: lane holds (row g, cols 2q, 2q+1) and
  //    (row g+8, same cols), g = lane/4, q = lane%4: two pairs of adjacent outputs, one 32-bit store each.
  const int g = lane / 4, q = lane % 4;
#pragma unroll
  for (int i = 0; i < Cfg::kTilesM; ++i) {
    const int row = bm + wm + i * 16 + g;
#pragma unroll
    for (int j = 0; j < Cfg::kTilesN; ++j) {
      const int col = bn + wn + j * 8 + q * 2;
      store_pair<T>(c, row, col, m, n, acc[i][j][0], acc[i][j][1]);
      store_pair<T>(c, row + 8, col, m, n, acc[i][j][2], acc[i][j][3]);
    }
  }
}

cudaError_t launch_matmul_mma(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                              int64_t k, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>) {
      return cudaErrorInvalidValue;  // the binding rejects fp32 with a message first
    } else {
      const T* ta = static_cast<const T*>(a);
      const T* tb = static_cast<const T*>(b);
      T* tc = static_cast<T*>(c);
      const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
      const bool aligned = k % 8 == 0 && n % 8 == 0 && lab::is_aligned16(a) && lab::is_aligned16(b);
      auto kernel = aligned ? matmul_mma_kernel<T, true> : matmul_mma_kernel<T, false>;
      return launch_over_tiles<MmaTile>(kernel, m, n, stream, ta, tb, tc, im, in, ik);
    }
  });
}

// ---- v5 wgmma: Hopper's warpgroup tensor-core path, fed by the TMA copy engine, warp-specialized. ----------------
// What changes against mma, and why each helps (this is what cuBLAS and Triton's tl.dot do on Hopper):
//  * wgmma.mma_async.m64n256k16: one instruction per warpgroup (4 warps) multiplies a 64×16 A slice by a 16×256 B
//    slice, reading both operands straight from shared memory through matrix descriptors. No ldmatrix, no operand
//    registers: the register file holds only the 64×256 fp32 accumulator (128 registers a thread), and the
//    instruction is asynchronous, so the warps issue the next batch while the tensor cores work.
//  * TMA (cp.async.bulk.tensor): one thread copies a whole tile global→shared from a tensor map built on the host.
//    The copy engine does the address arithmetic, zero-fills rows and columns past M, N and K (any shape whose rows
//    are 16-byte multiples works with no edge code), and writes the 128-byte-swizzled layout that wgmma reads without
//    bank conflicts. Completion is counted in bytes on an mbarrier.
//  * Warp specialization: warpgroup 0 only produces (one thread issues TMA into a 4-stage ring of 128×64 A and
//    64×256 B tiles); warpgroups 1 and 2 only consume, each owning 64 rows of the 128×256 block tile. Full/empty
//    mbarriers per stage replace __syncthreads, so loading never waits on math and math never waits on a barrier
//    that loads must also reach. setmaxnreg moves registers from the producer (24) to the consumers (240).
//  * One wgmma batch stays in flight: a consumer releases stage t-1 only after issuing stage t's batch and waiting
//    for all but the newest batch, so the tensor cores always have queued work.
//  * B stays as given (K×N row-major, "MN-major" to wgmma): the transpose-B flag of the 16-bit instruction reads it
//    directly, with the descriptor strides for that layout (below). No transposed copy of B is ever made.
// Requirements: compute capability 9.0 and a build for sm_90a (the lab builds 9.0a on Hopper: compare/env.py), and
// for TMA, rows of A and B that are 16-byte multiples (K % 8 == 0, N % 8 == 0) on 16-byte-aligned bases. Other shapes
// take v4's mma kernel, so the row still answers every shape (its timing shapes all take this kernel).
// It closes most of the gap to cuBLAS that v4 leaves (measured: results/nvidia-h200/matmul.md). v7 takes the next
// steps: a persistent grid (here the epilogue of one tile is exposed before the next tile's loads start) and TMA
// stores of C; v8 the last: clusters (TMA multicast of a tile to the blocks that share it).
// Shared memory of v5 and v7 (lab::ring_setup): per stage a box of A ([BM rows][128 B]) and BN/64 boxes of B
// ([BN/64 chunks][BK rows][128 B]).
struct WgmmaTile {
  static constexpr int BM = 128, BN = 256, BK = 64, Stages = 4;
  static constexpr int kConsumers = 2;                // warpgroups doing math, 64 rows each
  static constexpr int kThreads = (kConsumers + 1) * 128;
  static constexpr int kBChunk = 64;  // B is loaded as BN/64 boxes of 64 columns (128 bytes, one swizzle row)
  static constexpr int kAStageBytes = BM * BK * 2, kBStageBytes = BK * BN * 2;
  static constexpr int kBChunkBytes = BK * kBChunk * 2;
  static constexpr int kSmemBytes = Stages * (kAStageBytes + kBStageBytes) + 1024;  // + slack for 1024-B alignment
};

#ifdef LAB_SM90A
// The producer's copies of one K tile (from column k0 of A, row k0 of B) of the block tile at (bm, bn) into stage s:
// the stage's bytes announced on full[s] (whole boxes, zero-fill included), then the copies that count them down,
// one box of A (BM rows × 64 k) and BN/64 boxes of B (64 k-rows × 64 columns each).
__device__ __forceinline__ void wgmma_load_stage(unsigned char* a_tiles, unsigned char* b_tiles, int s,
                                                 const CUtensorMap* map_a, const CUtensorMap* map_b, int k0, int bm,
                                                 int bn, uint64_t* full) {
  using Cfg = WgmmaTile;
  mbarrier_expect_bytes(&full[s], Cfg::kAStageBytes + Cfg::kBStageBytes);
  tma_load_2d(a_tiles + s * Cfg::kAStageBytes, map_a, k0, bm, &full[s]);
#pragma unroll
  for (int j = 0; j < Cfg::BN / Cfg::kBChunk; ++j)
    tma_load_2d(b_tiles + s * Cfg::kBStageBytes + j * Cfg::kBChunkBytes, map_b, bn + j * Cfg::kBChunk, k0, &full[s]);
}

// A consumer's batch for one K tile: its 64 rows of A in the stage (a_tile) times the stage's B tile, BK/16 = 4
// wgmma accumulating into d, each reading its operands from shared memory through two descriptors, committed as one
// group; the fence orders the registers of d before the first of them.
// A is K-major; with 128-byte swizzling the stride between 8-row groups is 1024 B and the leading offset is unused
// (one k16 step stays inside a row); the k16 slice starts 32 bytes further into each swizzled row. B is MN-major:
// 64 columns per 128-byte row, the next 64 columns one chunk (BK rows × 128 B) further (leading offset), the next
// 8 k-rows 1024 B further (stride offset); the k16 slice starts 16 rows (2048 B) further.
template <typename T>
__device__ __forceinline__ void wgmma_tile_batch(float (&d)[128], const unsigned char* a_tile,
                                                 const unsigned char* b_tile) {
  using Cfg = WgmmaTile;
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < Cfg::BK / 16; ++kk) {
    const uint64_t desc_a = smem_descriptor(a_tile + kk * 32, 16, 1024);
    const uint64_t desc_b = smem_descriptor(b_tile + kk * 16 * 128, Cfg::kBChunkBytes, 1024);
    wgmma_m64n256k16<T>(d, desc_a, desc_b);
  }
  wgmma_commit_group();
}

// A consumer warp's release of a stage it has finished reading: one arrival on the stage's empty barrier in each of
// the kClusterBlocks blocks whose producers write into it (v8: both blocks of the cluster; v5, v7: its own block).
template <int kClusterBlocks>
__device__ __forceinline__ void release_stage(uint64_t* empty) {
  if constexpr (kClusterBlocks == 1) {
    mbarrier_arrive(empty);
  } else {
#pragma unroll
    for (unsigned rank = 0; rank < kClusterBlocks; ++rank) lab::mbarrier_arrive_in_block(empty, rank);
  }
}

// A consumer's K loop over one output tile, the block's K tiles first .. first + k_tiles - 1 (counted across its
// tiles, as the producer counts them): each tile's batch issued once its bytes are in (full[s]'s completion number
// it / Stages), then a wait for the previous batch only, so this one keeps the tensor cores busy while its
// predecessor's stage is freed (that batch has finished reading it: each warp's lane 0 releases it). Returns with
// the last batch possibly still running and its stage not yet released. a_rows: this consumer's 64 rows of A in
// stage 0 (8 KB into the stage).
template <typename T, int kClusterBlocks = 1>
__device__ __forceinline__ void wgmma_k_loop(float (&d)[128], int first, int k_tiles, const unsigned char* a_rows,
                                             const unsigned char* b_tiles, uint64_t* full, uint64_t* empty,
                                             int lane) {
  using Cfg = WgmmaTile;
  for (int t = 0; t < k_tiles; ++t) {
    const int it = first + t, s = it % Cfg::Stages;
    mbarrier_wait(&full[s], (it / Cfg::Stages) % 2);
    wgmma_tile_batch<T>(d, a_rows + s * Cfg::kAStageBytes, b_tiles + s * Cfg::kBStageBytes);
    wgmma_wait_group<1>();
    if (t > 0 && lane == 0) release_stage<kClusterBlocks>(&empty[(it - 1) % Cfg::Stages]);
  }
}
#endif  // LAB_SM90A

template <typename T>
__global__ void __launch_bounds__(WgmmaTile::kThreads, 1)
    matmul_wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                        T* __restrict__ c, int m, int n, int k) {
#ifdef LAB_SM90A
  using Cfg = WgmmaTile;
  // 1. Shared memory and barriers: the stage ring of A and B tiles, two barriers per stage (lab::ring_setup).
  unsigned char *a_tiles, *b_tiles;
  __shared__ __align__(8) uint64_t full[Cfg::Stages], empty[Cfg::Stages];
  lab::ring_setup<Cfg>(a_tiles, b_tiles, full, empty);
  const int tid = threadIdx.x, warpgroup = tid / 128;

  // 2. Which output tile this block computes (grouped order, as v4).
  int tile_m, tile_n;
  grouped_tile(static_cast<int>(blockIdx.x), (m + Cfg::BM - 1) / Cfg::BM, (n + Cfg::BN - 1) / Cfg::BN, tile_m, tile_n);
  const int bm = tile_m * Cfg::BM, bn = tile_n * Cfg::BN;
  const int k_tiles = (k + Cfg::BK - 1) / Cfg::BK;

  // 3. Producer: warpgroup 0 gives most of its registers to the consumers; one thread of it walks K, filling stage
  //    t % Stages with tile t as soon as the consumers have released it.
  if (warpgroup == 0) {
    setmaxnreg_dec<24>();
    if (tid != 0) return;
    for (int t = 0; t < k_tiles; ++t) {
      const int s = t % Cfg::Stages;
      // Stage s last held tile t - Stages; wait until both consumers have released it (empty[s]'s completion number
      // t / Stages - 1, so parity (t / Stages + 1) % 2). The first Stages tiles find their stages free.
      if (t >= Cfg::Stages) mbarrier_wait(&empty[s], (t / Cfg::Stages + 1) % 2);
      wgmma_load_stage(a_tiles, b_tiles, s, &map_a, &map_b, t * Cfg::BK, bm, bn, full);
    }
    return;
  }

  // 4. Consumers: warpgroups 1 and 2 take the registers the producer gave up (the 64×256 accumulator alone is 128 a
  //    thread), each owning 64 rows of the block's 128×256 tile.
  setmaxnreg_inc<240>();
  const int consumer = warpgroup - 1, lane = tid % 32, warp_in_group = tid % 128 / 32;
  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.0f;

  // 5. The K tiles, a batch each with one batch in flight (wgmma_k_loop).
  wgmma_k_loop<T>(d, 0, k_tiles, a_tiles + consumer * 64 * 128, b_tiles, full, empty, lane);
  // 6. Drain: the last batch must finish before d is read. (The last stage is never released: no tile follows.)
  wgmma_wait_group<0>();

  // 7. Epilogue, straight from registers to C. Accumulator layout (as mma.sync's m16n8, repeated): warp w of the
  //    group holds rows 16w + lane/4 and +8; register 4j + {0,1} covers columns 8j + 2·(lane%4) + {0,1} of the
  //    first row, 4j + {2,3} the same columns of the second.
  const int row = bm + consumer * 64 + warp_in_group * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < Cfg::BN / 8; ++j) {
    const int col = bn + j * 8 + (lane % 4) * 2;
    store_pair<T>(c, row, col, m, n, d[4 * j], d[4 * j + 1]);
    store_pair<T>(c, row + 8, col, m, n, d[4 * j + 2], d[4 * j + 3]);
  }
#else
  __trap();  // built without sm_90a: the launcher never gets here on the lab's builds (see the requirements above)
#endif
}

cudaError_t launch_matmul_wgmma(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                int64_t k, cudaStream_t stream) {
  // TMA needs 16-byte row strides and bases; other shapes take v4 (see the requirements above).
  if (k % 8 != 0 || n % 8 != 0 || !lab::is_aligned16(a) || !lab::is_aligned16(b))
    return launch_matmul_mma(dtype, a, b, c, m, n, k, stream);
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>) {
      return cudaErrorInvalidValue;  // the binding rejects fp32 with a message first
    } else {
      using Cfg = WgmmaTile;
      CUtensorMap map_a, map_b;
      if (!encode_tensor_map(&map_a, static_cast<const T*>(a), m, k, Cfg::BM) ||
          !encode_tensor_map(&map_b, static_cast<const T*>(b), k, n, Cfg::BK))
        return cudaErrorInvalidValue;
      return launch_over_tiles<Cfg>(matmul_wgmma_kernel<T>, m, n, stream, map_a, map_b, static_cast<T*>(c),
                                    static_cast<int>(m), static_cast<int>(n), static_cast<int>(k));
    }
  });
}

// ---- v6 warptile: the fp32 path's step after regblock: warp tiles, BK = 16, a cp.async ring. -------------------
// fp32 only (fp16/bf16 have the tensor cores: v4, v5). siboehm's last SGEMM step (warptiling), on Hopper's 228 KB of
// shared memory and 255 registers a thread. What changes against regblock (v3), and why each helps:
//  * Warp tiles: the 128×256 block tile is 2×4 warp tiles of 64×64; in its warp tile, lane (lm, ln) = (lane / 8,
//    lane % 8) owns the 4×4 patches at rows 16i + 4lm and columns 32j + 4ln (i < 4, j < 2): 16×8 outputs.
//    Per k a thread loads 16 A values and 8 B values (6 float4) for 128 FMAs: 5.3 FMAs per shared-memory float
//    (21 per LDS.128), against v3's 4 (16 per LDS.128: 8 + 8 values for 64 FMAs). And per warp: its A loads cover
//    4 distinct float4 (64 contiguous bytes), its B loads 8 (128 contiguous bytes), one shared-memory wavefront each,
//    so a warp's k step is 6 wavefronts for 4096 FMAs (683 a wavefront). v3's warp is 2 × 16 threads over 16 rows
//    and 128 columns: its B loads touch 256 bytes, two wavefronts each, 6 wavefronts for 2048 FMAs (341).
//  * BK = 16 and a 3-stage cp.async ring (v4's scheme): global→shared copies bypass registers and run
//    asynchronously, two k-tiles in flight while the third is multiplied, one __syncthreads per 16 k (v3: per 8 k,
//    its next tile staged through registers and stored after the FMAs). Rows and columns past M, N, K are
//    zero-filled by the copies themselves (src-size 0), so the inner loop has no edge code.
//  * A is stored transposed (k-major, As[k][m]) so a thread's 4 rows at one k are one float4; a 16-byte cp.async
//    can't transpose, so A comes in as one 4-byte cp.async an element (8 a thread per k-tile, a warp instruction
//    covering 4 rows × 8 k: four 32-byte runs of A's rows). B, row-major, comes as 16-byte copies (4 a thread).
//  * Register double buffering: k+1's fragments are loaded while k's 128 FMAs run, hiding the shared-memory latency
//    within a warp (8 warps an SM: 2 a scheduler).
//  * No spills: 128 accumulators and 2 × 24 fragment registers fit the 255 a thread that __launch_bounds__(256, 1)
//    allows (v3 is held to 128 for two blocks an SM and spills). One block an SM, its 8 warps, is the price; the
//    pipeline and the registers' ILP, not warp count, hide latency here.
// Bank conflicts: the reads above are conflict-free whatever the padding (contiguous float4 runs of at most 128
// bytes). The transposing copies of A are what the padding is for: a warp writes As[k][m] for 8 consecutive k × 4
// consecutive m, and with rows of BM + 4 = 132 floats (132 ≡ 4 mod 32 banks) k moves the bank by 4 and m by 1: 32
// distinct banks (unpadded, all 8 k would fall in one bank: 8-way). B's copies write 512 contiguous bytes a warp.
// Edges: A's 4-byte copies need no alignment; B's 16-byte copies and C's float4 stores need N % 4 == 0 and 16-byte
// aligned bases (kVec), else B comes in 4-byte copies and C goes out through v3's checked store4.
// 128×256 rather than 128×128: 16×8 outputs a thread (not 8×8) is what raises the FMAs per shared float, and 128
// accumulators leave no room for two blocks an SM anyway; the transposed operand (A) is the smaller tile, 8 copies
// a thread per k-tile (256×128 would take 16). Tile shapes to try on a GPU: WarptileTile below.
struct WarptileTile {
  static constexpr int BM = 128, BN = 256, BK = 16, WarpsM = 2, WarpsN = 4, Stages = 3;
  static constexpr int kMinBlocks = 1;  // blocks an SM asked of the register allocator: 255 registers a thread
  static constexpr int kThreads = WarpsM * WarpsN * 32, kWarps = kThreads / 32;
  static constexpr int kWarpM = BM / WarpsM, kWarpN = BN / WarpsN;  // one warp's tile, 64×64
  static constexpr int kLanesM = 4, kLanesN = 8;                    // a warp's lanes over it: 4 rows × 8 columns
  static constexpr int kIterM = kWarpM / (4 * kLanesM), kIterN = kWarpN / (4 * kLanesN);  // 4×4 patches a thread
  static constexpr int kTM = 4 * kIterM, kTN = 4 * kIterN;                                // 16×8 outputs a thread
  static constexpr int kAStride = BM + 4;  // padded rows of the transposed A tile, in floats (bank note above)
  static constexpr int kAStage = BK * kAStride, kBStage = BK * BN;  // floats
  static constexpr int kSmemBytes = Stages * (kAStage + kBStage) * 4;
  // Copies: A in warp instructions of 4 rows × 8 k, a thread's 8 elements kARowStep rows apart; B in 16-byte chunks,
  // a thread's 4 chunks kBRowStep k-rows apart.
  static constexpr int kAKGroups = BK / 8, kARowStep = 4 * kWarps / kAKGroups, kACopies = BM / kARowStep;
  static constexpr int kBChunksPerRow = BN / 4, kBRowStep = kThreads / kBChunksPerRow, kBCopies = BK / kBRowStep;
  static_assert(kLanesM * kLanesN == 32 && kWarpM % (4 * kLanesM) == 0 && kWarpN % (4 * kLanesN) == 0,
                "warp tiles are whole 4×4 patches a lane");
  static_assert(BK % 8 == 0 && kWarps % kAKGroups == 0 && BM % kARowStep == 0, "A's copies split evenly");
  static_assert(kThreads % kBChunksPerRow == 0 && BK % kBRowStep == 0, "B's copies split evenly");
  static_assert(kAStride % 32 == 4, "the transposing copies of A spread over all 32 banks");
};

// The float at p into 4 bytes of shared memory, or a zero where it lies outside the matrix (!valid): then nothing
// is read, and the copy is given `base`, the matrix's first element, as its address, so that no address outside
// the matrix is ever issued.
__device__ __forceinline__ void copy_float(uint32_t dst, const float* p, const float* base, bool valid) {
  cp_async_4(dst, valid ? p : base, valid);
}

// Four consecutive floats p[0..3] of a row into 16 bytes of shared memory, those at or past `valid` as zeros (as
// copy_float). kVec: the row's quads are 16-byte aligned and wholly in or out, so one 16-byte copy.
template <bool kVec>
__device__ __forceinline__ void copy_quad(uint32_t dst, const float* p, const float* base, int valid) {
  if constexpr (kVec) {
    cp_async_16(dst, valid > 0 ? p : base, valid > 0);
  } else {
#pragma unroll
    for (int e = 0; e < 4; ++e) copy_float(dst + 4 * e, p + e, base, e < valid);
  }
}

template <bool kVec>
__global__ void __launch_bounds__(WarptileTile::kThreads, WarptileTile::kMinBlocks)
    matmul_warptile_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                           int n, int k) {
  using Cfg = WarptileTile;
  // 1. Shared memory: a ring of Stages k-tiles, the A tiles (transposed, padded rows) first, then the B tiles.
  extern __shared__ __align__(16) float warptile_smem[];
  float* as = warptile_smem;                 // [stage][BK][kAStride]
  float* bs = as + Cfg::Stages * Cfg::kAStage;  // [stage][BK][BN]

  // 2. Which output tile this block computes (grouped order, as v4), which 64×64 piece each warp owns, and which
  //    4×4 patches of it each lane.
  int tile_m, tile_n;
  grouped_tile(static_cast<int>(blockIdx.x), (m + Cfg::BM - 1) / Cfg::BM, (n + Cfg::BN - 1) / Cfg::BN, tile_m, tile_n);
  const int bm = tile_m * Cfg::BM, bn = tile_n * Cfg::BN;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm = (warp / Cfg::WarpsN) * Cfg::kWarpM, wn = (warp % Cfg::WarpsN) * Cfg::kWarpN;
  const int lm = lane / Cfg::kLanesN, ln = lane % Cfg::kLanesN;

  // 3. Issuing one k-tile's copies. A: this thread's element is (row a_row + kARowStep·i, column a_k of the tile),
  //    stored at As[a_k][row]; a warp's lanes walk 8 consecutive k (32 contiguous bytes of a row) on 4 rows. B:
  //    chunk (k-row b_row + kBRowStep·i, columns b_col..b_col+3); a warp's 32 chunks are 512 contiguous bytes of one
  //    row. The addresses are set up once (64-bit: row · K and k · N can pass 2^31) and offset by each tile's k0;
  //    what lies past M, N or K is zero-filled (copy_float's rule: nothing read, the base as its address).
  const int a_row = 4 * (warp / Cfg::kAKGroups) + lane / 8, a_k = 8 * (warp % Cfg::kAKGroups) + lane % 8;
  const int b_row = tid / Cfg::kBChunksPerRow, b_col = tid % Cfg::kBChunksPerRow * 4;
  const int a_rows = m - (bm + a_row), b_cols = n - (bn + b_col);  // copy i is inside M while kARowStep·i < a_rows
  const float* a_src = a + static_cast<int64_t>(bm + a_row) * k + a_k;
  const float* b_src = b + static_cast<int64_t>(b_row) * n + bn + b_col;
  const int64_t a_step = static_cast<int64_t>(Cfg::kARowStep) * k, b_step = static_cast<int64_t>(Cfg::kBRowStep) * n;
  const uint32_t as_base = smem_address(as), bs_base = smem_address(bs);
  auto load_stage = [&](int stage, int k0) {
    const uint32_t a_dst = as_base + 4 * (stage * Cfg::kAStage + a_k * Cfg::kAStride + a_row);
    const bool a_k_ok = k0 + a_k < k;
#pragma unroll
    for (int i = 0; i < Cfg::kACopies; ++i)
      copy_float(a_dst + 4 * i * Cfg::kARowStep, a_src + k0 + i * a_step, a, a_k_ok && i * Cfg::kARowStep < a_rows);
    const uint32_t b_dst = bs_base + 4 * (stage * Cfg::kBStage + b_row * Cfg::BN + b_col);
    const float* b_tile_src = b_src + static_cast<int64_t>(k0) * n;
#pragma unroll
    for (int i = 0; i < Cfg::kBCopies; ++i)
      copy_quad<kVec>(b_dst + 4 * i * Cfg::kBRowStep * Cfg::BN, b_tile_src + i * b_step, b,
                      k0 + b_row + i * Cfg::kBRowStep < k ? b_cols : 0);
  };

  // 4. This thread's 16×8 outputs: acc[4i + r][4j + s] is C[wm + 16i + 4lm + r][wn + 32j + 4ln + s] of the tile.
  float acc[Cfg::kTM][Cfg::kTN] = {};
  // 5. The k loop, v4's ring (cp_async_ring): Stages-1 k-tiles in flight while the body multiplies the one in `stage`.
  cp_async_ring<Cfg::Stages, Cfg::BK>(k, load_stage, [&](int stage) {
    // 6. Each k: kIterM float4 of A (As[k][row..row+3]) and kIterN float4 of B; those of k+1 are loaded into the
    //    other register buffer before k's FMAs.
    const float* a_tile = as + stage * Cfg::kAStage + wm + 4 * lm;
    const float* b_tile = bs + stage * Cfg::kBStage + wn + 4 * ln;
    float4 af[2][Cfg::kIterM], bf[2][Cfg::kIterN];
    auto load_fragments = [&](int buf, int kk) {
#pragma unroll
      for (int i = 0; i < Cfg::kIterM; ++i)
        af[buf][i] = *reinterpret_cast<const float4*>(a_tile + kk * Cfg::kAStride + i * 4 * Cfg::kLanesM);
#pragma unroll
      for (int j = 0; j < Cfg::kIterN; ++j)
        bf[buf][j] = *reinterpret_cast<const float4*>(b_tile + kk * Cfg::BN + j * 4 * Cfg::kLanesN);
    };
    load_fragments(0, 0);
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; ++kk) {
      if (kk + 1 < Cfg::BK) load_fragments((kk + 1) % 2, kk + 1);
      const float* av = reinterpret_cast<const float*>(af[kk % 2]);  // kTM values: patch i's rows at 4i..4i+3
      const float* bv = reinterpret_cast<const float*>(bf[kk % 2]);  // kTN values
#pragma unroll
      for (int i = 0; i < Cfg::kTM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::kTN; ++j) acc[i][j] += av[i] * bv[j];
    }
  });

  // 7. Epilogue: each row of a 4×4 patch is one float4 store (a warp's 8 lanes along N write 128 contiguous bytes),
  //    checked at the edges by v3's store4.
#pragma unroll
  for (int i = 0; i < Cfg::kTM; ++i) {
    const int row = bm + wm + (i / 4) * 4 * Cfg::kLanesM + 4 * lm + i % 4;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < Cfg::kIterN; ++j) {
      const int col = bn + wn + j * 4 * Cfg::kLanesN + 4 * ln;
      if (col < n) store4<float, kVec>(c + static_cast<int64_t>(row) * n + col, n - col, &acc[i][4 * j]);
    }
  }
}

cudaError_t launch_matmul_warptile(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                   int64_t k, cudaStream_t stream) {
  if (dtype != lab::DType::f32) return cudaErrorInvalidValue;  // the binding rejects fp16/bf16 with a message first
  const float* fa = static_cast<const float*>(a);
  const float* fb = static_cast<const float*>(b);
  float* fc = static_cast<float*>(c);
  const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
  // A's copies are 4-byte, so only B's and C's rows need 16-byte alignment for the vector path.
  const bool vec = n % 4 == 0 && lab::is_aligned16(b) && lab::is_aligned16(c);
  auto kernel = vec ? matmul_warptile_kernel<true> : matmul_warptile_kernel<false>;
  return launch_over_tiles<WarptileTile>(kernel, m, n, stream, fa, fb, fc, im, in, ik);
}

// ---- v7 tmastore: v5 on a persistent grid, C written through shared memory by TMA stores. -----------------------
// fp16/bf16, the tensor-core path's step after v5 (v6 was the fp32 path's). fp8_matmul.cu's v4 and v5 for 16-bit
// inputs. What changes against v5, and why each helps:
//  * A persistent grid: one block per SM, each taking output tiles blockIdx.x, + gridDim.x, ... in the grouped order.
//    v5 runs a block per tile; each starts with an empty ring (its first K tile waits for a copy from memory) and
//    its epilogue leaves the tensor cores idle until the next block has started and filled its ring. Here the
//    producer walks the K tiles of all its block's tiles in one sequence, so while the consumers store one tile's C
//    the ring already fills with the next tile's K tiles. Stage and parity run on that one count (it).
//  * C through shared memory and TMA: v5 stores C from registers, 4 bytes a thread and instruction, each 32-byte
//    sector in two halves, and the tensor cores wait until every store has issued. Here each consumer rounds its
//    part of C into swizzled boxes in shared memory (st.shared without bank conflicts: lab::stage_pairs), one thread
//    hands them to the copy engine, which writes whole sectors and drops rows and columns past M and N, and the
//    warpgroup goes on while C is written.
//  * The ring keeps v5's four stages (192 KB), so a consumer's whole 64×256 part of C (32 KB) does not fit beside
//    it in the 227 KB an SM gives a block: each consumer stages half of it at a time in two boxes of 64×64 (16 KB),
//    and the first half's stores must have read the boxes before the second half is written there. (Three stages
//    would make room for all of C at once, with less copied ahead of the tensor cores.)
// Tried after v7 and dropped: stream-K (the tiles of the ragged last wave cut along K between the blocks, so that
// every SM ends together). Under ncu it took 1.5% fewer cycles than v7 at 4096 × 4096 × 14336; timed at the GPU's
// own clocks it was no faster at 4096³ and up and slower below (results/nvidia-h200/matmul-streamk-profile.md; the
// code is on the branch streamk).
// Requirements: v5's, and N a multiple of 8 on a 16-byte-aligned C (C's row pitch, for its tensor map); other inputs
// take v5's launcher.
struct TmaStoreTile : WgmmaTile {
  static constexpr int kCBoxBytes = 64 * 128;  // 64 rows × 64 columns of 16-bit C, 128-byte rows
  static constexpr int kCBoxes = 2;            // per consumer: half of its 64×256 part of C
  static constexpr int kSmemBytes = WgmmaTile::kSmemBytes + kConsumers * kCBoxes * kCBoxBytes;
};

// Which output tiles a block of the persistent grid takes, in order. v7 (kClusterBlocks 1): tiles blockIdx.x,
// + gridDim.x, ... in the grouped order. v8 (2): the grouped order over pairs of tiles one above the other (the same
// columns of B), cluster c taking pairs c, + clusters, ..., and in each pair the block of rank r its tile row r.
template <int kClusterBlocks>
struct TileWalk {
  int tiles_m, tiles_n, rows;  // rows: the walk's rows, tile rows or pairs of them
  int first, step;
  unsigned rank;

  __device__ TileWalk(int m, int n)
      : tiles_m((m + TmaStoreTile::BM - 1) / TmaStoreTile::BM),
        tiles_n((n + TmaStoreTile::BN - 1) / TmaStoreTile::BN),
        rows((tiles_m + kClusterBlocks - 1) / kClusterBlocks),
        first(static_cast<int>(blockIdx.x) / kClusterBlocks),
        step(static_cast<int>(gridDim.x) / kClusterBlocks),
        rank(kClusterBlocks == 1 ? 0u : lab::cluster_rank()) {}

  __device__ int count() const { return rows * tiles_n; }

  __device__ void tile(int i, int& tile_m, int& tile_n) const {
    int row;
    grouped_tile(i, rows, tiles_n, row, tile_n);
    tile_m = row * kClusterBlocks + static_cast<int>(rank);
  }
};

#ifdef LAB_SM90A
// v8's producer copies of one K tile into stage s: its own box of A, as v5's, and its half of the B tile's boxes,
// multicast into the same stage of both blocks of the cluster (their tiles share B's columns). Each block's full[s]
// awaits the whole stage (its A and all of B): its partner's half arrives there as its own does.
__device__ __forceinline__ void multicast_load_stage(unsigned char* a_tiles, unsigned char* b_tiles, int s,
                                                     const CUtensorMap* map_a, const CUtensorMap* map_b, int k0,
                                                     int bm, int bn, uint64_t* full, unsigned rank) {
  using Cfg = WgmmaTile;
  constexpr int kChunksPerBlock = Cfg::BN / Cfg::kBChunk / 2;
  mbarrier_expect_bytes(&full[s], Cfg::kAStageBytes + Cfg::kBStageBytes);
  tma_load_2d(a_tiles + s * Cfg::kAStageBytes, map_a, k0, bm, &full[s]);
#pragma unroll
  for (int j = 0; j < kChunksPerBlock; ++j) {
    const int chunk = static_cast<int>(rank) * kChunksPerBlock + j;
    lab::tma_load_2d_multicast(b_tiles + s * Cfg::kBStageBytes + chunk * Cfg::kBChunkBytes, map_b,
                               bn + chunk * Cfg::kBChunk, k0, &full[s], 0b11);
  }
}

// The body of v7 (kClusterBlocks 1) and v8 (2): the ring, the producer's walk and the consumers' tiles with their
// epilogue through TMA stores. v8 differs where kClusterBlocks says: each stage's empty barrier counts both blocks'
// consumer warps and both blocks' consumers release it, the producer multicasts its half of B, the blocks of a
// cluster meet before the first copy (every barrier they copy into initialised), and the producer waits for the
// last releases before it leaves (no block exits while its partner can still arrive on its barriers).
template <typename T, int kClusterBlocks>
__device__ __forceinline__ void tmastore_tiles(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                               const CUtensorMap* map_c, int m, int n, int k) {
  using Cfg = TmaStoreTile;
  // 1. Shared memory and barriers as v5; each consumer's boxes of C follow the ring.
  unsigned char *a_tiles, *b_tiles;
  __shared__ __align__(8) uint64_t full[Cfg::Stages], empty[Cfg::Stages];
  lab::ring_setup<Cfg>(a_tiles, b_tiles, full, empty, kClusterBlocks);
  if constexpr (kClusterBlocks > 1) {
    lab::cluster_arrive_relaxed();  // the barriers' initialisation is ordered by ring_setup's fence
    lab::cluster_wait();
  }
  const int tid = threadIdx.x, warpgroup = tid / 128;
  const TileWalk<kClusterBlocks> walk(m, n);
  const int k_tiles = (k + Cfg::BK - 1) / Cfg::BK;  // >= 1: the binding answers k = 0 itself

  if (warpgroup == 0) {
    // 2. Producer: one thread walks every K tile of every output tile of this block, `it` counting them all.
    setmaxnreg_dec<24>();
    if (tid == 0) {
      int it = 0;
      for (int i = walk.first; i < walk.count(); i += walk.step) {
        int tile_m, tile_n;
        walk.tile(i, tile_m, tile_n);
        for (int t = 0; t < k_tiles; ++t, ++it) {
          const int s = it % Cfg::Stages;
          if (it >= Cfg::Stages) mbarrier_wait(&empty[s], (it / Cfg::Stages + 1) % 2);
          if constexpr (kClusterBlocks == 1) {
            wgmma_load_stage(a_tiles, b_tiles, s, map_a, map_b, t * Cfg::BK, tile_m * Cfg::BM, tile_n * Cfg::BN,
                             full);
          } else {
            multicast_load_stage(a_tiles, b_tiles, s, map_a, map_b, t * Cfg::BK, tile_m * Cfg::BM,
                                 tile_n * Cfg::BN, full, walk.rank);
          }
        }
      }
      // 7. (v8) Before the producer leaves, every stage released by both blocks' consumers once more (the waits
      //    it would make before refilling them): the partner's consumers arrive on this block's barriers, and the
      //    block must not exit before the last of those arrivals. What the partner copies into this block, this
      //    block's consumers wait for themselves.
      if constexpr (kClusterBlocks > 1) {
        for (int j = it > Cfg::Stages ? it - Cfg::Stages : 0; j < it; ++j)
          mbarrier_wait(&empty[j % Cfg::Stages], (j / Cfg::Stages) % 2);
      }
    }
  } else {
    // 3. Consumers: 64 rows each of every output tile, the K tiles counted by `it` as the producer counts them.
    setmaxnreg_inc<240>();
    const int consumer = warpgroup - 1, lane = tid % 32, warp_in_group = tid % 128 / 32;
    const int local_row = warp_in_group * 16 + lane / 4;
    unsigned char* boxes = b_tiles + Cfg::Stages * Cfg::kBStageBytes + consumer * Cfg::kCBoxes * Cfg::kCBoxBytes;
    const bool issues_stores = tid % 128 == 0;  // the thread of this consumer that hands its boxes to TMA
    float d[128];
    int it = 0;
    for (int i = walk.first; i < walk.count(); i += walk.step) {
      int tile_m, tile_n;
      walk.tile(i, tile_m, tile_n);
#pragma unroll
      for (int r = 0; r < 128; ++r) d[r] = 0.0f;
      // 4. v5's K loop, on from the block's K tile `it`.
      wgmma_k_loop<T, kClusterBlocks>(d, it, k_tiles, a_tiles + consumer * 64 * 128, b_tiles, full, empty, lane);
      it += k_tiles;
      // 5. Drain: the tile's last batch done, and its stage released too (v5 never releases it: no tile follows
      //    there). The operand fence keeps the epilogue's reads of d after the wait.
      wgmma_wait_group<0>();
      lab::wgmma_fence_operand(d);
      if (lane == 0) release_stage<kClusterBlocks>(&empty[(it - 1) % Cfg::Stages]);

      // 6. Epilogue, in two halves of 128 columns: the boxes are free once the stores that last read them (the
      //    previous half's, or the previous tile's) have read them; each thread writes its pairs of the half, makes
      //    them visible to the copy engine, the warpgroup meets, and one thread hands both boxes to TMA. The
      //    producer is already filling the ring with the next tile's K tiles. (v8's block of rank 1 past the last
      //    tile row, where M has an odd number of them, computes zeros and stores nothing.)
      const int row0 = tile_m * Cfg::BM + consumer * 64, bn = tile_n * Cfg::BN;
      const bool stores = issues_stores && (kClusterBlocks == 1 || row0 < m);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        if (issues_stores) lab::tma_store_wait_read<0>();
        lab::named_barrier_sync(1 + consumer, 128);
#pragma unroll
        for (int j = 16 * half; j < 16 * half + 16; ++j)
          lab::stage_pairs<T>(boxes + (j / 8 - 2 * half) * Cfg::kCBoxBytes, local_row, j, lane, d[4 * j],
                              d[4 * j + 1], d[4 * j + 2], d[4 * j + 3]);
        lab::fence_proxy_async_shared();
        lab::named_barrier_sync(1 + consumer, 128);
        if (stores) {
          lab::tma_store_2d(map_c, boxes, bn + 128 * half, row0);
          lab::tma_store_2d(map_c, boxes + Cfg::kCBoxBytes, bn + 128 * half + 64, row0);
          lab::tma_store_commit();
        }
      }
    }
    // The block's shared memory must outlive the last stores' reads of it.
    if (issues_stores) lab::tma_store_wait<0>();
  }
}
#endif  // LAB_SM90A

template <typename T>
__global__ void __launch_bounds__(TmaStoreTile::kThreads, 1)
    matmul_tmastore_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                           const __grid_constant__ CUtensorMap map_c, int m, int n, int k) {
#ifdef LAB_SM90A
  tmastore_tiles<T, 1>(&map_a, &map_b, &map_c, m, n, k);
#else
  __trap();  // built without sm_90a: the launcher never gets here on the lab's builds (see v5's requirements)
#endif
}

// The tensor maps of v7 and v8 (A's boxes of BM rows, B's of BK rows, C's of 64 rows), and the launch of `kernel`
// with them by `launch` (v7: a persistent grid; v8: a persistent grid of clusters). Inputs TMA cannot describe, and
// fp32, as v7's launcher says.
template <typename Launch>
cudaError_t launch_with_tensor_maps(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                    int64_t k, Launch launch) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>) {
      return cudaErrorInvalidValue;  // the binding rejects fp32 with a message first
    } else {
      using Cfg = TmaStoreTile;
      CUtensorMap map_a, map_b, map_c;
      if (!encode_tensor_map(&map_a, static_cast<const T*>(a), m, k, Cfg::BM) ||
          !encode_tensor_map(&map_b, static_cast<const T*>(b), k, n, Cfg::BK) ||
          !encode_tensor_map(&map_c, static_cast<const T*>(c), m, n, 64))
        return cudaErrorInvalidValue;
      return launch(tag, map_a, map_b, map_c);
    }
  });
}

// Whether v7's and v8's tensor maps describe the inputs: TMA needs 16-byte row strides and bases, C's too.
inline bool tensor_maps_fit(const void* a, const void* b, const void* c, int64_t n, int64_t k) {
  return k % 8 == 0 && n % 8 == 0 && lab::is_aligned16(a) && lab::is_aligned16(b) && lab::is_aligned16(c);
}

cudaError_t launch_matmul_tmastore(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                   int64_t k, cudaStream_t stream) {
  // Other shapes take v5 (and so v4 where v5 would).
  if (!tensor_maps_fit(a, b, c, n, k)) return launch_matmul_wgmma(dtype, a, b, c, m, n, k, stream);
  return launch_with_tensor_maps(dtype, a, b, c, m, n, k, [&](auto tag, auto map_a, auto map_b, auto map_c) {
    using T = decltype(tag);
    return lab::launch_persistent<TmaStoreTile>(matmul_tmastore_kernel<T>, TmaStoreTile::kSmemBytes, m, n, stream,
                                                map_a, map_b, map_c, static_cast<int>(m), static_cast<int>(n),
                                                static_cast<int>(k));
  });
}

// ---- v8 multicast: v7 in clusters of two blocks, one above the other, each B tile read once for both. -----------
// What changes against v7, and why it should help: v7's blocks at the same tile column each read the column's
// 64 × 256 tile of B (32 KB) for every K tile, from L2; two blocks of a cluster computing the tiles one above the
// other need the same B tile, so each copies half of it and the copy engine writes that half into both blocks'
// shared memory (TMA multicast): per K tile a block reads its A box (16 KB) and 16 KB of B instead of 32, a third
// less from L2 for the same math. cuBLAS's kernel at these shapes runs in clusters of two (ncu at 4096³ on the H100:
// results/nvidia-h100-80gb-hbm3/matmul-4096-ncu/). The cost: a stage is free again only when the consumers of both
// blocks have released it (either producer writes into both), so the blocks of a cluster advance together.
// What it bought, measured: first a loss. Right on every check, it ran far behind v7 at every shape timed, each
// block slower on its tile (results/nvidia-h100-80gb-hbm3/matmul-multicast/README.md, at baea5fa). ncu found why:
// its warps waited on memory barriers, put before each release of a stage by the release's scope (the cluster's,
// lowered to a barrier at the scope of the whole GPU) where v7's release has none (matmul-multicast/profile.md, at
// 49a860b). The release now has the block's scope (lab::mbarrier_arrive_in_block says why that is enough); not yet
// timed with it.
// Requirements: v7's; clusters of two that the GPU can hold, else v7's launcher.
template <typename T>
__global__ void __launch_bounds__(TmaStoreTile::kThreads, 1)
    matmul_multicast_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                            const __grid_constant__ CUtensorMap map_c, int m, int n, int k) {
#ifdef LAB_SM90A
  tmastore_tiles<T, 2>(&map_a, &map_b, &map_c, m, n, k);
#else
  __trap();  // built without sm_90a: the launcher never gets here on the lab's builds (see v5's requirements)
#endif
}

cudaError_t launch_matmul_multicast(lab::DType dtype, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                    int64_t k, cudaStream_t stream) {
  if (!tensor_maps_fit(a, b, c, n, k)) return launch_matmul_wgmma(dtype, a, b, c, m, n, k, stream);
  return launch_with_tensor_maps(dtype, a, b, c, m, n, k, [&](auto tag, auto map_a, auto map_b, auto map_c) {
    using T = decltype(tag);
    using Cfg = TmaStoreTile;
    constexpr int kBlocks = 2;
    const auto kernel = matmul_multicast_kernel<T>;
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes);
    if (err != cudaSuccess) return err;
    // Pairs of tiles, one above the other; a persistent grid of as many clusters as the GPU holds, at most one a pair.
    const int64_t pairs = static_cast<int64_t>(lab::blocks_for(lab::blocks_for(m, Cfg::BM), kBlocks)) *
                          lab::blocks_for(n, Cfg::BN);
    const int64_t clusters = lab::resident_clusters(kernel, Cfg::kThreads, kBlocks, pairs, Cfg::kSmemBytes);
    if (clusters == 0) return launch_matmul_tmastore(dtype, a, b, c, m, n, k, stream);
    cudaLaunchAttribute attribute;
    const cudaLaunchConfig_t config = lab::cluster_config(static_cast<unsigned int>(clusters * kBlocks),
                                                          Cfg::kThreads, kBlocks, stream, &attribute,
                                                          Cfg::kSmemBytes);
    return cudaLaunchKernelEx(&config, kernel, map_a, map_b, map_c, static_cast<int>(m), static_cast<int>(n),
                              static_cast<int>(k));
  });
}

#else  // host half: the torch binding

#include "lab_torch.h"

using MatmulLauncher = cudaError_t (*)(lab::DType, const void* a, const void* b, void* c, int64_t m, int64_t n,
                                       int64_t k, cudaStream_t);

// Which dtypes a row takes: every float type (the SIMT steps v1-v3), fp16/bf16 only (the tensor-core steps v4, v5,
// v7, v8), or fp32 only (v6, the fp32 path's last step).
enum class MatmulTypes { any, tensor_cores, fp32 };

// The checks every row shares. `name` ("matmul:mma") starts every message.
// Messages go through LAB_CHECK, which assembles them as text (see lab_torch.h for why).
at::Tensor run_matmul(const at::Tensor& a, const at::Tensor& b, const char* name, const char* impl,
                      MatmulLauncher launch, MatmulTypes types = MatmulTypes::any) {
  lab::check_cuda_input(a, name, "a");
  lab::check_cuda_input(b, name, "b");
  LAB_CHECK(a.dim() == 2, name, ": a has ", a.dim(), " dimensions (sizes ", a.sizes(), "); expected a 2-D M×K matrix");
  LAB_CHECK(b.dim() == 2, name, ": b has ", b.dim(), " dimensions (sizes ", b.sizes(), "); expected a 2-D K×N matrix");
  LAB_CHECK(a.size(1) == b.size(0), name, ": inner dimensions differ: a is ", a.sizes(), ", b is ", b.sizes(),
            " (a's columns must equal b's rows)");
  LAB_CHECK_TYPE(a.scalar_type() == b.scalar_type(), name, ": dtypes differ: a is ", a.scalar_type(), ", b is ",
                 b.scalar_type());
  LAB_CHECK(a.device() == b.device(), name, ": inputs are on different devices: ", a.device(), " vs ", b.device());
  const lab::DType dtype = lab::float_dtype(a, name, "a");
  LAB_CHECK_TYPE(types != MatmulTypes::tensor_cores || dtype != lab::DType::f32, name, " takes float16 or bfloat16 "
                 "(tensor cores, fp32 accumulation); float32 would need TF32, which this lab keeps off: use "
                 "cuda:regblock or cuda:warptile");
  LAB_CHECK_TYPE(types != MatmulTypes::fp32 || dtype == lab::DType::f32, name, " takes float32 (the fp32 SIMT "
                 "path), not dtype ", a.scalar_type(), "; fp16/bf16 go through cuda:mma or cuda:wgmma");
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  constexpr int64_t kIntMax = 0x7fffffff;  // kernels index rows and columns with int (offsets are 64-bit)
  LAB_CHECK(m <= kIntMax && n <= kIntMax && k <= kIntMax, name, ": sizes ", a.sizes(), " x ", b.sizes(),
            " exceed 2^31 - 1 in one dimension");
  at::Tensor c = at::empty({m, n}, a.options());
  if (m == 0 || n == 0) return c;
  if (k == 0) return c.zero_();  // an empty sum: C is all zeros
  c10::cuda::CUDAGuard guard(a.device());
  lab::check_launch(launch(dtype, a.const_data_ptr(), b.const_data_ptr(), c.mutable_data_ptr(), m, n, k,
                           lab::current_stream()),
                    "matmul", impl);
  return c;
}

at::Tensor matmul_naive(const at::Tensor& a, const at::Tensor& b) {
  return run_matmul(a, b, "matmul:naive", "naive", launch_matmul_naive);
}

at::Tensor matmul_smem(const at::Tensor& a, const at::Tensor& b) {
  return run_matmul(a, b, "matmul:smem", "smem", launch_matmul_smem);
}

at::Tensor matmul_regblock(const at::Tensor& a, const at::Tensor& b) {
  return run_matmul(a, b, "matmul:regblock", "regblock", launch_matmul_regblock);
}

at::Tensor matmul_mma(const at::Tensor& a, const at::Tensor& b) {
  return run_matmul(a, b, "matmul:mma", "mma", launch_matmul_mma, MatmulTypes::tensor_cores);
}

// The Hopper steps (wgmma, TMA, setmaxnreg, built for sm_90a) refuse any other GPU with a message.
void check_hopper(const at::Tensor& a, const char* name) {
  lab::check_cuda_input(a, name, "a");
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, a.get_device());
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, a.get_device());
  LAB_CHECK(major == 9 && minor == 0, name, " needs a Hopper GPU (compute capability 9.0: wgmma and TMA, built for "
            "sm_90a); this GPU is ", major, ".", minor, ": use cuda:mma");
}

at::Tensor matmul_wgmma(const at::Tensor& a, const at::Tensor& b) {
  check_hopper(a, "matmul:wgmma");
  return run_matmul(a, b, "matmul:wgmma", "wgmma", launch_matmul_wgmma, MatmulTypes::tensor_cores);
}

at::Tensor matmul_warptile(const at::Tensor& a, const at::Tensor& b) {
  return run_matmul(a, b, "matmul:warptile", "warptile", launch_matmul_warptile, MatmulTypes::fp32);
}

at::Tensor matmul_tmastore(const at::Tensor& a, const at::Tensor& b) {
  check_hopper(a, "matmul:tmastore");
  return run_matmul(a, b, "matmul:tmastore", "tmastore", launch_matmul_tmastore, MatmulTypes::tensor_cores);
}

at::Tensor matmul_multicast(const at::Tensor& a, const at::Tensor& b) {
  check_hopper(a, "matmul:multicast");
  return run_matmul(a, b, "matmul:multicast", "multicast", launch_matmul_multicast, MatmulTypes::tensor_cores);
}

TORCH_LIBRARY(lab_matmul, m) {
  m.def("naive(Tensor a, Tensor b) -> Tensor");
  m.def("smem(Tensor a, Tensor b) -> Tensor");
  m.def("regblock(Tensor a, Tensor b) -> Tensor");
  m.def("mma(Tensor a, Tensor b) -> Tensor");
  m.def("wgmma(Tensor a, Tensor b) -> Tensor");
  m.def("warptile(Tensor a, Tensor b) -> Tensor");
  m.def("tmastore(Tensor a, Tensor b) -> Tensor");
  m.def("multicast(Tensor a, Tensor b) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_matmul, CUDA, m) {
  m.impl("naive", &matmul_naive);
  m.impl("smem", &matmul_smem);
  m.impl("regblock", &matmul_regblock);
  m.impl("mma", &matmul_mma);
  m.impl("wgmma", &matmul_wgmma);
  m.impl("warptile", &matmul_warptile);
  m.impl("tmastore", &matmul_tmastore);
  m.impl("multicast", &matmul_multicast);
}

#endif
