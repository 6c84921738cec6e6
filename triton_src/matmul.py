"""Matrix multiply C = A @ B in Triton. Spec: specs/matmul.py. CUDA side: cuda_src/matmul.cu.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/matmul.md):
  v1 basic        the seed: fixed 64×64×32 tiles, a 2-D grid, masks on every load
  v2 tuned        autotuned tiles, warps and pipeline depth; grouped tile order; wrapped, unmasked M/N loads
  v3 persistent   one program per SM walks many tiles; A and B in by TMA, C out by TMA (fp16/bf16, Hopper)

A Triton program computes one BLOCK_M×BLOCK_N tile of C (in triton:persistent, several in turn): it walks K in
BLOCK_K steps, loads an A tile and a B tile as 2-D blocks, and multiplies them with tl.dot into an fp32 accumulator.
What the CUDA side spells out by hand (shared-memory staging, ldmatrix, the mma instructions, the asynchronous copy
pipeline) the compiler derives from tl.dot and num_stages: on Hopper it emits wgmma for fp16/bf16. fp32 inputs pass
input_precision="ieee", so they are multiplied in true fp32 on the FMA units rather than rounded to TF32 (tl.dot's
default on tensor-core GPUs).
"""
import torch
import triton
import triton.language as tl

import triton_src
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
# Close to cuBLAS in fp32, far from it in fp16/bf16 (measured: results/nvidia-h200/matmul.md): small tiles and the
# default pipeline depth leave the tensor cores waiting.
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
# Measured: results/nvidia-h200/matmul.md. At 4096³ the fraction of cuBLAS moves by a few percent between runs.
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


# The tile walk, the pointer-based K loop and the masked store are helpers: triton:persistent below runs the same
# three steps for each of its tiles. A @triton.jit helper is inlined where it is called, so this costs nothing.
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


# ---- persistent: one program per SM walks many tiles; A and B arrive by TMA; C leaves by TMA (Hopper). ---------
# Against tuned (in the spirit of Triton's tutorial 09, persistent matmul):
#  * Persistent grid. tuned launches one program per tile; here the grid is min(#SMs, #tiles) programs and program p
#    computes tiles p, p + #SMs, p + 2·#SMs, ... in the same grouped order as tuned, so the programs in flight together
#    still share A and B panels in L2. The point is less the saved launches than what the compiler can do with a
#    loop over tiles: tl.range(..., flatten=True) fuses the tile loop and the K loop into one software-pipelined
#    loop, so the copies for the next tile's first K steps are already in flight while this tile's epilogue converts
#    and stores C. A one-tile program fills its pipeline from empty, and no tensor-core work hides its epilogue
#    unless a second program shares the SM, which tuned's 128×256×64 and 128×128×64 tiles rule out (128 KB or more
#    of shared memory each).
#  * TMA (the Tensor Memory Accelerator). tuned's loads are per-thread addresses (64-bit offsets, wrap-around,
#    masks) turned into cp.async copies that every thread issues. A tensor descriptor (built on the host here, see
#    below) describes A, B and C to the hardware: one thread asks for a whole tile, the copy engine computes the
#    addresses, writes the tile to shared memory in the swizzled layout that wgmma reads, and fills rows and columns
#    past the edge of the matrix with zeros. The warps keep their registers and issue slots for wgmma (for 128×256×64
#    tiles, 8 warps, ptxas for sm_90a gives this kernel 162 registers a thread and tuned's 211), and no edge
#    handling is left in the kernel: a partial tile's missing rows load as zeros, and its store to C (also through a
#    descriptor) drops them.
#  * The C tile is staged in shared memory for the TMA store. SPLIT_EPILOGUE stores it as two BLOCK_M×BLOCK_N/2
#    halves, which halves that staging buffer: 128×256×64 tiles then fit four pipeline stages in Hopper's 227 KB
#    (4 × 48 KB of A and B + 32 KB of C).
#  * Only fp16 and bf16. fp32 without TF32 runs on the FMA units (tl.dot with input_precision="ieee"), which are the
#    bottleneck there: neither TMA (which feeds shared memory, not the FMA pipes' registers) nor the overlapped
#    epilogue addresses that, so this row refuses fp32 (specs/matmul.py declares it) rather than duplicate tuned.
#
# Where TMA can't be used the same kernel takes its pointer path (TMA=False: tuned's wrapped pointer loads and
# masked store, in the same persistent loop):
#  * a row stride that is not a multiple of 16 bytes (K or N not a multiple of 8 for fp16/bf16) or a base address
#    that is not 16-byte aligned (an offset view): TMA descriptors require both;
#  * K = 0 (a descriptor can't describe an empty dimension; the pointer path stores the empty sum, zeros);
#  * a GPU before Hopper (no TMA unit), or an older Triton without host-side descriptors.
# API: triton.tools.tensor_descriptor.TensorDescriptor, the host-side descriptor, exists with the same constructor in
# Triton 3.6 and 3.8. It needs no device allocator, unlike device-side tl.make_tensor_descriptor
# (which needs triton.set_allocator). A descriptor's block shape is part of it, so each autotune config sets its own
# in a pre_hook (_set_block_shapes), as the tutorial does. Triton's CPU interpreter runs host-side descriptors too,
# zero fill included, so CI checks both paths: the spec's interpreter shapes all take the pointer path, and
# tests/test_matmul_persistent.py adds shapes that take the TMA path (and checks which path each shape takes).
# This is the row that meets the 0.90-of-cuBLAS target at the large shapes (measured: results/nvidia-h200/matmul.md).
# Small products lose on the host, not the GPU: the kernel alone is close to cuBLAS there, but a call spends longer in
# Python before it returns than triton:tuned or cuda:wgmma do (the autotuner's dispatch and pre_hook, three
# TensorDescriptor objects and the launcher's per-call encoding of them), and the tables' events time the call
# (results/nvidia-h200/host-overhead.md has the measurements and a profile of the host path).


