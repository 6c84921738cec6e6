"""`python -m compare summary` (compare/summary.py): results/README.md from the full results of every GPU folder."""
import json
import re
import subprocess
import sys

import pytest

from compare import env, summary

GELU_ROWS = ["cuda:naive", "cuda:vec", "cuda:fast", "triton:basic", "triton:tuned", "torch:eager", "torch:compile"]
MATMUL_ROWS = ["cuda:mma", "triton:tuned", "torch:eager", "torch:compile"]


def timing(impl, dtype, shape, *, gbps=None, tflops=None, frac=None, same=None, median_ms=1.0, iqr=(0.99, 1.01),
           implausible="", noisy=False):
    """One entry of a json's `timings`, with the fields `python -m compare OP` writes."""
    return {"impl": impl, "dtype": dtype, "shape": shape, "median_ms": median_ms, "q25_ms": median_ms * iqr[0],
            "q75_ms": median_ms * iqr[1], "bytes": 8, "flops": 8, "gbps": gbps, "tflops": tflops,
            "fraction_of_ceiling": frac, "ceiling": "copy bandwidth" if gbps and not tflops else "torch:eager",
            "fraction_of_same_bytes_copy": same, "speedup_vs_eager": None, "noisy": noisy, "graph_median_ms": None,
            "profiler_ms": None, "profiler_disagrees": False, "host_us": None, "host_bound": False, "samples": 100,
            "implausible": implausible, "iqr_ms": median_ms * (iqr[1] - iqr[0])}


def result(op, roofline, statuses, timings, gpu="NVIDIA H200", revision="0123456789abcdef0123", copies=()):
    """An op's json as report.to_json writes it (the parts the summary reads, and a few it does not)."""
    rows = [{"impl": impl, "status": status, "message": "" if status == "ok" else f"{impl} went wrong\nmore"}
            for impl, status in statuses.items()]
    own = [impl for impl in statuses if impl.split(":")[0] in ("cuda", "triton")]
    return {
        "op": op, "summary": f"{op}, for the tests", "command": f"python -m compare {op}",
        "env": {"gpu": gpu, "host": "vm", "torch": "2.11.0", "triton": "3.6.0", "git_revision": revision},
        "roofline": roofline,
        "ceilings": {"copy_gbps": 4000.0, "same_bytes_copy": [
            {"impl": "copy (same bytes)", "dtype": d, "shape": s, "gbps": g} for d, s, g in copies]},
        "rows": rows, "checks": [], "timings": timings,
        "loc": [{"impl": impl, "kernel": 10 + i, "host": 5, "source": "x", "total": 15 + i}
                for i, impl in enumerate(own)],
        "build": [{"impl": impl, "cold_s": 7.3, "warm_s": 0.001} for impl in own if impl.startswith("cuda:")],
        "jit": [{"impl": impl, "dtype": "float32", "first_call_s": 1.5} for impl in own if impl.startswith("triton:")],
        "kernels": [], "row_seconds": {},
        "torch_compile": [{"impl": "torch:compile", "mode": "default", "dtype": "float32", "shape": "1024",
                           "compile_s": 0.5, "kernels": 1, "kernel_lines": 30, "host_lines": 10, "file": "x.py"}],
    }


def gelu(gpu="NVIDIA H200", scale=1.0, status=None):
    """gelu at 1M and 256M fp32. At 256M cuda:vec is the fastest CUDA timing but failed its checks, and triton:basic
    is faster than triton:tuned but was refused as implausible; at 1M (not a headline cell) cuda:naive is fastest."""
    statuses = {impl: "ok" for impl in GELU_ROWS} | {"cuda:vec": "FAIL"} | (status or {})
    big, small = "268435456", "1048576"
    ts = [
        timing("cuda:naive", "float32", big, gbps=2000 * scale, frac=0.47, same=0.48),
        timing("cuda:vec", "float32", big, gbps=4100 * scale, frac=0.97, same=0.99),
        timing("cuda:fast", "float32", big, gbps=3000 * scale, frac=0.71, same=0.7234, median_ms=2.0),
        timing("triton:basic", "float32", big, gbps=4150 * scale, frac=0.98, same=1.0,
               implausible="above 1.15x a copy of the same bytes"),
        timing("triton:tuned", "float32", big, gbps=3900 * scale, frac=0.92, same=0.9361, median_ms=1.5),
        timing("torch:eager", "float32", big, gbps=3800 * scale, frac=0.9, same=0.9149),
        timing("torch:compile", "float32", big, gbps=3700 * scale, frac=0.876, same=None),
        timing("cuda:naive", "float32", small, gbps=1999 * scale, frac=0.9, same=0.9),
        timing("cuda:fast", "float32", small, gbps=1000 * scale, frac=0.4, same=0.4),
    ]
    return result("gelu", "memory", statuses, ts, gpu=gpu, copies=[("float32", big, 4150.0 * scale)])


