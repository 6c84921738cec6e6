"""The specs' special inputs, references and tolerances, judged by the harness's own rule (compare.check.compare):
each special input set holds what it says at every check shape; torch's own op and the exactly rounded reference
pass every set in every dtype; a different function (GELU with erf, softmax without the max subtraction, matmul
accumulating in fp16) and a bf16 kernel that stages its values through fp16 fail. torch's ops run on the CPU here,
bf16 included (only Triton's interpreter is untrustworthy in bf16)."""
import math

import pytest
import torch

from compare import check, discover
from specs import _special

OPS = {name: discover.load_op(name) for name in ("gelu", "add", "softmax", "matmul")}
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
CPU = torch.device("cpu")
# Small shapes for the judged cases (with an fp16 softmax row longer than 65504 for the tied rows' sum).
SHAPES = {"gelu": [(1,), (127,), (4099,)], "add": [(1,), (127,), (4099,)],
          "softmax": [(1, 1), (7, 3), (5, 127), (6, 1000), (3, 70000)],
          "matmul": [(1, 1, 1), (17, 33, 9), (40, 24, 70), (200, 264, 520)]}


def inputs(op, setname, shape, dtype, seed=0, device=CPU):
    make = op.make_inputs if setname == "random" else op.special_inputs[setname]
    return make(shape, dtype, device, torch.Generator(device=device).manual_seed(seed))


def judge(op, out, ins, shape):
    dtype = ins[0].dtype
    ref = op.reference(*[t.double() for t in ins])
    tol = op.tolerance(dtype, shape)
    ok, message, _ = check.compare(out, ref, tol, dtype)
    return ok, message, check.is_degenerate(ref, tol, dtype)


def rounded_reference(op, ins):
    return op.reference(*[t.double() for t in ins]).to(ins[0].dtype)


def all_cases():
    for name, op in OPS.items():
        for setname in ["random", *op.special_inputs]:
            for dtype in DTYPES:
                yield name, setname, dtype


CASES = list(all_cases())
IDS = [f"{n}-{s}-{str(d)[6:]}" for n, s, d in CASES]


# ---- every op has the three kinds of special input, and they hold what they say ---------------------------------
def test_every_op_has_range_edges_inf_and_nan_and_subnormals():
    for name, op in OPS.items():
        assert {"range edges", "inf and nan", "subnormals"} <= set(op.special_inputs), name
    assert {"large magnitudes", "with -inf"} <= set(OPS["softmax"].special_inputs)


@pytest.mark.parametrize("name", list(OPS))
def test_special_inputs_fit_every_check_shape_and_are_deterministic(name, device):
    op = OPS[name]
    for setname, make in op.special_inputs.items():
        for shape in op.check_shapes:
            a = make(tuple(shape), torch.float16, device, torch.Generator(device=device).manual_seed(5))
            b = make(tuple(shape), torch.float16, device, torch.Generator(device=device).manual_seed(5))
            c = op.make_inputs(tuple(shape), torch.float16, device, torch.Generator(device=device).manual_seed(5))
            assert len(a) == len(c), (setname, shape)
            for x, y, z in zip(a, b, c):
                assert x.shape == z.shape and x.dtype == torch.float16 and x.device.type == device.type
                assert torch.equal(x.view(torch.int16), y.view(torch.int16)), (setname, shape)  # same seed, same bits
            ref = op.reference(*[t.double() for t in a])
            assert ref.shape == op.reference(*[t.double() for t in c]).shape


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_the_sets_hold_range_edges_nonfinite_values_and_subnormals(dtype):
    info = torch.finfo(dtype)
    for name, op in OPS.items():
        shape = {"gelu": (4099,), "add": (4099,), "softmax": (12, 1000), "matmul": (40, 24, 70)}[name]
        edges = torch.cat([t.flatten() for t in inputs(op, "range edges", shape, dtype)])
        assert torch.isfinite(edges).all() and float(edges.abs().max()) >= info.max / 2, name
        if name != "softmax":  # softmax's odd rows reach down to -max too
            assert float(edges.abs().max()) == info.max or name == "matmul", name
        special = torch.cat([t.flatten() for t in inputs(op, "inf and nan", shape, dtype)])
        assert bool((special == float("inf")).any()) and bool(special.isnan().any()), name
        if name in ("gelu", "add"):
            assert bool((special == float("-inf")).any()), name
        sub = torch.cat([t.flatten() for t in inputs(op, "subnormals", shape, dtype)])
        subnormal = (sub != 0) & (sub.abs() < info.tiny)
        assert int(subnormal.sum()) >= sub.numel() // 8 or name == "matmul", name
        if name == "matmul":
            assert bool(subnormal.any())


