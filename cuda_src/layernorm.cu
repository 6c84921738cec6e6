// LayerNorm over the last dimension of a 2-D (M, N) tensor, with weight and bias, forward and backward:
//   y = (x - mean) · rstd · w + b,   rstd = 1 / sqrt(mean((x - mean)²) + eps)
// Backward: dx = rstd · (w·dy - mean(w·dy) - x̂·mean(w·dy·x̂)),  dw = Σ_rows dy·x̂,  db = Σ_rows dy  (x̂ = (x - mean)·rstd).
//
// Memory-bound both ways (spec: specs/layernorm.py, which counts the bytes). The backward's dw and db are sums
// over all M rows, a reduction across rows: the part where the ways of writing it differ most. Triton side:
// triton_src/layernorm.py.
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/layernorm.md, -backward.md, -fwd-bwd.md):
//   v1 naive    one block per row, shared-memory block reductions, the row read three times (mean, variance,
//               output); backward: one block per row for dx, dw and db added into fp32 buffers with atomicAdd
//   v2 warp     + rows of up to 1024 elements: one warp per row, the row held in registers (read once), shuffle
//               reductions; backward: each warp sums dw and db in shared memory, each block writes a partial row
//               to a workspace and a second kernel adds the partial rows per column (no atomics)
//   v3 vec      + 16-byte packets held as loaded (two 16-bit elements per register), rows of up to 256 packets
//               forward, 128 backward (1024 fp32, 2048 fp16/bf16 forward); backward: dw and db summed in
//               registers (a thread holds the same columns in every row), the grid one wave of resident blocks
//   v4 block    + longer rows: a row spread over up to 1024 threads (forward, 8192 packets: 32768 fp32, 65536
//               fp16/bf16) or 512 (backward, 2048 packets), reductions across warps through shared memory
//   v5 cluster  + rows longer than a block holds on Hopper: a row spread over a cluster of up to 8 blocks, its sums
//               added across them through distributed shared memory (backward rows of up to 65536 elements;
//               forward rows past v4's, up to 8 times as long)
//   v6 occupancy  + v4's backward rows of up to 4096 elements with fewer packets a thread (one in fp16/bf16, two
//               in fp32), so that it fits in 64 registers and two blocks share a multiprocessor: one block's loads
//               in flight while the other reduces (the forward is v5's)
//   v7 prefetch  + the next row's packets loaded while this row's sums are reduced and its dx written: v5's
//               cluster rows (loads in flight across the cluster barrier, in clusters of more than two blocks) and
//               v6's rows of one packet a thread (the forward is v5's)
//   v8 staged   + fp16/bf16 rows of 4K-16K elements (16-byte aligned) brought into a ring of shared memory by the
//               copy engine (cp.async.bulk) several rows ahead, one row a block at a time: the bytes in flight set
//               by the ring, not by the registers (the forward is v5's)
//   v9 lean     + v8 with fewer instructions a row (its kernel is bound by issuing them, not by the memory):
//               one barrier a row instead of two, the warps' sums added by shuffles, 1/N once, dx with the
//               row's constants folded (the forward is v5's)
//   v10 lean_cluster  + rows longer than one of v9's blocks holds, fp32 included (Hopper): each block of a cluster
//               a contiguous part of every row in its ring, each block's sums stored into the others' shared
//               memory (st.async) once a row, with no cluster barrier (the forward is v5's)
//   v11 staged_forward  + the forward's rows that v10 takes in the backward, taken the same way: each block of a
//               cluster a contiguous part of every row in its ring (x alone), the two sums pushed across the
//               cluster (the backward is v10's)
//   v12 ring    + fp16/bf16 rows of 4K-8K elements (16-byte aligned, Hopper) in one wave of resident blocks, each
//               with v8's ring of rows (x alone) filled by bulk copies several rows ahead, so that a block's loads
//               go on while it reduces a row (the backward is v10's)
//
// The forward saves mean and rstd (fp32, M each) for the backward. Each step adds a path for the rows it is good at
// and hands every other shape to the step before (its launcher's first line), so every row runs every shape: rows
// longer than v4 holds (v5 off Hopper, or past a cluster) go down to v1, whose strided loops take any N.
#include "lab.h"

constexpr float kLayerNormEps = 1e-5f;  // the spec's (specs/layernorm.py)

// One forward launcher per step: y, mean and rstd for a row-major (rows, cols) x, w and b of cols, on `stream`.
cudaError_t launch_layernorm_naive(lab::DType dtype, const void* x, const void* w, const void* b, void* y, float* mean,
                                   float* rstd, int64_t rows, int64_t cols, cudaStream_t stream);
cudaError_t launch_layernorm_warp(lab::DType dtype, const void* x, const void* w, const void* b, void* y, float* mean,
                                  float* rstd, int64_t rows, int64_t cols, cudaStream_t stream);
cudaError_t launch_layernorm_vec(lab::DType dtype, const void* x, const void* w, const void* b, void* y, float* mean,
                                 float* rstd, int64_t rows, int64_t cols, cudaStream_t stream);
cudaError_t launch_layernorm_block(lab::DType dtype, const void* x, const void* w, const void* b, void* y, float* mean,
                                   float* rstd, int64_t rows, int64_t cols, cudaStream_t stream);
cudaError_t launch_layernorm_cluster(lab::DType dtype, const void* x, const void* w, const void* b, void* y,
                                     float* mean, float* rstd, int64_t rows, int64_t cols, cudaStream_t stream);
cudaError_t launch_layernorm_staged_forward(lab::DType dtype, const void* x, const void* w, const void* b, void* y,
                                            float* mean, float* rstd, int64_t rows, int64_t cols,
                                            cudaStream_t stream);
cudaError_t launch_layernorm_ring(lab::DType dtype, const void* x, const void* w, const void* b, void* y, float* mean,
                                  float* rstd, int64_t rows, int64_t cols, cudaStream_t stream);
// One backward launcher per step: dx, dw and db. The fp32 sums over rows go through `workspace`, whose size the
// step's path decides: called with workspace == nullptr a launcher launches nothing and sets *workspace_floats to
// the floats it needs; called again with that many floats at `workspace`, it runs. Every float it reads there it
// has written (or zeroed) in the same call.
cudaError_t launch_layernorm_naive_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                            const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                            float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                            cudaStream_t stream);
cudaError_t launch_layernorm_warp_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                           const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                           float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                           cudaStream_t stream);
cudaError_t launch_layernorm_vec_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                          const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                          float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                          cudaStream_t stream);
cudaError_t launch_layernorm_block_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                            const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                            float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                            cudaStream_t stream);
cudaError_t launch_layernorm_cluster_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                              const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                              float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                              cudaStream_t stream);
cudaError_t launch_layernorm_occupancy_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                                const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                                float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                                cudaStream_t stream);
cudaError_t launch_layernorm_prefetch_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                               const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                               float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                               cudaStream_t stream);
cudaError_t launch_layernorm_staged_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                             const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                             float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                             cudaStream_t stream);
cudaError_t launch_layernorm_lean_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                           const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                           float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                           cudaStream_t stream);
cudaError_t launch_layernorm_lean_cluster_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                                   const float* mean, const float* rstd, void* dx, void* dw,
                                                   void* db, float* workspace, int64_t* workspace_floats,
                                                   int64_t rows, int64_t cols, cudaStream_t stream);

#ifdef __CUDACC__
#include "lab_norm.cuh"

// One call, typed: what every step's runner gets. `vec`: every row of every (M, N) tensor and the parameter vectors
// start 16-byte aligned (all base pointers are, and N is a multiple of the packet), so v3 and v4 may move whole
// packets.
template <typename T>
struct ForwardCall {
  const T *x, *w, *b;
  T* y;
  float *mean, *rstd;
  int64_t rows, cols;
  bool vec;
  cudaStream_t stream;

  int64_t packets() const { return (cols + lab::Packet<T>::kSize - 1) / lab::Packet<T>::kSize; }  // per row
};

template <typename T>
struct BackwardCall {
  const T *dy, *x, *w;
  const float *mean, *rstd;
  T *dx, *dw, *db;
  float* workspace;  // nullptr: only say how many floats the path needs
  int64_t* workspace_floats;
  int64_t rows, cols;
  bool vec;
  cudaStream_t stream;

  int64_t packets() const { return (cols + lab::Packet<T>::kSize - 1) / lab::Packet<T>::kSize; }
  cudaError_t needs(int64_t floats) const {
    *workspace_floats = floats;
    return cudaSuccess;
  }
  lab::GradOutputs<T, 2> grads() const { return {{dw, db}}; }
};

// The extern launchers' common half: the dtype's instantiation and the typed call, then `step` (a step's runner).
template <typename Step>
cudaError_t dispatch_forward(lab::DType dtype, const void* x, const void* w, const void* b, void* y, float* mean,
                             float* rstd, int64_t rows, int64_t cols, cudaStream_t stream, Step step) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    const bool vec = lab::is_aligned16(x) && lab::is_aligned16(w) && lab::is_aligned16(b) && lab::is_aligned16(y) &&
                     cols % lab::Packet<T>::kSize == 0;
    return step(ForwardCall<T>{static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(b),
                               static_cast<T*>(y), mean, rstd, rows, cols, vec, stream});
  });
}

template <typename Step>
cudaError_t dispatch_backward(lab::DType dtype, const void* dy, const void* x, const void* w, const float* mean,
                              const float* rstd, void* dx, void* dw, void* db, float* workspace,
                              int64_t* workspace_floats, int64_t rows, int64_t cols, cudaStream_t stream, Step step) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    const bool vec = lab::is_aligned16(dy) && lab::is_aligned16(x) && lab::is_aligned16(w) &&
                     lab::is_aligned16(dx) && cols % lab::Packet<T>::kSize == 0;
    return step(BackwardCall<T>{static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<const T*>(w), mean,
                                rstd, static_cast<T*>(dx), static_cast<T*>(dw), static_cast<T*>(db), workspace,
                                workspace_floats, rows, cols, vec, stream});
  });
}

// ---- v1 naive: a block per row, each thread striding over the row. ------------------------------------------
// Two block reductions for the statistics: the mean, then the squared deviations from it. A single pass of Σx and
// Σx² would lose the variance to cancellation on rows far from zero (the spec's "large offset" inputs). The row is
// read from HBM three times (L2 catches some of it); any N works.
constexpr int kNaiveThreads = 256;

template <typename T>
__global__ void layernorm_naive_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                       T* __restrict__ y, float* __restrict__ mean, float* __restrict__ rstd,
                                       int64_t rows, int64_t cols, float eps) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += lab::to_float(xr[c]);
    const float mu = lab::block_reduce_sum(sum) / static_cast<float>(cols);
    float sq = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float d = lab::to_float(xr[c]) - mu;
      sq += d * d;
    }
    const float rs = rsqrtf(lab::block_reduce_sum(sq) / static_cast<float>(cols) + eps);
    T* yr = y + row * cols;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      yr[c] = lab::from_float<T>((lab::to_float(xr[c]) - mu) * rs * lab::to_float(w[c]) + lab::to_float(b[c]));
    if (threadIdx.x == 0) {
      mean[row] = mu;
      rstd[row] = rs;
    }
  }
}

