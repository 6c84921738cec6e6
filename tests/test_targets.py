"""Targets (compare/targets.py): the goals a spec declares, judged on result files by `python -m compare summary`."""
import pytest
import torch

from compare import discover, summary
from compare.targets import Target, judge
from specs import _norm
from test_summary import result, section, table_row, timing, write

N4K, N64K = "M=4096 N=4096", "M=256 N=65536"


def norm_file(statuses=None):
    """A memory-bound op at two shapes: at N = 4K the best CUDA row reaches 0.93 of the copy, at 64K 0.71 (a faster
    CUDA row there failed its checks); Triton reaches 0.91 and 0.88; torch:compile is slower at 4K and faster at 64K,
    the peer is timed at 4K only."""
    statuses = {"cuda:a": "ok", "cuda:b": "ok", "cuda:broken": "FAIL", "triton:a": "ok", "torch:compile": "ok",
                "peer:liger": "ok"} | (statuses or {})
    ts = [timing("cuda:a", "float32", N4K, gbps=3000, same=0.93, median_ms=0.010),
          timing("cuda:b", "float32", N4K, gbps=2000, same=0.62, median_ms=0.015),
          timing("triton:a", "float32", N4K, gbps=2900, same=0.91, median_ms=0.0105),
          timing("torch:compile", "float32", N4K, gbps=2500, same=0.80, median_ms=0.012),
          timing("peer:liger", "float32", N4K, gbps=2950, same=0.92, median_ms=0.0101, iqr=(0.95, 1.05)),
          timing("cuda:a", "float32", N64K, gbps=2300, same=0.71, median_ms=0.040),
          timing("cuda:broken", "float32", N64K, gbps=3300, same=0.99, median_ms=0.028),
          timing("triton:a", "float32", N64K, gbps=2800, same=0.88, median_ms=0.033),
          timing("torch:compile", "float32", N64K, gbps=2900, same=0.90, median_ms=0.030)]
    data = result("norm", "memory", statuses, ts)
    return summary.OpFile("gpu-a", None, data)


def test_a_floor_counts_each_backends_best_passing_row_and_names_each_miss_with_its_figure():
    judged = judge(Target("N ≥ 4K", at_least=0.90, where=lambda shape: shape[-1] >= 4096), norm_file())
    assert judged.met == 2  # cuda:a and triton:a at 4K
    # At 64K the failed row's 0.99 does not count: the best CUDA row there is cuda:a.
    assert judged.missed == ["float32 M=256 N=64K `cuda:a` 0.71", "float32 M=256 N=64K `triton:a` 0.88"]
    assert judged.unjudged == []


def test_a_floor_picks_its_cells_by_dtype_and_shape():
    at_64k = Target("N = 64K", at_least=0.85, rows=("triton",), where=lambda shape: shape == (256, 65536))
    assert (judge(at_64k, norm_file()).met, judge(at_64k, norm_file()).missed) == (1, [])
    other_dtype = Target("N ≥ 4K", at_least=0.5, dtypes=("bfloat16",))
    assert judge(other_dtype, norm_file()).met == 0 and judge(other_dtype, norm_file()).missed == []


def test_a_cell_without_a_passing_row_of_a_backend_is_not_judged_never_met():
    judged = judge(Target("every shape", at_least=0.5), norm_file({"triton:a": "FAIL"}))
    assert judged.met == 2
    assert judged.unjudged == ["float32 M=4K N=4K best Triton: no passing row timed",
                               "float32 M=256 N=64K best Triton: no passing row timed"]


def test_an_order_compares_the_best_of_ours_with_each_named_row_where_it_was_timed():
    judged = judge(Target("every shape", ahead_of=("torch:compile", "peer:liger")), norm_file())
    # 4K: cuda:a (10.0 µs) ahead of torch:compile (12.0 µs) and of peer:liger (10.1 µs).
    # 64K: triton:a (33.0 µs) behind torch:compile (30.0); the peer was not timed there, nothing to beat.
    assert judged.met == 2
    assert judged.missed == ["float32 M=256 N=64K `triton:a` 33.0 µs, `torch:compile` 30.0 µs"]


def test_an_order_missed_within_the_noise_says_so():
    f = norm_file()
    for t in f.data["timings"]:
        if t["impl"] == "peer:liger":
            t["median_ms"], t["q25_ms"], t["q75_ms"] = 0.0099, 0.0094, 0.0104
    judged = judge(Target("every shape", ahead_of=("peer:liger",)), f)
    assert judged.missed == ["float32 M=4K N=4K `cuda:a` 10.0 µs, `peer:liger` 9.9 µs (IQRs overlap)"]


