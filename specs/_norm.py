"""What LayerNorm and RMSNorm share in their specs: shapes, inputs, special inputs and the tolerances derived from
their arithmetic (specs/layernorm.py and specs/rmsnorm.py say what differs).

Both normalize each row of an (M, N) tensor with statistics taken over its N elements in fp32 and scale it by a
weight of N elements; their backward passes reduce over the M rows too, for the weight's (and bias's) gradient.
"""
import math

import torch

from compare.spec import Target, Tolerance
from specs import _special

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
# Check shapes: N = 1 (one row: the forward's output is finite, not constant), odd N (scalar tails of vector paths),
# rows of one warp's and one block's worth and just past them, rows longer than one block holds in registers, few
# rows (a weight gradient of 1 to 7 partial sums) and many (thousands of partial sums to reduce); an odd N that a
# cluster of blocks holds (20001: CUDA's v5 backward, element by element; 40001: its fp32 forward likewise); 16-bit
# rows of 513 packets (4104: the shortest of v8's backward rows, and v12's forward with packets past the row's end).
CHECK_SHAPES = [(1, 1), (7, 3), (5, 127), (33, 1000), (64, 1025), (300, 4097), (3, 40000), (8, 70000), (2048, 96),
                (5, 20001), (2, 40001), (33, 4104)]
BENCH_SHAPES = [(4096, 1024), (4096, 2048), (4096, 4096), (4096, 8192), (4096, 16384), (1024, 32768), (256, 65536)]
QUICK_BENCH_SHAPES = [(4096, 4096), (256, 65536)]
INTERPRET_SHAPES = [(1, 1), (7, 3), (5, 127), (4, 300), (33, 64)]
# For the sanitizer, after the first small check shapes (rows of at most 1025 elements): 16-bit rows of 512 packets
# (v9 in blocks of 256 threads), 1025 (v8, and LayerNorm's v9, with a packet past the last full turn of the
# threads) and 2048 (v9 in LayerNorm, v8 in RMSNorm), 4096 (v10 in clusters of two) and 8192 (v10 and the forward's
# v11 in clusters of four), and 513 packets (v12's forward in blocks of 256 threads of four packets, about half of
# them past the row's end); in fp32 the same N are rows for v6/v7 and for v10's and v11's clusters.
SANITIZE_SHAPES = [(9, 4096), (5, 8200), (3, 16384), (3, 32768), (2, 65536), (5, 4104)]
# Spread into an Op with **SHAPES.
# 2^31 + 1024 elements in rows of 1024, a length every step of both sides takes itself (none hands it down): a
# row's offset row·N computed in 32 bits wraps for the last rows (tests/test_bad_inputs.py).
INDEX_OVERFLOW_SHAPE = (2**21 + 1, 1024)
# The ladder's cells, where the steps take different rows: the largest shape alone (N = 64K) is a row over a cluster,
# which v3, v4, v6 and v8 each hand down, so their columns there would show only the steps for long rows.
LADDER_CELLS = [(torch.float32, (4096, 4096)), (torch.bfloat16, (4096, 2048)), (torch.bfloat16, (4096, 16384)),
                (torch.bfloat16, (256, 65536))]
SHAPES = dict(check_shapes=CHECK_SHAPES, bench_shapes=BENCH_SHAPES, quick_bench_shapes=QUICK_BENCH_SHAPES,
              interpret_shapes=INTERPRET_SHAPES, dtypes=DTYPES, shape_names=("M", "N"),
              index_overflow_shape=INDEX_OVERFLOW_SHAPE, ladder_cells=LADDER_CELLS, sanitize_shapes=SANITIZE_SHAPES)
# The goals both norms' rows are judged against (python -m compare summary): the forward near a copy of its bytes
# from N = 4K (a little less at N = 64K in bf16), the backward, whose weight gradient is a sum across rows, a little
# further from it; and in both, the best row no slower than torch.compile's and Liger's.
AHEAD_OF_PEERS = Target("every shape", ahead_of=("torch:compile", "peer:liger"))
FORWARD_TARGETS = (
    Target("N ≥ 4K", at_least=0.90, dtypes=("float32",), where=lambda shape: shape[-1] >= 4096),
    Target("4K ≤ N < 64K", at_least=0.90, dtypes=("bfloat16",), where=lambda shape: 4096 <= shape[-1] < 65536),
    Target("N = 64K", at_least=0.85, dtypes=("bfloat16",), where=lambda shape: shape[-1] == 65536),
    AHEAD_OF_PEERS,
)
BACKWARD_TARGETS = (Target("N ≥ 4K", at_least=0.80, where=lambda shape: shape[-1] >= 4096), AHEAD_OF_PEERS)
# Backward only: a column per row, where LayerNorm's output is its bias (constant, refused as degenerate in the
# forward) while its gradients still tell right from wrong.
BACKWARD_CHECK_SHAPES = [(17, 1)]


