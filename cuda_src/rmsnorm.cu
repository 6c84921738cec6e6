// RMSNorm over the last dimension of a 2-D (M, N) tensor, with weight, forward and backward:
//   y = x · rstd · w,   rstd = 1 / sqrt(mean(x²) + eps)
// Backward: dx = rstd · (w·dy - x̂·mean(w·dy·x̂)),  dw = Σ_rows dy·x̂  (x̂ = x·rstd).
//
// cuda_src/layernorm.cu without the mean and the bias: one statistic per row and one gradient reduced across rows.
// Memory-bound both ways (spec: specs/rmsnorm.py). Triton side: triton_src/rmsnorm.py.
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/rmsnorm.md, -backward.md, -fwd-bwd.md):
//   v1 naive    one block per row, shared-memory block reductions, the row read twice (Σx², output); backward:
//               one block per row for dx, dw added into an fp32 buffer with atomicAdd
//   v2 warp     + rows of up to 1024 elements: one warp per row, the row held in registers (read once), shuffle
//               reductions; backward: each warp sums dw in shared memory, each block writes a partial row to a
//               workspace and a second kernel adds the partial rows per column (no atomics)
//   v3 vec      + 16-byte packets held as loaded (two 16-bit elements per register), rows of up to 256 packets
//               forward, 128 backward (1024 fp32, 2048 fp16/bf16 forward); backward: dw summed in registers (a
//               thread holds the same columns in every row), the grid one wave of resident blocks
//   v4 block    + longer rows: a row spread over up to 1024 threads (forward, 8192 packets: 32768 fp32, 65536
//               fp16/bf16) or 512 (backward, 2048 packets), reductions across warps through shared memory
//   v5 cluster  + rows longer than a block holds on Hopper: a row spread over a cluster of up to 8 blocks, its sum
//               added across them through distributed shared memory (backward rows of up to 65536 elements;
//               forward rows past v4's, up to 8 times as long)
//   v6 occupancy  + v4's backward rows of up to 1024 packets (8192 fp16/bf16, 4096 fp32) with at most two
//               packets a thread, so that it fits in 64 registers and two blocks share a multiprocessor: one block's
//               loads in flight while the other reduces (the forward is v5's)
//   v7 prefetch  + the next row's packets loaded while this row's sum is reduced and its dx written: v5's cluster
//               rows (loads in flight across the cluster barrier, in clusters of more than two blocks) and v6's rows
//               of one packet a thread in fp16/bf16, two in fp32 (the forward is v5's)
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
//               cluster a contiguous part of every row in its ring (x alone), the sum pushed across the cluster
//               (the backward is v10's)
//   v12 ring    + fp16/bf16 rows of 4K-8K elements (16-byte aligned, Hopper) in one wave of resident blocks, each
//               with v8's ring of rows (x alone) filled by bulk copies several rows ahead, so that a block's loads
//               go on while it reduces a row (the backward is v10's)
//
// The forward saves rstd (fp32, M) for the backward. Each step adds a path for the rows it is good at and hands
// every other shape to the step before (its launcher's first line), so every row runs every shape: rows longer than
// v4 holds (v5 off Hopper, or past a cluster) go down to v1, whose strided loops take any N. What each step changes
// is said at length in cuda_src/layernorm.cu, whose ladder this one follows step for step.
#include "lab.h"

constexpr float kRmsNormEps = 1e-6f;  // the spec's (specs/rmsnorm.py)

// One forward launcher per step: y and rstd for a row-major (rows, cols) x and a w of cols, on `stream`.
cudaError_t launch_rmsnorm_naive(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                                 int64_t cols, cudaStream_t stream);
cudaError_t launch_rmsnorm_warp(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                                int64_t cols, cudaStream_t stream);
cudaError_t launch_rmsnorm_vec(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                               int64_t cols, cudaStream_t stream);
cudaError_t launch_rmsnorm_block(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                                 int64_t cols, cudaStream_t stream);
cudaError_t launch_rmsnorm_cluster(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                                   int64_t cols, cudaStream_t stream);
cudaError_t launch_rmsnorm_staged_forward(lab::DType dtype, const void* x, const void* w, void* y, float* rstd,
                                          int64_t rows, int64_t cols, cudaStream_t stream);
cudaError_t launch_rmsnorm_ring(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                                int64_t cols, cudaStream_t stream);
// One backward launcher per step: dx and dw. The fp32 sums over rows go through `workspace`, whose size the step's
// path decides: called with workspace == nullptr a launcher launches nothing and sets *workspace_floats to the
// floats it needs; called again with that many floats at `workspace`, it runs. Every float it reads there it has
// written (or zeroed) in the same call.
cudaError_t launch_rmsnorm_naive_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                          const float* rstd, void* dx, void* dw, float* workspace,
                                          int64_t* workspace_floats, int64_t rows, int64_t cols, cudaStream_t stream);
cudaError_t launch_rmsnorm_warp_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                         const float* rstd, void* dx, void* dw, float* workspace,
                                         int64_t* workspace_floats, int64_t rows, int64_t cols, cudaStream_t stream);
cudaError_t launch_rmsnorm_vec_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                        const float* rstd, void* dx, void* dw, float* workspace,
                                        int64_t* workspace_floats, int64_t rows, int64_t cols, cudaStream_t stream);
cudaError_t launch_rmsnorm_block_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                          const float* rstd, void* dx, void* dw, float* workspace,
                                          int64_t* workspace_floats, int64_t rows, int64_t cols, cudaStream_t stream);
cudaError_t launch_rmsnorm_cluster_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                            const float* rstd, void* dx, void* dw, float* workspace,
                                            int64_t* workspace_floats, int64_t rows, int64_t cols,
                                            cudaStream_t stream);
cudaError_t launch_rmsnorm_occupancy_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                              const float* rstd, void* dx, void* dw, float* workspace,
                                              int64_t* workspace_floats, int64_t rows, int64_t cols,
                                              cudaStream_t stream);
cudaError_t launch_rmsnorm_prefetch_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                             const float* rstd, void* dx, void* dw, float* workspace,
                                             int64_t* workspace_floats, int64_t rows, int64_t cols,
                                             cudaStream_t stream);
cudaError_t launch_rmsnorm_staged_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                           const float* rstd, void* dx, void* dw, float* workspace,
                                           int64_t* workspace_floats, int64_t rows, int64_t cols,
                                           cudaStream_t stream);
cudaError_t launch_rmsnorm_lean_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                         const float* rstd, void* dx, void* dw, float* workspace,
                                         int64_t* workspace_floats, int64_t rows, int64_t cols,
                                         cudaStream_t stream);
cudaError_t launch_rmsnorm_lean_cluster_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                                 const float* rstd, void* dx, void* dw, float* workspace,
                                                 int64_t* workspace_floats, int64_t rows, int64_t cols,
                                                 cudaStream_t stream);

#ifdef __CUDACC__
#include "lab_norm.cuh"

// One call, typed. `vec`: every row of every (M, N) tensor and the weight start 16-byte aligned (all base pointers
// are, and N is a multiple of the packet), so v3 and v4 may move whole packets.
template <typename T>
struct ForwardCall {
  const T *x, *w;
  T* y;
  float* rstd;
  int64_t rows, cols;
  bool vec;
  cudaStream_t stream;

  int64_t packets() const { return (cols + lab::Packet<T>::kSize - 1) / lab::Packet<T>::kSize; }  // per row
};

template <typename T>
struct BackwardCall {
  const T *dy, *x, *w;
  const float* rstd;
  T *dx, *dw;
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
  lab::GradOutputs<T, 1> grads() const { return {{dw}}; }
};

template <typename Step>
cudaError_t dispatch_forward(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                             int64_t cols, cudaStream_t stream, Step step) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    const bool vec = lab::is_aligned16(x) && lab::is_aligned16(w) && lab::is_aligned16(y) &&
                     cols % lab::Packet<T>::kSize == 0;
    return step(ForwardCall<T>{static_cast<const T*>(x), static_cast<const T*>(w), static_cast<T*>(y), rstd, rows,
                               cols, vec, stream});
  });
}

template <typename Step>
cudaError_t dispatch_backward(lab::DType dtype, const void* dy, const void* x, const void* w, const float* rstd,
                              void* dx, void* dw, float* workspace, int64_t* workspace_floats, int64_t rows,
                              int64_t cols, cudaStream_t stream, Step step) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    const bool vec = lab::is_aligned16(dy) && lab::is_aligned16(x) && lab::is_aligned16(w) &&
                     lab::is_aligned16(dx) && cols % lab::Packet<T>::kSize == 0;
    return step(BackwardCall<T>{static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<const T*>(w), rstd,
                                static_cast<T*>(dx), static_cast<T*>(dw), workspace, workspace_floats, rows, cols,
                                vec, stream});
  });
}

