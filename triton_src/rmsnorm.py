"""RMSNorm of an (M, N) tensor in Triton, forward and backward. Spec: specs/rmsnorm.py. CUDA side:
cuda_src/rmsnorm.cu.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/rmsnorm.md, -backward.md, -fwd-bwd.md):
  v1 basic    one row per program, the row in tiles of up to 4096 elements read twice (Σx², output); backward:
              dx per row, dweight as a row of partial sums per program, summed by a second kernel

triton_src/layernorm.py without the mean and the bias: one statistic per row, so the forward reads the row twice,
not three times, and the backward reduces one gradient across rows, not two. The cross-row reduction is
layernorm.py's (a (G, N) buffer of partial sums, one row per program, then a kernel summing columns): imported
from there, not repeated.
"""
import torch
import triton
import triton.language as tl

from compare.spec import backward, variant
from compare.validate import InputError, check_inputs
from triton_src.layernorm import load_tile, partial_sums, sum_partials_kernel

EPS = 1e-6  # the spec's (specs/rmsnorm.py)
TILE = 4096  # elements of a row a program holds at once: any N works, in tiles


@triton.jit
def rmsnorm_forward_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # int64: M·N may exceed 2^31
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        x = load_tile(x_ptr, row, n, start, BLOCK)[0]
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n + eps)
    for start in range(0, n, BLOCK):
        x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
        w = load_tile(w_ptr, 0, n, start, BLOCK)[0]
        tl.store(y_ptr + row * n + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rmsnorm_backward_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_part_ptr, m, n, BLOCK: tl.constexpr):
    # Program g takes rows g, g + G, ... and keeps their dy·x̂ in row g of the partial buffer (layernorm.py says why).
    g = tl.program_id(0).to(tl.int64)
    for row in range(g, m, tl.num_programs(0)):
        rstd = tl.load(rstd_ptr + row)
        # dx = rstd·(w·dy - x̂·mean(w·dy·x̂)), x̂ = x·rstd: one sum over the row first.
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n, BLOCK):
            x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
            dy = load_tile(dy_ptr, row, n, start, BLOCK)[0]
            w = load_tile(w_ptr, 0, n, start, BLOCK)[0]
            acc += w * dy * x * rstd
        c = tl.sum(acc, axis=0) / n
        for start in range(0, n, BLOCK):
            x, cols, mask = load_tile(x_ptr, row, n, start, BLOCK)
            dy = load_tile(dy_ptr, row, n, start, BLOCK)[0]
            w = load_tile(w_ptr, 0, n, start, BLOCK)[0]
            xhat = x * rstd
            tl.store(dx_ptr + row * n + cols, ((w * dy - xhat * c) * rstd).to(dx_ptr.dtype.element_ty), mask=mask)
            old = tl.load(dw_part_ptr + g * n + cols, mask=mask & (row != g), other=0.0)  # the first row stores
            tl.store(dw_part_ptr + g * n + cols, old + dy * xhat, mask=mask)


def _check(x, weight, grad=None):
    named = [("x", x), ("weight", weight)] + ([("dy", grad)] if grad is not None else [])
    check_inputs("rmsnorm", *named)
    if x.dim() != 2:
        raise InputError(f"rmsnorm: x has {x.dim()} dimensions (shape {tuple(x.shape)}); expected 2 (M, N)")
    if weight.dim() != 1 or weight.shape[0] != x.shape[1]:
        raise InputError(f"rmsnorm: weight has shape {tuple(weight.shape)}; expected ({x.shape[1]},), one per "
                         f"column of x")
    if grad is not None and grad.shape != x.shape:
        raise InputError(f"rmsnorm: dy has shape {tuple(grad.shape)}, x {tuple(x.shape)}; they must match")


@variant("basic")
def basic(x: torch.Tensor, weight: torch.Tensor):
    _check(x, weight)
    m, n = x.shape
    y = torch.empty_like(x)
    rstd = torch.empty(m, device=x.device, dtype=torch.float32)
    if m and n:
        rmsnorm_forward_kernel[(m,)](x, weight, y, rstd, n, EPS, BLOCK=min(TILE, triton.next_power_of_2(n)))
    return y, rstd


@backward("basic")
def basic_backward(dy, x, weight, rstd):
    _check(x, weight, grad=dy)
    m, n = x.shape
    dx, dweight = torch.empty_like(x), torch.empty_like(weight)
    if not (m and n):
        return dx, dweight.zero_()
    programs, dw_part = partial_sums(m, n, x.device, 1)
    rmsnorm_backward_kernel[(programs,)](dy, x, weight, rstd, dx, dw_part, m, n,
                                         BLOCK=min(TILE, triton.next_power_of_2(n)))
    sum_partials_kernel[(triton.cdiv(n, 256),)](dw_part, dweight, programs, n, BLOCK=256)
    return dx, dweight
