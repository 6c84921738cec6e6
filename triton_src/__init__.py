"""Triton implementations, one module per op; functions marked ``@variant(name)`` are the rows ``triton:<name>``."""
import functools
import os

import torch
import triton
import triton.language as tl

try:  # the host-side TMA descriptor (the same constructor in Triton 3.6 and 3.8)
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # an older Triton: kernels take their pointer paths
    TensorDescriptor = None


def descriptor(t: torch.Tensor, block_shape: list[int] | None = None):
    """A host-side tensor descriptor of t. Without block_shape, a placeholder: a config's pre_hook sets the real one
    before every launch (a descriptor's block shape is part of it, and each autotune config has its own)."""
    return TensorDescriptor(t, list(t.shape), list(t.stride()), block_shape or [1] * t.dim())


@functools.cache
def sm_count(device: torch.device, on_interpreter: int) -> int:
    """The multiprocessors of the device's GPU, for a grid sized to fill it; on_interpreter where there is none
    (Triton's CPU interpreter runs programs one at a time: each op picks the count its CPU tests need)."""
    return torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else on_interpreter


def runs_ptx(t: torch.Tensor) -> bool:
    """Whether a kernel launched on t runs as compiled PTX (a GPU tensor, not Triton's CPU interpreter), for the
    constexpr of a kernel that has an inline-PTX path."""
    return t.is_cuda and os.environ.get("TRITON_INTERPRET") != "1"


LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def exp2_ftz(a, PTX: tl.constexpr):
    """2^a in fp32 as one MUFU.EX2: PTX's ex2.approx.ftz.f32. tl.exp2 and tl.exp lower to ex2.approx.f32, which
    keeps subnormal results and costs a compare and two multiplies around each MUFU.EX2 in the SASS. Results below
    2^-126 flush to 0, as with CUDA's __expf. Triton's interpreter runs no PTX: with PTX false, tl.exp2."""
    if PTX:
        return tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=f,f", [a], dtype=tl.float32, is_pure=True,
                                         pack=1)
    else:
        return tl.exp2(a)


@triton.jit
def exp_ftz(x, PTX: tl.constexpr):
    """e^x as exp2_ftz(x·log2(e))."""
    return exp2_ftz(x * LOG2E, PTX)