// dx needs two sums over its row; dw and db need a sum over rows, which every block adds into with atomics:
// simple, and contended (each column's address takes M additions one after another).
template <typename T>
__global__ void layernorm_naive_backward_kernel(const T* __restrict__ dy, const T* __restrict__ x,
                                                const T* __restrict__ w, const float* __restrict__ mean,
                                                const float* __restrict__ rstd, T* __restrict__ dx,
                                                float* __restrict__ dw_sum, float* __restrict__ db_sum, int64_t rows,
                                                int64_t cols) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    const T* dyr = dy + row * cols;
    const float mu = mean[row], rs = rstd[row];
    float wdy_xhat = 0.0f, wdy = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float g = lab::to_float(w[c]) * lab::to_float(dyr[c]);
      wdy_xhat += g * (lab::to_float(xr[c]) - mu) * rs;
      wdy += g;
    }
    const float c_xhat = lab::block_reduce_sum(wdy_xhat) / static_cast<float>(cols);
    const float c_mean = lab::block_reduce_sum(wdy) / static_cast<float>(cols);
    T* dxr = dx + row * cols;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float xhat = (lab::to_float(xr[c]) - mu) * rs;
      const float g = lab::to_float(dyr[c]);
      dxr[c] = lab::from_float<T>((lab::to_float(w[c]) * g - c_mean - xhat * c_xhat) * rs);
      atomicAdd(dw_sum + c, g * xhat);
      atomicAdd(db_sum + c, g);
    }
  }
}

template <typename T>
cudaError_t run_naive(const ForwardCall<T>& c) {
  layernorm_naive_kernel<T><<<lab::row_grid(c.rows), kNaiveThreads, 0, c.stream>>>(
      c.x, c.w, c.b, c.y, c.mean, c.rstd, c.rows, c.cols, kLayerNormEps);
  return cudaGetLastError();
}

// workspace: [dw, db] fp32 sums of cols each, zeroed here before the kernel adds into them; then written in the
// parameters' dtype by the stage that sums partial rows, here a single one.
template <typename T>
cudaError_t run_naive_backward(const BackwardCall<T>& c) {
  if (!c.workspace) return c.needs(2 * c.cols);
  cudaError_t err = cudaMemsetAsync(c.workspace, 0, 2 * c.cols * sizeof(float), c.stream);
  if (err != cudaSuccess) return err;
  layernorm_naive_backward_kernel<T><<<lab::row_grid(c.rows), kNaiveThreads, 0, c.stream>>>(
      c.dy, c.x, c.w, c.mean, c.rstd, c.dx, c.workspace, c.workspace + c.cols, c.rows, c.cols);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  return lab::sum_partials(c.workspace, 1, c.cols, c.grads(), c.stream);
}

cudaError_t launch_layernorm_naive(lab::DType dtype, const void* x, const void* w, const void* b, void* y, float* mean,
                                   float* rstd, int64_t rows, int64_t cols, cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, b, y, mean, rstd, rows, cols, stream,
                          [](const auto& c) { return run_naive(c); });
}

cudaError_t launch_layernorm_naive_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                            const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                            float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                            cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, mean, rstd, dx, dw, db, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_naive_backward(c); });
}

// ---- v2 warp: one warp per row for rows of up to 32 · 32 elements, the row in registers. ----------------------
// Versus v1: the row is read from HBM once (each lane keeps its elements, lane + 32·j, widened to fp32 in
// registers between the passes), and each reduction is five register shuffles with no shared memory and no
// __syncthreads. Four warps (rows) per block. kItems (elements per lane) is a template parameter so that the cache
// is a fixed-size register array; the launcher picks the smallest power of two that holds the row.
// Backward: x and dy both held, and the sums over rows move from atomics on one global row to shared memory: each
// warp adds its rows' dy·x̂ and dy into a dw and a db row of its own (lab::own_warp_sums), and at the end the
// block adds its four warps' rows and writes one partial row of each to the workspace, [gradient][block][column].
// The grid is one wave of resident blocks, so a block takes many rows and the workspace has few partial rows:
// they are written once and read once more by lab::sum_partials, on top of the rows' 3·M·N elements.
constexpr int kWarpRowsPerBlock = 4;
constexpr int kWarpMaxItems = 32;  // elements per lane: rows of up to 1024 elements
constexpr int64_t kWarpMaxCols = 32 * kWarpMaxItems;

template <typename T, int kItems>
__global__ void __launch_bounds__(32 * kWarpRowsPerBlock) layernorm_warp_kernel(
    const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, T* __restrict__ y,
    float* __restrict__ mean, float* __restrict__ rstd, int64_t rows, int cols, float eps) {
  const int lane = threadIdx.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + threadIdx.y; row < rows;
       row += static_cast<int64_t>(gridDim.x) * kWarpRowsPerBlock) {
    float v[kItems];
    lab::load_lane_items(v, x + row * cols, cols);
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < kItems; ++j) s += v[j];
    const float mu = lab::warp_reduce_sum(s) / static_cast<float>(cols);
    float sq = 0.0f;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const float d = v[j] - mu;
      if (lane + 32 * j < cols) sq += d * d;  // past the end v is 0, not mu
    }
    const float rs = rsqrtf(lab::warp_reduce_sum(sq) / static_cast<float>(cols) + eps);
    T* yr = y + row * cols;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int c = lane + 32 * j;
      if (c < cols) yr[c] = lab::from_float<T>((v[j] - mu) * rs * lab::to_float(w[c]) + lab::to_float(b[c]));
    }
    if (lane == 0) {
      mean[row] = mu;
      rstd[row] = rs;
    }
  }
}

template <typename T, int kItems>
__global__ void __launch_bounds__(32 * kWarpRowsPerBlock) layernorm_warp_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ mean,
    const float* __restrict__ rstd, T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols) {
  extern __shared__ float warp_sums[];  // [warp][dw, db][cols]
  float* dw_sum = lab::own_warp_sums<2>(warp_sums, cols);
  float* db_sum = dw_sum + cols;
  const int lane = threadIdx.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + threadIdx.y; row < rows;
       row += static_cast<int64_t>(gridDim.x) * kWarpRowsPerBlock) {
    float xv[kItems], gv[kItems];
    lab::load_lane_items(xv, x + row * cols, cols);
    lab::load_lane_items(gv, dy + row * cols, cols);
    const float mu = mean[row], rs = rstd[row];
    float wdy_xhat = 0.0f, wdy = 0.0f;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int c = lane + 32 * j;
      if (c < cols) {
        const float xhat = (xv[j] - mu) * rs;
        const float g = lab::to_float(w[c]) * gv[j];
        wdy_xhat += g * xhat;
        wdy += g;
        dw_sum[c] += gv[j] * xhat;
        db_sum[c] += gv[j];
      }
    }
    const float c_xhat = lab::warp_reduce_sum(wdy_xhat) / static_cast<float>(cols);
    const float c_mean = lab::warp_reduce_sum(wdy) / static_cast<float>(cols);
    T* dxr = dx + row * cols;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int c = lane + 32 * j;
      if (c < cols) {
        const float xhat = (xv[j] - mu) * rs;
        dxr[c] = lab::from_float<T>((lab::to_float(w[c]) * gv[j] - c_mean - xhat * c_xhat) * rs);
      }
    }
  }
  lab::write_warp_sums<2>(warp_sums, partials, cols);
}

// Rows of up to kWarpMaxCols elements; longer rows go to v1.
template <typename T>
cudaError_t run_warp(const ForwardCall<T>& c) {
  if (c.cols > kWarpMaxCols) return run_naive(c);
  return lab::with_pow2<1, kWarpMaxItems>((c.cols + 31) / 32, [&](auto items) {
    constexpr int kItems = decltype(items)::value;
    const unsigned int grid = lab::row_grid((c.rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock);
    layernorm_warp_kernel<T, kItems><<<grid, dim3(32, kWarpRowsPerBlock), 0, c.stream>>>(
        c.x, c.w, c.b, c.y, c.mean, c.rstd, c.rows, static_cast<int>(c.cols), kLayerNormEps);
    return cudaGetLastError();
  });
}

template <typename T>
cudaError_t run_warp_backward(const BackwardCall<T>& c) {
  if (c.cols > kWarpMaxCols) return run_naive_backward(c);
  return lab::with_pow2<1, kWarpMaxItems>((c.cols + 31) / 32, [&](auto items) {
    constexpr int kItems = decltype(items)::value;
    const auto kernel = layernorm_warp_backward_kernel<T, kItems>;
    const size_t smem = sizeof(float) * kWarpRowsPerBlock * 2 * c.cols;  // at most 32 KB: no opt-in needed
    const unsigned int grid = lab::resident_grid(kernel, 32 * kWarpRowsPerBlock, smem,
                                                 (c.rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock);
    if (!c.workspace) return c.needs(2 * int64_t{grid} * c.cols);
    kernel<<<grid, dim3(32, kWarpRowsPerBlock), smem, c.stream>>>(c.dy, c.x, c.w, c.mean, c.rstd, c.dx, c.workspace,
                                                                  c.rows, static_cast<int>(c.cols));
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    return lab::sum_partials(c.workspace, grid, c.cols, c.grads(), c.stream);
  });
}

cudaError_t launch_layernorm_warp(lab::DType dtype, const void* x, const void* w, const void* b, void* y, float* mean,
                                  float* rstd, int64_t rows, int64_t cols, cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, b, y, mean, rstd, rows, cols, stream,
                          [](const auto& c) { return run_warp(c); });
}

cudaError_t launch_layernorm_warp_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                           const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                           float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                           cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, mean, rstd, dx, dw, db, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_warp_backward(c); });
}

// ---- v3 vec and v4 block: the row in 16-byte packets, held as loaded. ----------------------------------------
// One kernel each way for both steps; the steps differ in the rows they launch it for. A block of (S, R) threads
// takes R rows at a time, S threads per row (lab::RowSlots), each thread kPacks packets of its row (lab::RowWords).
// v3: S = 32, a warp per row as in v2, now with LDG.128/STG.128 and the row kept as loaded: the same registers hold
// twice the fp16/bf16 elements, so a warp holds rows of 256 packets where v2 held 1024 elements in any dtype.
// v4: S > 32 for longer rows, the row's sums adding the warps' sums through shared memory (lab::row_sum).
// The parameter vectors are read again for every row, from L1/L2 (M·N elements of x go by, N of w and b).
// Forward: __launch_bounds__(1024) caps a thread at 64 registers, which a block of 1024 threads needs; kPacks = 8
// packets of x (32 registers) fit under it.
constexpr int kVecMaxThreads = 1024;
constexpr int kVecRowsPerBlock = 4;  // v3 forward: four warps, four rows
constexpr int kVecMaxPacks = 8;
constexpr int64_t kVecWarpPackets = 32 * kVecMaxPacks;                              // v3 forward
constexpr int64_t kBlockMaxPackets = int64_t{kVecMaxThreads} * kVecMaxPacks;        // v4 forward

// One row's forward, its packets held in r (packets rank, rank + size, ... of the row): mean and rstd from two sums
// over the row, `total` adding a value over every thread that holds part of it (v3/v4: the block's threads of the
// row, lab::row_sum; v5: the cluster's, lab::cluster_row_sum), then y, and mean and rstd by the thread of rank 0.
// Every thread of the row calls it, an `active` one with a row (an inactive slot holds zeros and adds nothing).
template <typename T, int kPacks, typename Total>
__device__ __forceinline__ void forward_row(lab::RowWords<T, kPacks>& r, const T* __restrict__ w,
                                            const T* __restrict__ b, T* __restrict__ y, float* __restrict__ mean,
                                            float* __restrict__ rstd, int64_t row, int rank, int size, int cols,
                                            bool vec, float eps, bool active, Total total) {
  constexpr int kVec = lab::Packet<T>::kSize;
  const float mu = total(r.sum()) / static_cast<float>(cols);
  r.rewiden();
  const float sq = r.sum(rank, size, cols, vec, [mu](float v) {
    const float d = v - mu;
    return d * d;
  });
  const float rs = rsqrtf(total(sq) / static_cast<float>(cols) + eps);
  if (!active) return;  // after the row's last reduction: the barriers are behind it
  r.rewiden();
  T* yr = y + row * cols;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int packet = rank + i * size;
    const uint4 wp = lab::load_words(w, packet, cols, vec), bp = lab::load_words(b, packet, cols, vec);
    float v[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      v[k] = (r(i, k) - mu) * rs * lab::word_element<T>(wp, k) + lab::word_element<T>(bp, k);
    lab::store_words(yr, packet, cols, vec, v);
  }
  if (rank == 0) {
    mean[row] = mu;
    rstd[row] = rs;
  }
}

