"""The checker must reject wrong answers and refuse checks that cannot fail."""
import dataclasses
import math

import pytest
import torch

from compare import check, discover, schedule
from compare.spec import Tolerance

GELU = discover.load_op("gelu")
SHAPE = (4099,)


def run(fn, dtype=torch.float32, shape=SHAPE, device=torch.device("cpu")):
    return check.check_case(GELU, "planted", fn, dtype, shape, device, seed=0)


def test_reference_itself_passes():
    r = run(lambda x: GELU.reference(x.double()).to(x.dtype))
    assert r.ok and r.status == "ok" and r.worst_ratio <= 1


def test_zeros_fail():
    r = run(lambda x: torch.zeros_like(x))
    assert not r.ok and "outside" in r.message


def test_returning_the_input_fails():
    assert not run(lambda x: x).ok


def test_unwritten_tail_fails():
    def tail_left_nan(x):
        y = GELU.reference(x.double()).to(x.dtype)
        y[-3:] = float("nan")  # what a poisoned, never-written tail reads back as
        return y

    r = run(tail_left_nan)
    assert not r.ok and "NaN" in r.message and "indices 4096-4098 of 4099" in r.message


@pytest.mark.gpu
def test_a_tail_never_written_reads_nan_even_where_a_block_of_the_outputs_size_was_just_freed():
    def tail_unwritten(x):  # the warm-up call's output, freed, is a cached block of exactly this output's size
        y = torch.empty_like(x)
        written = x.numel() - 1024
        y[:written] = GELU.reference(x[:written].double()).to(x.dtype)
        return y

    r = run(tail_unwritten, shape=(1 << 22,), device=torch.device("cuda"))
    assert not r.ok and "NaN" in r.message, r.message


def test_message_says_which_rows_are_wrong():
    ref = torch.randn(8, 5, dtype=torch.float64)
    tol = Tolerance(atol=1e-6, rtol=1e-6)
    half = ref.clone()
    half[4:] = 0.5  # stale values in the second half of the rows: a kernel that wrote half the rows
    ok, message, _ = check.compare(half.float(), ref, tol, torch.float32)
    assert not ok and "rows 4-7 of 8" in message
    scattered = ref.clone()
    scattered[[1, 6], 2] = float("nan")
    ok, message, _ = check.compare(scattered.float(), ref, tol, torch.float32)
    assert not ok and "rows 1-6 of 8, 2 of them wrong" in message
    assert check.where_wrong(torch.zeros(3, dtype=torch.bool)) == ""


def test_slightly_wrong_math_fails():
    # tanh's argument with a wrong constant: a plausible typo, off by ~1e-3 relative.
    r = run(lambda x: (0.5 * x * (1 + torch.tanh(0.79 * (x + 0.044715 * x**3)))))
    assert not r.ok


def test_low_precision_fails_at_fp32_tolerance():
    r = run(lambda x: GELU.reference(x.double()).to(torch.bfloat16).to(x.dtype))
    assert not r.ok


def test_wrong_shape_and_dtype_fail():
    assert "shape" in run(lambda x: GELU.reference(x.double()).to(x.dtype)[:-1]).message
    assert "dtype" in run(lambda x: GELU.reference(x.double())).message


def test_modifying_the_input_fails():
    def in_place(x):
        return x.copy_(GELU.reference(x.double()).to(x.dtype))

    r = run(in_place)
    assert not r.ok and "modified" in r.message


def test_result_cached_from_an_earlier_call_fails():
    cache = {}

    def cached(x):
        if "y" not in cache:
            cache["y"] = GELU.reference(x.double()).to(x.dtype)
        return cache["y"].clone()

    run(cached)  # first call computes on its inputs; a second call with fresh inputs gets the stale answer
    r = check.check_case(GELU, "planted", cached, torch.float32, SHAPE, torch.device("cpu"), seed=1)
    assert not r.ok


def test_inf_output_fails():
    def with_inf(x):
        y = GELU.reference(x.double()).to(x.dtype)
        y[0] = float("inf")
        return y

    assert not run(with_inf).ok


def test_degenerate_reference_is_refused():
    ref = torch.full((100,), 1e-9, dtype=torch.float64)
    assert "zeros" in check.is_degenerate(ref, Tolerance(atol=1e-6, rtol=1e-3))
    ref = torch.full((100,), 3.0, dtype=torch.float64) + torch.rand(100, dtype=torch.float64) * 1e-9
    assert "constant" in check.is_degenerate(ref, Tolerance(atol=1e-6, rtol=1e-3))
    assert check.is_degenerate(torch.randn(100, dtype=torch.float64), Tolerance(atol=1e-6, rtol=1e-3)) == ""