// ---- v1 naive: a block per row, each thread striding over the row. ------------------------------------------
constexpr int kNaiveThreads = 256;

template <typename T>
__global__ void rmsnorm_naive_kernel(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                                     float* __restrict__ rstd, int64_t rows, int64_t cols, float eps) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    float sq = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float v = lab::to_float(xr[c]);
      sq += v * v;
    }
    const float rs = rsqrtf(lab::block_reduce_sum(sq) / static_cast<float>(cols) + eps);
    T* yr = y + row * cols;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      yr[c] = lab::from_float<T>(lab::to_float(xr[c]) * rs * lab::to_float(w[c]));
    if (threadIdx.x == 0) rstd[row] = rs;
  }
}

// dx needs one sum over its row; dw a sum over rows, which every block adds into with atomics.
template <typename T>
__global__ void rmsnorm_naive_backward_kernel(const T* __restrict__ dy, const T* __restrict__ x,
                                              const T* __restrict__ w, const float* __restrict__ rstd,
                                              T* __restrict__ dx, float* __restrict__ dw_sum, int64_t rows,
                                              int64_t cols) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    const T* dyr = dy + row * cols;
    const float rs = rstd[row];
    float wdy_xhat = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      wdy_xhat += lab::to_float(w[c]) * lab::to_float(dyr[c]) * lab::to_float(xr[c]) * rs;
    const float c_xhat = lab::block_reduce_sum(wdy_xhat) / static_cast<float>(cols);
    T* dxr = dx + row * cols;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float xhat = lab::to_float(xr[c]) * rs;
      const float g = lab::to_float(dyr[c]);
      dxr[c] = lab::from_float<T>((lab::to_float(w[c]) * g - xhat * c_xhat) * rs);
      atomicAdd(dw_sum + c, g * xhat);
    }
  }
}

template <typename T>
cudaError_t run_naive(const ForwardCall<T>& c) {
  rmsnorm_naive_kernel<T><<<lab::row_grid(c.rows), kNaiveThreads, 0, c.stream>>>(c.x, c.w, c.y, c.rstd, c.rows,
                                                                               c.cols, kRmsNormEps);
  return cudaGetLastError();
}

// workspace: the fp32 sums of dw (cols), zeroed here before the kernel adds into them.
template <typename T>
cudaError_t run_naive_backward(const BackwardCall<T>& c) {
  if (!c.workspace) return c.needs(c.cols);
  cudaError_t err = cudaMemsetAsync(c.workspace, 0, c.cols * sizeof(float), c.stream);
  if (err != cudaSuccess) return err;
  rmsnorm_naive_backward_kernel<T><<<lab::row_grid(c.rows), kNaiveThreads, 0, c.stream>>>(
      c.dy, c.x, c.w, c.rstd, c.dx, c.workspace, c.rows, c.cols);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  return lab::sum_partials(c.workspace, 1, c.cols, c.grads(), c.stream);
}

cudaError_t launch_rmsnorm_naive(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                                 int64_t cols, cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, y, rstd, rows, cols, stream, [](const auto& c) { return run_naive(c); });
}

cudaError_t launch_rmsnorm_naive_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                          const float* rstd, void* dx, void* dw, float* workspace,
                                          int64_t* workspace_floats, int64_t rows, int64_t cols, cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, rstd, dx, dw, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_naive_backward(c); });
}

// ---- v2 warp: one warp per row for rows of up to 32 · 32 elements, the row in registers. ----------------------
// As layernorm.cu's v2: the row read once into registers, shuffle reductions, four warps (rows) per block;
// backward: a dw row of fp32 sums per warp in shared memory, one partial row per block, one wave of blocks.
constexpr int kWarpRowsPerBlock = 4;
constexpr int kWarpMaxItems = 32;  // elements per lane: rows of up to 1024 elements
constexpr int64_t kWarpMaxCols = 32 * kWarpMaxItems;

template <typename T, int kItems>
__global__ void __launch_bounds__(32 * kWarpRowsPerBlock) rmsnorm_warp_kernel(const T* __restrict__ x,
                                                                              const T* __restrict__ w,
                                                                              T* __restrict__ y,
                                                                              float* __restrict__ rstd, int64_t rows,
                                                                              int cols, float eps) {
  const int lane = threadIdx.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + threadIdx.y; row < rows;
       row += static_cast<int64_t>(gridDim.x) * kWarpRowsPerBlock) {
    float v[kItems];
    lab::load_lane_items(v, x + row * cols, cols);
    float sq = 0.0f;
#pragma unroll
    for (int j = 0; j < kItems; ++j) sq += v[j] * v[j];  // past the end v is 0
    const float rs = rsqrtf(lab::warp_reduce_sum(sq) / static_cast<float>(cols) + eps);
    T* yr = y + row * cols;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int c = lane + 32 * j;
      if (c < cols) yr[c] = lab::from_float<T>(v[j] * rs * lab::to_float(w[c]));
    }
    if (lane == 0) rstd[row] = rs;
  }
}

template <typename T, int kItems>
__global__ void __launch_bounds__(32 * kWarpRowsPerBlock) rmsnorm_warp_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ rstd,
    T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols) {
  extern __shared__ float warp_sums[];  // [warp][cols]
  float* dw_sum = lab::own_warp_sums<1>(warp_sums, cols);
  const int lane = threadIdx.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + threadIdx.y; row < rows;
       row += static_cast<int64_t>(gridDim.x) * kWarpRowsPerBlock) {
    float xv[kItems], gv[kItems];
    lab::load_lane_items(xv, x + row * cols, cols);
    lab::load_lane_items(gv, dy + row * cols, cols);
    const float rs = rstd[row];
    float wdy_xhat = 0.0f;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int c = lane + 32 * j;
      if (c < cols) {
        const float xhat = xv[j] * rs;
        wdy_xhat += lab::to_float(w[c]) * gv[j] * xhat;
        dw_sum[c] += gv[j] * xhat;
      }
    }
    const float c_xhat = lab::warp_reduce_sum(wdy_xhat) / static_cast<float>(cols);
    T* dxr = dx + row * cols;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int c = lane + 32 * j;
      if (c < cols) dxr[c] = lab::from_float<T>((lab::to_float(w[c]) * gv[j] - xv[j] * rs * c_xhat) * rs);
    }
  }
  lab::write_warp_sums<1>(warp_sums, partials, cols);
}

template <typename T>
cudaError_t run_warp(const ForwardCall<T>& c) {
  if (c.cols > kWarpMaxCols) return run_naive(c);
  return lab::with_pow2<1, kWarpMaxItems>((c.cols + 31) / 32, [&](auto items) {
    constexpr int kItems = decltype(items)::value;
    const unsigned int grid = lab::row_grid((c.rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock);
    rmsnorm_warp_kernel<T, kItems><<<grid, dim3(32, kWarpRowsPerBlock), 0, c.stream>>>(
        c.x, c.w, c.y, c.rstd, c.rows, static_cast<int>(c.cols), kRmsNormEps);
    return cudaGetLastError();
  });
}

template <typename T>
cudaError_t run_warp_backward(const BackwardCall<T>& c) {
  if (c.cols > kWarpMaxCols) return run_naive_backward(c);
  return lab::with_pow2<1, kWarpMaxItems>((c.cols + 31) / 32, [&](auto items) {
    constexpr int kItems = decltype(items)::value;
    const auto kernel = rmsnorm_warp_backward_kernel<T, kItems>;
    const size_t smem = sizeof(float) * kWarpRowsPerBlock * c.cols;  // at most 16 KB
    const unsigned int grid = lab::resident_grid(kernel, 32 * kWarpRowsPerBlock, smem,
                                                 (c.rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock);
    if (!c.workspace) return c.needs(int64_t{grid} * c.cols);
    kernel<<<grid, dim3(32, kWarpRowsPerBlock), smem, c.stream>>>(c.dy, c.x, c.w, c.rstd, c.dx, c.workspace, c.rows,
                                                                  static_cast<int>(c.cols));
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    return lab::sum_partials(c.workspace, grid, c.cols, c.grads(), c.stream);
  });
}

cudaError_t launch_rmsnorm_warp(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                                int64_t cols, cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, y, rstd, rows, cols, stream, [](const auto& c) { return run_warp(c); });
}

cudaError_t launch_rmsnorm_warp_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                         const float* rstd, void* dx, void* dw, float* workspace,
                                         int64_t* workspace_floats, int64_t rows, int64_t cols, cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, rstd, dx, dw, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_warp_backward(c); });
}

