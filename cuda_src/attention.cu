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
//
// v1 writes 4·B·H·S² bytes of scores and reads them back in every pass after (the softmax's, then P V's): traffic
// that grows with S², against S·D for Q, K and V, and its products run on the fp32 units. v2 reads Q, K and V once
// per block and writes O once, which leaves the two products, on the tensor cores. The yardstick is the fastest of
// PyTorch's SDPA backends at the same shape (specs/attention.py). Triton side: triton_src/attention.py.
#include "lab.h"

// Both rows take the same arguments: scores is the float32 (B·H, S, S) workspace of a row that materializes the
// scores (v1), null for the others; heads = B·H; causal hides key j from query i for j > i.
cudaError_t launch_attention_naive(lab::DType dtype, const void* q, const void* k, const void* v, void* o,
                                   float* scores, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                   cudaStream_t stream);
cudaError_t launch_attention_flash2(lab::DType dtype, const void* q, const void* k, const void* v, void* o,
                                    float* scores, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                    cudaStream_t stream);

#ifdef __CUDACC__
#include <cmath>
#include <type_traits>

#include "lab_async.cuh"
#include "lab_device.cuh"
#include "lab_mma.cuh"

// D^-1/2 times `factor` (log2(e) for a kernel that takes exp as exp2), in double until the one rounding to float.
inline float softmax_scale(int64_t head_dim, double factor = 1.0) {
  return static_cast<float>(factor / std::sqrt(static_cast<double>(head_dim)));
}

// Calls body(T{}) with T the CUDA type of fp16 or bf16, the two types both steps take; float32 instantiates nothing
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

// ---- v1 naive: three kernels, the scores materialized in global memory. -------------------------------------------
// Each kernel reads what the one before wrote: S in the workspace, P in its place, then P V. Row i of a causal head
// sees keys 0..i only; none of the three kernels touches the rest of the row, so the workspace there stays unwritten.
__device__ __forceinline__ int64_t keys_seen(int64_t query, int64_t seq, bool causal) {
  return causal ? query + 1 : seq;
}

// One thread per score, the key fastest: a warp reads one row of Q (a broadcast) and 32 rows of K, which L1 keeps
// while the threads walk D. Products of two fp16/bf16 values are exact in float32; only the sum rounds.
template <typename T>
__global__ void attention_scores_kernel(const T* __restrict__ q, const T* __restrict__ k, float* __restrict__ scores,
                                        int64_t heads, int64_t seq, int head_dim, float scale, bool causal) {
  const int64_t at = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // 64-bit: B·H·S² passes 2^31
  if (at >= heads * seq * seq) return;
  const int64_t key = at % seq, row = at / seq;  // row = head · S + query
  const int64_t head = row / seq;
  if (key >= keys_seen(row % seq, seq, causal)) return;
  const T* q_row = q + row * head_dim;
  const T* k_row = k + (head * seq + key) * head_dim;
  float acc = 0.0f;
  for (int d = 0; d < head_dim; ++d) acc += lab::to_float(q_row[d]) * lab::to_float(k_row[d]);
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
template <int kD>
struct Flash2Tile {
  static constexpr int kBlockM = 64, kBlockN = 64;  // queries per block, keys per tile
  static constexpr int kThreads = 128;              // 4 warps of 16 query rows
  static constexpr int kStride = kD + 8;            // padded rows, in elements
  static constexpr int kTileElems = kBlockN * kStride;
  static constexpr int kSmemBytes = (kBlockM * kStride + 4 * kTileElems) * 2;  // Q, then K and V of two stages
  static constexpr int kDSlices = kD / 16;       // k16 steps of Q Kᵀ
  static constexpr int kKeyTiles = kBlockN / 8;  // n8 tiles of a warp's 16×64 scores
  static constexpr int kOutTiles = kD / 8;       // n8 tiles of a warp's 16×D output
  static_assert(kBlockM == 16 * (kThreads / 32) && kD % 16 == 0 && kBlockN % 16 == 0, "whole mma tiles per warp");
  static_assert(kBlockM * kD / 8 % kThreads == 0 && kBlockN * kD / 8 % kThreads == 0, "16-byte chunks split evenly");
};

// 2^x as one MUFU.EX2 (relative error about 2^-22; 2^-inf = 0, which is what a masked score must give).
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Two floats as one 32-bit register of fp16/bf16, the first in the low half: mma's operand order, and a pair of
// adjacent outputs in memory order.
template <typename T>
__device__ __forceinline__ uint32_t pack_pair(float lo, float hi) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
}

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
template <int kTiles, int kOutTiles>
__device__ __forceinline__ void online_softmax(float (&s)[kTiles][4], float (&acc)[kOutTiles][4], float (&m)[2],
                                               float (&l)[2], float scale_log2) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float tile_max = m[h];
