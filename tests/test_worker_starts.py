"""The workers an op needs before its rows (one per .cu to build, and the first row's) are launched before the
ceilings are measured, so their start-up (importing torch and the harness, seconds each) overlaps that work instead
of following it (compare/runner.py)."""
import itertools
import os
from pathlib import Path

import pytest

from compare import discover, isolate, runner

PLANTED = Path(__file__).parent / "planted"


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
        worker.send_ahead("load_row", missing)  # sent while the worker runs; its reply collected when asked for
        with pytest.raises(isolate.RowFailure, match="no_such_row"):
            worker.call("load_row", missing)
        assert worker.call("cuda_context_healthy") is True
    with isolate.Worker() as worker:
        worker.launch(("load_row", (missing,)))
        assert worker.call("cuda_context_healthy") is True  # asked for something else: that reply is dropped
        assert worker.starts == 1


def test_the_next_rows_worker_loads_it_ahead_unless_loading_may_touch_the_gpu():
    op = discover.load_op("gelu")
    rows = {i.name: i for i in discover.implementations(op)}
    assert runner._load_ahead(rows["torch:compile"]) == ("load_row", (rows["torch:compile"],))
    assert runner._load_ahead(rows["triton:tuned"]) == ("load_row", (rows["triton:tuned"],))
    assert runner._load_ahead(rows["cuda:vec"]) == ("import_profiler_modules", ())


def test_a_rows_kernel_accounting_runs_beside_the_next_rows_checks_and_ends_before_its_timing(monkeypatch):
    """One row at a time: a row's kernel accounting is finished (its profiled calls, with the GPU alone) right before
    the next row's first timed cell, or right after a next row that times nothing, or at the end; its worker is
    closed after that, and the rows' outcomes are recorded in order."""
    from compare.results import RowOutcome, RowStatus, Status

    events, served = [], {}

    class Pool(isolate.InProcess):
        def close(self, wait=True):
            if id(self) in served:
                events.append(("close", served[id(self)]))

    def fake_run_row(pool, op, impl, options, timed, before_timing=None, later=None):
        served[id(pool)] = impl.name
        events.append(("checks", impl.name))
        out = RowOutcome(RowStatus(impl.name, Status.OK))
        if impl.name == "triton:tuned":  # fails its checks: not timed, no accounting
            out.status = RowStatus(impl.name, Status.FAIL, "planted")
            return out
        before_timing()
        events.append(("timing", impl.name))
        later.append(lambda: events.append(("accounting", impl.name)))
        return out

    monkeypatch.setattr(runner, "_pool", lambda options: Pool())
    monkeypatch.setattr(runner, "run_row", fake_run_row)
    op = discover.load_op("gelu")
    rows = {i.name: i for i in discover.implementations(op)}
    order = ["triton:basic", "triton:tuned", "torch:eager"]
    result = runner.run_op(op, runner.Options(capture=False, progress=False), [rows[name] for name in order])
    assert events == [
        ("checks", "triton:basic"), ("timing", "triton:basic"),
        ("checks", "triton:tuned"), ("accounting", "triton:basic"), ("close", "triton:basic"), ("close", "triton:tuned"),
        ("checks", "torch:eager"), ("timing", "torch:eager"), ("accounting", "torch:eager"), ("close", "torch:eager")]
    assert [r.impl for r in result.rows] == order
    assert [r.status for r in result.rows] == [Status.OK, Status.FAIL, Status.OK]
    assert runner.WAITING_FOR_EXITS in result.phases  # the parent's waits, a line of the phase table


def test_run_row_leaves_its_kernel_accounting_to_the_caller_with_the_profilers_start_up_sent_ahead(monkeypatch):
    from compare import check

    calls = []

    class Pool:
        def call(self, name, *args, timeout_s=None):
            calls.append(("call", name))

        def send_ahead(self, name, *args):
            calls.append(("ahead", name))

    def passing(pool, op, impl, case, device, seconds, alone=False):
        result = check.failed_result(op, impl.name, case, "ok", "")
        result.ok = True
        return result

    monkeypatch.setattr(runner.env, "has_gpu", lambda: True)
    monkeypatch.setattr(runner, "_check", passing)
    monkeypatch.setattr(runner, "_time_row", lambda *args: calls.append(("timing",)))
    monkeypatch.setattr(runner, "_account_kernels", lambda *args: calls.append(("accounting",)))
    op = discover.load_op("gelu")
    impl = next(i for i in discover.implementations(op) if i.name == "torch:eager")
    options = runner.Options(capture=False, progress=False, dtypes=["float32"])
    later = []
    out = runner.run_row(Pool(), op, impl, options, [(1 << 20,)], before_timing=lambda: calls.append(("before",)),
                         later=later)
    assert out.status.status == "ok" and len(later) == 1
    assert calls[:1] == [("call", "load_row")] and ("accounting",) not in calls
    assert calls.index(("before",)) + 1 == calls.index(("timing",)) and calls[-1] == ("ahead", "start_profiler")
    later[0]()
    assert calls[-1] == ("accounting",) and "kernel accounting" in out.seconds
    # Without `later`, as with rows checked at once, the accounting is the row's own, before its checks after timing.
    calls.clear()
    runner.run_row(Pool(), op, impl, options, [(1 << 20,)])
    assert ("accounting",) in calls and ("ahead", "start_profiler") not in calls


