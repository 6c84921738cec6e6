"""What LayerNorm and RMSNorm share in their specs: shapes, inputs, special inputs and the tolerances derived from
their arithmetic (specs/layernorm.py and specs/rmsnorm.py say what differs).

Both normalize each row of an (M, N) tensor with statistics taken over its N elements in fp32 and scale it by a
weight of N elements; their backward passes reduce over the M rows too, for the weight's (and bias's) gradient.
"""
import math

import torch

from compare.spec import Tolerance
from specs import _special

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
# Check shapes: N = 1 (one row: the forward's output is finite, not constant), odd N (scalar tails of vector paths),
# rows of one warp's and one block's worth and just past them, rows longer than one block holds in registers, few
# rows (a weight gradient of 1 to 7 partial sums) and many (thousands of partial sums to reduce).
CHECK_SHAPES = [(1, 1), (7, 3), (5, 127), (33, 1000), (64, 1025), (300, 4097), (3, 40000), (8, 70000), (2048, 96)]
BENCH_SHAPES = [(4096, 1024), (4096, 2048), (4096, 4096), (4096, 8192), (4096, 16384), (1024, 32768), (256, 65536)]
QUICK_BENCH_SHAPES = [(4096, 4096), (256, 65536)]
INTERPRET_SHAPES = [(1, 1), (7, 3), (5, 127), (4, 300), (33, 64)]
# Spread into an Op with **SHAPES.
SHAPES = dict(check_shapes=CHECK_SHAPES, bench_shapes=BENCH_SHAPES, quick_bench_shapes=QUICK_BENCH_SHAPES,
              interpret_shapes=INTERPRET_SHAPES, dtypes=DTYPES, shape_names=("M", "N"))
# Backward only: a column per row, where LayerNorm's output is its bias (constant, refused as degenerate in the
# forward) while its gradients still tell right from wrong.
BACKWARD_CHECK_SHAPES = [(17, 1)]


def randn(shape, dtype, device, generator, scale=1.0, offset=0.0):
    return (torch.randn(shape, device=device, generator=generator, dtype=torch.float32) * scale + offset).to(dtype)


def params(n, dtype, device, generator):
    """A weight around 1 and a bias around 0, each with a spread: a kernel that skips either, or swaps them, fails."""
    return randn((n,), dtype, device, generator, 0.5, 1.0), randn((n,), dtype, device, generator, 0.5)


def inputs_with_params(params_count: int):
    """make_inputs of a norm with `params_count` parameter vectors (weight, then bias): x from make_x."""
    def from_x(make_x):
        def made(shape, dtype, device, generator):
            x = make_x(shape, dtype, device, generator)
            return (x, *params(shape[1], dtype, device, generator)[:params_count])

        made.__doc__ = make_x.__doc__
        return made

    return from_x


def special_inputs(with_params) -> dict:
    """The special input sets of both norms, each x given its parameters by with_params."""
    return {"large offset": with_params(large_offset), "large magnitudes": with_params(large_magnitudes),
            "inf and nan": with_params(inf_and_nan), "subnormals": with_params(subnormals)}


def bytes_moved(shape, dtype, tensors_mn: int, tensors_n: int) -> int:
    """Bytes of `tensors_mn` (M, N) tensors and `tensors_n` vectors of N elements, read or written once."""
    m, n = shape
    return (tensors_mn * m * n + tensors_n * n) * dtype.itemsize


def grad_output(inputs, generator):
    x = inputs[0]
    return randn(tuple(x.shape), x.dtype, x.device, generator)


def large_offset(shape, dtype, device, generator):
    """Rows of 1000 + N(0, 1): E[x^2] - E[x]^2 loses every digit of the variance to cancellation in fp32 (1e6 against
    1), so a kernel that takes the variance that way fails; a two-pass or Welford variance is right. (bf16 keeps
    1000 ± 2 to a spacing of 4, fp16 to 0.5: the rows are coarse, the hazard the same.)"""
    return randn(shape, dtype, device, generator, 1.0, OFFSET)


def large_magnitudes(shape, dtype, device, generator):
    """Rows scaled far from 1: fp16 in its two highest binades (up to 65504, whose squares exist only in fp32), fp32
    and bf16 around 2^40 (a row's sum of squares, up to 2^96, stays within fp32), a random sign per element. The
    output is as if the row were of unit scale: a kernel accumulating in the input's dtype overflows."""
    if dtype == torch.float16:
        return _special.top_binades(shape, dtype, device, generator)
    return randn(shape, dtype, device, generator, 2.0**40)


