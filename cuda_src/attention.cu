// Fused attention forward, O = softmax(Q Kᵀ · D^-1/2) V, Q, K, V and O of shape (B, H, S, D) in float16 or bfloat16,
// D = 64 or 128, every sum in float32. The causal form (key j hidden from query i for j > i) is
// cuda_src/attention_causal.cu: these kernels and launchers, with the mask on.
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/attention.md):
//   v1 naive    the textbook three kernels: the scores Q Kᵀ · D^-1/2 into a float32 (B·H, S, S) workspace, one
//               thread per score; a max-subtracted softmax over each row of it, in place; then P V, one thread per
//               output element
//   v2 flash2   FlashAttention-2: one block per 64 queries of a head, 4 warps of 16 queries, Q in registers, K and V
//               in 64-key tiles through shared memory (cp.async, double-buffered); the scores of a tile on the tensor
//               cores (mma.sync), their softmax online in registers, P rounded to fp16/bf16 and fed straight into
//               the P V product: the S×S scores never leave the chip
//   v3 warp32   FlashAttention-2's own tile: 128 queries a block, 32 a warp (two m16 tiles), so each K and V
//               fragment loaded from shared memory feeds two products; Q re-read from shared memory per key tile,
//               and at D = 128 keys in tiles of 32, so that nothing spills from registers
//   v4 lazy     the rescaling of O and l skipped unless a row's max grew by more than 2^8 (a warp's vote), exact
//               all the same: O and l share whichever max they were made with
//   v5 wgmma    FlashAttention-3 on Hopper: one block per 128 queries of a head, a producer warpgroup copying Q, K
//               and V by TMA through an mbarrier ring, two consumer warpgroups of 64 queries on wgmma (Q Kᵀ from
//               shared memory, P V with P from registers), the next tile's Q Kᵀ issued before this tile's softmax
//
// v1 writes 4·B·H·S² bytes of scores and reads them back in every pass after (the softmax's, then P V's): traffic
// that grows with S², against S·D for Q, K and V, and its products run on the fp32 units. v2 reads Q, K and V once
// per block and writes O once, which leaves the two products, on the tensor cores; v3 feeds them with half the
// shared-memory reads, each K and V fragment serving twice the queries, and v4 takes the rescaling of O off most
// tiles; v5 feeds them the way Hopper's are meant to
// be fed (asynchronous warpgroup MMA, copies by the TMA engine, softmax overlapped with the products). The yardstick
// is the fastest of PyTorch's SDPA backends at the same shape (specs/attention.py). Triton side:
// triton_src/attention.py.
#include "lab.h"

// Every row takes the same arguments: scores is the float32 (B·H, S, S) workspace of a row that materializes the
// scores (v1), null for the others; heads = B·H; causal hides key j from query i for j > i.
cudaError_t launch_attention_naive(lab::DType dtype, const void* q, const void* k, const void* v, void* o,
                                   float* scores, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                   cudaStream_t stream);
cudaError_t launch_attention_flash2(lab::DType dtype, const void* q, const void* k, const void* v, void* o,
                                    float* scores, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                    cudaStream_t stream);
cudaError_t launch_attention_warp32(lab::DType dtype, const void* q, const void* k, const void* v, void* o,
                                    float* scores, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                    cudaStream_t stream);
cudaError_t launch_attention_lazy(lab::DType dtype, const void* q, const void* k, const void* v, void* o,
                                  float* scores, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                  cudaStream_t stream);
cudaError_t launch_attention_wgmma(lab::DType dtype, const void* q, const void* k, const void* v, void* o,
                                   float* scores, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                   cudaStream_t stream);

#ifdef __CUDACC__
#include <climits>
#include <cmath>
#include <type_traits>

#include "lab_async.cuh"
#include "lab_device.cuh"
#include "lab_hopper.cuh"
#include "lab_mma.cuh"

// D^-1/2 times `factor` (log2(e) for a kernel that takes exp as exp2), in double until the one rounding to float.
inline float softmax_scale(int64_t head_dim, double factor = 1.0) {
  return static_cast<float>(factor / std::sqrt(static_cast<double>(head_dim)));
}

// Calls body(T{}) with T the CUDA type of fp16 or bf16, the two types every step takes; float32 instantiates nothing
// (the binding refuses it with a message first).
template <typename Body>
cudaError_t dispatch_16bit(lab::DType dtype, Body&& body) {
  return lab::dispatch_float_types(dtype, [&](auto tag) -> cudaError_t {
    if constexpr (std::is_same_v<decltype(tag), float>) {
      return cudaErrorInvalidValue;
    } else {
      return body(tag);
    }
  });
}

// Calls go(T{}, D{}, Causal{}) with the type, the head size (std::integral_constant 64 or 128) and the mask
// (std::bool_constant) as types: v2-v5 take all three as template arguments, since they shape the kernels'
// registers and loops.
template <typename Go>
cudaError_t dispatch_tiled(lab::DType dtype, int64_t head_dim, bool causal, Go&& go) {
  return dispatch_16bit(dtype, [&](auto tag) -> cudaError_t {
    using D64 = std::integral_constant<int, 64>;
    using D128 = std::integral_constant<int, 128>;
    if (head_dim == 64) return causal ? go(tag, D64{}, std::true_type{}) : go(tag, D64{}, std::false_type{});
    if (head_dim == 128) return causal ? go(tag, D128{}, std::true_type{}) : go(tag, D128{}, std::false_type{});
    return cudaErrorInvalidValue;  // the binding allows 64 and 128 only
  });
}

// ---- v1 naive: three kernels, the scores materialized in global memory. -------------------------------------------
// Each kernel reads what the one before wrote: S in the workspace, P in its place, then P V. Row i of a causal head
// sees keys 0..i only; none of the three kernels touches the rest of the row, so the workspace there stays unwritten.
__device__ __forceinline__ int64_t keys_seen(int64_t query, int64_t seq, bool causal) {
  return causal ? query + 1 : seq;
}

// One thread per score, the key fastest: a warp reads one row of Q (a broadcast) and 32 rows of K, which L1 keeps
// while the threads walk D. Each load of the warp touches 32 rows of K, a separate L1 access for each, so each
// thread takes 16 bytes (8 elements) of its row per load rather than one element: 8 times fewer of those accesses
// (rows are D·2 bytes, D a multiple of 8, and the bases 16-byte aligned: run_attention sees to it). Products of two
// fp16/bf16 values are exact in float32; only the sum rounds.
template <typename T>
__global__ void attention_scores_kernel(const T* __restrict__ q, const T* __restrict__ k, float* __restrict__ scores,
                                        int64_t heads, int64_t seq, int head_dim, float scale, bool causal) {
  using Packet = lab::Packet<T>;
  const int64_t at = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // 64-bit: B·H·S² passes 2^31
  if (at >= heads * seq * seq) return;
  const int64_t key = at % seq, row = at / seq;  // row = head · S + query
  const int64_t head = row / seq;
  if (key >= keys_seen(row % seq, seq, causal)) return;
  const T* q_row = q + row * head_dim;
  const T* k_row = k + (head * seq + key) * head_dim;
  float acc = 0.0f;
  for (int d = 0; d < head_dim; d += Packet::kSize) {
    const Packet qs = lab::load_packet(q_row + d), ks = lab::load_packet(k_row + d);
#pragma unroll
    for (int e = 0; e < Packet::kSize; ++e) acc += lab::to_float(qs.v[e]) * lab::to_float(ks.v[e]);
  }
  scores[at] = acc * scale;
}

