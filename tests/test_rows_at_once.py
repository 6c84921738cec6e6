"""--check-rows N (compare/runner.py): several rows checked at once on one GPU, while a timed cell and the kernel
accounting have the GPU alone. The gate must never let a timing overlap a check, and rows checked at once must get
exactly the checks they get one after another."""
import contextlib

import pytest
import torch


def test_a_timed_section_waits_for_the_checks_in_flight_and_holds_back_new_ones():
    import threading
    import time

    from compare.runner import _GpuGate

    gate, log = _GpuGate(), []
    check_started, release_check = threading.Event(), threading.Event()

    def check(name, hold=None):
        with gate.shared():
            log.append(f"{name} in")
            if hold:
                check_started.set()
                hold.wait(5)
            log.append(f"{name} out")

    def timing():
        with gate.exclusive():
            log.append("timing in")
            time.sleep(0.1)
            log.append("timing out")

    first = threading.Thread(target=check, args=("check 1", release_check))
    first.start()
    check_started.wait(5)
    timed = threading.Thread(target=timing)
    timed.start()
    time.sleep(0.1)
    later = threading.Thread(target=check, args=("check 2",))  # asks while the timing waits: goes after it
    later.start()
    time.sleep(0.1)
    assert log == ["check 1 in"]  # the timing waits for check 1, and check 2 waits for the timing
    release_check.set()
    for t in (first, timed, later):
        t.join(5)
    assert log == ["check 1 in", "check 1 out", "timing in", "timing out", "check 2 in", "check 2 out"]
    # What the phase table gets of it: the timing held the GPU alone about 0.1 s, after waiting about as long for
    # check 1; check 2 waited for both.
    held, waited, checks_waited = (gate.seconds[k] for k in ("held alone", "alone waited", "checks waited"))
    assert 0.09 <= held < 1 and 0.09 <= waited < 1 and checks_waited >= held


def test_rows_checked_at_once_get_the_same_checks_as_one_after_another():
    from compare import discover, runner

    op = discover.load_op("gelu")
    impls = [i for i in discover.implementations(op) if i.name in ("triton:basic", "triton:tuned", "torch:eager")]
    one = runner.run_op(op, runner.Options(capture=False, progress=False), impls)
    three = runner.run_op(op, runner.Options(capture=False, progress=False, check_rows=3), impls)
    assert [r.status for r in three.rows] == [r.status for r in one.rows] == ["ok"] * 3
    gate_lines = [line for line in three.phases if line in runner.GATE_LINES.values()]
    assert len(gate_lines) == 3 and not any(line in runner.GATE_LINES.values() for line in one.phases)

    def key(c):
        return (c.impl, c.dtype, c.shape, c.inputs, c.seed, c.ok)

    assert sorted(map(key, three.checks)) == sorted(map(key, one.checks))


class _Row:
    name, backend = "triton:basic", "triton"


class _CompileRow:
    backend = "torch"

    def __init__(self, variant):
        self.variant, self.name = variant, f"torch:{variant}"


def _one_case(op_name="gelu"):
    import torch

    from compare import discover, schedule

    op = discover.load_op(op_name)
    return op, schedule.check_cases(op, "triton:basic", [torch.float32], False, [])[0]


def test_a_case_out_of_gpu_memory_beside_other_rows_runs_again_with_the_gpu_alone(monkeypatch):
    from compare import check, runner

    op, case = _one_case()
    gate, tries = runner._GpuGate(), []
    monkeypatch.setattr(runner, "_gate", gate)

    def case_that_fits_alone(pool, op, impl, case, device, seconds, *made):
        tries.append(gate._exclusive)
        if not gate._exclusive:
            raise runner._OutOfMemory("in the parent: CUDA out of memory")
        return check.failed_result(op, impl.name, case, "ok", "")

    monkeypatch.setattr(runner, "_check_case", case_that_fits_alone)

    seconds = {}
    result = runner._check(None, op, _Row(), case, "cpu", seconds)
    assert tries == [False, True] and result.status == "ok"
    assert "checks/run again alone, out of GPU memory beside other rows" in seconds


