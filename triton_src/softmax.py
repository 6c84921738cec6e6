"""Row softmax of an (M, N) tensor in Triton. Spec: specs/softmax.py. CUDA side: cuda_src/softmax.cu.

In Triton a reduction is one call, tl.max(x, axis) or tl.sum(x, axis): the compiler emits the warp shuffles and the
shared-memory exchange between warps that cuda_src/softmax.cu writes by hand. What we still choose is how much of
the tensor one program holds (one row, several rows, or a slice of a row at a time) and how many warps share it.
"""
import torch
import triton
import triton.language as tl

from compare.spec import variant
from compare.validate import InputError, check_inputs

NEG_INF = tl.constexpr(float("-inf"))


# ---- basic: the seed kernel, as in the Triton tutorial. One row per program, the whole row in one block. ----------
# BLOCK is N rounded up to a power of two (block shapes must be powers of two); the padding reads as -inf, which
# drops out of the max and adds exp(-inf) = 0 to the sum. The row is read once and stays in registers, but with the
# default 4 warps a row of N elements puts N / 128 values in each thread, and long rows spill to local memory.
# We stop at N = 64K (512 values per thread); Triton itself refuses blocks over 2^20 elements.
MAX_BASIC_COLS = 65536


@triton.jit
def softmax_basic_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # int64: M·N may exceed 2^31
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=NEG_INF).to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@variant("basic")
def basic(x: torch.Tensor) -> torch.Tensor:
    check_inputs("softmax", ("x", x), ndim=2)
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    if x.numel() == 0:  # M = 0 or N = 0: nothing to do; a zero-sized grid is not a launch
        return y
    if n_cols > MAX_BASIC_COLS:
        raise InputError(f"softmax: triton:basic holds a whole row in one block and takes N <= {MAX_BASIC_COLS}; "
                         f"x has N = {n_cols} (shape {tuple(x.shape)}); use triton:tuned for longer rows")
    softmax_basic_kernel[(n_rows,)](x, y, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return y


# ---- tuned: the block shape and warps chosen by N, and an online loop for rows too long to hold. ------------------
# Short rows (N <= 1024): one row per program would leave most of a 4-warp program idle at N = 256 and launch M
# tiny programs, so a program takes ROWS rows as a 2-D [ROWS, BLOCK] tile (about 2048 elements) and reduces along
# axis 1. This is CUDA's v2 (a warp per row, several rows per block) without writing the warp mapping.
# Medium rows (N <= 32768): one row per program as in basic, but with warps scaled to the row (8 to 32) so each
# thread holds at most 32 values and nothing spills.
MAX_CACHED_COLS = 32768
TILE_ELEMENTS = 2048


@triton.jit
def softmax_rows_kernel(x_ptr, y_ptr, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    # Rows past the end are clamped onto the last row (and not stored): reading real data keeps them free of NaN.
    offsets = tl.minimum(rows, n_rows - 1)[:, None] * n_cols + cols[None, :]
    col_ok = (cols < n_cols)[None, :]
    x = tl.load(x_ptr + offsets, mask=col_ok, other=NEG_INF).to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=1)[:, None])
    y = num * (1.0 / tl.sum(num, axis=1))[:, None]
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=col_ok & (rows < n_rows)[:, None])


# Long rows (N > 32768): the row no longer fits in registers, so the program walks it in BLOCK-wide slices, twice.
# Pass 1 keeps, per lane, a running max m and a running sum s of exp(x - m) (Milakov & Gimelshein's online
# softmax): one read gives both, where max-then-sum would need two. Pass 2 reads the row again (perhaps from L2) and
# writes exp(x - max) / sum. Per element, with d = x - m: if x raises the max, s becomes s·e^-d + 1, else s + e^d;
# exp(-|d|) serves both, so the update costs one exponential.
# Hazard: with m starting at -inf, a lane that has seen only -inf would compute d = -inf - (-inf) = NaN. Starting
# m at the most negative finite float instead makes d -inf (e = 0, nothing added) for -inf inputs and huge (e = 0,
# s restarts at 1) for the first finite one, so no special case is needed, in the loop or in the final merge where
# such a lane has s = 0. (CUDA's v4 tests for -inf explicitly instead.)
# Like CUDA's v4 this is one program per row, so at M = 32 most SMs idle, and each busy SM holds one program: the
# slice width alone sets how many bytes are in flight. 8192 over 16 warps is 16 values per thread per slice and
# twice the bytes of 4096 over 8 warps (which reached only 0.09 of copy bandwidth at M = 32, N = 256K fp32 on an
# H200); wider would need more than 64K registers for m, s and x.
ONLINE_BLOCK = 8192
ONLINE_WARPS = 16
LOWEST_F32 = tl.constexpr(-3.4028234663852886e38)


@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], LOWEST_F32, tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in tl.range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=NEG_INF).to(tl.float32)
        e = tl.exp(-tl.abs(x - m))
        s = tl.where(x > m, s * e + 1.0, s + e)
        m = tl.maximum(m, x)
    row_max = tl.max(m, axis=0)
    inv_sum = 1.0 / tl.sum(s * tl.exp(m - row_max), axis=0)
    for start in tl.range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=NEG_INF).to(tl.float32)
        tl.store(y_row + start + cols, (tl.exp(x - row_max) * inv_sum).to(y_ptr.dtype.element_ty), mask=mask)


@variant("tuned")
def tuned(x: torch.Tensor) -> torch.Tensor:
    check_inputs("softmax", ("x", x), ndim=2)
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    if n_cols > MAX_CACHED_COLS:
        softmax_online_kernel[(n_rows,)](x, y, n_cols, BLOCK=ONLINE_BLOCK, num_warps=ONLINE_WARPS)
        return y
    block = triton.next_power_of_2(n_cols)
    rows = max(1, TILE_ELEMENTS // block)  # 1 from N = 2048 on
    warps = min(32, max(4, block // 256))  # 4 warps up to N = 1024, then 8 values per thread up to 32 warps
    softmax_rows_kernel[(triton.cdiv(n_rows, rows),)](x, y, n_rows, n_cols, ROWS=rows, BLOCK=block,
                                                      num_warps=warps)
    return y
