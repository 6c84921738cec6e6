"""One line per profiled kernel from Nsight Compute's text report: what it ran as, how long, how busy the memory and
the SMs were, how many warps it kept and what they waited on. For reading a profile of rows side by side, and for
quoting it in a results README, without scrolling through every section of every kernel.

    ncu --profile-from-start off --section SpeedOfLight --section Occupancy --section LaunchStats \\
        --section WarpStateStats --section SchedulerStats \\
        --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio \\
        python3 bench/host_overhead.py OP --impls ... --shape ... --profiler-range > ncu.txt 2>&1
    python bench/ncu_digest.py ncu.txt [more.txt ...]     (or ncu.txt.gz)

Each kernel is named with the row and shape it was profiled for (the line bench/host_overhead.py prints after each
profiled call: every kernel ncu profiled since the line before belongs to it). The columns come from the sections
that were collected; a figure a section did not collect is '—'. Stalls: the three largest reasons, in cycles a
warp spent stalled per instruction it issued (the --metrics above; their sum is about the cycles between two
instructions of a warp), or, where only the Source Counters' samples are there, each reason's share of the samples.
It reads text: nothing here runs a GPU."""
from __future__ import annotations

import argparse
import gzip
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

KERNEL_LINE = re.compile(r"^  (?P<name>\S.*?) \((?P<grid>\d+, \d+, \d+)\)x\((?P<block>\d+, \d+, \d+)\), Context \d+")
METRIC_LINE = re.compile(r"^ {4}(?P<name>\S(?:.*?\S)?) {2,}(?:(?P<unit>[^\s\d][^\s]*) +)?(?P<value>-?[\d,]*\.?\d+)$")
PROFILING_LINE = re.compile(r'^==PROF== Profiling "(?P<kernel>[^"]+)"')
PROFILED_CALL = re.compile(r"^(?P<label>\S.*?)\s+one call profiled$")
STALL_RATIO = re.compile(r"^smsp__average_warps_issue_stalled_(?P<reason>\w+?)_per_issue_active\.ratio$")
STALL_SAMPLES = re.compile(r"\(smsp__pcsamp_warps_issue_stalled_(?P<reason>\w+)\)$")
TO_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6}
# (column, metric name in the report, how to print it)
COLUMNS = [("DRAM %", "DRAM Throughput", "{:.0f}"), ("L2 %", "L2 Cache Throughput", "{:.0f}"),
           ("SM %", "Compute (SM) Throughput", "{:.0f}"), ("regs", "Registers Per Thread", "{:.0f}"),
           ("occupancy %", "Achieved Occupancy", "{:.0f}"),
           ("eligible warps", "Eligible Warps Per Scheduler", "{:.2f}"),
           ("no eligible %", "No Eligible", "{:.0f}"),
           ("cycles / issue", "Warp Cycles Per Issued Instruction", "{:.1f}")]


class DigestError(Exception):
    """A file that is not an ncu text report: the message says which and what to give instead."""


