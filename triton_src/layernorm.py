"""LayerNorm of an (M, N) tensor in Triton, forward and backward. Spec: specs/layernorm.py. CUDA side:
cuda_src/layernorm.cu.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/layernorm.md, -backward.md, -fwd-bwd.md):
  v1 basic    one row per program, the row in tiles of up to 4096 elements read three times (mean, variance,
              output); backward: dx per row, dweight and dbias as a row of partial sums per program, summed by a
              second kernel

The forward saves mean and rstd (2·M floats) for the backward, which then reads x once more instead of recomputing
the statistics. The backward's weight and bias gradients are sums over all M rows: each program owns a fixed set
of rows (r, r + G, r + 2G, ...) and adds their dy·x̂ and dy into its own row of a (G, N) fp32 buffer, which no
other program touches, so no atomics or locks are needed; a second kernel sums the G rows per column. The buffer
is written in full by every call (each program's first row stores, later rows add), so nothing carries over
between calls.
"""
import torch
import triton
import triton.language as tl

from compare.spec import backward, variant
from compare.validate import InputError, check_inputs

EPS = 1e-5  # the spec's (specs/layernorm.py)
TILE = 4096  # elements of a row a program holds at once: any N works, in tiles


def _tile(n: int) -> int:
    return min(TILE, triton.next_power_of_2(n))


@triton.jit
def load_tile(ptr, row, n, start, BLOCK: tl.constexpr):
    """Elements start .. start + BLOCK of row `row` of a row-major (M, n) tensor (row 0 of a vector), widened to
    fp32 and 0 past the row's end, with their columns and mask."""
    cols = start + tl.arange(0, BLOCK)
    mask = cols < n
    return tl.load(ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32), cols, mask


@triton.jit
def layernorm_forward_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # int64: M·N may exceed 2^31
    # Two passes for the statistics: the mean, then the squared deviations from it. One pass of Σx and Σx² would
    # lose the variance to cancellation on rows far from zero (specs/_norm.py, "large offset").
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        acc += load_tile(x_ptr, row, n, start, BLOCK)[0]
    mean = tl.sum(acc, axis=0) / n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
        d = tl.where(mask, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n + eps)
    for start in range(0, n, BLOCK):
        x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
        w = load_tile(w_ptr, 0, n, start, BLOCK)[0]
        b = load_tile(b_ptr, 0, n, start, BLOCK)[0]
        tl.store(y_ptr + row * n + cols, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def layernorm_backward_kernel(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, dw_part_ptr, db_part_ptr, m, n,
                              BLOCK: tl.constexpr):
    # Program g takes rows g, g + G, g + 2G, ... and keeps their dy·x̂ and dy in row g of the partial buffers.
    g = tl.program_id(0).to(tl.int64)
    programs = tl.num_programs(0)
    for row in range(g, m, programs):
        mean = tl.load(mean_ptr + row)
        rstd = tl.load(rstd_ptr + row)
        # dx = rstd·(w·dy - mean(w·dy) - x̂·mean(w·dy·x̂)): two sums over the row first.
        sum_wdy = tl.zeros([BLOCK], dtype=tl.float32)
        sum_wdy_xhat = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n, BLOCK):
            x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
            dy = load_tile(dy_ptr, row, n, start, BLOCK)[0]
            w = load_tile(w_ptr, 0, n, start, BLOCK)[0]
            xhat = tl.where(mask, (x - mean) * rstd, 0.0)
            sum_wdy += w * dy
            sum_wdy_xhat += w * dy * xhat
        c_wdy = tl.sum(sum_wdy, axis=0) / n
        c_wdy_xhat = tl.sum(sum_wdy_xhat, axis=0) / n
        for start in range(0, n, BLOCK):
            x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
            dy = load_tile(dy_ptr, row, n, start, BLOCK)[0]
            w = load_tile(w_ptr, 0, n, start, BLOCK)[0]
            xhat = tl.where(mask, (x - mean) * rstd, 0.0)
            dx = (w * dy - c_wdy - xhat * c_wdy_xhat) * rstd
            tl.store(dx_ptr + row * n + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)
            # The program's first row stores, later ones add: the buffer needs no zeroing between calls.
            later = row != g
            dw_old = tl.load(dw_part_ptr + g * n + cols, mask=mask & later, other=0.0)
            db_old = tl.load(db_part_ptr + g * n + cols, mask=mask & later, other=0.0)
            tl.store(dw_part_ptr + g * n + cols, dw_old + dy * xhat, mask=mask)
            tl.store(db_part_ptr + g * n + cols, db_old + dy, mask=mask)


