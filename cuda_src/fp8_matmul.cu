// fp8 scaled matrix multiply C = (A @ B)·scale_a·scale_b: A (M, K) and B (K, N) float8_e4m3fn, A row-major and B
// column-major (Bt = B.t(), (N, K), row-major: both walk K contiguously), scale_a one float32 per row of A, scale_b
// one per column of B, C (M, N) bfloat16. The spec and the arithmetic its tolerance allows: specs/fp8_matmul.py.
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/fp8_matmul.md):
//   v1 naive   one thread per output element: a K-long dot product of e4m3 values converted to float32, straight
//              from global memory, then the two scales and the rounding to bf16
//   v2 mma     the fp8 tensor cores through mma.sync m16n8k32 (sm_89+): 128×128 tiles of C per block of 8 warps,
//              A and Bt tiles of 64 bytes of K staged in shared memory by cp.async, two stages; each warp's 64×32
//              patch is 4×4 mma tiles whose operands are plain 32-bit shared loads (four consecutive K bytes, the
//              operand layout of 8-bit mma); the tensor core's partial sum of each K tile is added into a float32
//              accumulator (its own accumulation is narrower: see the spec), and the scales applied in the epilogue
//   v3 wgmma   Hopper's warpgroup MMA (m64n128k32 e4m3) fed by TMA, producer and consumer warpgroups on mbarriers
//   v4 persistent  v3 on a grid of one block per SM, each walking the output tiles in the grouped order: the
//              producer copies the next tile's K tiles while the consumers store this one's C
//   v5 tmastore  v4 with C written through shared memory by TMA: each consumer stages its scaled bf16 part of the
//              tile in swizzled boxes, one thread hands them to the copy engine, and the warpgroup goes back to the
//              K tiles while C is written
//
// v2 takes K a multiple of 16 (every 16-byte copy of a row then starts aligned); other K fall back to v1. v3 needs
// the same (TMA's row pitch) and a Hopper GPU (compute capability 9.0, built for sm_90a); other inputs take v2's
// launcher, and so v1 where v2 would. v4 takes what v3 takes; v5 too where N is a multiple of 8 (C's row pitch for
// TMA), and otherwise takes v4's launcher.
// Triton side: triton_src/fp8_matmul.py.
#include "lab.h"

cudaError_t launch_fp8_matmul_naive(const uint8_t* a, const uint8_t* bt, const float* scale_a, int64_t scale_a_stride,
                                    const float* scale_b, int64_t scale_b_stride, void* c, int64_t m, int64_t n,
                                    int64_t k, cudaStream_t stream);
cudaError_t launch_fp8_matmul_mma(const uint8_t* a, const uint8_t* bt, const float* scale_a, int64_t scale_a_stride,
                                  const float* scale_b, int64_t scale_b_stride, void* c, int64_t m, int64_t n,
                                  int64_t k, cudaStream_t stream);
cudaError_t launch_fp8_matmul_wgmma(const uint8_t* a, const uint8_t* bt, const float* scale_a, int64_t scale_a_stride,
                                    const float* scale_b, int64_t scale_b_stride, void* c, int64_t m, int64_t n,
                                    int64_t k, cudaStream_t stream);
cudaError_t launch_fp8_matmul_persistent(const uint8_t* a, const uint8_t* bt, const float* scale_a,
                                         int64_t scale_a_stride, const float* scale_b, int64_t scale_b_stride, void* c,
                                         int64_t m, int64_t n, int64_t k, cudaStream_t stream);
cudaError_t launch_fp8_matmul_tmastore(const uint8_t* a, const uint8_t* bt, const float* scale_a,
                                       int64_t scale_a_stride, const float* scale_b, int64_t scale_b_stride, void* c,
                                       int64_t m, int64_t n, int64_t k, cudaStream_t stream);

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <climits>

#include "lab_async.cuh"
#include "lab_device.cuh"
#include "lab_hopper.cuh"

__device__ __forceinline__ float e4m3_to_float(uint8_t byte) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(byte, __NV_E4M3)));
}

// ---- v1 naive: one thread per output element. ---------------------------------------------------------------------
__global__ void fp8_matmul_naive_kernel(const uint8_t* __restrict__ a, const uint8_t* __restrict__ bt,
                                        const float* __restrict__ scale_a, int64_t scale_a_stride,
                                        const float* __restrict__ scale_b, int64_t scale_b_stride,
                                        __nv_bfloat16* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  float acc = 0.0f;  // each product of two e4m3 values is exact in float32; the sum rounds
  for (int64_t j = 0; j < k; ++j) acc += e4m3_to_float(a[row * k + j]) * e4m3_to_float(bt[col * k + j]);
  c[row * n + col] = __float2bfloat16_rn(acc * scale_a[row * scale_a_stride] * scale_b[col * scale_b_stride]);
}

cudaError_t launch_fp8_matmul_naive(const uint8_t* a, const uint8_t* bt, const float* scale_a, int64_t scale_a_stride,
                                    const float* scale_b, int64_t scale_b_stride, void* c, int64_t m, int64_t n,
                                    int64_t k, cudaStream_t stream) {
  const dim3 threads(16, 16);
  const dim3 blocks(static_cast<unsigned int>((n + 15) / 16), static_cast<unsigned int>((m + 15) / 16));
  fp8_matmul_naive_kernel<<<blocks, threads, 0, stream>>>(a, bt, scale_a, scale_a_stride, scale_b, scale_b_stride,
                                                          static_cast<__nv_bfloat16*>(c), m, n, k);
  return cudaGetLastError();
}

