"""The worker side: the process that runs one row's code. It loads the row, calls it on inputs the parent made and
hands every output back; it times the row and lists the kernels it launched. It judges nothing: the float64
reference and the comparison run in the parent (compare.runner, compare.check), which never imports a row's code,
so no row can reach the judge. Everything here is called by name through compare.isolate.

Inputs arrive from the parent (CUDA tensors through CUDA IPC, CPU tensors through shared memory) and outputs go
back the same way; the parent keeps pristine copies of the inputs, so a row that writes into its inputs is seen
there too.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import sys
import time
from pathlib import Path

import torch

from . import capture
from . import caches, env, timing
from .discover import Impl
from .spec import PEER

_row: dict = {}  # the loaded row: {"impl": Impl, "fn": callable}
progress = lambda: None  # noqa: E731  (set by compare.isolate: tells the parent a long call is alive)


def set_progress_callback(callback) -> None:
    global progress
    progress = callback


def load_row(impl: Impl) -> None:
    """Import or build the row (CUDA rows load the module the parent's build step left in the cache); a Triton or
    torch row, whose kernels will be accounted for, also imports what the profiler's first session would (such a
    row is loaded while the rows before it run: compare.runner._load_ahead). torch:eager imports nothing else of
    that: a last row's kernel accounting waited seconds for it."""
    fn = impl.load()
    if impl.backend in ("triton", PEER):  # a peer's kernels may be Triton's, autotuned (Liger's are)
        caches.autotuning_results_per_gpu_model(env.gpu_name())
    if impl.backend == "triton":
        _use_interpreter_autotune_stub(impl)
    if impl.backend in ("triton", "torch"):
        import_profiler_modules()
    _row.clear()
    _row.update(impl=impl, fn=fn)
    if impl.backend == "torch" and impl.variant.startswith("compile"):
        capture.raise_recompile_limit()  # one graph per shape, dtype and layout, past dynamo's default limit
        caches.inductor_results_per_gpu_model(env.gpu_name())


def _fn():
    return _row["fn"]


def poison_free_memory(device: torch.device, nbytes: int) -> None:
    """Fill memory the allocator will hand out next with 0xFF bytes, a NaN in every float format: an allocation
    of the same size right after this reuses the block, so output a kernel never writes reads back as NaN."""
    if device.type != "cuda" or nbytes <= 0:
        return
    # The cached free blocks go back to the driver first: the allocator hands out the best-fitting free block, and a
    # block the size of the output (the warm-up call's output, just freed) would be chosen over the larger poisoned
    # one, so the unwritten part of the next output would hold the warm-up's stale answer instead of NaN.
    torch.cuda.empty_cache()
    block = torch.empty(nbytes, dtype=torch.uint8, device=device)
    block.fill_(0xFF)
    del block


@contextlib.contextmanager
def uninitialized_cpu_memory_poisoned(device: torch.device):
    """Around a judged call without a GPU (Triton's interpreter): torch fills every tensor it allocates uninitialized
    (torch.empty and the like) with NaN, or the largest integer, while deterministic algorithms are on
    (torch.utils.deterministic.fill_uninitialized_memory). So an output a row never writes reads NaN whichever block
    the C library hands out: it hands a block just freed to the next request of its size, and that block may hold
    the answer of the call before (filling the free blocks it would hand out, the way poison_free_memory does on the
    GPU, only made that unlikely: tests/test_planted.py once saw a stale answer pass). warn_only: an op without a
    deterministic implementation warns instead of raising. The settings before are restored after."""
    if device.type != "cpu":
        yield
        return
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True, warn_only=not enabled or warn_only)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        yield
    finally:
        torch.utils.deterministic.fill_uninitialized_memory = fill
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)


