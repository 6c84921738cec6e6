"""Rows spread over several GPUs (compare/fanout.py): which GPUs --gpus means, how rows are shared out, and how
the lanes' results become the one result a serial run would have written."""
from pathlib import Path

import pytest

from compare import discover, fanout
from compare.check import CheckResult
from compare.results import Ceilings, OpResult, RowStatus, Status
from compare.timing import Timing


def test_gpus_all_a_count_or_a_list():
    assert fanout.parse_gpus("all", 4) == [0, 1, 2, 3]
    assert fanout.parse_gpus("2", 4) == [0, 1]
    assert fanout.parse_gpus("0,2", 4) == [0, 2]
    for wrong, words in (("5", "has 4 GPU"), ("0,4", "between 0 and 3"), ("1,1", "distinct"), ("x", "'all'")):
        with pytest.raises(fanout.GpuChoiceError, match=words):
            fanout.parse_gpus(wrong, 4)
    with pytest.raises(fanout.GpuChoiceError, match="no GPU"):
        fanout.parse_gpus("all", 0)


def _impls():
    return discover.implementations(discover.load_op("gelu"))


def test_each_lane_gets_the_baseline_and_the_longest_rows_are_spread_first():
    earlier = {"torch:compile": 100.0, "triton:tuned": 60.0, "triton:basic": 10.0, "cuda:naive": 10.0,
               "cuda:vec": 10.0}
    shares = fanout.plan(_impls(), 2, earlier)
    names = [[i.name for i in share] for share in shares]
    assert all("torch:eager" in share for share in names)
    assert "torch:compile" in names[0] and "triton:tuned" in names[1]  # the two longest apart
    others = sorted(n for share in names for n in share if n != "torch:eager")
    assert others == sorted(i.name for i in _impls() if i.name != "torch:eager")  # each row exactly once
    order = [i.name for i in _impls()]
    assert all(share == sorted(share, key=order.index) for share in names)  # in the op's order
    assert len(fanout.plan(_impls(), 16)) == 5  # no lane without a row of its own


def test_every_lane_of_an_op_with_ceiling_rows_runs_each_of_them_and_the_merge_keeps_the_first_lanes():
    import dataclasses

    ceiling = ("torch:vendor-a", "torch:vendor-b")
    op = dataclasses.replace(discover.load_op("matmul"), vendor_rows={"vendor-a": len, "vendor-b": len},
                             ceiling_rows=ceiling)
    impls = discover.implementations(op)
    baseline = fanout.baseline_rows(op)
    assert baseline == ["torch:eager", *ceiling]
    assert fanout.baseline_rows(discover.load_op("gelu")) == ["torch:eager"]  # a memory-bound op: the copy
    shares = fanout.plan(impls, 3, baseline=baseline)
    names = [[i.name for i in share] for share in shares]
    assert len(shares) == 3 and all(set(baseline) <= set(share) for share in names)
    others = sorted(n for share in names for n in share if n not in baseline)
    assert others == sorted(i.name for i in impls if i.name not in baseline)  # each other row exactly once
    order = [i.name for i in impls]
    assert all(share == sorted(share, key=order.index) for share in names)
    a = _part(names[0], 4000.0, eager_ms=2.0, tflops=500.0)
    b = _part(names[1], 4100.0, eager_ms=3.0, tflops=400.0)
    merged = fanout.merge([a, b], [i for i in impls if i.name in names[0] + names[1]], ["cuda:0", "cuda:1"])
    for row in baseline:
        kept = [t for t in merged.timings if t.impl == row]
        assert len(kept) == 1 and kept[0].tflops == 500.0, row
        assert sum(r.impl == row for r in merged.rows) == 1


def _part(gpu_rows, copy_gbps, eager_ms, tflops=0.0):
    rows = [RowStatus(r, Status.OK) for r in gpu_rows]
    timings = [Timing(r, "float32", "1M", median_ms=eager_ms if r == "torch:eager" else 1.0, q25_ms=0.9, q75_ms=1.1,
                      bytes=8 << 20, flops=0, gbps=4.0, tflops=tflops) for r in gpu_rows]
    return OpResult("gelu", "GELU", "memory", {"gpu": "NVIDIA H200", "host": "h"}, ceilings=Ceilings(copy_gbps),
                    rows=rows, timings=timings,
                    checks=[CheckResult(r, "float32", "1M", "random", seed=0, ok=True, status="ok") for r in gpu_rows],
                    row_seconds={r: {"checks": 1.0} for r in gpu_rows})