def test_one_row_at_a_time_the_workers_of_the_next_two_rows_are_started_before_a_row_runs(monkeypatch):
    """Row n runs with the workers of rows n+1 and n+2 already started (each loading its row where _load_ahead
    allows), no more, and every worker is used by its own row and closed."""
    from compare.results import RowOutcome, RowStatus, Status

    events, pools = [], []

    class Pool(isolate.InProcess):
        def __init__(self):
            self.number = len(pools)
            pools.append(self)
            self.closed = False

        def launch(self, first=None):
            events.append(("launch", self.number, first[1][0].name if first else None))

        def close(self, wait=True):
            self.closed = True

    def fake_run_row(pool, op, impl, options, timed, before_timing=None, later=None):
        events.append(("row", pool.number, impl.name))
        return RowOutcome(RowStatus(impl.name, Status.OK))

    monkeypatch.setattr(runner, "_pool", lambda options: Pool())
    monkeypatch.setattr(runner, "run_row", fake_run_row)
    op = discover.load_op("softmax")
    rows = {i.name: i for i in discover.implementations(op)}
    order = ["triton:basic", "triton:tiled", "triton:online", "triton:tuned", "torch:eager"]
    runner.run_op(op, runner.Options(capture=False, progress=False, time=False), [rows[name] for name in order])
    ran = [e for e in events if e[0] == "row"]
    assert [e[2] for e in ran] == order and len({e[1] for e in ran}) == len(order)  # a worker of its own each
    launched = {e[1]: i for i, e in enumerate(events) if e[0] == "launch"}
    for n, (_, number, _) in enumerate(ran):
        started_before = [r[2] for r in ran if launched[r[1]] < events.index(ran[n])]
        # this row and the two after it, never a third
        assert started_before == order[:min(n + 3, len(order))], (n, started_before)
    loads = {e[1]: e[2] for e in events if e[0] == "launch"}
    assert [loads[e[1]] for e in ran] == [None] + order[1:]  # the first row's worker started before any was known
    assert all(p.closed for p in pools)


def test_one_row_at_a_time_the_ceilings_are_measured_in_the_first_rows_worker_before_it_loads_its_row(monkeypatch):
    """The ceilings' worker is the first row's, started once: the copies run there before the row is loaded, and
    the memory they held is given back first. With rows checked at once, the ceilings keep a worker of their own."""
    import torch

    from compare import env
    from compare.results import RowOutcome, RowStatus, Status

    for check_rows in (1, 2):
        calls, pools = [], []

        class Pool(isolate.InProcess):
            def __init__(self):
                self.number = len(pools)
                pools.append(self)

            def call(self, name, *args, timeout_s=None):
                calls.append((self.number, name))
                return 3000.0 if name == "measure_copy_bandwidth" else []

        def fake_run_row(pool, op, impl, options, timed, before_timing=None, later=None):
            pool.call("load_row", impl)
            return RowOutcome(RowStatus(impl.name, Status.OK))

        monkeypatch.setattr(runner, "_pool", lambda options: Pool())
        monkeypatch.setattr(runner, "run_row", fake_run_row)
        monkeypatch.setattr(env, "has_gpu", lambda: True)
        monkeypatch.setattr(env, "describe", lambda: {"gpu": "planted"})
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (9, 0))
        op = discover.load_op("gelu")
        rows = {i.name: i for i in discover.implementations(op)}
        chosen = [rows["triton:basic"], rows["torch:eager"]]
        runner.run_op(op, runner.Options(capture=False, progress=False, check_rows=check_rows), chosen)
        copies = [n for n, name in calls if name == "measure_copy_bandwidth"]
        loads = [n for n, name in calls if name == "load_row"]
        assert len(copies) == 1 and len(loads) == 2
        if check_rows == 1:
            first = copies[0]
            assert loads[0] == first and calls.index((first, "release_cached_memory")) < calls.index((first, "load_row"))
        else:
            assert copies[0] not in loads


