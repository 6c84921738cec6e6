"""Timing on the GPU: CUDA events around each call with the L2 cache flushed before it (the method of
triton.testing.do_bench), after warm-up calls that take JIT compilation, autotuning and torch.compile out of the
numbers, and at least MIN_SAMPLES timed calls however long each takes. Reported: the median and the interquartile
range of the per-call times, and how many calls they come from.

Beside each timing under HOST_CHECK_BELOW_MS, the host's own time per call: how long the Python side of a call
(argument checks, allocation, an autotuner's dispatch, a launcher, torch.compile's guards) takes to return. do_bench
queues its L2 flush just before each call, and the flush hides host work only up to its own length; where the host
needs as long per call as the measured time, the number may measure the host rather than the GPU, and calls made
back to back at that size are bound by the host. Such timings are marked host-bound."""
from __future__ import annotations

import contextlib
import dataclasses
import itertools
import statistics
import time
import warnings

import torch

NOISY_IQR_FRACTION = 0.10  # a timing whose IQR exceeds this fraction of its median is flagged
MIN_SAMPLES = 10  # timed calls per timing, however long one call takes (compare.schedule.MIN_SAMPLES)
# Host time per call is measured for timings shorter than this; a Python call's overhead (tens of microseconds)
# cannot bind a call that keeps the GPU busy for longer.
HOST_CHECK_BELOW_MS = 1.0


@dataclasses.dataclass
class Timing:
    impl: str
    dtype: str
    shape: str
    median_ms: float
    q25_ms: float
    q75_ms: float
    bytes: int
    flops: int
    gbps: float
    tflops: float
    fraction_of_ceiling: float | None = None
    ceiling: str = ""
    # Memory-bound ops: GB/s over that of a plain copy of the same bytes at this shape (see same_bytes_copy)
    fraction_of_same_bytes_copy: float | None = None
    speedup_vs_eager: float | None = None
    noisy: bool = False
    # --graph: the same calls captured in CUDA graphs and replayed (no Python or launch overhead per call)
    graph_median_ms: float | None = None
    # --profile-check: GPU kernel time per call from torch.profiler, for comparison with the events' median
    profiler_ms: float | None = None
    profiler_disagrees: bool = False
    # Microseconds for a call to return on the host, GPU idle beforehand (timings under HOST_CHECK_BELOW_MS only)
    host_us: float | None = None
    # host_us >= the median: at this size the host can't issue calls as fast as the GPU finishes them
    host_bound: bool = False
    samples: int = 0  # timed calls behind the median
    implausible: str = ""  # why this timing can't be right (compare.accounting), if it can't

    @property
    def iqr_ms(self) -> float:
        return self.q75_ms - self.q25_ms


def measure(fn, warmup_calls: int = 3, warmup_ms: float = 25, rep_ms: float = 100,
            min_samples: int = MIN_SAMPLES, on_timed=None, before=None, flush=None) -> tuple[float, float, float, int]:
    """(q25, median, q75) in milliseconds and the number of timed calls: the method of triton.testing.do_bench
    (warm-up calls, then CUDA events around each call with the 256 MB L2 flush queued before it), with at least
    min_samples timed calls however long one call takes. on_timed(True/False) is called around the timed calls,
    so a caller can tell them from the warm-up calls. before(), where given, runs ahead of each flush, outside the
    events: an in-place call's input restored, so that every timed call does the same work on the same values.
    flush: what runs before each call instead of do_bench's memset (clean_flush_fn: bench/host_overhead.py)."""
    flush = flush or _flush_fn()
    for _ in range(warmup_calls):
        if before:
            before()
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        if before:
            before()
        flush()
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate_ms = max(start.elapsed_time(end) / 5, 1e-4)
    for _ in range(max(1, int(warmup_ms / estimate_ms))):
        if before:
            before()
        fn()
    samples = max(min_samples, int(rep_ms / estimate_ms))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(samples)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(samples)]
    if on_timed:
        on_timed(True)
    for i in range(samples):
        if before:
            before()
        flush()
        starts[i].record()
        fn()
        ends[i].record()
    if on_timed:
        on_timed(False)
    torch.cuda.synchronize()
    times = torch.tensor([s.elapsed_time(e) for s, e in zip(starts, ends)], dtype=torch.float64)
    q25, q50, q75 = torch.quantile(times, torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64)).tolist()
    return q25, q50, q75, samples