#pragma unroll
    for (int n = 0; n < kTiles; ++n) tile_max = fmaxf(tile_max, fmaxf(s[n][2 * h], s[n][2 * h + 1]));
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
    const float rescale = exp2_approx((m[h] - tile_max) * scale_log2);
    const float shift = tile_max * scale_log2;
    m[h] = tile_max;
    float sum = 0.0f;
#pragma unroll
    for (int n = 0; n < kTiles; ++n)
#pragma unroll
      for (int e = 2 * h; e < 2 * h + 2; ++e) {
        s[n][e] = exp2_approx(fmaf(s[n][e], scale_log2, -shift));
        sum += s[n][e];
      }
    l[h] = l[h] * rescale + sum;
#pragma unroll
    for (int n = 0; n < kOutTiles; ++n) {
      acc[n][2 * h] *= rescale;
      acc[n][2 * h + 1] *= rescale;
    }
  }
}

template <typename T, int kD, bool kCausal>
__global__ void __launch_bounds__(Flash2Tile<kD>::kThreads)
    attention_flash2_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                            T* __restrict__ o, int seq, int q_blocks, float scale_log2) {
  using Cfg = Flash2Tile<kD>;
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
  const int warp_query = first_query + warp * 16 + lane / 4;  // this lane's rows: warp_query and warp_query + 8

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

  // 5. The warp's 16 rows of Q as mma A fragments, one per k16 slice of D, held for the whole key loop: lanes 0-15
  //    address rows 0-15 at the slice's column, lanes 16-31 the same rows 8 columns on (a0..a3 in order).
  uint32_t q_frag[Cfg::kDSlices][4];
#pragma unroll
  for (int kk = 0; kk < Cfg::kDSlices; ++kk)
    lab::ldmatrix_x4(q_frag[kk],
                     lab::smem_address(q_tile + (warp * 16 + lane % 16) * Cfg::kStride + kk * 16 + (lane / 16) * 8));

  float acc[Cfg::kOutTiles][4] = {};  // the warp's 16×D of O, unnormalized
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};

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

    // 7. S = Q Kᵀ for the warp's 16 queries and the tile's 64 keys. One ldmatrix.x4 gives the B fragments of two
    //    n8 tiles: lanes 0-7 address keys 0-7 at the slice's column (b0 of the first), lanes 8-15 the same keys 8
    //    columns on (its b1), lanes 16-31 keys 8-15 likewise (the second tile's b0, b1).
    float s[Cfg::kKeyTiles][4] = {};
#pragma unroll
    for (int kk = 0; kk < Cfg::kDSlices; ++kk)
#pragma unroll
      for (int n = 0; n < Cfg::kKeyTiles; n += 2) {
        uint32_t b[4];
        const int key = n * 8 + (lane / 16) * 8 + lane % 8, col = kk * 16 + (lane / 8) % 2 * 8;
        lab::ldmatrix_x4(b, lab::smem_address(k_tile + key * Cfg::kStride + col));
        lab::mma_16816<T>(s[n], q_frag[kk], b[0], b[1]);
        lab::mma_16816<T>(s[n + 1], q_frag[kk], b[2], b[3]);
      }

    // 8. The mask, on the tiles that need one: the partial tile past S, and causal the tile the diagonal crosses.
    const int first_key = t * Cfg::kBlockN;
    if (first_key + Cfg::kBlockN > seq || (kCausal && first_key + Cfg::kBlockN - 1 > first_query))
      mask_scores<kCausal>(s, first_key + 2 * (lane % 4), warp_query, seq);

    online_softmax(s, acc, m, l, scale_log2);

    // 9. O += P V, 16 keys at a time. The accumulators of n8 tiles 2ks and 2ks+1 are the A fragment of keys
    //    16ks..16ks+15 (a0 = tile 2ks rows g, a1 = its rows g+8, a2 and a3 = tile 2ks+1), rounded to fp16/bf16.
    //    V's B fragments come transposed: lanes 0-15 address keys 0-15 at the n8 pair's first column, lanes 16-31
    //    the same keys 8 columns on, giving (b0, b1) of the first n8 tile of D, then of the second.