// ---- v2 mma: fp8 mma.sync, cp.async staging. ----------------------------------------------------------------------
// D = A·B + C for a 16×8 tile, K = 32 e4m3 values: A's four registers hold rows g and g + 8 (g = lane / 4) at K bytes
// 4t..4t+3 and 16 + 4t..19 + 4t (t = lane % 4); B's two hold column g at the same K bytes; D's four hold row g,
// columns 2t and 2t + 1, then row g + 8 ("mma.m16n8k32", 8-bit operand layouts, PTX ISA).
__device__ __forceinline__ void mma_e4m3_16x8x32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                                 const float (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
        "f"(c[3]));
}

constexpr int kTileM = 128, kTileN = 128, kTileK = 64;  // K in bytes: two mma k-steps
constexpr int kWarpM = 64, kWarpN = 32;                   // 2×4 warps
constexpr int kMmaM = kWarpM / 16, kMmaN = kWarpN / 8;    // 4×4 mma tiles per warp
constexpr int kThreadsMma = 256;
// Rows of a staged tile are 80 bytes apart, not 64: the eight rows a warp's fragment load touches (g = 0..7, four
// bytes at 4t) then fall in distinct banks (row·20 + t words, mod 32), where a 64-byte pitch puts four rows on each.
constexpr int kPitch = kTileK + 16;

__global__ void __launch_bounds__(kThreadsMma, 1)
    fp8_matmul_mma_kernel(const uint8_t* __restrict__ a, const uint8_t* __restrict__ bt,
                          const float* __restrict__ scale_a, int64_t scale_a_stride,
                          const float* __restrict__ scale_b, int64_t scale_b_stride,
                          __nv_bfloat16* __restrict__ c, int64_t m, int64_t n, int64_t k) {
  __shared__ alignas(16) uint8_t a_tile[2][kTileM * kPitch];
  __shared__ alignas(16) uint8_t b_tile[2][kTileN * kPitch];
  const int64_t first_row = static_cast<int64_t>(blockIdx.y) * kTileM;
  const int64_t first_col = static_cast<int64_t>(blockIdx.x) * kTileN;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;
  const int warp_row = (warp / 4) * kWarpM, warp_col = (warp % 4) * kWarpN;

  // Each thread copies two 16-byte pieces of each tile (128 rows × 4 pieces = 512 per tile); rows past M or N and
  // K past the end become zeros (K is a multiple of 16, so a piece is all in or all out).
  auto stage = [&](int buffer, int64_t k0) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int piece = threadIdx.x + i * kThreadsMma;
      const int r = piece / 4, kk = (piece % 4) * 16;
      const bool k_in = k0 + kk < k;
      const int64_t row = first_row + r, col = first_col + r;
      const bool a_in = row < m && k_in, b_in = col < n && k_in;
      lab::cp_async_16(lab::smem_address(&a_tile[buffer][r * kPitch + kk]), a_in ? a + row * k + k0 + kk : a, a_in);
      lab::cp_async_16(lab::smem_address(&b_tile[buffer][r * kPitch + kk]), b_in ? bt + col * k + k0 + kk : bt, b_in);
    }
  };

  float acc[kMmaM][kMmaN][4] = {};
  const int64_t k_tiles = (k + kTileK - 1) / kTileK;
  stage(0, 0);
  lab::cp_async_commit();
  for (int64_t kt = 0; kt < k_tiles; ++kt) {
    if (kt + 1 < k_tiles) stage((kt + 1) % 2, (kt + 1) * kTileK);  // the next tile loads while this one multiplies
    lab::cp_async_commit();
    lab::cp_async_wait<1>();
    __syncthreads();
    const uint8_t* as = a_tile[kt % 2];
    const uint8_t* bs = b_tile[kt % 2];
    float partial[kMmaM][kMmaN][4] = {};  // this K tile's sum, from the tensor core
#pragma unroll
    for (int ks = 0; ks < kTileK; ks += 32) {
      uint32_t af[kMmaM][4], bf[kMmaN][2];
#pragma unroll
      for (int i = 0; i < kMmaM; ++i) {
        const uint8_t* p = as + (warp_row + i * 16 + g) * kPitch + ks + 4 * t;
        af[i][0] = *reinterpret_cast<const uint32_t*>(p);
        af[i][1] = *reinterpret_cast<const uint32_t*>(p + 8 * kPitch);
        af[i][2] = *reinterpret_cast<const uint32_t*>(p + 16);
        af[i][3] = *reinterpret_cast<const uint32_t*>(p + 8 * kPitch + 16);
      }
#pragma unroll
      for (int j = 0; j < kMmaN; ++j) {
        const uint8_t* p = bs + (warp_col + j * 8 + g) * kPitch + ks + 4 * t;
        bf[j][0] = *reinterpret_cast<const uint32_t*>(p);
        bf[j][1] = *reinterpret_cast<const uint32_t*>(p + 16);
      }
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < kMmaN; ++j) mma_e4m3_16x8x32(partial[i][j], af[i], bf[j], partial[i][j]);
    }
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < kMmaN; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] += partial[i][j][e];  // promoted into float32 once per K tile
    __syncthreads();  // every warp is done with this buffer before the next iteration's copies overwrite it
  }

#pragma unroll
  for (int i = 0; i < kMmaM; ++i)
#pragma unroll
    for (int j = 0; j < kMmaN; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t row = first_row + warp_row + i * 16 + g + (e / 2) * 8;
        const int64_t col = first_col + warp_col + j * 8 + 2 * t + e % 2;
        if (row < m && col < n) {
          c[row * n + col] =
              __float2bfloat16_rn(acc[i][j][e] * scale_a[row * scale_a_stride] * scale_b[col * scale_b_stride]);
        }
      }
}

// Whether every row of A and Bt starts on a 16-byte boundary (K a multiple of 16, aligned bases): v2's 16-byte copies
// need it, and so does v3's TMA, which takes row pitches (K bytes) in multiples of 16 only.
static bool rows_aligned16(const uint8_t* a, const uint8_t* bt, int64_t k) {
  return k % 16 == 0 && lab::is_aligned16(a) && lab::is_aligned16(bt);
}