def rotating(fn, sets):
    """A call of fn on the next input set, round and round."""
    cycle = itertools.cycle(sets)
    return lambda: fn(*next(cycle))


def time_calls(call, *, impl: str, dtype: str, shape: str, nbytes: int, flops: int, graph: bool = False,
               on_timed=None, graph_calls=None, before=None) -> Timing:
    """call() timed (it rotates among input sets itself), and with graph also as CUDA-graph replays of graph_calls
    (one per input set): the one method behind every number in a timing table, the implementations' and the
    same-bytes copy's alike. before: see measure (the replays run without it: only their times are used)."""
    q25, median, q75, samples = measure(call, on_timed=on_timed, before=before)
    t = Timing(impl, dtype, shape, median, q25, q75, nbytes, flops, nbytes / median / 1e6, flops / median / 1e9,
               noisy=(q75 - q25) > NOISY_IQR_FRACTION * median, samples=samples)
    if median < HOST_CHECK_BELOW_MS and torch.cuda.is_available():
        t.host_us = host_time_per_call(call)
        t.host_bound = t.host_us >= median * 1e3
    if graph:
        t.graph_median_ms = measure_graph(graph_calls or [call])[1]
    return t


def host_time_per_call(call, calls: int = 21) -> float:
    """Median microseconds for call() to return, each call made with the GPU idle (synchronized before it), so the
    launch never waits for room in the GPU's queue: what is measured is the host's own work for one call."""
    times = []
    for _ in range(calls):
        torch.cuda.synchronize()
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    torch.cuda.synchronize()
    return statistics.median(times) * 1e6


SAME_BYTES_COPY = "copy (same bytes)"  # the per-shape ceiling's line in the timing tables; not an implementation


def same_bytes_copy(nbytes: int, device: torch.device, l2: int | None, *, dtype: str, shape: str,
                    graph: bool = False) -> Timing:
    """The per-shape memory ceiling: a plain device-to-device copy (dst.copy_(src) on uint8, a cudaMemcpyAsync)
    that moves the op's nbytes, half read and half written, timed by time_calls exactly as the rows are, with the
    same number of rotating input sets. At small sizes launch latency and the ramp-up of a wave keep even this copy
    far below copy_bandwidth; no kernel moving the same bytes escapes those costs either."""
    from .schedule import input_set_count

    half = nbytes // 2
    # One destination for every source, as a row's output lands in the same allocator block call after call.
    dst = torch.empty(half, dtype=torch.uint8, device=device)
    gen = torch.Generator(device=device).manual_seed(0)
    sets = [(dst, torch.randint(0, 256, (half,), dtype=torch.uint8, device=device, generator=gen))
            for _ in range(input_set_count(nbytes, l2))]
    copy = lambda d, s: d.copy_(s)  # noqa: E731
    return time_calls(rotating(copy, sets), impl=SAME_BYTES_COPY, dtype=dtype, shape=shape, nbytes=2 * half,
                      flops=0, graph=graph, graph_calls=[lambda s=s: copy(*s) for s in sets])