def randn(shape, dtype, device, generator, scale=1.0, offset=0.0):
    return (torch.randn(shape, device=device, generator=generator, dtype=torch.float32) * scale + offset).to(dtype)


# How far from zero every weight and bias element is kept. At N = 1 LayerNorm's output is its bias alone and
# RMSNorm's ± its weight: an element near zero would let an all-zeros output pass, and the check refuses such a case
# as degenerate (as it did one row's check after timing before the gap).
PARAM_GAP = 0.125


def params(n, dtype, device, generator):
    """A weight around 1 and a bias around 0, each with a spread and never within PARAM_GAP of zero: a kernel that
    skips either, or swaps them, fails."""
    weight = randn((n,), torch.float32, device, generator, 0.5, 1.0)
    bias = randn((n,), torch.float32, device, generator, 0.5)
    return tuple((p + PARAM_GAP * torch.sign(p)).to(dtype) for p in (weight, bias))


def inputs_with_params(params_count: int):
    """make_inputs of a norm with `params_count` parameter vectors (weight, then bias): x from make_x."""
    def from_x(make_x):
        def made(shape, dtype, device, generator):
            x = make_x(shape, dtype, device, generator)
            return (x, *params(shape[1], dtype, device, generator)[:params_count])

        made.__doc__ = make_x.__doc__
        return made

    return from_x


def special_inputs(with_params, infinities: bool = True) -> dict:
    """The special input sets of both norms, each x given its parameters by with_params (infinities: inf_and_nan)."""
    return {"large offset": with_params(large_offset), "large magnitudes": with_params(large_magnitudes),
            "inf and nan": with_params(inf_and_nan(infinities)), "subnormals": with_params(subnormals)}


def bytes_moved(shape, dtype, tensors_mn: int, tensors_n: int) -> int:
    """Bytes of `tensors_mn` (M, N) tensors and `tensors_n` vectors of N elements, read or written once."""
    m, n = shape
    return (tensors_mn * m * n + tensors_n * n) * dtype.itemsize


def grad_output(inputs, generator):
    x = inputs[0]
    return randn(tuple(x.shape), x.dtype, x.device, generator)


def large_offset(shape, dtype, device, generator):
    """Rows of ±1000 + σ·z, a sign per row: E[x^2] - E[x]^2 loses the variance to cancellation in fp32 (1e6
    against σ²), so a kernel that takes the variance that way fails; a two-pass or Welford variance is right.
    σ keeps every row's spread above its dtype's spacing at 1000 (fp16 0.5, bf16 4): σ = 1, bf16 8, so rstd is at
    most about 1 and the rounding of the mean (offset_error) is not magnified; with σ = 1 a bf16 row could round
    to a few distinct values and a variance near 0. Each row's z is standardized (mean 0, spread exactly 1): a
    short row of plain normal draws can by chance hold values close together (three within 0.05 of each other),
    whose rstd in the hundreds would magnify the mean's rounding past any bound that a right kernel meets on
    every other row. The sign makes RMSNorm's one-column rows differ."""
    m, n = shape
    spread = 8.0 if dtype == torch.bfloat16 else 1.0
    sign = torch.randint(0, 2, (m, 1), generator=generator, device=device).float() * 2 - 1
    z = torch.randn(shape, device=device, generator=generator, dtype=torch.float32)
    if n > 1:  # a row of one value has no spread to set: x - mean is 0 whatever it holds
        z = z - z.mean(dim=1, keepdim=True)
        z = z / z.pow(2).mean(dim=1, keepdim=True).sqrt()
    return ((z * spread + OFFSET) * sign).to(dtype)


def large_magnitudes(shape, dtype, device, generator):
    """Rows scaled far from 1: fp16 in its two highest binades (up to 65504, whose squares exist only in fp32), fp32
    and bf16 around 2^40 (a row's sum of squares, up to 2^96, stays within fp32), a random sign per element. The
    output is as if the row were of unit scale: a kernel accumulating in the input's dtype overflows."""
    if dtype == torch.float16:
        return _special.top_binades(shape, dtype, device, generator)
    return randn(shape, dtype, device, generator, 2.0**40)


