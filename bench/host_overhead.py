"""Host time per call: how long the Python side of a row takes to return (argument checks, allocation, descriptor
building, autotuner dispatch, the launch itself), against the GPU time of the kernels it launches, and with
--profile where that host time goes. The comparison tables carry the same host time (compare/timing.py); this is
the closer look at one op.

    python bench/host_overhead.py matmul --impls triton:persistent,triton:tuned,torch:eager --dtype float16 \
        --shape 1024x1024x1024

When host time exceeds the GPU time, back-to-back calls are bound by the host: a timing with events (which also
covers the gap between the L2 flush and the kernel, once the host falls behind) then includes part of that overhead,
while a CUDA-graph replay (`python -m compare OP --graph`) shows the kernels alone.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from compare import build, caches, cli, discover, timing  # noqa: E402


def print_host_profile(fn, inputs, calls: int = 500, top: int = 20) -> None:
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn(*inputs)
    profiler.disable()
    torch.cuda.synchronize()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def print_copy_both_ways(shape: str, dtype: str, nbytes: int, device, clean_flush) -> None:
    """The same-bytes copy of the result tables (half the op's bytes read, half written), timed after each flush."""
    src = torch.ones(nbytes // 2, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    copy = lambda: dst.copy_(src)  # noqa: E731
    events, clean = timing.measure(copy)[1], timing.measure(copy, flush=clean_flush)[1]
    print(f"{shape:24} {dtype:9} {timing.SAME_BYTES_COPY:20} events {events * 1e3:8.1f} us/call   "
          f"events, clean L2 {clean * 1e3:8.1f} us/call", flush=True)


def print_autotuned_configs(backend: str, printed: set) -> None:
    """The configs autotuned Triton kernels chose since the last call (one per kernel and tuning key, remembered in
    `printed`): a profile of a Triton row (ncu, nsys) says which kernel ran, this says with which warps, stages and
    block sizes."""
    if backend != "triton":
        return
    from triton.runtime.autotuner import Autotuner
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("triton_src"):
            continue
        for attr, kernel in sorted(vars(module).items()):
            if isinstance(kernel, Autotuner):
                for key, config in kernel.cache.items():
                    if (name, attr, key) in printed:
                        continue
                    printed.add((name, attr, key))
                    print(f"    autotuned {name}.{attr} key {key}: {config}", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("op")
    p.add_argument("--impls", type=cli.parse_list, required=True)
    p.add_argument("--dtype", default="float16", type=lambda s: cli.parse_dtypes(s)[0])
    p.add_argument("--shape", type=cli.parse_sizes, required=True)
    p.add_argument("--profile", action="store_true", help="also print where the host time goes (cProfile)")
    p.add_argument("--clean-flush", action="store_true",
                   help="also time each row's events, and a copy of the op's bytes both ways, after a flush that "
                        "leaves the L2 clean (timing.clean_flush_fn): what the memset's dirty lines cost a call")
    p.add_argument("--profiler-range", action="store_true",
                   help="instead of timing, call each row once more, warm, between cudaProfilerStart and Stop: run "
                        "under `ncu --profile-from-start off` (or nsys) to profile exactly one call's kernels")
    opts = p.parse_args(argv)
    # The lab's compile caches, as `python -m compare` uses them: Triton's autotuning results are kept there, so an
    # autotuned row runs the config a comparison on this machine chose, and a profile (--profiler-range) is of the
    # kernel that comparison timed. Autotuned afresh, the pick can move between configs within the autotuner's noise
    # (results/nvidia-h200/norm-forward-tile-ahead/README.md).
    with caches.compile_caches():
        return measure(opts)


def measure(opts) -> int:
    op = discover.load_op(opts.op)
    dtype = getattr(torch, opts.dtype)
    device = torch.device("cuda")
    impls = discover.select(discover.implementations(op), opts.impls)
    if any(i.backend == "cuda" for i in impls):
        build.build(discover.base_name(op.name), op.cuda_flags, progress=False)
    clean_flush = timing.clean_flush_fn() if opts.clean_flush else None
    printed = set()
    for shape in opts.shape:
        inputs = op.make_inputs(shape, dtype, device, torch.Generator(device=device).manual_seed(0))
        if clean_flush:
            print_copy_both_ways(op.describe_shape(shape), opts.dtype, op.bytes_moved(shape, dtype), device,
                                 clean_flush)
        for impl in impls:
            fn, args = impl.load(), inputs
            if hasattr(fn, "lab_prepare"):  # a backward pass: its forward once, then the backward alone, as timed
                args, fn = fn.lab_prepare(*inputs), fn.lab_timed
            for _ in range(3):  # JIT, autotuning
                fn(*args)
            torch.cuda.synchronize()
            if opts.profiler_range:
                torch.cuda.profiler.start()
                fn(*args)
                torch.cuda.synchronize()
                torch.cuda.profiler.stop()
                print(f"{op.describe_shape(shape):24} {opts.dtype:9} {impl.name:20} one call profiled", flush=True)
                print_autotuned_configs(impl.backend, printed)
                continue
            host = timing.host_time_per_call(lambda: fn(*args))
            gpu = timing.profiler_kernel_ms(lambda: fn(*args)) * 1e3
            _, events, _, _ = timing.measure(lambda: fn(*args))
            clean = ""
            if clean_flush:
                clean_ms = timing.measure(lambda: fn(*args), flush=clean_flush)[1]
                clean = f"   events, clean L2 {clean_ms * 1e3:8.1f} us/call"
            print(f"{op.describe_shape(shape):24} {opts.dtype:9} {impl.name:20} host {host:8.1f} us/call   "
                  f"kernels {gpu:8.1f} us/call   events {events * 1e3:8.1f} us/call{clean}", flush=True)
            print_autotuned_configs(impl.backend, printed)
            if opts.profile:
                print_host_profile(fn, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
