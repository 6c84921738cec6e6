"""The judge's figures for an output that passes, in one pass over the data on the GPU.

compare.check judges an output with torch operations, each a pass over float64 copies of the output and of the
reference: about twenty passes for one output of a large check case, where one pass would read what is needed. This
module is that one pass, a Triton kernel: for every element the reference rounded to the output's dtype, the
distance the tolerance allows, the error, its ratio to that distance and its relative size, and whether the element
passes; per program the largest of each, and the count of elements that do not pass; the caller takes the largest
over programs. Only the verdict "every element passes" is taken from here, with its figures; anything else (one
element outside its bound, an unmatched inf or NaN) gives None, and check.compare judges the output again with torch,
element by element, for a message that says what is wrong and where. So this kernel can only ever speed up a pass; a
mistake here that rejected a right output would cost time, and the tests hold it to give the torch path's verdict and
figures bit for bit on random, special and wrong outputs (tests/test_one_pass.py).

Bit for bit: every float64 operation is the one check.py does, in the same order, each rounded once (no fused
multiply-adds: the kernel is built with enable_fp_fusion=False), and the reference is rounded to the output's dtype
as torch rounds it, through float32 (float64 to float32, then to float16 or bfloat16, each to nearest even).

Used for CUDA tensors of float32, float16 and bfloat16 outputs (other dtypes, and tensors on the CPU, take the torch
path), contiguous after .contiguous() on the output (a view is copied once).
"""
from __future__ import annotations

import threading

import torch
import triton
import triton.language as tl

from .spec import Tolerance

DTYPES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}  # the kernel's ROUND_TO
BLOCK = 1024
FIGURES = 4  # per program: the largest error, relative error and error over bound, and the count not passing
_launching = threading.Lock()  # the parent judges from a thread per row (--check-rows): one JIT compilation at a time


@triton.jit
def _rounded(r, ROUND_TO: tl.constexpr):
    """The float64 reference r rounded as torch's r.to(dtype) rounds it, back in float64."""
    r32 = r.to(tl.float32)  # to nearest even
    if ROUND_TO == 1:
        r32 = r32.to(tl.float16).to(tl.float32)
    elif ROUND_TO == 2:
        # bfloat16 to nearest even on the bits, as c10::BFloat16 does (inf and NaN stay what they are)
        bits = r32.to(tl.uint32, bitcast=True)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
        r32 = tl.where(r32 != r32, r32, rounded.to(tl.float32, bitcast=True))
    return r32.to(tl.float64)


@triton.jit
def _ulp(t, eps, tiny):
    """check.ulp: the spacing of the dtype's values at t (finite), 2^(e-1)·eps for |t| in [2^(e-1), 2^e), and the
    smallest normal number's spacing below it: eps times the power of two of max(|t|, tiny)."""
    magnitude = tl.maximum(tl.abs(t), tiny)
    power = (magnitude.to(tl.int64, bitcast=True) >> 52) << 52  # the exponent bits alone: 2^(e-1)
    return power.to(tl.float64, bitcast=True) * eps


