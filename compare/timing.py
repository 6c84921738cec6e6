"""Timing on the GPU: CUDA events around each call with the L2 cache flushed before it (triton.testing.do_bench),
after warm-up calls that take JIT compilation, autotuning and torch.compile out of the numbers. Reported: the
median and the interquartile range of the per-call times.

Beside each timing under HOST_CHECK_BELOW_MS, the host's own time per call: how long the Python side of a call
(argument checks, allocation, an autotuner's dispatch, a launcher, torch.compile's guards) takes to return. do_bench
queues its L2 flush just before each call, and the flush hides host work only up to its own length; where the host
needs as long per call as the measured time, the number may measure the host rather than the GPU, and calls made
back to back at that size are bound by the host. Such timings are marked host-bound."""
from __future__ import annotations

import dataclasses
import itertools
import math
import statistics
import time

import torch

NOISY_IQR_FRACTION = 0.10  # a timing whose IQR exceeds this fraction of its median is flagged
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

    @property
    def iqr_ms(self) -> float:
        return self.q75_ms - self.q25_ms


def measure(fn, warmup_calls: int = 3, warmup_ms: int = 25, rep_ms: int = 100) -> tuple[float, float, float]:
    """(q25, median, q75) in milliseconds."""
    from triton.testing import do_bench

    for _ in range(warmup_calls):
        fn()
    torch.cuda.synchronize()
    q25, q50, q75 = do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=[0.25, 0.5, 0.75])
    return q25, q50, q75


def input_sets(make, nbytes: int, l2_bytes: int | None) -> list:
    """Inputs small enough to sit in L2 are rotated among several copies, so no call finds its data already
    cached by the previous one (do_bench also flushes L2 between calls; this keeps it honest without that)."""
    copies = 1
    if l2_bytes and nbytes < 2 * l2_bytes:
        copies = min(8, math.ceil(4 * l2_bytes / max(nbytes, 1)))
    return [make(i) for i in range(copies)]


def rotating(fn, sets):
    cycle = itertools.cycle(sets)
    return lambda: fn(*next(cycle))


def time_calls(fn, sets, *, impl: str, dtype: str, shape: str, nbytes: int, flops: int,
               graph: bool = False) -> Timing:
    """fn(*inputs) timed over the rotating input sets, and with graph also as CUDA-graph replays: the one method
    behind every number in a timing table, the implementations' and the same-bytes copy's alike."""
    q25, median, q75 = measure(rotating(fn, sets))
    t = Timing(impl, dtype, shape, median, q25, q75, nbytes, flops, nbytes / median / 1e6, flops / median / 1e9,
               noisy=(q75 - q25) > NOISY_IQR_FRACTION * median)
    if median < HOST_CHECK_BELOW_MS and torch.cuda.is_available():
        t.host_us = host_time_per_call(rotating(fn, sets))
        t.host_bound = t.host_us >= median * 1e3
    if graph:
        t.graph_median_ms = measure_graph([lambda s=s: fn(*s) for s in sets])[1]
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
    same input rotation for sizes that fit in L2. At small sizes launch latency and the ramp-up of a wave keep even
    this copy far below copy_bandwidth; no kernel moving the same bytes escapes those costs either."""
    half = nbytes // 2
    # One destination for every source, as a row's output lands in the same allocator block call after call.
    dst = torch.empty(half, dtype=torch.uint8, device=device)
    gen = torch.Generator(device=device).manual_seed(0)
    sets = input_sets(lambda i: (dst, torch.randint(0, 256, (half,), dtype=torch.uint8, device=device,
                                                    generator=gen)), nbytes, l2)
    return time_calls(lambda d, s: d.copy_(s), sets, impl=SAME_BYTES_COPY, dtype=dtype, shape=shape,
                      nbytes=2 * half, flops=0, graph=graph)


def copy_bandwidth(device: torch.device, nbytes: int = 1 << 30) -> float:
    """The practical memory ceiling: GB/s of a device-to-device copy, counting bytes read plus bytes written."""
    src = torch.randn(nbytes // 4, device=device)
    dst = torch.empty_like(src)
    _, median, _ = measure(lambda: dst.copy_(src))
    return 2 * nbytes / (median * 1e-3) / 1e9


def l2_bytes(device: torch.device) -> int | None:
    props = torch.cuda.get_device_properties(device)
    return getattr(props, "L2_cache_size", None) or getattr(props, "l2_cache_size", None)


def _flush_fn():
    """The L2 flush do_bench uses between calls (a 256 MB memset)."""
    from triton import runtime

    cache = runtime.driver.active.get_empty_cache_for_benchmark()
    return lambda: runtime.driver.active.clear_cache(cache)


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
    return measure(lambda: next(cycle).replay())


def profiler_kernel_ms(fn, calls: int = 20) -> float:
    """GPU time per call of every kernel `fn` launches, on any stream, from torch.profiler (CUPTI). Unlike events
    on the current stream, this also sees work sent to other streams; the flush kernels are left out."""
    from torch.profiler import ProfilerActivity, profile

    flush = _flush_fn()

    def kernel_times(run):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
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
