"""Elementwise add, out = x + y, two tensors of one shape (no broadcasting).

Each output element costs two loads and one store and a single flop: 3 · numel · itemsize bytes. The kernel is
pure data movement, so it is judged against the device's copy bandwidth, like GELU; unlike GELU there is no math to
hide, so whatever it loses is lost in the memory instructions alone.
CUDA: cuda_src/add.cu. Triton: triton_src/add.py.

The reference is IEEE addition, as torch.add gives: inf + finite = inf, inf + (-inf) = NaN, NaN + anything = NaN,
and a finite sum beyond the output dtype's largest value is ±inf (the float64 sum, rounded to the dtype, is inf
there: 65504 + 32 in fp16, say, or the sum of two values near bf16's or fp32's largest).
"""
import math

import torch

from compare.spec import ELEMENTWISE_SHAPES, Op, Tolerance
from specs import _special


def make_inputs(shape, dtype, device, generator):
    x = torch.randn(shape, device=device, generator=generator, dtype=torch.float32)
    y = torch.randn(shape, device=device, generator=generator, dtype=torch.float32)
    return x.to(dtype), y.to(dtype)


def _edges(shape, dtype, device, generator):
    return _special.mix(generator, [_special.top_binades(shape, dtype, device, generator),
                                    _special.every_binade(shape, dtype, device, generator)])


def range_edges(shape, dtype, device, generator):
    """Each of x and y: half from the dtype's two highest binades, half with every finite exponent equally likely,
    random signs. Where both are large and of one sign, about half the sums overflow the dtype (the answer is
    ±inf); of opposite signs they cancel exactly; a large and a tiny one round the tiny one away. A kernel that
    adds in a narrower type (bf16 staged through fp16) overflows where the answer is finite."""
    x, y = _edges(shape, dtype, device, generator), _edges(shape, dtype, device, generator)
    return x, _special.first_from(y, x)  # x[0] + x[0] is never 0: a one-element case always has a sum to judge


def inf_and_nan(shape, dtype, device, generator):
    """The random inputs with +inf, -inf and NaN each replacing 1 element in 8 of x and, independently, of y: every
    pairing (inf + finite, inf + inf, inf + -inf = NaN, NaN + anything) occurs."""
    x, y = make_inputs(shape, dtype, device, generator)
    return _special.sprinkle(x, generator, one_in=8), _special.sprinkle(y, generator, one_in=8)


def subnormals(shape, dtype, device, generator):
    """x and y from the dtype's subnormals and smallest normals, random signs: sums are subnormal or just normal and
    always exact, so a kernel that flushes subnormals to zero (inputs or result) is off by a whole value."""
    x, y = _special.subnormals(shape, dtype, device, generator), _special.subnormals(shape, dtype, device, generator)
    return x, _special.first_from(y, x)


def reference(x, y):
    return x + y


def torch_eager(x, y):
    return torch.add(x, y)


# The correctly rounded sum is what a correct kernel returns, in every dtype: fp32 adds are IEEE round-to-nearest,
# and fp16/bf16 inputs added in fp32 and rounded to fp16/bf16 get the same answer as one rounding of the exact sum.
# That double rounding is innocuous: the fp32 sum rounds the exact one to 24 bits, and rounding that to p bits
# equals rounding the exact sum to p bits whenever 24 >= 2p + 2 (p = 11 for fp16, 8 for bf16; Figueroa, "When is
# double rounding innocuous?", 1995); the overflow and subnormal boundaries agree as well, since fp32 holds fp16's
# and bf16's ranges. (So does the reference: a float64 sum of two fp32 values, 53 >= 2·24 + 2, converted through
# fp32.) Half an ulp then admits exactly the correctly rounded value (any other representable value is a whole
# ulp away, except the one just below a power of two, half an ulp away); atol = 0: subnormal sums are exact too.
EXACT = Tolerance(atol=0.0, rtol=0.0, ulps=0.5)

OP = Op(
    name="add",
    summary="x + y, same shape (elementwise, memory-bound)",
    make_inputs=make_inputs,
    reference=reference,
    torch_eager=torch_eager,
    bytes_moved=lambda shape, dtype: 3 * math.prod(shape) * dtype.itemsize,
    flops=lambda shape: math.prod(shape),
    **ELEMENTWISE_SHAPES,
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    # The ladder at the largest bench size (256M elements), where launch and tail effects are smallest and each
    # step's bytes in flight decide: fp32 and bf16 (4- and 2-byte elements, 4 and 8 per 16-byte packet).
    ladder_cells=[(torch.float32, (1 << 28,)), (torch.bfloat16, (1 << 28,))],
    special_inputs={"range edges": range_edges, "inf and nan": inf_and_nan, "subnormals": subnormals},
    tolerances={torch.float32: EXACT, torch.float16: EXACT, torch.bfloat16: EXACT},
)
