"""How much longer than a copy of the same bytes each row takes, in microseconds, from committed results.

    python bench/beyond_copy.py layernorm-backward --gpu nvidia-h100-80gb-hbm3 \
        --impls cuda:lean_cluster,triton:lean_exchange --dtypes bf16,fp32 --sizes 4096x16384,1024x32768,256x65536

A fraction of the copy says how far a row is from the ceiling, not why. The time a row takes beyond the copy of
its bytes (its median minus the copy's, both timed in the same run) tells two kinds of cost apart: one that stays
the same from shape to shape is paid once a call (a second kernel, a pipeline's fill and drain, a fixed amount of
extra traffic), one that grows with the rows a program takes in turn is paid a row. This reads an op's csv
(results/<gpu>/<op>.csv, or --results for another folder) and prints, per row, dtype and shape, the row's median,
the copy's time for the same bytes (the bytes over the same-bytes copy's bandwidth in that run), the difference and
the fraction. It measures nothing itself: every figure is the run's.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tabulate import tabulate  # noqa: E402

from compare import cli, summary  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def shape_of(label: str) -> tuple[int, ...]:
    """The sizes in a csv's shape label, in order, as --sizes gives them: 'M=1024 N=32768' -> (1024, 32768)
    (compare.summary.dims, which reads the same labels for results/README.md)."""
    return tuple(summary.dims(label))


def beyond(rows: list[dict], impls, dtypes, shapes) -> list[list]:
    """Per timed row of the csv (those with a same-bytes copy), picked by impl, dtype and shape where given:
    [impl, dtype, shape, row µs, copy µs, beyond µs, fraction]."""
    out = []
    for r in rows:
        if (impls and r["impl"] not in impls or dtypes and r["dtype"] not in dtypes
                or shapes and shape_of(r["shape"]) not in shapes):
            continue
        if not r.get("same_bytes_copy_gbps") or not r.get("median_ms"):
            continue
        row_us = float(r["median_ms"]) * 1e3
        copy_us = float(r["bytes"]) / (float(r["same_bytes_copy_gbps"]) * 1e3)
        out.append([r["impl"], r["dtype"], r["shape"], round(row_us, 1), round(copy_us, 1), round(row_us - copy_us, 1),
                    round(copy_us / row_us, 2)])
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("op")
    p.add_argument("--gpu", help="the GPU's results folder under results/ (default: the only one, else required)")
    p.add_argument("--results", type=Path, help="a results folder holding OP.csv, instead of results/GPU")
    p.add_argument("--impls", type=cli.parse_list, default=[])
    p.add_argument("--dtypes", type=cli.parse_dtypes, default=[])
    p.add_argument("--sizes", type=cli.parse_sizes, default=[])
    args = p.parse_args(argv)
    folder = args.results
    if folder is None:
        gpus = [d.name for d in sorted((ROOT / "results").iterdir()) if (d / f"{args.op}.csv").is_file()]
        if args.gpu is None and not gpus:
            p.error(f"no results/<gpu>/{args.op}.csv: run `python -m compare {args.op}` on a GPU first, or pass "
                    f"--results")
        if args.gpu is None and len(gpus) > 1:
            p.error(f"which GPU's {args.op}.csv? --gpu {' or --gpu '.join(gpus)}")
        folder = ROOT / "results" / (args.gpu or gpus[0])
    path = folder / f"{args.op}.csv"
    if not path.is_file():
        p.error(f"{path}: no such file (run `python -m compare {args.op}` first, or pass --results)")
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    table = beyond(rows, set(args.impls), set(args.dtypes), set(args.sizes))
    if not table:
        print(f"{path}: no timed row matches", file=sys.stderr)
        return 1
    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    print(tabulate(table, headers=["impl", "dtype", "shape", "row µs", "copy µs", "beyond µs", "fraction"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
