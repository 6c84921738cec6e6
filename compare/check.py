"""The judge: the float64 reference of an op and the comparison of a row's outputs with it. It runs in the parent
process (compare.runner), on outputs the worker hands over; it never imports a row's code, and the inputs it judges
against are the ones it made and handed to the worker, kept here with pristine copies.

Hazards this guards against, each seen fooling public kernel benchmarks:
  * unwritten outputs: the worker fills the allocator's free memory with NaN before each judged call, so memory a
    kernel never writes reads back as NaN, which never passes;
  * autotuning hiding them: every case starts with a warm-up call whose output is discarded (compare.schedule);
  * stale results, reused output buffers, dirty workspaces: each case calls the row twice on different inputs and
    judges the first output again after the second call;
  * inputs a row recognizes: every row gets inputs of its own, from seeds that name the row;
  * writing into the inputs: the inputs are compared with pristine copies after the calls;
  * a check that cannot fail: if an all-zeros or a constant output would also pass, the case is refused as
    degenerate rather than passed (a small case's inputs that came out so by chance are drawn again first:
    case_inputs);
  * ignored strides: the layout cases pass every input as a non-contiguous view holding the same values
    (compare.layouts); a row must return the right answer or refuse with an error that says "contiguous".
"""
from __future__ import annotations

import dataclasses
import math

import torch

from . import isolate, layouts
from .schedule import RANDOM, CheckCase, case_seed, dtype_name  # noqa: F401  (case_seed: re-exported)
from .spec import Op, Shape, Tolerance

__all__ = ["CheckResult", "compare", "compare_outputs", "is_degenerate", "where_wrong", "judge_case", "judge_timed_output",
           "unchanged", "case_inputs", "case_seed", "check_case", "run_case_in_process", "dtype_name"]


@dataclasses.dataclass
class CheckResult:
    impl: str
    dtype: str
    shape: str
    inputs: str  # the case's label: "random", a special input set, a layout, "timed call ..."
    seed: int  # the seed of the judged call A's inputs (B's is in seeds)
    ok: bool
    status: str  # "ok", "FAIL", "degenerate", "error"
    max_abs_err: float | None = None
    max_rel_err: float | None = None  # over elements with |ref| > atol
    atol: float | None = None
    rtol: float | None = None
    worst_ratio: float | None = None  # max |out - expected| / bound; passes when <= 1
    message: str = ""
    ulps: float | None = None
    seeds: tuple = ()  # every call's seed: warm-up, A, B (or the timed input set's)
    warmup_s: float | None = None  # wall time of the case's warm-up call (JIT compilation, autotuning)


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