@dataclass
class Kernel:
    name: str
    grid: str
    block: str
    label: str = ""  # the row and shape it was profiled for, where the report's process printed them
    metrics: dict[str, tuple[str, float]] = field(default_factory=dict)  # name -> (unit, value)

    def value(self, name: str) -> float | None:
        found = self.metrics.get(name)
        return None if found is None else found[1]

    def duration_us(self) -> float | None:
        found = self.metrics.get("Duration")
        if found is None or found[0] not in TO_US:
            return None
        return found[1] * TO_US[found[0]]

    def stalls(self, top: int = 3) -> str:
        ratios = {m["reason"]: v for name, (_, v) in self.metrics.items() if (m := STALL_RATIO.match(name))}
        if ratios:
            best = sorted(ratios.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
            return ", ".join(f"{reason} {v:.1f}" for reason, v in best if v > 0) or "—"
        # The samples of stalled warps, without the split of the same samples into those that issued nothing
        # (`_not_issued`) and without warps that were issuing (`selected`).
        samples = {m["reason"]: v for name, (_, v) in self.metrics.items()
                   if (m := STALL_SAMPLES.search(name)) and not m["reason"].endswith("_not_issued")
                   and m["reason"] != "selected"}
        total = sum(samples.values())
        if not total:
            return "—"
        best = sorted(samples.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return ", ".join(f"{reason} {v / total:.0%}" for reason, v in best)


def short_name(name: str) -> str:
    """'void f<__nv_bfloat16, 4>(const T1 *, int)' -> 'f<bf16, 4>': the function and its template arguments."""
    name = re.sub(r"^void ", "", name)
    depth, end = 0, len(name)
    for i, ch in enumerate(name):  # the parameter list starts at the first '(' outside the template arguments
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "(" and depth == 0:
            end = i
            break
    return name[:end].replace("__nv_bfloat16", "bf16").replace("__half", "fp16").strip()


def parse(text: str, source: str = "the report") -> list[Kernel]:
    kernels: list[Kernel] = []
    profiled = 0  # kernels ncu announced profiling since the last labelled call
    labels: list[str] = []  # per kernel index, in the order ncu profiled them
    current: Kernel | None = None
    for line in text.splitlines():
        line = line.rstrip()
        if PROFILING_LINE.match(line):
            profiled += 1
            continue
        call = PROFILED_CALL.match(line)
        if call:
            labels += [" ".join(call["label"].split())] * profiled
            profiled = 0
            continue
        kernel = KERNEL_LINE.match(line)
        if kernel:
            current = Kernel(short_name(kernel["name"]), kernel["grid"], kernel["block"])
            kernels.append(current)
            continue
        metric = METRIC_LINE.match(line) if current is not None else None
        if metric:
            current.metrics[metric["name"]] = (metric["unit"] or "", float(metric["value"].replace(",", "")))
    if not kernels:
        raise DigestError(f"{source}: no kernel found (no line like '  void kernel<...>(...) (132, 1, 1)x(256, 1, 1), "
                          "Context 1, ...'). Give the text ncu prints (not --csv, not a .ncu-rep): "
                          "ncu ... python3 bench/host_overhead.py ... --profiler-range > ncu.txt 2>&1")
    for i, k in enumerate(kernels):
        k.label = labels[i] if i < len(labels) else ""
    return kernels


def dims(triple: str) -> str:
    """'264, 1, 1' -> '264'; '32, 2, 1' -> '32×2'."""
    parts = [p.strip() for p in triple.split(",")]
    while len(parts) > 1 and parts[-1] == "1":
        parts.pop()
    return "×".join(parts)


def table(kernels: list[Kernel]) -> str:
    headers = ["row, shape", "kernel", "grid × block", "µs", *[c for c, _, _ in COLUMNS],
               "top stalls (cycles per issue, or share of samples)"]
    rows = []
    for k in kernels:
        us = k.duration_us()
        cells = [k.label or "—", f"`{k.name}`", f"{dims(k.grid)} × {dims(k.block)}",
                 "—" if us is None else f"{us:.1f}"]
        for _, name, fmt in COLUMNS:
            v = k.value(name)
            cells.append("—" if v is None else fmt.format(v))
        cells.append(k.stalls())
        rows.append(cells)
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("reports", nargs="+", type=Path, help="ncu's text output, as written with > FILE 2>&1")
    args = p.parse_args(argv)
    for path in args.reports:
        try:
            data = path.read_bytes()
            text = (gzip.decompress(data) if path.suffix == ".gz" else data).decode(errors="replace")
            kernels = parse(text, str(path))
        except (OSError, EOFError) as exc:
            print(f"error: cannot read {path}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
            return 2
        except DigestError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if len(args.reports) > 1:
            print(f"\n{path}\n")
        print(table(kernels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