template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecMaxThreads) layernorm_vec_kernel(
    const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, T* __restrict__ y,
    float* __restrict__ mean, float* __restrict__ rstd, int64_t rows, int cols, bool vec, float eps) {
  using Rows = lab::RowSlots;
  const int rank = Rows::rank(), size = Rows::size();
  for (int64_t base = Rows::first(); base < rows; base += Rows::step()) {
    const int64_t row = base + threadIdx.y;
    const bool active = row < rows;
    lab::RowWords<T, kPacks> r;
    r.load(x + (active ? row * cols : 0), rank, size, active ? cols : 0, vec);
    forward_row(r, w, b, y, mean, rstd, row, rank, size, cols, vec, eps, active,
                [](float v) { return lab::row_sum<kVecMaxThreads>(v); });
  }
}

// Backward: x and dy held (8 registers per packet pair), plus each thread's sums of dy·x̂ and dy for its columns
// (2·kVec registers per packet), so fewer packets per thread than the forward: kPacks <= 4 and blocks of 512
// threads, which __launch_bounds__ lets use up to 128 registers each. The grid is one wave of resident blocks
// (lab::resident_grid): every block writes one partial row per gradient at its end (lab::write_register_sums),
// and a wave is as few partial rows as keep every SM busy.
constexpr int kVecBackwardThreads = 512;
constexpr int kVecBackwardMaxPacks = 4;
constexpr int64_t kVecWarpBackwardPackets = 32 * kVecBackwardMaxPacks;                          // v3 backward
constexpr int64_t kBlockMaxBackwardPackets = int64_t{kVecBackwardThreads} * kVecBackwardMaxPacks;  // v4 backward

// One row's backward as a thread holds it (packets rank, rank + size, ... of x and dy, widened where read), shared by
// every packet step from v3 on. backward_row_sums: this thread's part of the row's two sums, Σ w·dy·x̂ and Σ w·dy
// (`held` = 0 for a row slot past the last row: w reads as 0 and adds nothing), and its dy·x̂ and dy added into acc.
template <typename T, int kPacks>
__device__ __forceinline__ float2 backward_row_sums(const lab::RowWords<T, kPacks>& xs,
                                                    const lab::RowWords<T, kPacks>& gs, const T* __restrict__ w,
                                                    float mu, float rs, int rank, int size, int held, bool vec,
                                                    float (&acc)[2][kPacks][lab::Packet<T>::kSize]) {
  constexpr int kVec = lab::Packet<T>::kSize;
  float2 s = make_float2(0.0f, 0.0f);
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const uint4 wp = lab::load_words(w, rank + i * size, held, vec);  // past the end: dy = w = 0, adding nothing
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float xhat = (xs(i, k) - mu) * rs, d = gs(i, k);
      const float g = lab::word_element<T>(wp, k) * d;
      s.x += g * xhat;
      s.y += g;
      acc[0][i][k] += d * xhat;
      acc[1][i][k] += d;
    }
  }
  return s;
}

// backward_row_dx: given the row's two sums (over all its threads), this thread's packets of dx, into the row dxr.
template <typename T, int kPacks>
__device__ __forceinline__ void backward_row_dx(lab::RowWords<T, kPacks>& xs, lab::RowWords<T, kPacks>& gs,
                                                const T* __restrict__ w, float mu, float rs, float2 s,
                                                T* __restrict__ dxr, int rank, int size, int cols, bool vec) {
  constexpr int kVec = lab::Packet<T>::kSize;
  const float c_xhat = s.x / static_cast<float>(cols), c_mean = s.y / static_cast<float>(cols);
  xs.rewiden();
  gs.rewiden();
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int packet = rank + i * size;
    const uint4 wp = lab::load_words(w, packet, cols, vec);
    float v[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float xhat = (xs(i, k) - mu) * rs;
      v[k] = (lab::word_element<T>(wp, k) * gs(i, k) - c_mean - xhat * c_xhat) * rs;
    }
    lab::store_words(dxr, packet, cols, vec, v);
  }
}

// v3/v4/v6's body, and v7's on v6's rows (kPrefetch: the next row's loads issued before this row's sums).
template <typename T, int kPacks, bool kPrefetch = false>
__device__ __forceinline__ void vec_backward_rows(const T* __restrict__ dy, const T* __restrict__ x,
                                                  const T* __restrict__ w, const float* __restrict__ mean,
                                                  const float* __restrict__ rstd, T* __restrict__ dx,
                                                  float* __restrict__ partials, int64_t rows, int cols, bool vec) {
  constexpr int kVec = lab::Packet<T>::kSize;
  using Rows = lab::RowSlots;
  const int rank = Rows::rank(), size = Rows::size();
  float acc[2][kPacks][kVec] = {};  // Σ dy·x̂ (dw) and Σ dy (db) of this thread's columns over its rows
  lab::RowWords<T, kPacks> x_next, g_next;  // v7: the next row's packets, mean and rstd, loaded ahead
  float mu_next = 0.0f, rs_next = 0.0f;
  // The packets, mean and rstd of `row`, this thread's (zeros past the last row).
  const auto load_slot = [&](int64_t row, lab::RowWords<T, kPacks>& xr, lab::RowWords<T, kPacks>& gr, float& m,
                             float& r) {
    const bool active = lab::load_backward_slot(xr, gr, x, dy, row, rows, cols, rank, size, vec);
    m = active ? mean[row] : 0.0f;
    r = active ? rstd[row] : 0.0f;
  };
  if (kPrefetch) load_slot(Rows::first() + threadIdx.y, x_next, g_next, mu_next, rs_next);
  for (int64_t base = Rows::first(); base < rows; base += Rows::step()) {
    const int64_t row = base + threadIdx.y;
    const bool active = row < rows;
    const int64_t offset = active ? row * cols : 0;
    const int held = active ? cols : 0;
    lab::RowWords<T, kPacks> xs, gs;
    float mu, rs;
    if (kPrefetch) {
      xs = x_next, gs = g_next, mu = mu_next, rs = rs_next;
    } else {
      load_slot(row, xs, gs, mu, rs);  // v3/v4/v6: a row's loads at its start, waited for by its sums
    }
    float2 s = backward_row_sums(xs, gs, w, mu, rs, rank, size, held, vec, acc);  // Σ w·dy·x̂, Σ w·dy
    // v7: the next rows' loads, in flight across this row's reduction (its barriers) and its dx.
    if (kPrefetch && base + Rows::step() < rows) load_slot(row + Rows::step(), x_next, g_next, mu_next, rs_next);
    s = lab::row_sum<kVecBackwardThreads>(s);
    if (!active) continue;
    backward_row_dx(xs, gs, w, mu, rs, s, dx + offset, rank, size, cols, vec);
  }
  lab::write_register_sums<T, 2, kPacks, kVecBackwardThreads>(acc, partials, cols);
}

template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecBackwardThreads) layernorm_vec_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ mean,
    const float* __restrict__ rstd, T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols,
    bool vec) {
  vec_backward_rows<T, kPacks>(dy, x, w, mean, rstd, dx, partials, rows, cols, vec);
}

template <typename T, int kPacks>
cudaError_t launch_vec_forward(const ForwardCall<T>& c, int threads_per_row, int rows_per_block) {
  const unsigned int grid = lab::row_grid((c.rows + rows_per_block - 1) / rows_per_block);
  layernorm_vec_kernel<T, kPacks><<<grid, dim3(threads_per_row, rows_per_block), 0, c.stream>>>(
      c.x, c.w, c.b, c.y, c.mean, c.rstd, c.rows, static_cast<int>(c.cols), c.vec, kLayerNormEps);
  return cudaGetLastError();
}

// S threads per row, 512 / S rows at a time, by `kernel` (v3's and v4's, or v6's).
template <typename T, int kPacks, typename Kernel>
cudaError_t launch_vec_backward(const BackwardCall<T>& c, int threads_per_row, Kernel kernel) {
  const int rows_per_block = kVecBackwardThreads / threads_per_row;
  const unsigned int grid =
      lab::resident_grid(kernel, kVecBackwardThreads, 0, (c.rows + rows_per_block - 1) / rows_per_block);
  if (!c.workspace) return c.needs(2 * int64_t{grid} * c.cols);
  kernel<<<grid, dim3(threads_per_row, rows_per_block), 0, c.stream>>>(
      c.dy, c.x, c.w, c.mean, c.rstd, c.dx, c.workspace, c.rows, static_cast<int>(c.cols), c.vec);
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  return lab::sum_partials(c.workspace, grid, c.cols, c.grads(), c.stream);
}

// v3: rows a warp holds in packets; longer rows go to v2 (which sends rows over 1024 elements to v1).
template <typename T>
cudaError_t run_vec(const ForwardCall<T>& c) {
  if (c.packets() > kVecWarpPackets) return run_warp(c);
  return lab::with_pow2<1, kVecMaxPacks>((c.packets() + 31) / 32, [&](auto packs) {
    return launch_vec_forward<T, decltype(packs)::value>(c, 32, kVecRowsPerBlock);
  });
}

template <typename T>
cudaError_t run_vec_backward(const BackwardCall<T>& c) {
  if (c.packets() > kVecWarpBackwardPackets) return run_warp_backward(c);
  return lab::with_pow2<1, kVecBackwardMaxPacks>((c.packets() + 31) / 32, [&](auto packs) {
    return launch_vec_backward<T, decltype(packs)::value>(c, 32,
                                                          layernorm_vec_backward_kernel<T, decltype(packs)::value>);
  });
}

// v4: rows longer than a warp holds and short enough for a block; every other row goes to v3. Forward: 8 packets
// per thread and as few threads as that allows (a multiple of 32), so that short rows leave room for several
// blocks per SM. Two later forward steps for v4's 16-bit rows of 4K-8K, where it trails Triton on the H200, were
// measured slower and dropped: 16 elements a thread (four times the threads a row), and resident blocks loading
// their next row before reducing this one; both cut the rows in flight per SM (results/nvidia-h200/
// layernorm-profile.md, its last section, at a430eec and 15bd90d, with ncu's account of v4 there). Neither was
// the weight and bias requested into L1 first, nor the row staged through shared memory by cp.async (quack's way),
// nor v5's cluster forward in quack's shape faster; one-pass shifted sums failed the inf/NaN checks
// (results/nvidia-h200/norm-forward-exp/, at a80f3c2).
// Backward: S a power of two from 64 to 512, the smallest with at most 4 packets per thread.
template <typename T>
cudaError_t run_block(const ForwardCall<T>& c) {
  const int64_t packets = c.packets();
  if (packets <= kVecWarpPackets || packets > kBlockMaxPackets) return run_vec(c);
  const int threads = static_cast<int>(((packets + kVecMaxPacks - 1) / kVecMaxPacks + 31) / 32 * 32);
  return launch_vec_forward<T, kVecMaxPacks>(c, threads, 1);
}

