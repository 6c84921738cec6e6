"""--cluster on a Ray cluster (compare/cluster.py), on this machine: a local Ray head declaring two GPUs that are
not there, so each task runs its rows the way a GPU-less machine does (Triton under its interpreter). Checks that
the rows come back merged into the files a serial run writes, and that a task that dies costs only its own rows."""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="--cluster needs the optional extra: pip install -e \".[cluster]\"")

from compare import cluster, discover, report, runner  # noqa: E402
from compare.results import Status  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PLANTED = Path(__file__).parent / "planted"
pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    """A Ray head on this machine with two declared GPUs; stopped after the module's tests."""
    port = _free_port()
    environ = dict(os.environ, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    ray_cli = str(Path(sys.executable).with_name("ray"))
    started = subprocess.run([ray_cli, "start", "--head", f"--port={port}", "--num-cpus=2", "--num-gpus=2",
                              "--include-dashboard=false", "--disable-usage-stats"],
                             env=environ, capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield f"127.0.0.1:{port}", environ
    finally:
        if ray.is_initialized():
            ray.shutdown()
        subprocess.run([ray_cli, "stop", "--force"], env=environ, capture_output=True, timeout=120)


def test_a_comparison_through_the_cluster_writes_the_merged_report(head, tmp_path):
    address, environ = head
    out = tmp_path / "results"
    proc = subprocess.run([sys.executable, "-m", "compare", "gelu", "--impls", "triton,torch:eager", "--no-capture",
                           "--cluster", address, "--out", str(out)],
                          cwd=REPO, env=environ, capture_output=True, text=True, timeout=900)
    log = proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.returncode == 0, log
    data = json.loads((out / "gelu.json").read_text())
    assert [r["impl"] for r in data["rows"]] == ["triton:basic", "triton:tuned", "torch:eager"], log
    assert all(r["status"] == "ok" for r in data["rows"]), data["rows"]
    lanes = data["env"]["lanes"]
    assert len(lanes) == 2 and all("torch:eager" in lane["rows"] for lane in lanes)  # a row per declared GPU
    assert sorted(r for lane in lanes for r in lane["rows"] if r != "torch:eager") == ["triton:basic", "triton:tuned"]
    cases = report.read_checks(out / "gelu.checks.csv.gz")
    checked = {c["impl"] for c in cases}
    assert checked == {"triton:basic", "triton:tuned", "torch:eager"}
    assert sum(c["impl"] == "torch:eager" for c in cases) == len(
        [c for c in cases if c["impl"] == "triton:basic"])  # the baseline once, not once per lane


def test_a_task_that_dies_costs_its_own_rows_only(head, monkeypatch):
    address, environ = head
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    op = discover.load_op("gelu")
    rows = [i for i in discover.implementations(op) if i.name in ("triton:basic", "torch:eager")]
    killer = discover.Impl("gelu", "triton", "kills_its_lane", PLANTED / "lane_killer_triton.py", needs_gpu=False)
    results = cluster.run("gelu", [killer] + rows, runner.Options(capture=False, dtypes=["float32"]), address,
                          max_retries=0)
    assert len(results) == 1
    status = {r.impl: r for r in results[0].rows}
    assert status["triton:kills_its_lane"].status == Status.CRASHED
    assert "Ray task" in status["triton:kills_its_lane"].message
    assert status["triton:basic"].status == Status.OK and status["torch:eager"].status == Status.OK