def test_a_case_out_of_gpu_memory_alone_is_an_error_of_that_case_not_of_the_run(monkeypatch):
    from compare import runner

    op, case = _one_case()
    monkeypatch.setattr(runner, "_gate", runner._GpuGate())

    def case_too_large(pool, op, impl, case, device, seconds, *made):
        raise runner._OutOfMemory("in the row's worker: OutOfMemoryError: CUDA out of memory")

    monkeypatch.setattr(runner, "_check_case", case_too_large)

    result = runner._check(None, op, _Row(), case, "cpu")
    assert result.status == "error" and "does not fit this GPU" in result.message and "row's worker" in result.message


def test_a_triton_row_s_calls_at_an_untimed_shape_keep_their_autotuning_apart(monkeypatch):
    """The worker is told which cases are at a shape no timed cell uses (compare.worker.tuned_apart), for Triton rows
    only: what their autotuners choose there, possibly beside other rows' checks, must never reach a timed call."""
    import dataclasses

    from compare import runner, worker

    op, untimed = _one_case()
    assert not untimed.timed_shape  # no shape is timed in _one_case's schedule
    timed = dataclasses.replace(untimed, timed_shape=True)

    class Pool:
        apart = []

        def call(self, name, *args):
            self.apart.append(args[4])
            return worker.call_case(*args, fn=lambda x: op.reference(x.double()).to(x.dtype))

    cuda_row = type("_CudaRow", (), {"name": "cuda:naive", "backend": "cuda"})()
    for gate in (runner._GpuGate(), runner._NoGate()):  # one row at a time: nothing contends, nothing kept apart
        monkeypatch.setattr(runner, "_gate", gate)
        for row, case in ((_Row(), untimed), (_Row(), timed), (cuda_row, untimed)):
            assert runner._check_case(Pool(), op, row, case, "cpu", {}).status == "ok"
    assert Pool.apart == [True, False, False, False, False, False]


def test_a_worker_out_of_gpu_memory_is_told_from_a_row_that_raised():
    import pytest

    from compare import runner
    from compare.isolate import RowFailure
    from compare.results import Status

    op, case = _one_case()

    class Pool:
        def __init__(self, message):
            self.message, self.calls = message, []

        def call(self, name, *args):
            self.calls.append(name)
            if name == "call_case":
                raise RowFailure(Status.ERROR, self.message)

    out_of_memory = Pool("OutOfMemoryError (x.py:3): CUDA out of memory. Tried to allocate 512.00 MiB")
    with pytest.raises(runner._OutOfMemory, match="row's worker"):
        runner._check_case(out_of_memory, op, _Row(), case, "cpu", {})
    # The worker gives back what it holds before the case runs again alone: an idle worker's cache is memory the
    # case alone would otherwise not have.
    assert out_of_memory.calls == ["call_case", "release_cached_memory"]
    wrong = Pool("ValueError (x.py:3): wrong shape")
    raised = runner._check_case(wrong, op, _Row(), case, "cpu", {})
    assert raised.status == "error" and "wrong shape" in raised.message and wrong.calls == ["call_case"]


def test_the_worker_gives_its_cached_memory_back_after_a_large_case_only(monkeypatch):
    from compare import runner, worker

    op, case = _one_case()

    class Pool:  # a row that returns the reference, called in this process
        def __init__(self):
            self.calls = []

        def call(self, name, *args):
            self.calls.append(name)
            if name == "call_case":
                return worker.call_case(*args, fn=lambda x: op.reference(x.double()).to(x.dtype))
            return getattr(worker, name)(*args)

    small = Pool()
    assert runner._check_case(small, op, _Row(), case, "cpu", {}).status == "ok"
    assert small.calls == ["call_case"]
    monkeypatch.setattr(runner, "RELEASE_AFTER_BYTES", 1)
    large = Pool()
    assert runner._check_case(large, op, _Row(), case, "cpu", {}).status == "ok"
    assert large.calls == ["call_case", "release_cached_memory"]


def test_kept_outputs_of_an_in_place_row_are_copies_that_later_calls_leave_alone():
    """worker._Recorder for a row whose output is its input set (an in-place call): the first output it keeps is
    copied before the next restore, the last when recording stops; calls after that (host timing, graph replays)
    change neither. Without the copies both would show every later call's additions."""
    import torch

    from compare import worker

    sets = [(torch.zeros(4),), (torch.full((4,), 10.0),)]
    recorder = worker._Recorder(lambda t: t.add_(1.0), sets, outputs_rewritten=True)
    recorder.set_recording(True)
    recorder()  # set 0 -> 1
    recorder.settle_first()
    recorder()  # set 1 -> 11
    recorder()  # set 0 again -> 2 (no restore here)
    recorder.set_recording(False)
    for _ in range(3):
        recorder()
    (first_set, first), (last_set, last) = recorder.first, recorder.last
    assert (first_set, last_set) == (0, 0)
    assert torch.equal(first, torch.ones(4)) and torch.equal(last, torch.full((4,), 2.0))