def matmul(gpu="NVIDIA H200"):
    """matmul fp16 at a large non-square shape and two square ones: the headline cell is 4096³."""
    ts = []
    for shape, s in (("M=2048 N=2048 K=2048", 1.0), ("M=4096 N=4096 K=4096", 2.0), ("M=16384 N=4096 K=4096", 3.0)):
        ts += [timing("cuda:mma", "float16", shape, tflops=590 * s, frac=0.983, gbps=1.0, median_ms=1.007),
               timing("triton:tuned", "float16", shape, tflops=594 * s, frac=0.99, gbps=1.0),
               timing("torch:eager", "float16", shape, tflops=600 * s, frac=1.0, gbps=1.0),
               timing("torch:compile", "float16", shape, tflops=606 * s, frac=1.01, gbps=1.0)]
    return result("matmul", "compute", {impl: "ok" for impl in MATMUL_ROWS}, ts, gpu=gpu)


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) if not isinstance(data, str) else data)


@pytest.fixture
def results(tmp_path):
    """Two GPU folders: gpu-a with gelu only, gpu-b with gelu (at its own speeds) and matmul, plus folders and files
    the summary must leave out."""
    root = tmp_path / "results"
    write(root / "gpu-a" / "gelu.json", gelu())
    write(root / "gpu-b" / "matmul.json", matmul(gpu="NVIDIA B"))
    write(root / "gpu-b" / "gelu.json", gelu(gpu="NVIDIA B", scale=0.5, status={"cuda:fast": "skipped"}))
    # Faster rows that must not appear: narrowed runs, and a run without a GPU.
    fast = result("gelu", "memory", {"cuda:partialrow": "ok"},
                  [timing("cuda:partialrow", "float32", "268435456", gbps=9000, frac=2.0, same=2.0)])
    write(root / "gpu-a" / "partial" / "gelu.json", fast)
    write(root / "gpu-a" / "quick" / "gelu.json", fast)
    write(root / "cpu" / "gelu.json", fast)
    write(root / "gpu-c" / "quick" / "gelu.json", fast)  # a GPU with quick results only
    # A narrowed run given its own folder with --out (an experiment's), beside gpu-a's full results.
    write(root / "gpu-a" / "experiment" / "gelu.json",
          fast | {"command": "python -m compare gelu --impls cuda:partialrow --out results/gpu-a/experiment"})
    return root


