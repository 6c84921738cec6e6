"""Timing on the GPU: CUDA events around each call with the L2 cache flushed before it (triton.testing.do_bench),
after warm-up calls that take JIT compilation, autotuning and torch.compile out of the numbers. Reported: the
median and the interquartile range of the per-call times."""
from __future__ import annotations

import dataclasses
import itertools
import math

import torch

NOISY_IQR_FRACTION = 0.10  # a timing whose IQR exceeds this fraction of its median is flagged


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
    speedup_vs_eager: float | None = None
    noisy: bool = False

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


def copy_bandwidth(device: torch.device, nbytes: int = 1 << 30) -> float:
    """The practical memory ceiling: GB/s of a device-to-device copy, counting bytes read plus bytes written."""
    src = torch.randn(nbytes // 4, device=device)
    dst = torch.empty_like(src)
    _, median, _ = measure(lambda: dst.copy_(src))
    return 2 * nbytes / (median * 1e-3) / 1e9


def l2_bytes(device: torch.device) -> int | None:
    props = torch.cuda.get_device_properties(device)
    return getattr(props, "L2_cache_size", None) or getattr(props, "l2_cache_size", None)