// One block per row of scores, in place: the row's max first, so that no exponential can overflow however large the
// scores (exp of an unshifted score past 88 is inf in float32), then the sum of the exponentials, then P.
__global__ void attention_softmax_kernel(float* __restrict__ scores, int64_t seq, bool causal) {
  float* s = scores + static_cast<int64_t>(blockIdx.x) * seq;
  const int64_t keys = keys_seen(blockIdx.x % seq, seq, causal);
  float max = -INFINITY;
  for (int64_t j = threadIdx.x; j < keys; j += blockDim.x) max = fmaxf(max, s[j]);
  max = lab::block_reduce_max(max);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < keys; j += blockDim.x) sum += lab::fast_exp(s[j] - max);
  const float inv_sum = 1.0f / lab::block_reduce_sum(sum);
  for (int64_t j = threadIdx.x; j < keys; j += blockDim.x) s[j] = lab::fast_exp(s[j] - max) * inv_sum;
}

// One thread per output element, d fastest: a warp shares one row of P (a broadcast) and reads 32 consecutive
// elements of each row of V. P stays float32 here, finer than v2's rounding of it.
template <typename T>
__global__ void attention_pv_kernel(const float* __restrict__ probs, const T* __restrict__ v, T* __restrict__ o,
                                    int64_t heads, int64_t seq, int head_dim, bool causal) {
  const int64_t at = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at >= heads * seq * head_dim) return;
  const int64_t d = at % head_dim, row = at / head_dim;
  const int64_t keys = keys_seen(row % seq, seq, causal);
  const float* p = probs + row * seq;
  const T* v_col = v + row / seq * seq * head_dim + d;
  float acc = 0.0f;
  for (int64_t j = 0; j < keys; ++j) acc += p[j] * lab::to_float(v_col[j * head_dim]);
  o[at] = lab::from_float<T>(acc);
}

cudaError_t launch_attention_naive(lab::DType dtype, const void* q, const void* k, const void* v, void* o,
                                   float* scores, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                   cudaStream_t stream) {
  return dispatch_16bit(dtype, [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    constexpr int kThreads = 256;
    const int64_t rows = heads * seq;
    const int64_t score_blocks = (rows * seq + kThreads - 1) / kThreads;
    if (score_blocks > INT_MAX || rows > INT_MAX) return cudaErrorInvalidConfiguration;
    const int d = static_cast<int>(head_dim);
    attention_scores_kernel<T><<<static_cast<unsigned int>(score_blocks), kThreads, 0, stream>>>(
        static_cast<const T*>(q), static_cast<const T*>(k), scores, heads, seq, d, softmax_scale(head_dim), causal);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    attention_softmax_kernel<<<static_cast<unsigned int>(rows), kThreads, 0, stream>>>(scores, seq, causal);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    attention_pv_kernel<T><<<lab::blocks_for(rows * head_dim, kThreads), kThreads, 0, stream>>>(
        scores, static_cast<const T*>(v), static_cast<T*>(o), heads, seq, d, causal);
    return cudaGetLastError();
  });
}

// ---- v2 flash2: FlashAttention-2, one kernel, the scores kept on the chip. -----------------------------------------
// What changes against naive, and why each helps:
//  * Fusion: a block owns 64 queries of one head and walks its keys in tiles of 64, so a tile's scores exist only
//    in registers; no S² workspace, and Q, K and V are read from global memory once per block.
//  * Online softmax: a row's max and sum are kept running over the tiles (m and l). When a tile raises the max,
//    the accumulated O and l, both made with the old max, are scaled by exp(m_old - m_new), so the exponentials
//    never overflow and O comes out normalized by the true sum at the end, with one division per row.
//  * Tensor cores: S = Q Kᵀ and O += P V are mma.sync m16n8k16 (fp16/bf16 in, float32 sums). The score tile comes
//    out of the first mma in exactly the register layout of the second's A operand (lab_mma.cuh), so P goes from
//    float32 accumulators to fp16/bf16 pairs in the same registers, with no trip through shared memory.
//  * Registers and shared memory: each warp owns 16 query rows, their Q fragments loaded once with ldmatrix and
//    kept for the whole key loop; K and V tiles are staged by cp.async, the next tile copying while this one is
//    multiplied (two stages, one barrier per tile); K is read with ldmatrix as mma's k-major B (its rows are D-long),
//    V with ldmatrix.trans (its rows are keys, the k of P V). Rows padded by 8 elements keep ldmatrix conflict-free.
//  * exp2: p = 2^(s·c - m·c) with c = D^-1/2·log2(e), one FFMA and one MUFU.EX2 per score; the scale is never
//    applied to the scores themselves.
//  * Causal: a block stops at the key tile holding its last query, so the tiles wholly above the diagonal are never
//    loaded; only the tile the diagonal crosses (and the last, partial one past S) pays for the mask.
// Edges: query and key rows past S are zero-filled by cp.async (a zero row of V, times p = 0, adds 0; garbage could
// be NaN), keys past S masked to -inf, rows of O past S not stored. The grid is head-major, so the blocks resident
// together share one head's K and V in L2.
template <int kD, int kRowTiles = 1>
struct Flash2Tile {
  static constexpr int kWarpRows = 16 * kRowTiles;  // query rows a warp owns: kRowTiles m16 tiles (v2 1, v3 2)
  static constexpr int kBlockM = 4 * kWarpRows;     // queries per block
  // Keys per tile: 64, or 32 for two row tiles at D = 128 (v3, v4), where two 64-key tiles of S beside two of O
  // took ptxas past 255 registers a thread and it spilled (the build tables show each kernel's registers).
  static constexpr int kBlockN = kRowTiles == 2 && kD == 128 ? 32 : 64;
  static constexpr int kThreads = 128;                         // 4 warps
  static constexpr bool kQInRegisters = kRowTiles == 1;        // v3's two tiles of O and S leave no room for Q
  static constexpr int kStride = kD + 8;                       // padded rows, in elements
  static constexpr int kTileElems = kBlockN * kStride;
  static constexpr int kSmemBytes = (kBlockM * kStride + 4 * kTileElems) * 2;  // Q, then K and V of two stages
  static constexpr int kDSlices = kD / 16;       // k16 steps of Q Kᵀ
  static constexpr int kKeyTiles = kBlockN / 8;  // n8 tiles of a warp's 16×64 scores
  static constexpr int kOutTiles = kD / 8;       // n8 tiles of a warp's 16×D output
  static_assert(kBlockM == kWarpRows * (kThreads / 32) && kD % 16 == 0 && kBlockN % 16 == 0, "whole mma tiles");
  static_assert(kBlockM * kD / 8 % kThreads == 0 && kBlockN * kD / 8 % kThreads == 0, "16-byte chunks split evenly");
};

// 2^x as one MUFU.EX2 (2^-inf = 0, which is what a masked score must give), and two floats as one 32-bit register
// of fp16/bf16 (mma's operand order, and a pair of adjacent outputs in memory order): lab_device.cuh.
using lab::exp2_approx;
using lab::pack_pair;

// Rows first..first + kRows - 1 of one head's (S, kD) matrix into a padded shared tile, 16 bytes per cp.async,
// consecutive threads on consecutive chunks of a row; rows at or past S become zeros.
template <typename T, int kD, int kRows>
__device__ __forceinline__ void load_rows(T* tile, const T* head, int first, int seq) {
  using Cfg = Flash2Tile<kD>;
  constexpr int kChunksPerRow = kD / 8;
#pragma unroll
  for (int i = 0; i < kRows * kChunksPerRow / Cfg::kThreads; ++i) {
    const int chunk = threadIdx.x + i * Cfg::kThreads;
    const int r = chunk / kChunksPerRow, col = chunk % kChunksPerRow * 8;
    const bool valid = first + r < seq;
    lab::cp_async_16(lab::smem_address(tile + r * Cfg::kStride + col),
                     valid ? head + static_cast<int64_t>(first + r) * kD + col : head, valid);
  }
}

