"""Numerical checks of one implementation against the op's float64 reference.

Hazards this guards against, each seen fooling public kernel benchmarks:
  * unwritten outputs: the caching allocator's free memory is filled with NaN before the call, so memory a kernel
    never writes reads back as NaN, which never passes;
  * reuse of the reference's memory: the candidate runs first, on clones of the inputs, before the reference exists;
  * stale results cached across calls: every check draws fresh random inputs from its own seed;
  * writing into the inputs: the inputs are compared with a pristine copy after the call;
  * a check that cannot fail: if an all-zeros output or the constant median would also pass, the case is refused as
    degenerate rather than passed;
  * ignored strides: the "non-contiguous" case passes every input as a strided view holding the same values; an
    implementation must return the right answer or refuse with an error that says "contiguous".
"""
from __future__ import annotations

import dataclasses
import zlib

import torch

from .spec import Op, Shape


@dataclasses.dataclass
class CheckResult:
    impl: str
    dtype: str
    shape: str
    inputs: str  # "random" or the name of a special input set
    seed: int
    ok: bool
    status: str  # "ok", "FAIL", "degenerate", "error"
    max_abs_err: float | None = None
    max_rel_err: float | None = None  # over elements with |ref| > atol
    atol: float | None = None
    rtol: float | None = None
    worst_ratio: float | None = None  # max |out - ref| / (atol + rtol·|ref|); passes when <= 1
    message: str = ""


def case_seed(base_seed: int, *parts: object) -> int:
    """A seed per (op, impl, dtype, shape, inputs), stable across runs and machines, reported with the result."""
    return (base_seed * 1_000_003 + zlib.crc32("|".join(map(str, parts)).encode())) % 2**31


def poison_free_memory(device: torch.device, nbytes: int) -> None:
    """Fill memory the allocator will hand out next with 0xFF bytes, a NaN in every float format: an allocation
    of the same size right after this reuses the block, so output a kernel never writes reads back as NaN."""
    if device.type != "cuda" or nbytes <= 0:
        return
    block = torch.empty(nbytes, dtype=torch.uint8, device=device)
    block.fill_(0xFF)
    del block


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def where_wrong(bad: torch.Tensor) -> str:
    """Where the wrong outputs lie, in the terms a kernel bug leaves behind: which rows (leading index) for a matrix,
    which index range for a vector. "rows 2048-4095 of 4096" reads as a kernel that skipped half the rows, "indices
    996-999" as an unwritten tail."""
    if bad.dim() == 0 or not bool(bad.any()):
        return ""
    lines = bad.reshape(bad.shape[0], -1).any(dim=1) if bad.dim() > 1 else bad
    hit = torch.nonzero(lines).flatten()
    first, last, count = int(hit[0]), int(hit[-1]), int(hit.numel())
    noun = "rows" if bad.dim() > 1 else "indices"
    span = f"{first}" if first == last else f"{first}-{last}"
    spread = "" if count == last - first + 1 else f", {count} of them wrong"
    return f"; in {noun} {span} of {lines.numel()}{spread}"


def compare(out, ref: torch.Tensor, tol, expect_dtype: torch.dtype) -> tuple[bool, str, dict]:
    """Judge one output against the float64 reference; returns (ok, message, error figures)."""
    if not isinstance(out, torch.Tensor):
        return False, f"returned {type(out).__name__}, expected a tensor", {}
    if tuple(out.shape) != tuple(ref.shape):
        return False, f"output shape {tuple(out.shape)}, expected {tuple(ref.shape)}", {}
    if out.dtype != expect_dtype:
        return False, f"output dtype {dtype_name(out.dtype)}, expected {dtype_name(expect_dtype)}", {}
    if out.device != ref.device:
        return False, f"output on {out.device}, expected {ref.device}", {}
    got = out.detach().to(torch.float64)
    ref_finite = torch.isfinite(ref)
    # Non-finite reference values (softmax of an all -inf row, say) must be matched exactly; finite ones must be
    # finite and within tolerance.
    nonfinite_mismatch = (~ref_finite & ~((got == ref) | (torch.isnan(got) & torch.isnan(ref)))) | (
        ref_finite & ~torch.isfinite(got))
    bad_special = int(nonfinite_mismatch.sum())
    err = torch.where(ref_finite & torch.isfinite(got), (got - ref).abs(), torch.zeros_like(ref))
    bound = tol.atol + tol.rtol * ref.abs()
    ratio = torch.where(ref_finite, err / bound, torch.zeros_like(ref))
    big = ref.abs() > tol.atol
    figures = {
        "max_abs_err": float(err.max()) if err.numel() else 0.0,
        "max_rel_err": float((err[big] / ref.abs()[big]).max()) if bool(big.any()) else 0.0,
        "worst_ratio": float(ratio.max()) if ratio.numel() else 0.0,
    }
    if bad_special:
        nan_out = int((ref_finite & torch.isnan(got)).sum())
        what = (f"{nan_out} of {ref.numel()} outputs are NaN where the reference is finite "
                f"(unwritten output or NaN produced)") if nan_out else (
            f"{bad_special} of {ref.numel()} outputs are inf/NaN or mismatch a non-finite reference value")
        return False, what + where_wrong(nonfinite_mismatch), figures
    n_bad = int((ratio > 1).sum())
    if n_bad:
        idx = int(torch.argmax(ratio))
        return False, (f"{n_bad} of {ref.numel()} outputs outside atol={tol.atol:g} + rtol={tol.rtol:g}·|ref|; "
                       f"worst at flat index {idx}: got {float(got.flatten()[idx]):.7g}, "
                       f"expected {float(ref.flatten()[idx]):.7g}" + where_wrong(ratio > 1)), figures
    return True, "", figures