// ---- v3 vec and v4 block: the row in 16-byte packets, held as loaded. ----------------------------------------
// As layernorm.cu's v3 and v4: one kernel each way for both steps, a block of (S, R) threads taking R rows at a
// time, S threads per row, kPacks packets per thread. Forward: up to 8 packets of x per thread, 64 registers
// (__launch_bounds__(1024)). Backward: x and dy held and dw summed in registers, up to 4 packets per thread in
// blocks of 512; one wave of resident blocks, one partial row each.
constexpr int kVecMaxThreads = 1024;
constexpr int kVecRowsPerBlock = 4;  // v3 forward: four warps, four rows
constexpr int kVecMaxPacks = 8;
constexpr int64_t kVecWarpPackets = 32 * kVecMaxPacks;                        // v3 forward
constexpr int64_t kBlockMaxPackets = int64_t{kVecMaxThreads} * kVecMaxPacks;  // v4 forward
constexpr int kVecBackwardThreads = 512;
constexpr int kVecBackwardMaxPacks = 4;
constexpr int64_t kVecWarpBackwardPackets = 32 * kVecBackwardMaxPacks;                          // v3 backward
constexpr int64_t kBlockMaxBackwardPackets = int64_t{kVecBackwardThreads} * kVecBackwardMaxPacks;  // v4 backward

// One row's forward, its packets held in r: rstd from the sum of squares over the row, `total` adding a value over
// every thread that holds part of it (v3/v4: the block's threads of the row; v5: the cluster's), then y, and rstd by
// the thread of rank 0 (layernorm.cu's forward_row, with one sum).
template <typename T, int kPacks, typename Total>
__device__ __forceinline__ void forward_row(lab::RowWords<T, kPacks>& r, const T* __restrict__ w, T* __restrict__ y,
                                            float* __restrict__ rstd, int64_t row, int rank, int size, int cols,
                                            bool vec, float eps, bool active, Total total) {
  constexpr int kVec = lab::Packet<T>::kSize;
  const float sq = r.sum(rank, size, cols, vec, [](float v) { return v * v; });
  const float rs = rsqrtf(total(sq) / static_cast<float>(cols) + eps);
  if (!active) return;  // after the row's reduction: the barriers are behind it
  r.rewiden();
  T* yr = y + row * cols;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int packet = rank + i * size;
    const uint4 wp = lab::load_words(w, packet, cols, vec);
    float v[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = r(i, k) * rs * lab::word_element<T>(wp, k);
    lab::store_words(yr, packet, cols, vec, v);
  }
  if (rank == 0) rstd[row] = rs;
}

template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecMaxThreads) rmsnorm_vec_kernel(const T* __restrict__ x,
                                                                     const T* __restrict__ w, T* __restrict__ y,
                                                                     float* __restrict__ rstd, int64_t rows, int cols,
                                                                     bool vec, float eps) {
  using Rows = lab::RowSlots;
  const int rank = Rows::rank(), size = Rows::size();
  for (int64_t base = Rows::first(); base < rows; base += Rows::step()) {
    const int64_t row = base + threadIdx.y;
    const bool active = row < rows;
    lab::RowWords<T, kPacks> r;
    r.load(x + (active ? row * cols : 0), rank, size, active ? cols : 0, vec);
    forward_row(r, w, y, rstd, row, rank, size, cols, vec, eps, active,
                [](float v) { return lab::row_sum<kVecMaxThreads>(v); });
  }
}

// One row's backward as a thread holds it (layernorm.cu's backward_row_sums and backward_row_dx, with RMSNorm's
// arithmetic). backward_row_sums: this thread's part of Σ w·dy·x̂ (`held` = 0 for a row slot past the last row),
// and its dy·x̂ added into acc.
template <typename T, int kPacks>
__device__ __forceinline__ float backward_row_sums(const lab::RowWords<T, kPacks>& xs,
                                                   const lab::RowWords<T, kPacks>& gs, const T* __restrict__ w,
                                                   float rs, int rank, int size, int held, bool vec,
                                                   float (&acc)[1][kPacks][lab::Packet<T>::kSize]) {
  constexpr int kVec = lab::Packet<T>::kSize;
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const uint4 wp = lab::load_words(w, rank + i * size, held, vec);  // past the end: dy = w = 0, adding nothing
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const float xhat = xs(i, k) * rs, d = gs(i, k);
      s += lab::word_element<T>(wp, k) * d * xhat;
      acc[0][i][k] += d * xhat;
    }
  }
  return s;
}

// backward_row_dx: given the row's sum (over all its threads), this thread's packets of dx, into the row dxr.
template <typename T, int kPacks>
__device__ __forceinline__ void backward_row_dx(lab::RowWords<T, kPacks>& xs, lab::RowWords<T, kPacks>& gs,
                                                const T* __restrict__ w, float rs, float s, T* __restrict__ dxr,
                                                int rank, int size, int cols, bool vec) {
  constexpr int kVec = lab::Packet<T>::kSize;
  const float c_xhat = s / static_cast<float>(cols);
  xs.rewiden();
  gs.rewiden();
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int packet = rank + i * size;
    const uint4 wp = lab::load_words(w, packet, cols, vec);
    float v[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = (lab::word_element<T>(wp, k) * gs(i, k) - xs(i, k) * rs * c_xhat) * rs;
    lab::store_words(dxr, packet, cols, vec, v);
  }
}

// v3/v4/v6's body, and v7's on those rows (kPrefetch: the next row's loads issued before this row's sum, as v7
// does for the cluster rows; layernorm.cu's v7 says why).
template <typename T, int kPacks, bool kPrefetch = false>
__device__ __forceinline__ void vec_backward_rows(const T* __restrict__ dy, const T* __restrict__ x,
                                                  const T* __restrict__ w, const float* __restrict__ rstd,
                                                  T* __restrict__ dx, float* __restrict__ partials, int64_t rows,
                                                  int cols, bool vec) {
  constexpr int kVec = lab::Packet<T>::kSize;
  using Rows = lab::RowSlots;
  const int rank = Rows::rank(), size = Rows::size();
  float acc[1][kPacks][kVec] = {};  // Σ dy·x̂ (dw) of this thread's columns over its rows
  lab::RowWords<T, kPacks> x_next, g_next;  // v7: the next row's packets and rstd, loaded ahead
  float rs_next = 0.0f;
  // The packets and rstd of `row`, this thread's (zeros past the last row).
  const auto load_slot = [&](int64_t row, lab::RowWords<T, kPacks>& xr, lab::RowWords<T, kPacks>& gr, float& r) {
    r = lab::load_backward_slot(xr, gr, x, dy, row, rows, cols, rank, size, vec) ? rstd[row] : 0.0f;
  };
  if (kPrefetch) load_slot(Rows::first() + threadIdx.y, x_next, g_next, rs_next);
  for (int64_t base = Rows::first(); base < rows; base += Rows::step()) {
    const int64_t row = base + threadIdx.y;
    const bool active = row < rows;
    const int64_t offset = active ? row * cols : 0;
    const int held = active ? cols : 0;
    lab::RowWords<T, kPacks> xs, gs;
    float rs;
    if (kPrefetch) {
      xs = x_next, gs = g_next, rs = rs_next;
    } else {
      load_slot(row, xs, gs, rs);  // v3/v4/v6: a row's loads at its start, waited for by its sum
    }
    float s = backward_row_sums(xs, gs, w, rs, rank, size, held, vec, acc);  // Σ w·dy·x̂ over the row
    // v7: the next rows' loads, in flight across this row's reduction (its barriers) and its dx.
    if (kPrefetch && base + Rows::step() < rows) load_slot(row + Rows::step(), x_next, g_next, rs_next);
    s = lab::row_sum<kVecBackwardThreads>(s);
    if (!active) continue;
    backward_row_dx(xs, gs, w, rs, s, dx + offset, rank, size, cols, vec);
  }
  lab::write_register_sums<T, 1, kPacks, kVecBackwardThreads>(acc, partials, cols);
}

template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecBackwardThreads) rmsnorm_vec_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ rstd,
    T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols, bool vec) {
  vec_backward_rows<T, kPacks>(dy, x, w, rstd, dx, partials, rows, cols, vec);
}

template <typename T, int kPacks>
cudaError_t launch_vec_forward(const ForwardCall<T>& c, int threads_per_row, int rows_per_block) {
  const unsigned int grid = lab::row_grid((c.rows + rows_per_block - 1) / rows_per_block);
  rmsnorm_vec_kernel<T, kPacks><<<grid, dim3(threads_per_row, rows_per_block), 0, c.stream>>>(
      c.x, c.w, c.y, c.rstd, c.rows, static_cast<int>(c.cols), c.vec, kRmsNormEps);
  return cudaGetLastError();
}