def _gelu_with(name, make):
    return dataclasses.replace(GELU, special_inputs={**GELU.special_inputs, name: make})


def _zeros_on_heads(shape, dtype, device, generator):
    """Inputs that are all zeros (GELU's output then is too: a degenerate case) on about half the seeds."""
    x = torch.randn(shape, generator=generator, device=device).to(dtype)
    heads = torch.rand((), generator=generator, device=device) < 0.5
    return (torch.where(heads, torch.zeros_like(x), x),)


def _right(x):
    return GELU.reference(x.double()).to(x.dtype)


def test_a_small_case_whose_inputs_could_not_fail_is_drawn_again_and_judged():
    op = _gelu_with("zeros on heads", _zeros_on_heads)
    cpu = torch.device("cpu")
    degenerate = [seed for seed in range(40) if check.is_degenerate(
        check.reference(op, check.make_inputs(op, (5,), torch.float32, cpu, seed, "zeros on heads")),
        op.tolerance(torch.float32, (5,), "zeros on heads"), torch.float32)]
    assert len(degenerate) > 5  # the input set is what the test says
    for seed in degenerate:
        case = schedule.CheckCase(torch.float32, (5,), "zeros on heads", None, (1, seed, 2))
        inputs = check.case_inputs(op, case, cpu)
        assert inputs.seeds[0] == 1 and inputs.seeds[2] == 2 and inputs.seeds[1] != seed
        assert inputs.a[0].abs().max() > 0 and torch.equal(inputs.a[0], inputs.pristine_a[0])
        r = check.run_case_in_process(op, "planted", _right, case, cpu)
        assert r.ok and r.status == "ok" and r.seeds == inputs.seeds and r.seed == inputs.seeds[1], r
        zeros = check.run_case_in_process(op, "planted", torch.zeros_like, case, cpu)
        assert not zeros.ok and zeros.status == "FAIL", zeros  # the drawn-again inputs can fail a wrong row


def test_inputs_that_can_never_fail_are_still_refused_as_degenerate():
    """Drawn again a bounded number of times, then refused: small and large cases alike (a large one is not drawn
    again at all: its reference is computed once, after the calls)."""
    op = _gelu_with("zeros", lambda shape, dtype, device, generator: (torch.zeros(shape, dtype=dtype, device=device),))
    cpu = torch.device("cpu")
    for shape in ((5,), (check.REDRAW_MAX_ELEMENTS + 1,)):
        case = schedule.CheckCase(torch.float32, shape, "zeros", None, (1, 7, 2))
        r = check.run_case_in_process(op, "planted", _right, case, cpu)
        assert not r.ok and r.status == "degenerate" and "all-zeros" in r.message, r
        assert (r.seeds[1] != 7) == (shape == (5,)), r.seeds


def test_short_softmax_rows_of_ties_are_drawn_again():
    """Seen on an H100 (softmax, cuda:grid_ring, 7 x 3 "range edges"): rows of three tied entries have the constant
    output 1/3, and on about one seed in a hundred every row of the case was such a row; the judge refused the case
    and failed the row. Every case of 150 seeds now has inputs that can fail a kernel."""
    op = discover.load_op("softmax")
    cpu = torch.device("cpu")
    for dtype in (torch.float32, torch.bfloat16):
        tol = op.tolerance(dtype, (7, 3), "range edges")
        for seed in range(150):
            case = schedule.CheckCase(dtype, (7, 3), "range edges", None, (0, seed, 1))
            inputs = check.case_inputs(op, case, cpu)
            assert not check.is_degenerate(check.reference(op, inputs.pristine_a), tol, dtype), (dtype, seed)


def test_seed_is_stable_and_distinct_per_case():
    a = check.case_seed(0, "gelu", "float32", (1,), "random")
    assert a == check.case_seed(0, "gelu", "float32", (1,), "random")
    assert a != check.case_seed(0, "gelu", "float32", (2,), "random")