class _ReplayedGraph:
    """A stand-in for torch.compile replaying a CUDA graph: every call writes its answer (x + 1) into the same
    output buffer, so an output is valid only until the next call."""

    lab_outputs_until_next_call = True

    def __init__(self):
        self.out = None

    def __call__(self, x):
        if self.out is None or self.out.shape != x.shape:
            self.out = torch.empty_like(x)
        return self.out.copy_(x + 1.0)


def test_a_check_case_of_a_row_whose_output_lives_until_the_next_call_judges_copies():
    """worker.call_case: call B rewrites call A's output by design (replayed CUDA graphs), so A's copy, taken as it
    returned, is handed back for A. Without the flag the same row's A reads B's answer, which the judge calls
    aliasing (tests/test_check.py)."""
    from compare import worker

    a, b = torch.zeros(4), torch.full((4,), 10.0)
    got = worker.call_case((torch.ones(4),), (a,), (b,), may_refuse=False, fn=_ReplayedGraph())
    assert torch.equal(got.first_a, torch.ones(4)) and torch.equal(got.a, torch.ones(4))
    assert torch.equal(got.b, torch.full((4,), 11.0))

    unflagged = _ReplayedGraph()
    unflagged.lab_outputs_until_next_call = False
    got = worker.call_case((torch.ones(4),), (a,), (b,), may_refuse=False, fn=unflagged)
    assert torch.equal(got.a, torch.full((4,), 11.0))  # what the flag is for


def test_torch_compile_rows_that_replay_cuda_graphs_say_their_outputs_live_until_the_next_call():
    """compare.discover.compiled flags the modes whose compiled code replays CUDA graphs (max-autotune,
    reduce-overhead), and only those: the worker copies what it keeps of such a row's outputs. Nothing is compiled
    here (torch.compile compiles on the first call)."""
    from compare import discover

    op = discover.load_op("matmul")
    assert getattr(discover.compiled(op, "max-autotune"), "lab_outputs_until_next_call", False)
    assert getattr(discover.compiled(op, "reduce-overhead"), "lab_outputs_until_next_call", False)
    assert not getattr(discover.compiled(op, "default"), "lab_outputs_until_next_call", False)
    assert not getattr(discover.compiled(op, "max-autotune-no-cudagraphs"), "lab_outputs_until_next_call", False)


def test_a_finished_row_s_worker_exits_only_while_no_other_row_holds_the_gpu_alone(monkeypatch):
    """With rows checked at once, a row that ends while another is timing closes its worker (its teardown destroys a
    CUDA context: up to seconds) only once that timing's section alone is over, as a shared section."""
    import threading
    import time

    from compare import discover, runner
    from compare.results import RowOutcome, RowStatus, Status

    op = discover.load_op("gelu")
    timing_row, short_row = [i for i in discover.implementations(op) if i.name in ("cuda:vec", "torch:eager")]
    timing, log = threading.Event(), []

    class Pool:
        starts, start_s = 1, 0.0

        def __init__(self):
            self.gate = runner._gate

        def close(self):
            log.append(("closed", self.gate._exclusive, self.gate._shared))

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.close()

    def run_row(pool, op, impl, options, timed):
        if impl is timing_row:
            with runner._gate.exclusive():
                timing.set()
                time.sleep(0.3)
                log.append(("timing ends",))
        else:
            assert timing.wait(10)
        return RowOutcome(RowStatus(impl.name, Status.OK))

    monkeypatch.setattr(runner, "_pool", lambda options: Pool())
    monkeypatch.setattr(runner, "run_row", run_row)
    outcomes, *_ = runner._run_rows_at_once(op, [timing_row, short_row], runner.Options(progress=False,
                                                                                     check_rows=2), [])
    assert set(outcomes) == {timing_row.name, short_row.name}
    assert log[0] == ("timing ends",), log
    assert log[1:] == [("closed", False, 1)] * 2, log