// S threads per row, 512 / S rows at a time, by `kernel` (v3's and v4's, or v6's).
template <typename T, int kPacks, typename Kernel>
cudaError_t launch_vec_backward(const BackwardCall<T>& c, int threads_per_row, Kernel kernel) {
  const int rows_per_block = kVecBackwardThreads / threads_per_row;
  const unsigned int grid =
      lab::resident_grid(kernel, kVecBackwardThreads, 0, (c.rows + rows_per_block - 1) / rows_per_block);
  if (!c.workspace) return c.needs(int64_t{grid} * c.cols);
  kernel<<<grid, dim3(threads_per_row, rows_per_block), 0, c.stream>>>(c.dy, c.x, c.w, c.rstd, c.dx, c.workspace,
                                                                      c.rows, static_cast<int>(c.cols), c.vec);
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
                                                          rmsnorm_vec_backward_kernel<T, decltype(packs)::value>);
  });
}

// v4: rows longer than a warp holds and short enough for a block; every other row goes to v3.
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
                                                          rmsnorm_vec_backward_kernel<T, decltype(packs)::value>);
  });
}

// ---- v5 cluster: a backward row across the blocks of a thread-block cluster (cuda_src/layernorm.cu's v5). ----
// Packets per thread: up to 4 in fp32, 2 in fp16/bf16 (the cluster's extra state spills registers at 4), so
// clusters of 8 blocks hold rows of up to 65536 elements in every dtype.
template <typename T>
constexpr int kClusterMaxPacks = sizeof(T) < 4 ? 2 : kVecBackwardMaxPacks;
template <typename T>
constexpr int64_t kClusterMaxBackwardPackets =
    int64_t{kVecBackwardThreads} * kClusterMaxPacks<T> * lab::kClusterMaxBlocks;

// v5's body, and v7's (kPrefetch, layernorm.cu's v7): the rows of this block's cluster, each read once.
template <typename T, int kPacks, bool kPrefetch>
__device__ __forceinline__ void cluster_backward_rows(const T* __restrict__ dy, const T* __restrict__ x,
                                                      const T* __restrict__ w, const float* __restrict__ rstd,
                                                      T* __restrict__ dx, float* __restrict__ partials, int64_t rows,
                                                      int cols, bool vec, int blocks_per_cluster) {
  constexpr int kVec = lab::Packet<T>::kSize;
  const int block_rank = static_cast<int>(blockIdx.x % blocks_per_cluster);  // 1-D clusters: consecutive blocks
  const int S = blockDim.x, size = blocks_per_cluster * S, rank = block_rank * S + threadIdx.x;
  const int64_t cluster = blockIdx.x / blocks_per_cluster, clusters = gridDim.x / blocks_per_cluster;
  float acc[1][kPacks][kVec] = {};  // Σ dy·x̂ (dw) of this thread's columns over its cluster's rows
  lab::RowWords<T, kPacks> xs, gs;  // the row's packets
  float rs = 0.0f;
  const auto load_row = [&](int64_t row, lab::RowWords<T, kPacks>& xr, lab::RowWords<T, kPacks>& gr, float& r) {
    xr.load(x + row * cols, rank, size, cols, vec);
    gr.load(dy + row * cols, rank, size, cols, vec);
    r = rstd[row];
  };
  if (kPrefetch && cluster < rows) load_row(cluster, xs, gs, rs);
  int parity = 0;
  for (int64_t row = cluster; row < rows; row += clusters, parity ^= 1) {  // the same rows for the whole cluster
    if (!kPrefetch) load_row(row, xs, gs, rs);  // v5: a row's loads at its start, waited for by its sums
    float s = 0.0f;  // Σ w·dy·x̂ over this thread's part of the row
    // backward_row_sums and backward_row_dx written out, as in layernorm.cu's cluster rows (which says why).
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
      const uint4 wp = lab::load_words(w, rank + i * size, cols, vec);  // past the end: dy = w = 0, adding nothing
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const float xhat = xs(i, k) * rs, d = gs(i, k);
        s += lab::word_element<T>(wp, k) * d * xhat;
        acc[0][i][k] += d * xhat;
      }
    }
    lab::cluster_sum_arrive<kVecBackwardThreads>(s, parity);
    // v7: the next row's loads, in flight across the cluster barrier and this row's dx (layernorm.cu's v7).
    lab::RowWords<T, kPacks> x_next, g_next;
    float rs_next = 0.0f;
    const bool prefetched = kPrefetch && row + clusters < rows;
    if (prefetched) load_row(row + clusters, x_next, g_next, rs_next);
    s = lab::cluster_sum_wait<float>(parity);
    const float c_xhat = s / static_cast<float>(cols);
    xs.rewiden();
    gs.rewiden();
    T* dxr = dx + row * cols;
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
      const int packet = rank + i * size;
      const uint4 wp = lab::load_words(w, packet, cols, vec);
      float v[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k)
        v[k] = (lab::word_element<T>(wp, k) * gs(i, k) - xs(i, k) * rs * c_xhat) * rs;
      lab::store_words(dxr, packet, cols, vec, v);
    }
    if (prefetched) {
      xs = x_next;
      gs = g_next;
      rs = rs_next;
    }
  }
  lab::cluster_done();
  lab::write_register_sums<T, 1, kPacks, kVecBackwardThreads>(acc, partials, cols, block_rank * S, size, cluster,
                                                              clusters);
}

template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecBackwardThreads) rmsnorm_cluster_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ rstd,
    T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols, bool vec, int blocks_per_cluster) {
  cluster_backward_rows<T, kPacks, false>(dy, x, w, rstd, dx, partials, rows, cols, vec, blocks_per_cluster);
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

// v11's and v12's y: this thread's packets of a staged row (rank, rank + size, ...; none at or past `cols`), scaled
// by the row's rstd and the weight. `w` and `yr` start at the block's first column.
template <typename T, int kPacks>
__device__ __forceinline__ void store_staged_y(T* __restrict__ yr, const lab::RowWords<T, kPacks>& xs,
                                               const T* __restrict__ w, float rs, int rank, int size, int cols) {
  constexpr int kVec = lab::Packet<T>::kSize;
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int packet = rank + i * size;
    if (packet * kVec >= cols) continue;
    const uint4 wp = lab::load_words(w, packet, cols, true);
    float v[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = xs(i, k) * rs * lab::word_element<T>(wp, k);
    lab::store_words(yr, packet, cols, true, v);
  }
}

// ---- v11 staged forward: the forward's long rows as v10 takes the backward's (Hopper). ---------------------------
// layernorm.cu's v11, with RMSNorm's arithmetic (forward_row's): one sum a row, Σx², then y of the block's part.
template <typename T, int kPacks, int kThreads>
__global__ void __launch_bounds__(kThreads) rmsnorm_staged_forward_kernel(
    const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, float* __restrict__ rstd, float eps,
    int64_t rows, int cols, int stages, int blocks_per_cluster) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(lab::kStagedSlotAlign) unsigned char ring_memory[];
  __shared__ float warp_sums[2][kThreads / 32];  // alternate rows use alternate sets (block_sum_alternating)
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
  for (int64_t row = cluster; row < rows; row += clusters, ring.next(turn), sums_set ^= 1) {
    lab::RowWords<T, kPacks> xs;
    ring.take(turn, xs, rank, kThreads, part);
    float s = xs.sum(rank, kThreads, part, true, [](float v) { return v * v; });
    s = lab::block_sum_alternating<kThreads>(s, warp_sums[sums_set]);
    ring.release(turn, row, x + offset, nullptr, rows, cols, clusters);
    sums.push(s);
    const float rs = rsqrtf(sums.wait() * inv_cols + eps);
    xs.rewiden();
    store_staged_y(y + row * cols + offset, xs, w + offset, rs, rank, kThreads, part);
    if (block_rank == 0 && rank == 0) rstd[row] = rs;
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
            rmsnorm_staged_forward_kernel<T, lab::kLeanClusterPacks, lab::kLeanClusterThreads>, c, blocks, fallback,
            c.x, c.w, c.y, c.rstd, kRmsNormEps);
      },
      fallback, lab::kStagedForwardShortestPackets);
}

cudaError_t launch_rmsnorm_staged_forward(lab::DType dtype, const void* x, const void* w, void* y, float* rstd,
                                          int64_t rows, int64_t cols, cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, y, rstd, rows, cols, stream,
                          [](const auto& c) { return run_staged_forward(c); });
}

