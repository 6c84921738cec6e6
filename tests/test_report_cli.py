import dataclasses
import json
import subprocess
import sys

import pytest
import torch

from compare import cli, discover, env, paths, report, runner


@pytest.fixture(scope="module")
def gelu_result():
    options = runner.Options(impls=["triton", "torch:eager"], time=False, capture=False, progress=False)
    return runner.run_op(discover.load_op("gelu"), options)


def test_run_checks_every_row_it_can(gelu_result):
    assert {r.impl: r.status for r in gelu_result.rows} == {
        "triton:basic": "ok", "triton:tuned": "ok", "torch:eager": "ok"}
    assert gelu_result.checks and all(c.ok for c in gelu_result.checks)
    assert {c.dtype for c in gelu_result.checks} >= {"float32", "float16"}


def test_report_files_are_written_whole(gelu_result, tmp_path):
    written = report.write_files(gelu_result, tmp_path, "python -m compare gelu")
    assert {p.name for p in written.values()} >= {"gelu.json", "gelu.csv", "gelu.md"}
    data = json.loads((tmp_path / "gelu.json").read_text())
    for key in ("op", "env", "ceilings", "checks", "timings", "loc", "build"):
        assert key in data
    assert {"gpu", "torch", "triton", "git_revision", "timing_method"} <= set(data["env"])
    assert data["checks"] == {"file": "gelu.checks.csv.gz", "cases": len(gelu_result.checks),
                              "failed": sum(not c.ok for c in gelu_result.checks)}
    cases = report.read_checks(tmp_path / "gelu.checks.csv.gz")
    assert {"impl", "dtype", "shape", "max_abs_err", "max_rel_err", "atol", "rtol", "ok"} <= set(cases[0])
    assert cases == [dict(dataclasses.asdict(c), seeds=tuple(c.seeds)) for c in gelu_result.checks]
    assert "| impl" in (tmp_path / "gelu.md").read_text()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_check_cases_read_back_as_they_were_written(tmp_path):
    from compare.check import CheckResult

    cases = [CheckResult("triton:x", "float16", "M=3 N=5", "random", 7, False, "FAIL", 0.5, 1e-300, 0.0, 2.0**-50,
                         3.25, 'outside atol, "rows 0-2 of 3"\nand more', 1, (1, 7, 9), None),
             CheckResult("cuda:y", "bfloat16", "M=1 N=1", "timed call 2", 8, True, "ok")]
    path = tmp_path / "x.checks.csv"
    path.write_text(report.checks_csv(cases))
    assert report.read_checks(path) == [dataclasses.asdict(c) for c in cases]
    packed = tmp_path / "x.checks.csv.gz"  # as the runs write them
    packed.write_bytes(report.checks_gzip(cases))
    assert report.read_checks(packed) == [dataclasses.asdict(c) for c in cases]
    assert packed.read_bytes()[4:8] == bytes(4)  # no timestamp: the same cases, the same bytes


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path):
    target = tmp_path / "x.json"
    report.write_atomic(target, "old")

    class Boom(Exception):
        pass

    class Exploding(str):
        def encode(self, *a):
            raise Boom

    with pytest.raises(Boom):
        report.write_atomic(target, Exploding("new"))
    assert target.read_text() == "old"


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "compare", *args], capture_output=True, text=True, cwd=env.ROOT,
                          timeout=600)


def test_unknown_op_is_a_message_not_a_traceback():
    p = run_cli("gleu")
    assert p.returncode == 2
    assert "unknown op 'gleu'" in p.stderr and "gelu" in p.stderr and "Traceback" not in p.stderr


def test_bad_option_values_are_explained():
    p = run_cli("gelu", "--sizes", "12Q")
    assert p.returncode == 2 and "bad size" in p.stderr
    p = run_cli("gelu", "--dtypes", "fp4")
    assert p.returncode == 2 and "unknown dtype" in p.stderr
    p = run_cli("gelu", "--dtypes", "fp8")  # a dtype the lab knows and gelu does not take
    assert p.returncode == 2 and "gelu takes float32, float16, bfloat16" in p.stderr
    p = run_cli("gelu", "--impls", "cuda:nope", "--no-time")
    assert p.returncode == 2 and "no implementation matches" in p.stderr and "Traceback" not in p.stderr


def test_list_and_help():
    p = run_cli("list")
    assert p.returncode == 0 and "gelu" in p.stdout and "cuda:vec" in p.stdout
    p = run_cli("--help")
    assert p.returncode == 0 and "Exit status" in p.stdout


def test_size_parser():
    assert cli.parse_sizes("1M,4Kx2,7") == [(1 << 20,), (4096, 2), (7,)]


@pytest.mark.skipif(torch.cuda.is_available(), reason="exercises the no-GPU path")
def test_no_gpu_run_exits_cleanly_and_marks_gpu_rows(tmp_path):
    p = run_cli("gelu", "--out", str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    rows = {r["impl"]: r["status"] for r in json.loads((tmp_path / "gelu.json").read_text())["rows"]}
    assert rows["triton:tuned"] == "ok" and rows["torch:compile"] == "needs GPU"
    assert rows["cuda:vec"] == ("built (needs GPU to run)" if env.nvcc_path() else "build failed")


def test_results_of_another_host_are_not_overwritten(tmp_path, monkeypatch):
    monkeypatch.setattr(env, "ROOT", tmp_path)
    base = tmp_path / "results" / env.gpu_slug()
    assert paths.default_out_dir(False, "gelu") == base
    base.mkdir(parents=True)
    (base / "gelu.json").write_text(json.dumps({"env": {"host": env.describe_host()}}))
    assert paths.default_out_dir(False, "gelu") == base
    (base / "gelu.json").write_text(json.dumps({"env": {"host": "some-other-host"}}))
    other = paths.default_out_dir(False, "gelu")
    assert other.parent == base and other.name != "gelu"
    assert paths.default_out_dir(True, "gelu") == base / "quick"


def test_the_machine_is_described_with_one_round_of_subprocesses_per_process(monkeypatch):
    """`compare all` describes the machine once per op: git, nvcc and nvidia-smi are asked once per process."""
    calls = []
    real_run = subprocess.run

    def counting_run(args, *a, **k):
        calls.append(args[0])
        return real_run(args, *a, **k)

    monkeypatch.setattr(env.subprocess, "run", counting_run)
    monkeypatch.delenv("LAB_GIT_REVISION", raising=False)
    for cached in (env.git_revision, env.nvcc_version, env.driver_version):
        cached.cache_clear()
    first = env.describe()
    asked = len(calls)
    assert "git" in calls  # and nvcc and nvidia-smi where present
    assert env.describe() == first and len(calls) == asked


@pytest.mark.parametrize("timed,expected", [([(1 << 16,), (1 << 20,)], (1 << 16,)), ([], None)])
def test_torch_compile_code_is_captured_at_the_first_timed_shape(monkeypatch, timed, expected):
    """`--sizes 4096x16384` shows what inductor made of that size; with nothing timed, the op's first bench shape."""
    op = discover.load_op("gelu")
    impl = next(i for i in discover.implementations(op) if i.name == "torch:compile")
    shapes = []
    monkeypatch.setattr(runner, "_call", lambda pool, impl, method, dtype, shape, *rest: shapes.append(shape))
    out = runner.RowOutcome(status=runner.RowStatus(impl.name, "ok"))
    runner._capture(None, op, impl, [torch.float32], torch.device("cpu"), runner.Options(), out, timed)
    assert shapes == [expected or tuple(op.bench_shapes[0])]
