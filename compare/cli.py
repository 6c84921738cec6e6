"""python -m compare: the command line."""
from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path

from .isolate import DEFAULT_ROW_TIMEOUT_S

DESCRIPTION = """\
Compare hand-written CUDA and Triton kernels for an op, with torch eager and torch.compile beside them.

For each implementation of the op: check it against a float64 reference (several shapes and dtypes, fresh random
inputs, outputs poisoned with NaN), time it against the device's measured ceiling, count its lines, report its
build time and register/shared-memory use, and capture the code torch.compile generates. Tables go to the terminal;
results/<gpu>/<op>.md, .csv, .json, .png and the captured inductor code go to files.

Without a GPU, Triton kernels run on the CPU through Triton's interpreter at small sizes (float32, float16), CUDA
sources are compiled (not run) if nvcc is present, lines are counted, and the rest is marked "needs GPU".

Exit status: 0 when every row passed, 1 when any row failed its checks, build or run, 2 for bad usage."""

EPILOG = """\
examples:
  python -m compare list                     the ops and their implementations
  python -m compare gelu                     everything for one op
  python -m compare all --quick              every op, two sizes each
  python -m compare gelu --impls cuda,triton:tuned --dtypes float32 --sizes 1M,256M
  python -m compare gelu --show inductor     also print what torch.compile generated
  python -m compare softmax --sanitize       its CUDA and Triton rows under compute-sanitizer (needs a GPU)
"""


def parse_sizes(text: str) -> list[tuple[int, ...]]:
    """'1M,4096x4096' -> [(1048576,), (4096, 4096)]; K/M/G are powers of two."""
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    sizes = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        dims = []
        for part in item.lower().split("x"):
            m = re.fullmatch(r"(\d+)([kmg]?)", part.strip())
            if not m:
                raise argparse.ArgumentTypeError(
                    f"bad size {item!r}: use element counts like 1048576, 1M or 4096x4096 (K, M, G = 2^10, 2^20, 2^30)")
            dims.append(int(m.group(1)) * scale[m.group(2).upper()])
        sizes.append(tuple(dims))
    return sizes


def parse_list(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


DTYPE_ALIASES = {"fp32": "float32", "f32": "float32", "fp16": "float16", "f16": "float16", "half": "float16",
                 "bf16": "bfloat16", "float32": "float32", "float16": "float16", "bfloat16": "bfloat16"}


def parse_dtypes(text: str) -> list[str]:
    out = []
    for d in parse_list(text):
        if d.lower() not in DTYPE_ALIASES:
            raise argparse.ArgumentTypeError(f"unknown dtype {d!r}: use float32, float16 or bfloat16 (fp32, fp16, bf16)")
        out.append(DTYPE_ALIASES[d.lower()])
    return out


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m compare", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ops", nargs="+", metavar="OP",
                   help="op name(s), 'all' for every op, 'list' to list them, or 'new NAME' for a skeleton")
    p.add_argument("--impls", type=parse_list, metavar="LIST",
                   help="only these rows: backends (cuda, triton, torch), names (cuda:vec) or globs (*:tuned)")
    p.add_argument("--dtypes", type=parse_dtypes, metavar="LIST", help="only these dtypes, e.g. fp32,bf16")
    p.add_argument("--sizes", type=parse_sizes, metavar="LIST", help="timing sizes instead of the op's, e.g. 1M,256M")
    p.add_argument("--quick", action="store_true", help="time two sizes only; results go to results/<gpu>/quick/")
    p.add_argument("--out", metavar="DIR", help="results folder (default results/<gpu>/)")
    p.add_argument("--seed", type=int, default=0, help="base seed of the random check inputs (default 0)")
    p.add_argument("--no-time", action="store_true", help="check only; skip timing")
    p.add_argument("--no-capture", action="store_true", help="skip capturing torch.compile output")
    p.add_argument("--show", choices=["inductor"], help="print the code torch.compile generated")
    p.add_argument("--graph", action="store_true",
                   help="also time each call as a CUDA-graph replay, for sizes where launch overhead dominates")
    p.add_argument("--profile-check", action="store_true",
                   help="also measure kernel time with torch.profiler and flag rows where it exceeds the "
                        "event timing (work the events did not see)")
    p.add_argument("--row-timeout", type=float, default=DEFAULT_ROW_TIMEOUT_S, metavar="S",
                   help="seconds an implementation may go without finishing a step (one check, capture or timing) "
                        "before its row is marked 'timed out' and its worker killed (default %(default)g); a row's total "
                        "time has no limit")
    p.add_argument("--in-process", action="store_true",
                   help="run every row in this process instead of a worker (easier to debug; one crash then "
                        "ends the run)")
    p.add_argument("--sanitize", action="store_true",
                   help="instead of checking and timing: run every CUDA and Triton row under NVIDIA's "
                        "compute-sanitizer at a few small check shapes (memcheck, and racecheck for rows that use "
                        "shared memory) and report errors per row; needs a GPU and the CUDA toolkit. --impls, "
                        "--dtypes, --sizes (the shapes to run), --seed and --row-timeout apply; --out FILE also writes "
                        "the results to FILE as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = make_parser()
    args = parser.parse_args(argv)

    from . import env

    env.use_triton_interpreter_if_no_gpu()
    # Triton's JIT time is part of the comparison: compile into an empty cache unless the user chose one.
    os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="lab-triton-cache-"))

    from . import discover

    command = "python -m compare " + " ".join(shlex.quote(a) for a in argv)
    if args.ops[0] == "list":
        return list_ops()
    if args.ops[0] == "new":
        from . import scaffold

        if len(args.ops) != 2:
            parser.error("usage: python -m compare new NAME")
        return scaffold.main(args.ops[1])
    names = discover.op_names() if args.ops == ["all"] else args.ops
    try:
        ops = [discover.load_op(n) for n in names]
    except (discover.UnknownOp, discover.SpecError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.sanitize:
        from . import sanitize

        return sanitize.main(ops, args.impls, dtypes=args.dtypes, sizes=args.sizes, out=args.out, seed=args.seed,
                             timeout_s=args.row_timeout)

    from . import report, runner

    options = runner.Options(dtypes=args.dtypes, impls=args.impls, quick=args.quick, sizes=args.sizes,
                             seed=args.seed, time=not args.no_time, capture=not args.no_capture,
                             isolate=not args.in_process, row_timeout_s=args.row_timeout, graph=args.graph,
                             profile_check=args.profile_check)
    failed = []
    for op in ops:
        print(f"== {op.name}", flush=True)
        try:
            result = runner.run_op(op, options)
        except (discover.UnknownOp, discover.SpecError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        report.print_terminal(result, show_inductor=args.show == "inductor")
        out_dir = report.default_out_dir(args.quick, op.name) if args.out is None else Path(args.out)
        written = report.write_files(result, out_dir, command)
        print(f"\nwrote {', '.join(env.relpath(p) for p in written.values())}")
        failed += [f"{op.name} {r.impl}: {r.status}" for r in result.failed_rows()]
    if failed:
        print("\nFAILED:\n  " + "\n  ".join(failed), file=sys.stderr)
        return 1
    return 0


def list_ops() -> int:
    from tabulate import tabulate

    from . import discover

    rows = []
    for name in discover.op_names():
        try:
            op = discover.load_op(name)
            rows.append([name, op.summary, ", ".join(i.name for i in discover.implementations(op))])
        except Exception as exc:  # a broken spec is listed, not fatal
            rows.append([name, f"error: {exc}", ""])
    print(tabulate(rows, headers=["op", "summary", "implementations"]))
    return 0
