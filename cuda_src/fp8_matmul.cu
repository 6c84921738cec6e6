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
//
// v2 takes K a multiple of 16 (every 16-byte copy of a row then starts aligned); other K fall back to v1.
// Triton side: triton_src/fp8_matmul.py.
#include "lab.h"

cudaError_t launch_fp8_matmul_naive(const uint8_t* a, const uint8_t* bt, const float* scale_a, int64_t scale_a_stride,
                                    const float* scale_b, int64_t scale_b_stride, void* c, int64_t m, int64_t n,
                                    int64_t k, cudaStream_t stream);
cudaError_t launch_fp8_matmul_mma(const uint8_t* a, const uint8_t* bt, const float* scale_a, int64_t scale_a_stride,
                                  const float* scale_b, int64_t scale_b_stride, void* c, int64_t m, int64_t n,
                                  int64_t k, cudaStream_t stream);

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "lab_async.cuh"
#include "lab_device.cuh"

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

cudaError_t launch_fp8_matmul_mma(const uint8_t* a, const uint8_t* bt, const float* scale_a, int64_t scale_a_stride,
                                  const float* scale_b, int64_t scale_b_stride, void* c, int64_t m, int64_t n,
                                  int64_t k, cudaStream_t stream) {
  if (k % 16 != 0 || !lab::is_aligned16(a) || !lab::is_aligned16(bt)) {
    return launch_fp8_matmul_naive(a, bt, scale_a, scale_a_stride, scale_b, scale_b_stride, c, m, n, k, stream);
  }
  const dim3 blocks(static_cast<unsigned int>((n + kTileN - 1) / kTileN),
                    static_cast<unsigned int>((m + kTileM - 1) / kTileM));
  fp8_matmul_mma_kernel<<<blocks, kThreadsMma, 0, stream>>>(a, bt, scale_a, scale_a_stride, scale_b, scale_b_stride,
                                                            static_cast<__nv_bfloat16*>(c), m, n, k);
  return cudaGetLastError();
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

TORCH_LIBRARY(lab_fp8_matmul, m) {
  m.def("naive(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b) -> Tensor");
  m.def("mma(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b) -> Tensor");
}

TORCH_LIBRARY_IMPL(lab_fp8_matmul, CUDA, m) {
  m.impl("naive", &fp8_matmul_naive);
  m.impl("mma", &fp8_matmul_mma);
}

#endif