def test_one_element_cases_always_have_something_to_judge():
    """The judge refuses a case that an all-zeros output would pass; at one element that is one tiny value."""
    for name, op in OPS.items():
        shape = SHAPES[name][0]
        for setname in ["random", *op.special_inputs]:
            for dtype in DTYPES:
                for seed in range(40):
                    ins = inputs(op, setname, shape, dtype, seed)
                    ref = op.reference(*[t.double() for t in ins])
                    assert check.is_degenerate(ref, op.tolerance(dtype, shape), dtype) == "", (name, setname, dtype,
                                                                                                seed)


# ---- torch's own op and the exact answer pass everything --------------------------------------------------------
def cpu_bf16_matmul_flushes_subnormals(shape) -> bool:
    """Whether torch's CPU bf16 matmul at this (M, N, K) reads subnormal operands as zero. Some CPU paths do (oneDNN
    on an AMD EPYC with AVX-512 BF16, at (17, 33, 9) but not at 4x4x4): there torch:eager is no answer to judge
    the subnormal inputs against, while the GPU's matmul and the rounded reference still are."""
    m, n, k = shape
    a = torch.full((m, k), 2.0**100, dtype=torch.bfloat16)
    b = torch.full((k, n), 2.0**-130, dtype=torch.bfloat16)  # subnormal in bf16; each product 2^-30
    return float((a @ b)[0, 0]) == 0.0


@pytest.mark.parametrize("name,setname,dtype", CASES, ids=IDS)
def test_torch_eager_and_the_rounded_reference_pass(name, setname, dtype):
    op = OPS[name]
    for shape in SHAPES[name]:
        for seed in range(2):
            ins = inputs(op, setname, shape, dtype, seed)
            flushed = (name == "matmul" and setname == "subnormals" and dtype == torch.bfloat16
                       and cpu_bf16_matmul_flushes_subnormals(shape))
            candidates = [("rounded reference", rounded_reference(op, ins))]
            if not flushed:
                candidates.insert(0, ("torch:eager", op.torch_eager(*[t.clone() for t in ins])))
            for who, out in candidates:
                ok, message, degenerate = judge(op, out, ins, shape)
                assert ok and not degenerate, f"{who} {shape} seed {seed}: {message} {degenerate}"


# ---- reference semantics ------------------------------------------------------------------------------------------
def test_gelu_reference_semantics_match_torch_on_non_finite_inputs():
    op = OPS["gelu"]
    x = torch.tensor([float("inf"), float("-inf"), float("nan"), -3e38, 3e38, -20.0, 1e-40])
    ref = op.reference(x.double())
    assert ref[0] == float("inf") and ref[1].isnan() and ref[2].isnan() and ref[3] == 0 and ref[4] == float(x[4])
    for dtype in DTYPES:
        xt = x.to(dtype)
        torch_out = torch.nn.functional.gelu(xt, approximate="tanh").double()
        mine = op.reference(xt.double()).to(dtype).double()
        assert torch.equal(mine.isnan(), torch_out.isnan()) and mine[0] == torch_out[0] == float("inf")


def test_gelu_reference_is_accurate_where_the_tanh_form_cancels():
    # 0.5·x·(1 + tanh(u)) in float64 is exactly -0 at x = -8 (tanh(u) rounds to -1); gelu(-8) is about -3e-21,
    # a normal fp32 number, and an accurate fp32 kernel returns it.
    op = OPS["gelu"]
    x = torch.tensor([-8.0], dtype=torch.float64)
    u = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
    assert float(0.5 * x * (1 + torch.tanh(u))) == 0.0
    exact = -8.0 / (1.0 + math.exp(-2 * float(u)))
    assert math.isclose(float(op.reference(x)), exact, rel_tol=1e-12) and exact < -1e-21


