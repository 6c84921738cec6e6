"""Host time per call: measured beside short timings, marked where the host needs as long as the measured time, and
reported in every output (compare/timing.py, compare/report.py)."""
import csv
import io
import json
import time

import pytest
import torch

from compare import report, results, runner, timing


@pytest.fixture
def fake_gpu(monkeypatch):
    """time_calls as on a GPU, with do_bench's median chosen by the test."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)

    def timed(fn, median_ms):
        monkeypatch.setattr(timing, "measure", lambda call, **kw: (0.99 * median_ms, median_ms, 1.01 * median_ms, 10))
        return timing.time_calls(fn, impl="x", dtype="float32", shape="1M", nbytes=4 << 20, flops=0)

    return timed


def busy(seconds):
    def call():
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
    return call


def test_a_call_whose_host_work_outlasts_the_measured_time_is_host_bound(fake_gpu):
    t = fake_gpu(busy(0.002), median_ms=0.05)  # 2 ms on the host, 50 µs measured
    # A busy wait lasts at least its 2 ms; on a loaded machine it may last longer, never shorter.
    assert 2000 <= t.host_us < 200_000 and t.host_bound


def test_a_call_that_returns_quickly_is_not_host_bound(fake_gpu):
    t = fake_gpu(lambda: None, median_ms=0.5)
    assert t.host_us is not None and t.host_us < 500 and not t.host_bound


def test_long_calls_are_not_measured_on_the_host(fake_gpu):
    t = fake_gpu(busy(0.002), median_ms=timing.HOST_CHECK_BELOW_MS)
    assert t.host_us is None and not t.host_bound


def test_host_bound_cells_are_marked_and_host_times_reported(fake_gpu):
    bound = fake_gpu(busy(0.002), median_ms=0.05)
    bound.impl = "triton:slow_host"
    fine = fake_gpu(lambda: None, median_ms=0.5)
    fine.impl = "cuda:fast_host"
    r = results.OpResult("gelu", "GELU", "memory", {"gpu": "NVIDIA H200", "torch": "2.11", "triton": "3.6",
                                                    "cuda_runtime": "13.0", "nvcc": "13.0", "git_revision": "abc"},
                         ceilings=results.Ceilings(copy_gbps=4000.0))
    r.timings = [bound, fine]
    r.rows = [results.RowStatus("triton:slow_host", "ok"), results.RowStatus("cuda:fast_host", "ok")]
    runner.relate_to_ceilings(r)

    rate = dict((row[0], row[1]) for row in report.timing_tables(r)["float32"][1])
    assert rate["triton:slow_host"].endswith(" h") and not rate["cuda:fast_host"].endswith(" h")
    host = dict((row[0], row[1]) for row in report.timing_tables(r, "host")["float32"][1])
    assert host["triton:slow_host"].endswith(" h") and int(host["triton:slow_host"].split()[0]) >= 1000
    assert not host["cuda:fast_host"].endswith(" h")

    md = report.markdown(r, {"command": "python -m compare gelu", "plot": None})
    assert "Host time per call, microseconds" in md and "host-bound" in md
    rows = {row["impl"]: row for row in csv.DictReader(io.StringIO(report.to_csv(r)))}
    assert rows["triton:slow_host"]["host_bound"] == "True" and rows["cuda:fast_host"]["host_bound"] == "False"
    data = json.loads(json.dumps(report.to_json(r, "cmd")))
    assert {t["impl"]: t["host_bound"] for t in data["timings"]} == {"triton:slow_host": True,
                                                                      "cuda:fast_host": False}
