"""One op, end to end, on the parent side: count, build, measure the ceilings, then drive each implementation's
row through compare.schedule in a worker process of its own (compare.worker, through compare.isolate), judging
every output here (compare.check). Nothing in this process imports or loads a row's code: rows are found by reading
their sources, CUDA sources are built in a worker, and the inputs a row gets are made here, so the reference and
the comparison are out of every row's reach.

Each row's failure is recorded on that row and the run goes on; the caller decides the exit status from
``OpResult.failed_rows()``."""
from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from concurrent.futures import ThreadPoolExecutor
import torch

from . import accounting, caches, callgraph, check, count, discover, env, isolate, ladder, schedule, timing
from .isolate import DEFAULT_ROW_TIMEOUT_S, RowFailure
from .results import (PHASE_PART_LINE, CudaKernelBuild, JitRecord, LadderStep, OpResult, RowOutcome, RowStatus,
                      Status, TritonKernelBuild)
from .progress import Progress, Silent
from .spec import PEER, Op


@dataclasses.dataclass
class Options:
    dtypes: list[str] | None = None  # None: the op's dtypes
    impls: list[str] | None = None  # patterns, see discover.select
    quick: bool = False
    sizes: list[tuple[int, ...]] | None = None  # override the op's bench shapes
    seed: int = 0
    time: bool = True
    capture: bool = True
    progress: bool = True
    isolate: bool = True  # run rows in worker processes (see isolate.py)
    graph: bool = False  # also time CUDA-graph replays (launch overhead removed)
    profile_check: bool = False  # also measure kernel time with torch.profiler and compare
    row_timeout_s: float = DEFAULT_ROW_TIMEOUT_S  # per step without progress (see isolate)
    # Rows whose checks run at once, each in its own worker; timing and kernel accounting still have the GPU alone
    # (_GpuGate). 1: one row after another.
    check_rows: int = 1
    label: str = ""  # put before each line this run prints: which GPU's lane it is (compare.fanout)


# The progress line of the run in this process (compare.progress): silent off a terminal and in the lanes of a
# multi-GPU run, whose lines say which lane they come from instead.
_display: Progress = Silent()
_row_display: Progress = _display  # where a row's phases show: the same line, or none when rows run at once


class _GpuGate:
    """With several rows at once (Options.check_rows > 1), their checks share the GPU, while a timed cell and the
    kernel accounting have it alone: an exclusive section waits for the shared ones in flight to end and lets no new
    one start (a waiting timing goes before new checks), so no timing ever overlaps another row's work."""

    def __init__(self):
        self._cond = threading.Condition()
        self._shared = 0
        self._exclusive = False
        self._waiting = 0
        # Wall seconds, for the phase table (GATE_LINES): exclusive sections never overlap, so the first is a part
        # of the run's wall time; the waits are summed over the threads that waited
        self.seconds = dict.fromkeys(GATE_LINES, 0.0)

    @contextlib.contextmanager
    def shared(self):
        start = time.perf_counter()
        with self._cond:
            self._cond.wait_for(lambda: not self._exclusive and not self._waiting)
            self._shared += 1
            self.seconds["checks waited"] += time.perf_counter() - start
        try:
            yield
        finally:
            with self._cond:
                self._shared -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self):
        start = time.perf_counter()
        with self._cond:
            self._waiting += 1
            self._cond.wait_for(lambda: not self._exclusive and not self._shared)
            self._waiting -= 1
            self._exclusive = True
            held = time.perf_counter()
            self.seconds["alone waited"] += held - start
        try:
            yield held - start  # the seconds it waited
        finally:
            with self._cond:
                self._exclusive = False
                self.seconds["held alone"] += time.perf_counter() - held
                self._cond.notify_all()


# The gate's own lines of the phase table (parts, outside its total; compare.report.GATE_NOTE says what they are).
GATE_LINES = {
    "held alone": "of the rows' phases: the GPU held alone by one row (wall)",
    "alone waited": "of the rows' phases: sections alone waiting their turn",
    "checks waited": "of the rows' phases: checks waiting for sections alone",
}


class _NoGate:
    """One row at a time: nothing to share."""

    @contextlib.contextmanager
    def shared(self):
        yield

    @contextlib.contextmanager
    def exclusive(self):
        yield 0.0  # no wait


_gate: _GpuGate | _NoGate = _NoGate()


def _say(options: Options, text: str) -> None:
    if options.progress:
        _display.clear()
        print(options.label + text if options.label else text, flush=True)
        _display.redraw()


def _dtypes(op: Op, options: Options) -> list[torch.dtype]:
    dtypes = list(op.dtypes)
    if options.dtypes:
        wanted = {getattr(torch, d) for d in options.dtypes}
        dtypes = [d for d in dtypes if d in wanted]
    if not env.has_gpu():
        # The interpreter's bf16 arithmetic is not trustworthy (numpy has no bf16): it checks every other dtype
        # (fp8 operands it converts exactly).
        dtypes = [d for d in dtypes if d != torch.bfloat16]
    return dtypes


def _pool(options: Options):
    return isolate.Worker(options.row_timeout_s) if options.isolate else isolate.InProcess()


def unrunnable(op: Op, impl, gpu: bool, capability) -> RowStatus | None:
    """Why a row cannot run on this machine, as the status it is reported with, or None."""
    # A peer whose package is missing is skipped, saying what to install, on any machine: a GPU would not help.
    if why := op.unavailable_reason(impl.name, capability):
        return RowStatus(impl.name, Status.SKIPPED, why)
    if not gpu and impl.needs_gpu:
        return RowStatus(impl.name, Status.NEEDS_GPU)
    if not gpu and impl.backend == "triton" and op.interpreter_unfit:
        # the interpreter would judge its own emulation, not the row
        return RowStatus(impl.name, Status.SKIPPED, f"not checked without a GPU: {op.interpreter_unfit}")
    return None


