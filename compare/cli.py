"""python -m compare: the command line."""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import os
import re
import shlex
import sys
import tempfile
import warnings
from pathlib import Path

from .isolate import DEFAULT_ROW_TIMEOUT_S

DESCRIPTION = """\
Compare hand-written CUDA and Triton kernels for an op, with torch eager and torch.compile beside them (and the
vendor library's own entry points where the op's spec names them, rows torch:<name>), and the kernels of other
projects that the op's spec names as peers (rows peer:<name>, skipped where not installed).

For each implementation of the op: check it against a float64 reference (several shapes and dtypes, fresh random
inputs, outputs poisoned with NaN), time it against the device's measured ceiling, count its lines, report its
build time and register/shared-memory use, and capture the code torch.compile generates. Tables go to the terminal;
results/<gpu>/<op>.md, .csv, .json, .checks.csv.gz (every check case), .png and the captured inductor code go
to files.

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
        if 0 in dims:
            raise argparse.ArgumentTypeError(f"bad size {item!r}: every dimension must be at least 1")
        sizes.append(tuple(dims))
    return sizes


def positive_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds, e.g. 600") from None
    if not (seconds > 0 and math.isfinite(seconds)):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, not {text}")
    return seconds


def positive_int(text: str) -> int:
    value = non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give 1 or more")
    return value


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number, e.g. 0") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def parse_list(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


DTYPE_ALIASES = {"fp32": "float32", "f32": "float32", "fp16": "float16", "f16": "float16", "half": "float16",
                 "bf16": "bfloat16", "float32": "float32", "float16": "float16", "bfloat16": "bfloat16",
                 "fp8": "float8_e4m3fn", "e4m3": "float8_e4m3fn", "float8_e4m3fn": "float8_e4m3fn"}


def parse_dtypes(text: str) -> list[str]:
    out = []
    for d in parse_list(text):
        if d.lower() not in DTYPE_ALIASES:
            raise argparse.ArgumentTypeError(f"unknown dtype {d!r}: use float32, float16, bfloat16 or float8_e4m3fn "
                                             f"(fp32, fp16, bf16, fp8)")
        out.append(DTYPE_ALIASES[d.lower()])
    return out


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m compare", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ops", nargs="+", metavar="OP",
                   help="op name(s), 'all' for every op, 'list' to list them, 'new NAME' for a skeleton, or "
                        "'summary [FOLDER]' to write FOLDER/README.md (default results/; --out FILE to choose) from "
                        "the full results of every GPU")
    p.add_argument("--impls", type=parse_list, metavar="LIST",
                   help="only these rows: backends (cuda, triton, peer, torch), names (cuda:vec) or globs "
                        "(*:tuned); each must match a row of each op named (with 'all': of some op, and ops it "
                        "matches none of are skipped)")
    p.add_argument("--dtypes", type=parse_dtypes, metavar="LIST", help="only these dtypes, e.g. fp32,bf16")
    p.add_argument("--sizes", type=parse_sizes, metavar="LIST", help="timing sizes instead of the op's, e.g. 1M,256M")
    p.add_argument("--quick", action="store_true", help="time two sizes only; results go to results/<gpu>/quick/")
    p.add_argument("--out", metavar="DIR",
                   help="results folder (default results/<gpu>/; a run filtered by --impls, --dtypes or --sizes "
                        "goes to results/<gpu>/partial/, leaving the full results as they are)")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="base seed of the random check inputs, 0 or more (default 0)")
    p.add_argument("--no-time", action="store_true", help="check only; skip timing")
    p.add_argument("--no-capture", action="store_true", help="skip capturing torch.compile output")
    p.add_argument("--cold", action="store_true",
                   help="compile Triton kernels and torch.compile graphs into empty caches, as on a fresh machine "
                        "(default: keep them between runs in the lab's cache folder, with Triton's autotuning "
                        "results; the report then gives the cold first call recorded when the cache was filled)")
    p.add_argument("--show", choices=["inductor"], help="print the code torch.compile generated")
    p.add_argument("--graph", action="store_true",
                   help="also time each call as a CUDA-graph replay, for sizes where launch overhead dominates")
    p.add_argument("--profile-check", action="store_true",
                   help="also measure kernel time with torch.profiler and flag rows where it exceeds the "
                        "event timing (work the events did not see)")
    p.add_argument("--row-timeout", type=positive_seconds, default=DEFAULT_ROW_TIMEOUT_S, metavar="S",
                   help="seconds an implementation may go without finishing a step (one check, capture or timing) "
                        "before its row is marked 'timed out' and its worker killed (default %(default)g); a row's total "
                        "time has no limit")
    p.add_argument("--in-process", action="store_true",
                   help="run every row in this process instead of a worker (easier to debug; one crash then "
                        "ends the run)")
    p.add_argument("--check-rows", type=positive_int, default=1, metavar="N",
                   help="check up to N rows at once, each in its own worker, on the one GPU; a timed cell and the "
                        "kernel accounting still have the GPU to themselves, every other row waiting, and so does a "
                        "row's first call at each shape where it autotunes (default 1: one row after another)")
    p.add_argument("--gpus", metavar="WHICH",
                   help="share each op's rows out over several GPUs of this host: 'all', a count (2: the first two) "
                        "or indices (0,2); each GPU measures its own ceilings, GPUs of different models write a "
                        "results folder each")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="run the rows as Ray tasks of one GPU each on the Ray cluster at ADDRESS ('auto': the one "
                        "this machine belongs to), one results folder per GPU model that answered; needs the "
                        "optional extra: pip install -e \".[cluster]\"")
    p.add_argument("--gpu-type", metavar="TYPE",
                   help="with --cluster: only GPUs of this Ray accelerator type, e.g. H100")
    p.add_argument("--sanitize", action="store_true",
                   help="instead of checking and timing: run every CUDA and Triton row under NVIDIA's "
                        "compute-sanitizer at a few small check shapes (memcheck, and racecheck for rows that use "
                        "shared memory) and report errors per row; needs a GPU and the CUDA toolkit. --impls, "
                        "--dtypes, --sizes (the shapes to run), --seed and --row-timeout apply; --out FILE also writes "
                        "the results to FILE as JSON")
    p.add_argument("--backward", action="store_true",
                   help="with 'new NAME': a skeleton whose op has a gradient, each row a forward and backward pair "
                        "(README, 'Adding an op')")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.ops[0] == "summary":  # reads result files only: before any GPU or compiler set-up
        from . import summary

        return summary.main(parser, args)
    spread = [name for name, value in (("--gpus", args.gpus), ("--cluster", args.cluster)) if value]
    clashing = [name for name, value in (("--in-process", args.in_process), ("--sanitize", args.sanitize)) if value]
    if len(spread) > 1 or (spread and clashing):
        parser.error(f"{' and '.join(spread + clashing)} cannot be used together")
    if args.gpu_type and not args.cluster:
        parser.error("--gpu-type chooses GPUs of a Ray cluster: give --cluster ADDRESS too")
    # Before any work: a typo in --out should cost nothing, not a run whose results then cannot be written.
    if args.out is not None and (problem := out_problem(Path(args.out), is_file=args.sanitize)):
        parser.error(f"argument --out: {problem}")

    from . import caches

    with interpreter_warnings_hidden(), caches.compile_caches(cold=args.cold):
        if args.ops[0] not in ("list", "new") and not (args.in_process or args.sanitize or args.gpus or args.cluster):
            from . import isolate

            # The rows' fork server starts now, in this environment, before this process imports torch: its own
            # imports (seconds) go on beside this process's and the ops' loading, not before the first worker
            isolate.worker_context()
        from . import env

        env.use_triton_interpreter_if_no_gpu()
        return run(parser, args, argv)


def run(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> int:
    """Everything after the command line is read and checked: list, new, or the comparison of the ops named."""
    from . import discover, env

    command = "python -m compare " + " ".join(shlex.quote(a) for a in argv)
    if args.ops[0] == "list":
        return list_ops()
    if args.ops[0] == "new":
        from . import scaffold

        if len(args.ops) != 2:
            parser.error("usage: python -m compare new NAME [--backward]")
        return scaffold.main(args.ops[1], args.backward)
    if args.backward:
        parser.error("--backward goes with 'new NAME' (a skeleton with a gradient); a run of ops takes its passes "
                     "by name: OP-backward, OP-fwd-bwd")
    names = discover.op_names() if args.ops == ["all"] else args.ops
    try:
        ops = [discover.load_op(n) for n in names]
        rows = choose_rows(ops, args.impls, across_ops=args.ops == ["all"])
    except (discover.UnknownOp, discover.SpecError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.dtypes and args.ops != ["all"]:  # `all` runs each op in the dtypes it has among those asked for
        for op in ops:
            has = [str(d).removeprefix("torch.") for d in op.dtypes]
            if not set(args.dtypes) & set(has):
                print(f"error: {op.name} takes {', '.join(has)}; --dtypes asked for {', '.join(args.dtypes)}",
                      file=sys.stderr)
                return 2
    if args.sanitize:
        from . import sanitize

        chosen = [op for op in ops if rows[op.name][1]]
        return sanitize.main(chosen, {op.name: rows[op.name][0] for op in chosen}, dtypes=args.dtypes,
                             sizes=args.sizes, out=args.out, seed=args.seed, timeout_s=args.row_timeout)

    from . import cluster, fanout, paths, report, runner

    if not env.has_gpu():
        print("\n".join(cpu_run_notes(args, ops, rows)) + "\n", flush=True)
    options = runner.Options(dtypes=args.dtypes, impls=args.impls, quick=args.quick, sizes=args.sizes,
                             seed=args.seed, time=not args.no_time, capture=not args.no_capture,
                             isolate=not args.in_process, row_timeout_s=args.row_timeout, graph=args.graph,
                             profile_check=args.profile_check, check_rows=args.check_rows)
    # A run of some rows, dtypes or sizes only must not replace the op's full results (see paths.default_out_dir).
    filtered_by = [option for option in paths.FILTER_OPTIONS if getattr(args, option.removeprefix("--"))]
    failed = []
    # The process's start-up (the interpreter, imports, finding the ops) goes to the first op's phases: the rest of
    # the run is in the phases of each op.
    startup = {"start-up (imports, finding the ops)": round(env.seconds_since_start(), 2)}
    for op in ops:
        patterns, chosen = rows[op.name]
        if not chosen:
            print(f"== {op.name}: skipped, no row matches --impls {','.join(args.impls)}\n", flush=True)
            continue
        print(f"== {op.name}", flush=True)
        try:
            results = _run_op(op, dataclasses.replace(options, impls=patterns), chosen, args)
        except (discover.UnknownOp, discover.SpecError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except (fanout.GpuChoiceError, cluster.ClusterError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        for result in results:
            result.phases = {**startup, **result.phases}
            startup = {}
            gpu = result.env.get("gpu")
            if args.out is None:
                out_dir, why = paths.default_out_dir_and_reason(args.quick, op.name, filtered_by, gpu=gpu)
            else:  # several GPU models (--gpus, --cluster): a folder each inside the one asked for
                out_dir, why = (Path(args.out) / env.gpu_slug(gpu) if len(results) > 1 else Path(args.out)), ""
            written = report.write_files(result, out_dir, command)
            report.print_terminal(result, show_inductor=args.show == "inductor")
            print(f"\nwrote {', '.join(env.relpath(p) for p in written.values())}" + (f"\n  ({why})" if why else ""))
            failed += [f"{op.name} {r.impl}: {r.status}" for r in result.failed_rows()]
    if failed:
        print("\nFAILED:\n  " + "\n  ".join(failed), file=sys.stderr)
        return 1
    return 0


def _run_op(op, options, impls: list, args: argparse.Namespace) -> list:
    """One op's results: one, from this process's GPU; or with --gpus / --cluster, one per GPU model that ran it."""
    from . import cluster, fanout, runner

    if args.cluster:
        return cluster.run(op.name, impls, options, args.cluster, args.gpu_type)
    if args.gpus:
        import torch

        devices = fanout.parse_gpus(args.gpus, torch.cuda.device_count())
        return fanout.run_local(op.name, impls, options, devices)
    return [runner.run_op(op, options, impls)]


def out_problem(path: Path, is_file: bool = False) -> str | None:
    """Why results could not be written to path, or None if they can: a folder (created if missing), or with is_file
    (--sanitize's JSON report) a file in such a folder."""
    folder = path.parent if is_file else path
    nearest = folder  # the folder that exists and would hold the results, or the new folders made for them
    try:
        if is_file and path.is_dir():
            return f"{path} is a folder; give a file name for the report"
        if not is_file and path.exists() and not path.is_dir():
            return f"{path} is a file; give a folder (it is created if missing)"
        while not nearest.exists():
            nearest = nearest.parent
        if not nearest.is_dir():
            return f"{path} lies under {nearest}, which is a file, not a folder"
        # Writing is the only test that holds for every user, root included, and for read-only file systems.
        with tempfile.TemporaryFile(dir=nearest):
            pass
    except OSError as exc:
        return f"cannot write in {nearest} ({exc.strerror or exc}); give a folder you can write to"
    return None


# Python warnings that Triton's interpreter (no GPU) passes on from numpy, which reports floating-point overflow,
# invalid operations and division by zero in the kernel's arithmetic: values the checks' special inputs (huge
# magnitudes, infinities) are meant to provoke, such as exp of a large input overflowing to inf while GELU's tanh
# or softmax still come out right. The checks judge every output against the float64 reference; these warnings
# would only bury the tables. (category, the message's start, the module the warning is reported from)
INTERPRETER_WARNINGS = [(RuntimeWarning, f"{what} encountered in", "triton.runtime.interpreter")
                        for what in ("overflow", "invalid value", "divide by zero")]


@contextlib.contextmanager
def interpreter_warnings_hidden():
    """Hide INTERPRETER_WARNINGS, here and in the worker processes this run starts (see isolate), which get them
    through PYTHONWARNINGS since a fresh interpreter does not inherit this one's filters."""
    options = [f"ignore:{message}:{category.__name__}:{module}" for category, message, module in INTERPRETER_WARNINGS]
    saved = os.environ.get("PYTHONWARNINGS")
    os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [saved, *options]))  # later entries take precedence
    try:
        with warnings.catch_warnings():
            for category, message, module in INTERPRETER_WARNINGS:
                warnings.filterwarnings("ignore", message=re.escape(message), category=category,
                                        module=re.escape(module) + r"\Z")
            yield
    finally:
        if saved is None:
            del os.environ["PYTHONWARNINGS"]
        else:
            os.environ["PYTHONWARNINGS"] = saved


