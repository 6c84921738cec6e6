// mbarrier, TMA and wgmma (sm_90 / sm_90a): the warpgroup tensor-core path of matmul.cu v5 and fp8_matmul.cu v3,
// the driver call that encodes their TMA tensor maps, and the block-tile grid and paired stores their launchers and
// epilogues share with matmul.cu v4. Each inline-asm instruction is a function named after it (PTX ISA names in
// quotes); nothing here decides tiling or order, the kernels do. Included only in the `#ifdef __CUDACC__` half.
//
// Accumulator layout of wgmma with an fp32 D, m64nN (the same for every input type; "Matrix fragment for wgmma D",
// PTX ISA): warp w of the warpgroup holds rows 16w + g and 16w + g + 8 (g = lane / 4, t = lane % 4); of its N / 2
// registers, 4j + {0, 1} are the first row at columns 8j + 2t + {0, 1}, and 4j + {2, 3} the second row at the same
// columns: mma.sync's m16n8 C fragment (lab_mma.cuh), repeated along N.
#pragma once

#include <cuda.h>  // CUtensorMap and its enums (types only: nothing from libcuda is linked)

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

// One box of a 2-D tensor map (coordinates: column, row) into shared memory, completing on `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int col, int row, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row), "r"(smem_address(bar))
      : "memory");
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

#ifdef LAB_SM90A
// Makes initialized barriers visible to the copy engine (the async proxy), not just to the other threads.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
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

// A row-major rows×cols matrix as a TMA source: boxes of box_rows rows × 128 bytes of columns (the widest box
// 128-byte swizzling allows), swizzled; reads past the edges return zeros. The row pitch (cols·sizeof(T)) must be
// a multiple of 16 bytes and the base 16-byte aligned, or the encoder refuses.
template <typename T>
bool encode_tensor_map(CUtensorMap* map, const T* base, int64_t rows, int64_t cols, int box_rows) {
  const EncodeTiledFn encode = tensor_map_encoder();
  if (!encode) return false;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t row_stride[1] = {static_cast<cuuint64_t>(cols) * sizeof(T)};
  const cuuint32_t box[2] = {128 / sizeof(T), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  return encode(map, tensor_map_type<T>(), 2, const_cast<T*>(base), dims, row_stride, box, element_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
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

// (x, y) into C[row][col], C[row][col + 1], as one 32-bit store where both are in range and n is even: the two
// adjacent columns an accumulator fragment holds (above, and lab_mma.cuh).
template <typename T>
__device__ __forceinline__ void store_pair(T* c, int row, int col, int m, int n, float x, float y) {
  if (row >= m || col >= n) return;
  T* p = c + static_cast<int64_t>(row) * n + col;
  if (col + 1 < n && n % 2 == 0) {
    if constexpr (std::is_same_v<T, __half>) {
      *reinterpret_cast<__half2*>(p) = __floats2half2_rn(x, y);
    } else {
      *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(x, y);
    }
  } else {
    p[0] = from_float<T>(x);
    if (col + 1 < n) p[1] = from_float<T>(y);
  }
}

}  // namespace lab