def test_a_worker_closed_without_waiting_exits_beside_the_caller_and_is_waited_for_before_timing(monkeypatch):
    """Worker.close(wait=False) returns before the worker has exited (its teardown takes a while), and
    isolate.wait_for_exits() returns once none is left; one row at a time, the runner waits for them right before
    each row's timing."""
    import time

    workers = [isolate.Worker() for _ in range(2)]
    for w in workers:
        w.call("release_cached_memory")  # started, torch imported
    procs = [w.proc for w in workers]
    start = time.perf_counter()
    for w in workers:
        w.close(wait=False)
    assert time.perf_counter() - start < 0.2 and all(w.proc is None for w in workers)
    isolate.wait_for_exits()
    assert not any(p.is_alive() for p in procs) and isolate._exiting == []

    from compare.results import RowOutcome, RowStatus, Status

    events = []
    monkeypatch.setattr(isolate, "wait_for_exits", lambda: events.append("waited"))

    def fake_run_row(pool, op, impl, options, timed, before_timing=None, later=None):
        before_timing()
        events.append(("timing", impl.name))
        return RowOutcome(RowStatus(impl.name, Status.OK))

    monkeypatch.setattr(runner, "_pool", lambda options: isolate.InProcess())
    monkeypatch.setattr(runner, "run_row", fake_run_row)
    op = discover.load_op("gelu")
    rows = {i.name: i for i in discover.implementations(op)}
    runner.run_op(op, runner.Options(capture=False, progress=False), [rows["triton:basic"], rows["torch:eager"]])
    timings = [i for i, e in enumerate(events) if e != "waited"]
    assert all(events[i - 1] == "waited" for i in timings), events


def test_a_worker_let_go_before_it_answers_its_start_exits_quietly():
    """A worker closed right after launch() (a run whose only row is skipped, say) finds its pipe closed when it
    answers the start handshake: it exits with status 0 instead of dying on the BrokenPipeError, whose traceback
    the terminal would show."""
    worker = isolate.Worker()
    worker.launch()
    worker._join_start()  # the process is started and the handshake is in its pipe
    proc = worker.proc
    worker.close(wait=False)  # before the worker has imported the harness and answered
    proc.join(120)
    assert proc.exitcode == 0


@pytest.mark.parametrize("row", ["torch:eager", "triton:basic"])
def test_loading_a_torch_or_triton_row_imports_what_the_profilers_first_session_would(row):
    """Such a row is loaded ahead, beside the rows before it: its kernel accounting then waits for no import (a
    torch:eager row run last waited seconds for it). A fresh interpreter."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys\n"
            "from compare import discover, worker\n"
            "op = discover.load_op('gelu')\n"
            f"impl = next(i for i in discover.implementations(op) if i.name == {row!r})\n"
            "before = 'torch._inductor' in sys.modules\n"
            "worker.load_row(impl)\n"
            "print('imported before:', before, 'after:', 'torch._inductor' in sys.modules)\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "imported before: False after: True" in run.stdout, run.stdout


def test_once_the_profiler_modules_are_imported_a_first_profiler_session_imports_nothing():
    """The premise of worker.import_profiler_modules: it imports every module the first torch.profiler session of a
    process would (on this torch), so that part of the session's start-up can be paid ahead. A fresh interpreter."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, torch\n"
            "from compare import worker\n"
            "worker.import_profiler_modules()\n"
            "before = set(sys.modules)\n"
            "from torch.profiler import ProfilerActivity, profile\n"
            "with profile(activities=[ProfilerActivity.CPU]):\n"
            "    pass\n"
            "print('new modules:', sorted(set(sys.modules) - before))\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "new modules: []" in run.stdout, run.stdout


def test_a_worker_is_forked_from_the_fork_server_with_the_environment_as_it_is_when_the_worker_starts(monkeypatch):
    """Workers come from a fork server that has done the imports once (compare.isolate.worker_context), but each
    must still see the parent's environment of the moment it starts (the compile caches, --gpus's
    CUDA_VISIBLE_DEVICES), not the one the server started with."""
    monkeypatch.syspath_prepend(str(PLANTED))
    import environment_worker

    monkeypatch.setattr(isolate, "_serve", environment_worker.serve_with_where_am_i)
    if isolate.worker_context().get_start_method() != "forkserver":
        pytest.skip("no fork server on this platform: workers are spawned")
    with isolate.Worker() as first:  # the server is running before the variable is set
        first.call("where_am_i", "LAB_TEST_MARK")
    monkeypatch.setenv("LAB_TEST_MARK", "set after the fork server started")
    with isolate.Worker() as worker:
        value, starter, parent = worker.call("where_am_i", "LAB_TEST_MARK")
    assert value == "set after the fork server started"
    assert starter == os.getpid() and parent != os.getpid()  # started by this process, forked by the server