def inf_and_nan(shape, dtype, device, generator):
    """Rows by r % 4: 0 one NaN, 1 one +inf, 2 one -inf, 3 random. The statistics of a row holding any of them are
    not finite, and the reference's output for it follows IEEE arithmetic through the formula (specs say what that
    gives); other rows must be untouched by their neighbours."""
    m, n = shape
    x = randn(shape, torch.float32, device, generator)
    kind = torch.arange(m, device=device)[:, None] % 4
    col = torch.arange(n, device=device)[None, :]
    spot = torch.randint(0, n, (m, 1), generator=generator, device=device)
    for k, value in ((0, float("nan")), (1, float("inf")), (2, float("-inf"))):
        x = torch.where((kind == k) & (col == spot), value, x)
    return x.to(dtype)


def subnormals(shape, dtype, device, generator):
    """Rows of the dtype's subnormals and smallest normals: the variance is far below eps, so rstd is about
    1/sqrt(eps) and the output shows where eps was added (inside the square root, once)."""
    return _special.subnormals(shape, dtype, device, generator)


OFFSET = 1000.0  # large_offset's rows


def offset_error(inputs: str) -> float:
    """The fp32 error a right kernel carries on rows far from zero: the row's mean is rounded at |mean|·2^-24 per
    step of its sum (a few dozen steps in any blocked order), and x - mean, scaled by rstd (~1 here), carries it
    into every output: about 2^-24·1000·96 = 0.006 on the "large offset" rows, 0 elsewhere."""
    return 2.0**-24 * OFFSET * 96 if inputs == "large offset" else 0.0


def tolerances(dtype, shape, inputs, out_scale: float):
    """The output's bound. fp16/bf16: computed in fp32 (statistics accurate to a few 2^-24 relative over N values)
    and rounded once: within 1 ulp of the correctly rounded output, with an absolute term for the fp32 error of
    (x - mean)·rstd·w where the bias cancels it (out_scale: the largest |x̂·w| + |b| expected, ~6 for these inputs;
    0 for RMSNorm, whose output is a product: relative bounds alone, 2^-18 in fp32, subnormal outputs included).
    fp32: that same error bound, 2^-16 relative to out_scale plus 2^-20 relative to the output (sums of N terms in
    fp32 are good to about log2(N)·2^-24 in a tree, N·2^-24 in a worst-case order: 2^-16 covers N = 256 in the
    worst order, and any N in a tree), plus offset_error on rows far from zero. A different formula fails: the
    unbiased variance (N - 1) differs by 1/(2N), 17% at N = 3; eps outside the square root or added twice fails on
    the subnormal rows; a variance taken as E[x²] - E[x]² loses about 1e6·2^-24 = 6% of it on "large offset"."""
    if not out_scale:  # RMSNorm: y = x·rstd·w is a product, no sum that can cancel: a relative bound
        # fp32: atol of 8 spacings of its subnormals, where an output's rounding is absolute, not relative.
        return Tolerance(atol=2.0**-146, rtol=2.0**-18) if dtype == torch.float32 else Tolerance(atol=0.0, rtol=0.0, ulps=1)
    fp32_error = 2.0**-16 * out_scale + offset_error(inputs)
    if dtype == torch.float32:
        return Tolerance(atol=fp32_error, rtol=2.0**-20)
    return Tolerance(atol=fp32_error, rtol=0.0, ulps=1)


def grad_tolerances(dtype, shape, inputs, grads: int):
    """Bounds of dx and of the reductions over rows (dweight, dbias). dx = rstd·(w·dy - mean(w·dy) - x̂·mean(w·dy·x̂)):
    fp32 error a few 2^-24 of its terms' scale (|w·dy| up to ~10 here) plus the row sums', as in the forward, plus
    offset_error twice over (x̂ enters twice). dweight = Σ_r dy·x̂ and dbias = Σ_r dy over M rows: fp32 partial sums
    in any order are within M·2^-24 of Σ|terms| (about 0.8·M for these inputs) at worst; a tree or two-stage order
    is far better, so the bound is 2^-24·M·2 absolute, against |dweight| ~ sqrt(M): a dropped block of rows, a race
    or a reused partial fails. On rows far from zero each row's x̂ carries offset_error, a random walk over M rows
    in dweight: 4·sqrt(M) of it. fp16/bf16 outputs add 1 ulp of their rounding."""
    m, n = shape
    dx = 2.0**-15 * 10 + 2 * offset_error(inputs)
    reduced = 2.0**-24 * m * 2 + 2.0**-20 + 4 * math.sqrt(m) * offset_error(inputs)
    ulps = 0 if dtype == torch.float32 else 1
    return (Tolerance(atol=dx, rtol=2.0**-20, ulps=ulps),
            *[Tolerance(atol=reduced, rtol=2.0**-20, ulps=ulps)] * (grads - 1))


def flops_per_element(shape, per_element: int) -> int:
    return per_element * math.prod(shape)