cudaError_t launch_fp8_matmul_mma(const uint8_t* a, const uint8_t* bt, const float* scale_a, int64_t scale_a_stride,
                                  const float* scale_b, int64_t scale_b_stride, void* c, int64_t m, int64_t n,
                                  int64_t k, cudaStream_t stream) {
  if (!rows_aligned16(a, bt, k)) {
    return launch_fp8_matmul_naive(a, bt, scale_a, scale_a_stride, scale_b, scale_b_stride, c, m, n, k, stream);
  }
  const dim3 blocks(static_cast<unsigned int>((n + kTileN - 1) / kTileN),
                    static_cast<unsigned int>((m + kTileM - 1) / kTileM));
  fp8_matmul_mma_kernel<<<blocks, kThreadsMma, 0, stream>>>(a, bt, scale_a, scale_a_stride, scale_b, scale_b_stride,
                                                            static_cast<__nv_bfloat16*>(c), m, n, k);
  return cudaGetLastError();
}

// ---- v3 wgmma: Hopper's fp8 warpgroup MMA, fed by TMA, warp-specialized (matmul.cu v5's design for 8-bit). -------
// What changes against mma, and why each helps:
//  * wgmma.mma_async.m64n128k32 e4m3: one instruction per warpgroup (4 warps) multiplies a 64×32 slice of A by a
//    32×128 slice of B, both read from shared memory through matrix descriptors: no fragment loads, no operand
//    registers, and asynchronous, so the warps issue while the tensor cores work. 8-bit wgmma takes both operands
//    K-major only (it has no transpose flags), which is exactly how A and Bt lie: both are copied as they are.
//  * TMA (cp.async.bulk.tensor): one thread copies a whole 128-row × 128-byte box of A or Bt per stage from a tensor
//    map built on the host, zero-filling rows past M and N and bytes past K (a K tail adds zero products), in the
//    128-byte-swizzled layout wgmma reads without bank conflicts. Completion is counted in bytes on an mbarrier.
//  * Warp specialization, as matmul v5: warpgroup 0 produces (one thread issues TMA into a Stages-deep ring), and
//    warpgroups 1 and 2 consume, each owning 64 rows of the 128×128 block tile; full/empty mbarriers per stage
//    replace __syncthreads, and setmaxnreg moves registers from the producer to the consumers.
//  * The promotion v2 does, kept: a consumer's 4 wgmma of a K tile (128 e4m3 values) sum into d, starting from zero
//    (scale-d = 0 on the first), and once they have completed d is added into a separate float32 accumulator acc.
//    The fp8 tensor core keeps its running sum with fewer bits than float32, so a sum over all of K inside it would
//    lose precision as K grows; adding its partial sums into float32 once per K tile is DeepGEMM's fix, and the
//    spec's tolerance (specs/fp8_matmul.py) assumes exactly such a promotion every few k-steps. Its price is a wait
//    for the tile's own batch before the adds; the other consumer's batch keeps the tensor cores busy meanwhile.
//  * The epilogue multiplies by scale_a[row]·scale_b[col] and rounds to bf16, storing column pairs as one 32-bit
//    store where they are in range (M and N need not be multiples of the tile).
// Requirements: compute capability 9.0 and a build for sm_90a, K a multiple of 16 on 16-byte-aligned A and Bt (TMA's
// row pitch), N and K below 2^31; other inputs take v2's launcher.
// BN = 128: a consumer thread holds d and acc, 64 registers each; at BN = 256 the two would be 256, past the 240 that
// setmaxnreg can give a consumer.
// Shared memory of v3 to v5 (lab::ring_setup): per stage a box of A ([BM rows][128 B]) and one of Bt ([BN rows]
// [128 B]), each row one K tile of 128 bytes.
struct Fp8WgmmaTile {
  static constexpr int BM = 128, BN = 128, BK = 128;  // BK in bytes, one e4m3 value each: a row of a swizzled box
  // A stage holds as many multiply-adds as one of matmul v5 (128·128·128 against 128·256·64) in two thirds of the
  // bytes, so the ring can be deeper in the same shared memory: more copies in flight ahead of the consumers.
  static constexpr int Stages = 6;
  static constexpr int kConsumers = 2;  // warpgroups doing math, 64 rows each
  static constexpr int kThreads = (kConsumers + 1) * 128;
  static constexpr int kAStageBytes = BM * BK, kBStageBytes = BN * BK;
  static constexpr int kSmemBytes = Stages * (kAStageBytes + kBStageBytes) + 1024;  // + slack for 1024-B alignment
};

#ifdef LAB_SM90A
// d (64×128 fp32, 64 per thread) = A (64×32 e4m3, K-major) · B (32×128 e4m3, K-major), plus d where `accumulate`:
// scale-d is a predicate (false: d is not read, so no instruction needs to zero it), set here from an integer as
// CUTLASS does; imm-scale-a and imm-scale-b = 1 (no negation).
__device__ __forceinline__ void wgmma_m64n128k32_e4m3(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                      bool accumulate) {
  asm volatile(
      "{\n .reg .pred accumulate;\n setp.ne.b32 accumulate, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "
      "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, "
      "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, accumulate, 1, 1;\n}\n"
      : LAB_WGMMA_F32X8(d, 0), LAB_WGMMA_F32X8(d, 8), LAB_WGMMA_F32X8(d, 16), LAB_WGMMA_F32X8(d, 24),
        LAB_WGMMA_F32X8(d, 32), LAB_WGMMA_F32X8(d, 40), LAB_WGMMA_F32X8(d, 48), LAB_WGMMA_F32X8(d, 56)
      : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate)));
}
#endif  // LAB_SM90A

