"""The progress display (compare/progress.py): what it says, its estimate of the time left, and silence when the
output is not a terminal."""
import io

from compare.progress import Progress


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_the_line_names_op_row_phase_and_count_and_estimates_the_time_left():
    clock, out = Clock(), io.StringIO()
    p = Progress(out, enabled=True, now=clock)
    p.start_op("softmax", rows=4)
    p.start_row(1, "cuda:naive")
    p.phase("checks", total=80)
    for _ in range(20):
        p.step()
    assert p.line() == "softmax row 1/4 cuda:naive · checks 20/80 · 0:00 elapsed"  # no finished row: no estimate
    clock.t = 30.0
    p.start_row(2, "cuda:vec")  # the first row took 30 s
    clock.t = 40.0
    # this row: about 20 s more; rows 3 and 4: 30 s each
    assert p.line().endswith("0:40 elapsed · about 1:20 left")
    assert "\r" in out.getvalue() and "cuda:vec" in out.getvalue()


def test_a_run_that_is_not_on_a_terminal_writes_nothing():
    out = io.StringIO()  # isatty() is False
    p = Progress(out)
    p.start_op("gelu", rows=2)
    p.start_row(1, "cuda:naive")
    p.phase("timing", total=5)
    p.step()
    p.clear()
    assert out.getvalue() == ""


def test_clear_erases_the_line_it_drew():
    out = io.StringIO()
    p = Progress(out, enabled=True, now=Clock())
    p.start_op("add", rows=1)
    drawn = out.getvalue()
    p.clear()
    assert out.getvalue().endswith("\r" + " " * len(drawn.lstrip("\r").rstrip()) + "\r")


def test_a_run_ends_with_where_its_time_went_in_terminal_md_and_json(tmp_path, capsys):
    import json

    from compare import cli

    from compare import env

    out = tmp_path / "results"
    before = env.seconds_since_start()
    assert cli.main(["gelu", "--impls", "triton:basic", "--no-capture", "--out", str(out)]) == 0
    after = env.seconds_since_start()
    data = json.loads((out / "gelu.json").read_text())
    phases = data["phases"]
    assert {"count lines", "build (CUDA)", "rows: load", "rows: checks", "report (plot)"} <= set(phases)
    # The process's own start-up and the environment's reading come first, and are times this process took.
    first, second = list(phases)[:2]
    assert (first, second) == ("start-up (imports, finding the ops)", "environment (GPU context, versions)")
    # This test's process started the run: its start-up is the process's age when the ops had been found.
    assert before - 0.01 <= phases[first] <= after + 0.01 and phases[second] >= 0
    assert phases["rows: checks"] == round(data["row_seconds"]["triton:basic"]["checks"], 2)
    assert 0 < phases["of the checks: Triton first calls (JIT, autotuning)"] <= phases["rows: checks"]
    assert "## Where the time went" in (out / "gelu.md").read_text()
    assert "Where the time went" in capsys.readouterr().out


def test_a_row_phases_parts_follow_its_line_and_stay_out_of_the_total():
    """Rows' parts of a phase ("timing/<part>", "checks/<part>") are summed over the rows into lines 'of the <phase>'
    right after that phase's line, whatever order the rows recorded them in; the report's total leaves them out."""
    from compare import report, runner
    from compare.results import OpResult

    result = OpResult("gelu", "", "memory", {})
    result.phases = {"ceilings": 2.0}
    result.row_seconds = {
        "a": {"load": 1.0, "timing/making inputs, in the parent": 0.5, "checks": 3.0, "timing": 2.0,
              "checks/judging, in the parent": 1.0},
        "b": {"checks": 1.0, "timing": 4.0, "timing/making inputs, in the parent": 1.0},
    }
    runner._sum_phases(result)
    assert list(result.phases.items()) == [
        ("ceilings", 2.0), ("rows: load", 1.0), ("rows: checks", 4.0), ("of the checks: judging, in the parent", 1.0),
        ("rows: timing", 6.0), ("of the timing: making inputs, in the parent", 1.5)]
    (section,) = report.phases_section(result)
    assert section.rows[-1] == ["total", "13.0", ""]
