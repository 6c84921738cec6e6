"""Elementwise add, out = x + y, two tensors of one shape (no broadcasting).

Each output element costs two loads and one store and a single flop: 3 · numel · itemsize bytes. The kernel is
pure data movement, so it is judged against the device's copy bandwidth, like GELU; unlike GELU there is no math to
hide, so whatever it loses is lost in the memory instructions alone.
CUDA: cuda_src/add.cu. Triton: triton_src/add.py.
"""
import math

import torch

from compare.spec import ELEMENTWISE_SHAPES, Op, Tolerance


def make_inputs(shape, dtype, device, generator):
    x = torch.randn(shape, device=device, generator=generator, dtype=torch.float32)
    y = torch.randn(shape, device=device, generator=generator, dtype=torch.float32)
    return x.to(dtype), y.to(dtype)


def reference(x, y):
    return x + y


def torch_eager(x, y):
    return torch.add(x, y)


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
    # The sum of two floats is exact in float64, so a correct kernel is off only by the one rounding of its output:
    # at most half an ulp, 2^-24 (fp32), 2^-11 (fp16), 2^-8 (bf16) relative; rtol is about twice that (fp32 more).
    # atol covers results that land in the subnormal range (x ≈ -y), where the spacing of values is absolute.
    tolerances={
        torch.float32: Tolerance(atol=1e-7, rtol=1e-6),
        torch.float16: Tolerance(atol=1e-6, rtol=1e-3),
        torch.bfloat16: Tolerance(atol=1e-6, rtol=8e-3),
    },
)