def choose_rows(ops: list, patterns: list[str] | None, across_ops: bool) -> dict[str, tuple[list[str] | None, list]]:
    """Per op: the --impls patterns to run it with, and the rows they select (none: the op is skipped).

    Each pattern must match a row of every op named, so a typo or a row an op lacks is an error before any work.
    With `all` (across_ops), a pattern must match a row of some op: `all --impls cuda:wgmma` runs matmul alone."""
    from . import discover

    impls = {op.name: discover.implementations(op) for op in ops}
    if not patterns:
        return {name: (None, rows) for name, rows in impls.items()}
    if not across_ops:
        return {name: (patterns, discover.select(rows, patterns)) for name, rows in impls.items()}
    matching = {name: [p for p in patterns if discover.select(rows, [p], missing_ok=True)]
                for name, rows in impls.items()}
    unmatched = [p for p in patterns if not any(p in mine for mine in matching.values())]
    if unmatched:
        every_row = "; ".join(f"{name}: {', '.join(i.name for i in rows)}" for name, rows in impls.items())
        raise discover.UnknownOp(f"no implementation matches {', '.join(map(repr, unmatched))} (--impls) in any op; "
                                 f"the rows are {every_row}. Fix or drop "
                                 + ("that pattern" if len(unmatched) == 1 else "those patterns"))
    return {name: (mine, discover.select(impls[name], mine) if mine else []) for name, mine in matching.items()}


