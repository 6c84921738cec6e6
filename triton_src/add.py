"""Elementwise add, out = x + y, in Triton. Spec: specs/add.py. CUDA side: cuda_src/add.cu.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/add.md):
  v1 basic    the seed kernel: 1024-element blocks, one program each
  v2 tuned    block size and warps autotuned per size: several 16-byte loads in flight per thread

The same two steps as triton_src/gelu.py. Where CUDA's v2 spells out 128-bit packets and a scalar tail, Triton gets
both from the compiler: it vectorizes a contiguous block's loads to 16 bytes when it can prove the pointers
aligned (Triton specializes on arguments divisible by 16) and masks the tail.
"""
import torch
import triton
import triton.language as tl

from compare.spec import variant
from compare.validate import check_inputs


# ---- basic: the seed kernel. One block of 1024 elements per program. ----------------------------------------------
@triton.jit
def add_basic_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)  # int64: n may exceed 2^31
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x + y).to(out_ptr.dtype.element_ty), mask=mask)


@variant("basic")
def basic(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_inputs("add", ("x", x), ("y", y), same_shape=True)
    out = torch.empty_like(x)
    n = x.numel()
    if n == 0:  # nothing to do; a zero-sized grid is not a launch
        return out
    add_basic_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


# ---- tuned: autotuned block size and warps. ------------------------------------------------------------------------
# A 1024-element program with 4 warps gives each thread one 16-byte packet of fp16 per input (two of fp32); larger
# blocks give each thread several independent loads in flight, which is what a kernel with no math needs to cover
# memory latency. Small tensors want the opposite (more, smaller programs to fill 132 SMs), so the autotuner picks
# per size.
@triton.autotune(
    configs=[
        triton.Config({"BLOCK": block}, num_warps=warps)
        for block in (1024, 2048, 4096, 8192)
        for warps in (4, 8)
    ],
    key=["n_elements"],
)
@triton.jit
def add_tuned_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x + y).to(out_ptr.dtype.element_ty), mask=mask)


@variant("tuned")
def tuned(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    check_inputs("add", ("x", x), ("y", y), same_shape=True)
    out = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return out
    add_tuned_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n)
    return out