def run_op(op: Op, options: Options, impls: list[discover.Impl] | None = None) -> OpResult:
    """Every row of the op (or the given ones: tests plant rows from other files) through the schedule."""
    global _display
    result = OpResult(op.name, op.summary, op.roofline, {}, seed=options.seed,
                      ceiling_rows=list(op.ceiling_rows), counting=op.counting)
    clock = _PhaseClock(result.phases)
    with clock("environment (GPU context, versions)"):  # the parent's first CUDA call creates its context
        result.env = env.describe()
    impls = discover.select(discover.implementations(op), options.impls) if impls is None else impls
    if peers := peer_versions(op, impls):
        result.env["peers"] = peers
    gpu = env.has_gpu()
    status: dict[str, RowStatus] = {i.name: RowStatus(i.name, Status.OK) for i in impls}
    global _row_display
    _display = Progress() if options.progress and not options.label else Silent()
    _row_display = _display
    _display.start_op(op.name, len(impls))

    with clock("count lines"):
        for impl in impls:
            if impl.backend == "cuda":
                result.loc.append(count.count_cuda(impl.source, impl.variant, impl.name))
            elif impl.backend == "triton":
                result.loc.append(count.count_triton(impl.source, impl.variant, impl.name))
        _read_ladder(op, impls, result)
    # The workers of the builds and of the first row start now: a launched worker imports torch and the harness
    # (seconds) and touches no GPU until its first call, so those seconds pass while the ceilings are measured.
    sources = _cuda_sources(impls)
    build_pools = [_pool(options) for _ in sources]
    upcoming = [_pool(options)]  # the workers of the rows to come, in order, each started before its row's turn
    for pool in build_pools + (upcoming if options.check_rows == 1 else []):
        pool.launch()
    # The ceilings first, in a worker that has loaded no row's code: one row at a time, the first row's, which has
    # not loaded it yet, so that its start-up (imports, CUDA context) is paid once; it then gives back the memory the
    # copies held before the row is loaded.
    timed = schedule.timed_shapes(op, options.quick, options.sizes) if options.time and gpu else []
    timed_cells = {(schedule.dtype_name(d), op.describe_shape(s)) for d in _dtypes(op, options) for s in timed}
    result.ladder_cells = [c for c in ((schedule.dtype_name(d), op.describe_shape(s)) for d, s in op.ladder())
                           if c in timed_cells]
    if timed:
        _display.phase("ceilings")
        with clock("ceilings"):
            if options.check_rows == 1:
                _measure_ceilings(upcoming[0], op, options, timed, result)
                upcoming[0].call("release_cached_memory")
            else:
                with _pool(options) as pool:
                    _measure_ceilings(pool, op, options, timed, result)

    _display.phase("build")
    with clock("build (CUDA)"):
        _build_cuda(op, sources, build_pools, options, gpu, status, result)
    capability = torch.cuda.get_device_capability() if gpu else None
    for impl in impls:
        if status[impl.name].status == Status.OK and (unfit := unrunnable(op, impl, gpu, capability)):
            status[impl.name] = unfit

    starts, start_s = 0, 0.0
    runnable = [impl for impl in impls if status[impl.name].status == Status.OK]
    gate_seconds = {}
    if options.check_rows > 1 and len(runnable) > 1:
        outcomes, starts, start_s, gate_seconds = _run_rows_at_once(op, runnable, options, timed)
        for impl in runnable:
            status[impl.name] = outcomes[impl.name].status
            result.add(outcomes[impl.name])
        runnable = []
    # One row at a time, a row's kernel accounting is left open when its checks after timing are done: the
    # profiler's start-up in its worker (seconds of host work, launching nothing) then runs beside the next row's
    # load and checks, and the profiled calls follow right before the next row's timing (or once no row is left),
    # with the GPU alone as ever; only then is the row's outcome recorded.
    pending: list = []  # (impl, pool, outcome, finish) of the row whose kernel accounting is still open
    counted = [starts, start_s]

    def record(impl, pool, outcome, named: bool) -> None:
        counted[0], counted[1] = counted[0] + pool.starts, counted[1] + pool.start_s
        status[impl.name] = outcome.status
        result.add(outcome)
        prefix = f"    {impl.name}: " if named else "    "
        _say(options, prefix + ", ".join(f"{phase} {seconds:.1f} s" for phase, seconds in outcome.seconds.items()))
        if outcome.status.status != Status.OK:
            _say(options, f"    {outcome.status.status}: {outcome.status.message.splitlines()[0]}")

    def settle() -> None:  # right before a row's timing, and at the end
        with clock(WAITING_FOR_EXITS):  # no worker's teardown beside the profiled calls or the timing that follow
            isolate.wait_for_exits()
        while pending:
            impl, pool, outcome, finish = pending.pop(0)
            try:
                finish()
            finally:
                with clock(WAITING_FOR_EXITS):
                    pool.close()
            record(impl, pool, outcome, named=True)

    try:
        for n, impl in enumerate(runnable):
            _display.start_row(n + 1, impl.name)
            _say(options, f"  {impl.name}")
            pool = upcoming.pop(0)
            # The next rows' processes start while this row runs, each importing (and, where it is safe, loading)
            # its row: torch.compile's imports take longer than a short row before it lasts.
            while len(upcoming) < ROWS_STARTED_AHEAD and n + 1 + len(upcoming) < len(runnable):
                upcoming.append(_pool(options))
                upcoming[-1].launch(_load_ahead(runnable[n + len(upcoming)]))
            later: list = []
            try:  # a fresh process per row: no row can reach another's
                outcome = run_row(pool, op, impl, options, timed, before_timing=settle, later=later)
            except BaseException:
                pool.close()
                raise
            settle()  # a row before that this one did not time after (it failed, or nothing is timed)
            if later:
                pending.append((impl, pool, outcome, later[0]))
            else:
                pool.close(wait=False)  # its exit goes on beside the next row's load and checks
                record(impl, pool, outcome, named=False)
        settle()
    finally:
        for pool in [p for _, p, _, _ in pending] + upcoming:  # upcoming: the first row's where none was runnable
            pool.close()
        isolate.wait_for_exits()
    starts, start_s = counted
    _display.clear()
    _sum_phases(result)
    result.phases.update({GATE_LINES[k]: round(v, 2) for k, v in gate_seconds.items()})
    result.isolation = {"enabled": options.isolate, "worker_starts": starts, "worker_start_s": round(start_s, 3),
                        "worker_per_row": True, "rows_checked_at_once": options.check_rows,
                        "rows_whose_workers_start_ahead": ROWS_STARTED_AHEAD if options.check_rows == 1 else 0}
    relate_to_ceilings(result, status)
    _refuse_implausible(result, status)
    relate_to_ceilings(result, status)  # a ceiling row whose timing was just refused as implausible sets no ceiling
    result.rows = [status[i.name] for i in impls]
    return result