def rounded(ref: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The float64 reference correctly rounded to the output dtype (±inf where it overflows), back in float64."""
    return ref.to(dtype).to(torch.float64)


def ulp(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The spacing of dtype's values at x (float64, values representable in dtype): 2^(e-1)·eps for |x| in
    [2^(e-1), 2^e), and the subnormal spacing below the smallest normal number."""
    info = torch.finfo(dtype)
    # Below the smallest normal number (zero included) the spacing is the smallest normal's: |x| raised to it first.
    _, exponent = torch.frexp(x.abs().clamp_(min=info.tiny))
    return torch.ldexp(torch.full_like(x, info.eps), exponent.sub_(1))


@dataclasses.dataclass
class Expectation:
    """What a right output is held to, from one float64 reference: computed once for every output judged against
    that reference (a case judges call A's output twice)."""

    ref: torch.Tensor
    target: torch.Tensor  # the reference correctly rounded to the output dtype; where not finite, matched exactly
    expected: torch.Tensor  # what an output is compared with: the reference, or with ulps its rounding
    bound: torch.Tensor  # the allowed distance from expected, per element
    special: torch.Tensor | None  # the flat indices where target is not finite (inf, -inf, NaN); None: nowhere


def expectation(ref: torch.Tensor, tol: Tolerance, dtype: torch.dtype) -> Expectation:
    target = rounded(ref, dtype)
    expected = target if tol.ulps else ref
    finite = torch.isfinite(target)
    special = None if bool(finite.all()) else (~finite).flatten().nonzero().flatten()
    return Expectation(ref, target, expected, _bound(ref, tol, dtype, target), special)


def _bound(ref: torch.Tensor, tol: Tolerance, dtype: torch.dtype | None, target: torch.Tensor | None = None):
    """The allowed distance from the expected value, per element: atol + rtol·|ref|, plus with ulps (and a dtype)
    that many ulps of the reference rounded to dtype (target, where computed already)."""
    bound = ref.abs().mul_(tol.rtol).add_(tol.atol)
    if tol.ulps and dtype is not None:
        target = rounded(ref, dtype) if target is None else target
        bound.add_(ulp(torch.where(torch.isfinite(target), target, torch.zeros_like(target)), dtype).mul_(tol.ulps))
    return bound


def _figures_if_within(got: torch.Tensor, e: Expectation, tol: Tolerance) -> dict | None:
    """compare()'s figures where the output passes (most do): finite and within its bound wherever the rounded
    reference is finite, and equal to it where it is not (inf, -inf, NaN: a few elements, gathered by index). In a
    few passes over the data and one wait for the GPU; None otherwise, and compare() then judges the output element
    by element to say what is wrong. Large check cases spend most of their judging here, so every pass counts: the
    same figures as the full judgment, computed with no masks."""
    if got.numel() == 0:
        return None
    err = got.sub(e.expected).abs_()
    special_match = None
    if e.special is not None:
        at, want = got.flatten()[e.special], e.target.flatten()[e.special]
        special_match = ((at == want) | (at.isnan() & want.isnan())).all()
        err = _zeroed_at(err, e.special)  # judged by the match: no distance there, as in the full judgment
    if tol.atol > 0:  # every bound is at least atol
        ratio = err / e.bound
    else:  # an exact tolerance where the bound is 0: any error there is infinitely far
        ratio = torch.where(e.bound > 0, err / e.bound,
                            torch.where(err > 0, torch.full_like(err, torch.inf), torch.zeros_like(err)))
    if e.special is not None:
        ratio = _zeroed_at(ratio, e.special)  # a NaN reference's bound is NaN
    absref = e.ref.abs()
    relative = torch.where(absref > tol.atol, err / absref, 0.0)
    figures = [err.max(), relative.max(), ratio.max()]
    if special_match is not None:
        figures.append(special_match.to(err.dtype))
    max_abs, max_rel, worst, *matched = torch.stack(figures).tolist()
    if not (worst <= 1 and math.isfinite(max_abs)) or matched == [0.0]:  # max propagates NaN: NaN or inf fails here
        return None
    return {"max_abs_err": max_abs, "max_rel_err": max_rel, "worst_ratio": worst}


def _zeroed_at(t: torch.Tensor, flat_indices: torch.Tensor) -> torch.Tensor:
    """t with zeros at these flat indices, in place where t is contiguous (an output may come back as any view, a
    transpose: flat indices need flat memory)."""
    t = t.contiguous()
    t.view(-1).index_fill_(0, flat_indices, 0.0)
    return t


def compare(out, ref: torch.Tensor, tol: Tolerance, expect_dtype: torch.dtype,
            prepared: Expectation | None = None) -> tuple[bool, str, dict]:
    """Judge one output against the float64 reference; returns (ok, message, error figures).

    Where the reference, rounded to the output dtype, is not finite (softmax of an all -inf row, an overflow to
    inf, NaN in the inputs), the output must match it exactly; everywhere else it must be finite and within the
    tolerance. prepared: expectation(ref, tol, expect_dtype), where computed already."""
    if not isinstance(out, torch.Tensor):
        return False, f"returned {out if isinstance(out, str) else type(out).__name__}, expected a tensor", {}
    if tuple(out.shape) != tuple(ref.shape):
        return False, f"output shape {tuple(out.shape)}, expected {tuple(ref.shape)}", {}
    if out.dtype != expect_dtype:
        return False, f"output dtype {dtype_name(out.dtype)}, expected {dtype_name(expect_dtype)}", {}
    if out.device != ref.device:
        return False, f"output on {out.device}, expected {ref.device}", {}
    in_one_pass = _in_one_pass(out, ref, expect_dtype)
    if in_one_pass:
        from . import one_pass

        figures = one_pass.figures_if_within(out, ref, tol)
        if figures is not None:
            return True, "", figures
    got = out.detach().to(torch.float64)
    e = prepared if prepared is not None and prepared.ref is ref else expectation(ref, tol, expect_dtype)
    # Where the one pass found an element that does not pass, the short path would find it too: judged in full.
    figures = None if in_one_pass else _figures_if_within(got, e, tol)
    if figures is not None:
        return True, "", figures
    return _judged_in_full(got, e, tol)


def _all_in_one_pass(out, ref, expect_dtype) -> bool:
    """_in_one_pass for an op's output, or for every output of a pass with several (compare.passes)."""
    if not isinstance(ref, tuple):
        return _in_one_pass(out, ref, expect_dtype)
    return (isinstance(out, (tuple, list)) and len(out) == len(ref)
            and all(_in_one_pass(o, r, d) for o, r, d in zip(out, ref, _per_output(expect_dtype, len(ref)))))


def _in_one_pass(out, ref, expect_dtype: torch.dtype) -> bool:
    """Whether compare() takes a passing output's figures from one pass over it on the GPU (compare.one_pass):
    a CUDA tensor of float32, float16 or bfloat16."""
    if not (isinstance(out, torch.Tensor) and out.is_cuda):
        return False  # without importing Triton: a CPU run judges with torch alone
    from . import one_pass

    return one_pass.applies(out, ref, expect_dtype)


def _judged_in_full(got: torch.Tensor, e: Expectation, tol: Tolerance) -> tuple[bool, str, dict]:
    """compare(), element by element: the verdict, the figures and where the output is wrong."""
    ref, expected, bound, target = e.ref, e.expected, e.bound, e.target
    special = ~torch.isfinite(target)
    finite = ~special
    mismatch = (special & ~((got == target) | (torch.isnan(got) & torch.isnan(target)))) | (
        finite & ~torch.isfinite(got))
    bad_special = int(mismatch.sum())
    err = torch.where(finite & torch.isfinite(got), (got - expected).abs(), torch.zeros_like(ref))
    # err / bound; where the bound is 0 (an exact tolerance: fp8 quantization's bits), any error is infinitely far
    beyond_exact = torch.where(err > 0, torch.full_like(err, torch.inf), torch.zeros_like(err))
    ratio = torch.where(bound > 0, err / bound, beyond_exact)
    ratio = torch.where(finite, ratio, torch.zeros_like(ref))
    big = finite & (ref.abs() > tol.atol)
    figures = {
        "max_abs_err": float(err.max()) if err.numel() else 0.0,
        "max_rel_err": float((err[big] / ref.abs()[big]).max()) if bool(big.any()) else 0.0,
        "worst_ratio": float(ratio.max()) if ratio.numel() else 0.0,
    }
    if bad_special:
        nan_out = int((finite & torch.isnan(got)).sum())
        what = (f"{nan_out} of {ref.numel()} outputs are NaN where the reference is finite "
                f"(unwritten output or NaN produced)") if nan_out else (
            f"{bad_special} of {ref.numel()} outputs are inf/NaN where the reference is finite, or mismatch a "
            f"non-finite reference value (inf, -inf or NaN)")
        idx = int(torch.argmax(mismatch.flatten().to(torch.uint8)))
        return False, (what + f"; first at flat index {idx}: got {float(got.flatten()[idx]):.7g}, expected "
                       f"{float(target.flatten()[idx]):.7g}" + where_wrong(mismatch)), figures
    n_bad = int((ratio > 1).sum())
    if n_bad:
        idx = int(torch.argmax(ratio))
        rule = f"atol={tol.atol:g} + rtol={tol.rtol:g}·|ref|" + (
            f" + {tol.ulps:g} ulp of the correctly rounded reference" if tol.ulps else "")
        return False, (f"{n_bad} of {ref.numel()} outputs outside {rule}; worst at flat index {idx}: got "
                       f"{float(got.flatten()[idx]):.7g}, expected {float(expected.flatten()[idx]):.7g}"
                       + where_wrong(ratio > 1)), figures
    return True, "", figures


def _per_output(dtype, outputs: int) -> tuple:
    """An op's output dtype for each of its outputs: the tuple it gives for several (Op.output_dtypes), or one dtype
    for all."""
    return dtype if isinstance(dtype, tuple) else (dtype,) * outputs


def prepare(ref, tol, expect_dtype: torch.dtype):
    """expectation() of a reference, or of each of several (compare.passes), for compare_outputs' prepared."""
    if not isinstance(ref, tuple):
        return expectation(ref, tol, expect_dtype)
    return tuple(expectation(r, t, d) for r, t, d in zip(ref, tol, _per_output(expect_dtype, len(ref))))


def compare_outputs(out, ref, tol, expect_dtype: torch.dtype, names=None, prepared=None) -> tuple[bool, str, dict]:
    """compare() for an op's output, or for each of the outputs of a pass with several (compare.passes: a tuple
    of references, one Tolerance each, named for the messages); the figures are the worst over the outputs.
    prepared: prepare(ref, tol, expect_dtype), where computed already."""
    if not isinstance(ref, tuple):
        return compare(out, ref, tol, expect_dtype, prepared)
    names = names or [f"output {i}" for i in range(len(ref))]
    if not isinstance(out, (tuple, list)) or len(out) != len(ref):
        got = f"{len(out)} outputs" if isinstance(out, (tuple, list)) else (
            out if isinstance(out, str) else type(out).__name__)
        return False, f"returned {got}, expected {len(ref)} ({', '.join(names)})", {}
    worst: dict = {}
    for name, o, r, t, d, e in zip(names, out, ref, tol, _per_output(expect_dtype, len(ref)),
                                   prepared or (None,) * len(ref)):
        ok, message, figures = compare(o, r, t, d, e)
        for key, value in figures.items():
            worst[key] = max(worst.get(key, 0.0), value)
        if not ok:
            return False, f"{name}: {message}", worst
    return True, "", worst


def is_degenerate(ref, tol, dtype: torch.dtype | None = None, prepared=None) -> str:
    """A reason the reference can't tell a right answer from a trivial one at this tolerance, or ''. For several
    outputs (compare.passes), only when none of them can tell: LayerNorm of one column has a constant output and a
    zero dx, while its bias gradient still fails a wrong kernel. prepared: prepare(ref, tol, dtype), where computed
    already: its bounds are the ones wanted here (a bound depends on its own element only)."""
    if isinstance(ref, tuple):
        reasons = [is_degenerate(r, t, d, e) for r, t, d, e in zip(ref, tol, _per_output(dtype, len(ref)),
                                                                    prepared or (None,) * len(ref))]
        return "" if not all(reasons) else "every output: " + "; ".join(reasons)
    if _plainly_not_degenerate(ref, tol, dtype):
        return ""
    return _degenerate_in_full(ref, tol, dtype, prepared)


def _plainly_not_degenerate(ref: torch.Tensor, tol: Tolerance, dtype: torch.dtype | None) -> bool:
    """Whether the reference can tell a right answer from a trivial one, decided from its lowest and highest values
    alone: True only where _degenerate_in_full would return '' (False: it can't tell, and the full test decides).
    The full test's bounds take about as many passes over the reference as judging an output; most references are
    plainly not degenerate, and one reduction says so: the largest |ref| beyond the widest bound any element can
    have (_widest_bound) fails an all-zeros output at that element, and values spread wider than twice that bound
    are what the full test takes to rule a constant out without the median."""
    if ref.dtype != torch.float64 or ref.numel() == 0 or not (tol.atol >= 0 and tol.rtol >= 0 and tol.ulps >= 0):
        return False  # _widest_bound's reasoning holds for the float64 arithmetic of _bound and tolerances >= 0
    # aminmax propagates NaN, so both come out finite only where every element is: where some are not, the full test
    # sets them aside, and decides.
    lowest, highest = torch.stack(torch.aminmax(ref)).tolist()
    if not (math.isfinite(lowest) and math.isfinite(highest)):
        return False
    largest = max(abs(lowest), abs(highest))
    widest = _widest_bound(largest, tol, dtype)
    zeros_fail = largest > widest
    # The full test's own comparison, on a bound no narrower than its widest: where this rules the median out,
    # so does the full test's.
    constant_ruled_out = ref.numel() == 1 or not highest - lowest <= 2 * widest * (1 + 1e-9)
    return zeros_fail and constant_ruled_out


def _widest_bound(largest: float, tol: Tolerance, dtype: torch.dtype | None) -> float:
    """No less than _bound(x, tol, dtype) of any finite x with |x| <= largest. _bound is atol + rtol·|x| (+ ulps·ulp
    of x rounded to dtype), each term nondecreasing in |x| and each operation rounded to nearest in float64, which is
    monotonic: the same operations on the largest value of every term can't come out smaller. The largest ulp is
    ulp's spacing at the largest target: x rounds to at most largest·(1 + eps/2) in dtype (through float32 first, a
    little more, still below largest·(1 + eps)), and a rounding that overflows is a target of 0 in _bound, while any
    finite target is at most dtype's max; below the smallest normal number the spacing is the smallest normal's.
    Slack on top covers a reordering of _bound's operations. Float64 overflow gives inf, which decides nothing."""
    bound = largest * tol.rtol + tol.atol
    if tol.ulps and dtype is not None:
        info = torch.finfo(dtype)
        target = min(largest * (1 + 2 * info.eps), info.max)
        _, exponent = math.frexp(max(target, info.tiny))  # as ulp(): the spacing is 2^(e-1)·eps
        bound += math.ldexp(info.eps, exponent - 1) * tol.ulps
    return bound * (1 + 1e-6)


def _degenerate_in_full(ref: torch.Tensor, tol: Tolerance, dtype: torch.dtype | None, prepared=None) -> str:
    """is_degenerate of one reference from every element's bound."""
    is_finite = torch.isfinite(ref)
    all_finite = bool(is_finite.all())
    finite = ref if all_finite else ref[is_finite]
    if finite.numel() == 0:
        return ""
    if prepared is not None and prepared.ref is ref:
        bound = prepared.bound if all_finite else prepared.bound[is_finite]
    else:
        bound = _bound(finite, tol, dtype)
    magnitude = finite.abs()
    lowest, highest = torch.aminmax(finite)
    zeros_pass, largest, spread, widest = torch.stack([(magnitude <= bound).all().to(finite.dtype), magnitude.max(),
                                                       highest - lowest, bound.max()]).tolist()
    if zeros_pass:
        return f"an all-zeros output would pass (every |ref| within its bound, max |ref| = {largest:.3g})"
    # A constant within every element's bound is near the highest and the lowest value at once, so values spread
    # wider than twice the widest bound rule it out without the median, a sort: most references end here.
    if finite.numel() > 1 and spread <= 2 * widest * (1 + 1e-9):
        median = finite.median()
        if bool(((finite - median).abs() <= bound).all()):
            return f"a constant output ({float(median):.6g}) would pass"
    return ""


# ---- the inputs of a case, made and kept here ------------------------------------------------------------------
def make_inputs(op: Op, shape: Shape, dtype: torch.dtype, device: torch.device, seed: int,
                inputs: str = RANDOM) -> tuple:
    """A set of inputs for a row, made in memory of their own (compare.isolate.handed_over); copies the judge keeps
    are made outside it."""
    make = op.special_inputs[inputs] if inputs != RANDOM else op.make_inputs
    with isolate.handed_over(device):
        return tuple(make(shape, dtype, device, torch.Generator(device=device).manual_seed(seed)))


def with_layout(inputs: tuple, layout: str | None) -> tuple:
    """The same values, each tensor in the given non-contiguous layout where it applies to it."""
    if layout is None:
        return inputs
    device = next((t.device for t in inputs if isinstance(t, torch.Tensor)), "cpu")
    with isolate.handed_over(device):
        return tuple(layouts.LAYOUTS[layout](t) if layouts.applies(layout, t) else t for t in inputs)


@dataclasses.dataclass
class CaseInputs:
    """The three input sets of a check case as handed to the row, pristine copies of A's and B's, and the seeds
    they were made from (the case's, but where A's inputs were drawn again: case_inputs)."""

    warmup: tuple
    a: tuple
    b: tuple
    pristine_a: tuple
    pristine_b: tuple
    seeds: tuple


# Random inputs of a few elements come out, now and then, as a case that an all-zeros or constant output would pass
# (one element of a sum near zero, short softmax rows of nothing but ties): the judge would refuse it as degenerate
# and fail the row for the inputs it was given. So call A's inputs of a small case are judged before the call and,
# where they can't tell, drawn again from seeds derived from A's, up to REDRAWS times; the result names the seeds
# used. A larger case (its float64 reference no longer free to compute twice), or one still degenerate after every
# draw, is refused after the calls as before: inputs that can never fail a kernel are the spec's to change.
REDRAWS = 8
REDRAW_MAX_ELEMENTS = 1 << 16


def case_inputs(op: Op, case: CheckCase, device: torch.device) -> CaseInputs:
    seeds = list(case.seeds)
    made = [make_inputs(op, case.shape, case.dtype, device, seed, case.inputs) for seed in seeds]
    for draw in range(1, REDRAWS + 1):
        if not _degenerate_draw(op, case, made[1]):
            break
        seeds[1] = case_seed(case.seeds[1], "drawn again", draw)
        made[1] = make_inputs(op, case.shape, case.dtype, device, seeds[1], case.inputs)
    given = [with_layout(m, case.layout) for m in made]
    return CaseInputs(given[0], given[1], given[2], tuple(t.clone() for t in made[1]),
                      tuple(t.clone() for t in made[2]), tuple(seeds))


def _degenerate_draw(op: Op, case: CheckCase, inputs: tuple) -> bool:
    """Whether these inputs of a small case make one that the judge would refuse as degenerate (False for a larger
    case: not looked at before the call)."""
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    if not tensors or sum(t.numel() for t in tensors) > REDRAW_MAX_ELEMENTS:
        return False
    tol = op.tolerance(case.dtype, case.shape, case.inputs)
    return bool(is_degenerate(reference(op, inputs), tol, op.output_dtype(inputs[0].dtype)))


def reference(op: Op, pristine: tuple, out=None, ref=None):
    """The float64 reference of the op's output (a tuple, one per output, for a pass with several); for an op that
    declares reference_given_outputs, the reference given the row's output out, where out is well formed. ref: the
    plain reference of pristine, where computed already."""
    inputs = [t.to(torch.float64) for t in pristine]
    ref = op.reference(*inputs) if ref is None else ref
    if op.reference_given_outputs and _shaped_like(out, ref):
        return op.reference_given_outputs(ref, out, *inputs)
    return ref


def _shaped_like(out, ref) -> bool:
    return (isinstance(out, (tuple, list)) and isinstance(ref, tuple) and len(out) == len(ref)
            and all(isinstance(o, torch.Tensor) and o.shape == r.shape for o, r in zip(out, ref)))


def unchanged(given: tuple, pristine: tuple) -> bool:
    """Every input holds what it was given (NaN where it held NaN): torch.equal, one pass, answers for most inputs;
    inputs holding NaN, which equal nothing, are compared element by element."""
    return all(_equal(g, p) or bool(((p == g) | (p.isnan() & g.isnan())).all()) for g, p in zip(given, pristine))


def _identical(x, y) -> bool:
    """The same output, element for element, shape, dtype and device (a tensor, or each of a tuple of them)."""
    if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
        return x.shape == y.shape and x.dtype == y.dtype and x.device == y.device and _equal(x, y)
    if isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)):
        return len(x) == len(y) and all(_identical(a, b) for a, b in zip(x, y))
    return False


