"""One check case's inputs handed to every row: is a failing check the row's, or the tolerance's?

    python bench/same_inputs.py fp8_matmul --seeds-of cuda:wgmma --dtype fp8 --shape 1800x1304x144

A run gives each row inputs of its own (each case's seeds include the row's name), so when one row fails a case the
others never saw those inputs. This makes the case the schedule gives the row named by --seeds-of (its seeds, input
set and layout) and judges every row on it as the run would (compare.check.run_case_in_process: warm-up call, calls
A and B, outputs poisoned, inputs checked untouched), --calls times each; then it calls each row once more on call
A's inputs and says which rows' outputs are bit-identical to the first row's. A case that fails one row while rows
doing other arithmetic pass points at that row; one that fails every row doing the same arithmetic (bit-identical
outputs), the vendor row among them, points at the spec's tolerance.

The rows run in this process, unisolated and untimed: a diagnosis, not a result. Without a GPU, Triton rows run
under the interpreter and CUDA rows are left out.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # read when a Triton kernel is decorated: before any row loads

from compare import build, check, cli, discover, runner, schedule, worker  # noqa: E402
from compare.schedule import RANDOM, CheckCase  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("op")
    p.add_argument("--seeds-of", required=True, metavar="ROW", help="the row whose case this is, e.g. cuda:wgmma")
    p.add_argument("--dtype", required=True, type=lambda s: cli.parse_dtypes(s)[0])
    p.add_argument("--shape", required=True, type=lambda s: cli.parse_sizes(s)[0])
    p.add_argument("--inputs", default=RANDOM, help=f"the input set: {RANDOM!r} or one of the op's special sets")
    p.add_argument("--layout", default=None, help="a non-contiguous layout of compare.layouts, or none")
    p.add_argument("--impls", type=cli.parse_list, default=None, help="rows to judge (default: every row)")
    p.add_argument("--seed", type=int, default=0, help="the run's base seed (python -m compare --seed)")
    p.add_argument("--calls", type=int, default=1, help="how many times each row is judged on the case")
    return p.parse_args(argv)


def main(argv=None) -> int:
    opts = parse_args(argv)
    op = discover.load_op(opts.op)
    gpu = torch.cuda.is_available()
    device = torch.device("cuda" if gpu else "cpu")
    dtype = getattr(torch, opts.dtype)
    impls = discover.implementations(op)
    names = [i.name for i in impls]
    if opts.seeds_of not in names:
        sys.exit(f"same_inputs: {opts.op} has no row {opts.seeds_of!r}; its rows: {', '.join(names)}")
    if opts.inputs != RANDOM and opts.inputs not in op.special_inputs:
        sys.exit(f"same_inputs: {opts.op} has no input set {opts.inputs!r}; its sets: "
                 f"{', '.join([RANDOM, *op.special_inputs])}")
    if opts.impls:
        impls = discover.select(impls, opts.impls)
    shape = tuple(opts.shape)
    case = CheckCase(dtype, shape, opts.inputs, opts.layout,
                     schedule.case_seeds(opts.seed, op, opts.seeds_of, dtype, shape, opts.inputs, opts.layout,
                                         "check"))
    # the seeds the lab's run uses: A's drawn again where its inputs could not fail a kernel (compare.check.case_inputs)
    case = dataclasses.replace(case, seeds=check.case_inputs(op, case, device).seeds)
    print(f"{opts.op} {opts.dtype} {op.describe_shape(shape)} ({case.label}): the inputs of {opts.seeds_of}, seeds "
          f"{', '.join(map(str, case.seeds))} (warm-up, A, B)", flush=True)
    if gpu and any(i.backend == "cuda" for i in impls):
        build.build(discover.base_name(op.name), op.cuda_flags, progress=False)
    outputs = {}
    capability = torch.cuda.get_device_capability() if gpu else None
    for impl in impls:
        if unfit := runner.unrunnable(op, impl, gpu, capability):
            why = f": {unfit.message}" if unfit.message else ""
            print(f"  {impl.name:22} {unfit.status.value}{why}", flush=True)
            continue
        if impl.backend == "triton" and not gpu:
            worker._use_interpreter_autotune_stub(impl)
        fn = impl.load()
        for call in range(opts.calls):
            r = check.run_case_in_process(op, impl.name, fn, case, device)
            ratio = "" if r.worst_ratio is None else f"err/tol {r.worst_ratio:.3f}"
            print(f"  {impl.name:22} {r.status:10} {ratio:16} {r.message}".rstrip(), flush=True)
        inputs = check.case_inputs(op, case, device)
        try:
            outputs[impl.name] = fn(*inputs.a)
        except Exception as exc:  # noqa: BLE001 (a row that raises is reported above; nothing to compare)
            print(f"  {impl.name:22} call A raised {type(exc).__name__}: {exc}", flush=True)
    if outputs:
        first, first_out = next(iter(outputs.items()))
        same = [name for name, out in outputs.items() if check._identical(out, first_out)]
        other = [name for name in outputs if name not in same]
        print(f"call A's output, bit-identical to {first}'s: {', '.join(same)}"
              + (f"; different: {', '.join(other)}" if other else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