# The phase-table line of the parent's waits for finished rows' workers to exit (their interpreter's teardown, their
# CUDA context destroyed), before a row's timing and at the end: time no row's phase holds.
WAITING_FOR_EXITS = "waiting for finished rows' workers to exit"

# One row at a time, the workers of this many rows after the running one are already started: each holds torch and
# the harness imported (host memory, no GPU memory until its row's first call).
ROWS_STARTED_AHEAD = 2


def _load_ahead(impl: discover.Impl) -> tuple[str, tuple] | None:
    """The call a row's worker makes as soon as it has started, during the row before: loading a Triton or torch
    row imports its modules and nothing more (torch.compile's imports take seconds; no GPU is touched until the row
    is called). A CUDA row's load asks the GPU for its architecture, and another project's package may do anything
    when imported: those load when their row begins, as every row did before; a CUDA row's worker imports what its
    kernel accounting's profiler would (worker.import_profiler_modules), which touches no GPU either."""
    if impl.backend in ("triton", "torch"):
        return ("load_row", (impl,))
    return ("import_profiler_modules", ()) if impl.backend == "cuda" else None


def peer_versions(op: Op, impls) -> dict[str, str | None]:
    """The installed version of each peer package among the rows (None: installed without package metadata), by
    distribution name, so the results say which release of another project was measured. Read from the package
    metadata: nothing of the package is imported here."""
    peers = [op.peers[i.variant] for i in impls if i.backend == PEER and i.variant in op.peers]
    return {p.pip: p.version() for p in peers if p.installed()}


def _run_rows_at_once(op: Op, runnable, options: Options, timed) -> tuple[dict, int, float, dict]:
    """The rows, up to options.check_rows at once, each in a worker of its own and driven from a thread of this
    process; their outcomes by row name, the worker starts and their seconds, and the gate's seconds."""
    global _gate, _row_display
    gate = _gate = _GpuGate()
    _row_display = Silent()
    done, lock = [0], threading.Lock()

    def one(impl):
        pool = _pool(options)
        try:
            outcome = run_row(pool, op, impl, options, timed)
        finally:
            # The worker's exit (its interpreter's teardown, its CUDA context destroyed: up to seconds) as a shared
            # section, never beside another row's timing or profiled calls, as wait_for_exits keeps it from them
            # one row at a time.
            with gate.shared():
                pool.close()
        with lock:
            done[0] += 1
            _display.start_row(done[0], f"{done[0]} of {len(runnable)} rows done")
            _say(options, f"  {impl.name}: " + ", ".join(f"{phase} {seconds:.1f} s"
                                                        for phase, seconds in outcome.seconds.items()))
            if outcome.status.status != Status.OK:
                _say(options, f"    {outcome.status.status}: {outcome.status.message.splitlines()[0]}")
        return impl, outcome, pool.starts, pool.start_s

    try:
        with ThreadPoolExecutor(max_workers=options.check_rows) as threads:
            finished = list(threads.map(one, runnable))
    finally:
        _gate, _row_display = _NoGate(), _display
    return ({impl.name: outcome for impl, outcome, _, _ in finished}, sum(f[2] for f in finished),
            sum(f[3] for f in finished), gate.seconds)


def _sum_phases(result: OpResult) -> None:
    """The op's time per phase: its own (counting, ceilings, build) and the rows' (summed over rows), with the parts
    of the checks that were first calls: a Triton row's JIT compilation and autotuning, torch.compile's
    compilation, at each shape and dtype."""
    parts: dict[str, dict[str, float]] = {}  # row phase -> its parts' lines
    for seconds in result.row_seconds.values():
        for phase, s in seconds.items():
            # "<phase>/<part>": a part of a row phase (the checks' in _check_case, the timing's in _time_row)
            if "/" in phase:
                parent, part = phase.split("/", 1)
                label = PHASE_PART_LINE.format(phase=parent, part=part)
                lines = parts.setdefault(parent, {})
                lines[label] = round(lines.get(label, 0.0) + s, 2)
            else:
                result.phases[f"rows: {phase}"] = round(result.phases.get(f"rows: {phase}", 0.0) + s, 2)
    for part, prefix in (("Triton first calls (JIT, autotuning)", "triton:"),
                         ("torch.compile first calls (compilation)", "torch:compile")):
        first_calls = sum(c.warmup_s or 0.0 for c in result.checks if c.impl.startswith(prefix))
        if first_calls:
            parts.setdefault("checks", {})[PHASE_PART_LINE.format(phase="checks", part=part)] = round(first_calls, 2)
    # Each phase's parts right after its line, whatever order the rows' phases came in.
    phases = []
    for label, s in result.phases.items():
        phases.append((label, s))
        if label.startswith("rows: "):
            phases += list(parts.pop(label[len("rows: "):], {}).items())
    result.phases.clear()
    result.phases.update(phases)
    for lines in parts.values():  # parts of a phase no row recorded as a whole (none today)
        result.phases.update(lines)


def _read_ladder(op: Op, impls, result: OpResult) -> None:
    """The steps of the kernel files the selected rows come from, in their maps' order (compare.ladder)."""
    for backend in ("cuda", "triton"):
        sources = {i.source for i in impls if i.backend == backend and i.source is not None}
        for source in sorted(sources):
            for step in ladder.version_map(source):
                result.ladder.append(LadderStep(backend, step.number, f"{backend}:{step.variant}", step.change,
                                                f"{env.relpath(source)}:{step.line}"))


def _cuda_sources(impls) -> dict:
    """The .cu files the CUDA rows among impls come from, (source, library) -> its rows."""
    sources: dict = {}
    for impl in impls:
        if impl.backend == "cuda":
            sources.setdefault((impl.source, impl.library), []).append(impl)
    return sources