def test_softmax_reference_rows_with_nan_inf_or_only_minus_inf_are_nan():
    op = OPS["softmax"]
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([[inf, 0.0, 1.0], [nan, 0.0, 1.0], [-inf, -inf, -inf], [-inf, 0.0, 1.0], [inf, -inf, 0.0]])
    ref = op.reference(x.double())
    assert bool(ref[[0, 1, 2, 4]].isnan().all()) and not bool(ref[3].isnan().any()) and float(ref[3, 0]) == 0
    assert torch.equal(torch.softmax(x, -1).isnan(), ref.isnan())  # what torch itself gives


def test_softmax_inf_and_nan_rows_by_kind():
    op = OPS["softmax"]
    (x,) = inputs(op, "inf and nan", (12, 1000), torch.float32)
    ref = op.reference(x.double())
    nan_rows = ref.isnan().all(dim=1)
    assert nan_rows.tolist() == [r % 6 not in (0, 5) for r in range(12)]
    assert not bool(ref[~nan_rows].isnan().any())
    # kind 2: a NaN among the first half's -inf entries
    assert bool(x[2, :500].isnan().any()) and bool((x[2, :500] == float("-inf")).sum() == 499)


def test_matmul_reference_nonfinite_semantics_match_torch():
    op = OPS["matmul"]
    for dtype in DTYPES:
        a, b = inputs(op, "inf and nan", (40, 24, 70), dtype)
        ref = op.reference(a.double(), b.double())
        torch_out = (a.float() @ b.float()).double()
        assert torch.equal(ref.isnan(), torch_out.isnan()), dtype
        assert torch.equal(ref == float("inf"), torch_out == float("inf"))
        assert torch.equal(ref == float("-inf"), torch_out == float("-inf"))
        assert 0.3 < float(torch.isfinite(ref).float().mean()) < 0.7
        assert bool((ref == float("inf")).any()) and bool((ref == float("-inf")).any()) and bool(ref.isnan().any())


def test_matmul_range_edges_overflow_the_dtype_in_the_big_rows_only():
    op = OPS["matmul"]
    for dtype in DTYPES:
        for shape in ((9, 5, 1), (9, 5, 70), (9, 5, 4096)):
            a, b = inputs(op, "range edges", shape, dtype)
            assert float(a.abs().max()) > torch.finfo(dtype).max / 2
            expected = rounded_reference(op, (a, b)).double()
            big = torch.arange(shape[0]) % 4 == 1
            assert bool(torch.isinf(expected[big]).all()) and bool(torch.isfinite(expected[~big]).all())
            assert 0.3 < float(expected[~big].std()) < 3  # the other rows' outputs are the random inputs' size


# ---- a different function, or a narrower type, fails --------------------------------------------------------------
def gelu_erf(x):
    v = x.float()
    return (0.5 * v * (1.0 + torch.erf(v * 0.7071067811865476))).to(x.dtype)