// ---- v12 ring: the forward's 16-bit rows of 4K-8K elements through v8's ring (Hopper). ----------------------------
// LayerNorm's layernorm_ring_kernel (layernorm.cu says why) for RMSNorm: the sum of squares, one block-wide sum a
// row, after which the row's slot is refilled.
template <typename T, int kThreads>
__global__ void __launch_bounds__(kThreads) rmsnorm_ring_kernel(const T* __restrict__ x, const T* __restrict__ w,
                                                                T* __restrict__ y, float* __restrict__ rstd, float eps,
                                                                int64_t rows, int cols, int stages) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kPacks = lab::kRingForwardPacks;
  extern __shared__ __align__(lab::kStagedSlotAlign) unsigned char ring_memory[];
  __shared__ float warp_sums[2][kThreads / 32];  // alternate rows use alternate sets (block_sum_alternating)
  const int rank = threadIdx.x;
  const float inv_cols = 1.0f / static_cast<float>(cols);
  int sums_set = 0;
  lab::for_each_ring_row<T, kThreads, kPacks>(ring_memory, x, rows, cols, stages, [&](int64_t row, auto& xs,
                                                                                      auto release) {
    const float s = xs.sum(rank, kThreads, cols, true, [](float v) { return v * v; });
    const float rs = rsqrtf(lab::block_sum_alternating<kThreads>(s, warp_sums[sums_set]) * inv_cols + eps);
    sums_set ^= 1;
    release();
    xs.rewiden();
    store_staged_y(y + row * cols, xs, w, rs, rank, kThreads, cols);
    if (rank == 0) rstd[row] = rs;
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
        return lab::launch_ring_forward<T>(rmsnorm_ring_kernel<T, kThreads>, kThreads, c, c.x, c.w, c.y, c.rstd,
                                           kRmsNormEps);
      },
      [&] { return run_staged_forward(c); });
}

cudaError_t launch_rmsnorm_ring(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                                int64_t cols, cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, y, rstd, rows, cols, stream, [](const auto& c) { return run_ring(c); });
}

cudaError_t launch_rmsnorm_vec(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                               int64_t cols, cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, y, rstd, rows, cols, stream, [](const auto& c) { return run_vec(c); });
}

cudaError_t launch_rmsnorm_vec_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                        const float* rstd, void* dx, void* dw, float* workspace,
                                        int64_t* workspace_floats, int64_t rows, int64_t cols, cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, rstd, dx, dw, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_vec_backward(c); });
}

cudaError_t launch_rmsnorm_block(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                                 int64_t cols, cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, y, rstd, rows, cols, stream, [](const auto& c) { return run_block(c); });
}

cudaError_t launch_rmsnorm_block_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                          const float* rstd, void* dx, void* dw, float* workspace,
                                          int64_t* workspace_floats, int64_t rows, int64_t cols, cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, rstd, dx, dw, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_block_backward(c); });
}

cudaError_t launch_rmsnorm_cluster_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                            const float* rstd, void* dx, void* dw, float* workspace,
                                            int64_t* workspace_floats, int64_t rows, int64_t cols,
                                            cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, rstd, dx, dw, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_cluster_backward(c); });
}

// v5's forward: rows longer than v4 holds, spread over a cluster as v4 holds a row in one block, the row's sum of
// squares across the blocks through distributed shared memory, the row read once (layernorm.cu's v5 forward).
constexpr int64_t kClusterMaxForwardPackets = kBlockMaxPackets * lab::kClusterMaxBlocks;

template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecMaxThreads) rmsnorm_cluster_forward_kernel(
    const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, float* __restrict__ rstd, int64_t rows,
    int cols, bool vec, float eps, int blocks_per_cluster) {
  lab::cluster_forward_rows<T, kPacks, kVecMaxThreads>(
      x, rows, cols, vec, blocks_per_cluster, [&](auto& r, int64_t row, int rank, int size, const auto& total) {
        forward_row(r, w, y, rstd, row, rank, size, cols, vec, eps, true, total);
      });
}

template <typename T>
cudaError_t run_cluster(const ForwardCall<T>& c) {
  const int64_t packets = c.packets();
  if (packets <= kBlockMaxPackets || packets > kClusterMaxForwardPackets || !lab::has_clusters()) return run_block(c);
  return lab::with_cluster_shape<kVecMaxPacks>(packets, kVecMaxThreads, [&](auto packs, int blocks) {
    return lab::launch_rows_in_clusters(rmsnorm_cluster_forward_kernel<T, decltype(packs)::value>, c.rows,
                                        kVecMaxThreads, blocks, c.stream, [&] { return run_block(c); }, c.x, c.w,
                                        c.y, c.rstd, c.rows, static_cast<int>(c.cols), c.vec, kRmsNormEps);
  });
}

cudaError_t launch_rmsnorm_cluster(lab::DType dtype, const void* x, const void* w, void* y, float* rstd, int64_t rows,
                                   int64_t cols, cudaStream_t stream) {
  return dispatch_forward(dtype, x, w, y, rstd, rows, cols, stream, [](const auto& c) { return run_cluster(c); });
}

// ---- v6 occupancy: v4's backward with two blocks to a multiprocessor (cuda_src/layernorm.cu's v6). -------------
// With one gradient summed across rows instead of two, two packets a thread fit 64 registers in every dtype
// (ptxas), so v6 holds rows of up to 1024 packets: 8192 elements in fp16/bf16, 4096 in fp32.
constexpr int kOccupancyMaxPacks = 2;
constexpr int64_t kOccupancyMaxBackwardPackets = int64_t{kVecBackwardThreads} * kOccupancyMaxPacks;

template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecBackwardThreads, 2) rmsnorm_occupancy_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ rstd,
    T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols, bool vec) {
  vec_backward_rows<T, kPacks>(dy, x, w, rstd, dx, partials, rows, cols, vec);
}

// v7's kernel on v6's rows (v7's section says why): v6's, with the next row's loads issued before this row's
// sums (vec_backward_rows, kPrefetch).
template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecBackwardThreads, 2) rmsnorm_prefetch_block_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ rstd,
    T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols, bool vec) {
  vec_backward_rows<T, kPacks, true>(dy, x, w, rstd, dx, partials, rows, cols, vec);
}

// v7's kernel holds a second set of packets: in 64 registers without spilling (ptxas), one packet a thread in
// fp16/bf16 (two spill) and two in fp32.
template <typename T>
constexpr int kPrefetchBlockMaxPacks = sizeof(T) < 4 ? 1 : 2;

// v6's rows by v6's kernel, or by v7's (kPrefetch: the rows it holds; v6's kernel the others); every other row to
// v5.
template <typename T, bool kPrefetch = false>
cudaError_t run_occupancy_backward(const BackwardCall<T>& c) {
  const int64_t packets = c.packets();
  if (packets <= kVecWarpBackwardPackets || packets > kOccupancyMaxBackwardPackets) return run_cluster_backward(c);
  constexpr int kMaxPacks = kPrefetch ? kPrefetchBlockMaxPacks<T> : kOccupancyMaxPacks;
  if (packets > int64_t{kVecBackwardThreads} * kMaxPacks) return run_occupancy_backward<T, false>(c);  // v7 only
  // S a power of two, at least 64 and the smallest with at most kMaxPacks packets per thread (<= 512).
  const int64_t wanted = lab::pow2_at_least((packets + kMaxPacks - 1) / kMaxPacks);
  const int threads = static_cast<int>(wanted < 64 ? 64 : wanted);
  return lab::with_pow2<1, kMaxPacks>((packets + threads - 1) / threads, [&](auto packs) {
    constexpr int kPacks = decltype(packs)::value;
    if constexpr (kPrefetch)
      return launch_vec_backward<T, kPacks>(c, threads, rmsnorm_prefetch_block_backward_kernel<T, kPacks>);
    else
      return launch_vec_backward<T, kPacks>(c, threads, rmsnorm_occupancy_backward_kernel<T, kPacks>);
  });
}

cudaError_t launch_rmsnorm_occupancy_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                              const float* rstd, void* dx, void* dw, float* workspace,
                                              int64_t* workspace_floats, int64_t rows, int64_t cols,
                                              cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, rstd, dx, dw, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_occupancy_backward(c); });
}

// ---- v7 prefetch: the next row's loads in flight across this row's sum (cluster rows, and v6's). -----------------
// layernorm.cu's v7, for one sum a row: the next row's packets and rstd are issued between the halves of the
// cluster barrier, into a second set of registers; clusters of two blocks keep v5's kernel (lab::prefetch_pays says
// why). On v6's rows, as far as the second set fits 64 registers, they are issued before the row's block-wide sum
// (run_occupancy_backward with kPrefetch). Rows neither path takes go to v6's kernel.
template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecBackwardThreads) rmsnorm_prefetch_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ rstd,
    T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols, bool vec, int blocks_per_cluster) {
  cluster_backward_rows<T, kPacks, true>(dy, x, w, rstd, dx, partials, rows, cols, vec, blocks_per_cluster);
}