// Scores of keys past S, and for causal of keys after the query, to -inf. Lane (g, t) holds, of each n8 tile n,
// keys key + 8n + {0, 1} of query rows `query` (registers 0, 1) and query + 8 (registers 2, 3).
template <bool kCausal, int kTiles>
__device__ __forceinline__ void mask_scores(float (&s)[kTiles][4], int key, int query, int seq) {
#pragma unroll
  for (int n = 0; n < kTiles; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int j = key + 8 * n + (e & 1), i = query + 8 * (e >> 1);
      if (j >= seq || (kCausal && j > i)) s[n][e] = -INFINITY;
    }
}

// One tile's step of the online softmax for this lane's two rows (h = 0: registers 0, 1; h = 1: registers 2, 3): the
// tile's max joins the running max m (a row's four lanes agree through two shuffles), O and l are rescaled by
// 2^((m_old - m_new)·c), and the scores are replaced by p = 2^(s·c - m_new·c). l keeps this lane's share of the row
// sum only: the rescaling is the same on the four lanes, so their shares are added once, after the last tile. No
// row's max is -inf after the first tile (key 0 is in it and every row sees key 0), so m_old - m_new is never
// -inf - (-inf); on the first tile it is -inf, and the rescaling of the empty O and l gives 0.
// softmax_row does the step for row h and returns the rescaling factor of its O; online_softmax applies it at once
// (v2, v3), v5 later, when its O is no longer being written by the tensor cores. Its two halves, which v4 uses
// apart: row_max, the tile's max of row h joined with m, and exponentiate_row, the exponentials of row h's scores
// against a max of `shift` (already times c), returning this lane's share of their sum.
template <int kTiles>
__device__ __forceinline__ float row_max(const float (&s)[kTiles][4], int h, float m) {
  float tile_max = m;
#pragma unroll
  for (int n = 0; n < kTiles; ++n) tile_max = fmaxf(tile_max, fmaxf(s[n][2 * h], s[n][2 * h + 1]));
  tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
  return fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
}

template <int kTiles>
__device__ __forceinline__ float exponentiate_row(float (&s)[kTiles][4], int h, float shift, float scale_log2) {
  float sum = 0.0f;
#pragma unroll
  for (int n = 0; n < kTiles; ++n)
#pragma unroll
    for (int e = 2 * h; e < 2 * h + 2; ++e) {
      s[n][e] = exp2_approx(fmaf(s[n][e], scale_log2, -shift));
      sum += s[n][e];
    }
  return sum;
}

template <int kTiles>
__device__ __forceinline__ float softmax_row(float (&s)[kTiles][4], int h, float& m, float& l, float scale_log2) {
  const float tile_max = row_max(s, h, m);
  const float rescale = exp2_approx((m - tile_max) * scale_log2);
  m = tile_max;
  l = l * rescale + exponentiate_row(s, h, tile_max * scale_log2, scale_log2);
  return rescale;
}

// Row h of this lane's O (registers 2h, 2h + 1 of every n8 tile) times factor: the rescaling by a moved max.
template <int kOutTiles>
__device__ __forceinline__ void scale_output_row(float (&acc)[kOutTiles][4], int h, float factor) {
#pragma unroll
  for (int n = 0; n < kOutTiles; ++n) {
    acc[n][2 * h] *= factor;
    acc[n][2 * h + 1] *= factor;
  }
}

template <int kTiles, int kOutTiles>
__device__ __forceinline__ void online_softmax(float (&s)[kTiles][4], float (&acc)[kOutTiles][4], float (&m)[2],
                                               float (&l)[2], float scale_log2) {
#pragma unroll
  for (int h = 0; h < 2; ++h) scale_output_row(acc, h, softmax_row(s, h, m[h], l[h], scale_log2));
}

// v4's step, for all of a warp's rows at once: a row keeps its old max, and its O and l are not rescaled, unless
// some row of the warp has a tile max more than kLazyLog2 above its own (times c: in log2 units). The result is
// the same: O and l are sums of the same p = 2^(s·c - m·c), so the division by l at the end cancels whichever m
// they were made with; a max kept below the true one only lets p reach 2^kLazyLog2 instead of 1, which fp16 and
// bf16 P and the float32 sums hold with room to spare. After the first few tiles a row's max seldom grows that
// much, so most tiles skip the rescaling: a thread's D/2 multiplies per row tile (half of the float32 work of a
// 32-key tile at D = 128) and two MUFU.EX2. The decision is the warp's (one vote), so that the skipped multiplies
// are not issued at all rather than predicated off lane by lane. The first tile always rescales: m is -inf there.
constexpr float kLazyLog2 = 8.0f;

template <int kRowTiles, int kTiles, int kOutTiles>
__device__ __forceinline__ void online_softmax_lazy(float (&s)[kRowTiles][kTiles][4],
                                                    float (&acc)[kRowTiles][kOutTiles][4], float (&m)[kRowTiles][2],
                                                    float (&l)[kRowTiles][2], float scale_log2) {
  float tile_max[kRowTiles][2];
  bool grows = false;
#pragma unroll
  for (int r = 0; r < kRowTiles; ++r)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      tile_max[r][h] = row_max(s[r], h, m[r][h]);
      grows |= (tile_max[r][h] - m[r][h]) * scale_log2 > kLazyLog2;
    }
  if (__any_sync(0xffffffffu, grows)) {
#pragma unroll
    for (int r = 0; r < kRowTiles; ++r)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float rescale = exp2_approx((m[r][h] - tile_max[r][h]) * scale_log2);
        m[r][h] = tile_max[r][h];
        l[r][h] *= rescale;
        scale_output_row(acc[r], h, rescale);
      }
  }
#pragma unroll
  for (int r = 0; r < kRowTiles; ++r)
#pragma unroll
    for (int h = 0; h < 2; ++h) l[r][h] += exponentiate_row(s[r], h, m[r][h] * scale_log2, scale_log2);
}

// O = acc / l for this lane's two rows, `query` and query + 8 (o at the head's first row): the row's four lanes add
// their shares of l, then each stores its pairs of adjacent outputs, rows past S left alone. acc is the m16n8 C
// fragment (lab_mma.cuh) of kOutTiles n8 tiles: v2's to v4's mma.sync accumulators, v5's wgmma accumulator of
// one warp.
template <typename T, int kOutTiles>
__device__ __forceinline__ void store_output(T* o, const float (&acc)[kOutTiles][4], const float (&l)[2], int query,
                                             int seq, int lane) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float row_sum = l[h];
    row_sum += __shfl_xor_sync(0xffffffffu, row_sum, 1);
    row_sum += __shfl_xor_sync(0xffffffffu, row_sum, 2);
    const float inv_sum = 1.0f / row_sum;
    const int row = query + 8 * h;
    if (row >= seq) continue;
    T* o_row = o + static_cast<int64_t>(row) * (8 * kOutTiles) + 2 * (lane % 4);
#pragma unroll
    for (int n = 0; n < kOutTiles; ++n)
      *reinterpret_cast<uint32_t*>(o_row + n * 8) = pack_pair<T>(acc[n][2 * h] * inv_sum, acc[n][2 * h + 1] * inv_sum);
  }
}