def test_ignoring_strides_fails_but_refusing_them_passes():
    def reads_storage_as_contiguous(x):
        flat = torch.as_strided(x, (x.numel(),), (1,))  # ignores x.stride()
        return GELU.reference(flat.double()).to(x.dtype).view(x.shape)

    r = check.check_case(GELU, "planted", reads_storage_as_contiguous, torch.float32, SHAPE, torch.device("cpu"),
                         seed=0, inputs_name=check.NON_CONTIGUOUS)
    assert not r.ok

    def refuses(x):
        if not x.is_contiguous():
            raise ValueError("gelu: x is not contiguous; pass .contiguous()")
        return GELU.reference(x.double()).to(x.dtype)

    r = check.check_case(GELU, "planted", refuses, torch.float32, SHAPE, torch.device("cpu"), seed=0,
                         inputs_name=check.NON_CONTIGUOUS)
    assert r.ok and "refused" in r.message


# ---- state across calls: every case calls the row twice and judges the first output again after the second ------
def test_an_output_buffer_reused_across_calls_fails():
    kept = {}

    def reuses_its_output(x):
        out = kept.setdefault(x.shape, torch.empty_like(x))  # one buffer per shape, handed out on every call
        out.copy_(GELU.reference(x.double()))
        return out

    r = run(reuses_its_output)
    assert not r.ok and "changed into call B's answer" in r.message, r.message


def test_a_workspace_not_cleared_between_calls_fails():
    total = {}

    def accumulates(x):  # right on the first call at a shape, then adds onto the last answer
        acc = total.setdefault(x.shape, torch.zeros(x.shape, dtype=torch.float64))
        acc += GELU.reference(x.double())
        return acc.to(x.dtype)

    r = run(accumulates)
    assert not r.ok and "call A" in r.message, r.message


def test_an_answer_cached_by_shape_fails():
    cache = {}

    def caches(x):
        return cache.setdefault(x.shape, GELU.reference(x.double()).to(x.dtype)).clone()

    r = run(caches)
    assert not r.ok, r.message