template <typename T, bool kPrefetch, typename Fallback>
cudaError_t launch_cluster_rows(const BackwardCall<T>& c, Fallback fallback) {
  const int64_t packets = c.packets();
  if (packets <= kBlockMaxBackwardPackets || packets > kClusterMaxBackwardPackets<T> || !lab::has_clusters())
    return fallback();
  return lab::with_cluster_shape<kClusterMaxPacks<T>>(packets, kVecBackwardThreads, [&](auto packs, int blocks) {
    constexpr int kPacks = decltype(packs)::value;
    const auto kernel = kPrefetch && lab::prefetch_pays(blocks) ? rmsnorm_prefetch_backward_kernel<T, kPacks>
                                                                : rmsnorm_cluster_backward_kernel<T, kPacks>;
    return lab::launch_in_clusters<1>(kernel, c, kVecBackwardThreads, blocks, fallback, c.dy, c.x, c.w, c.rstd, c.dx);
  });
}

template <typename T>
cudaError_t run_prefetch_backward(const BackwardCall<T>& c) {
  return launch_cluster_rows<T, true>(c, [&] { return run_occupancy_backward<T, true>(c); });
}

cudaError_t launch_rmsnorm_prefetch_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                             const float* rstd, void* dx, void* dw, float* workspace,
                                             int64_t* workspace_floats, int64_t rows, int64_t cols,
                                             cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, rstd, dx, dw, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_prefetch_backward(c); });
}

// ---- v8 staged: a block's next rows brought into shared memory by the copy engine (Hopper). ------------------
// layernorm.cu's v8, with RMSNorm's arithmetic: fp16/bf16 rows of 4K-16K elements, 16-byte aligned
// (lab::with_staged_shape), staged in a ring of shared memory by bulk copies (lab::StagedRows), so the bytes in flight
// are the ring's and not the registers'. Every other row goes to v7.
template <typename T, int kPacks>
__global__ void __launch_bounds__(kVecBackwardThreads) rmsnorm_staged_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ rstd,
    T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols, int stages) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(lab::kStagedSlotAlign) unsigned char ring_memory[];
  constexpr int kVec = lab::Packet<T>::kSize;
  const int rank = threadIdx.x, size = blockDim.x;
  lab::StagedRows<T> ring(ring_memory, stages, cols);
  ring.start(x, dy, rows, cols);
  float acc[1][kPacks][kVec] = {};  // Σ dy·x̂ (dw) of this thread's columns over its rows
  float rs_next = blockIdx.x < rows ? rstd[blockIdx.x] : 0.0f;  // one row ahead, as in layernorm.cu's v8
  int64_t turn = 0;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x, ++turn) {
    const float rs = rs_next;
    if (row + gridDim.x < rows) rs_next = rstd[row + gridDim.x];
    lab::RowWords<T, kPacks> xs, gs;
    ring.take(turn, xs, gs, rank, size, cols);
    float s = backward_row_sums(xs, gs, w, rs, rank, size, cols, true, acc);  // Σ w·dy·x̂ over the row
    s = lab::row_sum<kVecBackwardThreads>(s);
    ring.release(turn, row, x, dy, rows, cols);  // every thread has read the slot: it takes a row stages turns on
    backward_row_dx(xs, gs, w, rs, s, dx + row * cols, rank, size, cols, true);
  }
  lab::write_thread_sums<T, 1, kPacks>(acc, partials, cols);
#else
  __trap();  // the copy engine's bulk copies need compute capability 9.0; the launcher never sends such a GPU here
#endif
}

template <typename T>
cudaError_t run_staged_backward(const BackwardCall<T>& c) {
  return lab::with_staged_shape<T, kVecBackwardThreads, kVecBackwardMaxPacks>(
      c,
      [&](auto packs, int threads) {
        constexpr int kPacks = decltype(packs)::value;
        return lab::launch_staged<T, 1>(rmsnorm_staged_backward_kernel<T, kPacks>, c, threads, c.dy, c.x, c.w,
                                        c.rstd, c.dx);
      },
      [&] { return run_prefetch_backward(c); });
}

cudaError_t launch_rmsnorm_staged_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                           const float* rstd, void* dx, void* dw, float* workspace,
                                           int64_t* workspace_floats, int64_t rows, int64_t cols,
                                           cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, rstd, dx, dw, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_staged_backward(c); });
}

// ---- v9 lean: v8 with fewer instructions a row. -----------------------------------------------------------------
// layernorm.cu's v9 (why, and what it takes out), with RMSNorm's arithmetic, on rows of 4K-8K elements: at 16K
// (2048 packets) it ran behind v8 on the H200 (results/nvidia-h200/norm-backward-lean/), so those rows go to v8:
// two packets a thread at most, rows of up to 512 · 2 packets.
constexpr int kLeanMaxPacks = 2;

template <typename T, int kPacks>
__device__ __forceinline__ void lean_row_dx(lab::RowWords<T, kPacks>& xs, lab::RowWords<T, kPacks>& gs,
                                            const T* __restrict__ w, float rs, float s_over_n, T* __restrict__ dxr,
                                            int rank, int size, int cols) {
  constexpr int kVec = lab::Packet<T>::kSize;
  const float a = -rs * rs * s_over_n;  // dx = (w·dy - x̂·Σ(w·dy·x̂)/N)·rs = w·dy·rs + x·a
  xs.rewiden();
  gs.rewiden();
#pragma unroll
  for (int i = 0; i < kPacks; ++i) {
    const int packet = rank + i * size;
    const uint4 wp = lab::load_words(w, packet, cols, true);
    float v[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) v[k] = fmaf(lab::word_element<T>(wp, k) * gs(i, k), rs, xs(i, k) * a);
    lab::store_words(dxr, packet, cols, true, v);
  }
}

template <typename T, int kPacks, int kThreads>
__global__ void __launch_bounds__(kThreads, lab::lean_min_blocks(kThreads, kPacks)) rmsnorm_lean_backward_kernel(
    const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w, const float* __restrict__ rstd,
    T* __restrict__ dx, float* __restrict__ partials, int64_t rows, int cols, int stages) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(lab::kStagedSlotAlign) unsigned char ring_memory[];
  __shared__ float warp_sums[2][kThreads / 32];  // alternate rows use alternate sets (block_sum_alternating)
  constexpr int kVec = lab::Packet<T>::kSize;
  const int rank = threadIdx.x;
  const float inv_cols = 1.0f / static_cast<float>(cols);
  lab::StagedRows<T> ring(ring_memory, stages, cols);
  ring.start(x, dy, rows, cols);
  float acc[1][kPacks][kVec] = {};  // Σ dy·x̂ (dw) of this thread's columns over its rows
  float rs_next = blockIdx.x < rows ? rstd[blockIdx.x] : 0.0f;
  auto turn = ring.turn_of(0);
  int sums_set = 0;  // which of warp_sums' two sets this row's sum goes through
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x, ring.next(turn), sums_set ^= 1) {
    const float rs = rs_next;
    if (row + gridDim.x < rows) rs_next = rstd[row + gridDim.x];
    lab::RowWords<T, kPacks> xs, gs;
    ring.take(turn, xs, gs, rank, kThreads, cols);
    float s = backward_row_sums(xs, gs, w, rs, rank, kThreads, cols, true, acc);  // Σ w·dy·x̂ over the row
    s = lab::block_sum_alternating<kThreads>(s, warp_sums[sums_set]);
    ring.release(turn, row, x, dy, rows, cols);  // every thread has read the slot: it takes a row stages turns on
    lean_row_dx(xs, gs, w, rs, s * inv_cols, dx + row * cols, rank, kThreads, cols);
  }
  lab::write_thread_sums<T, 1, kPacks>(acc, partials, cols);
#else
  __trap();  // as v8's
#endif
}

template <typename T>
cudaError_t run_lean_backward(const BackwardCall<T>& c) {
  return lab::with_staged_shape<T, kVecBackwardThreads, kLeanMaxPacks>(
      c,
      [&](auto packs, int threads) {
        return lab::with_pow2<256, kVecBackwardThreads>(threads, [&](auto block) {
          return lab::launch_staged<T, 1>(
              rmsnorm_lean_backward_kernel<T, decltype(packs)::value, decltype(block)::value>, c, threads, c.dy,
              c.x, c.w, c.rstd, c.dx);
        });
      },
      [&] { return run_staged_backward(c); }, lab::kLeanShortestPackets);
}

cudaError_t launch_rmsnorm_lean_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                         const float* rstd, void* dx, void* dw, float* workspace,
                                         int64_t* workspace_floats, int64_t rows, int64_t cols,
                                         cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, rstd, dx, dw, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_lean_backward(c); });
}