template <typename T>
cudaError_t run_block_backward(const BackwardCall<T>& c) {
  const int64_t packets = c.packets();
  if (packets <= kVecWarpBackwardPackets || packets > kBlockMaxBackwardPackets) return run_vec_backward(c);
  const int64_t wanted = lab::pow2_at_least((packets + kVecBackwardMaxPacks - 1) / kVecBackwardMaxPacks);
  const int threads = static_cast<int>(wanted < 64 ? 64 : wanted);  // <= 512: packets <= 512 · 4
  return lab::with_pow2<1, kVecBackwardMaxPacks>((packets + threads - 1) / threads, [&](auto packs) {
    return launch_vec_backward<T, decltype(packs)::value>(c, threads,
                                                          layernorm_vec_backward_kernel<T, decltype(packs)::value>);
  });
}

// ---- v5 cluster: a backward row across the blocks of a thread-block cluster. --------------------------------
// v4's backward holds rows of up to 512 · 4 packets in one block; longer rows went down to v1, which reads each row
// three times and adds dweight and dbias with atomics: the long-row cells of results/<gpu>/layernorm-backward.md,
// and ncu's account of v1 there (results/nvidia-h100-80gb-hbm3/layernorm-backward-profile.md). v5 spreads such a row
// over a cluster of C blocks (lab::cluster_row_sum): each block holds a C-th of the row as v4 holds a whole one, the
// row's two sums cross the blocks through distributed shared memory, one cluster barrier per row, and the row is
// read once. Each cluster takes rows cluster, cluster + clusters, ...; each of its threads keeps the same columns'
// dweight and dbias sums in registers across those rows, and the cluster writes one partial row per gradient, each
// block its own columns of it. The grid is one wave of resident clusters. The forward's rows: below, with run_cluster.
// Packets per thread: up to 4 in fp32, as v4; in fp16/bf16, 2 (at 4 the cluster's extra state spilled registers),
// so clusters of 8 blocks hold rows of up to 65536 elements in every dtype.
template <typename T>
constexpr int kClusterMaxPacks = sizeof(T) < 4 ? 2 : kVecBackwardMaxPacks;
template <typename T>
constexpr int64_t kClusterMaxBackwardPackets =
    int64_t{kVecBackwardThreads} * kClusterMaxPacks<T> * lab::kClusterMaxBlocks;

// v5's body, and v7's (kPrefetch): the rows of this block's cluster, each read once.
template <typename T, int kPacks, bool kPrefetch>
__device__ __forceinline__ void cluster_backward_rows(const T* __restrict__ dy, const T* __restrict__ x,
                                                      const T* __restrict__ w, const float* __restrict__ mean,
                                                      const float* __restrict__ rstd, T* __restrict__ dx,
                                                      float* __restrict__ partials, int64_t rows, int cols, bool vec,
                                                      int blocks_per_cluster) {
  constexpr int kVec = lab::Packet<T>::kSize;
  const int block_rank = static_cast<int>(blockIdx.x % blocks_per_cluster);  // 1-D clusters: consecutive blocks
  const int S = blockDim.x, size = blocks_per_cluster * S, rank = block_rank * S + threadIdx.x;
  const int64_t cluster = blockIdx.x / blocks_per_cluster, clusters = gridDim.x / blocks_per_cluster;
  float acc[2][kPacks][kVec] = {};  // Σ dy·x̂ (dw) and Σ dy (db) of this thread's columns over its cluster's rows
  lab::RowWords<T, kPacks> xs, gs;  // the row's packets
  float mu = 0.0f, rs = 0.0f;
  const auto load_row = [&](int64_t row, lab::RowWords<T, kPacks>& xr, lab::RowWords<T, kPacks>& gr, float& m,
                            float& r) {
    xr.load(x + row * cols, rank, size, cols, vec);
    gr.load(dy + row * cols, rank, size, cols, vec);
    m = mean[row];
    r = rstd[row];
  };
  if (kPrefetch && cluster < rows) load_row(cluster, xs, gs, mu, rs);
  int parity = 0;
  for (int64_t row = cluster; row < rows; row += clusters, parity ^= 1) {  // the same rows for the whole cluster
    if (!kPrefetch) load_row(row, xs, gs, mu, rs);  // v5: a row's loads at its start, waited for by its sums
    float2 s = make_float2(0.0f, 0.0f);  // Σ w·dy·x̂, Σ w·dy over this thread's part of the row
    // backward_row_sums and backward_row_dx written out: through them, v7's cluster kernels (the kPrefetch
    // instantiations) compiled to another schedule, with more registers (commit 1ceb20c), and the timed ones are
    // these; v5's compiled the same.
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
      const uint4 wp = lab::load_words(w, rank + i * size, cols, vec);  // past the end: dy = w = 0, adding nothing
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const float xhat = (xs(i, k) - mu) * rs, d = gs(i, k);
        const float g = lab::word_element<T>(wp, k) * d;
        s.x += g * xhat;
        s.y += g;
        acc[0][i][k] += d * xhat;
        acc[1][i][k] += d;
      }
    }
    lab::cluster_sum_arrive<kVecBackwardThreads>(s, parity);
    // v7: the next row's loads, issued after the arrival, in flight across the cluster barrier, the sums' reads
    // from the other blocks and this row's dx, which v5 spends with nothing in flight.
    lab::RowWords<T, kPacks> x_next, g_next;
    float mu_next = 0.0f, rs_next = 0.0f;
    const bool prefetched = kPrefetch && row + clusters < rows;
    if (prefetched) load_row(row + clusters, x_next, g_next, mu_next, rs_next);
    s = lab::cluster_sum_wait<float2>(parity);
    const float c_xhat = s.x / static_cast<float>(cols), c_mean = s.y / static_cast<float>(cols);
    xs.rewiden();
    gs.rewiden();
    T* dxr = dx + row * cols;
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
      const int packet = rank + i * size;
      const uint4 wp = lab::load_words(w, packet, cols, vec);
      float v[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const float xhat = (xs(i, k) - mu) * rs;
        v[k] = (lab::word_element<T>(wp, k) * gs(i, k) - c_mean - xhat * c_xhat) * rs;
      }
      lab::store_words(dxr, packet, cols, vec, v);
    }
    if (prefetched) {
      xs = x_next;
      gs = g_next;
      mu = mu_next;
      rs = rs_next;
    }
  }
  lab::cluster_done();
  lab::write_register_sums<T, 2, kPacks, kVecBackwardThreads>(acc, partials, cols, block_rank * S, size, cluster,
                                                              clusters);
}

template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecBackwardThreads) layernorm_cluster_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ mean,
    const float* __restrict__ rstd, T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols,
    bool vec, int blocks_per_cluster) {
  cluster_backward_rows<T, kPacks, false>(dy, x, w, mean, rstd, dx, partials, rows, cols, vec, blocks_per_cluster);
}

// The launch of v5's kernel, or v7's (kPrefetch), for rows longer than v4 holds, up to kClusterMaxBackwardPackets,
// on a GPU with clusters; `fallback` for every other row, and where no cluster of the size the row needs fits.
// Defined with v7, below.
template <typename T, bool kPrefetch, typename Fallback>
cudaError_t launch_cluster_rows(const BackwardCall<T>& c, Fallback fallback);

// v5: rows longer than v4 holds, up to kClusterMaxBackwardPackets, on a GPU with clusters; every other row goes to
// v4 (also where no cluster of the size the row needs fits).
template <typename T>
cudaError_t run_cluster_backward(const BackwardCall<T>& c) {
  return launch_cluster_rows<T, false>(c, [&] { return run_block_backward(c); });
}

// v5's forward: rows longer than v4 holds (8192 packets: 32768 fp32, 65536 fp16/bf16), which went down to v1 (three
// reads of the row, strided), spread over a cluster of C blocks of 1024 threads as v4 holds a row in one: the row's
// two sums (mean, then the centered squares) cross the blocks through distributed shared memory, and the row is
// read once. The grid is one wave of resident clusters, each taking rows cluster, cluster + clusters, ... ptxas: no
// spill but at 8 packets a thread in fp16 (8 bytes; fp16 rows past 65536 elements).
constexpr int64_t kClusterMaxForwardPackets = kBlockMaxPackets * lab::kClusterMaxBlocks;

template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecMaxThreads) layernorm_cluster_forward_kernel(
    const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, T* __restrict__ y,
    float* __restrict__ mean, float* __restrict__ rstd, int64_t rows, int cols, bool vec, float eps,
    int blocks_per_cluster) {
  lab::cluster_forward_rows<T, kPacks, kVecMaxThreads>(
      x, rows, cols, vec, blocks_per_cluster, [&](auto& r, int64_t row, int rank, int size, const auto& total) {
        forward_row(r, w, b, y, mean, rstd, row, rank, size, cols, vec, eps, true, total);
      });
}

template <typename T>
cudaError_t run_cluster(const ForwardCall<T>& c) {
  const int64_t packets = c.packets();
  if (packets <= kBlockMaxPackets || packets > kClusterMaxForwardPackets || !lab::has_clusters()) return run_block(c);
  return lab::with_cluster_shape<kVecMaxPacks>(packets, kVecMaxThreads, [&](auto packs, int blocks) {
    return lab::launch_rows_in_clusters(
        layernorm_cluster_forward_kernel<T, decltype(packs)::value>, c.rows, kVecMaxThreads, blocks, c.stream,
        [&] { return run_block(c); }, c.x, c.w, c.b, c.y, c.mean, c.rstd, c.rows, static_cast<int>(c.cols), c.vec,
        kLayerNormEps);
  });
}

// ---- v6 occupancy: v4's backward with two blocks to a multiprocessor. -------------------------------------------
// What limits v4's backward at its short rows (results/nvidia-h100-80gb-hbm3/layernorm-backward-profile.md, M = N =
// 4096): a thread holds four packets of x and of dy and 64 float sums of dweight and dbias, 128 registers, so one
// block of 512 threads fills a multiprocessor's registers. Its loads are in flight only between a row's start and
// its first reduction; while the block reduces, computes and stores, its multiprocessor reads nothing. v6 gives each
// thread fewer packets (more threads per row, as far as 512) and caps it at 64 registers (__launch_bounds__(512,
// 2)), so two blocks share a multiprocessor and, not in step, keep loads in flight while the other one reduces.
// One packet a thread in fp16/bf16 and two in fp32 fit 64 registers without spilling (ptxas; two 16-bit packets
// spill); so v6 holds rows of up to 512 threads' worth, 4096 elements in every dtype. The grid is still one wave of
// resident blocks: twice as many, and twice the partial rows. Longer rows, and rows v3 holds in a warp, go to v5.
template <typename T>
constexpr int kOccupancyMaxPacks = sizeof(T) < 4 ? 1 : 2;
template <typename T>
constexpr int64_t kOccupancyMaxBackwardPackets = int64_t{kVecBackwardThreads} * kOccupancyMaxPacks<T>;

template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecBackwardThreads, 2) layernorm_occupancy_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ mean,
    const float* __restrict__ rstd, T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols,
    bool vec) {
  vec_backward_rows<T, kPacks>(dy, x, w, mean, rstd, dx, partials, rows, cols, vec);
}

// v7's kernel on v6's rows (v7's section says why): v6's, with the next row's loads issued before this row's
// sums (vec_backward_rows, kPrefetch).
template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecBackwardThreads, 2) layernorm_prefetch_block_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ mean,
    const float* __restrict__ rstd, T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols,
    bool vec) {
  vec_backward_rows<T, kPacks, true>(dy, x, w, mean, rstd, dx, partials, rows, cols, vec);
}