// The epilogue's arithmetic, v3's to v5's: one warp's 16 rows of a consumer's 64×128 accumulator (layout:
// lab_hopper.cuh), its lane holding rows `row` and row + 8, and registers 4j..4j+3 the columns
// bn + 8j + 2·(lane%4) + {0, 1} of both; each value scaled by scale_a[row]·scale_b[col] and handed on as
// emit(j, col, top0, top1, bottom0, bottom1). Scales of rows and columns past M and N are not read (0 instead).
template <typename Emit>
__device__ __forceinline__ void scaled_pairs(const float (&acc)[64], int row, int bn, const float* scale_a,
                                             int64_t scale_a_stride, const float* scale_b, int64_t scale_b_stride,
                                             int m, int n, int lane, Emit emit) {
  const float sa_top = row < m ? scale_a[row * scale_a_stride] : 0.0f;
  const float sa_bottom = row + 8 < m ? scale_a[(row + 8) * scale_a_stride] : 0.0f;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const int col = bn + j * 8 + (lane % 4) * 2;
    const float sb0 = col < n ? scale_b[col * scale_b_stride] : 0.0f;
    const float sb1 = col + 1 < n ? scale_b[(col + 1) * scale_b_stride] : 0.0f;
    emit(j, col, acc[4 * j] * sa_top * sb0, acc[4 * j + 1] * sa_top * sb1, acc[4 * j + 2] * sa_bottom * sb0,
         acc[4 * j + 3] * sa_bottom * sb1);
  }
}

// The epilogue of v3 and v4: the scaled pairs rounded to bf16 and stored (outputs past M and N are not).
__device__ __forceinline__ void store_scaled(__nv_bfloat16* c, const float (&acc)[64], int row, int bn,
                                             const float* scale_a, int64_t scale_a_stride, const float* scale_b,
                                             int64_t scale_b_stride, int m, int n, int lane) {
  scaled_pairs(acc, row, bn, scale_a, scale_a_stride, scale_b, scale_b_stride, m, n, lane,
               [&](int, int col, float top0, float top1, float bottom0, float bottom1) {
                 lab::store_pair(c, row, col, m, n, top0, top1);
                 lab::store_pair(c, row + 8, col, m, n, bottom0, bottom1);
               });
}

__global__ void __launch_bounds__(Fp8WgmmaTile::kThreads, 1)
    fp8_matmul_wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_bt,
                            const float* __restrict__ scale_a, int64_t scale_a_stride,
                            const float* __restrict__ scale_b, int64_t scale_b_stride,
                            __nv_bfloat16* __restrict__ c, int m, int n, int k) {
#ifdef LAB_SM90A
  using Cfg = Fp8WgmmaTile;
  // 1. Shared memory: the stage ring of A and Bt tiles, and two barriers per stage (lab::ring_setup).
  unsigned char *a_tiles, *b_tiles;
  __shared__ __align__(8) uint64_t full[Cfg::Stages], empty[Cfg::Stages];
  lab::ring_setup<Cfg>(a_tiles, b_tiles, full, empty);
  const int tid = threadIdx.x, warpgroup = tid / 128;

  // 2. Which output tile this block computes (grouped order, for L2 reuse), and how many K tiles (k >= 1 here).
  int tile_m, tile_n;
  lab::grouped_tile(static_cast<int>(blockIdx.x), (m + Cfg::BM - 1) / Cfg::BM, (n + Cfg::BN - 1) / Cfg::BN, tile_m,
                    tile_n);
  const int bm = tile_m * Cfg::BM, bn = tile_n * Cfg::BN;
  const int k_tiles = (k - 1) / Cfg::BK + 1;

  // 3. Producer: warpgroup 0 gives most of its registers to the consumers; one thread of it walks K, filling stage
  //    t % Stages with K tile t (a box of A and one of Bt) as soon as both consumers have released it.
  if (warpgroup == 0) {
    lab::setmaxnreg_dec<24>();
    if (tid != 0) return;
    for (int t = 0; t < k_tiles; ++t) {
      const int s = t % Cfg::Stages;
      // Stage s last held tile t - Stages: empty[s]'s completion number t / Stages - 1, parity (t / Stages + 1) % 2.
      if (t >= Cfg::Stages) lab::mbarrier_wait(&empty[s], (t / Cfg::Stages + 1) % 2);
      lab::mbarrier_expect_bytes(&full[s], Cfg::kAStageBytes + Cfg::kBStageBytes);  // whole boxes, zero fill too
      lab::tma_load_2d(a_tiles + s * Cfg::kAStageBytes, &map_a, t * Cfg::BK, bm, &full[s]);
      lab::tma_load_2d(b_tiles + s * Cfg::kBStageBytes, &map_bt, t * Cfg::BK, bn, &full[s]);
    }
    return;
  }

  // 4. Consumers: warpgroups 1 and 2 take the registers the producer gave up (d and acc are 64 a thread each), each
  //    owning 64 rows of the block's 128×128 tile.
  lab::setmaxnreg_inc<240>();
  const int consumer = warpgroup - 1, lane = tid % 32, warp_in_group = tid % 128 / 32;
  float d[64], acc[64];  // this K tile's sum from the tensor core, and the float32 sum of the tiles so far
#pragma unroll
  for (int i = 0; i < 64; ++i) d[i] = acc[i] = 0.0f;  // d only so that it is never read undefined: scale-d = 0 below

  for (int t = 0; t < k_tiles; ++t) {
    // 5. Wait for tile t's bytes (full[s]'s completion number t / Stages).
    const int s = t % Cfg::Stages;
    lab::mbarrier_wait(&full[s], (t / Cfg::Stages) % 2);
    // This consumer's 64 rows of A (8 KB into the stage) and all 128 rows of Bt. Both are K-major with 128-byte rows:
    // the stride between 8-row groups is 1024 B and the leading offset is unused (a k32 step, 32 bytes, stays inside
    // a row); the k32 slice kk starts 32·kk bytes into each swizzled row.
    const unsigned char* a_tile = a_tiles + s * Cfg::kAStageBytes + consumer * 64 * Cfg::BK;
    const unsigned char* b_tile = b_tiles + s * Cfg::kBStageBytes;
    // 6. The tile's BK/32 = 4 wgmma as one batch into d, the first overwriting it (scale-d = 0); the fence orders
    //    the promotion's reads of d before them.
    lab::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < Cfg::BK / 32; ++kk) {
      const uint64_t desc_a = lab::smem_descriptor(a_tile + kk * 32, 16, 1024);
      const uint64_t desc_b = lab::smem_descriptor(b_tile + kk * 32, 16, 1024);
      wgmma_m64n128k32_e4m3(d, desc_a, desc_b, /*accumulate=*/kk > 0);
    }
    lab::wgmma_commit_group();
    // 7. Wait for the batch (the promotion needs its result), release the stage it read (each warp's lane 0), and
    //    promote: d into the float32 accumulator. The operand fences keep the adds after the wait and before the
    //    next batch, which the compiler cannot see on its own (wgmma writes d asynchronously).
    lab::wgmma_wait_group<0>();
    lab::wgmma_fence_operand(d);
    if (lane == 0) lab::mbarrier_arrive(&empty[s]);
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] += d[i];
    lab::wgmma_fence_operand(acc);
  }

  // 8. Epilogue, straight from registers to C.
  store_scaled(c, acc, bm + consumer * 64 + warp_in_group * 16 + lane / 4, bn, scale_a, scale_a_stride, scale_b,
               scale_b_stride, m, n, lane);
