"""Triton implementations, one module per op; functions marked ``@variant(name)`` are the rows ``triton:<name>``."""
import functools

import torch

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
