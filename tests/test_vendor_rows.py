"""The vendor library's own entry points as rows (Op.vendor_rows) and a compute-bound op's ceiling taken from the
fastest of its ceiling rows (Op.ceiling_rows): discovery, the spec checks, the ceiling per cell, the report's and
the json's words, and the notes of a run without a GPU. On CPU, with the matmul spec given vendor rows."""
import dataclasses
import json

import pytest

from compare import cli, discover, report, runner
from compare.results import OpResult, RowStatus, Status
from compare.timing import Timing

ENV = {"gpu": "NVIDIA H200", "torch": "2.11", "triton": "3.6", "cuda_runtime": "13.0", "nvcc": "13.0",
       "git_revision": "abc1234"}
CEILING = ["torch:sdpa-cudnn", "torch:sdpa-flash", "torch:sdpa-efficient"]


def vendor_a(a, b):
    return a @ b


def vendor_b(a, b):
    return (a @ b) * 1


def with_vendor_rows(**changes):
    """matmul with three vendor rows, whose fastest is its ceiling."""
    fields = dict(vendor_rows={"sdpa-cudnn": vendor_a, "sdpa-flash": vendor_b, "sdpa-efficient": vendor_a},
                  ceiling_rows=tuple(CEILING))
    return dataclasses.replace(discover.load_op("matmul"), **(fields | changes))


def test_vendor_rows_come_after_torch_eager_and_before_the_compile_rows_and_need_a_gpu():
    op = with_vendor_rows(compile_modes=("default", "max-autotune"))
    impls = discover.implementations(op)
    torch_rows = [i.name for i in impls if i.backend == "torch"]
    assert torch_rows == ["torch:eager", *CEILING, "torch:compile", "torch:compile-max-autotune"]
    vendor = [i for i in impls if i.name in CEILING]
    assert all(i.needs_gpu and i.source is None and i.op == "matmul" for i in vendor)
    assert [i.name for i in discover.select(impls, ["torch"])] == torch_rows  # --impls torch takes them
    plain = [i.name for i in discover.implementations(discover.load_op("matmul")) if i.backend == "torch"]
    assert plain == ["torch:eager", "torch:compile", "torch:compile-max-autotune"]  # no vendor rows declared


def test_a_vendor_row_loads_the_specs_function(monkeypatch):
    op = with_vendor_rows()
    monkeypatch.setattr(discover, "load_op", lambda name: op)
    impls = {i.name: i for i in discover.implementations(op)}
    assert impls["torch:sdpa-flash"].load() is vendor_b
    assert impls["torch:sdpa-cudnn"].load() is vendor_a
    assert impls["torch:eager"].load() is op.torch_eager


@pytest.mark.parametrize("name", ["eager", "compile", "compile-fast", "has space", "a:b"])
def test_a_vendor_row_named_like_a_harness_row_or_not_a_name_is_an_error(name):
    op = with_vendor_rows(vendor_rows={name: vendor_a}, ceiling_rows=("torch:eager",))
    with pytest.raises(discover.SpecError, match=r"specs/matmul\.py: vendor_rows \[.*\]: a vendor row's name"):
        discover.implementations(op)


def test_a_ceiling_row_that_is_not_a_row_is_an_error_that_lists_the_rows():
    op = with_vendor_rows(ceiling_rows=("torch:sdpa-cudnn", "torch:sdpa-flahs"))
    with pytest.raises(discover.SpecError, match=r"specs/matmul\.py: ceiling_rows names torch:sdpa-flahs, which is "
                                                 r"not a row of matmul; its rows are cuda:naive, .*torch:sdpa-cudnn"):
        discover.implementations(op)
    with pytest.raises(discover.SpecError, match=r"specs/matmul\.py: ceiling_rows is empty"):
        discover.implementations(with_vendor_rows(ceiling_rows=()))
    assert discover.implementations(with_vendor_rows())  # every name a row


def timed(impl, shape, tflops, median_ms=None, implausible=""):
    ms = median_ms if median_ms is not None else 100.0 / tflops
    return Timing(impl, "float16", shape, ms, ms * 0.99, ms * 1.01, 1 << 20, 10**12, 1.0, tflops,
                  implausible=implausible)


def compute_result(ceiling_rows=CEILING, rows=None):
    """Two cells: at S1 torch:sdpa-flash is the fastest ceiling row, at S2 torch:sdpa-cudnn; S3 has no ceiling row
    timed; torch:eager is slower everywhere."""
    timings = [timed("cuda:mma", "S1", 300.0), timed("torch:sdpa-cudnn", "S1", 400.0),
               timed("torch:sdpa-flash", "S1", 500.0), timed("torch:eager", "S1", 100.0),
               timed("cuda:mma", "S2", 300.0), timed("torch:sdpa-cudnn", "S2", 600.0),
               timed("torch:sdpa-flash", "S2", 450.0), timed("torch:eager", "S2", 150.0),
               timed("cuda:mma", "S3", 200.0)]
    names = list(dict.fromkeys(t.impl for t in timings))
    return OpResult("matmul", "C = A @ B", "compute", dict(ENV), timings=timings, ceiling_rows=list(ceiling_rows),
                    rows=rows if rows is not None else [RowStatus(n, Status.OK) for n in names])


def by(result, impl, shape):
    return next(t for t in result.timings if t.impl == impl and t.shape == shape)