def _set_block_shapes(nargs):
    """Autotune pre_hook: the descriptors copy tiles of the config's block sizes (no descriptors: pointer path)."""
    if nargs["a_desc"] is not None:
        nargs["a_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
        nargs["b_desc"].block_shape = [nargs["BLOCK_K"], nargs["BLOCK_N"]]
        nargs["c_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_N"] // (2 if nargs["SPLIT_EPILOGUE"] else 1)]


def _persistent_config(block_m, block_n, block_k, warps, stages, split_epilogue):
    return triton.Config({"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k, "GROUP_M": 8,
                          "SPLIT_EPILOGUE": split_epilogue}, num_warps=warps, num_stages=stages,
                         pre_hook=_set_block_shapes)


# Five configs, each compiled and timed per (M, N, K, dtype): 128×256 tiles need two warpgroups (8 warps) to hold
# the fp32 accumulator in registers; 128×128 tiles try one and two.
_PERSISTENT_CONFIGS = [
    _persistent_config(128, 256, 64, warps=8, stages=3, split_epilogue=False),
    _persistent_config(128, 256, 64, warps=8, stages=3, split_epilogue=True),
    _persistent_config(128, 256, 64, warps=8, stages=4, split_epilogue=True),
    _persistent_config(128, 128, 64, warps=4, stages=4, split_epilogue=False),
    _persistent_config(128, 128, 64, warps=8, stages=4, split_epilogue=False),
]


def _configs_for_path(configs, named_args, **kwargs):
    """The pointer path stores through pointers: SPLIT_EPILOGUE would only compile the same kernel again."""
    return configs if kwargs["TMA"] else [c for c in configs if not c.kwargs["SPLIT_EPILOGUE"]]


# The tensors are passed on the TMA path too: the autotuner keys its cache on the dtypes of the arguments that have
# one (descriptors have none), so fp16 and bf16 are tuned separately.
@triton.autotune(configs=_PERSISTENT_CONFIGS, key=["M", "N", "K", "TMA"],
                 prune_configs_by={"early_config_prune": _configs_for_path})
@triton.jit
def matmul_persistent_kernel(a_ptr, b_ptr, c_ptr, a_desc, b_desc, c_desc, M, N, K, PRECISION: tl.constexpr,
                             TMA: tl.constexpr, NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, SPLIT_EPILOGUE: tl.constexpr):
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    # The epilogue finds its tile from a counter of its own instead of reusing pid_m/pid_n from the top of the
    # iteration, as Triton's tutorial does: in the flattened, pipelined loop the epilogue runs in a later stage than
    # the loads, and the tutorial reports a pipelining bug (on Blackwell) with a value used in both. It costs a few
    # integer operations per tile.
    stored = tl.program_id(0) - NUM_SMS
    for tile in tl.range(tl.program_id(0), tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _grouped_tile(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        if TMA:
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k0 in range(0, K, BLOCK_K):
                a = a_desc.load([pid_m * BLOCK_M, k0])
                b = b_desc.load([k0, pid_n * BLOCK_N])
                acc = tl.dot(a, b, acc, input_precision=PRECISION)
        else:
            acc = _tile_dot(a_ptr, b_ptr, M, N, K, pid_m, pid_n, PRECISION, BLOCK_M, BLOCK_N, BLOCK_K)

        stored += NUM_SMS
        pid_m, pid_n = _grouped_tile(stored, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        if TMA:
            if SPLIT_EPILOGUE:
                left, right = tl.split(tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1)))
                c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(c_ptr.dtype.element_ty))
                c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(c_ptr.dtype.element_ty))
            else:
                c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_ptr.dtype.element_ty))
        else:
            _store_tile(c_ptr, acc, M, N, pid_m, pid_n, BLOCK_M, BLOCK_N)


# Under the interpreter (CPU tensors) there are no SMs to count; 4 programs make the small test shapes with more than
# four tiles walk several tiles per program.
_INTERPRETER_SMS = 4


def _sm_count(device: torch.device) -> int:
    return triton_src.sm_count(device, on_interpreter=_INTERPRETER_SMS)


def _uses_tma(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> bool:
    """Whether the descriptors can describe these tensors (see the list above); otherwise the pointer path."""
    if triton_src.TensorDescriptor is None or a.shape[1] == 0:
        return False
    if a.is_cuda and torch.cuda.get_device_capability(a.device)[0] < 9:
        return False
    return all(t.data_ptr() % 16 == 0 and t.stride(0) * t.element_size() % 16 == 0 for t in (a, b, c))


@variant("persistent")
def persistent(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    m, n, k, c, precision = _prepare("matmul:persistent", a, b)
    if m and n:
        # fp32 is refused here, after the checks every row makes (a non-contiguous view or mismatched shapes are
        # reported as such) and after an empty C, which needs no kernel and comes back empty as from every row.
        check_inputs("matmul:persistent", ("a", a), dtypes=(torch.float16, torch.bfloat16))
        tma = _uses_tma(a, b, c)
        descs = tuple(map(triton_src.descriptor, (a, b, c))) if tma else (None, None, None)
        sms = _sm_count(a.device)
        grid = lambda meta: (min(sms, triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"])),)  # noqa: E731
        matmul_persistent_kernel[grid](a, b, c, *descs, m, n, k, PRECISION=precision, TMA=tma, NUM_SMS=sms)
    return c
