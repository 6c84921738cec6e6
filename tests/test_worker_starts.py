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

        def launch(self, first=None):
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


def test_a_call_sent_ahead_at_launch_is_answered_once_to_the_call_that_asks_for_it():
    """Worker.launch(first): the worker makes that call as soon as it has started; call() with the same name and
    arguments collects its reply instead of sending it again, and a different call first drops that reply."""
    from pathlib import Path

    import pytest

    missing = discover.Impl("gelu", "triton", "no_such_row", Path("triton_src/gelu.py"), needs_gpu=False)
    with isolate.Worker() as worker:
        worker.launch(("load_row", (missing,)))
        with pytest.raises(isolate.RowFailure) as failed:  # the reply of the call made at start
            worker.call("load_row", missing)
        assert failed.value.status == "error" and "no_such_row" in failed.value.message
        assert worker.call("cuda_context_healthy") is True  # one reply per request: nothing left over
    with isolate.Worker() as worker:
        worker.launch(("load_row", (missing,)))
        assert worker.call("cuda_context_healthy") is True  # asked for something else: that reply is dropped
        assert worker.starts == 1


def test_the_next_rows_worker_loads_it_ahead_unless_loading_may_touch_the_gpu():
    op = discover.load_op("gelu")
    rows = {i.name: i for i in discover.implementations(op)}
    assert runner._load_ahead(rows["torch:compile"]) == ("load_row", (rows["torch:compile"],))
    assert runner._load_ahead(rows["triton:tuned"]) == ("load_row", (rows["triton:tuned"],))
    assert runner._load_ahead(rows["cuda:vec"]) is None
