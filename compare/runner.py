"""One op, end to end: count, build, check, capture torch.compile, time. Each row's failure is recorded on that row
and the run goes on; the caller decides the exit status from ``OpResult.failed_rows()``."""
from __future__ import annotations

import dataclasses
import time
import traceback
from typing import Callable

import torch

from . import build as build_mod
from . import capture as capture_mod
from . import check as check_mod
from . import count, discover, env, timing
from .isolate import DEFAULT_ROW_TIMEOUT_S
from .spec import Op


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
    isolate: bool = True  # run rows in a worker process (see isolate.py)
    graph: bool = False  # also time CUDA-graph replays (launch overhead removed)
    profile_check: bool = False  # also measure kernel time with torch.profiler and compare
    row_timeout_s: float = DEFAULT_ROW_TIMEOUT_S  # without progress (see isolate)


@dataclasses.dataclass
class RowStatus:
    impl: str
    status: str  # ok | FAIL | build failed | error | crashed | timed out | skipped | needs GPU | built (needs GPU to run)
    message: str = ""


@dataclasses.dataclass
class OpResult:
    op: str
    summary: str
    roofline: str
    env: dict
    ceilings: dict = dataclasses.field(default_factory=dict)
    # Memory-bound ops: per timed shape and dtype, a plain copy of the same bytes (timing.same_bytes_copy)
    same_bytes_copies: list[timing.Timing] = dataclasses.field(default_factory=list)
    rows: list[RowStatus] = dataclasses.field(default_factory=list)
    checks: list[check_mod.CheckResult] = dataclasses.field(default_factory=list)
    timings: list[timing.Timing] = dataclasses.field(default_factory=list)
    loc: list[count.LineCount] = dataclasses.field(default_factory=list)
    build: list[dict] = dataclasses.field(default_factory=list)
    jit: list[dict] = dataclasses.field(default_factory=list)
    captures: list[capture_mod.Capture] = dataclasses.field(default_factory=list)
    seed: int = 0
    isolation: dict = dataclasses.field(default_factory=dict)

    def failed_rows(self) -> list[RowStatus]:
        return [r for r in self.rows if r.status in ("FAIL", "build failed", "error", "crashed", "timed out")]


_progress: Callable[[], None] = lambda: None


def set_progress_callback(callback: Callable[[], None]) -> None:
    """Called after each finished step of a row (a check, a capture, a timing); the worker uses it to tell the
    parent that the row is alive (see isolate: the row timeout counts from the last step)."""
    global _progress
    _progress = callback


def _say(options: Options, text: str) -> None:
    if options.progress:
        print(text, flush=True)


