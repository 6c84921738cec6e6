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

from compare import build, cli, discover, timing  # noqa: E402


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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("op")
    p.add_argument("--impls", type=cli.parse_list, required=True)
    p.add_argument("--dtype", default="float16", type=lambda s: cli.parse_dtypes(s)[0])
    p.add_argument("--shape", type=cli.parse_sizes, required=True)
    p.add_argument("--profile", action="store_true", help="also print where the host time goes (cProfile)")
    args = p.parse_args()
    op = discover.load_op(args.op)
    dtype = getattr(torch, args.dtype)
    device = torch.device("cuda")
    impls = discover.select(discover.implementations(op), args.impls)
    if any(i.backend == "cuda" for i in impls):
        build.build(op.name, op.cuda_flags, progress=False)
    for shape in args.shape:
        inputs = op.make_inputs(shape, dtype, device, torch.Generator(device=device).manual_seed(0))
        for impl in impls:
            fn = impl.load()
            for _ in range(3):  # JIT, autotuning
                fn(*inputs)
            torch.cuda.synchronize()
            host = timing.host_time_per_call(lambda: fn(*inputs))
            gpu = timing.profiler_kernel_ms(lambda: fn(*inputs)) * 1e3
            _, events, _, _ = timing.measure(lambda: fn(*inputs))
            print(f"{op.describe_shape(shape):24} {args.dtype:9} {impl.name:20} host {host:8.1f} us/call   "
                  f"kernels {gpu:8.1f} us/call   events {events * 1e3:8.1f} us/call", flush=True)
            if args.profile:
                print_host_profile(fn, inputs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