// The kernel of v2 (kRowTiles = 1), v3 (kRowTiles = 2) and v4 (v3 with kLazyRescale): each warp owns kRowTiles
// m16 tiles of query rows, r indexing them below; every K and V fragment loaded from shared memory feeds one mma
// per tile.
template <typename T, int kD, bool kCausal, int kRowTiles, bool kLazyRescale = false>
__global__ void __launch_bounds__(Flash2Tile<kD, kRowTiles>::kThreads)
    attention_flash2_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                            T* __restrict__ o, int seq, int q_blocks, float scale_log2) {
  using Cfg = Flash2Tile<kD, kRowTiles>;
  // 1. Shared memory: the block's Q tile, then two stages of K and of V, rows padded.
  extern __shared__ __align__(16) unsigned char flash2_smem[];
  T* q_tile = reinterpret_cast<T*>(flash2_smem);
  T* k_tiles = q_tile + Cfg::kBlockM * Cfg::kStride;  // [stage][kBlockN][kStride]
  T* v_tiles = k_tiles + 2 * Cfg::kTileElems;

  // 2. Which queries: blocks run head by head. Causal blocks of a head take the latest queries (the most keys)
  //    first, so that the grid's last wave is made of the shortest blocks.
  const int64_t head = blockIdx.x / q_blocks;
  const int in_head = static_cast<int>(blockIdx.x % q_blocks);
  const int first_query = (kCausal ? q_blocks - 1 - in_head : in_head) * Cfg::kBlockM;
  const int64_t offset = head * seq * kD;  // 64-bit: B·H·S·D passes 2^31
  q += offset;
  k += offset;
  v += offset;
  o += offset;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warp_row = warp * Cfg::kWarpRows;  // the warp's first row in the block; tile r starts 16r further
  const int lane_query = first_query + warp_row + lane / 4;  // this lane's rows of tile r: that + 16r, and + 8

  // 3. The key tiles this block needs: all of them, or causal up to the one holding its last query.
  const int key_end = kCausal ? min(first_query + Cfg::kBlockM, seq) : seq;
  const int key_tiles = (key_end + Cfg::kBlockN - 1) / Cfg::kBlockN;

  // 4. Prologue: Q as one group, the first K and V tile as the next; wait for Q only.
  load_rows<T, kD, Cfg::kBlockM>(q_tile, q, first_query, seq);
  lab::cp_async_commit();
  load_rows<T, kD, Cfg::kBlockN>(k_tiles, k, 0, seq);
  load_rows<T, kD, Cfg::kBlockN>(v_tiles, v, 0, seq);
  lab::cp_async_commit();
  lab::cp_async_wait<1>();
  __syncthreads();

  // 5. Q's mma A fragments, one per row tile and k16 slice of D: lanes 0-15 address rows 0-15 at the slice's
  //    column, lanes 16-31 the same rows 8 columns on (a0..a3 in order). v2 loads its tile's once and holds them
  //    for the whole key loop; v3 loads them from shared memory again at every key tile.
  auto load_q = [&](uint32_t (&frag)[4], int r, int kk) {
    lab::ldmatrix_x4(frag, lab::smem_address(q_tile + (warp_row + 16 * r + lane % 16) * Cfg::kStride + kk * 16 +
                                             (lane / 16) * 8));
  };
  uint32_t q_held[Cfg::kQInRegisters ? Cfg::kDSlices : 1][4];
  if constexpr (Cfg::kQInRegisters) {
#pragma unroll
    for (int kk = 0; kk < Cfg::kDSlices; ++kk) load_q(q_held[kk], 0, kk);
  }

  float acc[kRowTiles][Cfg::kOutTiles][4] = {};  // the warp's rows × D of O, unnormalized
  float m[kRowTiles][2], l[kRowTiles][2];
#pragma unroll
  for (int r = 0; r < kRowTiles; ++r) m[r][0] = m[r][1] = -INFINITY, l[r][0] = l[r][1] = 0.0f;

  for (int t = 0; t < key_tiles; ++t) {
    // 6. Tile t has landed (the only group in flight), and after the barrier every warp is done with tile t-1,
    //    whose stage the copies of tile t+1 now overwrite while tile t is multiplied.
    lab::cp_async_wait<0>();
    __syncthreads();
    if (t + 1 < key_tiles) {
      const int stage = (t + 1) % 2;
      load_rows<T, kD, Cfg::kBlockN>(k_tiles + stage * Cfg::kTileElems, k, (t + 1) * Cfg::kBlockN, seq);
      load_rows<T, kD, Cfg::kBlockN>(v_tiles + stage * Cfg::kTileElems, v, (t + 1) * Cfg::kBlockN, seq);
    }
    lab::cp_async_commit();
    const T* k_tile = k_tiles + (t % 2) * Cfg::kTileElems;
    const T* v_tile = v_tiles + (t % 2) * Cfg::kTileElems;

    // 7. S = Q Kᵀ for the warp's queries and the tile's 64 keys. One ldmatrix.x4 gives the B fragments of two n8
    //    tiles: lanes 0-7 address keys 0-7 at the slice's column (b0 of the first), lanes 8-15 the same keys 8
    //    columns on (its b1), lanes 16-31 keys 8-15 likewise (the second tile's b0, b1); each row tile uses them.
    float s[kRowTiles][Cfg::kKeyTiles][4] = {};
#pragma unroll
    for (int kk = 0; kk < Cfg::kDSlices; ++kk) {
      uint32_t a[kRowTiles][4];
#pragma unroll
      for (int r = 0; r < kRowTiles; ++r) {
        if constexpr (Cfg::kQInRegisters) {
#pragma unroll
          for (int i = 0; i < 4; ++i) a[r][i] = q_held[kk][i];
        } else {
          load_q(a[r], r, kk);
        }
      }
#pragma unroll
      for (int n = 0; n < Cfg::kKeyTiles; n += 2) {
        uint32_t b[4];
        const int key = n * 8 + (lane / 16) * 8 + lane % 8, col = kk * 16 + (lane / 8) % 2 * 8;
        lab::ldmatrix_x4(b, lab::smem_address(k_tile + key * Cfg::kStride + col));
#pragma unroll
        for (int r = 0; r < kRowTiles; ++r) {
          lab::mma_16816<T>(s[r][n], a[r], b[0], b[1]);
          lab::mma_16816<T>(s[r][n + 1], a[r], b[2], b[3]);
        }
      }
    }

    // 8. The mask, on the tiles that need one: the partial tile past S, and causal the tiles the diagonal crosses.
    const int first_key = t * Cfg::kBlockN;
    const bool masked = first_key + Cfg::kBlockN > seq || (kCausal && first_key + Cfg::kBlockN - 1 > first_query);
#pragma unroll
    for (int r = 0; r < kRowTiles; ++r) {
      if (masked) mask_scores<kCausal>(s[r], first_key + 2 * (lane % 4), lane_query + 16 * r, seq);
      if constexpr (!kLazyRescale) online_softmax(s[r], acc[r], m[r], l[r], scale_log2);
    }
    if constexpr (kLazyRescale) online_softmax_lazy(s, acc, m, l, scale_log2);

    // 9. O += P V, 16 keys at a time. The accumulators of n8 tiles 2ks and 2ks+1 are the A fragment of keys
    //    16ks..16ks+15 (a0 = tile 2ks rows g, a1 = its rows g+8, a2 and a3 = tile 2ks+1), rounded to fp16/bf16.
    //    V's B fragments come transposed: lanes 0-15 address keys 0-15 at the n8 pair's first column, lanes 16-31
    //    the same keys 8 columns on, giving (b0, b1) of the first n8 tile of D, then of the second.
#pragma unroll
    for (int ks = 0; ks < Cfg::kKeyTiles / 2; ++ks) {
      uint32_t p[kRowTiles][4];
#pragma unroll
      for (int r = 0; r < kRowTiles; ++r) {
        p[r][0] = pack_pair<T>(s[r][2 * ks][0], s[r][2 * ks][1]);
        p[r][1] = pack_pair<T>(s[r][2 * ks][2], s[r][2 * ks][3]);
        p[r][2] = pack_pair<T>(s[r][2 * ks + 1][0], s[r][2 * ks + 1][1]);
        p[r][3] = pack_pair<T>(s[r][2 * ks + 1][2], s[r][2 * ks + 1][3]);
      }
#pragma unroll
      for (int n = 0; n < Cfg::kOutTiles; n += 2) {
        uint32_t b[4];
        lab::ldmatrix_x4_trans(
            b, lab::smem_address(v_tile + (ks * 16 + lane % 16) * Cfg::kStride + n * 8 + (lane / 16) * 8));
#pragma unroll
        for (int r = 0; r < kRowTiles; ++r) {
          lab::mma_16816<T>(acc[r][n], p[r], b[0], b[1]);
          lab::mma_16816<T>(acc[r][n + 1], p[r], b[2], b[3]);
        }
      }
    }
  }
  lab::cp_async_wait<0>();  // the last group is empty, but none may be pending at exit

  // 10. O = acc / l, rows past S left alone.
#pragma unroll
  for (int r = 0; r < kRowTiles; ++r) store_output<T>(o, acc[r], l[r], lane_query + 16 * r, seq, lane);
}

