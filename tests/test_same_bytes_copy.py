"""The per-shape memory ceiling: a plain copy of the same bytes, timed like the rows, reported beside them."""
import csv
import io
import json

import pytest
import torch

from compare import check, discover, isolate, report, results, runner, schedule, timing

ENV = {"gpu": "NVIDIA H200", "torch": "2.11", "triton": "3.6", "cuda_runtime": "13.0", "nvcc": "13.0",
       "git_revision": "abc1234"}
SMALL, LARGE = "M=4096 N=256", "M=4096 N=32768"
SMALL_BYTES, LARGE_BYTES = 8 << 20, 1 << 30


def timed(impl, shape, median_ms, nbytes, dtype="float32"):
    return timing.Timing(impl, dtype, shape, median_ms, 0.99 * median_ms, 1.01 * median_ms, nbytes, 0,
                         nbytes / median_ms / 1e6, 0.0)


def gbps(nbytes, median_ms):
    return nbytes / median_ms / 1e6


@pytest.fixture
def memory_result():
    """Softmax-like: at the small shape the copy itself reaches a third of the peak and the rows less."""
    r = results.OpResult("softmax", "row softmax", "memory", dict(ENV), ceilings=results.Ceilings(copy_gbps=4000.0))
    r.timings = [timed("cuda:split", SMALL, 0.008, SMALL_BYTES), timed("cuda:split", LARGE, 0.28, LARGE_BYTES),
                 timed("torch:eager", SMALL, 0.012, SMALL_BYTES), timed("torch:eager", LARGE, 0.35, LARGE_BYTES)]
    r.same_bytes_copies = [timed(timing.SAME_BYTES_COPY, SMALL, 0.006, SMALL_BYTES),
                           timed(timing.SAME_BYTES_COPY, LARGE, 0.27, LARGE_BYTES)]
    r.rows = [results.RowStatus("cuda:split", "ok"), results.RowStatus("torch:eager", "ok")]
    runner.relate_to_ceilings(r)
    return r