// v7's kernel holds a second set of packets: in 64 registers without spilling (ptxas), one packet a thread in every
// dtype (two fp32 packets spill).
constexpr int kPrefetchBlockMaxPacks = 1;

// v6's rows by v6's kernel, or by v7's (kPrefetch: the rows it holds; v6's kernel the others); every other row to
// v5.
template <typename T, bool kPrefetch = false>
cudaError_t run_occupancy_backward(const BackwardCall<T>& c) {
  const int64_t packets = c.packets();
  if (packets <= kVecWarpBackwardPackets || packets > kOccupancyMaxBackwardPackets<T>) return run_cluster_backward(c);
  constexpr int kMaxPacks = kPrefetch ? kPrefetchBlockMaxPacks : kOccupancyMaxPacks<T>;
  if (packets > int64_t{kVecBackwardThreads} * kMaxPacks) return run_occupancy_backward<T, false>(c);  // v7 only
  // S a power of two, at least 64 and the smallest with at most kMaxPacks packets per thread (<= 512).
  const int64_t wanted = lab::pow2_at_least((packets + kMaxPacks - 1) / kMaxPacks);
  const int threads = static_cast<int>(wanted < 64 ? 64 : wanted);
  return lab::with_pow2<1, kMaxPacks>((packets + threads - 1) / threads, [&](auto packs) {
    constexpr int kPacks = decltype(packs)::value;
    if constexpr (kPrefetch)
      return launch_vec_backward<T, kPacks>(c, threads, layernorm_prefetch_block_backward_kernel<T, kPacks>);
    else
      return launch_vec_backward<T, kPacks>(c, threads, layernorm_occupancy_backward_kernel<T, kPacks>);
  });
}

cudaError_t launch_layernorm_occupancy_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                                const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                                float* workspace, int64_t* workspace_floats, int64_t rows,
                                                int64_t cols, cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, mean, rstd, dx, dw, db, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_occupancy_backward(c); });
}

// ---- v7 prefetch: the next row's loads in flight across this row's sums (cluster rows, and v6's). ---------------
// What limits v5 (results/<gpu>/layernorm-backward.md, its rows at N = 32K and 64K, fp16/bf16 well below fp32): a
// cluster takes its rows one after another, and each row's loads are in flight only from the row's start to its
// sums; the cluster barrier, the reads of the other blocks' sums and the row's dx then pass with nothing read. In
// fp16/bf16 a thread holds two packets, half the bytes fp32's four hold, for the same wait: half the bandwidth.
// v7 splits the barrier (lab::cluster_sum_arrive, cluster_sum_wait) and issues the next row's packets, mean and rstd
// between its halves, into a second set of registers, so the next row's bytes come in while this one finishes.
// The same idea as Triton's prefetch step (triton_src/layernorm.py), for rows a cluster holds. What it bought,
// against v5 in the same run (results/nvidia-h100-80gb-hbm3/norm-backward-prefetch/, both norms): the rows at N =
// 32K and 64K, fp16/bf16 most. Clusters of two blocks keep v5's kernel (lab::prefetch_pays says why).
// v6's rows wait the same way within a block: a row's loads at its start, then its two block-wide sums and its dx
// with nothing of that block in flight, where Triton's prefetch step issues the next row's loads first (ncu of
// both at 4K and 8K: results/nvidia-h200/norm-backward-profile.md). So v7 takes v6's rows too, as far as a second
// set of packets fits v6's 64 registers (one packet a thread): vec_backward_rows with kPrefetch loads the next row
// slot's packets, mean and rstd before this row's sums. Rows neither path takes go to v6's kernel: v7 in Triton's
// shape for them (one row a block of 1024 threads, one packet a thread, one block an SM) ran slower than v4's and
// v6's kernels (results/nvidia-h200/norm-backward-wide/README.md).
template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecBackwardThreads) layernorm_prefetch_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ mean,
    const float* __restrict__ rstd, T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols,
    bool vec, int blocks_per_cluster) {
  cluster_backward_rows<T, kPacks, true>(dy, x, w, mean, rstd, dx, partials, rows, cols, vec, blocks_per_cluster);
}

template <typename T, bool kPrefetch, typename Fallback>
cudaError_t launch_cluster_rows(const BackwardCall<T>& c, Fallback fallback) {
  const int64_t packets = c.packets();
  if (packets <= kBlockMaxBackwardPackets || packets > kClusterMaxBackwardPackets<T> || !lab::has_clusters())
    return fallback();
  return lab::with_cluster_shape<kClusterMaxPacks<T>>(packets, kVecBackwardThreads, [&](auto packs, int blocks) {
    constexpr int kPacks = decltype(packs)::value;
    const auto kernel = kPrefetch && lab::prefetch_pays(blocks) ? layernorm_prefetch_backward_kernel<T, kPacks>
                                                                : layernorm_cluster_backward_kernel<T, kPacks>;
    return lab::launch_in_clusters<2>(kernel, c, kVecBackwardThreads, blocks, fallback, c.dy, c.x, c.w, c.mean, c.rstd,
                                      c.dx);
  });
}

template <typename T>
cudaError_t run_prefetch_backward(const BackwardCall<T>& c) {
  return launch_cluster_rows<T, true>(c, [&] { return run_occupancy_backward<T, true>(c); });
}

cudaError_t launch_layernorm_prefetch_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                               const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                               float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                               cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, mean, rstd, dx, dw, db, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_prefetch_backward(c); });
}

// ---- v8 staged: a block's next rows brought into shared memory by the copy engine (Hopper). ------------------
// On the rows one block holds, v4, v6 and v7 keep in flight what their threads' registers hold: on 16-bit rows of
// 4K-16K elements their kernels run a quarter to a half of the multiprocessor's warps (v4: 128 registers a thread,
// one block of 512 threads), and under ncu they stay well short of the DRAM bandwidth, as Triton's kernel does
// (results/nvidia-h200/norm-backward-profile.md). v8 stages those rows in a ring of shared memory (lab::StagedRows):
// one thread issues two bulk copies a row (cp.async.bulk, x's row and dy's), so the rows of the next turns are on
// their way whatever this row holds in registers; the ring (about lab::kStagedRingBytes a multiprocessor) sets the
// bytes in flight. A row's threads read their packets from the slot, and the rest is v4's arithmetic. Each thread
// keeps its own dw and db sums and writes them itself (lab::write_thread_sums): one row a block, nothing to add
// across row slots. Which rows it takes, and why only those: lab::with_staged_shape. Every other row goes to v7. What
// it bought (results/<gpu>/layernorm-backward.md, cuda:staged against cuda:prefetch at N = 8K-16K) is less than the
// gap to the copy. With the loads off the registers, what is left is likely the row's own chain (its sums, two
// block-wide barriers, its dx), one row a block at a time; not profiled.
template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecBackwardThreads) layernorm_staged_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ mean,
    const float* __restrict__ rstd, T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols,
    int stages) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(lab::kStagedSlotAlign) unsigned char ring_memory[];
  constexpr int kVec = lab::Packet<T>::kSize;
  const int rank = threadIdx.x, size = blockDim.x;
  lab::StagedRows<T> ring(ring_memory, stages, cols);
  ring.start(x, dy, rows, cols);
  float acc[2][kPacks][kVec] = {};  // Σ dy·x̂ (dw) and Σ dy (db) of this thread's columns over its rows
  // mean and rstd one row ahead, in registers: loaded at the row's start, they would hold up its sums.
  float mu_next = blockIdx.x < rows ? mean[blockIdx.x] : 0.0f, rs_next = blockIdx.x < rows ? rstd[blockIdx.x] : 0.0f;
  int64_t turn = 0;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x, ++turn) {
    const float mu = mu_next, rs = rs_next;
    if (row + gridDim.x < rows) mu_next = mean[row + gridDim.x], rs_next = rstd[row + gridDim.x];
    lab::RowWords<T, kPacks> xs, gs;
    ring.take(turn, xs, gs, rank, size, cols);
    float2 s = backward_row_sums(xs, gs, w, mu, rs, rank, size, cols, true, acc);  // Σ w·dy·x̂, Σ w·dy
    s = lab::row_sum<kVecBackwardThreads>(s);
    ring.release(turn, row, x, dy, rows, cols);  // every thread has read the slot: it takes a row stages turns on
    backward_row_dx(xs, gs, w, mu, rs, s, dx + row * cols, rank, size, cols, true);
  }
  lab::write_thread_sums<T, 2, kPacks>(acc, partials, cols);
#else
  __trap();  // the copy engine's bulk copies need compute capability 9.0; the launcher never sends such a GPU here
#endif
}

// v8's rows (lab::with_staged_shape), one a block, S threads a row (a power of two up to 512, two to four packets a
// thread); every other row to v7.
template <typename T>
cudaError_t run_staged_backward(const BackwardCall<T>& c) {
  return lab::with_staged_shape<T, kVecBackwardThreads, kVecBackwardMaxPacks>(
      c,
      [&](auto packs, int threads) {
        constexpr int kPacks = decltype(packs)::value;
        return lab::launch_staged<T, 2>(layernorm_staged_backward_kernel<T, kPacks>, c, threads, c.dy, c.x, c.w,
                                        c.mean, c.rstd, c.dx);
      },
      [&] { return run_prefetch_backward(c); });
}

cudaError_t launch_layernorm_staged_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                             const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                             float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                             cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, mean, rstd, dx, dw, db, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_staged_backward(c); });
}

// ---- v9 lean: v8 with fewer instructions a row. -----------------------------------------------------------------
// Under ncu at bf16 4096 x 8192 (results/nvidia-h200/norm-backward-lean/README.md) v8's kernel keeps the SM's issue
// slots about as busy as the DRAM, and its warps wait most for their turn to issue ("not selected"): it runs out of
// instructions a second before it runs out of bandwidth. So this step takes instructions out of each row and
// changes nothing else (the ring, the grid and the arithmetic of the sums are v8's):
//   * the row's sum over the block (lab::block_sum_alternating): one barrier instead of two, and the warps' sums
//     added by shuffles instead of a loop over every warp's sum in shared memory, the block's threads known at
//     compile time;
//   * 1/N once a kernel, where v8 divides by N twice a row (full-precision divisions, with a slow path);
//   * the ring's slot and phase stepped (StagedRows::next), where v8 divides the row's 64-bit turn by the stages;
//   * dx with the row's constants folded once a row (lean_row_dx): a subtraction, a multiplication and two
//     multiply-adds an element.
// How much shorter the row loop is (cuobjdump -sass) and what it bought: results/nvidia-h200/norm-backward-lean/
// README.md (commits 307c137, 943598d). __launch_bounds__ keeps two blocks of 512 a multiprocessor where v8 has
// them. It takes 16-bit rows of 4K-16K elements, 4K included (lab::kLeanShortestPackets), which v8 hands to v7.
template <typename T, int kPacks>
__device__ __forceinline__ void lean_row_dx(lab::RowWords<T, kPacks>& xs, lab::RowWords<T, kPacks>& gs,
                                            const T* __restrict__ w, float mu, float rs, float2 s_over_n,
                                            T* __restrict__ dxr, int rank, int size, int cols) {
  constexpr int kVec = lab::Packet<T>::kSize;
  // dx = (w·dy - Σ(w·dy)/N - x̂·Σ(w·dy·x̂)/N)·rs = w·dy·rs + (x - mean)·a + b
  const float a = -rs * rs * s_over_n.x, b = -rs * s_over_n.y;
  xs.rewiden();
  gs.rewiden();
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int packet = rank + i * size;
    const uint4 wp = lab::load_words(w, packet, cols, true);
    float v[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      v[k] = fmaf(lab::word_element<T>(wp, k) * gs(i, k), rs, fmaf(xs(i, k) - mu, a, b));
    lab::store_words(dxr, packet, cols, true, v);
  }
}

