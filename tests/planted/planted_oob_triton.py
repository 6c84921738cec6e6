"""A Triton GELU that is numerically right and still wrong: its mask is `offsets <= n` instead of `offsets < n`, so
the lane at offset n loads x[n] and stores y[n], one element past the end of both tensors. The values it returns are
exact, so compare/check.py passes it (under torch's caching allocator the stray element lands in the slack of a
rounded-up block); compute-sanitizer's memcheck must report it. tests/test_sanitize.py runs this file through
`compare.sanitize.sanitize(gelu, triton_file=...)`, which finds the rows by their @variant marks.

gelu_in_bounds is the same kernel with the right mask: the control, run right after the faulty row in the same
process. The stray lane exists when n is not a multiple of BLOCK (the grid covers n rounded up to BLOCK).
"""
import torch
import triton
import triton.language as tl

from compare.spec import variant
from compare.validate import check_inputs

from gelu_math import gelu_fp32  # the right math: the bug here is in the mask

BLOCK = 1024


@triton.jit
def gelu_one_past_end_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets <= n  # the bug: <= instead of <
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(y_ptr + offsets, gelu_fp32(x).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def gelu_in_bounds_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(y_ptr + offsets, gelu_fp32(x).to(y_ptr.dtype.element_ty), mask=mask)


@variant("gelu_one_past_end")
def gelu_one_past_end(x: torch.Tensor) -> torch.Tensor:
    check_inputs("planted_oob", ("x", x))
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        gelu_one_past_end_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
    return y


@variant("gelu_in_bounds")
def gelu_in_bounds(x: torch.Tensor) -> torch.Tensor:
    check_inputs("planted_oob", ("x", x))
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        gelu_in_bounds_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
    return y