#else
  __trap();  // built without sm_90a: the launcher never starts it there (lab::runs_sm90a)
#endif
}

// v3's and v4's launch: on a Hopper build, with A's and Bt's rows at TMA's 16-byte pitch and sizes within int, the
// two tensor maps are built and `start(map_a, map_bt)` launches the kernel; other inputs take v2's launcher.
template <typename Start>
cudaError_t launch_with_tensor_maps(const uint8_t* a, const uint8_t* bt, const float* scale_a, int64_t scale_a_stride,
                                    const float* scale_b, int64_t scale_b_stride, void* c, int64_t m, int64_t n,
                                    int64_t k, cudaStream_t stream, Start start) {
  // Not Hopper: this build has no wgmma kernel for the GPU (specs/fp8_matmul.py reports the row as skipped there).
  if (!lab::runs_sm90a()) return cudaErrorNoKernelImageForDevice;
  // TMA needs rows at 16-byte multiples, and the kernels index with int: other inputs take v2.
  if (!rows_aligned16(a, bt, k) || n > INT_MAX || k > INT_MAX) {
    return launch_fp8_matmul_mma(a, bt, scale_a, scale_a_stride, scale_b, scale_b_stride, c, m, n, k, stream);
  }
  CUtensorMap map_a, map_bt;
  if (!lab::encode_tensor_map(&map_a, a, m, k, Fp8WgmmaTile::BM) ||
      !lab::encode_tensor_map(&map_bt, bt, n, k, Fp8WgmmaTile::BN))
    return cudaErrorInvalidValue;
  return start(map_a, map_bt);
}

cudaError_t launch_fp8_matmul_wgmma(const uint8_t* a, const uint8_t* bt, const float* scale_a, int64_t scale_a_stride,
                                    const float* scale_b, int64_t scale_b_stride, void* c, int64_t m, int64_t n,
                                    int64_t k, cudaStream_t stream) {
  return launch_with_tensor_maps(
      a, bt, scale_a, scale_a_stride, scale_b, scale_b_stride, c, m, n, k, stream,
      [&](const CUtensorMap& map_a, const CUtensorMap& map_bt) {
        return lab::launch_over_tiles<Fp8WgmmaTile>(fp8_matmul_wgmma_kernel, m, n, stream, map_a, map_bt, scale_a,
                                                    scale_a_stride, scale_b, scale_b_stride,
                                                    static_cast<__nv_bfloat16*>(c), static_cast<int>(m),
                                                    static_cast<int>(n), static_cast<int>(k));
      });
}

// ---- v4 persistent: one block per SM walking the output tiles. ---------------------------------------------------
// What changes against v3, and why: v3 runs a block per output tile, one block per SM (its 197 KB ring fills the
// SM). Each block starts with an empty ring, so its first K tile waits for a copy from memory, and its epilogue
// (scaling, rounding, storing C from registers) leaves the tensor cores idle until the next block has started and
// filled its ring. Here the grid is one block per SM and each block takes tiles blockIdx.x, + gridDim.x, ... in the
// grouped order. The producer walks the K tiles of all its block's output tiles in one sequence, so while the
// consumers store one tile's C the ring is already filling with the next tile's K tiles. Stage and parity run on
// that one count (it) across tiles, in the producer and the consumers alike.
// Not done, and why: a second register set for the partial sum, to issue K tile t+1's batch before waiting for t's
// and promoting it. ptxas then serializes every wgmma (its warning C7514: non-wgmma instructions reading a wgmma's
// accumulators inside a pipeline stage), so the promotion keeps v3's wait; the other consumer warpgroup's batches
// fill that gap, as in DeepGEMM. With one batch in flight and the adds reading the other register set, waited for
// already, ptxas (CUDA 13.0) still puts a wait before the adds (its note C7517, "warpgroup.wait is injected ... to
// allow use of registers defined by GMMA"): within one warpgroup the adds do not overlap its own wgmma.