def gelu_via_fp16(x):
    return torch.nn.functional.gelu(x.to(torch.float16).float(), approximate="tanh").to(x.dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gelu_with_erf_fails_in_every_dtype(dtype):
    op = OPS["gelu"]
    ins = inputs(op, "random", (4099,), dtype)
    ok, message, _ = judge(op, gelu_erf(*ins), ins, (4099,))
    assert not ok and "outside" in message


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_gelu_staged_through_fp16_fails_on_the_range_edges(dtype):
    op = OPS["gelu"]
    ins = inputs(op, "range edges", (4099,), dtype)
    ok, message, _ = judge(op, gelu_via_fp16(*ins), ins, (4099,))
    assert not ok and "inf" in message


def gelu_formulas():
    """Each row's fp32 formula, emulated with torch's fp32 ops (exact exp, as Triton's interpreter has)."""
    c1, c2 = 0.7978845608028654, 0.044715

    def u(v):
        return c1 * (v + c2 * v * v * v)

    return {
        "triton:basic": lambda v: 0.5 * v * (1.0 + (1.0 - 2.0 / (torch.exp(2.0 * u(v)) + 1.0))),
        "triton:tuned": lambda v: v / (1.0 + torch.exp2(u(v) * -2.8853900817779268)),
        "cuda:naive": lambda v: 0.5 * v * (1.0 + torch.tanh(u(v))),
        "cuda:vec": lambda v: v / (1.0 + torch.exp(-2.0 * u(v))),
    }


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_gelu_formula_passes_on_a_dense_sweep(dtype):
    """The measurement the tolerances rest on, in small: every finite fp16/bf16 value, and every 997th fp32 bit
    pattern, through each row's formula in fp32, rounded once."""
    op = OPS["gelu"]
    if dtype == torch.float32:
        patterns = torch.arange(0, 0x7F800000, 997, dtype=torch.int32)
    else:
        patterns = torch.arange(0, 0x7C00 if dtype == torch.float16 else 0x7F80, dtype=torch.int32).to(torch.int16)
    x = patterns.view(dtype)
    x = torch.cat([x, -x])
    for row, formula in {**gelu_formulas(), "torch:eager": None}.items():
        out = op.torch_eager(x) if formula is None else formula(x.float()).to(dtype)
        ok, message, _ = judge(op, out, (x,), tuple(x.shape))
        assert ok, f"{row}: {message}"
    ok, message, _ = judge(op, gelu_erf(x), (x,), tuple(x.shape))
    assert not ok


def add_in_fp32(x, y):
    return (x.float() + y.float()).to(x.dtype)


def test_add_is_judged_exactly():
    op = OPS["add"]
    for dtype in DTYPES:
        for setname in ["random", *op.special_inputs]:
            x, y = inputs(op, setname, (4099,), dtype)
            ok, message, _ = judge(op, add_in_fp32(x, y), (x, y), (4099,))
            assert ok, f"{dtype} {setname}: {message}"  # fp32 arithmetic, rounded once: the exact answer
            right = add_in_fp32(x, y)
            finite = torch.isfinite(right) & (right != 0)
            if not bool(finite.any()):
                continue
            off = right.clone()
            i = int(torch.nonzero(finite)[0])
            off[i] = torch.nextafter(right[i:i + 1].float(), torch.tensor([math.inf])).to(dtype)[0] \
                if dtype == torch.float32 else (right[i:i + 1].float() * (1 + 4 * torch.finfo(dtype).eps)).to(dtype)[0]
            assert not judge(op, off, (x, y), (4099,))[0], f"{dtype} {setname}: one ulp off passed"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_add_that_flushes_subnormals_fails(dtype):
    op = OPS["add"]
    x, y = inputs(op, "subnormals", (4099,), dtype)
    tiny = torch.finfo(dtype).tiny

    def flush(t):
        return torch.where(t.abs() < tiny, torch.zeros_like(t), t)

    ok, _, _ = judge(op, flush(add_in_fp32(flush(x), flush(y))), (x, y), (4099,))
    assert not ok


def test_bf16_add_staged_through_fp16_fails_on_the_range_edges():
    op = OPS["add"]
    x, y = inputs(op, "range edges", (4099,), torch.bfloat16)
    out = (x.to(torch.float16) + y.to(torch.float16)).to(torch.bfloat16)
    ok, message, _ = judge(op, out, (x, y), (4099,))
    assert not ok


def softmax_without_max(x):
    e = torch.exp(x.float())
    return (e / e.sum(-1, keepdim=True)).to(x.dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_softmax_without_the_max_subtraction_fails_on_large_magnitudes(dtype):
    op = OPS["softmax"]
    ins = inputs(op, "large magnitudes", (6, 1000), dtype)
    ok, message, _ = judge(op, softmax_without_max(*ins), ins, (6, 1000))
    assert not ok and "NaN" in message
    ins = inputs(op, "random", (6, 1000), dtype)
    assert judge(op, softmax_without_max(*ins), ins, (6, 1000))[0]  # right where exp doesn't overflow


def test_softmax_with_an_fp16_sum_fails_on_the_tied_rows():
    op = OPS["softmax"]
    ins = inputs(op, "range edges", (4, 70000), torch.float16)
    x = ins[0].float()
    e = torch.exp(x - x.max(-1, keepdim=True).values)
    total = torch.nn.functional.pad(e, (0, 131072 - e.shape[1])).half()
    while total.shape[1] > 1:  # a tree sum in fp16: row 0's 70000 ties overflow it to inf
        half = total.shape[1] // 2
        total = total[:, :half] + total[:, half:]
    out = (e / total.float()).half()
    ok, _, _ = judge(op, out, ins, (4, 70000))
    assert not ok


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_softmax_in_a_narrower_type_fails(dtype):
    op = OPS["softmax"]
    narrower = torch.bfloat16 if dtype != torch.bfloat16 else None
    ins = inputs(op, "random", (6, 1000), dtype)
    if narrower is not None:  # fp32/fp16 output computed in bf16
        out = torch.softmax(ins[0].to(narrower), -1).to(dtype)
    else:  # bf16 staged through fp16: its range edges overflow
        ins = inputs(op, "range edges", (6, 1000), dtype)
        out = torch.softmax(ins[0].to(torch.float16).float(), -1).to(dtype)
    assert not judge(op, out, ins, (6, 1000))[0]


def matmul_narrow_accumulate(a, b):
    """C accumulated in the 16-bit input type, one k at a time (an MMA with an fp16 or bf16 accumulator)."""
    acc = torch.zeros((a.shape[0], b.shape[1]), dtype=a.dtype)
    for k in range(a.shape[1]):
        acc = (acc.float() + a[:, k:k + 1].float() * b[k:k + 1, :].float()).to(a.dtype)
    return acc


def matmul_split_k_reduced(a, b, splits=8):
    """What cuBLAS may do in fp16/bf16: K in `splits` slices, each accumulated in fp32 and rounded to the dtype,
    then reduced in the dtype."""
    parts = [(a[:, s].float() @ b[s, :].float()).to(a.dtype) for s in torch.arange(a.shape[1]).chunk(splits)]
    out = parts[0]
    for p in parts[1:]:
        out = (out.float() + p.float()).to(a.dtype)
    return out


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_matmul_accumulating_in_16_bits_fails_and_split_k_reduction_passes(dtype):
    op = OPS["matmul"]
    shape = (200, 264, 520)
    a, b = inputs(op, "random", shape, dtype)
    ok, message, _ = judge(op, matmul_narrow_accumulate(a, b), (a, b), shape)
    assert not ok and "outside" in message
    for splits in (2, 4, 8):  # cuBLAS's reduced-precision split-K, as measured (the bound has twice its error)
        ok, message, _ = judge(op, matmul_split_k_reduced(a, b, splits), (a, b), shape)
        assert ok, f"{splits} splits: {message}"


def test_bf16_matmul_staged_through_fp16_fails():
    # "subnormals" holds A up to 7·2^125 (inf in fp16) and B below fp16's range (0 there). ("range edges" does not
    # show it: its huge rows are ±inf either way, its other entries fit fp16.)
    op = OPS["matmul"]
    shape = (40, 24, 70)
    a, b = inputs(op, "subnormals", shape, torch.bfloat16)
    out = (a.to(torch.float16).float() @ b.to(torch.float16).float()).to(torch.bfloat16)
    assert not judge(op, out, (a, b), shape)[0]


def test_matmul_fp32_bound_is_tighter_than_a_bf16_rounding_of_the_inputs():
    op = OPS["matmul"]
    shape = (200, 264, 520)
    a, b = inputs(op, "random", shape, torch.float32)
    out = a.to(torch.bfloat16).float() @ b.to(torch.bfloat16).float()
    assert not judge(op, out, (a, b), shape)[0]


def test_helpers_draw_exact_edge_values():
    g = torch.Generator().manual_seed(0)
    for dtype in DTYPES:
        info = torch.finfo(dtype)
        top = _special.top_binades((10000,), dtype, CPU, g)
        assert bool(torch.isfinite(top).all()) and float(top.abs().max()) == info.max
        assert float(top.abs().min()) >= 2.0 ** (_special.largest_exponent(dtype) - 1)
        sub = _special.subnormals((10000,), dtype, CPU, g)
        assert float(sub.abs().min()) >= info.tiny * info.eps and float(sub.abs().max()) < 4 * info.tiny
        assert float((sub.abs() < info.tiny).float().mean()) > 0.7
        every = _special.every_binade((10000,), dtype, CPU, g)
        assert bool(torch.isfinite(every).all()) and bool((every.abs() < info.tiny).any())
        assert bool((every > 1).any()) and bool((every < -1).any())