def test_a_miss_never_reads_as_the_goal():
    f = norm_file()
    for t in f.data["timings"]:
        if t["impl"] == "cuda:a":
            t["fraction_of_same_bytes_copy"] = 0.9996
    judged = judge(Target("every shape", at_least=1.00, rows=("cuda",)), f)
    assert judged.missed == ["float32 M=4K N=4K `cuda:a` 0.9996", "float32 M=256 N=64K `cuda:a` 0.9996"]


def test_a_target_is_a_floor_or_an_order():
    with pytest.raises(ValueError, match="at_least .* or ahead_of"):
        Target("N ≥ 4K")
    with pytest.raises(ValueError, match="one of the two"):
        Target("N ≥ 4K", at_least=0.9, ahead_of=("torch:compile",))
    with pytest.raises(ValueError, match="rows is empty"):
        Target("N ≥ 4K", at_least=0.9, rows=())
    with pytest.raises(ValueError, match="not names.*float32"):  # a torch dtype would never match a results cell
        Target("N ≥ 4K", at_least=0.9, dtypes=(torch.float32,))


def test_the_summary_lists_each_target_per_gpu_folder(tmp_path):
    root = tmp_path / "results"
    write(root / "gpu-a" / "norm.json", norm_file().data)
    targets = (Target("N ≥ 4K", at_least=0.90, where=lambda shape: shape[-1] >= 4096),
               Target("every shape", ahead_of=("torch:compile",)))
    text = summary.render(root, root / "README.md", "python -m compare summary",
                          targets_of=lambda op: targets if op == "norm" else ())
    part = section(text, "norm")
    assert "- best CUDA, best Triton ≥ 0.90 of the ceiling: every dtype, N ≥ 4K" in part
    assert ("  - gpu-a: 2 of 4 met; missed: float32 M=256 N=64K `cuda:a` 0.71; float32 M=256 N=64K `triton:a` "
            "0.88") in part
    assert "- the best CUDA or Triton row no slower than `torch:compile`: every dtype, every shape" in part
    glance = text[text.index("## Targets at a glance"):text.index("\n## norm")]
    row = table_row(glance, "norm", "best CUDA, best Triton ≥ 0.90 of the ceiling", "every dtype, N ≥ 4K")
    assert row[3:] == ["2 of 4 met"]
    no_targets = summary.render(root, root / "README.md", "python -m compare summary", targets_of=lambda op: ())
    assert "Targets" not in no_targets


def test_the_norms_declare_their_goals_for_the_forward_and_the_backward_only():
    assert discover.load_op("layernorm").targets == _norm.FORWARD_TARGETS
    assert discover.load_op("rmsnorm-backward").targets == _norm.BACKWARD_TARGETS
    assert discover.load_op("layernorm-fwd-bwd").targets == ()
    floors = {t.cells: t.at_least for t in _norm.FORWARD_TARGETS if t.at_least is not None}
    assert floors == {"N ≥ 4K": 0.90, "4K ≤ N < 64K": 0.90, "N = 64K": 0.85}
    n64k_bf16 = [t for t in _norm.FORWARD_TARGETS if t.at_least and t.picks("bfloat16", (256, 65536))]
    assert [t.at_least for t in n64k_bf16] == [0.85]
    assert summary.spec_targets("no-such-op") == ()


def test_a_runs_report_judges_the_specs_goals_on_the_cells_it_timed(capsys):
    from compare import report, results, runner
    from test_same_bytes_copy import ENV, timed

    big, small = "M=4096 N=4096 K=4096", "M=1024 N=1024 K=1024"
    r = results.OpResult("matmul", "C = A @ B", "compute", dict(ENV), ceilings=results.Ceilings(copy_gbps=4000.0))
    r.timings = [timed(impl, shape, ms, 1 << 27, "float16")
                 for impl, shape, ms in (("cuda:tmastore", big, 0.2), ("torch:eager", big, 0.194),
                                         ("cuda:tmastore", small, 0.01), ("torch:eager", small, 0.02))]
    for t in r.timings:
        t.tflops = 1e-9 / t.median_ms
    r.rows = [results.RowStatus("cuda:tmastore", "ok"), results.RowStatus("torch:eager", "ok")]
    runner.relate_to_ceilings(r)
    md = report.markdown(r, {"command": "python -m compare matmul", "plot": None})
    targets_part = md[md.index("## Targets"):]
    # The 4K square (cuBLAS 3% faster) misses the fp16 goal of 1.00; the 1K square is no cell of any goal, and the
    # fp32 goal, none of whose cells this run timed, is left out.
    assert "0 of 1 met" in targets_part and "float16 M=4K N=4K K=4K `cuda:tmastore` 0.97" in targets_part
    assert "M=1K" not in targets_part and "float32" not in targets_part
    report.print_terminal(r)
    assert "float16 M=4K N=4K K=4K `cuda:tmastore` 0.97" in capsys.readouterr().out
