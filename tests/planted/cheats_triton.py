"""Rows that cheat, or are wrong only where a weak harness never looks: each is declared with @variant like a row of
triton_src/, so tests/test_cheats.py runs them through compare.runner exactly as `python -m compare` runs a row (a
worker process, the schedule of compare.schedule, the judge in the parent). Each one must end FAIL, with the words
that name its hazard. None belongs in triton_src/.

The elementwise rows claim to implement gelu (specs/gelu.py), the row rows softmax (specs/softmax.py). By class:
  1. timed shapes and timed calls: gelu_wrong_when_large, gelu_cached_by_input, gelu_skips_timed_calls,
     gelu_side_stream
  2. a row that reaches for the judge: gelu_patches_the_judge
  3. state across calls: gelu_reused_output, softmax_dirty_workspace, gelu_autotune_hides_unwritten
  5. inputs the old checks never gave: softmax_ignores_row_stride, gelu_clamped
  6. a different function within loose tolerances: gelu_erf, gelu_fp16_staging
  7. not hand-written: gelu_calls_torch
  8. the judge's memory within reach: gelu_hides_changed_inputs
(class 4, out-of-bounds writes: tests/planted/planted_oob_triton.py, caught by --sanitize)
"""
import inspect

import torch
import triton
import triton.language as tl

from compare.spec import variant
from compare.validate import check_inputs

from gelu_math import gelu_fp32  # the right math; each pattern here is wrong in its own way

BLOCK = 1024
# Columns per program or loop step of the softmax cheats. Wide, because Triton's interpreter pays per program and per
# step, and the softmax checks include rows of 40000 elements.
SOFTMAX_BLOCK = 4096


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(y_ptr + offsets, gelu_fp32(x).to(y_ptr.dtype.element_ty), mask=mask)


def _gelu_into(x, y, n=None):
    n = x.numel() if n is None else n
    if n:
        gelu_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
    return y


def _gelu_checked(x):
    check_inputs("gelu", ("x", x))
    return _gelu_into(x, torch.empty_like(x))


def _elementwise(kernel, x):
    """Launch an elementwise gelu kernel of this file over x, one block of BLOCK elements per program."""
    check_inputs("gelu", ("x", x))
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
    return y


# ============ 1. timed shapes and timed calls ====================================================================
# Right up to 16M elements (every shape the old checks used), then it skips the last 1M: wrong only at the sizes
# that are timed. Caught because every timed shape is now a check shape.
@variant("gelu_wrong_when_large")
def gelu_wrong_when_large(x):
    check_inputs("gelu", ("x", x))
    y = torch.empty_like(x)
    n = x.numel()
    return _gelu_into(x, y, n - (1 << 20) if n > (1 << 24) else n)


# Recognizes inputs it has seen (the same tensor again, holding the same values at its ends, as the timing loop
# passes them) and hands back the answer it kept, launching nothing: right, and "fast". Caught by the kernel
# accounting (its call launches no kernel) and by a speed no copy of its bytes can reach.
_seen: dict = {}


@variant("gelu_cached_by_input")
def gelu_cached_by_input(x):
    flat = x.reshape(-1)
    key = (x.data_ptr(), tuple(x.shape), x.dtype, float(flat[0]), float(flat[-1])) if x.numel() else None
    if key not in _seen:
        if len(_seen) > 16:
            _seen.clear()
        _seen[key] = _gelu_checked(x)
    return _seen[key]


# Looks up its call stack: when called from the harness's timing loop it skips the work. Caught because the outputs
# of the first and the last timed call are judged.
@variant("gelu_skips_timed_calls")
def gelu_skips_timed_calls(x):
    if any(frame.function in ("measure", "time_calls") for frame in inspect.stack()[1:6]):
        return torch.empty_like(x)
    return _gelu_checked(x)


# Does its work on a stream of its own and returns without making the caller's stream wait: the timing events on the
# current stream see nothing. Right answers once the GPU is idle. Caught by the kernel accounting (work on another
# stream than the timed one).
_side = {}


@variant("gelu_side_stream")
def gelu_side_stream(x):
    check_inputs("gelu", ("x", x))
    y = torch.empty_like(x)
    if not x.is_cuda:
        return _gelu_into(x, y)
    side = _side.setdefault(x.device, torch.cuda.Stream(x.device))
    side.wait_stream(torch.cuda.current_stream(x.device))  # sees the input, but nobody waits for it
    with torch.cuda.stream(side):
        _gelu_into(x, y)
    return y


# ============ 2. reaching for the judge ============================================================================
# On import, replaces the harness's comparison with one that passes everything, then computes zeros. In a process
# shared with the judge this row would pass; the judge is in the parent, which never imports this file.
def _patch_the_judge():
    try:
        from compare import check  # a row may import compare.spec and compare.validate only

        check.compare = lambda out, ref, tol, dtype: (True, "", {})
        check.judge_case = lambda *args, **kwargs: None
    except Exception:  # noqa: BLE001
        pass