def md_table_after(md: str, heading: str) -> dict[str, list[str]]:
    """The first markdown table after the line that starts with heading, as {first cell: other cells}."""
    lines = md[md.index(heading):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        table[cells[0]] = cells[1:]
    return table


def test_each_row_gets_its_fraction_of_the_same_bytes_copy_and_keeps_its_fraction_of_the_peak(memory_result):
    fast_small = next(t for t in memory_result.timings if (t.impl, t.shape) == ("cuda:split", SMALL))
    assert fast_small.fraction_of_same_bytes_copy == pytest.approx(0.006 / 0.008)
    assert fast_small.fraction_of_ceiling == pytest.approx(gbps(SMALL_BYTES, 0.008) / 4000)
    assert fast_small.ceiling == "copy bandwidth"
    copy_small = memory_result.same_bytes_copies[0]
    assert copy_small.fraction_of_ceiling == pytest.approx(gbps(SMALL_BYTES, 0.006) / 4000)
    assert copy_small.speedup_vs_eager is None and copy_small.fraction_of_same_bytes_copy is None


def test_md_has_the_copy_line_and_the_fraction_table(memory_result):
    md = report.markdown(memory_result, {"command": "python -m compare softmax", "plot": None})
    rates = md_table_after(md, "## Timing, float32")
    assert rates[timing.SAME_BYTES_COPY] == [f"{gbps(SMALL_BYTES, 0.006):.0f} (0.35)",
                                             f"{gbps(LARGE_BYTES, 0.27):.0f} (0.99)"]
    assert rates["cuda:split"] == [f"{gbps(SMALL_BYTES, 0.008):.0f} (0.26)", f"{gbps(LARGE_BYTES, 0.28):.0f} (0.96)"]
    fractions = md_table_after(md, "Fraction of a copy of the same bytes")
    assert fractions == {"cuda:split": ["0.75", "0.96"], "torch:eager": ["0.50", "0.77"]}
    assert timing.SAME_BYTES_COPY in md_table_after(md, "Median ± IQR")
    assert timing.SAME_BYTES_COPY not in md_table_after(md, "Speedup over torch:eager")
    assert timing.SAME_BYTES_COPY not in md_table_after(md, "## Rows")
    # The prose says how the per-shape copy was measured.
    assert "`dst.copy_(src)`" in md and "same do_bench settings and L2 flush" in md and "rotation" in md


def test_csv_carries_the_per_shape_copy_as_columns_not_as_an_implementation(memory_result):
    lines = list(csv.DictReader(io.StringIO(report.to_csv(memory_result))))
    assert {line["impl"] for line in lines} == {"cuda:split", "torch:eager"}
    eager_large = next(line for line in lines if (line["impl"], line["shape"]) == ("torch:eager", LARGE))
    assert float(eager_large["same_bytes_copy_gbps"]) == pytest.approx(gbps(LARGE_BYTES, 0.27))
    assert float(eager_large["fraction_of_same_bytes_copy"]) == pytest.approx(0.27 / 0.35)
    assert float(eager_large["fraction_of_ceiling"]) == pytest.approx(gbps(LARGE_BYTES, 0.35) / 4000)


def test_json_puts_the_per_shape_copies_next_to_the_copy_bandwidth(memory_result):
    data = json.loads(json.dumps(report.to_json(memory_result, "python -m compare softmax"), default=str))
    ceilings = data["ceilings"]
    assert ceilings["copy_gbps"] == 4000.0
    by_shape = {c["shape"]: c for c in ceilings["same_bytes_copy"]}
    assert by_shape[SMALL]["gbps"] == pytest.approx(gbps(SMALL_BYTES, 0.006))
    assert by_shape[SMALL]["bytes"] == SMALL_BYTES and by_shape[SMALL]["dtype"] == "float32"
    assert "flops" not in by_shape[SMALL]  # fields with no meaning for a copy are left out
    assert "dst.copy_(src)" in ceilings["same_bytes_copy_method"]
    assert {t["impl"] for t in data["timings"]} == {"cuda:split", "torch:eager"}
    assert all(t["fraction_of_same_bytes_copy"] for t in data["timings"])
    assert memory_result.failed_rows() == []


def test_terminal_shows_the_copy_line_and_the_fraction_table(memory_result, capsys):
    report.print_terminal(memory_result)
    out = capsys.readouterr().out
    assert "Fraction of a copy of the same bytes, float32" in out
    copy_line = next(line for line in out.splitlines() if line.startswith(timing.SAME_BYTES_COPY))
    assert f"{gbps(SMALL_BYTES, 0.006):.0f} (0.35)" in copy_line
    assert any(line.split()[:3] == ["torch:eager", "0.50", "0.77"] for line in out.splitlines())


def test_a_compute_bound_op_is_unchanged():
    r = results.OpResult("matmul", "C = A @ B", "compute", dict(ENV), ceilings=results.Ceilings(copy_gbps=4000.0))
    r.timings = [timed("triton:tuned", "M=4096 N=4096 K=4096", 0.2, 1 << 27),
                 timed("torch:eager", "M=4096 N=4096 K=4096", 0.18, 1 << 27)]
    r.timings[0].tflops, r.timings[1].tflops = 90.0, 100.0
    runner.relate_to_ceilings(r)
    assert r.timings[0].ceiling == "torch:eager (vendor library)"
    assert r.timings[0].fraction_of_ceiling == pytest.approx(0.9)
    assert r.timings[0].fraction_of_same_bytes_copy is None
    md = report.markdown(r, {"command": "python -m compare matmul", "plot": None})
    assert timing.SAME_BYTES_COPY not in md and "Fraction of a copy" not in md
    assert "same_bytes_copy" not in report.to_json(r, "x")["ceilings"]


def test_one_copy_is_measured_per_timed_shape_and_dtype_with_the_op_s_bytes(monkeypatch):
    class RecordingPool:
        def call(self, name, *args, **kw):
            calls.append((name, args))
            return 4000.0 if name == "measure_copy_bandwidth" else []

    calls = []
    op = discover.load_op("softmax")
    options = runner.Options(quick=True, dtypes=["float32", "float16"], graph=True, progress=False)
    runner._measure_ceilings(RecordingPool(), op, options, schedule.timed_shapes(op, quick=True), results.OpResult(
        "softmax", "", "memory", dict(ENV)))
    (_, (cells, graph)), = [c for c in calls if c[0] == "measure_same_bytes_copies"]
    expected = [(op.bytes_moved(shape, dtype), check.dtype_name(dtype), op.describe_shape(shape))
                for dtype in (torch.float32, torch.float16) for shape in op.quick_bench_shapes]
    assert cells == expected
    assert graph  # with --graph the copy is graph-timed like the rows


def test_the_copy_is_timed_by_the_rows_method_on_the_rows_rotation(monkeypatch):
    seen = {}

    def time_calls(call, **kw):
        seen.update(call=call, **kw)
        return "timed"

    monkeypatch.setattr(timing, "time_calls", time_calls)
    nbytes, l2 = 1001, 4096  # odd: the copy moves 500 bytes each way
    assert timing.same_bytes_copy(nbytes, torch.device("cpu"), l2, dtype="float16", shape="7x11",
                                  graph=True) == "timed"
    assert len(seen["graph_calls"]) == schedule.input_set_count(nbytes, l2) > 1
    assert seen["nbytes"] == 1000 and seen["flops"] == 0 and seen["graph"] is True
    assert seen["impl"] == timing.SAME_BYTES_COPY and (seen["dtype"], seen["shape"]) == ("float16", "7x11")
    out = seen["call"]()  # one call: a copy of the next source into the one destination
    assert out.numel() == 500 and out.dtype == torch.uint8


def test_time_calls_turns_the_median_into_gbps(monkeypatch):
    monkeypatch.setattr(timing, "measure", lambda fn, **kw: (0.9, 1.0, 1.2, 10))
    t = timing.time_calls(lambda: None, impl="x", dtype="float32", shape="1M", nbytes=4 << 20, flops=0)
    assert t.gbps == pytest.approx((4 << 20) / 1e-3 / 1e9) and t.noisy and t.graph_median_ms is None


def test_a_copy_that_cannot_be_measured_is_reported_and_the_run_goes_on(memory_result):
    class FailingPool:
        def call(self, name, *args, **kw):
            raise isolate.RowFailure("crashed", "the worker process died (killed by SIGKILL); see its output above")

    r = results.OpResult("softmax", "row softmax", "memory", dict(ENV), ceilings=results.Ceilings(copy_gbps=4000.0))
    class CopyFailingPool(FailingPool):
        def call(self, name, *args, **kw):
            return 4000.0 if name == "measure_copy_bandwidth" else super().call(name, *args, **kw)

    runner._measure_ceilings(CopyFailingPool(), discover.load_op("softmax"), runner.Options(progress=False),
                             [(4096, 1024)], r)
    assert r.same_bytes_copies == [] and "killed by SIGKILL" in r.ceilings.same_bytes_copy_error
    assert "could not be measured: crashed" in report.markdown(r, {"command": "x", "plot": None})


@pytest.mark.gpu
def test_a_run_measures_the_copy_for_memory_bound_ops_only():
    sizes = runner.Options(impls=["torch:eager"], dtypes=["float32"], sizes=[(1 << 20,)], capture=False,
                           progress=False)
    gelu = runner.run_op(discover.load_op("gelu"), sizes)
    assert [(c.dtype, c.shape) for c in gelu.same_bytes_copies] == [("float32", "1048576")]
    assert gelu.timings[0].fraction_of_same_bytes_copy is not None
    matmul = runner.run_op(discover.load_op("matmul"), runner.Options(
        impls=["torch:eager"], dtypes=["float32"], sizes=[(256, 256, 256)], capture=False, progress=False))
    assert matmul.timings and matmul.same_bytes_copies == []