// The grid of v2-v5: one block per Cfg::kBlockM queries of each head, head by head, in a 1-D grid; the kernel
// takes `inputs`, then S, the number of query blocks a head and the scale with log2(e) folded in.
template <typename Cfg, int kD, typename Kernel, typename... Inputs>
cudaError_t launch_query_blocks(Kernel kernel, int64_t heads, int64_t seq, cudaStream_t stream, Inputs... inputs) {
  const int64_t q_blocks = (seq + Cfg::kBlockM - 1) / Cfg::kBlockM;
  if (seq > INT_MAX / 2 || heads * q_blocks > INT_MAX) return cudaErrorInvalidConfiguration;
  // Above 48 KB of dynamic shared memory a kernel must opt in (at D = 128 v2 takes 85 KB, v3 and v4 70 KB: two
  // blocks per SM either way, which v3's and v4's registers allow too).
  const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes);
  if (err != cudaSuccess) return err;
  kernel<<<static_cast<unsigned int>(heads * q_blocks), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(
      inputs..., static_cast<int>(seq), static_cast<int>(q_blocks), softmax_scale(kD, 1.4426950408889634));
  return cudaGetLastError();
}

// v2 and v3 differ in the row tiles a warp owns only, v3 and v4 in how the softmax rescales.
template <int kRowTiles, bool kLazyRescale = false>
cudaError_t launch_flash2(lab::DType dtype, const void* q, const void* k, const void* v, void* o, int64_t heads,
                          int64_t seq, int64_t head_dim, bool causal, cudaStream_t stream) {
  return dispatch_tiled(dtype, head_dim, causal, [&](auto tag, auto d, auto mask) {
    using T = decltype(tag);
    constexpr int kD = decltype(d)::value;
    return launch_query_blocks<Flash2Tile<kD, kRowTiles>, kD>(
        attention_flash2_kernel<T, kD, decltype(mask)::value, kRowTiles, kLazyRescale>, heads, seq, stream,
        static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), static_cast<T*>(o));
  });
}

cudaError_t launch_attention_flash2(lab::DType dtype, const void* q, const void* k, const void* v, void* o,
                                    float* /*scores*/, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                    cudaStream_t stream) {
  return launch_flash2<1>(dtype, q, k, v, o, heads, seq, head_dim, causal, stream);
}

// ---- v3 warp32: FlashAttention-2's own tile, 32 queries a warp. -------------------------------------------------
// What changes against flash2: each warp owns two m16 tiles of query rows (32), so a block holds 128 queries, the
// tile FlashAttention-2 itself runs at D = 128 on Hopper. Every K fragment (Q Kᵀ) and V fragment (P V) loaded by
// ldmatrix now feeds two mma.sync instead of one, which halves the shared-memory reads per product of those
// operands, and the two tiles' products are independent, so a warp has twice the work in flight between
// dependent instructions. The cost is registers: two tiles of O (D/2 each) and of S leave no room for Q's
// fragments (D/4 a tile), which are loaded from shared memory again at every key tile, as FlashAttention-2 does;
// and at D = 128 the key tiles shrink to 32 (S 16 registers a row tile), since with 64 ptxas ran out of registers
// and spilled to local memory. Shared memory: Q 128 rows + two stages of K and V, 70 KB at D = 128.
cudaError_t launch_attention_warp32(lab::DType dtype, const void* q, const void* k, const void* v, void* o,
                                    float* /*scores*/, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                    cudaStream_t stream) {
  return launch_flash2<2>(dtype, q, k, v, o, heads, seq, head_dim, causal, stream);
}

// ---- v4 lazy: O rescaled only when a row's max has grown by more than 2^8. --------------------------------------
// What changes against warp32: the online softmax keeps a row's running max, and leaves O and l as they are, until
// some row of the warp sees a max more than kLazyLog2 (log2 units) above it (online_softmax_lazy; the trick of
// FlashAttention-4). Exact, not an approximation: O and l are made with the same max and the final division
// cancels it. With 32 keys a tile at D = 128, rescaling O is as many float32 multiplies as the rest of the softmax
// together, on every tile; past the first tiles almost no tile needs it.
cudaError_t launch_attention_lazy(lab::DType dtype, const void* q, const void* k, const void* v, void* o,
                                  float* /*scores*/, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                  cudaStream_t stream) {
  return launch_flash2<2, true>(dtype, q, k, v, o, heads, seq, head_dim, causal, stream);
}