def test_the_ceiling_is_the_fastest_ceiling_row_at_each_cell():
    r = compute_result()
    runner.relate_to_ceilings(r)
    mma1, mma2 = by(r, "cuda:mma", "S1"), by(r, "cuda:mma", "S2")
    assert mma1.fraction_of_ceiling == pytest.approx(300 / 500)
    assert mma1.ceiling == "torch:sdpa-flash (fastest vendor row)"
    assert mma2.fraction_of_ceiling == pytest.approx(300 / 600)
    assert mma2.ceiling == "torch:sdpa-cudnn (fastest vendor row)"
    assert by(r, "torch:sdpa-flash", "S1").fraction_of_ceiling == pytest.approx(1.0)
    assert by(r, "torch:sdpa-cudnn", "S1").fraction_of_ceiling == pytest.approx(0.8)
    no_ceiling = by(r, "cuda:mma", "S3")
    assert no_ceiling.fraction_of_ceiling is None and no_ceiling.ceiling == ""
    # The speedup stays over torch:eager, which is not a ceiling row here.
    assert mma1.speedup_vs_eager == pytest.approx(by(r, "torch:eager", "S1").median_ms / mma1.median_ms)


def test_a_ceiling_row_that_failed_or_was_refused_sets_no_ceiling():
    r = compute_result()
    status = {row.impl: row for row in r.rows}
    status["torch:sdpa-flash"] = RowStatus("torch:sdpa-flash", Status.FAIL, "1 check(s) failed")
    runner.relate_to_ceilings(r, status)
    mma1 = by(r, "cuda:mma", "S1")
    assert mma1.fraction_of_ceiling == pytest.approx(300 / 400) and mma1.ceiling.startswith("torch:sdpa-cudnn ")
    # The statuses default to the result's rows; an implausible timing counts for nothing either.
    r = compute_result(rows=[RowStatus("torch:sdpa-cudnn", Status.FAIL, "wrong")])
    by(r, "torch:sdpa-flash", "S2").implausible = "above the published peak"
    runner.relate_to_ceilings(r)
    assert by(r, "cuda:mma", "S1").fraction_of_ceiling == pytest.approx(300 / 500)
    assert by(r, "cuda:mma", "S2").fraction_of_ceiling is None  # cudnn failed, flash refused: no ceiling left


def test_the_default_ceiling_is_torch_eager_in_todays_words():
    r = compute_result(ceiling_rows=["torch:eager"])
    runner.relate_to_ceilings(r)
    mma = by(r, "cuda:mma", "S1")
    assert mma.fraction_of_ceiling == pytest.approx(3.0) and mma.ceiling == "torch:eager (vendor library)"
    assert OpResult("matmul", "", "compute", {}).ceiling_rows == ["torch:eager"]


def test_the_report_and_the_json_name_the_ceiling():
    r = compute_result()
    runner.relate_to_ceilings(r)
    titles = [s.title for s in report.timing_sections(r)]
    assert any("fraction of the fastest of torch:sdpa-cudnn, torch:sdpa-flash, torch:sdpa-efficient" in t
               for t in titles), titles
    md = report.markdown(r, {"command": "python -m compare matmul", "plot": None})
    assert "with the fraction of the fastest of torch:sdpa-cudnn, torch:sdpa-flash, torch:sdpa-efficient" in md
    assert "torch:eager (the vendor library)" not in md
    data = json.loads(json.dumps(report.to_json(r, "x"), default=str))
    assert data["ceiling_rows"] == CEILING
    assert data["timings"][0]["ceiling"] == "torch:sdpa-flash (fastest vendor row)"
    plain = compute_result(ceiling_rows=["torch:eager"])
    runner.relate_to_ceilings(plain)
    md = report.markdown(plain, {"command": "python -m compare matmul", "plot": None})
    assert "with the fraction of torch:eager (the vendor library) in brackets" in md and "fastest of" not in md
    assert any("(fraction of torch:eager)" in s.title for s in report.timing_sections(plain))
    memory = OpResult("gelu", "GELU", "memory", dict(ENV))
    assert "ceiling_rows" not in report.to_json(memory, "x")  # a memory-bound op's ceiling is the copy


def test_a_run_without_a_gpu_says_it_leaves_the_vendor_rows_out():
    op = with_vendor_rows()
    for impls, vendor, compiled in (("torch:sdpa-*", True, False), ("torch:compile", False, True),
                                    ("triton", False, False)):
        args = cli.make_parser().parse_args(["matmul", "--impls", impls])
        notes = "\n".join(cli.cpu_run_notes(args, [op], cli.choose_rows([op], args.impls, across_ops=False)))
        assert ("the vendor rows" in notes) == vendor and ("torch.compile rows" in notes) == compiled, (impls, notes)


def test_the_report_and_the_json_say_how_an_op_counts():
    """A spec's Op.counting (attention's FLOPs, halved for causal) is printed beside the timings and kept in the json;
    an op without one prints nothing of the kind."""
    op = discover.load_op("attention_causal")
    r = compute_result()
    r.counting = op.counting
    md = report.markdown(r, {"command": "python -m compare attention_causal", "plot": None})
    assert f"Counting: {op.counting}" in md and "2·B·H·S²·D" in md
    assert any(s.title.startswith("counting: FLOPs 2·B·H·S²·D") for s in report.sections(r))
    assert json.loads(json.dumps(report.to_json(r, "x"), default=str))["counting"] == op.counting
    plain = compute_result()
    assert "Counting:" not in report.markdown(plain, {"command": "x", "plot": None})
    assert "counting" not in report.to_json(plain, "x")
