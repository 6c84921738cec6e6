"""GELU with the tanh approximation, y = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), as in GPT-2.

Each element is read once and written once: 2 · numel · itemsize bytes, about 8 flops per element. That is far
below any arithmetic limit, so the kernels are judged against the device's copy bandwidth.
CUDA: cuda_src/gelu.cu. Triton: triton_src/gelu.py.
"""
import math

import torch

from compare.spec import ELEMENTWISE_SHAPES, Op, Tolerance


def make_inputs(shape, dtype, device, generator):
    # Scale 3 puts real mass on x < -3, where 1 + tanh(u) cancels and a careless formula loses its accuracy.
    x = torch.randn(shape, device=device, generator=generator, dtype=torch.float32) * 3
    return (x.to(dtype),)


def reference(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def torch_eager(x):
    return torch.nn.functional.gelu(x, approximate="tanh")


OP = Op(
    name="gelu",
    summary="GELU, tanh approximation (elementwise, memory-bound)",
    make_inputs=make_inputs,
    reference=reference,
    torch_eager=torch_eager,
    bytes_moved=lambda shape, dtype: 2 * math.prod(shape) * dtype.itemsize,
    flops=lambda shape: 8 * math.prod(shape),
    **ELEMENTWISE_SHAPES,
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    # fp16/bf16 outputs are computed in fp32 and rounded once: half an ulp is 2^-11 (fp16) and 2^-8 (bf16)
    # relative; the tolerances allow about two ulps. atol covers outputs near zero.
    tolerances={
        torch.float32: Tolerance(atol=1e-5, rtol=1e-5),
        torch.float16: Tolerance(atol=1e-4, rtol=1e-3),
        torch.bfloat16: Tolerance(atol=1e-3, rtol=8e-3),
    },
)
