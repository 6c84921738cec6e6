"""fp8 scaled matrix multiply C = (A @ B)·scale_a·scale_b in Triton: A (M, K) and B (K, N) float8_e4m3fn, B
column-major, one float32 scale per row of A and per column of B, C bfloat16. Spec (and the arithmetic its tolerance
allows): specs/fp8_matmul.py. CUDA side: cuda_src/fp8_matmul.cu.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/fp8_matmul.md):
  v1 tiled        the matmul tutorial's tile loop on fp8 operands: one program per 128×128 tile of C, K in steps
                  of 64, tl.dot on the e4m3 tiles into a float32 accumulator, the two scales and the cast to bf16 in
                  the epilogue
  v2 tuned        autotuned tiles, warps and pipeline depth, and the grouped tile order (programs that run together
                  share rows of A and columns of B in L2)
  v3 persistent   one program per SM walks tiles p, p + #SMs, ... in the same grouped order; A and Bt tiles arrive
                  by TMA (host-side descriptors: one thread asks for a tile, the copy engine writes it swizzled for
                  wgmma and fills past the edges with zeros), so no thread computes addresses or masks in the K loop
                  (triton_src/matmul.py's persistent step says more); where K is not a multiple of 16 the rows of A
                  and Bt are not 16-byte aligned, which TMA needs, and v3 runs v2
  v4 k256         v3 with K tiles of 256 and 128×128 tiles of C: half as many promotions (below) per product

tl.dot takes the e4m3 tiles as they are: on Hopper it emits wgmma with 8-bit operands (k = 32 per instruction),
reading B K-major, which the column-major B is. Its max_num_imprecise_acc decides how long the tensor core may
accumulate with its own reduced precision before the partial sum is added into a true float32 accumulator: Triton's
default on Hopper never does (cuBLAS's "fast accumulation"), so every step sets it to BLOCK_K, a promotion per K
tile, as cuBLAS (use_fast_accum=False) and DeepGEMM do.

What a promotion costs, and why v4 exists: Triton emits it as a wait for the K tile's wgmma, then one float32 add per
element of the tile into the accumulator, and the next K tile's wgmma starts after the adds, so the tensor core idles
while they run (ptxas says as much of v4 built for sm_90a: "warpgroup.wait is injected ... to allow use of registers
defined by GMMA"). An SM's fp8 tensor cores do about 8192 flops a cycle (1979 TFLOP/s dense over 132 SMs at
1.83 GHz), so a BLOCK_M×BLOCK_N×BLOCK_K step takes BLOCK_M·BLOCK_N·BLOCK_K/4096 cycles; its promotion, BLOCK_M·BLOCK_N
adds on 128 float32 lanes, takes BLOCK_M·BLOCK_N/128: 32/BLOCK_K of the tensor time whatever the tile, a quarter at
BLOCK_K = 128 (v2, v3), an eighth at 256 (v4). v4 pays for its K tile with a smaller C tile: a warpgroup's 64×256
slice of v3's 128×256 tile holds 128 float32 registers a thread of accumulator and 128 of partial sum, past the 255 a
thread may have, and three stages of 128×256×256 do not fit in shared memory, so v4 takes 128×128 tiles, three
stages of 64 KB. The CUDA steps hide the adds instead, with two consumer warpgroups, one adding while the other's
wgmma runs (cuda_src/fp8_matmul.cu).
Not done, and why: the promotion written by hand one K tile behind (a tl.dot from zero over the K tile, added into
the accumulator after the next tile's dot is issued) does take the adds off the wait in the machine code Triton 3.6
builds for sm_90a, but the product then has to move into the registers the loop carries, 64 moves a thread after
the wait, where the adds were.
"""
import torch
import triton
import triton.language as tl

import triton_src
from compare.spec import variant
from compare.validate import InputError, check_device


def _prepare(name: str, a, b, scale_a, scale_b):
    """Checks shared by every step; returns (M, N, K, C)."""
    for what, t, dtype in (("a", a, torch.float8_e4m3fn), ("b", b, torch.float8_e4m3fn),
                           ("scale_a", scale_a, torch.float32), ("scale_b", scale_b, torch.float32)):
        if not isinstance(t, torch.Tensor) or t.dim() != 2:
            raise InputError(f"{name}: {what} must be a 2-D tensor")
        check_device(name, what, t)
        if t.dtype != dtype:
            raise InputError(f"{name}: {what} has dtype {t.dtype}; expected {dtype}")
        if t.device != a.device:
            raise InputError(f"{name}: {what} is on {t.device}, a on {a.device}")
    m, k = a.shape
    if b.shape[0] != k:
        raise InputError(f"{name}: inner dimensions differ: a is {tuple(a.shape)}, b is {tuple(b.shape)}")
    n = b.shape[1]
    if tuple(scale_a.shape) != (m, 1) or tuple(scale_b.shape) != (1, n):
        raise InputError(f"{name}: scale shapes: scale_a must be ({m}, 1) and scale_b (1, {n}); got "
                         f"{tuple(scale_a.shape)} and {tuple(scale_b.shape)}")
    return m, n, k, torch.empty((m, n), device=a.device, dtype=torch.bfloat16)