// v5's shared memory beyond v4's ring: each consumer's 64×128 part of C as two 64×64 bf16 boxes of 128-byte rows,
// swizzled as TMA stores them (the ring's layout, 8 KB a box, on 1024-byte boundaries).
constexpr int kFp8CBoxBytes = 64 * 128;
constexpr int kFp8TmaStoreSmemBytes = Fp8WgmmaTile::kSmemBytes + Fp8WgmmaTile::kConsumers * 2 * kFp8CBoxBytes;

#ifdef LAB_SM90A
// v5's epilogue, the part every thread of a consumer does: its accumulator registers (the layout of store_scaled,
// rows `local_row` and local_row + 8 of the consumer's 64) scaled, rounded to bf16 and written as column pairs into
// the consumer's two boxes, columns 8j..8j+7 into box j / 8, swizzled as TMA stores them (lab::stage_pairs). The
// scales of rows and columns past M and N read as 0; TMA stores nothing there.
__device__ __forceinline__ void stage_scaled(unsigned char* boxes, const float (&acc)[64], int local_row, int row,
                                             int bn, const float* scale_a, int64_t scale_a_stride,
                                             const float* scale_b, int64_t scale_b_stride, int m, int n, int lane) {
  scaled_pairs(acc, row, bn, scale_a, scale_a_stride, scale_b, scale_b_stride, m, n, lane,
               [&](int j, int, float top0, float top1, float bottom0, float bottom1) {
                 lab::stage_pairs<__nv_bfloat16>(boxes + (j / 8) * kFp8CBoxBytes, local_row, j, lane, top0, top1,
                                                 bottom0, bottom1);
               });
}

// v4's body, and v5's (kTmaStore: C through shared memory and TMA; map_c is C's tensor map, unused by v4).
template <bool kTmaStore>
__device__ __forceinline__ void persistent_tiles(const CUtensorMap& map_a, const CUtensorMap& map_bt,
                                                 const CUtensorMap* map_c, const float* __restrict__ scale_a,
                                                 int64_t scale_a_stride, const float* __restrict__ scale_b,
                                                 int64_t scale_b_stride, __nv_bfloat16* __restrict__ c, int m, int n,
                                                 int k) {
  using Cfg = Fp8WgmmaTile;
  // 1. Shared memory and barriers as v3; v5's boxes of C follow the ring.
  unsigned char *a_tiles, *b_tiles;
  __shared__ __align__(8) uint64_t full[Cfg::Stages], empty[Cfg::Stages];
  lab::ring_setup<Cfg>(a_tiles, b_tiles, full, empty);
  const int tid = threadIdx.x, warpgroup = tid / 128;

  const int tiles_m = (m + Cfg::BM - 1) / Cfg::BM, tiles_n = (n + Cfg::BN - 1) / Cfg::BN;
  const int tiles = tiles_m * tiles_n;
  const int k_tiles = (k - 1) / Cfg::BK + 1;

  // 2. Producer: one thread walks every K tile of every output tile of this block, `it` counting them all.
  if (warpgroup == 0) {
    lab::setmaxnreg_dec<24>();
    if (tid != 0) return;
    int it = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      int tile_m, tile_n;
      lab::grouped_tile(tile, tiles_m, tiles_n, tile_m, tile_n);
      for (int t = 0; t < k_tiles; ++t, ++it) {
        const int s = it % Cfg::Stages;
        if (it >= Cfg::Stages) lab::mbarrier_wait(&empty[s], (it / Cfg::Stages + 1) % 2);
        lab::mbarrier_expect_bytes(&full[s], Cfg::kAStageBytes + Cfg::kBStageBytes);
        lab::tma_load_2d(a_tiles + s * Cfg::kAStageBytes, &map_a, t * Cfg::BK, tile_m * Cfg::BM, &full[s]);
        lab::tma_load_2d(b_tiles + s * Cfg::kBStageBytes, &map_bt, t * Cfg::BK, tile_n * Cfg::BN, &full[s]);
      }
    }
    return;
  }

  // 3. Consumers: 64 rows each of every output tile, the K tiles counted by `it` as the producer counts them.
  lab::setmaxnreg_inc<240>();
  const int consumer = warpgroup - 1, lane = tid % 32, warp_in_group = tid % 128 / 32;
  const int local_row = warp_in_group * 16 + lane / 4;
  unsigned char* boxes = b_tiles + Cfg::Stages * Cfg::kBStageBytes + consumer * 2 * kFp8CBoxBytes;
  const bool issues_stores = tid % 128 == 0;  // v5: the thread of this consumer that hands its boxes to TMA
  float d[64], acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) d[i] = 0.0f;  // never read undefined (scale-d = 0 on a batch's first wgmma)

  // The batch of the block's K tile number `kt` (counting over all its output tiles) into d: wait for its bytes,
  // then its BK/32 wgmma, committed as one group.
  auto issue = [&](int kt) {
    const int s = kt % Cfg::Stages;
    lab::mbarrier_wait(&full[s], (kt / Cfg::Stages) % 2);
    const unsigned char* a_tile = a_tiles + s * Cfg::kAStageBytes + consumer * 64 * Cfg::BK;
    const unsigned char* b_tile = b_tiles + s * Cfg::kBStageBytes;
    lab::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < Cfg::BK / 32; ++kk) {
      wgmma_m64n128k32_e4m3(d, lab::smem_descriptor(a_tile + kk * 32, 16, 1024),
                            lab::smem_descriptor(b_tile + kk * 32, 16, 1024), /*accumulate=*/kk > 0);
    }
    lab::wgmma_commit_group();
  };
  // K tile `kt`'s batch, known complete: release its stage and add d into the float32 accumulator.
  auto promote = [&](int kt) {
    lab::wgmma_fence_operand(d);
    if (lane == 0) lab::mbarrier_arrive(&empty[kt % Cfg::Stages]);
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] += d[i];
    lab::wgmma_fence_operand(acc);
  };

  int it = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int tile_m, tile_n;
    lab::grouped_tile(tile, tiles_m, tiles_n, tile_m, tile_n);
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
    // 4. The K tiles as v3's: each batch waited for and promoted before the next is issued.
    for (int t = 0; t < k_tiles; ++t, ++it) {
      issue(it);
      lab::wgmma_wait_group<0>();
      promote(it);
    }

    // 5. Epilogue; the producer is already filling the ring with the next tile's K tiles.
    const int row0 = tile_m * Cfg::BM + consumer * 64, bn = tile_n * Cfg::BN;
    if constexpr (kTmaStore) {
      // v5: the boxes are free again once the stores of this consumer's last tile have read them; each thread's
      // writes are made visible to the copy engine, the warpgroup meets, and one thread hands both boxes to TMA and
      // goes on to the next tile's K tiles with the others while the copy engine writes C.
      if (issues_stores) lab::tma_store_wait_read<0>();
      lab::named_barrier_sync(1 + consumer, 128);
      stage_scaled(boxes, acc, local_row, row0 + local_row, bn, scale_a, scale_a_stride, scale_b, scale_b_stride, m,
                   n, lane);
      lab::fence_proxy_async_shared();
      lab::named_barrier_sync(1 + consumer, 128);
      if (issues_stores) {
        lab::tma_store_2d(map_c, boxes, bn, row0);
        lab::tma_store_2d(map_c, boxes + kFp8CBoxBytes, bn + 64, row0);
        lab::tma_store_commit();
      }
    } else {
      // v4: as v3, straight from registers to C.
      store_scaled(c, acc, row0 + local_row, bn, scale_a, scale_a_stride, scale_b, scale_b_stride, m, n, lane);
    }
  }
  // v5: the block's shared memory must outlive the last stores' reads of it.
  if (kTmaStore && issues_stores) lab::tma_store_wait<0>();
}
#endif  // LAB_SM90A