@triton.jit
def within_kernel(got_ptr, ref_ptr, n, tolerance_ptr, out_ptr, ROUND_TO: tl.constexpr, USE_ULPS: tl.constexpr,
                  EXACT: tl.constexpr, BLOCK: tl.constexpr):
    # The tolerance and the dtype's constants in float64, read from memory: a Python float argument would reach
    # the kernel as float32.
    atol = tl.load(tolerance_ptr)
    rtol = tl.load(tolerance_ptr + 1)
    ulps = tl.load(tolerance_ptr + 2)
    eps = tl.load(tolerance_ptr + 3)
    tiny = tl.load(tolerance_ptr + 4)
    pid = tl.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    r = tl.load(ref_ptr + offsets, mask=inside, other=0.0)
    if ROUND_TO == 2:  # bfloat16 output, handed over as its bits: widened exactly, subnormals included
        bits = tl.load(got_ptr + offsets, mask=inside, other=0).to(tl.uint16, bitcast=True).to(tl.uint32) << 16
        g = bits.to(tl.float32, bitcast=True).to(tl.float64)
    else:
        g = tl.load(got_ptr + offsets, mask=inside, other=0.0).to(tl.float64)
    inf = float("inf")
    t = _rounded(r, ROUND_TO)
    finite_t = tl.abs(t) < inf  # False for inf, -inf and NaN
    expected = t if USE_ULPS else r
    bound = tl.abs(r) * rtol + atol
    if USE_ULPS:
        bound = bound + _ulp(tl.where(finite_t, t, 0.0), eps, tiny) * ulps
    err = tl.abs(g - expected)
    # Where the rounded reference is not finite, the output must equal it (NaN where it is NaN), and no distance
    # counts there; everywhere else the output must be finite and within its bound.
    matched = (g == t) | ((g != g) & (t != t))
    fails = tl.where(finite_t, ~(tl.abs(g) < inf), ~matched)
    err = tl.where(finite_t, err, 0.0)
    if EXACT:  # atol = 0 (and rtol = 0 where the reference is 0): any error where the bound is 0 is too much
        ratio = tl.where(bound > 0, err / bound, tl.where(err > 0, inf, 0.0))
    else:
        ratio = err / bound
    ratio = tl.where(finite_t, ratio, 0.0)
    absref = tl.abs(r)
    relative = tl.where(absref > atol, err / absref, 0.0)
    fails = fails | (ratio > 1)
    # Padding past n passes with zeros everywhere.
    err = tl.where(inside, err, 0.0)
    ratio = tl.where(inside, ratio, 0.0)
    relative = tl.where(inside, relative, 0.0)
    fails = fails & inside
    base = out_ptr + pid * 4
    tl.store(base, tl.max(err, axis=0))
    tl.store(base + 1, tl.max(relative, axis=0))
    tl.store(base + 2, tl.max(ratio, axis=0))
    tl.store(base + 3, tl.sum(fails.to(tl.float64), axis=0))


def applies(out, ref: torch.Tensor, expect_dtype: torch.dtype) -> bool:
    """Whether the one pass can judge this output: a CUDA tensor of a dtype it rounds to, shaped as the float64
    reference, both on the same GPU (on the CPU the torch path is as fast as it gets)."""
    return (isinstance(out, torch.Tensor) and out.is_cuda and out.dtype == expect_dtype and expect_dtype in DTYPES
            and ref.dtype == torch.float64 and ref.device == out.device and out.shape == ref.shape
            and out.numel() > 0)


def figures_if_within(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance) -> dict | None:
    """check.compare's figures where every element passes (max_abs_err, max_rel_err, worst_ratio), None otherwise.
    out and ref as applies() takes them; the kernel also runs on CPU tensors under Triton's interpreter, which is
    how the tests compare it with the torch path."""
    out, ref = out.detach().contiguous(), ref.contiguous()
    n = out.numel()
    programs = triton.cdiv(n, BLOCK)
    figures = torch.empty((programs, FIGURES), dtype=torch.float64, device=out.device)
    info = torch.finfo(out.dtype)
    tolerance = torch.tensor([tol.atol, tol.rtol, tol.ulps or 0, info.eps, info.tiny], dtype=torch.float64,
                             device=out.device)
    # A bfloat16 output goes in as its bits (int16), which the kernel widens itself: a conversion of its own that
    # Triton's interpreter, which stores bfloat16 as integers, cannot get wrong.
    got = out.view(torch.int16) if out.dtype == torch.bfloat16 else out
    with _launching:
        within_kernel[(programs,)](got, ref, n, tolerance, figures, ROUND_TO=DTYPES[out.dtype],
                                   USE_ULPS=bool(tol.ulps), EXACT=not tol.atol > 0, BLOCK=BLOCK,
                                   enable_fp_fusion=False)
    max_abs, max_rel, worst, failing = figures.amax(dim=0).tolist()
    if failing:
        return None
    return {"max_abs_err": max_abs, "max_rel_err": max_rel, "worst_ratio": worst}