// ---- v5 wgmma: FlashAttention-3, Hopper's warpgroup MMA fed by TMA, softmax overlapped with the products. ---------
// What changes against flash2, and why each helps (FlashAttention-3, Shah et al. 2024; matmul.cu v5 is the same
// machinery on a plain GEMM):
//  * wgmma instead of mma.sync: a warpgroup (4 warps, 64 query rows) multiplies 64×16 by 16×N per instruction,
//    asynchronously. S = Q Kᵀ (m64n128k16) reads both operands from shared memory through descriptors: Q rows and K
//    rows are both D-contiguous, i.e. K-major, so neither needs a transpose, and no fragment is ever loaded into
//    registers (flash2 holds Q's fragments in registers and loads K's with ldmatrix). O += P V (m64nDk16) takes P
//    from registers: the S accumulator of one warp is mma.sync's C fragment repeated along the keys, which packed
//    into 16-bit pairs is exactly wgmma's register A fragment (lab_hopper.cuh), so P never touches shared memory.
//    V lies key-major with D contiguous, MN-major for this product: the transpose-B flag reads it as it is.
//  * TMA and warp specialization, as matmul v5: one producer warpgroup, of which one thread issues all copies
//    (Q once, then K and V tiles into a ring of stages with full/empty mbarriers, K and V on barriers of their own
//    so that Q Kᵀ may start before V has landed); two consumer warpgroups of 64 queries each. setmaxnreg moves
//    registers from the producer (24) to the consumers (240): a consumer thread holds a 64×128 fp32 score tile
//    (64 registers), a 64×D fp32 O (D/2) and P (32) at once. Each tensor is a 3-D tensor map over (B·H, S, D), so a
//    box never crosses into the next head and rows past S arrive as zeros (keys past S are still masked to -inf: a
//    zero key scores 0, not -inf), with no edge code in the copies.
//  * Overlap within a warpgroup: the next tile's Q Kᵀ is issued before this tile's P V, and the softmax of the next
//    tile runs while this tile's P V is on the tensor cores; wgmma_wait_group<1> then <0> separate the two (the
//    loop below says which group is in flight when). O's rescaling by the moved maximum waits for the next
//    iteration, when O is no longer being written. (No ping-pong between the two consumers: each runs freely, the
//    warp schedulers interleave them.)
//  * Causal as flash2: a block walks keys up to the tile holding its last query, masks only the tiles that the
//    diagonal crosses or that end past S, and the blocks of a head start with the latest queries. With 128 queries
//    and 128 keys a tile, the diagonal crosses the block's last tile only.
//  * Tiles: 128 keys a tile, so a consumer thread's scores are 64 registers, beside D/2 for O and 32 for P, within
//    the 240 it has; K and V in 2 stages at D = 128 (Q 32 KB + 2 × 64 KB: a third stage would take the block to
//    the 227 KB limit), 4 at D = 64 (Q 16 KB + 4 × 32 KB).
// Shared-memory layout: a 128-byte-swizzled row holds 64 elements (TMA's widest swizzled box and wgmma's widest
// swizzled row are 128 bytes), so a 256-byte row of D = 128 is split into two 64-element column chunks, each its
// own TMA box and its own [rows][128 B] region: the layout matmul v5 gives its 64-wide K chunks. A k16 step of Q Kᵀ
// stays inside one chunk, and for P V the chunks are V's 64-column groups, one leading offset apart.
// Requirements: compute capability 9.0, built for sm_90a, Q, K and V on 16-byte-aligned bases (TMA; run_attention
// copies a misaligned view), B·H·⌈S/128⌉ below 2^31; elsewhere v2's launcher answers.
template <int kD>
struct Fa3Tile {
  static constexpr int kBlockM = 128, kBlockN = 128;  // queries per block (64 a consumer), keys per tile
  static constexpr int kConsumers = 2;                 // warpgroups doing math
  static constexpr int kThreads = (kConsumers + 1) * 128;
  static constexpr int kStages = kD == 128 ? 2 : 4;
  static constexpr int kChunks = kD / 64;  // 64-element column chunks of a row (128 bytes: one swizzle row)
  static constexpr int kQChunkBytes = kBlockM * 128, kKvChunkBytes = kBlockN * 128;
  static constexpr int kQBytes = kChunks * kQChunkBytes, kTileBytes = kChunks * kKvChunkBytes;
  static constexpr int kSmemBytes = kQBytes + 2 * kStages * kTileBytes + 1024;  // + slack for 1024-B alignment
  static constexpr int kScoreTiles = kBlockN / 8, kOutTiles = kD / 8;         // n8 column tiles of S and of O
  static_assert(kD % 64 == 0 && kBlockM == 64 * kConsumers && kBlockN % 16 == 0, "whole chunks and k16 steps");
};

// An accumulator array of wgmma (4·kTiles registers) seen as kTiles m16n8 C fragments, the shape v2's softmax, mask
// and store helpers take: the same registers in the same order (layouts: lab_hopper.cuh).
template <int kTiles>
__device__ __forceinline__ float (&as_n8_tiles(float (&d)[4 * kTiles]))[kTiles][4] {
  return reinterpret_cast<float(&)[kTiles][4]>(d);
}