def _equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    try:
        return torch.equal(a, b)
    except (RuntimeError, TypeError, NotImplementedError):  # a dtype torch.equal has no kernel for (fp8 on some builds)
        return False


def _result(op: Op, impl: str, dtype: torch.dtype, shape: Shape, label: str, seeds: tuple,
            inputs: str = RANDOM) -> CheckResult:
    tol = op.tolerance(dtype, shape, inputs)
    tol = tol[0] if isinstance(tol, tuple) else tol  # the tables show the first output's; the json has them all
    return CheckResult(impl, dtype_name(dtype), op.describe_shape(shape), label, seeds[1 if len(seeds) > 1 else 0],
                       False, "FAIL", atol=tol.atol, rtol=tol.rtol, ulps=tol.ulps or None, seeds=tuple(seeds))


def failed_result(op: Op, impl: str, case: CheckCase, status: str, message: str) -> CheckResult:
    result = _result(op, impl, case.dtype, case.shape, case.label, case.seeds, case.inputs)
    result.status, result.message = status, message
    return result


def judge_case(op: Op, impl: str, case: CheckCase, inputs: CaseInputs, outputs) -> CheckResult:
    """Judge one check case from what the worker handed back (compare.worker.CaseOutputs): A's output as it came
    back, A's output again after call B, B's output; and the inputs, which must be as they were given."""
    result = _result(op, impl, case.dtype, case.shape, case.label, inputs.seeds, case.inputs)
    tol = op.tolerance(case.dtype, case.shape, case.inputs)
    if outputs.refused:
        if case.layout and "contiguous" in outputs.refused.lower():
            result.ok, result.status, result.message = True, "ok", f"refused non-contiguous input: {outputs.refused}"
        else:
            result.status, result.message = "error", outputs.refused
        return result
    for name, given, pristine in (("A", inputs.a, inputs.pristine_a), ("B", inputs.b, inputs.pristine_b)):
        if not unchanged(given, pristine):
            result.message = f"the inputs of call {name} were modified by the implementation"
            return result
    ref_a, ref_b = reference(op, inputs.pristine_a), reference(op, inputs.pristine_b)
    dtype = op.output_dtype(inputs.pristine_a[0].dtype)
    # Call A's output is judged twice: its expectation is computed once, unless a pass judges it (compare.one_pass)
    prepared_a = None if op.reference_given_outputs or _all_in_one_pass(outputs.first_a, ref_a, dtype) else prepare(
        ref_a, tol, dtype)
    worst = {}
    for call, out, pristine, ref, prepared in (
            ("call A", outputs.first_a, inputs.pristine_a, ref_a, prepared_a),
            ("call A's output, judged again after call B", outputs.a, inputs.pristine_a, ref_a, prepared_a),
            ("call B", outputs.b, inputs.pristine_b, ref_b, None)):
        if out is outputs.a and _identical(outputs.a, outputs.first_a):
            continue  # A's output as it was when judged (it passed): judged again, it would pass with the same figures
        ok, message, figures = compare_outputs(out, reference(op, pristine, out, ref), tol, dtype, op.output_names,
                                               prepared)
        for key, value in figures.items():
            worst[key] = max(worst.get(key, 0.0), value)
        if not ok:
            if call.startswith("call A's output") and _same_verdict_as_b(op, outputs, inputs.pristine_b, ref_b, tol,
                                                                         dtype):
                message = "call A's output changed into call B's answer (its memory reused or aliased by call B); " \
                          + message
            else:
                message = f"{call}: {message}"
            for key, value in worst.items():
                setattr(result, key, value)
            result.message = message
            return result
    for key, value in worst.items():
        setattr(result, key, value)
    degenerate = is_degenerate(ref_a, tol, dtype, prepared_a)
    if degenerate:
        result.status, result.message = "degenerate", f"refused: {degenerate}; choose inputs or tolerances that can fail"
        return result
    result.ok, result.status = True, "ok"
    return result