def _build_cuda(op: Op, sources: dict, pools: list, options: Options, gpu: bool, status: dict,
                result: OpResult) -> None:
    """Build each .cu of sources (_cuda_sources) in a worker of its own, pools[i] for the i-th (loading the module
    runs its static initializers, row code, which must not run here)."""
    for ((source, library), rows), worker_pool in zip(sources.items(), pools):
        name = library.removeprefix("lab_")
        try:
            with worker_pool as pool:
                if options.progress:
                    _say(options, f"  building {env.relpath(source)} ...")
                built = pool.call("build_source", name, str(source), list(op.cuda_flags))
        except RowFailure as failure:
            message = failure.message.split(": ", 1)[-1] if failure.message.startswith("BuildError") else failure.message
            kind = Status.BUILD_FAILED if failure.message.startswith("BuildError") else failure.status
            for impl in rows:
                status[impl.name] = RowStatus(impl.name, kind, message)
            print(f"\n{message}\n", flush=True)
            continue
        _say(options, f"  {built.source}: {'built in %.1f s' % built.cold_s if built.built_now else 'cached'}"
                      f" (cold build {built.cold_s:.1f} s, warm load {built.warm_s:.2f} s)")
        for impl in rows:
            mine = set(callgraph.cuda_kernel_names(impl.source, impl.variant))
            for k in built.kernels:
                if k.base in mine:
                    result.build.append(CudaKernelBuild(
                        impl=impl.name, cold_s=built.cold_s, warm_s=built.warm_s, kernel=k.kernel,
                        registers=k.registers, spills=k.spill_bytes, shared_bytes=k.shared_bytes,
                        stack_bytes=k.stack_bytes))
            if not gpu:
                status[impl.name] = RowStatus(impl.name, Status.BUILT_NEEDS_GPU)


def _measure_ceilings(pool, op: Op, options: Options, timed, result: OpResult) -> None:
    """The large-buffer copy bandwidth and, for memory-bound ops, a copy of the same bytes per timed shape and
    dtype. Without the per-shape copies the report still has the large-buffer copy, so a failure there is reported
    and the rows are timed all the same."""
    result.ceilings.copy_gbps = pool.call("measure_copy_bandwidth", timeout_s=300)
    _say(options, f"  copy bandwidth: {result.ceilings.copy_gbps:.0f} GB/s")
    if op.roofline != "memory":
        return
    cells = [(op.bytes_moved(shape, dtype), schedule.dtype_name(dtype), op.describe_shape(shape))
             for dtype in _dtypes(op, options) for shape in timed]
    try:
        result.same_bytes_copies = pool.call("measure_same_bytes_copies", cells, options.graph)
    except RowFailure as failure:
        result.ceilings.same_bytes_copy_error = f"{failure.status}: {failure.message}"
        _say(options, f"  copy of the same bytes per shape: {failure.status}: {failure.message.splitlines()[0]}")
        return
    low = min(result.same_bytes_copies, key=lambda t: t.gbps, default=None)
    if low:
        _say(options, f"  copy of the same bytes per shape: {len(result.same_bytes_copies)} shape/dtype pairs, "
                      f"lowest {low.gbps:.0f} GB/s ({low.dtype} {low.shape})")


class _RowStopped(Exception):
    """The row's worker crashed or timed out: the row ends with that status."""

    def __init__(self, status: RowStatus):
        self.status = status


def run_row(pool, op: Op, impl: discover.Impl, options: Options, timed: list, before_timing=None,
            later: list | None = None) -> RowOutcome:
    """Parent side of one row: the schedule's checks, the torch.compile capture, the timed cells with their outputs
    judged, the kernel accounting, and the checks after timing. before_timing: called right before the row's first
    timed cell. later: where given, the kernel accounting is left to the caller: its profiler start-up is sent
    ahead to the worker, and the call that finishes it (the profiled calls, which need the GPU alone, then the row's
    verdict) is appended to `later`; the worker must stay open until it has run."""
    out = RowOutcome(RowStatus(impl.name, Status.OK))
    gpu = env.has_gpu()
    device = torch.device("cuda" if gpu else "cpu")
    asked = _dtypes(op, options)
    dtypes = [d for d in asked if d not in op.unsupported_dtypes.get(impl.name, ())]
    if not dtypes:
        names = ", ".join(map(schedule.dtype_name, asked)) or "none"
        out.status = RowStatus(impl.name, Status.SKIPPED, f"takes none of the dtypes of this run ({names})")
        return out
    clock = _PhaseClock(out.seconds)
    try:
        with clock("load"), _gate.shared():
            pool.call("load_row", impl)
    except RowFailure as failure:
        out.status = RowStatus(impl.name, failure.status, failure.message)
        return out
    try:
        first_of_dtype = set()
        with clock("checks"):
            cases = schedule.check_cases(op, impl.name, dtypes, gpu, timed, options.seed)
            _row_display.phase("checks", len(cases))
            for case, alone in zip(cases, checked_alone(impl, cases)):
                _row_display.step()
                result = _check(pool, op, impl, case, device, out.seconds, alone)
                out.checks.append(result)
                if case.dtype not in first_of_dtype and impl.backend == "triton" and result.warmup_s is not None:
                    out.jit.append(_first_call(impl, schedule.dtype_name(case.dtype), result.warmup_s))
                first_of_dtype.add(case.dtype)
            if impl.backend == "triton":
                try:
                    with _gate.shared():
                        out.build = [TritonKernelBuild(**r) for r in _call(pool, impl, "triton_resources")]
                except RowFailure as failure:  # the report then lacks its registers; the row stands
                    _say(options, f"    registers and shared memory not read: {failure.message.splitlines()[0]}")
        _judge(out)
        if options.capture and gpu and _compiled_by_torch(impl):
            with clock("capture"), _gate.shared():
                _capture(pool, op, impl, dtypes, device, options, out, timed)
        accounting_due = False
        if options.time and gpu and out.status.status == Status.OK:  # a wrong kernel's speed means nothing
            if before_timing is not None:
                before_timing()
            with clock("timing"):
                _time_row(pool, op, impl, dtypes, device, options, timed, out)
            accounting_due = out.status.status == Status.OK
            if accounting_due and later is None:
                with clock("kernel accounting"):
                    _row_display.phase("kernel accounting")
                    _account_kernels(pool, op, impl, dtypes, device, timed, options.seed, out)
                accounting_due = False
        # Checked again on fresh inputs once it has been called many times: an implementation must not change its
        # answers when warm, nor serve a result cached from earlier inputs.
        with clock("checks"):
            _row_display.phase("checks after timing")
            for case in schedule.recheck_cases(op, impl.name, dtypes, gpu, timed, options.seed):
                out.checks.append(_check(pool, op, impl, case, device, out.seconds))
    except _RowStopped as stopped:
        out.status = stopped.status
        return out
    _judge(out)
    if accounting_due:
        try:  # the worker stays while the next row runs: it keeps no more GPU memory than it needs
            _release_cached_memory(pool, impl)
        except _RowStopped as stopped:
            out.status = stopped.status
            return out
        pool.send_ahead("start_profiler")  # seconds of the worker's host work, while the caller goes on

        def finish_accounting():
            try:
                with clock("kernel accounting"):
                    _account_kernels(pool, op, impl, dtypes, device, timed, options.seed, out)
            except _RowStopped as stopped:
                out.status = stopped.status
            _judge(out)

        later.append(finish_accounting)
    return out