// ---- v10 lean cluster: v9's rows across a thread-block cluster (Hopper). -----------------------------------------
// layernorm.cu's v10, with RMSNorm's arithmetic: rows longer than one of v9's blocks holds, fp32 included.
template <typename T, int kPacks, int kThreads>
__global__ void __launch_bounds__(kThreads, lab::lean_min_blocks(kThreads, kPacks))
    rmsnorm_lean_cluster_backward_kernel(const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w,
                                         const float* __restrict__ rstd, T* __restrict__ dx,
                                         float* __restrict__ partials, int64_t rows, int cols, int stages,
                                         int blocks_per_cluster) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(lab::kStagedSlotAlign) unsigned char ring_memory[];
  __shared__ float warp_sums[2][kThreads / 32];  // alternate rows use alternate sets (block_sum_alternating)
  constexpr int kVec = lab::Packet<T>::kSize;
  const int rank = threadIdx.x;
  [[maybe_unused]] const auto [part, block_rank, offset, cluster, clusters] =
      lab::cluster_part(cols, blocks_per_cluster);  // this block's columns: offset, offset + part
  const float inv_cols = 1.0f / static_cast<float>(cols);
  lab::PushedClusterSums<float> sums;
  sums.start(blocks_per_cluster);
  lab::StagedRows<T> ring(ring_memory, stages, part);
  ring.start(x + offset, dy + offset, rows, cols, cluster, clusters);
  float acc[1][kPacks][kVec] = {};  // Σ dy·x̂ (dw) of this thread's columns over its cluster's rows
  float rs_next = cluster < rows ? rstd[cluster] : 0.0f;
  auto turn = ring.turn_of(0);
  int sums_set = 0;  // which of warp_sums' two sets this row's sum goes through
  for (int64_t row = cluster; row < rows; row += clusters, ring.next(turn), sums_set ^= 1) {
    const float rs = rs_next;
    if (row + clusters < rows) rs_next = rstd[row + clusters];
    lab::RowWords<T, kPacks> xs, gs;
    ring.take(turn, xs, gs, rank, kThreads, part);
    float s = backward_row_sums(xs, gs, w + offset, rs, rank, kThreads, part, true, acc);
    s = lab::block_sum_alternating<kThreads>(s, warp_sums[sums_set]);
    ring.release(turn, row, x + offset, dy + offset, rows, cols, clusters);
    sums.push(s);
    s = sums.wait();  // Σ w·dy·x̂ over the whole row, the same bits everywhere
    lean_row_dx(xs, gs, w + offset, rs, s * inv_cols, dx + row * cols + offset, rank, kThreads, part);
  }
  lab::write_thread_sums<T, 1, kPacks>(acc, partials, part, cols, cluster, clusters, offset);
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
        return lab::launch_staged_clusters<T, 1>(
            rmsnorm_lean_cluster_backward_kernel<T, decltype(packs)::value, lab::kLeanClusterThreads>, c, blocks,
            fallback, c.dy, c.x, c.w, c.rstd, c.dx);
      },
      fallback);
}

cudaError_t launch_rmsnorm_lean_cluster_backward(lab::DType dtype, const void* dy, const void* x, const void* w,
                                                 const float* rstd, void* dx, void* dw, float* workspace,
                                                 int64_t* workspace_floats, int64_t rows, int64_t cols,
                                                 cudaStream_t stream) {
  return dispatch_backward(dtype, dy, x, w, rstd, dx, dw, workspace, workspace_floats, rows, cols, stream,
                           [](const auto& c) { return run_lean_cluster_backward(c); });
}

#else  // host half: the torch binding

#include <tuple>

#include "lab_torch.h"

// x (M, N) and a weight of N: CUDA, contiguous, one dtype, one device.
static lab::DType check_rmsnorm(const at::Tensor& x, const at::Tensor& w) {
  lab::check_cuda_input(x, "rmsnorm", "x");
  lab::check_cuda_input(w, "rmsnorm", "weight");
  LAB_CHECK(x.dim() == 2, "rmsnorm: x has ", x.dim(), " dimensions (sizes ", x.sizes(),
            "); this kernel takes a 2-D (M, N) tensor and normalizes each row");
  LAB_CHECK(w.dim() == 1 && w.size(0) == x.size(1), "rmsnorm: weight must have N = ", x.size(1),
            " elements, one per column of x; got sizes ", w.sizes());
  LAB_CHECK_TYPE(w.scalar_type() == x.scalar_type(), "rmsnorm: x has dtype ", x.scalar_type(),
                 " but weight has dtype ", w.scalar_type(), "; pass them in one dtype");
  LAB_CHECK(w.device() == x.device(), "rmsnorm: x is on ", x.device(), " but weight is on ", w.device());
  return lab::float_dtype(x, "rmsnorm", "x");
}

// The backward's own inputs besides x and the weight: dy like x, and the forward's rstd.
static void check_rmsnorm_backward(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& rstd) {
  lab::check_cuda_input(dy, "rmsnorm", "dy");
  LAB_CHECK(dy.sizes() == x.sizes(), "rmsnorm: dy has sizes ", dy.sizes(), " but x has ", x.sizes(),
            "; the output's gradient has the output's shape");
  LAB_CHECK_TYPE(dy.scalar_type() == x.scalar_type(), "rmsnorm: dy has dtype ", dy.scalar_type(), " but x has ",
                 x.scalar_type(), "; pass them in one dtype");
  LAB_CHECK(dy.device() == x.device(), "rmsnorm: x is on ", x.device(), " but dy is on ", dy.device());
  lab::check_cuda_input(rstd, "rmsnorm", "rstd");
  LAB_CHECK_TYPE(rstd.scalar_type() == at::kFloat, "rmsnorm: rstd has dtype ", rstd.scalar_type(),
                 "; pass the forward's, float32");
  LAB_CHECK(rstd.dim() == 1 && rstd.size(0) == x.size(0), "rmsnorm: rstd must be the forward's, one per row (",
            x.size(0), "); got sizes ", rstd.sizes());
  LAB_CHECK(rstd.device() == x.device(), "rmsnorm: x is on ", x.device(), " but rstd is on ", rstd.device());
}

using RmsNormLaunch = cudaError_t (*)(lab::DType, const void*, const void*, void*, float*, int64_t, int64_t,
                                      cudaStream_t);
using RmsNormBackwardLaunch = cudaError_t (*)(lab::DType, const void*, const void*, const void*, const float*, void*,
                                              void*, float*, int64_t*, int64_t, int64_t, cudaStream_t);

static std::tuple<at::Tensor, at::Tensor> rmsnorm_forward(const at::Tensor& x, const at::Tensor& w, const char* impl,
                                                          RmsNormLaunch launch) {
  const lab::DType dtype = check_rmsnorm(x, w);
  const int64_t rows = x.size(0), cols = x.size(1);
  at::Tensor y = at::empty_like(x);
  at::Tensor rstd = at::empty({rows}, x.options().dtype(at::kFloat));
  if (x.numel() == 0) return {y, rstd};  // a zero-block grid is a launch error
  c10::cuda::CUDAGuard guard(x.device());
  lab::check_launch(launch(dtype, x.const_data_ptr(), w.const_data_ptr(), y.mutable_data_ptr(),
                           rstd.mutable_data_ptr<float>(), rows, cols, lab::current_stream()),
                    "rmsnorm", impl);
  return {y, rstd};
}