def _same_verdict_as_b(op: Op, outputs, pristine_b, ref_b, tol, dtype) -> bool:
    return not isinstance(outputs.a, str) and compare_outputs(outputs.a, reference(op, pristine_b, outputs.a, ref_b),
                                                              tol, dtype, op.output_names)[0]


def judge_timed_output(op: Op, impl: str, dtype: torch.dtype, shape: Shape, which: str, seed: int, out,
                       pristine: tuple, inputs_unchanged: bool) -> CheckResult:
    """The output of a timed call against the reference of the input set it was given, of which pristine is a copy
    made before the calls; inputs_unchanged: whether that set still held what it was given once the timed calls
    were over (unchanged, asked by the caller right then: the set itself need not live until the judging)."""
    result = _result(op, impl, dtype, shape, f"timed call, {which}", (seed,))
    tol = op.tolerance(dtype, shape)
    if not inputs_unchanged:
        result.message = "the inputs of the timed calls were modified by the implementation"
        return result
    ok, message, figures = compare_outputs(out, reference(op, pristine, out), tol, op.output_dtype(pristine[0].dtype),
                                           op.output_names)
    for key, value in figures.items():
        setattr(result, key, value)
    result.ok, result.status, result.message = ok, "ok" if ok else "FAIL", message
    return result