@pytest.mark.gpu
def test_a_torch_compile_row_replaying_cuda_graphs_is_checked_and_timed_on_the_gpu(monkeypatch):
    """A row of torch.compile with mode="reduce-overhead" (CUDA graphs, no autotuning: quick) through the worker's
    check case and timed cell: no read of an output after the next call rewrote it (torch raises on one), and the
    kept outputs are the answers of their own input sets."""
    from compare import discover, worker

    fn = torch.compile(lambda x: x * 2.0 + 1.0, mode="reduce-overhead", dynamic=False)
    fn.lab_outputs_until_next_call = discover._mode_uses_cuda_graphs("reduce-overhead")
    sets = [(torch.randn(1 << 20, device="cuda"),) for _ in range(3)]
    got = worker.call_case(sets[0], sets[1], sets[2], may_refuse=False, fn=fn)
    assert torch.equal(got.a, sets[1][0] * 2.0 + 1.0) and torch.equal(got.b, sets[2][0] * 2.0 + 1.0)
    monkeypatch.setitem(worker._row, "fn", fn)
    timed = worker.time_cell(sets, "torch:compile-reduce-overhead", "float32", "1M", nbytes=8 << 20, flops=0,
                             graph=False, profile_check=False)
    assert timed.timing.median_ms > 0
    for kept, index in ((timed.first, timed.first_set), (timed.last, timed.last_set)):
        assert torch.equal(kept, sets[index][0] * 2.0 + 1.0)


def test_a_row_that_autotunes_meets_each_dtype_and_shape_first_with_the_gpu_alone(monkeypatch):
    # Triton's autotuner times its candidate configurations on the first call at a key and keeps the fastest for
    # every later call, the timed ones too: beside other rows' checks it would time the contention instead.
    from compare import check, discover, runner, schedule

    op = discover.load_op("attention")
    timed = [tuple(s) for s in op.bench_shapes[:2]]
    rows = {i.name: i for i in discover.implementations(op)}
    rows["torch:compile-max-autotune"] = discover.Impl(op.name, "torch", "compile-max-autotune", None)  # opt-in mode
    # A Triton row keeps the choices made at shapes no timed cell uses apart (compare.worker.tuned_apart), and
    # torch.compile compiles a graph of its own kernels for each shape (inductor's kernels time their candidates on
    # their first call): their first calls there need not have the GPU alone. max-autotune has every one alone.
    for name, tunes, everywhere in (("triton:tuned", True, False), ("torch:compile-max-autotune", True, True),
                                    ("cuda:flash2", False, False), ("torch:eager", False, False),
                                    ("torch:compile", True, False)):
        impl = rows[name]
        cases = schedule.check_cases(op, name, list(op.dtypes), True, timed)
        alone = runner.checked_alone(impl, cases)
        firsts = {(c.dtype, c.shape) for c in cases if everywhere or c.shape in timed}
        assert firsts and sum(alone) == (len(firsts) if tunes else 0), name
        assert all(c.timed_shape == (c.shape in timed) for c in cases)
        assert {c.shape for c in cases} - set(timed), "the op's own check shapes, untimed"
        if tunes:  # the first case of each (dtype, shape), which is the first call there
            seen = set()
            for case, by_itself in zip(cases, alone):
                first = (case.dtype, case.shape) not in seen
                assert by_itself == (first and (everywhere or case.shape in timed)), (name, case)
                seen.add((case.dtype, case.shape))

    # And such a case does run under the exclusive gate, never beside a shared one.
    gate, held = runner._GpuGate(), []
    monkeypatch.setattr(runner, "_gate", gate)

    def case_recording_the_gate(pool, op, impl, case, device, seconds, inputs=None, compiled_s=0.0):
        held.append(gate._exclusive)
        result = check.failed_result(op, impl.name, case, "ok", "")
        result.warmup_s = compiled_s + 1.0
        return result

    # A Triton row's first call at a shape is made beside the others first, its autotuning untimed
    # (compare.worker.compile_case); the case then has the GPU alone where a choice is left to time, and only there.
    choice_left, compiled = [True, False], []

    def compiled_beside_others(pool, op, impl, case, device, seconds):
        compiled.append(gate._exclusive)
        return "the case's inputs", choice_left.pop(0), 2.0

    monkeypatch.setattr(runner, "_check_case", case_recording_the_gate)
    monkeypatch.setattr(runner, "_compiled_beside_others", compiled_beside_others)
    gelu, case = _one_case()
    seconds = {}
    first = runner._check(None, gelu, _Row(), case, "cpu", seconds, alone=True)
    runner._check(None, gelu, _Row(), case, "cpu", seconds, alone=True)
    runner._check(None, gelu, _Row(), case, "cpu", seconds)
    assert compiled == [False, False] and held == [True, False, False]
    assert first.warmup_s == 3.0  # the first call's seconds count in the case's warm-up (Triton's first calls)
    assert "checks/first calls at a shape, alone (autotuning)" in seconds
    # torch.compile's first call is compiled beside the others too (its inductor kernels' timing left to the case);
    # max-autotune, whose compilation benchmarks, has it alone at once.
    choice_left.append(True)
    held.clear()
    runner._check(None, gelu, _CompileRow("compile"), case, "cpu", {}, alone=True)
    assert held == [True] and compiled == [False] * 3
    held.clear()
    runner._check(None, gelu, _CompileRow("compile-max-autotune"), case, "cpu", {}, alone=True)
    assert held == [True] and len(compiled) == 3
    # One row at a time, every case has the GPU alone: no phase of its own.
    monkeypatch.setattr(runner, "_gate", runner._NoGate())
    serial = {}
    runner._check(None, gelu, _Row(), case, "cpu", serial, alone=True)
    assert not any("alone" in phase for phase in serial)