template <typename T, int kPacks, int kThreads>
__global__ void __launch_bounds__(kThreads, lab::lean_min_blocks(kThreads, kPacks)) layernorm_lean_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ mean,
    const float* __restrict__ rstd, T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols,
    int stages) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(lab::kStagedSlotAlign) unsigned char ring_memory[];
  __shared__ float2 warp_sums[2][kThreads / 32];  // alternate rows use alternate sets (block_sum_alternating)
  constexpr int kVec = lab::Packet<T>::kSize;
  const int rank = threadIdx.x;
  const float inv_cols = 1.0f / static_cast<float>(cols);
  lab::StagedRows<T> ring(ring_memory, stages, cols);
  ring.start(x, dy, rows, cols);
  float acc[2][kPacks][kVec] = {};  // Σ dy·x̂ (dw) and Σ dy (db) of this thread's columns over its rows
  float mu_next = blockIdx.x < rows ? mean[blockIdx.x] : 0.0f, rs_next = blockIdx.x < rows ? rstd[blockIdx.x] : 0.0f;
  auto turn = ring.turn_of(0);
  int sums_set = 0;  // which of warp_sums' two sets this row's sum goes through
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x, ring.next(turn), sums_set ^= 1) {
    const float mu = mu_next, rs = rs_next;
    if (row + gridDim.x < rows) mu_next = mean[row + gridDim.x], rs_next = rstd[row + gridDim.x];
    lab::RowWords<T, kPacks> xs, gs;
    ring.take(turn, xs, gs, rank, kThreads, cols);
    float2 s = backward_row_sums(xs, gs, w, mu, rs, rank, kThreads, cols, true, acc);  // Σ w·dy·x̂, Σ w·dy
    s = lab::block_sum_alternating<kThreads>(s, warp_sums[sums_set]);
    ring.release(turn, row, x, dy, rows, cols);  // every thread has read the slot: it takes a row stages turns on
    lean_row_dx(xs, gs, w, mu, rs, make_float2(s.x * inv_cols, s.y * inv_cols), dx + row * cols, rank, kThreads,
                cols);
  }
  lab::write_thread_sums<T, 2, kPacks>(acc, partials, cols);
#else
  __trap();  // as v8's
#endif
}

// v9's rows (lab::kLeanShortestPackets on; lab::with_staged_shape's shapes), every other row to v8.
template <typename T>
cudaError_t run_lean_backward(const BackwardCall<T>& c) {
  return lab::with_staged_shape<T, kVecBackwardThreads, kVecBackwardMaxPacks>(
      c,
      [&](auto packs, int threads) {
        constexpr int kPacks = decltype(packs)::value;
        const auto launch = [&](auto block) {
          return lab::launch_staged<T, 2>(layernorm_lean_backward_kernel<T, kPacks, decltype(block)::value>, c,
                                          threads, c.dy, c.x, c.w, c.mean, c.rstd, c.dx);
        };
        // blocks of 256 threads only for rows of two packets a thread (with_staged_shape's shapes)
        if constexpr (kPacks == 2) return lab::with_pow2<256, kVecBackwardThreads>(threads, launch);
        else return launch(std::integral_constant<int, kVecBackwardThreads>{});
      },
      [&] { return run_staged_backward(c); }, lab::kLeanShortestPackets);
}

cudaError_t launch_layernorm_lean_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                           const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                           float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                           cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, mean, rstd, dx, dw, db, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_lean_backward(c); });
}

// ---- v10 lean cluster: v9's rows across a thread-block cluster (Hopper). -----------------------------------------
// Rows longer than one of v9's blocks holds (16K elements in fp16/bf16, 8K in fp32) went to v5/v7, whose cluster
// rows hold the row in registers, two barriers and a cluster barrier a row, and no bytes in flight beyond the
// registers' (v7: the next row's). v10 gives each block of a cluster of C a contiguous C-th of every row of its
// cluster (lab::with_lean_cluster_packs_shape: two packets a thread where eight parts hold the row, then four) and
// runs v9 on it: the block's parts of the next rows in its ring, one block barrier a row, then the two sums across
// the cluster (lab::PushedClusterSums: each block's sums stored into every block's shared memory, no cluster barrier
// a row), dx of its part. Each cluster writes one partial row per gradient, each block its columns.
template <typename T, int kPacks, int kThreads>
__global__ void __launch_bounds__(kThreads, lab::lean_min_blocks(kThreads, kPacks))
    layernorm_lean_cluster_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ mean,
    const float* __restrict__ rstd, T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols,
    int stages, int blocks_per_cluster) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(lab::kStagedSlotAlign) unsigned char ring_memory[];
  __shared__ float2 warp_sums[2][kThreads / 32];  // alternate rows use alternate sets (block_sum_alternating)
  constexpr int kVec = lab::Packet<T>::kSize;
  const int rank = threadIdx.x;
  [[maybe_unused]] const auto [part, block_rank, offset, cluster, clusters] =
      lab::cluster_part(cols, blocks_per_cluster);  // this block's columns: offset, offset + part
  const float inv_cols = 1.0f / static_cast<float>(cols);
  lab::PushedClusterSums<float2> sums;
  sums.start(blocks_per_cluster);
  lab::StagedRows<T> ring(ring_memory, stages, part);
  ring.start(x + offset, dy + offset, rows, cols, cluster, clusters);
  float acc[2][kPacks][kVec] = {};  // Σ dy·x̂ (dw) and Σ dy (db) of this thread's columns over its cluster's rows
  float mu_next = cluster < rows ? mean[cluster] : 0.0f, rs_next = cluster < rows ? rstd[cluster] : 0.0f;
  auto turn = ring.turn_of(0);
  int sums_set = 0;  // which of warp_sums' two sets this row's sums go through
  for (int64_t row = cluster; row < rows; row += clusters, ring.next(turn), sums_set ^= 1) {
    const float mu = mu_next, rs = rs_next;
    if (row + clusters < rows) mu_next = mean[row + clusters], rs_next = rstd[row + clusters];
    lab::RowWords<T, kPacks> xs, gs;
    ring.take(turn, xs, gs, rank, kThreads, part);
    float2 s = backward_row_sums(xs, gs, w + offset, mu, rs, rank, kThreads, part, true, acc);
    s = lab::block_sum_alternating<kThreads>(s, warp_sums[sums_set]);
    ring.release(turn, row, x + offset, dy + offset, rows, cols, clusters);
    sums.push(s);
    s = sums.wait();  // Σ w·dy·x̂, Σ w·dy over the whole row, the same bits everywhere
    lean_row_dx(xs, gs, w + offset, mu, rs, make_float2(s.x * inv_cols, s.y * inv_cols), dx + row * cols + offset,
                rank, kThreads, part);
  }
  lab::write_thread_sums<T, 2, kPacks>(acc, partials, part, cols, cluster, clusters, offset);
#else
  __trap();  // as v8's
#endif
}

// v10's rows (lab::with_lean_cluster_packs_shape); every other row, and where no such cluster fits, to v9.
template <typename T>
cudaError_t run_lean_cluster_backward(const BackwardCall<T>& c) {
  const auto fallback = [&] { return run_lean_backward(c); };
  return lab::with_lean_cluster_packs_shape(
      c,
      [&](int blocks, auto packs) {
        return lab::launch_staged_clusters<T, 2>(
            layernorm_lean_cluster_backward_kernel<T, decltype(packs)::value, lab::kLeanClusterThreads>, c, blocks,
            fallback, c.dy, c.x, c.w, c.mean, c.rstd, c.dx);
      },
      fallback);
}

cudaError_t launch_layernorm_lean_cluster_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                                   const float* mean, const float* rstd, void* dx, void* dw,
                                                   void* db, float* workspace, int64_t* workspace_floats,
                                                   int64_t rows, int64_t cols, cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, mean, rstd, dx, dw, db, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_lean_cluster_backward(c); });
}

// v11's and v12's y: this thread's packets of a staged row (rank, rank + size, ...; none at or past `cols`), the
// row's mean and rstd applied, then the weight and bias. `w`, `b` and `yr` start at the block's first column.
template <typename T, int kPacks>
__device__ __forceinline__ void store_staged_y(T* __restrict__ yr, const lab::RowWords<T, kPacks>& xs,
                                               const T* __restrict__ w, const T* __restrict__ b, float mu, float rs,
                                               int rank, int size, int cols) {
  constexpr int kVec = lab::Packet<T>::kSize;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int packet = rank + i * size;
    if (packet * kVec >= cols) continue;
    const uint4 wp = lab::load_words(w, packet, cols, true);
    const uint4 bp = lab::load_words(b, packet, cols, true);
    float v[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      v[k] = (xs(i, k) - mu) * rs * lab::word_element<T>(wp, k) + lab::word_element<T>(bp, k);
    lab::store_words(yr, packet, cols, true, v);
  }
}

// ---- v11 staged forward: the forward's long rows as v10 takes the backward's (Hopper). ---------------------------
// v4 holds a forward row of up to 8192 packets in one block and v5 the longer fp32 rows over a cluster, each with
// the row in registers and nothing else in flight: while a block reduces a row, its multiprocessor reads nothing
// for it. v11 takes the rows v10 takes (lab::with_lean_cluster_shape) the way v10 does: each block of a cluster of C
// a contiguous C-th of every row of its cluster, staged in its ring by bulk copies (x alone), the row's two sums
// (mean, then the centered squares: forward_row's arithmetic) over the block (lab::block_sum_alternating) and across
// the cluster (lab::PushedClusterSums), then y of its part; block 0's thread 0 writes the row's mean and rstd. A
// slot is refilled after the row's first block-wide barrier, when every thread holds its packets.
template <typename T, int kPacks, int kThreads>
__global__ void __launch_bounds__(kThreads) layernorm_staged_forward_kernel(
    const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, T* __restrict__ y,
    float* __restrict__ mean, float* __restrict__ rstd, float eps, int64_t rows, int cols, int stages,
    int blocks_per_cluster) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(lab::kStagedSlotAlign) unsigned char ring_memory[];
  __shared__ float warp_sums[2][kThreads / 32];  // alternate sums use alternate sets (block_sum_alternating)
  const int rank = threadIdx.x;
  const auto [part, block_rank, offset, cluster, clusters] =
      lab::cluster_part(cols, blocks_per_cluster);  // this block's columns: offset, offset + part
  const float inv_cols = 1.0f / static_cast<float>(cols);
  lab::PushedClusterSums<float> sums;
  sums.start(blocks_per_cluster);
  lab::StagedRows<T, 1> ring(ring_memory, stages, part);
  ring.start(x + offset, nullptr, rows, cols, cluster, clusters);
  auto turn = ring.turn_of(0);
  int sums_set = 0;
  for (int64_t row = cluster; row < rows; row += clusters, ring.next(turn)) {
    lab::RowWords<T, kPacks> xs;
    ring.take(turn, xs, rank, kThreads, part);
    float s = lab::block_sum_alternating<kThreads>(xs.sum(), warp_sums[sums_set]);  // zeros past the part add 0
    sums_set ^= 1;
    ring.release(turn, row, x + offset, nullptr, rows, cols, clusters);
    sums.push(s);
    const float mu = sums.wait() * inv_cols;
    xs.rewiden();
    s = xs.sum(rank, kThreads, part, true, [mu](float v) {
      const float d = v - mu;
      return d * d;
    });
    s = lab::block_sum_alternating<kThreads>(s, warp_sums[sums_set]);
    sums_set ^= 1;
    sums.push(s);
    const float rs = rsqrtf(sums.wait() * inv_cols + eps);
    xs.rewiden();
    store_staged_y(y + row * cols + offset, xs, w + offset, b + offset, mu, rs, rank, kThreads, part);
    if (block_rank == 0 && rank == 0) {
      mean[row] = mu;
      rstd[row] = rs;
    }
  }