__global__ void __launch_bounds__(Fp8WgmmaTile::kThreads, 1)
    fp8_matmul_persistent_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_bt,
                                 const float* __restrict__ scale_a, int64_t scale_a_stride,
                                 const float* __restrict__ scale_b, int64_t scale_b_stride,
                                 __nv_bfloat16* __restrict__ c, int m, int n, int k) {
#ifdef LAB_SM90A
  persistent_tiles<false>(map_a, map_bt, nullptr, scale_a, scale_a_stride, scale_b, scale_b_stride, c, m, n, k);
#else
  __trap();  // built without sm_90a: the launcher never starts it there (lab::runs_sm90a)
#endif
}

cudaError_t launch_fp8_matmul_persistent(const uint8_t* a, const uint8_t* bt, const float* scale_a,
                                         int64_t scale_a_stride, const float* scale_b, int64_t scale_b_stride, void* c,
                                         int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  return launch_with_tensor_maps(
      a, bt, scale_a, scale_a_stride, scale_b, scale_b_stride, c, m, n, k, stream,
      [&](const CUtensorMap& map_a, const CUtensorMap& map_bt) {
        return lab::launch_persistent<Fp8WgmmaTile>(
            fp8_matmul_persistent_kernel, Fp8WgmmaTile::kSmemBytes, m, n, stream, map_a, map_bt, scale_a,
            scale_a_stride, scale_b, scale_b_stride, static_cast<__nv_bfloat16*>(c), static_cast<int>(m),
            static_cast<int>(n), static_cast<int>(k));
      });
}

// ---- v5 tmastore: C through shared memory and TMA stores. --------------------------------------------------------
// What changes against v4, and why: v4's epilogue stores C from registers, 4 bytes a thread and instruction, so
// every 32-byte sector of C is written in two halves by two instructions, and the consumers issue all of those
// stores before they start the next tile's K tiles, the tensor cores idle meanwhile (results/<gpu>/
// fp8_matmul-profile.md: twice cuBLASLt's sectors into L2, 1.56 times its instructions). Here each consumer
// writes its scaled bf16 part of C into two swizzled boxes in shared memory (st.shared, no bank conflicts), one
// thread hands them to TMA (cp.async.bulk.tensor, whole sectors, rows and columns past M and N dropped by the copy
// engine), and the warpgroup returns to the K tiles at once; the boxes are reused once the copy engine has read
// them, a tile later. The ring keeps its six stages: 192 KB + 32 KB of C fits the 227 KB an SM gives a block.
// Requirements: v4's, and N a multiple of 8 on a 16-byte-aligned C (C's row pitch, for its tensor map); other
// inputs take v4's launcher.
__global__ void __launch_bounds__(Fp8WgmmaTile::kThreads, 1)
    fp8_matmul_tmastore_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_bt,
                               const __grid_constant__ CUtensorMap map_c, const float* __restrict__ scale_a,
                               int64_t scale_a_stride, const float* __restrict__ scale_b, int64_t scale_b_stride,
                               int m, int n, int k) {
#ifdef LAB_SM90A
  persistent_tiles<true>(map_a, map_bt, &map_c, scale_a, scale_a_stride, scale_b, scale_b_stride, nullptr, m, n, k);
#else
  __trap();  // built without sm_90a: the launcher never starts it there (lab::runs_sm90a)
#endif
}