def test_the_profilers_start_up_runs_beside_other_rows_checks_and_the_profiled_calls_alone(monkeypatch):
    """The kernel accounting in two worker calls: the profiler's start-up (seconds of the worker's host work, no
    kernel) under the shared gate, so rows checked at once go on beside it, then the profiled calls under the
    exclusive one, whose kernels' GPU times are reported."""
    import torch

    from compare import discover, runner
    from compare.results import RowOutcome, RowStatus, Status

    gate, held = runner._GpuGate(), []
    monkeypatch.setattr(runner, "_gate", gate)
    op = discover.load_op("gelu")
    impl = next(i for i in discover.implementations(op) if i.name == "cuda:vec")

    class Pool:
        def call(self, name, *args):
            held.append((name, "exclusive" if gate._exclusive else "shared" if gate._shared else "none"))
            if name == "kernels_launched":
                return [{"timing_stream": 7, "activities": [{"name": "void gelu_vec_kernel<float>(float const*)",
                                                             "stream": 7, "us": 3.0}]} for _ in args[0]]
            return None

    out = RowOutcome(RowStatus(impl.name, Status.OK))
    runner._account_kernels(Pool(), op, impl, [torch.float32], "cpu", [(1024,)], 0, out)
    assert held == [("start_profiler", "shared"), ("kernels_launched", "exclusive")]
    assert out.status.status == Status.OK and [k.kernels for k in out.kernels] == [["gelu_vec_kernel"]], out


@pytest.mark.gpu
def test_rows_checked_at_once_make_the_inputs_they_hand_over_on_threads_of_their_own():
    """compare.isolate.handed_over from several threads at once, as rows checked side by side make their inputs:
    torch lets one thread at a time allocate into a memory pool, and raises for a second one."""
    import threading

    from compare import isolate

    errors, start = [], threading.Barrier(4)

    def make_inputs():
        try:
            start.wait()
            for _ in range(50):
                with isolate.handed_over(torch.device("cuda")):
                    torch.empty(1 << 20, device="cuda").fill_(1.0)
        except Exception as exc:  # noqa: BLE001 (the test reports whatever a thread raised)
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=make_inputs) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]


def test_a_worker_is_sent_nothing_while_another_thread_makes_inputs_in_the_handover_pool():
    """Sending CUDA tensors shares their allocations (CUDA IPC); the parent's sends wait for handed_over's lock, so
    they never overlap another thread allocating into the pool (compare.isolate.Worker._send says why)."""
    import threading

    from compare import isolate

    class Pipe:
        def __init__(self):
            self.sent = threading.Event()

        def send(self, message):
            self.sent.set()

    worker = isolate.Worker()
    worker.conn = Pipe()
    with isolate._handover_lock:
        sender = threading.Thread(target=worker._send, args=(("_nbytes", ()),))
        sender.start()
        assert not worker.conn.sent.wait(0.3), "sent while another thread held the handover pool"
    assert worker.conn.sent.wait(5)
    sender.join()