def _short_error(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/compare/" not in f.filename]
    where = f" ({env.relpath(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""
    lines = str(exc).strip().splitlines()
    # Compiler errors (Triton's among them) put the useful part after the first line: keep a screenful.
    text = "\n".join(lines[:15]) + ("\n..." if len(lines) > 15 else "")
    return f"{type(exc).__name__}{where}: {text}"


def _dtypes(op: Op, options: Options) -> list[torch.dtype]:
    dtypes = list(op.dtypes)
    if options.dtypes:
        wanted = {getattr(torch, d) for d in options.dtypes}
        dtypes = [d for d in dtypes if d in wanted]
    if not env.has_gpu():
        # The interpreter's bf16 arithmetic is not trustworthy (numpy has no bf16), so it checks fp32/fp16 only.
        dtypes = [d for d in dtypes if d in (torch.float32, torch.float16)]
    return dtypes


def _timing_sizes(op: Op, options: Options) -> list[tuple[int, ...]]:
    if options.sizes:
        return list(options.sizes)
    return list(op.quick_bench_shapes or op.bench_shapes[:2]) if options.quick else list(op.bench_shapes)


def _row_dtypes(op: Op, impl: discover.Impl, dtypes: list[torch.dtype]) -> list[torch.dtype]:
    return [d for d in dtypes if d not in op.unsupported_dtypes.get(impl.name, ())]


def _triton_kernels(impl: discover.Impl) -> list:
    """The @triton.jit objects a Triton variant launches (from the same reachability walk the line count uses)."""
    module = discover.triton_module(impl.op)
    names = count.triton_kernel_names(impl.source, impl.variant)
    return [(n, getattr(module, n)) for n in names if hasattr(module, n)]


def _triton_resources(impl: discover.Impl) -> list[dict]:
    """Per kernel: how many variants were compiled (autotune configs x dtypes), their register range, worst spills
    and shared memory, and the configs the autotuner chose."""
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
        chosen = sorted({str(c) for c in getattr(obj, "cache", {}).values()})
        found.append({"impl": impl.name, "kernel": name, "variants": len(compiled),
                      "registers": f"{min(regs)}-{max(regs)}" if min(regs) != max(regs) else str(regs[0]),
                      "spills": max(getattr(k, "n_spills", 0) or 0 for k in compiled),
                      "shared_bytes": max(getattr(getattr(k, "metadata", None), "shared", 0) or 0 for k in compiled),
                      "chosen_configs": chosen})
    return found


def _use_interpreter_autotune_stub(impl: discover.Impl) -> None:
    """Triton's autotuner benchmarks on a GPU; under the interpreter, run each config once instead (so every
    config is still executed) and keep the first."""
    if not env.interpreting():
        return

    def run_once(kernel_call, quantiles=None, **_):
        kernel_call()
        return [0.0, 0.0, 0.0]

    for _, obj in _triton_kernels(impl):
        if hasattr(obj, "configs") and hasattr(obj, "fn"):
            obj.do_bench = run_once


@dataclasses.dataclass
class RowOutcome:
    """Everything one implementation's row produced in a worker."""

    status: RowStatus
    checks: list = dataclasses.field(default_factory=list)
    timings: list = dataclasses.field(default_factory=list)
    jit: list = dataclasses.field(default_factory=list)
    resources: list = dataclasses.field(default_factory=list)
    captures: list = dataclasses.field(default_factory=list)


def run_op(op: Op, options: Options) -> OpResult:
    """Parent side: count and build here; run every implementation's row in the worker (see isolate)."""
    from . import isolate

    result = OpResult(op.name, op.summary, op.roofline, env.describe(), seed=options.seed)
    impls = discover.select(discover.implementations(op), options.impls)
    gpu = env.has_gpu()
    status: dict[str, RowStatus] = {i.name: RowStatus(i.name, "ok") for i in impls}

    for impl in impls:
        if impl.backend == "cuda":
            result.loc.append(count.count_cuda(impl.source, impl.variant, impl.name))
        elif impl.backend == "triton":
            result.loc.append(count.count_triton(impl.source, impl.variant, impl.name))

    cuda_impls = [i for i in impls if i.backend == "cuda"]
    if cuda_impls:
        try:
            built = build_mod.build(op.name, op.cuda_flags, progress=options.progress)
            _say(options, f"  {built.source}: {'built in %.1f s' % built.cold_s if built.built_now else 'cached'}"
                          f" (cold build {built.cold_s:.1f} s, warm load {built.warm_s:.2f} s)")
            for impl in cuda_impls:
                mine = set(count.cuda_kernel_names(impl.source, impl.variant))
                for k in built.kernels:
                    if k.base in mine:
                        result.build.append({"impl": impl.name, "cold_s": built.cold_s, "warm_s": built.warm_s,
                                             "kernel": k.kernel, "registers": k.registers,
                                             "spills": k.spill_bytes, "shared_bytes": k.shared_bytes,
                                             "stack_bytes": k.stack_bytes})
                if not gpu:
                    status[impl.name] = RowStatus(impl.name, "built (needs GPU to run)")
        except build_mod.BuildError as exc:
            for impl in cuda_impls:
                status[impl.name] = RowStatus(impl.name, "build failed", str(exc))
            print(f"\n{exc}\n", flush=True)
    capability = torch.cuda.get_device_capability() if gpu else None
    for impl in impls:
        if status[impl.name].status == "ok" and not gpu and impl.needs_gpu:
            status[impl.name] = RowStatus(impl.name, "needs GPU")
        elif status[impl.name].status == "ok" and (why := op.unavailable_reason(impl.name, capability)):
            status[impl.name] = RowStatus(impl.name, "skipped", why)

    pool = isolate.Worker(options.row_timeout_s) if options.isolate else isolate.InProcess()
    with pool:
        if options.time and gpu:
            result.ceilings["copy_gbps"] = pool.call("measure_copy_bandwidth", timeout_s=300)
            _say(options, f"  copy bandwidth: {result.ceilings['copy_gbps']:.0f} GB/s")
            if op.roofline == "memory":
                _measure_same_bytes_copies(pool, op, options, result)
        for impl in impls:
            if status[impl.name].status != "ok":
                continue
            _say(options, f"  {impl.name}")
            try:
                outcome = pool.call("run_row", op.name, impl.name, options)
            except isolate.RowFailure as failure:
                status[impl.name] = RowStatus(impl.name, failure.status, failure.message)
                _say(options, f"    {failure.status}: {failure.message.splitlines()[0]}")
                continue
            status[impl.name] = outcome.status
            result.checks += outcome.checks
            result.timings += outcome.timings
            result.jit += outcome.jit
            result.build += outcome.resources
            result.captures += outcome.captures
        result.isolation = {"enabled": options.isolate, "worker_starts": pool.starts,
                            "worker_start_s": round(pool.start_s, 3)}
    _relate_to_ceilings(result)
    result.rows = [status[i.name] for i in impls]
    return result


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


def measure_copy_bandwidth() -> float:
    return timing.copy_bandwidth(torch.device("cuda"))


def _measure_same_bytes_copies(pool, op: Op, options: Options, result: OpResult) -> None:
    """Parent side: the per-shape ceilings, measured once per run in the worker. Without them the report still
    has the large-buffer copy bandwidth, so a failure here is reported and the rows are timed all the same."""
    from . import isolate

    try:
        result.same_bytes_copies = pool.call("measure_same_bytes_copies", op.name, options)
    except isolate.RowFailure as failure:
        result.ceilings["same_bytes_copy_error"] = f"{failure.status}: {failure.message}"
        _say(options, f"  copy of the same bytes per shape: {failure.status}: {failure.message.splitlines()[0]}")
        return
    low = min(result.same_bytes_copies, key=lambda t: t.gbps, default=None)
    if low:
        _say(options, f"  copy of the same bytes per shape: {len(result.same_bytes_copies)} shape/dtype pairs, "
                      f"lowest {low.gbps:.0f} GB/s ({low.dtype} {low.shape})")


def measure_same_bytes_copies(op_name: str, options: Options) -> list[timing.Timing]:
    """Worker side: a copy of the same bytes for every timing size and dtype of the op (not per implementation:
    the copy does not depend on the row)."""
    op = discover.load_op(op_name)
    device = torch.device("cuda")
    l2 = timing.l2_bytes(device)
    return [timing.same_bytes_copy(op.bytes_moved(shape, dtype), device, l2, dtype=check_mod.dtype_name(dtype),
                                   shape=op.describe_shape(shape), graph=options.graph)
            for dtype in _dtypes(op, options) for shape in _timing_sizes(op, options)]


def run_row(op_name: str, impl_name: str, options: Options) -> RowOutcome:
    """Worker side: check, capture and time one implementation; every failure is recorded, not raised."""
    op = discover.load_op(op_name)
    impl = next(i for i in discover.implementations(op) if i.name == impl_name)
    out = RowOutcome(RowStatus(impl.name, "ok"))
    gpu = env.has_gpu()
    device = torch.device("cuda" if gpu else "cpu")
    dtypes = _row_dtypes(op, impl, _dtypes(op, options))
    try:
        if impl.backend == "cuda":
            build_mod.build(op.name, op.cuda_flags, progress=False)  # cached by the parent: a warm load
        if impl.backend == "triton":
            _use_interpreter_autotune_stub(impl)
        fn = impl.load()
    except Exception as exc:  # an import or registration error costs only this row
        out.status = RowStatus(impl.name, "error", _short_error(exc))
        return out

    capture_mod.raise_recompile_limit()
    shapes = list(op.check_shapes if gpu else (op.interpret_shapes or op.check_shapes[:3]))
    cases = [(shape, "random") for shape in shapes] + [
        (shape, name) for name in op.special_inputs for shape in shapes[:3]] + [
        (shape, check_mod.NON_CONTIGUOUS) for shape in shapes[1:3]]
    for dtype in dtypes:
        for n, (shape, inputs_name) in enumerate(c for c in cases if op.supports(impl.name, dtype, c[0])):
            start = time.perf_counter()
            out.checks.append(_check(op, impl, fn, dtype, shape, device, options.seed, inputs_name))
            if n == 0 and impl.backend == "triton":
                out.jit.append({"impl": impl.name, "dtype": check_mod.dtype_name(dtype),
                                "first_call_s": time.perf_counter() - start})
            if not cuda_context_healthy():
                out.status = RowStatus(impl.name, "crashed", f"CUDA context lost: {out.checks[-1].message}")
                return out
    if impl.backend == "triton":
        out.resources = _triton_resources(impl)
    _judge(out)

    if options.capture and gpu and impl.backend == "torch" and impl.variant.startswith("compile"):
        mode = impl.variant.removeprefix("compile").removeprefix("-") or "default"
        for dtype in dtypes:
            shape = op.bench_shapes[0]  # torch rows take every shape
            gen = torch.Generator(device=device).manual_seed(options.seed)
            try:
                out.captures.append(capture_mod.capture(op.torch_eager, op.make_inputs(shape, dtype, device, gen),
                                                        impl.name, mode, check_mod.dtype_name(dtype),
                                                        op.describe_shape(shape)))
                _progress()
            except Exception as exc:
                out.status = RowStatus(impl.name, "error", f"capture failed: {_short_error(exc)}")

    if options.time and gpu and out.status.status == "ok":  # a wrong kernel's speed means nothing
        l2 = timing.l2_bytes(device)
        for dtype in dtypes:
            for shape in (s for s in _timing_sizes(op, options) if op.supports(impl.name, dtype, s)):
                try:
                    out.timings.append(_time(op, impl, fn, dtype, shape, device, options, l2))
                except Exception as exc:
                    out.status = RowStatus(impl.name, "error", f"timing {check_mod.dtype_name(dtype)} "
                                                               f"{op.describe_shape(shape)}: {_short_error(exc)}")
                    return out
    # Checked again on fresh inputs once it has been called many times (after timing, where there was timing): an
    # implementation must not change its answers when warm, nor serve a result cached from earlier inputs.
    label = "random, after timing" if out.timings else "random, fresh inputs"
    for dtype in dtypes:
        for shape in [s for s in (shapes[0], shapes[-1]) if op.supports(impl.name, dtype, s)]:
            out.checks.append(_check(op, impl, fn, dtype, shape, device, options.seed + 1, "random", label=label))
    _judge(out)
    return out


def _check(op, impl, fn, dtype, shape, device, seed, inputs_name, label=None) -> check_mod.CheckResult:
    try:
        r = check_mod.check_case(op, impl.name, fn, dtype, shape, device, seed, inputs_name)
    except Exception as exc:
        tol = op.tolerance(dtype, shape)
        r = check_mod.CheckResult(impl.name, check_mod.dtype_name(dtype), op.describe_shape(shape), inputs_name,
                                  seed, False, "error", atol=tol.atol, rtol=tol.rtol, message=_short_error(exc))
    if label:
        r.inputs = label
    _progress()
    return r


def _judge(out: RowOutcome) -> None:
    bad = [c for c in out.checks if not c.ok]
    if bad and out.status.status == "ok":
        kind = "FAIL" if any(c.status == "FAIL" for c in bad) else bad[0].status
        out.status = RowStatus(out.status.impl, kind, f"{len(bad)} check(s) failed; first: {bad[0].dtype} "
                                                      f"{bad[0].shape} ({bad[0].inputs}): {bad[0].message}")


def _time(op, impl, fn, dtype, shape, device, options, l2) -> timing.Timing:
    nbytes = op.bytes_moved(shape, dtype)
    sets = timing.input_sets(
        lambda i: op.make_inputs(shape, dtype, device, torch.Generator(device=device).manual_seed(options.seed + i)),
        nbytes, l2)
    t = timing.time_calls(fn, sets, impl=impl.name, dtype=check_mod.dtype_name(dtype),
                          shape=op.describe_shape(shape), nbytes=nbytes, flops=op.flops(shape), graph=options.graph)
    if options.profile_check:  # a cross-check of the row's own kernels; the same-bytes copy needs none
        t.profiler_ms = timing.profiler_kernel_ms(timing.rotating(fn, sets))
        t.profiler_disagrees = timing.profiler_disagrees(t.median_ms, t.profiler_ms)
    _progress()
    return t


def _relate_to_ceilings(result: OpResult) -> None:
    eager = {(t.dtype, t.shape): t for t in result.timings if t.impl == "torch:eager"}
    copies = {(c.dtype, c.shape): c for c in result.same_bytes_copies}
    peak = result.ceilings.get("copy_gbps") if result.roofline == "memory" else None
    # The same-bytes copies get their fraction of the large-buffer peak too: how much of it a size allows at all.
    for t in result.timings + result.same_bytes_copies:
        if peak:
            t.fraction_of_ceiling, t.ceiling = t.gbps / peak, "copy bandwidth"
    for t in result.timings:
        base = eager.get((t.dtype, t.shape))
        if base:
            t.speedup_vs_eager = base.median_ms / t.median_ms
        if result.roofline == "compute" and base:
            t.fraction_of_ceiling, t.ceiling = t.tflops / base.tflops, "torch:eager (vendor library)"
        if copy := copies.get((t.dtype, t.shape)):
            t.fraction_of_same_bytes_copy = t.gbps / copy.gbps
