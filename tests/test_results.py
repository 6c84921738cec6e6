"""The result types (compare/results.py) and the report's one list of sections (compare/report.py): the statuses
print and serialize as their words, the json keeps the keys of the committed results, and the terminal and the md
render the same sections."""
import contextlib
import io
import json

from compare import env, report, results, runner, timing
from compare.results import Status

ENV = {"gpu": "NVIDIA H200", "torch": "2.11", "triton": "3.6", "cuda_runtime": "13.0", "nvcc": "13.0",
       "git_revision": "abc1234"}


def test_a_status_is_its_word_in_print_and_in_files():
    assert [s.value for s in Status] == ["ok", "FAIL", "degenerate", "build failed", "error", "crashed",
                                         "timed out", "skipped", "needs GPU", "built (needs GPU to run)"]
    for s in Status:
        assert s == s.value and str(s) == s.value and f"{s}" == s.value and json.dumps(s) == json.dumps(s.value)
    assert set(results.FAILED) == {Status.FAIL, Status.DEGENERATE, Status.BUILD_FAILED, Status.ERROR, Status.CRASHED,
                                   Status.TIMED_OUT}


def test_a_row_status_takes_the_word_and_a_run_fails_on_failed_rows():
    row = results.RowStatus("cuda:vec", "timed out", "no progress")  # as a worker's RowFailure names it
    assert row.status is Status.TIMED_OUT
    r = results.OpResult("gelu", "GELU", "memory", dict(ENV),
                         rows=[results.RowStatus("a", Status.OK), row, results.RowStatus("b", "needs GPU")])
    assert r.failed_rows() == [row]


def full_result() -> results.OpResult:
    """One record of every kind, as a run on a GPU makes them."""
    t = timing.Timing("cuda:vec", "float32", "1048576", 0.01, 0.0099, 0.0101, 8 << 20, 0, 838.9, 0.0)
    copy = timing.Timing(timing.SAME_BYTES_COPY, "float32", "1048576", 0.009, 0.0089, 0.0091, 8 << 20, 0, 932.1, 0.0)
    return results.OpResult(
        "gelu", "GELU", "memory", dict(ENV), ceilings=results.Ceilings(copy_gbps=4000.0), same_bytes_copies=[copy],
        rows=[results.RowStatus("cuda:vec", Status.OK), results.RowStatus("triton:basic", Status.OK)], timings=[t],
        build=[results.CudaKernelBuild("cuda:vec", 7.5, 0.0005,
                                       "void gelu_vec_kernel<float>(float const*, float*, long)", 16, 0, 0, 0),
               results.TritonKernelBuild("triton:basic", "gelu_basic_kernel", 18, "11-29", 0, 0, ["BLOCK: 1024"])],
        jit=[results.JitRecord("triton:basic", "float32", 1.04)],
        kernels=[results.KernelAccount("cuda:vec", "float32", "1048576", ["gelu_vec_kernel"], 1, 4.1, [], [], "")])


def test_the_json_keeps_the_keys_of_the_committed_results():
    """Every key the committed results have is still written (new ones may be added), so programs that read them
    read a new run's json too."""
    committed = json.loads((env.ROOT / "results" / "nvidia-h200" / "gelu.json").read_text())
    r = full_result()
    runner.relate_to_ceilings(r)
    data = json.loads(json.dumps(report.to_json(r, "python -m compare gelu"), default=str))
    assert set(committed) <= set(data)
    assert set(committed["ceilings"]) <= set(data["ceilings"])
    assert data["rows"][0] == {"impl": "cuda:vec", "status": "ok", "message": ""}
    for key in ("build", "jit", "kernels"):
        for record in data[key]:
            same_kind = [c for c in committed[key] if ("cold_s" in c) == ("cold_s" in record)]
            assert set(same_kind[0]) <= set(record), key
    # What was not measured is left out, as before.
    assert results.Ceilings().to_dict() == {}
    assert results.Ceilings(same_bytes_copy_error="crashed: ...").to_dict() == {"same_bytes_copy_error": "crashed: ..."}


def test_the_terminal_and_the_md_render_one_list_of_sections():
    r = full_result()
    runner.relate_to_ceilings(r)
    sections = report.sections(r, "python -m compare gelu")
    md = report.markdown(r, {"command": "python -m compare gelu", "plot": None})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        report.print_terminal(r)
    terminal = out.getvalue()
    for s in sections:
        if s.shown(markdown=True) and s.heading:
            assert f"{'#' * s.level} {s.heading}\n" in md
        if s.shown(markdown=False) and s.title:
            assert s.title in terminal
        if not s.in_terminal and s.prose:
            assert s.prose not in terminal  # the md's prose stays out of the terminal
    # Rows: first in the md, last in the terminal.
    assert md.index("## Rows") < md.index("## Checks")
    assert terminal.rstrip().splitlines()[-1].startswith("triton:basic")
    assert "Median ± IQR" in md and "Median ± IQR" not in terminal