def run_case_in_process(op: Op, impl_name: str, fn, case: CheckCase, device: torch.device) -> CheckResult:
    """One case of the schedule with the row called in this process: the worker's calls and this module's judgment,
    without the process boundary. For tests of the judge and of planted kernels; compare.runner never calls a row
    here."""
    from . import worker

    inputs = case_inputs(op, case, device)
    try:
        outputs = worker.call_case(inputs.warmup, inputs.a, inputs.b, may_refuse=case.layout is not None, fn=fn)
    except Exception as exc:
        return failed_result(op, impl_name, case, "error", f"{type(exc).__name__}: {exc}")
    return judge_case(op, impl_name, case, inputs, outputs)


def schedule_failures(op: Op, impl_name: str, fn, dtypes, device: torch.device) -> list[str]:
    """Every check case the schedule gives a row before timing (the interpreter's shapes without a GPU), each called
    in this process: one line per case that did not pass. For tests of planted rows."""
    from . import schedule

    failed = []
    for case in schedule.check_cases(op, impl_name, list(dtypes), device.type == "cuda", []):
        result = run_case_in_process(op, impl_name, fn, case, device)
        if not result.ok:
            failed.append(f"{result.dtype} {result.shape} {result.inputs}: {result.status}: {result.message}")
    return failed


def check_case(op: Op, impl_name: str, fn, dtype: torch.dtype, shape: Shape, device: torch.device, seed: int,
               inputs_name: str = RANDOM, layout: str | None = None) -> CheckResult:
    """run_case_in_process for one (dtype, shape, input set, layout), with the seeds the schedule would give it."""
    from . import schedule

    if inputs_name in layouts.LAYOUTS:  # a layout name given as the input set: random values in that layout
        inputs_name, layout = RANDOM, inputs_name
    case = CheckCase(dtype, tuple(shape), inputs_name, layout,
                     schedule.case_seeds(seed, op, impl_name, dtype, tuple(shape), inputs_name, layout, "check"))
    return run_case_in_process(op, impl_name, fn, case, device)


NON_CONTIGUOUS = "every other element"  # the layout earlier versions called the non-contiguous case