@triton.jit
def sum_partials_kernel(part_ptr, out_ptr, rows, n, BLOCK: tl.constexpr):
    """out[c] = Σ_r part[r, c]: each program sums a block of columns over the G partial rows."""
    cols = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for r in range(0, rows):
        acc += tl.load(part_ptr + r * n + cols, mask=mask, other=0.0)
    tl.store(out_ptr + cols, acc.to(out_ptr.dtype.element_ty), mask=mask)


def _check(x, weight, *others, grad=None):
    named = [("x", x), ("weight", weight), *others]
    if grad is not None:
        named.insert(0, ("dy", grad))
    check_inputs("layernorm", *named)
    if x.dim() != 2:
        raise InputError(f"layernorm: x has {x.dim()} dimensions (shape {tuple(x.shape)}); expected 2 (M, N)")
    for name, t in [*others[:1], ("weight", weight)]:
        if t.dim() != 1 or t.shape[0] != x.shape[1]:
            raise InputError(f"layernorm: {name} has shape {tuple(t.shape)}; expected ({x.shape[1]},), one per "
                             f"column of x")
    if grad is not None and grad.shape != x.shape:
        raise InputError(f"layernorm: dy has shape {tuple(grad.shape)}, x {tuple(x.shape)}; they must match")


def _programs(m: int, device: torch.device) -> int:
    """How many programs share the backward's rows (and so how many partial rows there are): enough to fill the
    GPU a few times over; the interpreter runs programs one at a time, so a handful there."""
    if device.type != "cuda":
        return min(m, 4)
    return min(m, 4 * torch.cuda.get_device_properties(device).multi_processor_count)


def partial_sums(m: int, n: int, device: torch.device, count: int) -> tuple:
    """The backward's programs and `count` (G, N) fp32 buffers of partial sums, one row per program."""
    programs = _programs(m, device)
    return (programs, *[torch.empty((programs, n), device=device, dtype=torch.float32) for _ in range(count)])


@variant("basic")
def basic(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor):
    _check(x, weight, ("bias", bias))
    m, n = x.shape
    y = torch.empty_like(x)
    mean = torch.empty(m, device=x.device, dtype=torch.float32)
    rstd = torch.empty(m, device=x.device, dtype=torch.float32)
    if m and n:
        layernorm_forward_kernel[(m,)](x, weight, bias, y, mean, rstd, n, EPS, BLOCK=_tile(n))
    return y, mean, rstd


@backward("basic")
def basic_backward(dy, x, weight, bias, mean, rstd):
    _check(x, weight, ("bias", bias), grad=dy)
    m, n = x.shape
    dx = torch.empty_like(x)
    dweight, dbias = torch.empty_like(weight), torch.empty_like(bias)
    if not (m and n):
        return dx, dweight.zero_(), dbias.zero_()
    programs, dw_part, db_part = partial_sums(m, n, x.device, 2)
    layernorm_backward_kernel[(programs,)](dy, x, weight, mean, rstd, dx, dw_part, db_part, m, n, BLOCK=_tile(n))
    for part, out in ((dw_part, dweight), (db_part, dbias)):
        sum_partials_kernel[(triton.cdiv(n, 256),)](part, out, programs, n, BLOCK=256)
    return dx, dweight, dbias
