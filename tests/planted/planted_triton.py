"""Deliberately wrong Triton implementations: each plants one hazard that the checker (compare/check.py) must
reject, with a message that says what went wrong. tests/test_planted.py runs every one of them through
compare.check.check_case; none of them belongs in triton_src/.

The elementwise patterns implement gelu (specs/gelu.py), the row patterns softmax (specs/softmax.py, an (M, N)
row softmax). Every wrapper is named after its hazard; PATTERNS at the bottom lists them with the op they claim to
implement.

Every wrapper validates its input as triton_src's do (compare.validate.check_inputs: a non-contiguous input is
refused with a message that says "contiguous", which the checker accepts), except the wrong-stride ones, whose bug
is that they don't. So each pattern is wrong in its one planted way only.

Under TRITON_INTERPRET=1 (no GPU) the same kernels run on CPU tensors, one program after another. That serializes
the programs, so the race between programs (softmax_race) cannot happen there: it is a GPU-only pattern.
"""
import torch
import triton
import triton.language as tl

from compare.validate import check_inputs

# The correct math (gelu_math.py); the wrong patterns below differ from it in one planted way each.
from gelu_math import CUBIC_COEFF, SQRT_2_OVER_PI  # noqa: E402
from gelu_math import gelu_fp32  # noqa: E402

NEG_INF = tl.constexpr(float("-inf"))