@triton.jit
def _tile(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_sa,
          stride_sb, stride_cm, pid_m, pid_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """One BLOCK_M×BLOCK_N tile of C: the K loop and the epilogue, the same in both steps (they differ in which
    program takes which tile, and in the tile sizes)."""
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + rm[:, None].to(tl.int64) * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :].to(tl.int64) * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_tile, mask=(rm[:, None] < M) & (rk[None, :] + k0 < K), other=0.0)
        b = tl.load(b_tile, mask=(rk[:, None] + k0 < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, max_num_imprecise_acc=BLOCK_K)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    sa = tl.load(sa_ptr + rm * stride_sa, mask=rm < M, other=0.0)
    sb = tl.load(sb_ptr + rn * stride_sb, mask=rn < N, other=0.0)
    c = (acc * sa[:, None] * sb[None, :]).to(tl.bfloat16)
    tl.store(c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


# ---- v1 tiled: one program per tile, in row-major tile order. -------------------------------------------------------
@triton.jit
def fp8_matmul_tiled_kernel(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                            stride_bn, stride_sa, stride_sb, stride_cm, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    _tile(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_sa,
          stride_sb, stride_cm, tl.program_id(0), tl.program_id(1), BLOCK_M, BLOCK_N, BLOCK_K)


def _launch(kernel, grid, a, b, scale_a, scale_b, c, m, n, k, **meta):
    kernel[grid](a, b, scale_a, scale_b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                 scale_a.stride(0), scale_b.stride(1), c.stride(0), **meta)


@variant("tiled")
def tiled(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor):
    m, n, k, c = _prepare("fp8_matmul", a, b, scale_a, scale_b)
    if c.numel():
        _launch(fp8_matmul_tiled_kernel, (triton.cdiv(m, 128), triton.cdiv(n, 128)), a, b, scale_a, scale_b, c,
                m, n, k, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=3)
    return c


# ---- v2 tuned: autotuned tiles, grouped tile order. ------------------------------------------------------------------
@triton.jit
def _grouped_tile(tile, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """Tile number -> (tile row, tile column) of C. Grouped order: GROUP_M rows of tiles are walked column by
    column, so the programs resident at once read a few panels of A and of B many times from L2 instead of streaming
    all of B for each row of tiles."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    per_group = GROUP_M * tl.cdiv(N, BLOCK_N)
    first_m = (tile // per_group) * GROUP_M
    group_m = min(tiles_m - first_m, GROUP_M)
    return first_m + (tile % per_group) % group_m, (tile % per_group) // group_m


@triton.autotune(
    configs=[triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=w, num_stages=s)
             for bm, bn, bk, w, s in ((128, 256, 128, 8, 3), (256, 128, 128, 8, 3), (128, 128, 128, 8, 4),
                                      (128, 128, 64, 4, 4), (64, 128, 128, 4, 4))],
    key=["M", "N", "K"])
@triton.jit
def fp8_matmul_tuned_kernel(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                            stride_bn, stride_sa, stride_sb, stride_cm, BLOCK_M: tl.constexpr,
                            BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    _tile(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_sa,
          stride_sb, stride_cm, pid_m, pid_n, BLOCK_M, BLOCK_N, BLOCK_K)


@variant("tuned")
def tuned(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor):
    m, n, k, c = _prepare("fp8_matmul", a, b, scale_a, scale_b)
    if c.numel():
        _launch(fp8_matmul_tuned_kernel,
                lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),),
                a, b, scale_a, scale_b, c, m, n, k)
    return c


# ---- v3 persistent: one program per SM, A and Bt by TMA. -------------------------------------------------------------
def _set_block_shapes(nargs):
    """Autotune pre_hook: the descriptors copy tiles of the config's block sizes."""
    nargs["a_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["b_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]


@triton.jit
def _persistent_tiles(a_desc, b_desc, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_sa, stride_sb, stride_cm,
                      NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr):
    """A program's tiles of C, p, p + #SMs, ...: v3 and v4 differ only in the tile sizes."""
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    for tile in range(tl.program_id(0), tiles, NUM_SMS):
        pid_m, pid_n = _grouped_tile(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            a = a_desc.load([pid_m * BLOCK_M, k0])
            b = b_desc.load([pid_n * BLOCK_N, k0])  # a BLOCK_N×BLOCK_K tile of Bt: its transpose is K-major B
            acc = tl.dot(a, b.T, acc, max_num_imprecise_acc=BLOCK_K)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        sa = tl.load(sa_ptr + rm * stride_sa, mask=rm < M, other=0.0)
        sb = tl.load(sb_ptr + rn * stride_sb, mask=rn < N, other=0.0)
        c = (acc * sa[:, None] * sb[None, :]).to(tl.bfloat16)
        tl.store(c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :], c,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.autotune(
    configs=[triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": 128, "GROUP_M": 8}, num_warps=w, num_stages=s,
                           pre_hook=_set_block_shapes)
             for bm, bn, w, s in ((128, 256, 8, 3), (128, 256, 8, 4), (128, 128, 8, 4), (128, 128, 4, 5))],
    key=["M", "N", "K"])
@triton.jit
def fp8_matmul_persistent_kernel(a_desc, b_desc, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_sa, stride_sb, stride_cm,
                                 NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                 BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    _persistent_tiles(a_desc, b_desc, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_sa, stride_sb, stride_cm, NUM_SMS,
                      BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)


def uses_tma(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether descriptors can describe A and Bt: unit column strides, 16-byte aligned bases and row strides (K a
    multiple of 16), a GPU with a TMA unit (Hopper on), a Triton with host-side descriptors. The strides themselves
    are checked, not is_contiguous(): a (1, K) view with any row stride counts as contiguous, and the descriptor is
    built from its strides."""
    if triton_src.TensorDescriptor is None or a.shape[1] == 0:
        return False
    if a.stride(1) != 1 or b.stride(0) != 1 or a.stride(0) % 16 or b.stride(1) % 16:
        return False
    if a.is_cuda and torch.cuda.get_device_capability(a.device)[0] < 9:
        return False
    return all(t.data_ptr() % 16 == 0 for t in (a, b)) and a.shape[1] % 16 == 0


def _persistent_launch(kernel, a, b, scale_a, scale_b, block: tuple[int, int, int] | None = None, **launch):
    """v3's and v4's host side: v2 where TMA can't describe A or Bt, else one program per SM (fewer where there are
    fewer tiles). block (BLOCK_M, BLOCK_N, BLOCK_K) where the kernel has one fixed tile, passed to it with `launch`'s
    options; without it, the autotuner's config sets the block sizes and the descriptors' block shapes."""
    if not uses_tma(a, b):
        return tuned(a, b, scale_a, scale_b)
    m, n, k, c = _prepare("fp8_matmul", a, b, scale_a, scale_b)
    if c.numel():
        sms = triton_src.sm_count(a.device, 4)
        a_desc, b_desc = triton_src.descriptor(a), triton_src.descriptor(b.t())
        if block:
            bm, bn, bk = block
            launch.update(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
            a_desc, b_desc = triton_src.descriptor(a, [bm, bk]), triton_src.descriptor(b.t(), [bn, bk])
        def grid(meta):
            return (min(sms, triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"])),)

        kernel[grid](a_desc, b_desc, scale_a, scale_b, c, m, n, k, scale_a.stride(0), scale_b.stride(1), c.stride(0),
                     NUM_SMS=sms, **launch)
    return c


@variant("persistent")
def persistent(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor):
    return _persistent_launch(fp8_matmul_persistent_kernel, a, b, scale_a, scale_b)


# ---- v4 k256: v3's loop over K tiles of 256, one fixed tile. ---------------------------------------------------------
K256_TILE = (128, 128, 256)  # BLOCK_M, BLOCK_N, BLOCK_K: the module docstring says why these


@triton.jit
def fp8_matmul_k256_kernel(a_desc, b_desc, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_sa, stride_sb, stride_cm,
                           NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    _persistent_tiles(a_desc, b_desc, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_sa, stride_sb, stride_cm, NUM_SMS,
                      BLOCK_M, BLOCK_N, BLOCK_K, 8)


@variant("k256")
def k256(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor):
    # eight warps: two warpgroups of 64 rows; three stages
    return _persistent_launch(fp8_matmul_k256_kernel, a, b, scale_a, scale_b, block=K256_TILE, num_warps=8,
                              num_stages=3)