def cpu_run_notes(args: argparse.Namespace, ops: list, rows: dict[str, tuple[list[str] | None, list]]) -> list[str]:
    """What a run without a GPU leaves out and why, and the options it ignores: said once, before the ops."""
    impls = [impl for _, chosen in rows.values() for impl in chosen]
    dtypes = args.dtypes or {str(d).removeprefix("torch.") for op in ops for d in op.dtypes}
    left_out = [
        (not args.no_time, "timing and plots (timing needs a GPU)"),
        ("bfloat16" in dtypes and any(not i.needs_gpu for i in impls),
         "bfloat16 checks (the interpreter's bfloat16 arithmetic is not trustworthy)"),
        (any(i.backend == "torch" and i.variant.startswith("compile") for i in impls),
         "torch.compile rows and the capture of their inductor code (they need a GPU)"),
        (any(i.backend == "torch" and i.needs_gpu and not i.variant.startswith("compile") for i in impls),
         "the vendor rows beside torch:eager (the vendor library's own GPU entry points)"),
        (any(i.backend == "cuda" for i in impls), "running the CUDA rows (they are built when nvcc is present)"),
        (any(i.backend == "peer" and i.needs_gpu for i in impls), "the peer rows (other projects' GPU kernels)"),
    ]
    quick_folder = " (its results still go to a quick/ folder)" if args.out is None else ""
    ignored = [
        (args.graph, "--graph", "CUDA-graph replays are timings, and timing needs a GPU"),
        (args.profile_check, "--profile-check", "it cross-checks timings, and timing needs a GPU"),
        (args.sizes, "--sizes", "they are timing sizes; the checks use the op's small interpreter shapes"),
        (args.quick, "--quick", f"it picks timing sizes, and timing needs a GPU{quick_folder}"),
        (args.show == "inductor", "--show inductor", "torch.compile rows need a GPU, so there is no code to show"),
    ]
    notes = ["no GPU: Triton rows run in Triton's CPU interpreter at small sizes; this run leaves out"]
    notes += [f"  {what}" for wanted, what in left_out if wanted]
    notes += [f"{option} ignored without a GPU: {why}" for given, option, why in ignored if given]
    return notes


def list_ops() -> int:
    from tabulate import tabulate

    from . import discover

    rows = []
    for name in discover.op_names():
        try:
            op = discover.load_op(name)
            rows.append([name, op.summary, ", ".join(_listed(op, i) for i in discover.implementations(op))])
        except Exception as exc:  # a broken spec is listed, not fatal
            rows.append([name, f"error: {exc}", ""])
    print(tabulate(rows, headers=["op", "summary", "implementations"]))
    return 0


def _listed(op, impl) -> str:
    """A row's name as `list` shows it: a peer row whose package is missing says so (the run skips it)."""
    missing = impl.backend == "peer" and op.unavailable_reason(impl.name, None)
    return f"{impl.name} (not installed)" if missing else impl.name