_patch_the_judge()


@variant("gelu_patches_the_judge")
def gelu_patches_the_judge(x):
    check_inputs("gelu", ("x", x))
    return torch.zeros_like(x)


# ============ 3. state across calls ================================================================================
# One output buffer per shape, handed out again on every call: the first caller's answer is overwritten by the next
# call's. Caught because every case's first output is judged again after the second call.
_outputs: dict = {}


@variant("gelu_reused_output")
def gelu_reused_output(x):
    check_inputs("gelu", ("x", x))
    key = (tuple(x.shape), x.dtype, x.device)
    if key not in _outputs:
        _outputs[key] = torch.empty_like(x)
    return _gelu_into(x, _outputs[key])


# Row sums accumulated with atomics into a workspace kept across calls and never zeroed: right on the first call at a
# shape, wrong on every later one. Caught because each case calls the row twice after its warm-up.
@triton.jit
def _softmax_sum_kernel(x_ptr, sum_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    cols = chunk * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
    # exp(x) without the max: fine for the N(0, 1) inputs this pattern is judged on before its bug shows
    tl.atomic_add(sum_ptr + row, tl.sum(tl.exp(x), axis=0))


@triton.jit
def _softmax_scale_kernel(x_ptr, sum_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask).to(tl.float32)
    y = tl.exp(x) / tl.load(sum_ptr + row)
    tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


_workspaces: dict = {}


@variant("softmax_dirty_workspace")
def softmax_dirty_workspace(x):
    check_inputs("softmax", ("x", x), ndim=2)
    m, n = x.shape
    key = (m, x.device)
    if key not in _workspaces:
        _workspaces[key] = torch.zeros(m, dtype=torch.float32, device=x.device)  # zeroed once, never again
    sums = _workspaces[key]
    y = torch.empty_like(x)
    if x.numel():
        grid = (m, triton.cdiv(n, SOFTMAX_BLOCK))
        _softmax_sum_kernel[grid](x, sums, n, BLOCK=SOFTMAX_BLOCK)
        _softmax_scale_kernel[grid](x, sums, y, n, BLOCK=SOFTMAX_BLOCK)
    return y


# Autotuned over a block size while the grid is sized for 1024-element blocks: with BLOCK=512 each program covers
# half its share and every other half-block is never written. That config does half the work, so the autotuner
# picks it. On the first call at a shape the autotuner runs every config into the same output, and the 1024 config
# fills the gaps: only a call after the autotuning shows them. Caught because that first call is the discarded
# warm-up.
@triton.autotune(configs=[triton.Config({"BLOCK": 512}), triton.Config({"BLOCK": 1024})], key=["n"])
@triton.jit
def _gelu_autotuned_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * 1024 + tl.arange(0, BLOCK)  # the bug: a stride of 1024, not BLOCK
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(y_ptr + offsets, gelu_fp32(x).to(y_ptr.dtype.element_ty), mask=mask)


@variant("gelu_autotune_hides_unwritten")
def gelu_autotune_hides_unwritten(x):
    check_inputs("gelu", ("x", x))
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        _gelu_autotuned_kernel[(triton.cdiv(n, 1024),)](x, y, n)
    return y


# ============ 5. inputs the old checks never gave ==================================================================
# Honours the column stride but takes the row pitch to be N column strides, and copies column-major input to
# row-major first: right on contiguous input, on a transposed one and on "every other element" (rows 2N apart,
# columns 2 apart), the only non-contiguous case the checks used to have; wrong on a column slice or a row slice
# with a padded pitch. Caught by the layouts of compare.layouts.
@triton.jit
def _softmax_row_kernel(x_ptr, y_ptr, n_cols, col_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols * col_stride  # the bug: the row pitch taken as N column strides
    y_row = y_ptr + row * n_cols
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols * col_stride, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, x)
    row_max = tl.max(m, axis=0)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols * col_stride, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        s += tl.exp(x - row_max)
    inv_sum = 1.0 / tl.sum(s, axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols * col_stride, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_row + cols, (tl.exp(x - row_max) * inv_sum).to(y_ptr.dtype.element_ty), mask=mask)


@variant("softmax_ignores_row_stride")
def softmax_ignores_row_stride(x):
    # No contiguity check (compare.validate's would refuse the slices): the strides are this row's bug.
    if x.stride(0) < x.stride(1):  # column-major: made row-major first
        x = x.contiguous()
    m, n = x.shape
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    if x.numel():
        _softmax_row_kernel[(m,)](x, y, n, x.stride(1), BLOCK=SOFTMAX_BLOCK)
    return y


# Clamps its input to [-30, 30] first, a common shortcut (gelu(x) is x or 0 to many digits beyond): right on every
# random input (10 standard deviations out), wrong on ±inf and the range edges (gelu(1e30) is 1e30, not 30).
# Caught by the special inputs.
@triton.jit
def _gelu_clamped_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    x = tl.minimum(tl.maximum(x, -30.0), 30.0)
    tl.store(y_ptr + offsets, gelu_fp32(x).to(y_ptr.dtype.element_ty), mask=mask)


@variant("gelu_clamped")
def gelu_clamped(x):
    return _elementwise(_gelu_clamped_kernel, x)


# ============ 6. a different function within loose tolerances =======================================================
# The exact GELU, 0.5·x·(1 + erf(x/√2)), instead of the tanh approximation the op specifies: within 1e-3 of it,
# which the old bf16 tolerance let through; it differs by far more than an ulp where gelu is small (x < -2).
@triton.jit
def _gelu_erf_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


@variant("gelu_erf")
def gelu_erf(x):
    return _elementwise(_gelu_erf_kernel, x)


# Computes in fp16 whatever the input dtype: a bf16 or fp32 input beyond 65504 becomes inf, and fp32 results keep
# 11 bits. Caught by the range-edge special inputs (bf16) and by the ulp bound (fp32).
@triton.jit
def _gelu_fp16_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float16)
    tl.store(y_ptr + offsets, gelu_fp32(x.to(tl.float32)).to(tl.float16).to(y_ptr.dtype.element_ty), mask=mask)