static std::tuple<at::Tensor, at::Tensor> rmsnorm_backward(const at::Tensor& dy, const at::Tensor& x,
                                                           const at::Tensor& w, const at::Tensor& rstd,
                                                           const char* impl, RmsNormBackwardLaunch launch) {
  const lab::DType dtype = check_rmsnorm(x, w);
  check_rmsnorm_backward(dy, x, rstd);
  const int64_t rows = x.size(0), cols = x.size(1);
  at::Tensor dx = at::empty_like(x), dw = at::empty_like(w);
  if (cols == 0) return {dx, dw};
  if (rows == 0) return {dx, dw.zero_()};  // a sum over no rows
  c10::cuda::CUDAGuard guard(x.device());
  const auto call = [&](float* workspace, int64_t* floats) {
    return launch(dtype, dy.const_data_ptr(), x.const_data_ptr(), w.const_data_ptr(), rstd.const_data_ptr<float>(),
                  dx.mutable_data_ptr(), dw.mutable_data_ptr(), workspace, floats, rows, cols, lab::current_stream());
  };
  int64_t floats = 0;
  lab::check_launch(call(nullptr, &floats), "rmsnorm", impl);  // the workspace's size; launches nothing
  // Fresh on every call, on x's device and (through the caching allocator) stream; the kernels write what they read.
  at::Tensor workspace = at::empty({floats > 0 ? floats : 1}, x.options().dtype(at::kFloat));
  lab::check_launch(call(workspace.mutable_data_ptr<float>(), &floats), "rmsnorm", impl);
  return {dx, dw};
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_naive(const at::Tensor& x, const at::Tensor& w) {
  return rmsnorm_forward(x, w, "naive", launch_rmsnorm_naive);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_naive_backward(const at::Tensor& dy, const at::Tensor& x,
                                                          const at::Tensor& w, const at::Tensor& rstd) {
  return rmsnorm_backward(dy, x, w, rstd, "naive_backward", launch_rmsnorm_naive_backward);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_warp(const at::Tensor& x, const at::Tensor& w) {
  return rmsnorm_forward(x, w, "warp", launch_rmsnorm_warp);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_warp_backward(const at::Tensor& dy, const at::Tensor& x,
                                                         const at::Tensor& w, const at::Tensor& rstd) {
  return rmsnorm_backward(dy, x, w, rstd, "warp_backward", launch_rmsnorm_warp_backward);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_vec(const at::Tensor& x, const at::Tensor& w) {
  return rmsnorm_forward(x, w, "vec", launch_rmsnorm_vec);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_vec_backward(const at::Tensor& dy, const at::Tensor& x,
                                                        const at::Tensor& w, const at::Tensor& rstd) {
  return rmsnorm_backward(dy, x, w, rstd, "vec_backward", launch_rmsnorm_vec_backward);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_block(const at::Tensor& x, const at::Tensor& w) {
  return rmsnorm_forward(x, w, "block", launch_rmsnorm_block);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_block_backward(const at::Tensor& dy, const at::Tensor& x,
                                                          const at::Tensor& w, const at::Tensor& rstd) {
  return rmsnorm_backward(dy, x, w, rstd, "block_backward", launch_rmsnorm_block_backward);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_cluster(const at::Tensor& x, const at::Tensor& w) {
  return rmsnorm_forward(x, w, "cluster", launch_rmsnorm_cluster);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_cluster_backward(const at::Tensor& dy, const at::Tensor& x,
                                                            const at::Tensor& w, const at::Tensor& rstd) {
  return rmsnorm_backward(dy, x, w, rstd, "cluster_backward", launch_rmsnorm_cluster_backward);
}

// v6's forward is v5's: only its backward adds a path.
std::tuple<at::Tensor, at::Tensor> rmsnorm_occupancy(const at::Tensor& x, const at::Tensor& w) {
  return rmsnorm_forward(x, w, "occupancy", launch_rmsnorm_cluster);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_occupancy_backward(const at::Tensor& dy, const at::Tensor& x,
                                                              const at::Tensor& w, const at::Tensor& rstd) {
  return rmsnorm_backward(dy, x, w, rstd, "occupancy_backward", launch_rmsnorm_occupancy_backward);
}

// v7's forward is v5's: only its backward adds a path.
std::tuple<at::Tensor, at::Tensor> rmsnorm_prefetch(const at::Tensor& x, const at::Tensor& w) {
  return rmsnorm_forward(x, w, "prefetch", launch_rmsnorm_cluster);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_prefetch_backward(const at::Tensor& dy, const at::Tensor& x,
                                                             const at::Tensor& w, const at::Tensor& rstd) {
  return rmsnorm_backward(dy, x, w, rstd, "prefetch_backward", launch_rmsnorm_prefetch_backward);
}

// v8's forward is v5's: only its backward adds a path.
std::tuple<at::Tensor, at::Tensor> rmsnorm_staged(const at::Tensor& x, const at::Tensor& w) {
  return rmsnorm_forward(x, w, "staged", launch_rmsnorm_cluster);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_staged_backward(const at::Tensor& dy, const at::Tensor& x,
                                                           const at::Tensor& w, const at::Tensor& rstd) {
  return rmsnorm_backward(dy, x, w, rstd, "staged_backward", launch_rmsnorm_staged_backward);
}

// v9's forward is v5's: only its backward adds a path.
std::tuple<at::Tensor, at::Tensor> rmsnorm_lean(const at::Tensor& x, const at::Tensor& w) {
  return rmsnorm_forward(x, w, "lean", launch_rmsnorm_cluster);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_lean_backward(const at::Tensor& dy, const at::Tensor& x,
                                                         const at::Tensor& w, const at::Tensor& rstd) {
  return rmsnorm_backward(dy, x, w, rstd, "lean_backward", launch_rmsnorm_lean_backward);
}

// v10's forward is v5's: only its backward adds a path.
std::tuple<at::Tensor, at::Tensor> rmsnorm_lean_cluster(const at::Tensor& x, const at::Tensor& w) {
  return rmsnorm_forward(x, w, "lean_cluster", launch_rmsnorm_cluster);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_lean_cluster_backward(const at::Tensor& dy, const at::Tensor& x,
                                                                 const at::Tensor& w, const at::Tensor& rstd) {
  return rmsnorm_backward(dy, x, w, rstd, "lean_cluster_backward", launch_rmsnorm_lean_cluster_backward);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_staged_forward(const at::Tensor& x, const at::Tensor& w) {
  return rmsnorm_forward(x, w, "staged_forward", launch_rmsnorm_staged_forward);
}

// v11's backward is v10's: only its forward adds a path.
std::tuple<at::Tensor, at::Tensor> rmsnorm_staged_forward_backward(const at::Tensor& dy, const at::Tensor& x,
                                                                   const at::Tensor& w, const at::Tensor& rstd) {
  return rmsnorm_backward(dy, x, w, rstd, "staged_forward_backward", launch_rmsnorm_lean_cluster_backward);
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_ring(const at::Tensor& x, const at::Tensor& w) {
  return rmsnorm_forward(x, w, "ring", launch_rmsnorm_ring);
}

// v12's backward is v10's: only its forward adds a path.
std::tuple<at::Tensor, at::Tensor> rmsnorm_ring_backward(const at::Tensor& dy, const at::Tensor& x,
                                                         const at::Tensor& w, const at::Tensor& rstd) {
  return rmsnorm_backward(dy, x, w, rstd, "ring_backward", launch_rmsnorm_lean_cluster_backward);
}

TORCH_LIBRARY(lab_rmsnorm, m) {
  m.def("naive(Tensor x, Tensor weight) -> (Tensor, Tensor)");
  m.def("naive_backward(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
  m.def("warp(Tensor x, Tensor weight) -> (Tensor, Tensor)");
  m.def("warp_backward(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
  m.def("vec(Tensor x, Tensor weight) -> (Tensor, Tensor)");
  m.def("vec_backward(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
  m.def("block(Tensor x, Tensor weight) -> (Tensor, Tensor)");
  m.def("block_backward(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
  m.def("cluster(Tensor x, Tensor weight) -> (Tensor, Tensor)");
  m.def("cluster_backward(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
  m.def("occupancy(Tensor x, Tensor weight) -> (Tensor, Tensor)");
  m.def("occupancy_backward(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
  m.def("prefetch(Tensor x, Tensor weight) -> (Tensor, Tensor)");
  m.def("prefetch_backward(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
  m.def("staged(Tensor x, Tensor weight) -> (Tensor, Tensor)");
  m.def("staged_backward(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
  m.def("lean(Tensor x, Tensor weight) -> (Tensor, Tensor)");
  m.def("lean_backward(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
  m.def("lean_cluster(Tensor x, Tensor weight) -> (Tensor, Tensor)");
  m.def("lean_cluster_backward(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
  m.def("staged_forward(Tensor x, Tensor weight) -> (Tensor, Tensor)");
  m.def("staged_forward_backward(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
  m.def("ring(Tensor x, Tensor weight) -> (Tensor, Tensor)");
  m.def("ring_backward(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(lab_rmsnorm, CUDA, m) {
  m.impl("naive", &rmsnorm_naive);
  m.impl("naive_backward", &rmsnorm_naive_backward);
  m.impl("warp", &rmsnorm_warp);
  m.impl("warp_backward", &rmsnorm_warp_backward);
  m.impl("vec", &rmsnorm_vec);
  m.impl("vec_backward", &rmsnorm_vec_backward);
  m.impl("block", &rmsnorm_block);
  m.impl("block_backward", &rmsnorm_block_backward);
  m.impl("cluster", &rmsnorm_cluster);
  m.impl("cluster_backward", &rmsnorm_cluster_backward);
  m.impl("occupancy", &rmsnorm_occupancy);
  m.impl("occupancy_backward", &rmsnorm_occupancy_backward);
  m.impl("prefetch", &rmsnorm_prefetch);
  m.impl("prefetch_backward", &rmsnorm_prefetch_backward);
  m.impl("staged", &rmsnorm_staged);
  m.impl("staged_backward", &rmsnorm_staged_backward);
  m.impl("lean", &rmsnorm_lean);
  m.impl("lean_backward", &rmsnorm_lean_backward);
  m.impl("lean_cluster", &rmsnorm_lean_cluster);
  m.impl("lean_cluster_backward", &rmsnorm_lean_cluster_backward);
  m.impl("staged_forward", &rmsnorm_staged_forward);
  m.impl("staged_forward_backward", &rmsnorm_staged_forward_backward);
  m.impl("ring", &rmsnorm_ring);
  m.impl("ring_backward", &rmsnorm_ring_backward);
}

#endif