def section(text, op):
    start = text.index(f"\n## {op}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def table_row(text, *cells):
    """The cells of the first table row whose leading cells are these."""
    for line in text.splitlines():
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if line.startswith("|") and parts[:len(cells)] == list(cells):
            return parts
    raise AssertionError(f"no row {cells} in:\n{text}")


def test_the_best_row_is_the_fastest_row_that_passed(results, tmp_path):
    text = summary.summarize(results, tmp_path / "out.md")
    gelu_text = section(text, "gelu")
    # cuda:vec is faster but FAILed; cuda:naive is faster at 1M, which is not the headline cell.
    row = table_row(gelu_text, "float32", "256M", "best CUDA")
    assert row[3:8] == ["`cuda:fast`", "0.72", "3000", "17 (12+5)", "7.3 s build"]
    # triton:basic's timing was refused as implausible.
    row = table_row(gelu_text, "float32", "256M", "best Triton")
    assert row[3:8] == ["`triton:tuned`", "0.94", "3900", "19 (14+5)", "1.5 s JIT"]
    assert "gpu-a: `cuda:vec` FAIL: cuda:vec went wrong" in gelu_text and "more" not in gelu_text
    assert "gpu-a: `triton:basic` has timings refused as implausible" in gelu_text


def test_both_gpus_side_by_side_with_their_own_figures_and_a_missing_op_noted(results, tmp_path):
    text = summary.summarize(results, tmp_path / "out.md")
    row = table_row(section(text, "gelu"), "float32", "256M", "best CUDA")
    headers = table_row(section(text, "gelu"), "dtype", "cell", "line")
    assert headers[3] == "gpu-a: row" and headers[8] == "gpu-b: row"
    assert row[8:10] == ["`cuda:naive`", "0.48"]  # gpu-b's cuda:fast was skipped there
    assert row[10] == "1000"  # 2000 GB/s at half the speed
    assert "gpu-b: `cuda:fast` skipped" in section(text, "gelu")
    assert "gpu-a has no full results for matmul" in text
    assert table_row(section(text, "matmul"), "float16", "M=4K N=4K K=4K", "best CUDA")[3] == "no results"
    assert "gpu-c has partial or quick results only (gelu)" in text and "gpu-c:" not in text


def test_fractions_are_of_the_same_bytes_copy_or_of_torch_eager(results, tmp_path):
    text = summary.summarize(results, tmp_path / "out.md")
    gelu_text = section(text, "gelu")
    assert table_row(gelu_text, "float32", "256M", "torch:eager")[4:6] == ["0.91", "3800"]
    # No same-bytes copy for this cell in the json: the 1 GiB copy's fraction, marked.
    assert table_row(gelu_text, "float32", "256M", "torch:compile")[4:8] == [
        "0.88*", "3700", "40 (30+10) generated", "0.50 s compile"]
    assert table_row(gelu_text, "float32", "256M", "copy (same bytes)")[5] == "4150"
    matmul_text = section(text, "matmul")
    # The largest square shape, not the larger 16384x4096x4096; TFLOP/s with one decimal.
    assert "M=16K" not in matmul_text and "M=2K" not in matmul_text
    assert table_row(matmul_text, "float16", "M=4K N=4K K=4K", "best CUDA")[8:11] == ["`cuda:mma`", "0.98", "1180.0"]
    assert table_row(matmul_text, "float16", "M=4K N=4K K=4K", "torch:compile")[8:11] == [
        "`torch:compile`", "1.01", "1212.0"]
    glance = text[text.index("## At a glance"):text.index("\n## ", text.index("## At a glance"))]
    # triton:tuned's IQR (1.485-1.515 ms) does not overlap cuda:fast's (1.98-2.02 ms): Triton, 3900/3000.
    assert table_row(glance, "gelu", "float32", "256M")[3:7] == ["`cuda:fast` 0.72", "`triton:tuned` 0.94", "0.88*",
                                                               "Triton, 1.30x"]
    # cuda:mma's IQR (0.997-1.017 ms) overlaps triton:tuned's (0.99-1.01 ms): no winner named.
    assert table_row(glance, "matmul", "float16", "M=4K N=4K K=4K")[3:11] == ["no results", "", "", "",
                                                                            "`cuda:mma` 0.98", "`triton:tuned` 0.99",
                                                                            "1.01", "tie (IQRs overlap)"]


def test_narrowed_and_cpu_results_are_left_out(results, tmp_path):
    text = summary.summarize(results, tmp_path / "out.md")
    assert "cuda:partialrow" not in text and "9000" not in text
    assert "cpu:" not in text and "cpu/gelu" not in text
    assert "gpu-a/experiment" not in text


def another_hosts(data, host):
    return data | {"env": data["env"] | {"host": host}}


def test_another_hosts_full_results_beside_a_gpus_are_summarized(results, tmp_path):
    write(results / "gpu-a" / "host-2" / "gelu.json", another_hosts(gelu(scale=0.9), "host 2"))
    assert ("gpu-a/host-2", results / "gpu-a" / "host-2") in summary.result_folders(results)
    assert "gpu-a/host-2: best CUDA" in summary.summarize(results, tmp_path / "out.md")


def test_a_full_runs_files_moved_into_an_experiments_folder_are_not_a_host(results, tmp_path):
    # A full run's files kept aside under a folder of their own (results/<gpu>/<experiment>/, as a run whose rows
    # failed is kept beside the full files it did not replace): the command is not narrowed, the host's name is not
    # the folder's.
    write(results / "gpu-a" / "kept-aside" / "gelu.json", gelu(scale=0.9))
    assert all(name != "gpu-a/kept-aside" for name, _ in summary.result_folders(results))
    assert "gpu-a/kept-aside" not in summary.summarize(results, tmp_path / "out.md")


def test_a_malformed_json_is_an_error_that_names_the_file(results, tmp_path):
    bad = results / "gpu-b" / "gelu.json"
    write(bad, '{"op": "gelu", "timings": [')
    with pytest.raises(summary.SummaryError, match=re.escape(str(bad))) as info:
        summary.summarize(results, tmp_path / "out.md")
    assert "Rerun that op" in str(info.value) and not (tmp_path / "out.md").exists()
    data = gelu()
    del data["timings"][2]["median_ms"]
    write(bad, data)
    with pytest.raises(summary.SummaryError, match=r"gelu\.json: timings\[2\] has no 'median_ms'"):
        summary.summarize(results, tmp_path / "out.md")
    write(bad, gelu())
    write(results / "gpu-b" / "softmax.json", gelu())  # another op's results under this op's name
    with pytest.raises(summary.SummaryError, match=r"softmax\.json: its 'op' is 'gelu'"):
        summary.summarize(results, tmp_path / "out.md")


def test_the_command_line(results, tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "compare", "summary", *args], capture_output=True, text=True,
                              cwd=env.ROOT, timeout=120)

    out = tmp_path / "sub" / "README.md"
    p = run(str(results), "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert out.read_text().startswith("# ") and f"`python -m compare summary {results} --out {out}`" in out.read_text()
    assert [f.name for f in out.parent.iterdir()] == ["README.md"]  # no temporary file left
    p = run(str(results))  # default: README.md in the folder read
    assert p.returncode == 0 and (results / "README.md").exists(), p.stderr
    write(results / "gpu-a" / "gelu.json", "not json")
    p = run(str(results), "--out", str(out))
    assert p.returncode == 2 and str(results / "gpu-a" / "gelu.json") in p.stderr and "Traceback" not in p.stderr
    p = run(str(tmp_path / "empty"))
    assert p.returncode == 2 and "no results folder" in p.stderr and "Traceback" not in p.stderr
    (tmp_path / "empty" / "gpu-a" / "quick").mkdir(parents=True)
    p = run(str(tmp_path / "empty"))
    assert p.returncode == 2 and "no full results" in p.stderr
    p = run(str(results), "--quick")
    assert p.returncode == 2 and "--quick does not apply to summary" in p.stderr


def test_the_output_is_deterministic(results, tmp_path):
    first = summary.summarize(results, results / "README.md")
    assert summary.summarize(results, results / "README.md") == first
    # The same files written in another order into another folder: the same bytes.
    other = tmp_path / "other" / "results"
    for path in sorted(results.rglob("*.json"), reverse=True):
        write(other / path.relative_to(results), path.read_text())
    summary.summarize(other, other / "README.md")
    assert (other / "README.md").read_bytes() == (results / "README.md").read_bytes() == first.encode()


def test_the_committed_results(tmp_path):
    text = summary.summarize(env.ROOT / "results", tmp_path / "README.md")
    for op in ("gelu", "add", "softmax", "matmul"):
        assert f"\n## {op}: " in text
        # Some GPU folder has the op's results (a folder of another GPU may not have them yet).
        assert any(cell.startswith("`") for cell in table_row(section(text, op), "float32")[3:])
    assert "nvidia-h200: row" in text
    assert "best CUDA" in text and "best Triton" in text
    committed = env.ROOT / "results" / "README.md"
    if committed.exists():
        assert committed.read_text().startswith("# Results") and "python -m compare summary" in committed.read_text()


ATTENTION_ROWS = ["cuda:flash", "triton:tuned", "torch:eager", "torch:sdpa-cudnn", "torch:sdpa-flash",
                  "torch:sdpa-efficient", "torch:compile"]
SDPA = ["torch:sdpa-cudnn", "torch:sdpa-flash", "torch:sdpa-efficient"]


def attention(status=None):
    """A compute-bound op whose ceiling is the fastest of three vendor rows: at the headline cell torch:sdpa-cudnn is
    the fastest but failed its checks, so torch:sdpa-flash is the ceiling."""
    shape = "B=1 H=16 S=16384 D=128"
    ts = [timing("cuda:flash", "float16", shape, tflops=450.0, frac=0.9, gbps=1.0),
          timing("triton:tuned", "float16", shape, tflops=400.0, frac=0.8, gbps=1.0),
          timing("torch:eager", "float16", shape, tflops=100.0, frac=0.2, gbps=1.0),
          timing("torch:sdpa-cudnn", "float16", shape, tflops=600.0, frac=1.2, gbps=1.0),
          timing("torch:sdpa-flash", "float16", shape, tflops=500.0, frac=1.0, gbps=1.0),
          timing("torch:sdpa-efficient", "float16", shape, tflops=300.0, frac=0.6, gbps=1.0),
          timing("torch:compile", "float16", shape, tflops=150.0, frac=0.3, gbps=1.0)]
    statuses = {impl: "ok" for impl in ATTENTION_ROWS} | {"torch:sdpa-cudnn": "FAIL"} | (status or {})
    return result("attention", "compute", statuses, ts) | {"ceiling_rows": SDPA}


def test_an_op_whose_ceiling_is_other_vendor_rows_has_the_line_vendor(results, tmp_path):
    write(results / "gpu-a" / "attention.json", attention())
    text = summary.summarize(results, tmp_path / "out.md")
    attention_text = section(text, "attention")
    assert ("Fraction of the fastest of `torch:sdpa-cudnn`, `torch:sdpa-flash`, `torch:sdpa-efficient` at the same "
            "shape and dtype in the same run (the line `vendor`)") in attention_text
    assert "cuBLAS" not in attention_text
    labels = [line.split("|")[3].strip() for line in attention_text.splitlines() if line.startswith("| float16")]
    assert labels == ["best CUDA", "best Triton", "vendor", "torch:eager", "torch:compile"]
    # torch:sdpa-cudnn is faster but FAILed: the fastest passing ceiling row is the line.
    assert table_row(attention_text, "float16", "B=1 H=16 S=16K D=128", "vendor")[3:6] == [
        "`torch:sdpa-flash`", "1.00", "500.0"]
    assert table_row(attention_text, "float16", "B=1 H=16 S=16K D=128", "torch:eager")[3:6] == [
        "`torch:eager`", "0.20", "100.0"]
    # An op whose ceiling is torch:eager (matmul, from a file written before the json named its ceiling rows) keeps
    # today's words and lines.
    matmul_text = section(text, "matmul")
    assert "Fraction of `torch:eager` (the vendor library, cuBLAS)" in matmul_text and "vendor`" not in matmul_text
    assert "| vendor" not in matmul_text and "| vendor" not in section(text, "gelu")


def test_a_vendor_line_with_no_passing_ceiling_row_says_so(results, tmp_path):
    failed = {"torch:sdpa-flash": "error", "torch:sdpa-efficient": "FAIL"}  # and torch:sdpa-cudnn, as always here
    write(results / "gpu-a" / "attention.json", attention(failed))
    text = section(summary.summarize(results, tmp_path / "out.md"), "attention")
    assert table_row(text, "float16", "B=1 H=16 S=16K D=128", "vendor")[3] == "no row passed"


def test_ceiling_rows_that_are_not_a_list_of_names_are_an_error(results, tmp_path):
    write(results / "gpu-a" / "attention.json", attention() | {"ceiling_rows": "torch:sdpa-flash"})
    with pytest.raises(summary.SummaryError, match=r"attention\.json: its 'ceiling_rows' is not a list of row names"):
        summary.summarize(results, tmp_path / "out.md")