template <typename T, int kD, bool kCausal>
__global__ void __launch_bounds__(Fa3Tile<kD>::kThreads, 1)
    attention_wgmma_kernel(const __grid_constant__ CUtensorMap map_q, const __grid_constant__ CUtensorMap map_k,
                           const __grid_constant__ CUtensorMap map_v, T* __restrict__ o, int seq, int q_blocks,
                           float scale_log2) {
#ifdef LAB_SM90A
  using Cfg = Fa3Tile<kD>;
  constexpr int kStages = Cfg::kStages;
  // 1. Shared memory: Q, then the K ring, then the V ring, every tile and chunk on a 1024-byte boundary (128-byte
  //    swizzling repeats every 1024 bytes and wgmma locates rows within that pattern from the address bits).
  extern __shared__ unsigned char fa3_smem_raw[];
  unsigned char* smem = fa3_smem_raw + ((1024 - lab::smem_address(fa3_smem_raw) % 1024) % 1024);
  unsigned char* q_tile = smem;                                  // [chunk][kBlockM rows][128 B]
  unsigned char* k_tiles = smem + Cfg::kQBytes;                  // [stage][chunk][kBlockN rows][128 B]
  unsigned char* v_tiles = k_tiles + kStages * Cfg::kTileBytes;  // the same
  // 2. Barriers: q_full for Q; per stage, full (the tile's bytes have landed) and empty (both consumers are done
  //    reading it), separately for K and V.
  __shared__ __align__(8) uint64_t q_full, k_full[kStages], k_empty[kStages], v_full[kStages], v_empty[kStages];

  const int tid = threadIdx.x, warpgroup = tid / 128;
  if (tid == 0) {
    lab::mbarrier_init(&q_full, 1);
    for (int s = 0; s < kStages; ++s) {
      lab::mbarrier_init(&k_full[s], 1);  // the producer's expect_tx arrival; bytes do the rest
      lab::mbarrier_init(&v_full[s], 1);
      lab::mbarrier_init(&k_empty[s], Cfg::kConsumers * 4);  // one arrival per consumer warp
      lab::mbarrier_init(&v_empty[s], Cfg::kConsumers * 4);
    }
    lab::fence_mbarrier_init();
  }
  __syncthreads();  // the only block-wide barrier: from here on the warpgroups meet only on the mbarriers

  // 3. Which queries (as flash2: blocks run head by head, causal ones latest queries first) and which key tiles.
  const int head = static_cast<int>(blockIdx.x / q_blocks);
  const int in_head = static_cast<int>(blockIdx.x % q_blocks);
  const int first_query = (kCausal ? q_blocks - 1 - in_head : in_head) * Cfg::kBlockM;
  const int key_end = kCausal ? min(first_query + Cfg::kBlockM, seq) : seq;
  const int key_tiles = (key_end + Cfg::kBlockN - 1) / Cfg::kBlockN;

  // 4. Producer: one thread issues every copy, in the order the consumers need them: Q and K tile 0, then K tile
  //    t + 1 ahead of V tile t (the consumers multiply Q by K tile t + 1 before P by V tile t). Tile t goes into
  //    stage t % kStages once both consumers have released tile t - kStages from it (the empty barrier's completion
  //    number t / kStages - 1, parity (t / kStages + 1) % 2); the first kStages tiles find their stages free.
  if (warpgroup == 0) {
    lab::setmaxnreg_dec<24>();
    if (tid != 0) return;
    auto load = [&](const CUtensorMap* map, unsigned char* tiles, uint64_t* full, uint64_t* empty, int t) {
      const int s = t % kStages;
      if (t >= kStages) lab::mbarrier_wait(&empty[s], (t / kStages + 1) % 2);
      lab::mbarrier_expect_bytes(&full[s], Cfg::kTileBytes);  // whole boxes, zero fill included
#pragma unroll
      for (int c = 0; c < Cfg::kChunks; ++c)
        lab::tma_load_3d(tiles + s * Cfg::kTileBytes + c * Cfg::kKvChunkBytes, map, c * 64, t * Cfg::kBlockN, head,
                         &full[s]);
    };
    lab::mbarrier_expect_bytes(&q_full, Cfg::kQBytes);
#pragma unroll
    for (int c = 0; c < Cfg::kChunks; ++c)
      lab::tma_load_3d(q_tile + c * Cfg::kQChunkBytes, &map_q, c * 64, first_query, head, &q_full);
    load(&map_k, k_tiles, k_full, k_empty, 0);
    for (int t = 0; t < key_tiles; ++t) {
      if (t + 1 < key_tiles) load(&map_k, k_tiles, k_full, k_empty, t + 1);
      load(&map_v, v_tiles, v_full, v_empty, t);
    }
    return;
  }

  // 5. Consumers: warpgroups 1 and 2 take the registers the producer gave up, each owning 64 queries. This thread's
  //    rows are `query` and query + 8 (warp w of the group: rows 16w + lane/4, +8), its score columns (keys) 8j +
  //    2·(lane%4) + {0, 1} of each n8 tile j, its O columns likewise (accumulator layout: lab_hopper.cuh).
  lab::setmaxnreg_inc<240>();
  const int consumer = warpgroup - 1, lane = tid % 32, warp_in_group = tid % 128 / 32;
  const int first_row = first_query + consumer * 64;
  const int query = first_row + warp_in_group * 16 + lane / 4;
  const unsigned char* q_rows = q_tile + consumer * 64 * 128;  // this consumer's 64 rows of each chunk
  float s[Cfg::kBlockN / 2];  // the score tile: S, then (after the softmax) P in float32
  float acc[kD / 2];          // O, unnormalized, relative to the running maximum m
  uint32_t p[Cfg::kBlockN / 4];  // P in fp16/bf16 pairs: the A operand of P V (16 keys = 4 registers)
#pragma unroll
  for (int i = 0; i < Cfg::kBlockN / 2; ++i) s[i] = 0.0f;  // never read (scale-d = 0), but never undefined either
#pragma unroll
  for (int i = 0; i < kD / 2; ++i) acc[i] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f}, rescale[2] = {0.0f, 0.0f};

  // S = Q K_tᵀ: once K tile t has landed, D/16 wgmma into s as one group, the first overwriting it (scale-d = 0).
  // Both operands are K-major, 128-byte rows: 8-row groups 1024 B apart (stride offset; the leading offset is
  // unused, a k16 step staying inside a row); k16 step kk is in chunk kk/4, 32·(kk%4) bytes into each swizzled row.
  auto issue_scores = [&](int t) {
    const int stage = t % kStages;
    lab::mbarrier_wait(&k_full[stage], (t / kStages) % 2);
    const unsigned char* k_tile = k_tiles + stage * Cfg::kTileBytes;
    lab::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      const int offset = kk / 4 * Cfg::kQChunkBytes + kk % 4 * 32;
      const uint64_t desc_q = lab::smem_descriptor(q_rows + offset, 16, 1024);
      const uint64_t desc_k = lab::smem_descriptor(k_tile + kk / 4 * Cfg::kKvChunkBytes + kk % 4 * 32, 16, 1024);
      lab::wgmma_ss<T, Cfg::kBlockN, false>(s, desc_q, desc_k, kk > 0);
    }
    lab::wgmma_commit_group();
  };

  // O = O · rescale (the previous softmax's, O's last P V being done), then O += P V_t once V tile t has landed:
  // kBlockN/16 wgmma as one group, P's registers 4kk..4kk+3 the A operand of keys 16kk..16kk+15. V is MN-major
  // (D contiguous): 64 columns per 128-byte row, the next 64 one chunk further (leading offset), the next 8 keys
  // 1024 B further (stride offset); the k16 step kk starts 16 rows (2048 B) into the tile. Transpose-B on.
  auto issue_pv = [&](int t) {
#pragma unroll
    for (int i = 0; i < kD / 2; ++i) acc[i] *= rescale[i / 2 % 2];  // registers 4j+{0,1}: row query, {2,3}: +8
    const int stage = t % kStages;
    lab::mbarrier_wait(&v_full[stage], (t / kStages) % 2);
    const unsigned char* v_tile = v_tiles + stage * Cfg::kTileBytes;
    lab::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < Cfg::kBlockN / 16; ++kk) {
      const uint32_t a[4] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
      const uint64_t desc_v = lab::smem_descriptor(v_tile + kk * 16 * 128, Cfg::kKvChunkBytes, 1024);
      lab::wgmma_rs<T, kD, true>(acc, a, desc_v, true);
    }
    lab::wgmma_commit_group();
  };

  // Tile t's scores, landed in s: the mask where the tile needs one (it ends past S, or causal, the diagonal
  // crosses this consumer's rows), then the online softmax of both rows (s becomes P; rescale is O's factor).
  auto softmax = [&](int t) {
    const int first_key = t * Cfg::kBlockN;
    if (first_key + Cfg::kBlockN > seq || (kCausal && first_key + Cfg::kBlockN - 1 > first_row))
      mask_scores<kCausal>(as_n8_tiles<Cfg::kScoreTiles>(s), first_key + 2 * (lane % 4), query, seq);
#pragma unroll
    for (int h = 0; h < 2; ++h) rescale[h] = softmax_row(as_n8_tiles<Cfg::kScoreTiles>(s), h, m[h], l[h], scale_log2);
  };

  // P in fp16/bf16: accumulator registers 2r and 2r + 1 (adjacent keys of one row) become register r of P, so P's
  // registers 4kk..4kk+3 are wgmma's A fragment of keys 16kk..16kk+15 (a0: row query, keys 16kk + 2·(lane%4) + {0,
  // 1}; a1: row query + 8; a2, a3: the same 8 keys on).
  auto round_p = [&] {
#pragma unroll
    for (int r = 0; r < Cfg::kBlockN / 4; ++r) p[r] = pack_pair<T>(s[2 * r], s[2 * r + 1]);
  };

  // 6. Prologue: tile 0's scores alone (nothing to overlap them with yet), its softmax and P.
  lab::mbarrier_wait(&q_full, 0);
  issue_scores(0);
  lab::wgmma_wait_group<0>();
  lab::wgmma_fence_operand(s);  // keeps the softmax's reads of s after the wait (wgmma writes s asynchronously)
  if (lane == 0) lab::mbarrier_arrive(&k_empty[0]);
  softmax(0);
  round_p();

  // 7. Tile t + 1's Q Kᵀ and tile t's P V, overlapped. Committed groups, oldest first: [S_{t+1}], [P V_t].
  //    wait_group<1> leaves only the newest, P V_t, running: S_{t+1} is in s, and its softmax runs while P V_t is on
  //    the tensor cores (and while the other consumer's products are). wait_group<0> then finishes P V_t, after which
  //    O and P's registers may change again. K tile t + 1 is released after the softmax, V tile t after the second
  //    wait. Nothing is in flight across iterations.
  //    The release of K is also what keeps the softmax ahead of wait_group<0>. Nothing in the softmax's arithmetic
  //    depends on the wait, and ptxas schedules the wait early: with K released right after the first wait, it put
  //    wait_group<0> above the exponentials, which then waited for P V_t instead of overlapping it. It does keep an
  //    mbarrier arrive ahead of the wait, so the arrive is predicated on the row sums, which need every exponential
  //    of the tile. The added term never holds (l, a sum of exponentials, is never negative, and NaN compares
  //    false): lane 0 of each warp arrives, as everywhere else.
  for (int t = 0; t + 1 < key_tiles; ++t) {
    issue_scores(t + 1);
    issue_pv(t);
    lab::wgmma_wait_group<1>();
    lab::wgmma_fence_operand(s);
    softmax(t + 1);
    if (lane == 0 || fminf(l[0], l[1]) < 0.0f) lab::mbarrier_arrive(&k_empty[(t + 1) % kStages]);
    lab::wgmma_wait_group<0>();
    lab::wgmma_fence_operand(acc);
    lab::wgmma_fence_operand(p);  // P V_t read p asynchronously: p changes only after this point
    if (lane == 0) lab::mbarrier_arrive(&v_empty[t % kStages]);
    round_p();
  }
  // 8. The last tile's P V, then O = acc / l (the last stages are never released: no tile follows).
  issue_pv(key_tiles - 1);
  lab::wgmma_wait_group<0>();
  lab::wgmma_fence_operand(acc);
  store_output<T>(o + static_cast<int64_t>(head) * seq * kD, as_n8_tiles<Cfg::kOutTiles>(acc), l, query, seq, lane);
