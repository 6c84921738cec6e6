"""What the kernel accounting's profiler costs a process, and why it runs after a row's timing, never before.

    python bench/profiler_startup.py [--import-first]

Prints, in this fresh process: the first torch.profiler session's start-up (CUPTI loading and the modules it
imports, the bulk of each row's "kernel accounting" phase in a report's phase summary) and the second's; with
--import-first, the import of those modules (compare.worker.import_profiler_modules, which a row's worker does
ahead of its turn) timed on its own before the first session; and, before and after that first session,
the host time of one small kernel launch and the GPU time of one large kernel (CUDA events, median). Once a process
has run a profiler session its launches stay slower on the host, so a worker profiled before its timing would report
larger host times, and its host-bound cells would be slower; the GPU time of a kernel is unchanged.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from compare import timing  # noqa: E402


def host_us_per_launch(x: torch.Tensor, launches: int = 20000) -> float:
    """Host time of one launch of a tiny kernel, back to back (the GPU keeps up: the host is what is measured)."""
    for _ in range(200):
        x.mul_(1.0)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(launches):
        x.mul_(1.0)
    seconds = time.perf_counter() - start
    torch.cuda.synchronize()
    return seconds / launches * 1e6


def gpu_ms(x: torch.Tensor, calls: int = 50) -> float:
    """Median GPU time of one kernel over a buffer larger than L2, by CUDA events around each call."""
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(calls):
        begin.record()
        x.mul_(1.0)
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end))
    return statistics.median(times)


def main() -> int:
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 1
    if "--import-first" in sys.argv[1:]:  # before any CUDA call: whether the import creates a CUDA context
        from compare import worker

        start = time.perf_counter()
        worker.import_profiler_modules()
        print(f"the profiler's modules imported first: {time.perf_counter() - start:.3f} s, CUDA context created "
              f"by the import: {torch.cuda.is_initialized()}")
    small = torch.ones(1 << 20, device="cuda")
    large = torch.ones(1 << 26, device="cuda")
    torch.cuda.synchronize()
    print(f"before any profiler session: {host_us_per_launch(small):.2f} us host per launch, "
          f"{gpu_ms(large):.4f} ms GPU per call of a 256 MB kernel")
    for which in ("first", "second"):
        start = time.perf_counter()
        timing.gpu_activities(lambda: small.mul_(2.0))
        print(f"{which} profiler session (one kernel): {time.perf_counter() - start:.3f} s")
    print(f"after it: {host_us_per_launch(small):.2f} us host per launch, "
          f"{gpu_ms(large):.4f} ms GPU per call of a 256 MB kernel")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