def copy_bandwidth(device: torch.device, nbytes: int = 1 << 30) -> float:
    """The practical memory ceiling: GB/s of a device-to-device copy, counting bytes read plus bytes written."""
    src = torch.randn(nbytes // 4, device=device)
    dst = torch.empty_like(src)
    _, median, _, _ = measure(lambda: dst.copy_(src))
    return 2 * nbytes / (median * 1e-3) / 1e9


def l2_bytes(device: torch.device) -> int | None:
    props = torch.cuda.get_device_properties(device)
    return getattr(props, "L2_cache_size", None) or getattr(props, "l2_cache_size", None)


def _flush_fn():
    """The L2 flush do_bench uses between calls (a 256 MB memset)."""
    from triton import runtime

    cache = runtime.driver.active.get_empty_cache_for_benchmark()
    return lambda: runtime.driver.active.clear_cache(cache)


def clean_flush_fn():
    """A flush that leaves the L2 clean: do_bench's memset, then a read of another 256 MB buffer. The memset alone
    leaves the L2 full of dirty lines, which the timed call writes back to DRAM as its own accesses evict them; after
    the read the call owes no write-back. It also runs about twice as long on the GPU, hiding that much more of a
    call's host time (results/nvidia-h200/flush-write-back/). Not the lab's timing: bench/host_overhead.py's
    --clean-flush."""
    memset = _flush_fn()
    buffer = torch.ones(64 << 20, dtype=torch.int32, device="cuda")
    total = torch.empty((), dtype=torch.int64, device="cuda")

    def flush():
        memset()
        torch.sum(buffer, dim=0, dtype=torch.int64, out=total)
    return flush


def measure_graph(calls) -> tuple[float, float, float]:
    """Each call (one per rotating input set) captured once into a CUDA graph, then replayed under do_bench: what
    is left is kernel time plus one graph launch, with the Python and per-kernel launch overhead gone. The L2 flush
    still runs between replays, outside the graphs."""
    for call in calls:  # JIT, autotuning and allocator growth must happen before capture
        call()
    torch.cuda.synchronize()
    graphs = []
    for call in calls:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            call()
        graphs.append(graph)
    cycle = itertools.cycle(graphs)
    return measure(lambda: next(cycle).replay())[:3]


@contextlib.contextmanager
def cuda_profile():
    """torch.profiler over GPU activity only, without the notice some torch versions print on every profile after
    the first in a process (that events of earlier profiles are not kept: none is wanted here)."""
    from torch.profiler import ProfilerActivity, profile

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Profiler clears events.*")
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            yield prof


def profiler_kernel_ms(fn, calls: int = 20) -> float:
    """GPU time per call of every kernel `fn` launches, on any stream, from torch.profiler (CUPTI). Unlike events
    on the current stream, this also sees work sent to other streams; the flush kernels are left out."""
    flush = _flush_fn()

    def kernel_times(run):
        with cuda_profile() as prof:
            run()
            torch.cuda.synchronize()
        times = {}
        for evt in prof.key_averages():
            total = getattr(evt, "self_device_time_total", None)
            if total is None:
                total = getattr(evt, "self_cuda_time_total", 0)
            if total:
                times[evt.key] = total
        return times

    flush_names = set(kernel_times(lambda: [flush() for _ in range(3)]))
    fn()
    torch.cuda.synchronize()

    def run():
        for _ in range(calls):
            flush()
            fn()

    times = kernel_times(run)
    return sum(t for name, t in times.items() if name not in flush_names) / calls / 1e3


def profiler_disagrees(events_ms: float, profiler_ms: float) -> bool:
    """Kernel time the events did not see (work on another stream, say) shows as profiler time well above the
    events' median. The other way round is normal for small sizes: events also count launch gaps."""
    return profiler_ms > 1.10 * events_ms + 0.002


def gpu_activities(fn) -> list[dict]:
    """Every GPU activity one fn() causes, in launch order, from torch.profiler (CUPTI): kernels, memsets and
    copies, each with its name, the stream it ran on (CUPTI's stream id) and its duration in microseconds."""
    from torch.autograd import DeviceType

    with cuda_profile() as prof:
        fn()
        torch.cuda.synchronize()
    found = []
    for evt in prof.profiler.kineto_results.events():
        if evt.device_type() != DeviceType.CUDA:
            continue
        found.append({"name": evt.name(), "stream": int(evt.device_resource_id()), "start_ns": int(evt.start_ns()),
                      "us": evt.duration_ns() / 1e3})
    return sorted(found, key=lambda a: a["start_ns"])