cudaError_t launch_fp8_matmul_tmastore(const uint8_t* a, const uint8_t* bt, const float* scale_a,
                                       int64_t scale_a_stride, const float* scale_b, int64_t scale_b_stride, void* c,
                                       int64_t m, int64_t n, int64_t k, cudaStream_t stream) {
  CUtensorMap map_c;
  if (n % 8 != 0 || reinterpret_cast<uintptr_t>(c) % 16 != 0 || !lab::runs_sm90a() ||
      !lab::encode_tensor_map(&map_c, static_cast<const __nv_bfloat16*>(c), m, n, 64)) {
    return launch_fp8_matmul_persistent(a, bt, scale_a, scale_a_stride, scale_b, scale_b_stride, c, m, n, k, stream);
  }
  return launch_with_tensor_maps(
      a, bt, scale_a, scale_a_stride, scale_b, scale_b_stride, c, m, n, k, stream,
      [&](const CUtensorMap& map_a, const CUtensorMap& map_bt) {
        return lab::launch_persistent<Fp8WgmmaTile>(fp8_matmul_tmastore_kernel, kFp8TmaStoreSmemBytes, m, n, stream,
                                                    map_a, map_bt, map_c, scale_a, scale_a_stride, scale_b,
                                                    scale_b_stride, static_cast<int>(m), static_cast<int>(n),
                                                    static_cast<int>(k));
      });
}

#else  // host half: the torch binding

#include "lab_torch.h"

using Fp8MatmulLauncher = cudaError_t (*)(const uint8_t*, const uint8_t*, const float*, int64_t, const float*, int64_t,
                                          void*, int64_t, int64_t, int64_t, cudaStream_t);

static at::Tensor run_fp8_matmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                                 const at::Tensor& scale_b, const char* impl, Fp8MatmulLauncher launch) {
  for (const auto& [name, t] : {std::pair<const char*, const at::Tensor*>{"a", &a}, {"b", &b}}) {
    LAB_CHECK(t->is_cuda(), "fp8_matmul: ", name, " is on ", t->device(), "; move it to a CUDA device first (.cuda())");
    LAB_CHECK_TYPE(t->scalar_type() == at::kFloat8_e4m3fn, "fp8_matmul: ", name, " has dtype ", t->scalar_type(),
                   "; this kernel takes float8_e4m3fn");
    LAB_CHECK(t->dim() == 2, "fp8_matmul: ", name, " must be 2-D (got sizes ", t->sizes(), ")");
  }
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  LAB_CHECK(b.size(0) == k, "fp8_matmul: inner dimensions differ: a is ", a.sizes(), ", b is ", b.sizes());
  LAB_CHECK(a.is_contiguous() && b.t().is_contiguous(),
            "fp8_matmul: a must be contiguous (row-major) and b column-major, b.t() contiguous (got strides ",
            a.strides(), " and ", b.strides(), ")");
  LAB_CHECK(scale_a.is_cuda() && scale_b.is_cuda() && scale_a.scalar_type() == at::kFloat &&
                scale_b.scalar_type() == at::kFloat && scale_a.dim() == 2 && scale_b.dim() == 2 &&
                scale_a.size(0) == m && scale_a.size(1) == 1 && scale_b.size(0) == 1 && scale_b.size(1) == n,
            "fp8_matmul: scale shapes and dtypes: scale_a must be float32 (", m, ", 1) and scale_b float32 (1, ", n,
            ") on the GPU (got ",
            scale_a.sizes(), " ", scale_a.scalar_type(), " and ", scale_b.sizes(), " ", scale_b.scalar_type(), ")");
  LAB_CHECK((m + 15) / 16 <= 65535, "fp8_matmul: M = ", m, " is past this kernel's grid (at most 1048560 rows)");
  at::Tensor c = at::empty({m, n}, a.options().dtype(at::kBFloat16));
  if (c.numel() == 0) return c;
  if (k == 0) return c.zero_();
  c10::cuda::CUDAGuard guard(a.device());
  lab::check_launch(launch(static_cast<const uint8_t*>(a.const_data_ptr()),
                           static_cast<const uint8_t*>(b.const_data_ptr()), scale_a.const_data_ptr<float>(),
                           scale_a.stride(0), scale_b.const_data_ptr<float>(), scale_b.stride(1),
                           c.mutable_data_ptr(), m, n, k, lab::current_stream()),
                    "fp8_matmul", impl);
  return c;
}

at::Tensor fp8_matmul_naive(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                            const at::Tensor& scale_b) {
  return run_fp8_matmul(a, b, scale_a, scale_b, "naive", launch_fp8_matmul_naive);
}
at::Tensor fp8_matmul_mma(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                          const at::Tensor& scale_b) {
  return run_fp8_matmul(a, b, scale_a, scale_b, "mma", launch_fp8_matmul_mma);
}
at::Tensor fp8_matmul_wgmma(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                            const at::Tensor& scale_b) {
  return run_fp8_matmul(a, b, scale_a, scale_b, "wgmma", launch_fp8_matmul_wgmma);
}
at::Tensor fp8_matmul_persistent(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                                 const at::Tensor& scale_b) {
  return run_fp8_matmul(a, b, scale_a, scale_b, "persistent", launch_fp8_matmul_persistent);
}
at::Tensor fp8_matmul_tmastore(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                               const at::Tensor& scale_b) {
  return run_fp8_matmul(a, b, scale_a, scale_b, "tmastore", launch_fp8_matmul_tmastore);
}

TORCH_LIBRARY(lab_fp8_matmul, m) {
  m.def("naive(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b) -> Tensor");
  m.def("mma(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b) -> Tensor");
  m.def("wgmma(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b) -> Tensor");
  m.def("persistent(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b) -> Tensor");
  m.def("tmastore(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_fp8_matmul, CUDA, m) {
  m.impl("naive", &fp8_matmul_naive);
  m.impl("mma", &fp8_matmul_mma);
  m.impl("wgmma", &fp8_matmul_wgmma);
  m.impl("persistent", &fp8_matmul_persistent);
  m.impl("tmastore", &fp8_matmul_tmastore);
}

#endif