def test_the_merged_result_has_every_row_once_in_order_and_the_first_lanes_baseline():
    impls = _impls()
    a = _part(["cuda:naive", "torch:eager", "torch:compile"], 4000.0, eager_ms=2.0)
    b = _part(["cuda:vec", "triton:basic", "triton:tuned", "torch:eager"], 4100.0, eager_ms=3.0)
    merged = fanout.merge([a, b], impls, ["cuda:0", "cuda:1"])
    assert [r.impl for r in merged.rows] == [i.name for i in impls]
    eager = [t for t in merged.timings if t.impl == "torch:eager"]
    assert len(eager) == 1 and eager[0].median_ms == 2.0
    timed = [t.impl for t in merged.timings]  # the report's tables list rows in the op's order, as a serial run does
    assert timed == [i.name for i in impls if i.name in timed]
    assert sum(c.impl == "torch:eager" for c in merged.checks) == 1
    assert merged.ceilings.copy_gbps == 4000.0
    assert merged.env["lanes"] == [{"gpu": "cuda:0", "rows": ["cuda:naive", "torch:eager", "torch:compile"],
                                    "copy_gbps": 4000.0},
                                   {"gpu": "cuda:1", "rows": ["cuda:vec", "triton:basic", "triton:tuned",
                                                              "torch:eager"], "copy_gbps": 4100.0}]
    assert set(merged.row_seconds) == {i.name for i in impls}


def test_a_lost_lane_costs_its_own_rows_only():
    impls = _impls()
    share = [i for i in impls if i.name in ("cuda:vec", "triton:basic", "triton:tuned", "torch:eager")]
    lost = fanout.lost_lane("gelu", share, "its process died", {})
    a = _part(["cuda:naive", "torch:eager", "torch:compile"], 4000.0, eager_ms=2.0)
    merged = fanout.merge([lost, a], impls, ["cuda:0", "cuda:1"])  # the lost lane listed first
    status = {r.impl: r.status for r in merged.rows}
    assert status["torch:eager"] == Status.OK and status["cuda:naive"] == Status.OK
    assert status["cuda:vec"] == status["triton:tuned"] == Status.CRASHED
    assert merged.env["host"] == "h"


def test_earlier_row_seconds_come_from_the_full_results(tmp_path):
    (tmp_path / "gelu.json").write_text('{"row_seconds": {"cuda:vec": {"checks": 2.0, "checks/judging": 1.0, '
                                        '"timing": 1.5, "timing/making inputs": 0.5}}}')
    assert fanout.earlier_row_seconds(tmp_path, "gelu") == {"cuda:vec": 3.5}
    assert fanout.earlier_row_seconds(tmp_path / "none", "gelu") == {}
    assert fanout.earlier_row_seconds(Path(tmp_path), "add") == {}


@pytest.mark.gpu
@pytest.mark.slow
def test_gpus_all_runs_a_lane_per_gpu_and_writes_what_a_serial_run_writes(tmp_path):
    import json
    import subprocess
    import sys

    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    out = tmp_path / "results"
    proc = subprocess.run([sys.executable, "-m", "compare", "gelu", "--gpus", "all", "--no-capture", "--quick",
                           "--out", str(out)], cwd=Path(__file__).resolve().parent.parent, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((out / "gelu.json").read_text())
    assert [r["impl"] for r in data["rows"]] == [i.name for i in _impls()]
    lanes = data["env"]["lanes"]
    assert len(lanes) == min(torch.cuda.device_count(), len(_impls()) - 1)
    assert all(lane["copy_gbps"] > 0 for lane in lanes)  # each GPU measured its own ceiling
    assert {t["impl"] for t in data["timings"]} == {i.name for i in _impls()}
    assert "[gpu 0]" in proc.stdout


@pytest.mark.slow
def test_lanes_on_this_host_run_their_rows_in_processes_of_their_own_and_merge(monkeypatch):
    """The --gpus machinery on any machine: two lanes of one (pretended) GPU model, each a process that runs its
    share of the rows as a serial run does (here Triton under the interpreter), merged in the op's order."""
    import torch

    from compare import runner

    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: "Pretend GPU")
    impls = [i for i in _impls() if i.name in ("triton:basic", "triton:tuned", "torch:eager")]
    (result,) = fanout.run_local("gelu", impls, runner.Options(capture=False, dtypes=["float32"]), [0, 1])
    assert [r.impl for r in result.rows] == ["triton:basic", "triton:tuned", "torch:eager"]
    assert all(r.status == Status.OK for r in result.rows), result.rows
    lanes = result.env["lanes"]
    assert [lane["gpu"] for lane in lanes] == ["cuda:0", "cuda:1"]
    assert sorted(r for lane in lanes for r in lane["rows"]) == ["torch:eager", "torch:eager", "triton:basic",
                                                                  "triton:tuned"]
    assert {c.impl for c in result.checks} == {"triton:basic", "triton:tuned", "torch:eager"}
    from compare import report

    heading = report.sections(result, "python -m compare gelu --gpus 2")[0].prose
    for lane in lanes:  # the report says which GPU ran which rows
        assert f"{lane['gpu']}: {', '.join(lane['rows'])}" in heading
