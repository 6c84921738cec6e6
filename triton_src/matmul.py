"""Matrix multiply C = A @ B in Triton. Spec: specs/matmul.py. CUDA side: cuda_src/matmul.cu.

A Triton program computes one BLOCK_M×BLOCK_N tile of C: it walks K in
BLOCK_K steps, loads an A tile and a B tile as 2-D blocks, and multiplies them with tl.dot into an fp32 accumulator.
What the CUDA side spells out by hand (shared-memory staging, ldmatrix, the mma instructions, the asynchronous copy
pipeline) the compiler derives from tl.dot and num_stages: on Hopper it emits wgmma for fp16/bf16. fp32 inputs pass
input_precision="ieee", so they are multiplied in true fp32 on the FMA units rather than rounded to TF32 (tl.dot's
default on tensor-core GPUs).
"""
import torch
import triton
import triton.language as tl

from compare.spec import variant
from compare.validate import check_inputs


def _prepare(name: str, a: torch.Tensor, b: torch.Tensor):
    """Checks shared by every variant; returns (M, N, K, C, input precision for tl.dot)."""
    check_inputs(name, ("a", a), ("b", b), ndim=2)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"{name}: inner dimensions differ: a is {tuple(a.shape)}, b is {tuple(b.shape)} "
                         f"(a's columns must equal b's rows)")
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=a.dtype)
    # "tf32" is tl.dot's default and means nothing for fp16/bf16 inputs; "ieee" keeps fp32 inputs in fp32.
    return m, n, k, c, "ieee" if a.dtype == torch.float32 else "tf32"


# ---- basic: the seed. Fixed 64×64×32 tiles, a 2-D grid in row-major tile order, masks on every load. ------------
# Measured (H200, 4096³): 43 TFLOP/s in fp32 (83% of cuBLAS), ~318 in fp16/bf16 (44%): small tiles and the default
# pipeline depth leave the tensor cores waiting.
@triton.jit
def matmul_basic_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # int64 row offsets: row · K and row · N can pass 2^31.
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        # Out-of-range elements load as 0 and add nothing, so any M, N, K works.
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k0), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k0) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@variant("basic")
def basic(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, n, k, c, precision = _prepare("matmul:basic", a, b)
    if m and n:
        grid = (triton.cdiv(m, 64), triton.cdiv(n, 64))
        # K == 0 runs no loop iteration and stores zeros: the empty sum.
        matmul_basic_kernel[grid](a, b, c, m, n, k, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, PRECISION=precision)
    return c


# ---- tuned: autotuned tiles, warps and pipeline depth; grouped tile order; unmasked M/N loads. -----------------
# Against basic:
#  * Larger tiles (up to 128×256) reuse each loaded byte for more flops, and num_stages sets how many K steps of
#    asynchronous copies are in flight; the autotuner picks per (M, N, K, dtype). fp16/bf16 configs are the ones
#    known to run well with wgmma on Hopper; fp32 (true fp32 runs on the FMA units) gets smaller tiles of its own,
#    and each dtype benchmarks only its own list (_configs_for_dtype), which keeps autotuning time down.
#  * Grouped order: program ids run down GROUP_M tile-rows before moving one tile-column right, so the programs in
#    flight together share A row-panels and B column-panels in L2 instead of streaming all of B per row of tiles.
#  * Row and column indices wrap (% M, % N) instead of being masked: the loads of a partial edge tile read valid
#    (duplicate) rows, so every load is unmasked along M and N and only the K tail and the store are masked.
#    Duplicate rows only feed outputs that the masked store drops.
# Measured (H200, 4096³): 632 TFLOP/s fp16 (88% of cuBLAS), 666 bf16 (90%), 44 fp32 (86%); at 8192³ bf16 94%.
_TENSOR_CORE_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 256, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
]
_FP32_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 16, "GROUP_M": 8}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=3),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=3),
]


def _configs_for_dtype(configs, named_args, **kwargs):
    """Benchmark only the configs meant for this dtype (the autotuner's cache key already includes dtypes)."""
    wanted = _FP32_CONFIGS if named_args["a_ptr"].dtype == torch.float32 else _TENSOR_CORE_CONFIGS
    return [c for c in configs if c in wanted]


# The tile walk, the pointer-based K loop and the masked store are helpers, for the rows that run the same steps.
# A @triton.jit helper is inlined where it is called, so this costs nothing.
@triton.jit
def _grouped_tile(tile, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """Tile number -> (tile row, tile column) of C, in grouped order."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    per_group = GROUP_M * tl.cdiv(N, BLOCK_N)
    first_m = tile // per_group * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    return first_m + (tile % per_group) % group_rows, (tile % per_group) // group_rows


@triton.jit
def _tile_dot(a_ptr, b_ptr, M, N, K, pid_m, pid_n, PRECISION: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """One BLOCK_M×BLOCK_N tile of A @ B in fp32, loaded through pointers with wrapped rows and columns."""
    # No contiguity hints on the wrapped indices: a wrap inside a tile breaks the run. When N is a multiple of 16
    # (Triton specializes on that) the compiler still proves 16-element runs and vectorizes the B loads.
    rows_in = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    cols_in = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows_in[:, None].to(tl.int64) * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * N + cols_in[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k0, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k0, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    return acc


@triton.jit
def _store_tile(c_ptr, acc, M, N, pid_m, pid_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Writes an fp32 tile into C (in C's dtype), dropping the rows and columns past M and N."""
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.autotune(configs=_TENSOR_CORE_CONFIGS + _FP32_CONFIGS, key=["M", "N", "K"],
                 prune_configs_by={"early_config_prune": _configs_for_dtype})
@triton.jit
def matmul_tuned_kernel(a_ptr, b_ptr, c_ptr, M, N, K, PRECISION: tl.constexpr, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = _tile_dot(a_ptr, b_ptr, M, N, K, pid_m, pid_n, PRECISION, BLOCK_M, BLOCK_N, BLOCK_K)
    _store_tile(c_ptr, acc, M, N, pid_m, pid_n, BLOCK_M, BLOCK_N)


@variant("tuned")
def tuned(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, n, k, c, precision = _prepare("matmul:tuned", a, b)
    if m and n:
        grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)  # noqa: E731
        matmul_tuned_kernel[grid](a, b, c, m, n, k, PRECISION=precision)
    return c