def is_degenerate(ref: torch.Tensor, tol) -> str:
    """A reason the reference can't tell a right answer from a trivial one at this tolerance, or ''."""
    finite = ref[torch.isfinite(ref)]
    if finite.numel() == 0:
        return ""
    bound = tol.atol + tol.rtol * finite.abs()
    if bool((finite.abs() <= bound).all()):
        return f"an all-zeros output would pass (every |ref| <= atol + rtol·|ref|, max |ref| = {float(finite.abs().max()):.3g})"
    if finite.numel() > 1:
        median = finite.median()
        if bool(((finite - median).abs() <= bound).all()):
            return f"a constant output ({float(median):.6g}) would pass"
    return ""


NON_CONTIGUOUS = "non-contiguous"


def strided_copy(t: torch.Tensor) -> torch.Tensor:
    """The same values as a non-contiguous view (every other element of a buffer twice as wide)."""
    if t.dim() == 0:
        return t
    wide = torch.full((*t.shape[:-1], 2 * t.shape[-1]), float("nan"), dtype=t.dtype, device=t.device)
    view = wide[..., ::2]
    view.copy_(t)
    return view


def _scrub(out) -> None:
    """Overwrite a judged output with NaN before its memory goes back to the allocator. Rows are checked on the
    same inputs, so a correct output left in a freed block would be handed, already right, to the next row's
    allocation of the same size: an implementation that writes nothing would then pass."""
    if isinstance(out, torch.Tensor) and out.is_floating_point():
        try:
            out.detach().fill_(float("nan"))
        except RuntimeError:  # an overlapping view (expand) cannot be written; nothing of it is reused either
            pass


def check_case(op: Op, impl_name: str, fn, dtype: torch.dtype, shape: Shape, device: torch.device, seed: int,
               inputs_name: str = "random") -> CheckResult:
    make = op.special_inputs[inputs_name] if inputs_name in op.special_inputs else op.make_inputs
    tol = op.tolerance(dtype, shape)
    seed = case_seed(seed, op.name, dtype_name(dtype), shape, inputs_name)
    result = CheckResult(impl_name, dtype_name(dtype), op.describe_shape(shape), inputs_name, seed, False, "FAIL",
                         atol=tol.atol, rtol=tol.rtol)
    generator = torch.Generator(device=device).manual_seed(seed)
    inputs = make(shape, dtype, device, generator)
    pristine = [t.clone() for t in inputs]
    candidate_inputs = [t.clone() for t in inputs]
    if inputs_name == NON_CONTIGUOUS:
        candidate_inputs = [strided_copy(t) for t in candidate_inputs]
    poison_free_memory(device, max(t.numel() * t.element_size() for t in inputs) * 2)
    try:
        out = fn(*candidate_inputs)
    except Exception as exc:
        if inputs_name == NON_CONTIGUOUS and "contiguous" in str(exc).lower():
            result.ok, result.status = True, "ok"
            result.message = f"refused non-contiguous input: {str(exc).strip().splitlines()[0]}"
            return result
        raise
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    for i, (before, after) in enumerate(zip(pristine, candidate_inputs)):
        if not bool(((before == after) | (before.isnan() & after.isnan())).all()):
            result.message = f"input {i} was modified by the implementation"
            return result
    ref = op.reference(*[t.to(torch.float64) for t in pristine])
    degenerate = is_degenerate(ref, tol)
    ok, message, figures = compare(out, ref, tol, pristine[0].dtype)
    _scrub(out)
    for key, value in figures.items():
        setattr(result, key, value)
    if degenerate:
        result.status, result.message = "degenerate", f"refused: {degenerate}; choose inputs or tolerances that can fail"
        return result
    result.ok, result.status, result.message = ok, "ok" if ok else "FAIL", message
    return result