GELU_BLOCK = 1024
# Columns per loop step of the one-program-a-row kernels. Wide, because Triton's interpreter pays per step: the
# softmax checks include rows of 40000 (the split paths' shapes), which at 256 a step made these patterns most of
# the CPU test suite's time.
SOFTMAX_BLOCK = 4096
RACE_CHUNK = 256  # columns per program where several programs share a row (softmax_race): many programs a row


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """A correct gelu kernel, for the patterns whose bug is in the wrapper."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(y_ptr + offsets, gelu_fp32(x).to(y_ptr.dtype.element_ty), mask=mask)


def _gelu_into(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    if n:
        gelu_kernel[(triton.cdiv(n, GELU_BLOCK),)](x, y, n, BLOCK=GELU_BLOCK)
    return y


# ---- writes nothing: the output is allocated and returned, but the kernel writes a different buffer. ----------
# On the GPU the checker fills the allocator's free memory with NaN first, so the never-written output reads NaN.
def gelu_unwritten(x):
    check_inputs("gelu", ("x", x))
    y = torch.empty_like(x)
    out = torch.empty_like(x)
    _gelu_into(x, out)  # the bug: computes into `out`, returns `y`
    return y


# ---- writes zeros: a kernel that stores 0 everywhere (a stub left in place of the math). -----------------------
@triton.jit
def gelu_zeros_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.zeros([BLOCK], dtype=y_ptr.dtype.element_ty), mask=mask)


def gelu_zeros(x):
    check_inputs("gelu", ("x", x))
    y = torch.empty_like(x)
    n = x.numel()
    gelu_zeros_kernel[(triton.cdiv(n, GELU_BLOCK),)](x, y, n, BLOCK=GELU_BLOCK)
    return y


# ---- returns its input: the kernel runs, but the wrapper returns the wrong tensor. -----------------------------
def gelu_returns_input(x):
    check_inputs("gelu", ("x", x))
    y = torch.empty_like(x)
    _gelu_into(x, y)
    return x  # the bug: should be y


# ---- writes into its input: an in-place kernel behind an out-of-place interface. -----------------------------
def gelu_in_place(x):
    check_inputs("gelu", ("x", x))
    return _gelu_into(x, x)  # the caller's tensor is overwritten


# ---- tail unwritten: the grid covers only full blocks and the kernel has no mask. ------------------------------
@triton.jit
def gelu_full_blocks_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)  # no mask: every block assumed full
    x = tl.load(x_ptr + offsets).to(tl.float32)
    tl.store(y_ptr + offsets, gelu_fp32(x).to(y_ptr.dtype.element_ty))


def gelu_tail_unwritten(x):
    check_inputs("gelu", ("x", x))
    y = torch.empty_like(x)
    full_blocks = x.numel() // GELU_BLOCK  # the bug: floor instead of cdiv; the last n % BLOCK never written
    if full_blocks:
        gelu_full_blocks_kernel[(full_blocks,)](x, y, BLOCK=GELU_BLOCK)
    return y


# ---- off-by-one mask: `offsets < n - 1`, so the very last element is never written. -----------------------------
@triton.jit
def gelu_off_by_one_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n - 1  # the bug: should be offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(y_ptr + offsets, gelu_fp32(x).to(y_ptr.dtype.element_ty), mask=mask)


def gelu_off_by_one(x):
    check_inputs("gelu", ("x", x))
    y = torch.empty_like(x)
    n = x.numel()
    gelu_off_by_one_kernel[(triton.cdiv(n, GELU_BLOCK),)](x, y, n, BLOCK=GELU_BLOCK)
    return y


# ---- wrong stride: no contiguity check, and the kernel reads x as numel() contiguous elements from its data
# pointer. Right for contiguous inputs; for a strided view it reads the wrong elements. Only a checker that also
# passes non-contiguous inputs can see this.
def gelu_wrong_stride(x):
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)  # contiguous, whatever x's layout
    return _gelu_into(x, y)  # the kernel indexes x with flat offsets, ignoring x.stride()


# ---- too low a precision: the input is rounded to bf16 and the math done on that (a "fast" path that stages
# fp32 data through bf16). About 3 significant digits: outside any fp32 or fp16 tolerance.
@triton.jit
def gelu_bf16_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.bfloat16).to(tl.float32)  # the bug: 8-bit mantissa
    y = gelu_fp32(x).to(tl.bfloat16)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def gelu_low_precision(x):
    check_inputs("gelu", ("x", x))
    y = torch.empty_like(x)
    n = x.numel()
    gelu_bf16_kernel[(triton.cdiv(n, GELU_BLOCK),)](x, y, n, BLOCK=GELU_BLOCK)
    return y


# ---- produces NaN: the textbook tanh(u) = (e^2u - 1) / (e^2u + 1). e^2u overflows fp32 once u > 44.4, i.e.
# x > ~10.05, and inf / inf = NaN there. gelu's inputs are 3·N(0, 1), so only a few elements per ten thousand
# reach it: the larger check shapes do.
@triton.jit
def gelu_textbook_tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    u = SQRT_2_OVER_PI * (x + CUBIC_COEFF * x * x * x)
    e = tl.exp(2.0 * u)
    tanh_u = (e - 1.0) / (e + 1.0)  # the bug: inf / inf for large u
    tl.store(y_ptr + offsets, (0.5 * x * (1.0 + tanh_u)).to(y_ptr.dtype.element_ty), mask=mask)


def gelu_textbook_tanh(x):
    check_inputs("gelu", ("x", x))
    y = torch.empty_like(x)
    n = x.numel()
    gelu_textbook_tanh_kernel[(triton.cdiv(n, GELU_BLOCK),)](x, y, n, BLOCK=GELU_BLOCK)
    return y


# ---- stale cached result: outputs memoized by (shape, dtype), as if the op were a pure function of its shape
# (a plan/workspace cache that caches the answer too). The first call for a shape is right; every later call with
# different inputs of that shape returns the first call's answer. The input is validated before the lookup, so the
# checker's non-contiguous case (at shapes already seen) is refused, not served from the cache: only a second call
# at a shape with fresh contiguous inputs shows the bug. gelu has no special inputs, so that is the checker's
# re-check with fresh inputs.
_gelu_cache: dict = {}


def gelu_cached(x):
    check_inputs("gelu", ("x", x))
    key = (tuple(x.shape), x.dtype, x.device)
    if key not in _gelu_cache:
        _gelu_cache[key] = _gelu_into(x, torch.empty_like(x))
    return _gelu_cache[key].clone()


# ============ softmax (M, N), one row per program unless stated ====================================================
@triton.jit
def softmax_rows_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    """A correct three-pass row softmax (max, sum, write), any N, for the patterns whose bug is in the wrapper."""
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], NEG_INF, tl.float32)
    for start in tl.range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=NEG_INF).to(tl.float32)
        m = tl.maximum(m, x)
    row_max = tl.max(m, axis=0)
    s = tl.zeros([BLOCK], tl.float32)
    for start in tl.range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=NEG_INF).to(tl.float32)
        s += tl.exp(x - row_max)
    inv_sum = 1.0 / tl.sum(s, axis=0)
    for start in tl.range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=NEG_INF).to(tl.float32)
        tl.store(y_row + start + cols, (tl.exp(x - row_max) * inv_sum).to(y_ptr.dtype.element_ty), mask=mask)


def _softmax_rows_into(x, y, n_rows):
    if n_rows and x.shape[1]:
        softmax_rows_kernel[(n_rows,)](x, y, x.shape[1], BLOCK=SOFTMAX_BLOCK)
    return y


# ---- writes only half the rows: the grid is sized for rows / 2 (a leftover of a two-rows-per-program version).
def softmax_half_rows(x):
    check_inputs("softmax", ("x", x), ndim=2)
    y = torch.empty_like(x)
    return _softmax_rows_into(x, y, (x.shape[0] + 1) // 2)  # the bug: rows M/2 .. M-1 never written


# ---- produces NaN: no max subtraction. exp(x) overflows for x > 88 (fp32), and the "large magnitudes" check
# inputs (rows around +1e4) then give inf / inf = NaN; rows around -1e4 give 0 / 0.
@triton.jit
def softmax_no_max_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    s = tl.zeros([BLOCK], tl.float32)
    for start in tl.range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=NEG_INF).to(tl.float32)
        s += tl.exp(x)  # the bug: exp of the raw value
    inv_sum = 1.0 / tl.sum(s, axis=0)
    for start in tl.range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=mask, other=NEG_INF).to(tl.float32)
        tl.store(y_ptr + row * n_cols + start + cols, (tl.exp(x) * inv_sum).to(y_ptr.dtype.element_ty), mask=mask)


def softmax_no_max(x):
    check_inputs("softmax", ("x", x), ndim=2)
    y = torch.empty_like(x)
    if x.numel():
        softmax_no_max_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=SOFTMAX_BLOCK)
    return y


# ---- wrong stride: rows assumed to start every N elements (no contiguity check); a transposed or sliced view
# is read as if it were a dense row-major matrix.
def softmax_wrong_stride(x):
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    return _softmax_rows_into(x, y, x.shape[0])  # the kernel uses row * N, not x.stride(0)


# ---- stale cached result, keyed by (shape, dtype) as in gelu_cached. softmax's special inputs are checked at the
# same shapes as its random ones, so the second call at a shape already gets a stale answer.
_softmax_cache: dict = {}


def softmax_cached(x):
    check_inputs("softmax", ("x", x), ndim=2)
    key = (tuple(x.shape), x.dtype, x.device)
    if key not in _softmax_cache:
        _softmax_cache[key] = _softmax_rows_into(x, torch.empty_like(x), x.shape[0])
    return _softmax_cache[key].clone()


# ---- data race between programs: each row is split over several programs (grid axis 0 = the chunk, so the
# programs of one row are launched together), and each adds its partial sum of exp(x - max) into a per-row global
# accumulator with a plain load ... store instead of tl.atomic_add. The accumulator is read before the chunk is
# reduced, so programs running at the same time all read the same old value and all but the last addition are
# lost: the sum comes out too small and every output of the row too large. On the GPU this happens whenever a
# row has more than one chunk; the interpreter runs programs one at a time, so there it is (by luck) right.
@triton.jit
def softmax_row_max_kernel(x_ptr, max_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], NEG_INF, tl.float32)
    for start in tl.range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=NEG_INF).to(tl.float32)
        m = tl.maximum(m, x)
    tl.store(max_ptr + row, tl.max(m, axis=0))


@triton.jit
def softmax_racy_sum_kernel(x_ptr, max_ptr, sum_ptr, n_cols, BLOCK: tl.constexpr):
    chunk = tl.program_id(0)
    row = tl.program_id(1).to(tl.int64)
    total = tl.load(sum_ptr + row)  # the bug, part 1: a plain read of a value other programs are updating
    cols = chunk * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=NEG_INF).to(tl.float32)
    part = tl.sum(tl.exp(x - tl.load(max_ptr + row)), axis=0)
    tl.store(sum_ptr + row, total + part)  # the bug, part 2: a plain write (tl.atomic_add would be right)


@triton.jit
def softmax_scale_kernel(x_ptr, max_ptr, sum_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    chunk = tl.program_id(0)
    row = tl.program_id(1).to(tl.int64)
    cols = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=NEG_INF).to(tl.float32)
    y = tl.exp(x - tl.load(max_ptr + row)) / tl.load(sum_ptr + row)
    tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_race(x):
    check_inputs("softmax", ("x", x), ndim=2)
    y = torch.empty_like(x)
    n_rows, n_cols = x.shape
    if x.numel() == 0:
        return y
    row_max = torch.empty(n_rows, dtype=torch.float32, device=x.device)
    row_sum = torch.zeros(n_rows, dtype=torch.float32, device=x.device)
    chunks = triton.cdiv(n_cols, RACE_CHUNK)
    softmax_row_max_kernel[(n_rows,)](x, row_max, n_cols, BLOCK=SOFTMAX_BLOCK)
    softmax_racy_sum_kernel[(chunks, n_rows)](x, row_max, row_sum, n_cols, BLOCK=RACE_CHUNK)
    softmax_scale_kernel[(chunks, n_rows)](x, row_max, row_sum, y, n_cols, BLOCK=RACE_CHUNK)
    return y


# name -> (op, wrapper). The test file says, per name, which of the checker's messages must reject it.
PATTERNS = {
    "gelu_unwritten": ("gelu", gelu_unwritten),
    "gelu_zeros": ("gelu", gelu_zeros),
    "gelu_returns_input": ("gelu", gelu_returns_input),
    "gelu_in_place": ("gelu", gelu_in_place),
    "gelu_tail_unwritten": ("gelu", gelu_tail_unwritten),
    "gelu_off_by_one": ("gelu", gelu_off_by_one),
    "gelu_wrong_stride": ("gelu", gelu_wrong_stride),
    "gelu_low_precision": ("gelu", gelu_low_precision),
    "gelu_textbook_tanh": ("gelu", gelu_textbook_tanh),
    "gelu_cached": ("gelu", gelu_cached),
    "softmax_half_rows": ("softmax", softmax_half_rows),
    "softmax_no_max": ("softmax", softmax_no_max),
    "softmax_wrong_stride": ("softmax", softmax_wrong_stride),
    "softmax_cached": ("softmax", softmax_cached),
    "softmax_race": ("softmax", softmax_race),
}