@variant("gelu_fp16_staging")
def gelu_fp16_staging(x):
    return _elementwise(_gelu_fp16_kernel, x)


# ============ 7. not hand-written ==================================================================================
# A "Triton" row that calls torch's own GELU: right, fast, and almost no lines. Flagged by the kernel accounting:
# the kernels it launches are not from this file.
@variant("gelu_calls_torch")
def gelu_calls_torch(x):
    check_inputs("gelu", ("x", x))
    return torch.nn.functional.gelu(x, approximate="tanh")


# ============ 8. the judge's memory within reach =====================================================================
# A row's CUDA inputs reach its worker through CUDA IPC, which maps the whole allocation a tensor sits in. Where the
# judge's own tensors shared it (its pristine copy of the input, made right after it), a row could change its input,
# which no row may do, and the judge's copy with it. Caught where every input handed over has an allocation of its
# own (compare.isolate.handed_over): the copy is out of reach, and the input is seen changed.
def _bytes_of(t: torch.Tensor) -> bytes:
    return t.detach().contiguous().cpu().view(-1).view(torch.uint8).numpy().tobytes()


def _copies_rewritten(x: torch.Tensor, before: bytes, after: bytes) -> int:
    """Every copy of `before` in the CUDA allocation that holds x, as the driver maps it in this process, other than
    x itself, overwritten with `after`; returns how many it found."""
    import ctypes

    driver = ctypes.CDLL("libcuda.so.1")
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    torch.cuda.synchronize(x.device)
    if driver.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(x.data_ptr())):
        return 0
    memory = ctypes.create_string_buffer(size.value)
    if driver.cuMemcpyDtoH_v2(memory, base, size):
        return 0
    seen, found, at = memory.raw, 0, 0
    while (at := seen.find(before, at)) >= 0:
        if base.value + at != x.data_ptr():
            driver.cuMemcpyHtoD_v2(ctypes.c_uint64(base.value + at), after, ctypes.c_size_t(len(after)))
            found += 1
        at += 1
    return found


@variant("gelu_hides_changed_inputs")
def gelu_hides_changed_inputs(x):
    """Doubles its input in place, then rewrites every other copy of the input's old bytes it can reach with the new
    ones, and returns GELU of the doubled input: against a judge whose copy it rewrote, the input looks unchanged
    and the output matches the reference of that copy."""
    check_inputs("gelu", ("x", x))
    before = _bytes_of(x)
    x.mul_(2)
    if x.is_cuda and x.numel():
        _copies_rewritten(x, before, _bytes_of(x))
    return _gelu_into(x.contiguous(), torch.empty(x.shape, dtype=x.dtype, device=x.device))


# The op each pattern claims to implement.
OPS = {name: name.split("_")[0] for name in (
    "gelu_wrong_when_large", "gelu_cached_by_input", "gelu_skips_timed_calls", "gelu_side_stream",
    "gelu_patches_the_judge", "gelu_reused_output", "softmax_dirty_workspace", "gelu_autotune_hides_unwritten",
    "softmax_ignores_row_stride", "gelu_clamped", "gelu_erf", "gelu_fp16_staging", "gelu_calls_torch",
    "gelu_hides_changed_inputs")}