def test_the_warm_up_output_is_not_judged_but_the_calls_after_it_are():
    calls = []

    def right_only_on_its_first_call(x):  # as an autotuner's first call, which runs every config into the output
        calls.append(1)
        y = GELU.reference(x.double()).to(x.dtype)
        if len(calls) > 1:
            y[x.numel() // 2:] = float("nan")  # the chosen config leaves half unwritten
        return y

    r = run(right_only_on_its_first_call)
    assert not r.ok and "call A" in r.message and "NaN" in r.message, r.message
    assert len(calls) == 3  # warm-up, A, B


def test_a_first_output_unchanged_after_call_b_is_not_judged_twice(monkeypatch):
    judged = []
    compare_outputs = check.compare_outputs

    def counting(out, *args, **kwargs):
        judged.append(out)
        return compare_outputs(out, *args, **kwargs)

    monkeypatch.setattr(check, "compare_outputs", counting)
    assert run(lambda x: GELU.reference(x.double()).to(x.dtype)).ok
    assert len(judged) == 2  # A and B: A's output, unchanged after B, passes again without a second judgment
    judged.clear()
    kept = []

    def writes_into_its_first_output(x):  # call B's answer written into A's output too (a reused buffer)
        y = GELU.reference(x.double()).to(x.dtype)
        if kept:
            kept[-1].copy_(y)
        kept.append(y)
        return y

    r = run(writes_into_its_first_output)
    # A, A again (changed: judged, and wrong), and B's answer (to say what A's output turned into)
    assert not r.ok and "changed into call B's answer" in r.message and len(judged) == 3, r.message


def test_each_case_gets_inputs_of_its_own_per_row():
    from compare import schedule

    a = schedule.case_seeds(0, GELU, "cuda:vec", torch.float32, (1000,), "random", None, "check")
    b = schedule.case_seeds(0, GELU, "triton:tuned", torch.float32, (1000,), "random", None, "check")
    assert len(set(a)) == 3 and not set(a) & set(b)


# ---- ulps: judged against the correctly rounded reference ----------------------------------------------------------
def test_ulp_spacing_of_each_dtype():
    x = torch.tensor([1.0, 1.5, 2.0, -3.0, 0.0], dtype=torch.float64)
    assert check.ulp(x, torch.float32).tolist()[:4] == [2.0**-23, 2.0**-23, 2.0**-22, 2.0**-22]
    assert check.ulp(x, torch.bfloat16).tolist()[:3] == [2.0**-7, 2.0**-7, 2.0**-6]
    assert check.ulp(x, torch.float16)[4] == 2.0**-24  # fp16's subnormal spacing
    for dtype in (torch.float32, torch.float16, torch.bfloat16):  # at and below the smallest normal number, and the top
        info = torch.finfo(dtype)
        edges = torch.tensor([info.tiny, -info.tiny, info.tiny * info.eps, info.tiny / 2, -0.0, info.max, -info.max],
                             dtype=torch.float64)
        spacing = [info.tiny * info.eps] * 5 + [2.0 ** (math.frexp(info.max)[1] - 1) * info.eps] * 2
        assert check.ulp(edges, dtype).tolist() == spacing, dtype


def test_ulps_bound_passes_one_ulp_and_fails_two():
    ref = torch.linspace(1.0, 2.0, 101, dtype=torch.float64)[:-1]
    tol = Tolerance(atol=0.0, rtol=0.0, ulps=1)
    exact = ref.to(torch.bfloat16)
    one_up = (exact.double() + 2.0**-7).to(torch.bfloat16)
    two_up = (exact.double() + 2.0**-6).to(torch.bfloat16)
    assert check.compare(exact, ref, tol, torch.bfloat16)[0]
    assert check.compare(one_up, ref, tol, torch.bfloat16)[0]
    ok, message, _ = check.compare(two_up, ref, tol, torch.bfloat16)
    assert not ok and "ulp" in message


def test_overflow_to_inf_in_the_output_dtype_is_expected():
    ref = torch.tensor([70000.0, -1e6, 1.0], dtype=torch.float64)  # beyond fp16's largest finite, 65504
    tol = Tolerance(atol=0.0, rtol=1e-3)
    right = torch.tensor([float("inf"), float("-inf"), 1.0], dtype=torch.float16)
    assert check.compare(right, ref, tol, torch.float16)[0]
    clamped = torch.tensor([65504.0, -65504.0, 1.0], dtype=torch.float16)
    ok, message, _ = check.compare(clamped, ref, tol, torch.float16)
    assert not ok and "non-finite reference" in message


def test_outputs_are_judged_in_their_own_dtypes_and_exact_tolerances_are_exact():
    """An op whose outputs have dtypes of their own (Op.output_dtypes: fp8_quant's float8 q and float32 scales): q
    returned in the input's dtype is refused for its dtype; with an exact tolerance, one e4m3 step off in one
    element fails and the figures stay finite where every element is right."""
    from specs import fp8_quant

    op = discover.load_op("fp8_quant")
    x, group = fp8_quant.make_inputs((3, 64, 32), torch.float32, "cpu", torch.Generator().manual_seed(0))
    ref = op.reference(x.double(), group)
    expect = op.output_dtype(torch.float32)
    assert expect == (torch.float8_e4m3fn, torch.float32)
    q, scales = fp8_quant.torch_eager(x, group)
    ok, message, figures = check.compare_outputs((q, scales), ref, op.tolerance(torch.float32, (3, 64, 32)), expect,
                                                 op.output_names)
    assert ok and figures["worst_ratio"] == 0.0, message
    ok, message, _ = check.compare_outputs((q.float(), scales), ref, op.tolerance(torch.float32, (3, 64, 32)),
                                           expect, op.output_names)
    assert not ok and "q:" in message and "dtype" in message
    nudged = q.view(torch.uint8).clone()
    nudged[1, 5] += 1  # the next e4m3 code: one step away
    ok, message, _ = check.compare_outputs((nudged.view(torch.float8_e4m3fn), scales), ref,
                                           op.tolerance(torch.float32, (3, 64, 32)), expect, op.output_names)
    assert not ok and "1 of 192" in message, message


def _judgment_cases():
    """(out, ref, tol, dtype): outputs right, barely right, wrong in one element, NaN, inf, against finite and
    overflowing references, with relative, absolute, ulp and exact tolerances."""
    g = torch.Generator().manual_seed(1)
    ref = torch.randn(3000, generator=g, dtype=torch.float64) * 3
    ref[::97] = 0.0
    relative = Tolerance(atol=1e-5, rtol=1e-3)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        right = ref.to(dtype)
        for reference in (ref, right.to(torch.float64)):  # the second held exactly by the dtype: exact tolerances pass
            for tol in (relative, Tolerance(atol=0.0, rtol=1e-2), Tolerance(atol=0.0, rtol=0.0, ulps=1),
                        Tolerance(atol=0.0, rtol=0.0)):
                yield right, reference, tol, dtype
                for index, value in ((5, 1.0), (6, float("nan")), (7, float("inf")), (97, 1e-3)):
                    wrong = right.clone()
                    wrong[index] = wrong[index] + value if value in (1.0, 1e-3) else value
                    yield wrong, reference, tol, dtype
    overflowing = ref.clone()
    overflowing[3] = 1e6  # rounds to inf in float16: the output must be inf there
    for at_3 in (float("inf"), 65504.0):
        out = overflowing.to(torch.float16)
        out[3] = at_3
        yield out, overflowing, relative, torch.float16
    # References with inf, -inf and NaN (an op's special inputs): the output must match them exactly there.
    special = ref.clone()
    special[10], special[11], special[12] = float("inf"), float("-inf"), float("nan")
    for dtype in (torch.float32, torch.bfloat16):
        right = special.to(dtype)
        for tol in (relative, Tolerance(atol=0.0, rtol=0.0, ulps=1), Tolerance(atol=0.0, rtol=0.0)):
            yield right, special.to(dtype).to(torch.float64) if tol.atol == 0 else special, tol, dtype
            for index, value in ((10, float("nan")), (10, 1.0), (11, float("inf")), (12, 0.0), (13, float("nan")),
                                 (14, float("inf")), (15, 1.0)):
                wrong = right.clone()
                wrong[index] = wrong[index] + value if index == 15 else value
                yield wrong, special, tol, dtype
    yield torch.empty(0), torch.empty(0, dtype=torch.float64), relative, torch.float32


def test_the_short_path_of_the_judge_agrees_with_the_full_judgment():
    """compare() judges a passing output in a few passes and falls back to the element-by-element judgment
    otherwise: on every case the verdict, the figures and the message are the full judgment's."""
    seen = set()
    for out, ref, tol, dtype in _judgment_cases():
        ok, message, figures = check.compare(out, ref, tol, dtype)
        full = check._judged_in_full(out.to(torch.float64), check.expectation(ref, tol, dtype), tol)
        assert (ok, message) == full[:2], (dtype, tol, message, full[1])
        assert figures.keys() == full[2].keys()
        for key, value in figures.items():
            assert value == full[2][key] or (value != value and full[2][key] != full[2][key]), (key, dtype, tol)
        seen.add(ok)
    assert seen == {True, False}


def test_a_passing_output_is_judged_by_the_short_path_also_where_the_reference_is_not_finite():
    ref = torch.linspace(-3, 3, 1000, dtype=torch.float64)
    ref[7], ref[8], ref[9] = float("inf"), float("-inf"), float("nan")
    tol = Tolerance(atol=1e-5, rtol=1e-3)
    e = check.expectation(ref, tol, torch.float32)
    assert e.special.tolist() == [7, 8, 9]
    assert check._figures_if_within(ref.to(torch.float32).to(torch.float64), e, tol) is not None
    wrong = ref.to(torch.float32)
    wrong[9] = 0.0  # a finite output where the reference is NaN
    assert check._figures_if_within(wrong.to(torch.float64), e, tol) is None
    ok, message, _ = check.compare(wrong, ref, tol, torch.float32)
    assert not ok and "non-finite" in message, message
    # An output handed back as a view in another memory order (a transpose) is judged the same.
    square = ref[:900].reshape(30, 30)
    e = check.expectation(square, tol, torch.float32)
    transposed = square.t().contiguous().t().to(torch.float32)
    assert not transposed.is_contiguous() and check.compare(transposed, square, tol, torch.float32)[0]
    assert check._figures_if_within(transposed.to(torch.float64), e, tol) is not None
    transposed[0, 9] = 0.0  # where the reference is NaN
    assert not check.compare(transposed, square, tol, torch.float32)[0]


def _degenerate_by_the_median(ref, tol):
    """is_degenerate as first written: the all-zeros output, then the median as the constant, always."""
    bound = tol.atol + tol.rtol * ref.abs()
    if bool((ref.abs() <= bound).all()):
        return "zeros"
    return "constant" if bool(((ref - ref.median()).abs() <= bound).all()) else ""


def test_degenerate_references_are_found_without_the_median_where_the_values_spread_wide():
    """is_degenerate skips the median (a sort) where the values spread wider than twice the widest bound; on wide,
    narrow and constant references it finds what the median always finds."""
    g = torch.Generator().manual_seed(2)
    for scale in (1e-9, 1e-6, 1e-4, 1e-2, 1.0):
        for offset in (0.0, 1.0, 100.0):
            ref = offset + scale * torch.randn(513, generator=g, dtype=torch.float64)
            for tol in (Tolerance(atol=1e-6, rtol=1e-3), Tolerance(atol=1e-3, rtol=0.0), Tolerance(atol=0.0, rtol=0.02)):
                found, expected = check.is_degenerate(ref, tol), _degenerate_by_the_median(ref, tol)
                assert (expected in found if expected else found == ""), (scale, offset, tol, found)


def test_the_degeneracy_test_reusing_a_cases_bounds_finds_what_it_finds_alone():
    """judge_case hands is_degenerate the bounds it computed for call A (compare.check.prepare): the same answer as
    computing them again, with and without ulps, on finite references and on ones with inf and NaN."""
    g = torch.Generator().manual_seed(3)
    for offset, scale in ((0.0, 1.0), (1.0, 1e-7), (0.0, 1e-9)):
        ref = offset + scale * torch.randn(1000, generator=g, dtype=torch.float64)
        special = ref.clone()
        special[3], special[4] = float("inf"), float("nan")
        for reference in (ref, special):
            for tol in (Tolerance(atol=1e-6, rtol=1e-3), Tolerance(atol=0.0, rtol=0.0, ulps=4)):
                alone = check.is_degenerate(reference, tol, torch.float32)
                reused = check.is_degenerate(reference, tol, torch.float32, check.prepare(reference, tol, torch.float32))
                assert alone == reused, (offset, scale, tol, alone, reused)


def _references_at_the_edges(tol, dtype, g, n=65):
    """References for the degeneracy test: random ones of every magnitude and spread, around zero and around a
    value; at the edge of each test (values at and just beyond their own bound, spreads at and just beyond twice the
    bound); near the output dtype's smallest normal number and its largest value (an fp16 overflow when rounded);
    empty, one element, all zeros, float64's extremes, and inf and NaN among the values."""
    info = torch.finfo(dtype or torch.float32)
    for scale in (1e-300, info.eps * info.tiny, info.tiny, 1e-9, 1e-3, 1.0, 1e3, info.max):
        for spread in (0.0, 1e-12, 1e-7, 1e-4, 1e-2, 1.0, 100.0):
            noise = torch.randn(n, generator=g, dtype=torch.float64)
            yield scale * (1 + spread * noise)
            yield scale * spread * noise
    fixed_point = 0.0  # where |x| equals its own bound: an all-zeros output just passes at x, and fails beyond it
    for _ in range(64):
        fixed_point = float(check._bound(torch.tensor([fixed_point], dtype=torch.float64), tol, dtype)[0])
    for c in (0.0, info.eps * info.tiny, info.tiny, 1.0, 1.5, 2.0 ** 10, info.max):
        bound = float(check._bound(torch.tensor([c], dtype=torch.float64), tol, dtype)[0])
        for k in (0.5, 1 - 1e-9, 1.0, 1 + 1e-9, 1 + 1e-6, 1.01, 2.0):
            yield torch.full((n,), k * fixed_point, dtype=torch.float64)
            yield c + k * bound * torch.linspace(-1, 1, n, dtype=torch.float64)
            yield c + k * bound * torch.tensor([-1.0, 1.0], dtype=torch.float64)
            yield c - k * bound * torch.rand(n, generator=g, dtype=torch.float64)
    yield torch.zeros(n, dtype=torch.float64)
    yield torch.zeros(0, dtype=torch.float64)
    yield torch.tensor(3.0, dtype=torch.float64)
    yield torch.tensor([1e-300], dtype=torch.float64)
    yield torch.tensor([1.7e308, -1.7e308, 0.0], dtype=torch.float64)
    for special in (float("inf"), float("-inf"), float("nan")):
        ref = torch.randn(n, generator=g, dtype=torch.float64)
        ref[n // 2] = special
        yield ref
        yield torch.tensor([special, 2.0, 2.0], dtype=torch.float64)
        yield torch.full((n,), special, dtype=torch.float64)


def test_the_degeneracy_test_decides_plain_references_from_their_extremes_as_the_full_test_does():
    """is_degenerate first tries to rule both trivial outputs out from the reference's lowest and highest values,
    against a bound no element's bound exceeds, and computes every element's bound only where that can't tell: the
    same verdict as the full test everywhere, with the dtype's ulps or without, with rtol and atol 0 or not; and a
    typical reference is decided without the full test, or it would save nothing."""
    g = torch.Generator().manual_seed(4)
    tolerances = (Tolerance(atol=1e-6, rtol=1e-3), Tolerance(atol=0.0, rtol=2.0**-18), Tolerance(atol=1e-3, rtol=0.0),
                  Tolerance(atol=0.0, rtol=0.0), Tolerance(atol=0.0, rtol=0.0, ulps=1),
                  Tolerance(atol=0.0, rtol=0.0, ulps=0.5), Tolerance(atol=2.0**-20, rtol=0.0, ulps=4),
                  Tolerance(atol=1e-7, rtol=1e-5, ulps=2), Tolerance(atol=0.0, rtol=2.0))
    verdicts = set()
    for dtype in (torch.float32, torch.float16, torch.bfloat16, None):
        for tol in tolerances:
            for ref in _references_at_the_edges(tol, dtype, g):
                full = check._degenerate_in_full(ref, tol, dtype)
                quick = check._plainly_not_degenerate(ref, tol, dtype)
                assert full == "" or not quick, (dtype, tol, ref, full)
                assert check.is_degenerate(ref, tol, dtype) == full, (dtype, tol, ref, full)
                if dtype is not None:
                    assert check.is_degenerate(ref, tol, dtype, check.prepare(ref, tol, dtype)) == full
                verdicts.add((full.split(" ")[1] if full else "", quick))
            typical = torch.randn(4099, generator=g, dtype=torch.float64)
            assert check._plainly_not_degenerate(typical, tol, dtype) == (tol.rtol < 1), (dtype, tol)
    # Both trivial outputs found, and references the quick test decides and ones it leaves to the full test.
    assert {("all-zeros", False), ("constant", False), ("", False), ("", True)} <= verdicts, verdicts
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        tol = GELU.tolerance(dtype, SHAPE)
        ref = GELU.reference(torch.randn(SHAPE, generator=g, dtype=torch.float64))
        assert check._plainly_not_degenerate(ref, tol, dtype), dtype


@pytest.mark.gpu
@pytest.mark.parametrize("layout", [None, "every other element"])
def test_no_input_handed_to_a_row_shares_a_cuda_allocation_with_the_judges_copies(layout):
    """CUDA IPC hands a worker the whole allocation (the caching allocator's segment) a tensor sits in: no input of a
    case may sit in one that holds the judge's pristine copies (compare.isolate.handed_over), and where torch's
    memory pools can keep every tensor apart (no_split), no two inputs share one either."""
    import inspect

    from compare.schedule import RANDOM, CheckCase

    op = discover.load_op("gelu")
    inputs = check.case_inputs(op, CheckCase(torch.float32, (1025,), RANDOM, layout, (1, 2, 3)), torch.device("cuda"))
    segments = [(s["address"], s["address"] + s["total_size"]) for s in torch.cuda.memory_snapshot()]

    def segment_of(t):
        return next(s for s in segments if s[0] <= t.data_ptr() < s[1])

    kept = {segment_of(t) for t in inputs.pristine_a + inputs.pristine_b}
    handed = [segment_of(t) for t in inputs.warmup + inputs.a + inputs.b]
    assert not kept & set(handed)
    if "no_split" in inspect.signature(torch.cuda.MemPool.__init__).parameters:
        assert len(set(handed)) == len(handed)


@pytest.mark.gpu
def test_the_memory_of_inputs_handed_over_goes_back_to_the_driver_once_released():
    """torch.cuda.empty_cache() leaves a memory pool in use alone: the harness lets go of the pool of
    compare.isolate.handed_over right before it, or its memory would stay reserved for the rest of the run."""
    from compare import isolate

    isolate.release_handed_over()
    torch.cuda.empty_cache()
    before = torch.cuda.memory_reserved()
    with isolate.handed_over(torch.device("cuda")):
        handed = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    assert torch.cuda.memory_reserved() >= before + (256 << 20)
    del handed
    torch.cuda.empty_cache()
    assert torch.cuda.memory_reserved() >= before + (256 << 20)  # still cached, in a pool in use
    isolate.release_handed_over()
    torch.cuda.empty_cache()
    assert torch.cuda.memory_reserved() <= before