@pytest.mark.gpu
def test_tensors_from_the_handover_pool_go_to_workers_while_other_threads_fill_the_pool():
    """What rows checked side by side do at once: threads making inputs in the handover pool while others hand such
    inputs to their workers. The parent must neither crash nor raise."""
    import threading

    from compare import isolate

    errors, start, device = [], threading.Barrier(6), torch.device("cuda")

    def make_inputs():
        try:
            start.wait()
            for _ in range(100):
                with isolate.handed_over(device):
                    torch.randn(1 << 20, device=device)
        except Exception as exc:  # noqa: BLE001 (the test reports whatever a thread raised)
            errors.append(f"{type(exc).__name__}: {exc}")

    def hand_over():
        worker = isolate.Worker()
        try:
            start.wait()
            for _ in range(30):
                with isolate.handed_over(device):
                    inputs = (torch.randn(1 << 18, device=device), torch.randn(1 << 16, device=device))
                assert worker.call("_nbytes", inputs) == 4 << 18  # the larger storage's bytes
        except Exception as exc:  # noqa: BLE001
            errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            worker.close()

    threads = [threading.Thread(target=make_inputs) for _ in range(3)] + [
        threading.Thread(target=hand_over) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]


def test_the_ipc_limbo_is_occupied_once_per_device_and_a_torch_without_the_way_in_only_warns(monkeypatch):
    """compare.isolate._keep_ipc_limbo_occupied shares one block per device, once; where this torch's storages
    cannot be shared that way, a warning, not a failed run."""
    from compare import isolate

    shared = []

    class Storage:
        def _share_cuda_(self):
            shared.append(1)

    class Block:
        def untyped_storage(self):
            return Storage()

    monkeypatch.setattr(isolate, "_limbo_occupied", set())
    monkeypatch.setattr(torch, "empty", lambda *args, **kwargs: Block())
    isolate._keep_ipc_limbo_occupied("gpu-a")
    isolate._keep_ipc_limbo_occupied("gpu-a")
    isolate._keep_ipc_limbo_occupied("gpu-b")
    assert len(shared) == 2

    class Unshareable:
        def untyped_storage(self):
            return object()

    monkeypatch.setattr(torch, "empty", lambda *args, **kwargs: Unshareable())
    with pytest.warns(UserWarning, match="IPC limbo"):
        isolate._keep_ipc_limbo_occupied("gpu-c")


class _TimingPool:
    """A worker that answers time_cell with the op's true outputs (wrong where told to), and counts its calls."""

    def __init__(self, op, wrong_at=None, modifies_input_at=None):
        self.op, self.wrong_at, self.modifies_input_at, self.timed = op, wrong_at, modifies_input_at, []

    def call(self, name, *args, timeout_s=None):
        from compare import check, timing, worker

        if name != "time_cell":
            return None
        sets, impl, dtype, shape = args[:4]
        self.timed.append(shape)
        out = check.reference(self.op, sets[0]).to(sets[0][0].dtype)
        if shape == self.wrong_at:
            out[0] += 1
        if shape == self.modifies_input_at:
            sets[0][0][0] = 0.5
        t = timing.Timing(impl, dtype, shape, 1.0, 1.0, 1.0, 0, 0, 0.0, 0.0)
        return worker.TimedOutputs(t, out, 0, out.clone(), 0)


def _time_gelu_row(monkeypatch, pool_args, section_bytes):
    from compare import discover, runner
    from compare.results import RowOutcome, RowStatus, Status

    sections = []

    class Gate:
        shared = runner._NoGate.shared

        @contextlib.contextmanager
        def exclusive(self):
            sections.append(len(pool.timed))
            yield 0.0

    op = discover.load_op("gelu")
    pool = _TimingPool(op, **pool_args)
    monkeypatch.setattr(runner, "_gate", Gate())
    monkeypatch.setattr(runner.timing, "l2_bytes", lambda device: 1 << 20)
    monkeypatch.setattr(runner, "TIMED_SECTION_BYTES", section_bytes)
    impl = next(i for i in discover.implementations(op) if i.name == "torch:eager")
    out = RowOutcome(RowStatus(impl.name, Status.OK))
    shapes = [(1 << 10,), (1 << 11,), (1 << 12,), (1 << 13,), (1 << 14,)]
    runner._time_row(pool, op, impl, [torch.float32], torch.device("cpu"), runner.Options(progress=False), shapes,
                     out)
    return op, pool, sections, out


