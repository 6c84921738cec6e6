"""Input checks for the Python (Triton) wrappers, the counterpart of cuda_src/lab_torch.h: every wrapper rejects
what its kernel can't handle with an exception that names the op and the problem, never a wrong answer or a crash.
"""
from __future__ import annotations

import os

import torch

FLOAT_TYPES = (torch.float32, torch.float16, torch.bfloat16)


class InputError(ValueError):
    """A tensor the kernel can't take; the message says which op, which argument and what to do."""


def check_device(op: str, name: str, t: torch.Tensor) -> None:
    """The GPU kernels need device memory; the CPU is allowed only when Triton is interpreting."""
    if not t.is_cuda and os.environ.get("TRITON_INTERPRET") != "1":
        raise InputError(f"{op}: {name} is on {t.device}; move it to a CUDA device first (.cuda())")


def check_inputs(op: str, *named: tuple[str, torch.Tensor], dtypes=FLOAT_TYPES, ndim: int | None = None,
                 same_shape: bool = False) -> None:
    first = None
    for name, t in named:
        if not isinstance(t, torch.Tensor):
            raise InputError(f"{op}: {name} is a {type(t).__name__}, expected a torch.Tensor")
        check_device(op, name, t)
        if t.dtype not in dtypes:
            names = ", ".join(str(d).removeprefix("torch.") for d in dtypes)
            raise InputError(f"{op}: {name} has dtype {str(t.dtype).removeprefix('torch.')}; this kernel takes {names}")
        if ndim is not None and t.dim() != ndim:
            raise InputError(f"{op}: {name} has {t.dim()} dimensions (shape {tuple(t.shape)}); expected {ndim}")
        if not t.is_contiguous():
            raise InputError(f"{op}: {name} is not contiguous (shape {tuple(t.shape)}, strides {t.stride()}); "
                             f"pass .contiguous()")
        if first is None:
            first = (name, t)
            continue
        if t.device != first[1].device:
            raise InputError(f"{op}: {name} is on {t.device} but {first[0]} is on {first[1].device}")
        if t.dtype != first[1].dtype:
            raise InputError(f"{op}: dtypes differ: {first[0]} is {first[1].dtype}, {name} is {t.dtype}")
        if same_shape and t.shape != first[1].shape:
            raise InputError(f"{op}: shapes differ: {first[0]} {tuple(first[1].shape)}, {name} {tuple(t.shape)} "
                             f"(this kernel does not broadcast)")