def inf_and_nan(infinities: bool = True):
    """The "inf and nan" input: rows by r % 4: 0 random, 1 one NaN, 2 one +inf, 3 one -inf (with infinities False,
    NaN in every other row instead). The statistics of a row holding any of them are not finite, and the reference's
    output for it follows IEEE arithmetic through the formula (specs say what that gives); other rows must be
    untouched by their neighbours, and the first row is always finite, so that no shape is all non-finite rows."""
    values = (float("nan"), float("inf"), float("-inf")) if infinities else (float("nan"),)

    def made(shape, dtype, device, generator):
        m, n = shape
        x = randn(shape, torch.float32, device, generator)
        row = torch.arange(m, device=device)[:, None]
        kind = row % 4 if infinities else row % 2  # kind 0: finite; kind k: values[k - 1]
        col = torch.arange(n, device=device)[None, :]
        spot = torch.randint(0, n, (m, 1), generator=generator, device=device)
        for k, value in enumerate(values, start=1):
            x = torch.where((kind == k) & (col == spot), value, x)
        return x.to(dtype)

    made.__doc__ = inf_and_nan.__doc__
    return made


def subnormals(shape, dtype, device, generator):
    """Rows of the dtype's subnormals and smallest normals: the variance is far below eps, so rstd is about
    1/sqrt(eps) and the output shows where eps was added (inside the square root, once)."""
    return _special.subnormals(shape, dtype, device, generator)


OFFSET = 1000.0  # large_offset's rows


def offset_error(inputs: str, n: int) -> float:
    """The fp32 error a right kernel carries on rows far from zero: the row's mean is rounded at |mean|·2^-24 per
    step of its sum (a few dozen steps in any blocked order), and x - mean, scaled by rstd (~1 here), carries it
    into every output: about 2^-24·1000·96 = 0.006 on the "large offset" rows of N > 1, 0 elsewhere. A row of one
    element is its own mean, exactly (no addition, a division by 1), so x - mean is 0 and carries no error: there
    the term would only widen the bound, and LayerNorm's output at N = 1 is its bias, a single value that fell
    inside 0.006 by chance about one draw in a hundred and was refused as a case an all-zeros output passes (seen on
    an H200, layernorm triton:direct, bf16 M=1 N=1)."""
    return 2.0**-24 * OFFSET * 96 if inputs == "large offset" and n > 1 else 0.0


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
    fp32_error = 2.0**-16 * out_scale + offset_error(inputs, shape[1])
    if dtype == torch.float32:
        return Tolerance(atol=fp32_error, rtol=2.0**-20)
    return Tolerance(atol=fp32_error, rtol=0.0, ulps=1)


def grad_tolerances(dtype, shape, inputs, grads: int, centered: bool = True):
    """Bounds of dx and of the reductions over rows (dweight, then dbias where grads = 3).
    dx = rstd·(w·dy - mean(w·dy) - x̂·mean(w·dy·x̂)): fp32 error a few 2^-24 of its terms' scale (|w·dy| up to ~10
    here) plus the row sums', as in the forward, plus offset_error twice over (x̂ enters twice).
    dweight = Σ_r dy·x̂ and dbias = Σ_r dy over M rows: however the sum is ordered (one thread along the rows,
    atomics, partial sums per block, a tree), each of its M - 1 additions rounds at 2^-24 of the partial sum it
    makes, and a partial sum of terms of unit spread (dy and x̂ are) stays within 5·sqrt(M): the bound is
    2^-24·M·5·sqrt(M), 0.08 at M = 4096. (Its roundings being a random walk, a sum along the rows typically ends
    a few 2^-24·M from the exact sum: beyond 2^-24·2·M in some columns, inside this bound by far.) A
    dropped block of rows, a race or a reused partial moves the sum by whole terms (about 1 each) and fails. On rows
    far from zero each row's x̂ carries offset_error, a random walk over M rows in dweight (not in dbias, which has
    no x̂): 4·sqrt(M) of it. RMSNorm (centered False) takes no mean, so its x̂ = x·rstd carries no such error, and
    the term would only widen the bound: at M = 17, N = 1 a dweight of one element, a sum of 17 unit terms, fell
    inside it by chance and the judge refused the case as one an all-zeros output passes. fp16/bf16 outputs add 1
    ulp of their rounding."""
    m, n = shape
    ulps = 0 if dtype == torch.float32 else 1
    offset = offset_error(inputs, n) if centered else 0.0
    dx = 2.0**-15 * 10 + 2 * offset
    summed = 2.0**-24 * m * 5 * math.sqrt(m) + 2.0**-20
    dweight = summed + 4 * math.sqrt(m) * offset
    return (Tolerance(atol=dx, rtol=2.0**-20, ulps=ulps), Tolerance(atol=dweight, rtol=2.0**-20, ulps=ulps),
            *[Tolerance(atol=summed, rtol=2.0**-20, ulps=ulps)] * (grads - 2))


def wider_than_one_block(shape) -> bool:
    """The shapes the Liger-Kernel peer rows (peer:liger) refuse: Liger keeps a row in one Triton block of at most
    65536 elements (liger_kernel.ops.utils.calculate_settings raises past it)."""
    return shape[1] > 65536


def flops_per_element(shape, per_element: int) -> int:
    return per_element * math.prod(shape)