def _first_call(impl, dtype: str, seconds: float) -> JitRecord:
    """A Triton row's first call in a dtype, with the cold one's time where the cache was warm (compare.caches)."""
    import triton

    key = caches.first_call_key(impl.name, dtype, impl.source, triton.__version__, env.gpu_name())
    cold, cold_s = caches.cold_first_call(key, seconds)
    return JitRecord(impl.name, dtype, seconds, cold, cold_s)


class _PhaseClock:
    """with clock("checks"): ... adds the block's wall time to seconds["checks"]."""

    def __init__(self, seconds: dict):
        self.seconds = seconds

    @contextlib.contextmanager
    def __call__(self, phase: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(phase, time.perf_counter() - start)

    def add(self, phase: str, seconds: float) -> None:
        # to the microsecond: a check case's parts add thousands of milliseconds
        self.seconds[phase] = round(self.seconds.get(phase, 0.0) + seconds, 6)


def _call(pool, impl, name: str, *args, context: str = ""):
    """A worker call whose crash or time-out ends the row; an exception in the row's code is returned as such."""
    try:
        value = pool.call(name, *args)
    except RowFailure as failure:
        if failure.status != Status.ERROR:
            raise _RowStopped(RowStatus(impl.name, failure.status, failure.message)) from None
        if not getattr(pool, "lost_context", False):
            raise
        # The row's code raised and left the CUDA context poisoned (an illegal memory access is reported by the
        # next synchronizing call): the worker is gone, and with it the loaded row, so the row ends here.
        lost = RowStatus(impl.name, Status.CRASHED, f"CUDA context lost{context}: {failure.message}")
        raise _RowStopped(lost) from None
    if getattr(pool, "lost_context", False):
        raise _RowStopped(RowStatus(impl.name, Status.CRASHED, f"CUDA context lost{context}"))
    return value


def _tunes_when_first_called(impl) -> bool:
    """Rows whose first call at a shape may benchmark candidate configurations and keep the fastest: Triton's
    autotuner; torch.compile in every mode, whose inductor kernels time their candidate configurations on their first
    call wherever its heuristics leave more than one (CachingAutotuner.autotune_to_one_config: in the default mode,
    reduction kernels among them), and max-autotune's compilation, which benchmarks its candidates.
    Beside other rows' checks, the candidates' timings would measure the contention, and the configuration they pick
    stays for every later call, the timed ones included: such a row's first case at each dtype and shape a timed cell
    uses runs with the GPU alone (checked_alone)."""
    return impl.backend == "triton" or _compiled_by_torch(impl)


def _compiled_by_torch(impl) -> bool:
    return impl.backend == "torch" and impl.variant.startswith("compile")


def _benchmarks_while_compiling(impl) -> bool:
    """torch.compile's max-autotune: its compilation times its candidates, so no part of its first call at a shape
    can be made beside other rows."""
    return _compiled_by_torch(impl) and "max-autotune" in impl.variant


def _compiles_beside_others(impl) -> bool:
    """Rows whose first call at a shape can be made beside other rows' checks with its timing of candidates left
    for the next call, which has the GPU alone (compare.worker.compile_case): Triton's autotuners, and inductor's run
    time tuning in torch.compile's modes but max-autotune, whose compilation itself benchmarks (its first call has the
    GPU alone whole)."""
    return impl.backend == "triton" or (_compiled_by_torch(impl) and not _benchmarks_while_compiling(impl))


def checked_alone(impl, cases: list[schedule.CheckCase]) -> list[bool]:
    """Per case, whether it runs with the GPU alone: a row's first case at each dtype and shape, where the row
    tunes when first called, at a shape some timed cell uses. At the others, what it chooses never reaches a timed
    call, so it may choose beside other rows' checks: a Triton row's autotuners keep those choices apart
    (_tuned_apart), and torch.compile compiles a graph, with kernels of its own, for each shape (dynamic=False:
    compare.discover.compiled). Many of a row's tuning keys are at shapes the checks alone use, and their autotuning
    held every other row back (results/nvidia-h100-80gb-hbm3/timed-sections/README.md, at 0a9b58c). max-autotune
    has every first call alone, as ever."""
    if not _tunes_when_first_called(impl):
        return [False] * len(cases)
    everywhere = _benchmarks_while_compiling(impl)
    seen, alone = set(), []
    for case in cases:
        first = (case.dtype, case.shape) not in seen
        alone.append(first and (case.timed_shape or everywhere))
        seen.add((case.dtype, case.shape))
    return alone


def _tuned_apart(impl, case: schedule.CheckCase) -> bool:
    """Whether the case's calls keep their autotuners' choices apart from those of timed shapes
    (compare.worker.tuned_apart): a Triton row's, at a shape no timed cell of the row uses, where rows are checked
    at once (_check_case asks; one row at a time, every first call has the GPU alone, and a choice made at an
    untimed shape is as good as one made at a timed shape of the same key, so it is kept as ever)."""
    return impl.backend == "triton" and not case.timed_shape


class _OutOfMemory(Exception):
    """A case ran out of GPU memory, in the parent (inputs, judging) or in the row's worker."""


def _check(pool, op: Op, impl, case: schedule.CheckCase, device, seconds: dict | None = None,
           alone: bool = False) -> check.CheckResult:
    """One case, beside the other rows' checks; where the GPU's memory, shared with them, ran out, the case again
    with the GPU alone (rows checked at once each hold a case's inputs, outputs and float64 reference: eight rows
    of a large case can fill a GPU that holds any one of them), and an error only where it does not fit alone.
    alone: the case may need the GPU to itself from the start (a first call that autotunes: checked_alone). A Triton
    or torch.compile row's such case (but max-autotune's) is first called beside the other rows with its autotuning
    untimed (_compiled_beside_others), which compiles its kernels, and has the GPU alone only where an autotuner
    still has a choice to time."""
    seconds = seconds if seconds is not None else {}
    inputs, compiled_s = None, 0.0
    if alone and isinstance(_gate, _GpuGate) and _compiles_beside_others(impl):
        inputs, alone, compiled_s = _compiled_beside_others(pool, op, impl, case, device, seconds)
    if alone and isinstance(_gate, _GpuGate):  # one row at a time (_NoGate): every case has the GPU alone anyway
        phase = "checks/first calls at a shape, alone (autotuning)"
    else:
        try:
            with _gate.shared():  # inputs, calls and judging all use the GPU
                return _check_case(pool, op, impl, case, device, seconds, inputs, compiled_s)
        except _OutOfMemory:
            inputs = None  # made again with the GPU alone
        phase = "checks/run again alone, out of GPU memory beside other rows"
    clock = _PhaseClock(seconds)
    with clock(phase), _gate.exclusive():
        _empty_cache()  # what the parent's threads left cached goes back before the case runs alone
        try:
            return _check_case(pool, op, impl, case, device, seconds, inputs, compiled_s)
        except _OutOfMemory as oom:
            return check.failed_result(op, impl.name, case, "error",
                                       f"out of GPU memory with the GPU to itself: {oom}; this case does not fit "
                                       f"this GPU (smaller check shapes in the spec, or a GPU with more memory)")


def _compiled_beside_others(pool, op: Op, impl, case: schedule.CheckCase, device, seconds: dict):
    """The case's inputs, whether its calls still need the GPU alone, and the seconds of a first call made beside
    the other rows' checks on its warm-up inputs with autotuning untimed (compare.worker.compile_case): Triton's
    JIT compilation, seconds a kernel, and torch.compile's (dynamo, inductor, then Triton's) are host work, which
    the GPU-alone section would otherwise hold every other row back for. Where that call ran out of GPU memory, no
    inputs: the case makes them again, alone."""
    clock = _PhaseClock(seconds)
    with clock("checks/first calls at a shape, compiled beside other rows"), _gate.shared():
        try:
            inputs = check.case_inputs(op, case, device)
            needs_alone, compiled_s = _call(pool, impl, "compile_case", inputs.warmup)
            return inputs, needs_alone, compiled_s
        except (RowFailure, torch.OutOfMemoryError):
            pass
        inputs = None  # here, not in the except clause, whose traceback holds the tensors of its frames
        _release_cached_memory(pool, impl)
    return None, True, 0.0


def _check_case(pool, op: Op, impl, case: schedule.CheckCase, device, seconds: dict, inputs=None,
                compiled_s: float = 0.0) -> check.CheckResult:
    """One case: the inputs made here (or given, made by _compiled_beside_others), the calls in the worker, the
    judgment here; seconds gets the wall time of the parent's two parts (the phase table's lines 'of the checks').
    compiled_s: the seconds of a first call made before, counted in the case's warm-up. Running out of GPU memory
    raises _OutOfMemory, whichever process ran out, once both have given back what they hold cached."""
    clock = _PhaseClock(seconds)
    try:
        if inputs is None:
            with clock("checks/making inputs, in the parent"):
                inputs = check.case_inputs(op, case, device)
        start = time.perf_counter()
        try:
            apart = _tuned_apart(impl, case) and isinstance(_gate, _GpuGate)
            outputs = _call(pool, impl, "call_case", inputs.warmup, inputs.a, inputs.b, case.layout is not None, apart,
                            context=f" in {schedule.dtype_name(case.dtype)} {op.describe_shape(case.shape)} "
                                    f"({case.label})")
        except RowFailure as failure:  # the row raised: an error on this case, and the row goes on
            if failure.message.startswith(torch.OutOfMemoryError.__name__):
                del inputs
                _release_cached_memory(pool, impl)
                raise _OutOfMemory(f"in the row's worker: {failure.message.splitlines()[0]}") from None
            # the seeds of the inputs the row was given (A's drawn again where they could not fail a kernel)
            return check.failed_result(op, impl.name, dataclasses.replace(case, seeds=inputs.seeds), "error",
                                       failure.message)
        with clock("checks/judging, in the parent"):
            outputs = _copied(outputs)
            r = check.judge_case(op, impl.name, case, inputs, outputs)
    except torch.OutOfMemoryError as oom:
        parent_ran_out = str(oom).splitlines()[0]
    else:
        parent_ran_out = None
    if parent_ran_out is not None:  # here, not in the except clause, whose traceback holds the tensors of its frames
        inputs = outputs = None
        _release_cached_memory(pool, impl)
        raise _OutOfMemory(f"in the parent: {parent_ran_out}")
    r.warmup_s = compiled_s + (outputs.warmup_s if outputs.warmup_s else time.perf_counter() - start)
    if _case_bytes(inputs.a) >= RELEASE_AFTER_BYTES:
        del inputs, outputs
        _release_cached_memory(pool, impl)
    return r


def _release_cached_memory(pool, impl) -> None:
    _call(pool, impl, "release_cached_memory")
    _empty_cache()


def _empty_cache() -> None:
    """This process's cached GPU memory back to the driver, the pool of the inputs handed to rows among it
    (compare.isolate.release_handed_over: empty_cache alone leaves a pool in use as it is)."""
    isolate.release_handed_over()
    torch.cuda.empty_cache()


# After a case whose largest input is this big, the row's worker and the parent give their cached GPU memory back:
# a worker keeps what its last case allocated (inputs, outputs, poisoned blocks: several times the input) while it
# waits, and beside other rows' checks of the same large case that is what runs the GPU out of memory. Below it the
# cache is small and the extra round trip per case would add up.
RELEASE_AFTER_BYTES = 64 << 20


def _case_bytes(inputs) -> int:
    """The largest tensor's bytes in one set of inputs."""
    return max((t.untyped_storage().nbytes() for t in inputs if isinstance(t, torch.Tensor)), default=0)


def _copied(outputs):
    """Tensors handed over through CUDA IPC map the worker's memory: take copies at once, so what is judged is what
    the worker handed back, not what it may write there later."""
    for field in ("first_a", "a", "b", "first", "last"):
        value = getattr(outputs, field, None)
        if isinstance(value, torch.Tensor):
            setattr(outputs, field, value.clone())
        elif isinstance(value, tuple):  # the outputs of a pass with several (compare.passes)
            setattr(outputs, field, tuple(t.clone() if isinstance(t, torch.Tensor) else t for t in value))
    return outputs


def _judge(out: RowOutcome) -> None:
    bad = [c for c in out.checks if not c.ok]
    if bad and out.status.status == Status.OK:
        kind = Status.FAIL if any(c.status == Status.FAIL for c in bad) else Status(bad[0].status)
        first = next((c for c in bad if c.status == kind), bad[0])
        out.status = RowStatus(out.status.impl, kind, f"{len(bad)} check(s) failed; first: {first.dtype} "
                                                      f"{first.shape} ({first.inputs}): {first.message}")


def _capture(pool, op: Op, impl, dtypes, device, options: Options, out: RowOutcome, timed: list) -> None:
    """The code torch.compile generates at the run's first timed shape (the op's first bench shape, or the first
    of --sizes: a run of one size shows what inductor made of that size)."""
    mode = impl.variant.removeprefix("compile").removeprefix("-") or "default"
    shape = timed[0] if timed else op.bench_shapes[0]  # torch rows take every shape
    for dtype in dtypes:
        inputs = check.make_inputs(op, shape, dtype, device, options.seed)
        try:
            out.captures.append(_call(pool, impl, "capture_compiled", dtype, shape, inputs, mode,
                                      schedule.dtype_name(dtype), op.describe_shape(shape)))
        except RowFailure as failure:
            out.status = RowStatus(impl.name, Status.ERROR, f"capture failed: {failure.message}")


def _time_row(pool, op: Op, impl, dtypes, device, options: Options, timed, out: RowOutcome) -> None:
    """The row's timed cells, several to a section with the GPU alone (_timed_sections), the first and last timed
    outputs of each cell judged after its section; the parts are lines of the phase table ('of the timing'). The
    row stops at the first cell whose outputs fail: the cells timed after it in its section are not reported."""
    l2 = timing.l2_bytes(device)
    cells = schedule.timed_cells(op, impl.name, dtypes, timed, l2, options.seed)
    _row_display.phase("timing", len(cells))
    clock = _PhaseClock(out.seconds)
    for section in _timed_sections(op, cells):
        done, error = _time_cells(pool, op, impl, section, device, options, out.seconds)
        large = any(_case_bytes(pristine) >= RELEASE_AFTER_BYTES
                    for _, _, kept in done for pristine, _ in kept.values())
        for cell, timed_out, kept in done:
            out.timings.append(timed_out.timing)
            with clock("timing/judging the first and last timed outputs, in the parent"):
                out.checks.extend(_judge_timed_outputs(pool, op, impl, cell, timed_out, kept))
            _judge(out)
            if out.status.status != Status.OK:
                return
        done = timed_out = kept = None  # the kept outputs and input copies go before the cache is emptied
        if large:
            with _gate.shared():  # beside other rows' checks, never beside another row's timing
                _empty_cache()
        if error is not None:
            out.status = error
            return


# A row's timed cells have the GPU alone several at a time, one after another in one section: a section first waits
# for the other rows' checks in flight to end, while none may start, so a section for each cell left the GPU partly
# idle once a cell. Each cell's first and last outputs wait in this process for their judging after the section,
# with copies of the input sets they were given: a section takes cells while twice their bytes moved (two calls'
# inputs and outputs) add up to no more than this, and a cell larger than that has a section of its own.
TIMED_SECTION_BYTES = 2 << 30


def _timed_sections(op: Op, cells: list) -> list[list]:
    """The cells in order, cut into the runs that share a section with the GPU alone (TIMED_SECTION_BYTES)."""
    sections, held = [], 0
    for cell in cells:
        nbytes = 2 * op.bytes_moved(cell.shape, cell.dtype)
        if sections and held + nbytes <= TIMED_SECTION_BYTES:
            sections[-1].append(cell)
            held += nbytes
        else:
            sections.append([cell])
            held = nbytes
    return sections


def _time_cells(pool, op: Op, impl, cells: list, device, options: Options, seconds: dict):
    """One section with the GPU alone: per cell its input sets made, the calls timed in the worker, and the sets of
    the first and last timed calls asked whether they still hold what they were given. Returns per cell (the cell,
    what the worker handed back, {input set: (its pristine copy, whether it was left unchanged)}) and the error
    that ended the section early, if any (the cells before it are returned all the same)."""
    clock, done = _PhaseClock(seconds), []
    with _gate.exclusive() as waited:
        if waited:  # rows checked at once: the other rows' checks in flight
            clock.add("timing/waiting for the GPU alone", waited)
        for cell in cells:
            _row_display.step()
            dtype, shape = schedule.dtype_name(cell.dtype), op.describe_shape(cell.shape)
            with clock("timing/making inputs, in the parent"):
                sets = [check.make_inputs(op, cell.shape, cell.dtype, device, seed) for seed in cell.seeds]
                pristine = [tuple(t.clone() for t in s) for s in sets]
            try:
                with clock("timing/the timed calls with their warm-up, in the worker"):
                    timed_out = _copied(_call(pool, impl, "time_cell", sets, impl.name, dtype, shape,
                                              op.bytes_moved(cell.shape, cell.dtype), op.flops(cell.shape),
                                              options.graph, options.profile_check))
            except RowFailure as failure:
                return done, RowStatus(impl.name, Status.ERROR, f"timing {dtype} {shape}: {failure.message}")
            with clock("timing/judging the first and last timed outputs, in the parent"):
                kept = {i: (pristine[i], check.unchanged(sets[i], pristine[i]))
                        for i in (timed_out.first_set, timed_out.last_set)}
            done.append((cell, timed_out, kept))
            large = _case_bytes(sets[0]) >= RELEASE_AFTER_BYTES
            del sets, pristine
            if large:  # what the worker's timed calls left cached goes back before the next cell's inputs are made
                _release_cached_memory(pool, impl)
    return done, None


def _judge_timed_outputs(pool, op: Op, impl, cell, timed_out, kept: dict) -> list[check.CheckResult]:
    """The first and last timed calls' outputs judged here, beside the other rows' checks as a check case is
    (compare.check.judge_timed_output); where the GPU's memory ran out, again with the GPU alone."""
    def judge():
        return [check.judge_timed_output(op, impl.name, cell.dtype, cell.shape, which, cell.seeds[index], output,
                                         *kept[index])
                for which, output, index in (("first", timed_out.first, timed_out.first_set),
                                             ("last", timed_out.last, timed_out.last_set))]

    try:
        with _gate.shared():
            return judge()
    except torch.OutOfMemoryError:
        pass
    # Here, not in the except clause, whose traceback holds the judging's tensors. What the worker and this process
    # (the parent's other threads too) hold cached goes back first, with the GPU alone: freeing memory is the
    # driver's work on the GPU, beside no other row's timing.
    with _gate.exclusive():
        _release_cached_memory(pool, impl)
        return judge()


def _account_kernels(pool, op: Op, impl, dtypes, device, timed, seed: int, out: RowOutcome) -> None:
    """One profiled call per dtype at the smallest timed shape, all in one profiling session (compare.accounting)."""
    cells = []
    for dtype in dtypes:
        shape = next((s for s in timed if op.supports(impl.name, dtype, s)), None)
        if shape is not None:
            seeds = schedule.case_seeds(seed, op, impl.name, dtype, shape, schedule.RANDOM, None, "accounting", 1)
            cells.append((dtype, shape, check.make_inputs(op, shape, dtype, device, seeds[0])))
    if not cells:
        return
    try:
        # The profiler's start-up is seconds of the worker's host work and launches nothing: other rows' checks go on
        # beside it; the profiled calls then have the GPU alone.
        with _gate.shared():
            _call(pool, impl, "start_profiler")
        with _gate.exclusive():  # the GPU time of its kernels, with no other row's beside them
            launched = _call(pool, impl, "kernels_launched", [inputs for _, _, inputs in cells])
    except RowFailure as failure:
        out.status = RowStatus(impl.name, Status.ERROR, f"kernel accounting: {failure.message}")
        return
    for (dtype, shape, _), calls in zip(cells, launched):
        record = accounting.account(impl, schedule.dtype_name(dtype), op.describe_shape(shape), calls)
        out.kernels.append(record)
        if record.problem and out.status.status == Status.OK:
            out.status = RowStatus(impl.name, Status.FAIL, f"{record.dtype} {record.shape}: {record.problem}")
    foreign = sorted({k for r in out.kernels for k in r.foreign})
    if foreign and out.status.status == Status.OK:
        out.status.message = (f"launches kernels that are not its own: {', '.join(foreign)} (not counted in its "
                              f"lines)")


def relate_to_ceilings(result: OpResult, status: dict[str, RowStatus] | None = None) -> None:
    """Each timing's fraction of its ceiling, of the copy of the same bytes, and its speedup over torch:eager. A
    compute-bound op's ceiling at a shape and dtype is the fastest timing there of its ceiling rows
    (result.ceiling_rows) whose row passed: by status, the rows' statuses by name (default: the result's rows; a row
    without one counts as passing). A ceiling row that failed its checks, or whose timing was refused as
    implausible, sets no ceiling."""
    if status is None:
        status = {r.impl: r for r in result.rows}
    eager = {(t.dtype, t.shape): t for t in result.timings if t.impl == "torch:eager"}
    copies = {(c.dtype, c.shape): c for c in result.same_bytes_copies}
    peak = result.ceilings.copy_gbps if result.roofline == "memory" else None
    compute: dict[tuple[str, str], timing.Timing] = {}
    for t in result.timings:
        if (result.roofline == "compute" and t.impl in result.ceiling_rows and not t.implausible and t.tflops > 0
                and (t.impl not in status or status[t.impl].status == Status.OK)):
            best = compute.get((t.dtype, t.shape))
            if best is None or t.tflops > best.tflops:
                compute[(t.dtype, t.shape)] = t
    which = "(vendor library)" if len(result.ceiling_rows) == 1 else "(fastest vendor row)"
    # The same-bytes copies get their fraction of the large-buffer peak too: how much of it a size allows at all.
    for t in result.timings + result.same_bytes_copies:
        if peak:
            t.fraction_of_ceiling, t.ceiling = t.gbps / peak, "copy bandwidth"
    for t in result.timings:
        base = eager.get((t.dtype, t.shape))
        if base:
            t.speedup_vs_eager = base.median_ms / t.median_ms
        if result.roofline == "compute":
            best = compute.get((t.dtype, t.shape))
            t.fraction_of_ceiling, t.ceiling = (t.tflops / best.tflops, f"{best.impl} {which}") if best else (None, "")
        if copy := copies.get((t.dtype, t.shape)):
            t.fraction_of_same_bytes_copy = t.gbps / copy.gbps


def _refuse_implausible(result: OpResult, status: dict) -> None:
    """A timing faster than physics allows fails its row (compare.accounting.implausible)."""
    for t in result.timings:
        why = accounting.implausible(t, result.roofline, result.env.get("gpu", ""))
        if why:
            t.implausible = why
            if status[t.impl].status == Status.OK:
                status[t.impl] = RowStatus(t.impl, Status.FAIL, why)