#pragma unroll
    for (int ks = 0; ks < Cfg::kKeyTiles / 2; ++ks) {
      const uint32_t p[4] = {pack_pair<T>(s[2 * ks][0], s[2 * ks][1]), pack_pair<T>(s[2 * ks][2], s[2 * ks][3]),
                             pack_pair<T>(s[2 * ks + 1][0], s[2 * ks + 1][1]),
                             pack_pair<T>(s[2 * ks + 1][2], s[2 * ks + 1][3])};
#pragma unroll
      for (int n = 0; n < Cfg::kOutTiles; n += 2) {
        uint32_t b[4];
        lab::ldmatrix_x4_trans(
            b, lab::smem_address(v_tile + (ks * 16 + lane % 16) * Cfg::kStride + n * 8 + (lane / 16) * 8));
        lab::mma_16816<T>(acc[n], p, b[0], b[1]);
        lab::mma_16816<T>(acc[n + 1], p, b[2], b[3]);
      }
    }
  }
  lab::cp_async_wait<0>();  // the last group is empty, but none may be pending at exit

  // 10. O = acc / l: the row's four lanes add their shares of l, then each stores its pairs of adjacent outputs,
  //     rows past S left alone.
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float row_sum = l[h];
    row_sum += __shfl_xor_sync(0xffffffffu, row_sum, 1);
    row_sum += __shfl_xor_sync(0xffffffffu, row_sum, 2);
    const float inv_sum = 1.0f / row_sum;
    const int query = warp_query + 8 * h;
    if (query >= seq) continue;
    T* o_row = o + static_cast<int64_t>(query) * kD + 2 * (lane % 4);
#pragma unroll
    for (int n = 0; n < Cfg::kOutTiles; ++n)
      *reinterpret_cast<uint32_t*>(o_row + n * 8) = pack_pair<T>(acc[n][2 * h] * inv_sum, acc[n][2 * h + 1] * inv_sum);
  }
}

template <typename T, int kD, bool kCausal>
cudaError_t launch_flash2(const T* q, const T* k, const T* v, T* o, int64_t heads, int64_t seq, cudaStream_t stream) {
  using Cfg = Flash2Tile<kD>;
  auto kernel = attention_flash2_kernel<T, kD, kCausal>;
  const int64_t q_blocks = (seq + Cfg::kBlockM - 1) / Cfg::kBlockM;
  if (seq > INT_MAX / 2 || heads * q_blocks > INT_MAX) return cudaErrorInvalidConfiguration;
  // Above 48 KB of dynamic shared memory a kernel must opt in (D = 128 takes 85 KB: two blocks per SM).
  const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes);
  if (err != cudaSuccess) return err;
  kernel<<<static_cast<unsigned int>(heads * q_blocks), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(
      q, k, v, o, static_cast<int>(seq), static_cast<int>(q_blocks), softmax_scale(kD, 1.4426950408889634));
  return cudaGetLastError();
}

cudaError_t launch_attention_flash2(lab::DType dtype, const void* q, const void* k, const void* v, void* o,
                                    float* /*scores*/, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                                    cudaStream_t stream) {
  return dispatch_16bit(dtype, [&](auto tag) -> cudaError_t {
    using T = decltype(tag);
    // The head size and the mask are template arguments: both shape the kernel's registers and loops.
    auto go = [&](auto d, auto mask) {
      return launch_flash2<T, decltype(d)::value, decltype(mask)::value>(
          static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), static_cast<T*>(o), heads, seq,
          stream);
    };
    using D64 = std::integral_constant<int, 64>;
    using D128 = std::integral_constant<int, 128>;
    if (head_dim == 64) return causal ? go(D64{}, std::true_type{}) : go(D64{}, std::false_type{});
    if (head_dim == 128) return causal ? go(D128{}, std::true_type{}) : go(D128{}, std::false_type{});
    return cudaErrorInvalidValue;  // the binding allows 64 and 128 only
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
  // flash2 copies rows in 16-byte pieces. A contiguous view that starts off a 16-byte boundary inside its storage
  // (rare: torch's allocations are aligned) is copied into a fresh, aligned tensor rather than refused.
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

TORCH_LIBRARY(lab_attention, m) {
  m.def("naive(Tensor q, Tensor k, Tensor v) -> Tensor");
  m.def("flash2(Tensor q, Tensor k, Tensor v) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_attention, CUDA, m) {
  m.impl("naive", &attention_naive);
  m.impl("flash2", &attention_flash2);
}
#endif  // LAB_ATTENTION_KERNELS_ONLY

#endif