def _first_three_cells_bytes():
    """Room for the first three cells of _time_gelu_row (twice their bytes moved), not four; the fourth and the
    fifth (each twice the one before) do not fit together."""
    from compare import discover

    op = discover.load_op("gelu")
    return 2 * sum(op.bytes_moved((n,), torch.float32) for n in (1 << 10, 1 << 11, 1 << 12))


def test_a_rows_timed_cells_share_sections_alone_and_each_cells_outputs_are_judged_after_its_section(monkeypatch):
    # Sections of cells 1-3, 4 and 5.
    op, pool, sections, out = _time_gelu_row(monkeypatch, {}, _first_three_cells_bytes())
    assert sections == [0, 3, 4] and len(pool.timed) == 5
    assert out.status.status == "ok" and len(out.timings) == 5
    assert len(out.checks) == 10 and all(c.ok and c.inputs == "timed call, " + w for c, w in
                                         zip(out.checks, ["first", "last"] * 5))
    # A budget smaller than any cell: a section each, as cells were timed before sections held several.
    _, pool, sections, out = _time_gelu_row(monkeypatch, {}, 1)
    assert sections == [0, 1, 2, 3, 4] and len(out.timings) == 5


def test_a_wrong_timed_output_ends_the_row_at_its_cell_once_its_section_is_over(monkeypatch):
    op, pool, sections, out = _time_gelu_row(monkeypatch, {"wrong_at": str(1 << 11)}, _first_three_cells_bytes())
    # Cells 1-3 shared a section and were all timed; the second one's outputs failed: the third is not reported,
    # and no later section was started.
    assert sections == [0] and pool.timed == ["1024", "2048", "4096"]
    assert out.status.status == "FAIL" and "2048" in out.status.message
    assert len(out.timings) == 2 and [t.shape for t in out.timings] == ["1024", "2048"]


def test_a_timed_call_that_modifies_its_input_fails_although_its_set_is_gone_when_judged(monkeypatch):
    _, pool, sections, out = _time_gelu_row(monkeypatch, {"modifies_input_at": str(1 << 12)},
                                              _first_three_cells_bytes())
    assert out.status.status == "FAIL" and "inputs of the timed calls were modified" in out.status.message
    assert [t.shape for t in out.timings] == ["1024", "2048", "4096"]


def test_cached_memory_given_back_during_a_row_s_timing_never_goes_beside_another_row_s_timing(monkeypatch):
    """Freeing GPU memory is the driver's work on the GPU: with rows checked at once, every cache a row's timing
    empties (after a large section; before judging again alone where judging ran out of memory beside other rows)
    is emptied inside a section of the gate, never between sections, where another row's timing may be running."""
    from compare import check, discover, runner
    from compare.results import RowOutcome, RowStatus, Status

    gate, emptied = runner._GpuGate(), []
    monkeypatch.setattr(runner, "_gate", gate)
    monkeypatch.setattr(runner, "_empty_cache", lambda: emptied.append((gate._exclusive, gate._shared)))
    monkeypatch.setattr(runner, "RELEASE_AFTER_BYTES", 1)  # every section large
    monkeypatch.setattr(runner.timing, "l2_bytes", lambda device: 1 << 20)
    judge, ran_out = check.judge_timed_output, []

    def judge_out_of_memory_once(*args, **kwargs):
        if not ran_out:
            ran_out.append(1)
            raise torch.OutOfMemoryError("beside other rows")
        return judge(*args, **kwargs)

    monkeypatch.setattr(runner.check, "judge_timed_output", judge_out_of_memory_once)
    op = discover.load_op("gelu")
    impl = next(i for i in discover.implementations(op) if i.name == "torch:eager")
    out = RowOutcome(RowStatus(impl.name, Status.OK))
    runner._time_row(_TimingPool(op), op, impl, [torch.float32], torch.device("cpu"), runner.Options(progress=False),
                     [(1 << 10,), (1 << 11,)], out)
    assert out.status.status == Status.OK, out.status
    assert ran_out and len(emptied) >= 3, emptied
    assert all(exclusive or shared for exclusive, shared in emptied), emptied