#else
  __trap();  // as v8's
#endif
}

// v11's rows (lab::with_lean_cluster_shape from kStagedForwardShortestPackets); every other row, and where no such
// cluster fits, to v5.
template <typename T>
cudaError_t run_staged_forward(const ForwardCall<T>& c) {
  const auto fallback = [&] { return run_cluster(c); };
  return lab::with_lean_cluster_shape(
      c,
      [&](int blocks) {
        return lab::launch_staged_forward_clusters<T>(
            layernorm_staged_forward_kernel<T, lab::kLeanClusterPacks, lab::kLeanClusterThreads>, c, blocks,
            fallback, c.x, c.w, c.b, c.y, c.mean, c.rstd, kLayerNormEps);
      },
      fallback, lab::kStagedForwardShortestPackets);
}

cudaError_t launch_layernorm_staged_forward(lab::DType dtype, const void* x, const void* w, const void* b, void* y,
                                            float* mean, float* rstd, int64_t rows, int64_t cols,
                                            cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, b, y, mean, rstd, rows, cols, stream,
                          [](const auto& c) { return run_staged_forward(c); });
}

// ---- v12 ring: the forward's 16-bit rows of 4K-8K elements through v8's ring (Hopper). ----------------------------
// v4 gives each of these rows a block that loads it, reduces it, writes y and exits (lab_norm.cuh's v12 section
// says what that costs). Here one wave of resident blocks of packets / 4 threads, four packets a thread as v11's,
// takes rows blockIdx.x, + gridDim.x, ... from a ring of rows staged by bulk copies (lab::for_each_ring_row): v11's
// arithmetic without the cluster. A slot is refilled after the row's first block-wide sum, when every thread holds
// its packets.
template <typename T, int kThreads>
__global__ void __launch_bounds__(kThreads) layernorm_ring_kernel(const T* __restrict__ x, const T* __restrict__ w,
                                                                  const T* __restrict__ b, T* __restrict__ y,
                                                                  float* __restrict__ mean, float* __restrict__ rstd,
                                                                  float eps, int64_t rows, int cols, int stages) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kPacks = lab::kRingForwardPacks;
  extern __shared__ __align__(lab::kStagedSlotAlign) unsigned char ring_memory[];
  __shared__ float warp_sums[2][kThreads / 32];  // alternate sums use alternate sets (block_sum_alternating)
  const int rank = threadIdx.x;
  const float inv_cols = 1.0f / static_cast<float>(cols);
  lab::for_each_ring_row<T, kThreads, kPacks>(ring_memory, x, rows, cols, stages, [&](int64_t row, auto& xs,
                                                                                      auto release) {
    const float mu = lab::block_sum_alternating<kThreads>(xs.sum(), warp_sums[0]) * inv_cols;
    release();
    xs.rewiden();
    const float s = xs.sum(rank, kThreads, cols, true, [mu](float v) {
      const float d = v - mu;
      return d * d;
    });
    const float rs = rsqrtf(lab::block_sum_alternating<kThreads>(s, warp_sums[1]) * inv_cols + eps);
    xs.rewiden();
    store_staged_y(y + row * cols, xs, w, b, mu, rs, rank, kThreads, cols);
    if (rank == 0) {
      mean[row] = mu;
      rstd[row] = rs;
    }
  });
#else
  __trap();  // as v8's
#endif
}

// v12's rows (lab::with_ring_forward_shape); every other row to v11.
template <typename T>
cudaError_t run_ring(const ForwardCall<T>& c) {
  return lab::with_ring_forward_shape<T>(
      c,
      [&](auto threads) {
        constexpr int kThreads = decltype(threads)::value;
        return lab::launch_ring_forward<T>(layernorm_ring_kernel<T, kThreads>, kThreads, c, c.x, c.w, c.b, c.y,
                                           c.mean, c.rstd, kLayerNormEps);
      },
      [&] { return run_staged_forward(c); });
}

cudaError_t launch_layernorm_ring(lab::DType dtype, const void* x, const void* w, const void* b, void* y, float* mean,
                                  float* rstd, int64_t rows, int64_t cols, cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, b, y, mean, rstd, rows, cols, stream,
                          [](const auto& c) { return run_ring(c); });
}

cudaError_t launch_layernorm_vec(lab::DType dtype, const void* x, const void* w, const void* b, void* y, float* mean,
                                 float* rstd, int64_t rows, int64_t cols, cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, b, y, mean, rstd, rows, cols, stream, [](const auto& c) { return run_vec(c); });
}

cudaError_t launch_layernorm_vec_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                          const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                          float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                          cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, mean, rstd, dx, dw, db, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_vec_backward(c); });
}

cudaError_t launch_layernorm_block(lab::DType dtype, const void* x, const void* w, const void* b, void* y, float* mean,
                                   float* rstd, int64_t rows, int64_t cols, cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, b, y, mean, rstd, rows, cols, stream,
                          [](const auto& c) { return run_block(c); });
}

cudaError_t launch_layernorm_block_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                            const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                            float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                            cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, mean, rstd, dx, dw, db, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_block_backward(c); });
}

cudaError_t launch_layernorm_cluster(lab::DType dtype, const void* x, const void* w, const void* b, void* y,
                                     float* mean, float* rstd, int64_t rows, int64_t cols, cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, b, y, mean, rstd, rows, cols, stream,
                          [](const auto& c) { return run_cluster(c); });
}

cudaError_t launch_layernorm_cluster_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                              const float* mean, const float* rstd, void* dx, void* dw, void* db,
                                              float* workspace, int64_t* workspace_floats, int64_t rows, int64_t cols,
                                              cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, mean, rstd, dx, dw, db, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_cluster_backward(c); });
}

#else  // host half: the torch binding

#include <tuple>

#include "lab_torch.h"

// x (M, N), and each vector of N parameters: CUDA, contiguous, one dtype, one device.
static lab::DType check_layernorm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  lab::check_cuda_input(x, "layernorm", "x");
  lab::check_cuda_input(w, "layernorm", "weight");
  lab::check_cuda_input(b, "layernorm", "bias");
  LAB_CHECK(x.dim() == 2, "layernorm: x has ", x.dim(), " dimensions (sizes ", x.sizes(),
            "); this kernel takes a 2-D (M, N) tensor and normalizes each row");
  const std::pair<const at::Tensor*, const char*> params[] = {{&w, "weight"}, {&b, "bias"}};
  for (const auto& [p, name] : params) {
    LAB_CHECK(p->dim() == 1 && p->size(0) == x.size(1), "layernorm: ", name, " must have N = ", x.size(1),
              " elements, one per column of x; got sizes ", p->sizes());
    LAB_CHECK_TYPE(p->scalar_type() == x.scalar_type(), "layernorm: x has dtype ", x.scalar_type(), " but ", name,
                   " has dtype ", p->scalar_type(), "; pass them in one dtype");
    LAB_CHECK(p->device() == x.device(), "layernorm: x is on ", x.device(), " but ", name, " is on ", p->device());
  }
  return lab::float_dtype(x, "layernorm", "x");
}

// The backward's own inputs besides x and the parameters: dy like x, and the forward's mean and rstd.
static void check_layernorm_backward(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& mean,
                                     const at::Tensor& rstd) {
  lab::check_cuda_input(dy, "layernorm", "dy");
  LAB_CHECK(dy.sizes() == x.sizes(), "layernorm: dy has sizes ", dy.sizes(), " but x has ", x.sizes(),
            "; the output's gradient has the output's shape");
  LAB_CHECK_TYPE(dy.scalar_type() == x.scalar_type(), "layernorm: dy has dtype ", dy.scalar_type(), " but x has ",
                 x.scalar_type(), "; pass them in one dtype");
  LAB_CHECK(dy.device() == x.device(), "layernorm: x is on ", x.device(), " but dy is on ", dy.device());
  const std::pair<const at::Tensor*, const char*> saved[] = {{&mean, "mean"}, {&rstd, "rstd"}};
  for (const auto& [s, name] : saved) {
    lab::check_cuda_input(*s, "layernorm", name);
    LAB_CHECK_TYPE(s->scalar_type() == at::kFloat, "layernorm: ", name, " has dtype ", s->scalar_type(),
                   "; pass the forward's, float32");
    LAB_CHECK(s->dim() == 1 && s->size(0) == x.size(0), "layernorm: ", name, " must be the forward's, one per row (",
              x.size(0), "); got sizes ", s->sizes());
    LAB_CHECK(s->device() == x.device(), "layernorm: x is on ", x.device(), " but ", name, " is on ", s->device());
  }
}

using LayerNormLaunch = cudaError_t (*)(lab::DType, const void*, const void*, const void*, void*, float*, float*,
                                        int64_t, int64_t, cudaStream_t);
using LayerNormBackwardLaunch = cudaError_t (*)(lab::DType, const void*, const void*, const void*, const float*,
                                                const float*, void*, void*, void*, float*, int64_t*, int64_t, int64_t,
                                                cudaStream_t);

static std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_forward(const at::Tensor& x, const at::Tensor& w,
                                                                        const at::Tensor& b, const char* impl,
                                                                        LayerNormLaunch launch) {
  const lab::DType dtype = check_layernorm(x, w, b);
  const int64_t rows = x.size(0), cols = x.size(1);
  at::Tensor y = at::empty_like(x);
  at::Tensor mean = at::empty({rows}, x.options().dtype(at::kFloat));
  at::Tensor rstd = at::empty({rows}, x.options().dtype(at::kFloat));
  if (x.numel() == 0) return {y, mean, rstd};  // a zero-block grid is a launch error
  c10::cuda::CUDAGuard guard(x.device());
  lab::check_launch(launch(dtype, x.const_data_ptr(), w.const_data_ptr(), b.const_data_ptr(), y.mutable_data_ptr(),
                           mean.mutable_data_ptr<float>(), rstd.mutable_data_ptr<float>(), rows, cols,
                           lab::current_stream()),
                    "layernorm", impl);
  return {y, mean, rstd};
}