#else
  __trap();  // built without sm_90a: the launcher never starts it there (lab::runs_sm90a)
#endif
}

template <typename T, int kD, bool kCausal>
cudaError_t launch_fa3(const T* q, const T* k, const T* v, T* o, int64_t heads, int64_t seq, cudaStream_t stream) {
  using Cfg = Fa3Tile<kD>;
  // Each tensor as (B·H, S, D): boxes of 128 rows × 64 columns of one head (TMA's coordinates are 32-bit, enough
  // for any B·H the grid allows).
  CUtensorMap map_q, map_k, map_v;
  if (!lab::encode_tensor_map_3d(&map_q, q, heads, seq, kD, Cfg::kBlockM) ||
      !lab::encode_tensor_map_3d(&map_k, k, heads, seq, kD, Cfg::kBlockN) ||
      !lab::encode_tensor_map_3d(&map_v, v, heads, seq, kD, Cfg::kBlockN))
    return cudaErrorInvalidValue;
  return launch_query_blocks<Cfg, kD>(attention_wgmma_kernel<T, kD, kCausal>, heads, seq, stream, map_q, map_k, map_v,
                                      o);
}

cudaError_t launch_attention_wgmma(lab::DType dtype, const void* q, const void* k, const void* v, void* o,
                                   float* scores, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                   cudaStream_t stream) {
  // Not Hopper (this build has no wgmma for the GPU), or bases TMA cannot take: v2 answers instead, so that a direct
  // call is right anywhere (matmul v5 falls back to v4 the same way for operands TMA cannot take). The harness never
  // times this row off Hopper: specs/attention.py's requires_capability reports it as skipped there.
  if (!lab::runs_sm90a() || !lab::is_aligned16(q) || !lab::is_aligned16(k) || !lab::is_aligned16(v))
    return launch_attention_flash2(dtype, q, k, v, o, scores, heads, seq, head_dim, causal, stream);
  return dispatch_tiled(dtype, head_dim, causal, [&](auto tag, auto d, auto mask) {
    using T = decltype(tag);
    return launch_fa3<T, decltype(d)::value, decltype(mask)::value>(
        static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), static_cast<T*>(o), heads, seq,
        stream);
  });
}

#else  // host half: the torch binding

#include <cstdint>
#include <string>
#include <utility>

#include "lab_torch.h"

using AttentionLauncher = cudaError_t (*)(lab::DType, const void* q, const void* k, const void* v, void* o,
                                          float* scores, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                          cudaStream_t);

// What every row of both ops checks and does: attention.cu's rows call it with causal = false, attention_causal.cu's
// with true. `op` and `impl` start every message ("attention_causal:flash2: ..."); `scores`: the row materializes
// the float32 (B·H, S, S) scores (v1), in a workspace taken from torch's caching allocator.
at::Tensor run_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const char* op, bool causal,
                         const char* impl, AttentionLauncher launch, bool scores = false) {
  const std::string row = std::string(op) + ":" + impl;
  const char* name = row.c_str();
  for (const auto& [arg, t] : {std::pair<const char*, const at::Tensor*>{"q", &q}, {"k", &k}, {"v", &v}})
    lab::check_cuda_input(*t, name, arg);
  LAB_CHECK(q.dim() == 4, name, ": q has shape ", q.sizes(), "; expected 4-D (B, H, S, D)");
  LAB_CHECK(k.sizes() == q.sizes() && v.sizes() == q.sizes(), name, ": q, k and v must have one shape (B, H, S, D); ",
            "got q ", q.sizes(), ", k ", k.sizes(), ", v ", v.sizes());
  LAB_CHECK_TYPE(k.scalar_type() == q.scalar_type() && v.scalar_type() == q.scalar_type(), name,
                 ": dtypes differ: q ", q.scalar_type(), ", k ", k.scalar_type(), ", v ", v.scalar_type());
  LAB_CHECK(k.device() == q.device() && v.device() == q.device(), name, ": inputs are on different devices: q ",
            q.device(), ", k ", k.device(), ", v ", v.device());
  LAB_CHECK_TYPE(q.scalar_type() == at::kHalf || q.scalar_type() == at::kBFloat16, name, ": q has dtype ",
                 q.scalar_type(), "; this kernel takes float16 or bfloat16 (tensor-core inputs, float32 sums)");
  const lab::DType dtype = lab::float_dtype(q, name, "q");
  at::Tensor out = at::empty_like(q);
  if (q.numel() == 0) return out;  // a zero-block grid is a launch error, and there is nothing to do
  const int64_t heads = q.size(0) * q.size(1), seq = q.size(2), head_dim = q.size(3);
  LAB_CHECK(head_dim == 64 || head_dim == 128, name, ": head dimension D = ", head_dim, " (q's shape ", q.sizes(),
            "); D must be 64 or 128");
  c10::cuda::CUDAGuard guard(q.device());
  // flash2 copies rows in 16-byte pieces and wgmma's TMA takes 16-byte-aligned bases only. A contiguous view that
  // starts off a 16-byte boundary inside its storage (rare: torch's allocations are aligned) is copied into a fresh,
  // aligned tensor rather than refused.
  auto aligned = [](const at::Tensor& t) {
    return reinterpret_cast<std::uintptr_t>(t.const_data_ptr()) % 16 ? t.clone() : t;
  };
  const at::Tensor qa = aligned(q), ka = aligned(k), va = aligned(v);
  at::Tensor workspace = scores ? at::empty({heads, seq, seq}, q.options().dtype(at::kFloat)) : at::Tensor();
  lab::check_launch(launch(dtype, qa.const_data_ptr(), ka.const_data_ptr(), va.const_data_ptr(), out.mutable_data_ptr(),
                           scores ? workspace.mutable_data_ptr<float>() : nullptr, heads, seq, head_dim, causal,
                           lab::current_stream()),
                    op, impl);
  return out;
}

// attention_causal.cu defines LAB_ATTENTION_KERNELS_ONLY and includes this file for its kernels, launchers and
// run_attention; the non-causal op's bindings and registrations stay out of it, since a process that loads both
// modules would otherwise register the lab_attention library twice, which torch refuses.
#ifndef LAB_ATTENTION_KERNELS_ONLY
at::Tensor attention_naive(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return run_attention(q, k, v, "attention", false, "naive", launch_attention_naive, /*scores=*/true);
}
at::Tensor attention_flash2(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return run_attention(q, k, v, "attention", false, "flash2", launch_attention_flash2);
}
at::Tensor attention_warp32(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return run_attention(q, k, v, "attention", false, "warp32", launch_attention_warp32);
}
at::Tensor attention_lazy(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return run_attention(q, k, v, "attention", false, "lazy", launch_attention_lazy);
}
at::Tensor attention_wgmma(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return run_attention(q, k, v, "attention", false, "wgmma", launch_attention_wgmma);
}

TORCH_LIBRARY(lab_attention, m) {
  m.def("naive(Tensor q, Tensor k, Tensor v) -> Tensor");
  m.def("flash2(Tensor q, Tensor k, Tensor v) -> Tensor");
  m.def("warp32(Tensor q, Tensor k, Tensor v) -> Tensor");
  m.def("lazy(Tensor q, Tensor k, Tensor v) -> Tensor");
  m.def("wgmma(Tensor q, Tensor k, Tensor v) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_attention, CUDA, m) {
  m.impl("naive", &attention_naive);
  m.impl("flash2", &attention_flash2);
  m.impl("warp32", &attention_warp32);
  m.impl("lazy", &attention_lazy);
  m.impl("wgmma", &attention_wgmma);
}
#endif  // LAB_ATTENTION_KERNELS_ONLY

#endif