def release_cached_memory() -> None:
    """Give the GPU memory this process's allocator keeps cached back to the driver (and free the blocks handed to
    the parent through CUDA IPC once it has let go of them): a worker idle after a large case would otherwise hold
    that memory while other rows' checks need it."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.ipc_collect()
        torch.cuda.empty_cache()


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _nbytes(inputs) -> int:
    return max((t.untyped_storage().nbytes() for t in inputs if isinstance(t, torch.Tensor)), default=0)


@dataclasses.dataclass
class CaseOutputs:
    """What a check case's calls returned: A's output as it came back (a copy taken at once), A's output again
    after call B, and B's output; or the row's refusal of the inputs."""

    first_a: object = None
    a: object = None
    b: object = None
    refused: str = ""  # the row's error message, when it raised on a non-contiguous layout
    warmup_s: float = 0.0  # the warm-up call's wall time: JIT compilation and autotuning on a first call


def _handover(out):
    """An output as the parent can receive it: tensors as they are (the parent copies them on arrival), a tuple of
    them (a pass with several outputs, compare.passes) as a tuple, anything else described, so an implementation
    returning a number is judged wrong rather than crashing."""
    if isinstance(out, torch.Tensor):
        return out.detach()
    if isinstance(out, (tuple, list)) and out and all(isinstance(t, torch.Tensor) for t in out):
        return tuple(t.detach() for t in out)
    return f"{type(out).__name__}: {str(out)[:200]}"


def _clone(out):
    """A copy of an output (or of each of a tuple's), taken the moment it is returned."""
    if isinstance(out, torch.Tensor):
        return out.detach().clone()
    if isinstance(out, (tuple, list)):
        return tuple(_clone(t) for t in out)
    return out


def call_case(warmup, inputs_a, inputs_b, may_refuse: bool, apart: bool = False, fn=None) -> CaseOutputs:
    """The three calls of one check case (compare.schedule): a discarded warm-up, then A and B, each into freshly
    poisoned memory. A refusal (an exception) is returned for the parent to judge when may_refuse (a non-contiguous
    layout, which a row may refuse with an error that says so); otherwise it propagates. apart: the case is at a
    shape no timed cell uses, and the row's autotuners keep what they choose there apart (tuned_apart). fn: the
    loaded row by default (compare.check.check_case passes one, to run a case in its own process)."""
    with tuned_apart() if apart else contextlib.nullcontext():
        return _three_calls(warmup, inputs_a, inputs_b, may_refuse, fn or _fn())


def _three_calls(warmup, inputs_a, inputs_b, may_refuse: bool, fn) -> CaseOutputs:
    device = inputs_a[0].device
    start = time.perf_counter()
    try:
        out = fn(*warmup)
        del out
        _sync(device)
    except Exception as exc:
        if may_refuse:
            return CaseOutputs(refused=str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
        raise
    warmup_s = time.perf_counter() - start
    poison_free_memory(device, 2 * _nbytes(inputs_a))
    with uninitialized_cpu_memory_poisoned(device):
        out_a = fn(*inputs_a)
    _sync(device)
    first_a = _clone(out_a)
    if _outputs_until_next_call(fn):  # call B rewrites A's output by design: A's copy stands for it
        out_a = first_a
    poison_free_memory(device, 2 * _nbytes(inputs_b))
    with uninitialized_cpu_memory_poisoned(device):
        out_b = fn(*inputs_b)
    _sync(device)
    return CaseOutputs(_handover(first_a), _handover(out_a), _handover(out_b), warmup_s=warmup_s)


def compile_case(warmup) -> tuple[bool, float]:
    """A Triton or torch.compile row's first call at a dtype and shape, made beside other rows' checks before the
    case whose warm-up may autotune runs with the GPU alone (compare.runner._check): every kernel the call reaches is
    compiled here, each autotuned kernel's every configuration launched once and left untimed (torch.compile's:
    its first configuration), so that the GPU-alone section spends its time benchmarking rather than compiling on
    the host while the other rows wait. Returns whether an autotuned kernel still has a choice to make by timing
    (False where each tuning key's choice came from Triton's or inductor's disk cache, or pruning or inductor's
    heuristics left one configuration, or no autotuned kernel was called: the case then needs no section alone),
    and the call's wall seconds. Nothing this call chooses is kept: the tuning keys its untimed launches filled are
    forgotten, inductor's kernels keep every candidate, and Triton's disk cache of autotuning results is read here,
    never written (a row's own cache of launches must keep only what its autotuner holds, as triton_src.Launcher
    does). A call that raises reports a choice left to make, so the case runs as it would have, alone, and its
    error is judged there."""
    start = time.perf_counter()
    inductor = _row.get("impl") is not None and _row["impl"].backend == "torch"
    with _untimed_autotuning() as tuned, (_inductor_tuning_deferred(tuned) if inductor else contextlib.nullcontext()):
        try:
            out = _fn()(*warmup)
            del out
            _sync(warmup[0].device)
        except Exception:  # noqa: BLE001  (the case itself, run next, reports it)
            return True, time.perf_counter() - start
    return bool(tuned), time.perf_counter() - start


@contextlib.contextmanager
def _inductor_tuning_deferred(tuned: list):
    """Inside: a kernel inductor compiled that would time its candidate configurations on its first
    call (CachingAutotuner.autotune_to_one_config) runs its first configuration instead, untimed, and is added to
    `tuned`; on the way out it gets every candidate back, and loses the launch it keeps for its calls once it has
    one configuration (torch 2.14's _cached_launcher, None when it has several), so its next call times them.
    Inductor's own cache of tuning results is written only by that timing: nothing is kept of this call's choice."""
    from torch._inductor.runtime import triton_heuristics

    autotuner = triton_heuristics.CachingAutotuner
    original = autotuner.autotune_to_one_config
    candidates: list = []

    def first_untimed(self, *args, **kwargs):
        tuned.append(self)
        candidates.append((self, self.launchers))
        self.launchers = self.launchers[:1]

    autotuner.autotune_to_one_config = first_untimed
    try:
        yield
    finally:
        autotuner.autotune_to_one_config = original
        for kernel, launchers in candidates:
            kernel.launchers = launchers
            if hasattr(kernel, "_cached_launcher"):
                kernel._cached_launcher = None


@contextlib.contextmanager
def _untimed_autotuning():
    """Inside: Triton's autotuners launch each configuration once instead of timing it, keep no choice so made, and
    write nothing to their disk cache (reading it as ever). Yields the list of autotuners that had a choice to make
    by timing. Patched on the classes and the module, so every autotuned kernel the row reaches is covered, whatever
    module defines it; restored on the way out."""
    from triton.runtime import autotuner

    tuned: list = []
    original_run, original_bench = autotuner.Autotuner.run, autotuner.Autotuner._bench
    original_manager = autotuner.get_cache_manager

    def run(self, *args, **kwargs):
        known = set(self.cache)
        try:
            return original_run(self, *args, **kwargs)
        finally:
            if self in tuned:  # the keys filled by untimed launches: the timed call chooses again
                for key in set(self.cache) - known:
                    del self.cache[key]

    def bench(self, *args, config, **meta):
        if self not in tuned:
            tuned.append(self)
        # do_bench is a cached property (Triton's benchmarker, looked up on first use): the instance's own entry
        # is swapped, and the lookup is left for the timed call
        timed = self.__dict__.get("do_bench", _NONE)
        self.__dict__["do_bench"] = _launch_once
        try:
            return original_bench(self, *args, config=config, **meta)
        finally:
            if timed is _NONE:
                del self.__dict__["do_bench"]
            else:
                self.__dict__["do_bench"] = timed

    autotuner.Autotuner.run, autotuner.Autotuner._bench = run, bench
    autotuner.get_cache_manager = lambda key: _ReadOnlyCache(original_manager(key))
    try:
        yield tuned
    finally:
        autotuner.Autotuner.run, autotuner.Autotuner._bench = original_run, original_bench
        autotuner.get_cache_manager = original_manager


# The choices autotuners made at shapes no timed cell uses, per autotuner and tuning key (tuned_apart).
_chosen_apart: dict = {}
# What tells the keys of Triton's disk cache of autotuning results written at such shapes from the keys it has for
# the same kernel and tuning key at a timed shape.
APART_CACHE_SALT = "kernel-lab: chosen at a shape no timed cell uses | "


@contextlib.contextmanager
def tuned_apart():
    """Inside: a call at a shape no timed cell uses, with rows checked at once. The row's first call there autotunes
    beside other rows' checks (compare.runner.checked_alone), so what its autotuners choose may be the contention's
    choice: they may use it there and nowhere else. On the way in, each autotuner the call reaches gets back the
    choices it made at such shapes before (a choice made at a timed shape, with the GPU alone, stands where both
    share a key); on the way out, every key filled inside is taken out of its memory again into _chosen_apart, so a
    timed call at that key tunes anew. Triton's disk cache of autotuning results is read and written inside under
    keys of its own (APART_CACHE_SALT), so a later run tunes such a shape no more than a timed one, and a run that
    times it (other --sizes) never reads a choice made here."""
    from triton.runtime import autotuner

    held_before: dict = {}  # autotuner -> the keys it held on the way in
    original_run, original_manager = autotuner.Autotuner.run, autotuner.get_cache_manager

    def run(self, *args, **kwargs):
        if self not in held_before:
            held_before[self] = set(self.cache)
            for key, config in _chosen_apart.get(self, {}).items():
                self.cache.setdefault(key, config)
        return original_run(self, *args, **kwargs)

    def manager(key):
        return original_manager(hashlib.sha256((APART_CACHE_SALT + key).encode()).hexdigest())

    autotuner.Autotuner.run, autotuner.get_cache_manager = run, manager
    try:
        yield
    finally:
        autotuner.Autotuner.run, autotuner.get_cache_manager = original_run, original_manager
        for tuner, keys in held_before.items():
            for key in set(tuner.cache) - keys:
                _chosen_apart.setdefault(tuner, {})[key] = tuner.cache.pop(key)


_NONE = object()


def _launch_once(kernel_call, quantiles=None, **_):
    """An autotuner's benchmark replaced by one launch (compiling the configuration), timed as 0."""
    kernel_call()
    return [0.0, 0.0, 0.0]


class _ReadOnlyCache:
    """Triton's cache manager for one autotuning key, its files readable and nothing written."""

    def __init__(self, manager):
        self._manager = manager

    def get_file(self, name):
        return self._manager.get_file(name)

    def put(self, *args, **kwargs):
        return None


@dataclasses.dataclass
class TimedOutputs:
    timing: timing.Timing
    first: object  # the output of the first timed call
    first_set: int  # the index of the input set it was given
    last: object
    last_set: int


class _Recorder:
    """Calls fn over the rotating input sets and keeps the outputs of the first recorded call and of the latest.
    Where a later call rewrites the outputs (an in-place row, whose set is restored before the next call; replayed
    CUDA graphs, which write every output into the same memory), the kept outputs are replaced by copies outside
    the timed calls: the first by settle_first() before the next call, both when recording stops
    (set_recording(False)), so no later call rewrites what the parent will judge."""

    def __init__(self, fn, sets, outputs_rewritten: bool = False):
        self.fn, self.sets, self.calls = fn, sets, 0
        self.recording = False
        self.first = self.last = None
        self.outputs_rewritten = outputs_rewritten
        self._first_settled = False

    def __call__(self):
        index = self.calls % len(self.sets)
        self.calls += 1
        out = self.fn(*self.sets[index])
        if self.recording:
            if self.first is None:
                self.first = (index, out)
            self.last = (index, out)
        return out

    def set_recording(self, on: bool) -> None:
        self.recording = on
        if not on and self.outputs_rewritten and self.last is not None:
            self.settle_first()
            self.last = (self.last[0], _clone(self.last[1]))

    def settle_first(self) -> None:
        if self.outputs_rewritten and self.first is not None and not self._first_settled:
            self.first = (self.first[0], _clone(self.first[1]))
            self._first_settled = True


def _outputs_until_next_call(fn) -> bool:
    """Whether the row's output is valid only until its next call (torch.compile replaying CUDA graphs:
    compare.discover.compiled), so that what is kept of it must be copied before then."""
    return getattr(fn, "lab_outputs_until_next_call", False)


def _timed_call(fn, sets):
    """The call that is timed, its input sets, and what restores a set before each timed call (or None): the row's
    own call, or, for a row that declares a preparation (lab_prepare: a backward pass runs its forward; an in-place
    peer copies the input it overwrites, next to a pristine copy), the prepared sets and the call it times
    (lab_timed), with lab_restore where the call changes its set (the in-place peer: its input copied back)."""
    if not hasattr(fn, "lab_prepare"):
        return fn, sets, None
    device = sets[0][0].device
    sets = [fn.lab_prepare(*s) for s in sets]
    _sync(device)
    return fn.lab_timed, sets, getattr(fn, "lab_restore", None)


def time_cell(sets, impl: str, dtype: str, shape: str, nbytes: int, flops: int, graph: bool,
              profile_check: bool) -> TimedOutputs:
    """One timed cell: the row's calls rotating over the input sets (timing.measure), the outputs of the first and
    last timed call kept for the parent to judge. A backward pass (compare.passes) runs its forward on each input
    set here, before timing, and times the backward alone."""
    fn, sets, restore = _timed_call(_fn(), sets)
    rewritten = restore is not None or _outputs_until_next_call(fn)
    recorder = _Recorder(fn, sets, outputs_rewritten=rewritten)

    def before():  # outside the events: the first kept output copied before the next call rewrites it, the next set
        recorder.settle_first()
        if restore:
            restore(*sets[recorder.calls % len(sets)])

    t = timing.time_calls(recorder, impl=impl, dtype=dtype, shape=shape, nbytes=nbytes, flops=flops, graph=graph,
                          on_timed=recorder.set_recording, before=before if rewritten else None,
                          graph_calls=[lambda s=s: fn(*s) for s in sets])
    if profile_check:  # a cross-check of the row's own kernels against the events
        t.profiler_ms = timing.profiler_kernel_ms(lambda: fn(*sets[0]))
        t.profiler_disagrees = timing.profiler_disagrees(t.median_ms, t.profiler_ms)
    (first_set, first), (last_set, last) = recorder.first, recorder.last
    return TimedOutputs(t, _handover(first), first_set, _handover(last), last_set)


def import_profiler_modules() -> None:
    """What the first torch.profiler session of a process would import: its set-up asks hasattr(torch, "_inductor"),
    which imports torch._inductor, seconds of host work (bench/profiler_startup.py measures it). Imported before
    the row's turn, while earlier rows run, that part of the kernel accounting's start-up is off the critical path;
    unlike a profiler session, an import leaves the cost of a kernel launch as it was, so it may come before the
    timing."""
    import torch._inductor  # noqa: F401


def start_profiler() -> None:
    """The profiler's start-up in this process (CUPTI loading, seconds of host work), as an empty session: the
    session of kernels_launched that follows then costs milliseconds. Called after the row's timing, never before:
    once a process has run a profiler session its kernel launches cost the host more (bench/profiler_startup.py)."""
    with timing.cuda_profile():
        pass


def kernels_launched(input_sets) -> list[dict]:
    """One call of the row per input set (one per dtype), all under one torch.profiler session (each session costs
    its set-up and trace processing): every GPU activity each call caused (kernels, memsets, copies) with its
    stream, and the stream the harness times on, found from a marker kernel (torch's spin kernel, a few cycles)
    launched there just before each call in the same trace. The GPU is idle between calls, so each call's
    activities lie between its marker and the next."""
    fn, input_sets, _ = _timed_call(_fn(), input_sets)  # the kernels of the call that is timed (one per set)
    for inputs in input_sets:
        fn(*inputs)  # warm: JIT compilation and autotuning are not the call's own kernels
    torch.cuda.synchronize()

    def calls():
        for inputs in input_sets:
            torch.cuda._sleep(1)
            fn(*inputs)
            torch.cuda.synchronize()

    found = timing.gpu_activities(calls)
    markers = [i for i, a in enumerate(found) if MARKER_KERNEL in a["name"]]
    if len(markers) != len(input_sets):  # the markers were not seen: no stream to hold the calls to
        return [{"timing_stream": None, "activities": found}] * len(input_sets)
    bounds = markers + [len(found)]
    return [{"timing_stream": found[start]["stream"], "activities": found[start + 1:end]}
            for start, end in zip(bounds, bounds[1:])]


MARKER_KERNEL = "spin_kernel"  # what torch.cuda._sleep launches


def capture_compiled(dtype: torch.dtype, shape, inputs, mode: str, dtype_name: str, shape_name: str):
    """The code torch.compile generates for the op's torch version (torch:compile rows)."""
    from .discover import load_op

    op = load_op(_row["impl"].op)
    return capture.capture(op, inputs, _row["impl"].name, mode, dtype_name, shape_name)


def triton_resources() -> list[dict]:
    """Per Triton kernel the row launches: how many variants were compiled (autotune configs x dtypes), their
    register range, worst spills and shared memory, and the configs the autotuner chose."""
    impl = _row["impl"]
    found = []
    for name, obj in _triton_kernels(impl):
        jit_fn = obj
        while not hasattr(jit_fn, "device_caches") and hasattr(jit_fn, "fn"):
            jit_fn = jit_fn.fn
        compiled = []
        for cache in getattr(jit_fn, "device_caches", {}).values():
            kernels = cache[0] if isinstance(cache, tuple) else cache
            compiled += list(getattr(kernels, "values", lambda: [])())
        if not compiled:
            continue
        regs = [getattr(k, "n_regs", 0) or 0 for k in compiled]
        chosen = autotune_picks(obj)
        found.append({"impl": impl.name, "kernel": name, "variants": len(compiled),
                      "registers": f"{min(regs)}-{max(regs)}" if min(regs) != max(regs) else str(regs[0]),
                      "spills": max(getattr(k, "n_spills", 0) or 0 for k in compiled),
                      "shared_bytes": max(getattr(getattr(k, "metadata", None), "shared", 0) or 0 for k in compiled),
                      "chosen_configs": chosen})
    return found


def autotune_picks(kernel) -> list[str]:
    """What an autotuned kernel chose, one entry per tuning key it met: "m=1024, n=32768, torch.float32: BLOCK: 16384,
    num_warps: 32, ..." (the key's parameters by name, then the dtypes of its tensor arguments, which Triton's
    Autotuner appends to the key); [] for a kernel that does not autotune. Per key, so that a reader can tell which
    config ran at which shape and dtype, and whether two runs chose alike. A choice made at a shape no timed cell
    uses ends in "(untimed shape)" (tuned_apart)."""
    names = list(getattr(kernel, "keys", []) or [])
    picks = []
    apart = _chosen_apart.get(kernel, {}) if hasattr(kernel, "cache") else {}
    for key, config, where in [*((k, c, "") for k, c in getattr(kernel, "cache", {}).items()),
                               *((k, c, " (untimed shape)") for k, c in apart.items())]:
        key = key if isinstance(key, tuple) else (key,)
        named = [f"{n}={v}" for n, v in zip(names, key)]
        dtypes = sorted({str(v) for v in key[len(names):]})
        picks.append(f"{', '.join(named + dtypes)}: {config}{where}")
    return sorted(picks)


def _triton_kernels(impl: Impl) -> list:
    """The @triton.jit objects a Triton variant launches (from the same reachability walk the line count uses), each
    from the module that defines it: the variant's own, or a neighbour it imports them from (a causal op's file that
    runs the kernels of the non-causal one)."""
    from . import callgraph
    from .discover import triton_function

    own = sys.modules[triton_function(impl.source, impl.variant).__module__]
    loaded = {Path(m.__file__).resolve(): m for m in list(sys.modules.values())
              if isinstance(getattr(m, "__file__", None), str)}
    reached = sorted((e.name, e.file) for e in callgraph.triton_reach(impl.source, impl.variant).kernel if e.is_kernel)
    found = []
    for name, file in reached:
        module = loaded.get(Path(file).resolve(), own) if file else own
        if hasattr(module, name):
            found.append((name, getattr(module, name)))
    return found


def _use_interpreter_autotune_stub(impl: Impl) -> None:
    """Triton's autotuner benchmarks on a GPU; under the interpreter, run each config once instead (so every
    config is still executed) and keep the first."""
    if env.interpreting():
        run_autotune_configs_once(impl)


def run_autotune_configs_once(impl: Impl) -> None:
    """A Triton row's autotuned kernels run each config once, timed as 0 (the first config is then kept), instead of
    benchmarking each: what the interpreter can afford, and what compute-sanitizer needs (one launch of every
    config)."""

    for _, obj in _triton_kernels(impl):
        if hasattr(obj, "configs") and hasattr(obj, "fn"):
            obj.do_bench = _launch_once


# ---- harness-only calls (run in a worker that loads no row) -------------------------------------------------------
def build_source(op_name: str, source: str | None, flags: list[str]):
    """Build a .cu in a worker, so the parent never loads a row's module (its static initializers run code)."""
    from . import build

    return build.build(op_name, flags, progress=False, path=source)


def measure_copy_bandwidth() -> float:
    return timing.copy_bandwidth(torch.device("cuda"))


def measure_same_bytes_copies(cells: list[tuple[int, str, str]], graph: bool) -> list[timing.Timing]:
    """A copy of the same bytes for every timed (nbytes, dtype, shape) of the op: not per implementation, since the
    copy does not depend on the row."""
    device = torch.device("cuda")
    l2 = timing.l2_bytes(device)
    return [timing.same_bytes_copy(nbytes, device, l2, dtype=dtype, shape=shape, graph=graph)
            for nbytes, dtype, shape in cells]


def l2_bytes() -> int | None:
    return timing.l2_bytes(torch.device("cuda")) if env.has_gpu() else None


def cuda_context_healthy() -> bool:
    """False once a kernel fault has poisoned this process's CUDA context (every later CUDA call fails)."""
    if not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return True
    try:
        torch.cuda.synchronize()
        torch.ones(1, device="cuda").add_(1).item()
        return True
    except Exception:
        return False
