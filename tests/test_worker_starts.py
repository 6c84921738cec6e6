"""The workers an op needs before its rows (one per .cu to build, and the first row's) are launched before the
ceilings are measured, so their start-up (importing torch and the harness, seconds each) overlaps that work instead
of following it (compare/runner.py)."""
import itertools

from compare import discover, isolate, runner


def test_the_build_and_first_row_workers_start_before_anything_is_asked_of_a_worker(monkeypatch):
    events, numbers = [], itertools.count()

    class Recording(isolate.InProcess):
        def __init__(self):
            self.number = next(numbers)

        def launch(self):
            events.append(("launch", self.number))

        def call(self, name, *args, timeout_s=None):
            events.append((name, self.number))
            if name == "build_source":  # no build needed to see the order
                raise isolate.RowFailure("error", "BuildError: planted, no build in this test")
            return super().call(name, *args, timeout_s=timeout_s)

    monkeypatch.setattr(runner, "_pool", lambda options: Recording())
    op = discover.load_op("gelu")
    impls = [i for i in discover.implementations(op) if i.name in ("cuda:naive", "torch:eager")]
    result = runner.run_op(op, runner.Options(capture=False, progress=False), impls)
    assert {r.impl: r.status for r in result.rows} == {"cuda:naive": "build failed", "torch:eager": "ok"}
    calls = [(i, e) for i, e in enumerate(events) if e[0] != "launch"]
    first_call = calls[0][0]
    builder = next(number for name, number in events if name == "build_source")
    row = next(number for _, (name, number) in calls if name != "build_source" and number != builder)
    launched = {number: i for i, (name, number) in enumerate(events) if name == "launch"}
    assert launched[builder] < first_call and launched[row] < first_call, events
