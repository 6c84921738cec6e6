"""bench/ncu_digest.py: one line per kernel of an Nsight Compute text report."""
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("ncu_digest", ROOT / "bench" / "ncu_digest.py")
ncu_digest = importlib.util.module_from_spec(_spec)
sys.modules["ncu_digest"] = ncu_digest  # its dataclasses look their module up there
_spec.loader.exec_module(ncu_digest)

# Two calls profiled, the first launching two kernels; the report's sections as ncu prints them (trimmed).
REPORT = """\
==PROF== Connected to process 7 (/usr/bin/python3.12)
==PROF== Profiling "rows_kernel" - 0: 0%....50%....100% - 20 passes
==PROF== Profiling "sum_partials_kernel" - 1: 0%....50%....100% - 20 passes
M=256 N=65536            bfloat16  cuda:a               one call profiled
    autotuned triton_src.x.k key (1,): BLOCK: 8
==PROF== Profiling "other_kernel" - 2: 0%....50%....100% - 20 passes
M=256 N=65536            bfloat16  triton:b             one call profiled
==PROF== Disconnected from process 7
  void rows_kernel<__nv_bfloat16, 2>(const T1 *, int) (264, 1, 1)x(512, 1, 1), Context 1, Stream 7, Device 0, CC 9.0
    Section: GPU Speed Of Light Throughput
    ----------------------- ----------- ------------
    Metric Name             Metric Unit Metric Value
    ----------------------- ----------- ------------
    DRAM Throughput                   %        61.25
    Duration                         us        88.50
    L2 Cache Throughput               %        70.10
    Compute (SM) Throughput           %        45.00
    ----------------------- ----------- ------------

    OPT   This stall type represents about 34.9% of the total average of 12.0 cycles
    Section: Launch Statistics
    Registers Per Thread             register/thread              64
    Section: Scheduler Statistics
    Eligible Warps Per Scheduler          warp         0.81
    No Eligible                              %        57.30
    Section: Command line profiler metrics
    smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio                 ratio         2.50
    smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio         ratio         4.20
    smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio      ratio         0.00
    smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio        ratio         1.10
    smsp__average_warps_issue_stalled_wait_per_issue_active.ratio                    ratio         0.90
  lab::sum_partials_kernel<float, 2>(const float *, long) (2048, 2, 1)x(32, 8, 1), Context 1, Stream 7, Device 0, CC 9.0
    Section: GPU Speed Of Light Throughput
    Duration                    msecond         0.0061
  other_kernel (256, 1, 1)x(1024, 1, 1), Context 1, Stream 7, Device 0, CC 9.0
    Section: Source Counters
    Warp Stall Sampling (All Samples) (smsp__pcsamp_warps_issue_stalled_barrier)           warp           30
    Warp Stall Sampling (All Samples) (smsp__pcsamp_warps_issue_stalled_long_scoreboard)   warp           60
    Warp Stall Sampling (All Samples) (smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued) warp   50
    Warp Stall Sampling (All Samples) (smsp__pcsamp_warps_issue_stalled_selected)          warp           90
    Warp Stall Sampling (All Samples) (smsp__pcsamp_warps_issue_stalled_wait)              warp           10
"""


def test_each_kernel_gets_the_row_it_was_profiled_for_and_its_figures():
    kernels = ncu_digest.parse(REPORT)
    assert [(k.label, k.name) for k in kernels] == [
        ("M=256 N=65536 bfloat16 cuda:a", "rows_kernel<bf16, 2>"),
        ("M=256 N=65536 bfloat16 cuda:a", "lab::sum_partials_kernel<float, 2>"),
        ("M=256 N=65536 bfloat16 triton:b", "other_kernel")]
    rows = kernels[0]
    assert rows.duration_us() == 88.5 and rows.value("DRAM Throughput") == 61.25
    assert rows.value("Registers Per Thread") == 64 and rows.value("No Eligible") == 57.3
    # The advisory text's figures are not metrics.
    assert all("stall type" not in name for name in rows.metrics)
    assert kernels[1].duration_us() == pytest.approx(6.1)  # milliseconds in older reports


def test_the_largest_stalls_in_cycles_per_issue_or_as_shares_of_the_stalled_samples():
    kernels = ncu_digest.parse(REPORT)
    assert kernels[0].stalls() == "long_scoreboard 4.2, barrier 2.5, short_scoreboard 1.1"
    assert kernels[1].stalls() == "—"
    # Samples: the not-issued split and the issuing warps (selected) left out; 30 + 60 + 10 stalled samples.
    assert kernels[2].stalls() == "long_scoreboard 60%, barrier 30%, wait 10%"


def test_the_table_has_a_line_a_kernel_and_a_dash_for_what_was_not_collected():
    text = ncu_digest.table(ncu_digest.parse(REPORT))
    lines = text.splitlines()
    assert len(lines) == 2 + 3
    cells = [c.strip() for c in lines[2].strip("|").split("|")]
    assert cells[:8] == ["M=256 N=65536 bfloat16 cuda:a", "`rows_kernel<bf16, 2>`", "264 × 512", "88.5", "61", "70",
                         "45", "64"]
    assert cells[-1] == "long_scoreboard 4.2, barrier 2.5, short_scoreboard 1.1"
    assert "2048×2 × 32×8" in lines[3] and "| 6.1 |" in lines[3] and "| — |" in lines[3]


def test_a_committed_profile_reads(capsys):
    path = ROOT / "results" / "nvidia-h200" / "softmax-profile" / "ncu-fp32-32x262144-69177be.txt"
    assert ncu_digest.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "M=32 N=262144 float32 cuda:split" in out and "`softmax_split_stats_kernel<float>`" in out


def test_a_gzipped_report_reads_as_its_text(tmp_path, capsys):
    import gzip

    path = tmp_path / "ncu.txt.gz"
    path.write_bytes(gzip.compress(REPORT.encode()))
    assert ncu_digest.main([str(path)]) == 0
    assert "`rows_kernel<bf16, 2>`" in capsys.readouterr().out


def test_a_file_that_is_not_an_ncu_report_is_an_error_that_says_what_to_give(tmp_path, capsys):
    path = tmp_path / "events.txt"
    path.write_text("M=256 N=65536 bfloat16 cuda:a host 12.0 us/call\n")
    assert ncu_digest.main([str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "no kernel found" in err and "--profiler-range" in err
    assert ncu_digest.main([str(tmp_path / "missing.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err