static std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_backward(
    const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& mean,
    const at::Tensor& rstd, const char* impl, LayerNormBackwardLaunch launch) {
  const lab::DType dtype = check_layernorm(x, w, b);
  check_layernorm_backward(dy, x, mean, rstd);
  const int64_t rows = x.size(0), cols = x.size(1);
  at::Tensor dx = at::empty_like(x), dw = at::empty_like(w), db = at::empty_like(b);
  if (cols == 0) return {dx, dw, db};
  if (rows == 0) return {dx, dw.zero_(), db.zero_()};  // a sum over no rows
  c10::cuda::CUDAGuard guard(x.device());
  const auto call = [&](float* workspace, int64_t* floats) {
    return launch(dtype, dy.const_data_ptr(), x.const_data_ptr(), w.const_data_ptr(), mean.const_data_ptr<float>(),
                  rstd.const_data_ptr<float>(), dx.mutable_data_ptr(), dw.mutable_data_ptr(), db.mutable_data_ptr(),
                  workspace, floats, rows, cols, lab::current_stream());
  };
  int64_t floats = 0;
  lab::check_launch(call(nullptr, &floats), "layernorm", impl);  // the workspace's size; launches nothing
  // Fresh on every call, on x's device and (through the caching allocator) stream; the kernels write what they read.
  at::Tensor workspace = at::empty({floats > 0 ? floats : 1}, x.options().dtype(at::kFloat));
  lab::check_launch(call(workspace.mutable_data_ptr<float>(), &floats), "layernorm", impl);
  return {dx, dw, db};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_naive(const at::Tensor& x, const at::Tensor& w,
                                                              const at::Tensor& b) {
  return layernorm_forward(x, w, b, "naive", launch_layernorm_naive);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_naive_backward(const at::Tensor& dy, const at::Tensor& x,
                                                                       const at::Tensor& w, const at::Tensor& b,
                                                                       const at::Tensor& mean, const at::Tensor& rstd) {
  return layernorm_backward(dy, x, w, b, mean, rstd, "naive_backward", launch_layernorm_naive_backward);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_warp(const at::Tensor& x, const at::Tensor& w,
                                                              const at::Tensor& b) {
  return layernorm_forward(x, w, b, "warp", launch_layernorm_warp);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_warp_backward(const at::Tensor& dy, const at::Tensor& x,
                                                                       const at::Tensor& w, const at::Tensor& b,
                                                                       const at::Tensor& mean, const at::Tensor& rstd) {
  return layernorm_backward(dy, x, w, b, mean, rstd, "warp_backward", launch_layernorm_warp_backward);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_vec(const at::Tensor& x, const at::Tensor& w,
                                                              const at::Tensor& b) {
  return layernorm_forward(x, w, b, "vec", launch_layernorm_vec);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_vec_backward(const at::Tensor& dy, const at::Tensor& x,
                                                                       const at::Tensor& w, const at::Tensor& b,
                                                                       const at::Tensor& mean, const at::Tensor& rstd) {
  return layernorm_backward(dy, x, w, b, mean, rstd, "vec_backward", launch_layernorm_vec_backward);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_block(const at::Tensor& x, const at::Tensor& w,
                                                              const at::Tensor& b) {
  return layernorm_forward(x, w, b, "block", launch_layernorm_block);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_block_backward(const at::Tensor& dy, const at::Tensor& x,
                                                                       const at::Tensor& w, const at::Tensor& b,
                                                                       const at::Tensor& mean, const at::Tensor& rstd) {
  return layernorm_backward(dy, x, w, b, mean, rstd, "block_backward", launch_layernorm_block_backward);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_cluster(const at::Tensor& x, const at::Tensor& w,
                                                                const at::Tensor& b) {
  return layernorm_forward(x, w, b, "cluster", launch_layernorm_cluster);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_cluster_backward(
    const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& mean,
    const at::Tensor& rstd) {
  return layernorm_backward(dy, x, w, b, mean, rstd, "cluster_backward", launch_layernorm_cluster_backward);
}

// v6's forward is v5's: only its backward adds a path.
std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_occupancy(const at::Tensor& x, const at::Tensor& w,
                                                                  const at::Tensor& b) {
  return layernorm_forward(x, w, b, "occupancy", launch_layernorm_cluster);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_occupancy_backward(
    const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& mean,
    const at::Tensor& rstd) {
  return layernorm_backward(dy, x, w, b, mean, rstd, "occupancy_backward", launch_layernorm_occupancy_backward);
}

// v7's forward is v5's: only its backward adds a path.
std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_prefetch(const at::Tensor& x, const at::Tensor& w,
                                                                 const at::Tensor& b) {
  return layernorm_forward(x, w, b, "prefetch", launch_layernorm_cluster);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_prefetch_backward(
    const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& mean,
    const at::Tensor& rstd) {
  return layernorm_backward(dy, x, w, b, mean, rstd, "prefetch_backward", launch_layernorm_prefetch_backward);
}

// v8's forward is v5's: only its backward adds a path.
std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_staged(const at::Tensor& x, const at::Tensor& w,
                                                               const at::Tensor& b) {
  return layernorm_forward(x, w, b, "staged", launch_layernorm_cluster);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_staged_backward(
    const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& mean,
    const at::Tensor& rstd) {
  return layernorm_backward(dy, x, w, b, mean, rstd, "staged_backward", launch_layernorm_staged_backward);
}

// v9's forward is v5's: only its backward adds a path.
std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_lean(const at::Tensor& x, const at::Tensor& w,
                                                             const at::Tensor& b) {
  return layernorm_forward(x, w, b, "lean", launch_layernorm_cluster);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_lean_backward(
    const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& mean,
    const at::Tensor& rstd) {
  return layernorm_backward(dy, x, w, b, mean, rstd, "lean_backward", launch_layernorm_lean_backward);
}

// v10's forward is v5's: only its backward adds a path.
std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_lean_cluster(const at::Tensor& x, const at::Tensor& w,
                                                                     const at::Tensor& b) {
  return layernorm_forward(x, w, b, "lean_cluster", launch_layernorm_cluster);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_lean_cluster_backward(
    const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& mean,
    const at::Tensor& rstd) {
  return layernorm_backward(dy, x, w, b, mean, rstd, "lean_cluster_backward",
                            launch_layernorm_lean_cluster_backward);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_staged_forward(const at::Tensor& x, const at::Tensor& w,
                                                                       const at::Tensor& b) {
  return layernorm_forward(x, w, b, "staged_forward", launch_layernorm_staged_forward);
}

// v11's backward is v10's: only its forward adds a path.
std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_staged_forward_backward(
    const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& mean,
    const at::Tensor& rstd) {
  return layernorm_backward(dy, x, w, b, mean, rstd, "staged_forward_backward",
                            launch_layernorm_lean_cluster_backward);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_ring(const at::Tensor& x, const at::Tensor& w,
                                                             const at::Tensor& b) {
  return layernorm_forward(x, w, b, "ring", launch_layernorm_ring);
}

// v12's backward is v10's: only its forward adds a path.
std::tuple<at::Tensor, at::Tensor, at::Tensor> layernorm_ring_backward(
    const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& mean,
    const at::Tensor& rstd) {
  return layernorm_backward(dy, x, w, b, mean, rstd, "ring_backward", launch_layernorm_lean_cluster_backward);
}

TORCH_LIBRARY(lab_layernorm, m) {
  m.def("naive(Tensor x, Tensor weight, Tensor bias) -> (Tensor, Tensor, Tensor)");
  m.def("naive_backward(Tensor dy, Tensor x, Tensor weight, Tensor bias, Tensor mean, Tensor rstd) -> "
        "(Tensor, Tensor, Tensor)");
  m.def("warp(Tensor x, Tensor weight, Tensor bias) -> (Tensor, Tensor, Tensor)");
  m.def("warp_backward(Tensor dy, Tensor x, Tensor weight, Tensor bias, Tensor mean, Tensor rstd) -> "
        "(Tensor, Tensor, Tensor)");
  m.def("vec(Tensor x, Tensor weight, Tensor bias) -> (Tensor, Tensor, Tensor)");
  m.def("vec_backward(Tensor dy, Tensor x, Tensor weight, Tensor bias, Tensor mean, Tensor rstd) -> "
        "(Tensor, Tensor, Tensor)");
  m.def("block(Tensor x, Tensor weight, Tensor bias) -> (Tensor, Tensor, Tensor)");
  m.def("block_backward(Tensor dy, Tensor x, Tensor weight, Tensor bias, Tensor mean, Tensor rstd) -> "
        "(Tensor, Tensor, Tensor)");
  m.def("cluster(Tensor x, Tensor weight, Tensor bias) -> (Tensor, Tensor, Tensor)");
  m.def("occupancy(Tensor x, Tensor weight, Tensor bias) -> (Tensor, Tensor, Tensor)");
  m.def("cluster_backward(Tensor dy, Tensor x, Tensor weight, Tensor bias, Tensor mean, Tensor rstd) -> "
        "(Tensor, Tensor, Tensor)");
  m.def("occupancy_backward(Tensor dy, Tensor x, Tensor weight, Tensor bias, Tensor mean, Tensor rstd) -> "
        "(Tensor, Tensor, Tensor)");
  m.def("prefetch(Tensor x, Tensor weight, Tensor bias) -> (Tensor, Tensor, Tensor)");
  m.def("prefetch_backward(Tensor dy, Tensor x, Tensor weight, Tensor bias, Tensor mean, Tensor rstd) -> "
        "(Tensor, Tensor, Tensor)");
  m.def("staged(Tensor x, Tensor weight, Tensor bias) -> (Tensor, Tensor, Tensor)");
  m.def("staged_backward(Tensor dy, Tensor x, Tensor weight, Tensor bias, Tensor mean, Tensor rstd) -> "
        "(Tensor, Tensor, Tensor)");
  m.def("lean(Tensor x, Tensor weight, Tensor bias) -> (Tensor, Tensor, Tensor)");
  m.def("lean_backward(Tensor dy, Tensor x, Tensor weight, Tensor bias, Tensor mean, Tensor rstd) -> "
        "(Tensor, Tensor, Tensor)");
  m.def("lean_cluster(Tensor x, Tensor weight, Tensor bias) -> (Tensor, Tensor, Tensor)");
  m.def("lean_cluster_backward(Tensor dy, Tensor x, Tensor weight, Tensor bias, Tensor mean, Tensor rstd) -> "
        "(Tensor, Tensor, Tensor)");
  m.def("staged_forward(Tensor x, Tensor weight, Tensor bias) -> (Tensor, Tensor, Tensor)");
  m.def("staged_forward_backward(Tensor dy, Tensor x, Tensor weight, Tensor bias, Tensor mean, Tensor rstd) -> "
        "(Tensor, Tensor, Tensor)");
  m.def("ring(Tensor x, Tensor weight, Tensor bias) -> (Tensor, Tensor, Tensor)");
  m.def("ring_backward(Tensor dy, Tensor x, Tensor weight, Tensor bias, Tensor mean, Tensor rstd) -> "
        "(Tensor, Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(lab_layernorm, CUDA, m) {
  m.impl("naive", &layernorm_naive);
  m.impl("naive_backward", &layernorm_naive_backward);
  m.impl("warp", &layernorm_warp);
  m.impl("warp_backward", &layernorm_warp_backward);
  m.impl("vec", &layernorm_vec);
  m.impl("vec_backward", &layernorm_vec_backward);
  m.impl("block", &layernorm_block);
  m.impl("block_backward", &layernorm_block_backward);
  m.impl("cluster", &layernorm_cluster);
  m.impl("cluster_backward", &layernorm_cluster_backward);
  m.impl("occupancy", &layernorm_occupancy);
  m.impl("occupancy_backward", &layernorm_occupancy_backward);
  m.impl("prefetch", &layernorm_prefetch);
  m.impl("prefetch_backward", &layernorm_prefetch_backward);
  m.impl("staged", &layernorm_staged);
  m.impl("staged_backward", &layernorm_staged_backward);
  m.impl("lean", &layernorm_lean);
  m.impl("lean_backward", &layernorm_lean_backward);
  m.impl("lean_cluster", &layernorm_lean_cluster);
  m.impl("lean_cluster_backward", &layernorm_lean_cluster_backward);
  m.impl("staged_forward", &layernorm_staged_forward);
  m.impl("staged_forward_backward", &layernorm_staged_forward_backward);
  m.impl("ring", &layernorm_ring);
  m.impl("ring_backward", &layernorm_ring_backward);
}

#endif
