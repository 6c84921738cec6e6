"""Tables in the terminal and the result files: <op>.md (for people), <op>.csv, <op>.json and <op>.checks.csv.gz
(every check case) for programs, a PNG plot of throughput against size, and the captured torch.compile code. Every
file is written to a temporary name and renamed into place, so an interrupted run leaves the previous results whole.

The terminal's report and the md are one list of sections (sections), built once from the result and rendered by
print_terminal and markdown; what only one of them shows (the md's prose, the terminal's --show inductor code) is a
flag on its section."""
from __future__ import annotations

import csv
import dataclasses
import gzip
import io
import json
import os
import re
import time
from collections import defaultdict
from pathlib import Path

from tabulate import tabulate

from .check import CheckResult
from .results import CudaKernelBuild, OpResult, ceiling_name, is_phase_part
from .timing import HOST_CHECK_BELOW_MS, SAME_BYTES_COPY

TIMING_METHOD = ("the method of triton.testing.do_bench: CUDA events around each call, L2 flushed (256 MB memset) "
                 "before each call, 3 warm-up calls plus 25 ms warm-up, ~100 ms of timed calls and never fewer than "
                 "10; median and interquartile range. The timed calls rotate among at least two input sets, and "
                 "the outputs of the first and the last timed call are judged like a check. "
                 f"For calls under {HOST_CHECK_BELOW_MS:g} ms, also the host's time per call (the wall time for a "
                 "call to return with the GPU idle, median of 21)")
HOST_BOUND_NOTE = ("`h` marks a host-bound cell: the host needs at least the measured time per call (argument checks, "
                   "dispatch, launch), so at that size back-to-back calls are bound by the host, and the events may "
                   "have timed host work the L2 flush did not hide; `--graph` shows the kernels alone")
SAME_BYTES_COPY_METHOD = (
    f"the line `{SAME_BYTES_COPY}` is, per shape and dtype, a plain device-to-device copy (`dst.copy_(src)` on "
    "uint8 tensors, a cudaMemcpyAsync) that moves the same bytes as one call of the op, half read and half "
    "written, timed exactly like the rows: the same do_bench settings and L2 flush, the same rotation among input "
    "copies for sizes that fit in L2, and with --graph the same CUDA-graph replay")


def write_atomic(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _g(x, fmt="{:.3g}"):
    return "" if x is None else fmt.format(x)


def check_table(result: OpResult) -> list[list]:
    """Per implementation and dtype: cases passed, worst errors, tolerance."""
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for c in result.checks:
        groups[(c.impl, c.dtype)].append(c)
    rows = []
    for (impl, dtype), cs in groups.items():
        passed = sum(c.ok for c in cs)
        worst = max(cs, key=lambda c: (not c.ok, c.worst_ratio or 0))
        rows.append([impl, dtype, f"{passed}/{len(cs)}", _g(max((c.max_abs_err or 0) for c in cs)),
                     _g(max((c.max_rel_err or 0) for c in cs)), f"{_g(worst.atol, '{:g}')} / {_g(worst.rtol, '{:g}')}",
                     _g(max((c.worst_ratio or 0) for c in cs), "{:.2f}"),
                     "ok" if passed == len(cs) else f"{worst.status}: {worst.shape} {worst.inputs}: {worst.message}"])
    return rows


CHECK_HEADERS = ["impl", "dtype", "passed", "max abs err", "max rel err", "atol / rtol", "err/tol", "status"]


def _cell(t, kind: str, memory: bool) -> str:
    if kind == "same-bytes":
        return "" if t.fraction_of_same_bytes_copy is None else f"{t.fraction_of_same_bytes_copy:.2f}"
    if kind == "speedup":
        return "" if t.speedup_vs_eager is None else f"{t.speedup_vs_eager:.2f}x"
    marks = (" !" if t.noisy else "") + (" h" if t.host_bound else "") + (" IMPLAUSIBLE" if t.implausible else "")
    if kind == "ms":
        return f"{t.median_ms:.4g} ± {t.iqr_ms:.2g}{marks}"
    if kind == "host":
        return "" if t.host_us is None else f"{t.host_us:.0f}{' h' if t.host_bound else ''}"
    if kind == "graph":
        return "" if t.graph_median_ms is None else f"{t.graph_median_ms:.4g} (events {t.median_ms:.4g})"
    if kind == "profiler":
        if t.profiler_ms is None:
            return ""
        return f"{t.profiler_ms:.4g} / {t.median_ms:.4g}{' DISAGREE' if t.profiler_disagrees else ''}"
    rate = f"{t.gbps:.0f}" if memory else f"{t.tflops:.1f}"
    frac = f" ({t.fraction_of_ceiling:.2f})" if t.fraction_of_ceiling is not None else ""
    return f"{rate}{frac}{marks}"


# The tables that end with the same-bytes copy's line: those of a quantity the copy has too (not its speedup
# over torch:eager, not its fraction of itself, not a profiler cross-check of the rows' kernels).
KINDS_WITH_COPY_LINE = ("rate", "ms", "graph", "host")


def timing_tables(result: OpResult, kind: str = "rate") -> dict[str, tuple[list[str], list[list]]]:
    """One table per dtype: a row per implementation, a column per size. kind: "rate" (GB/s or TFLOP/s with the
    fraction of the ceiling), "ms" (median ± IQR), "graph" (CUDA-graph replay median), "profiler" (profiler kernel
    ms / events ms), "host" (host µs per call), "speedup" (over torch:eager), "same-bytes" (fraction of a copy of
    the same bytes). For a memory-bound op, "rate", "ms", "graph" and "host" end with the line `copy (same bytes)`:
    the per-shape ceiling."""
    memory = result.roofline == "memory"
    copies = {(c.dtype, c.shape): c for c in result.same_bytes_copies} if kind in KINDS_WITH_COPY_LINE else {}
    tables = {}
    by_dtype: dict[str, list] = defaultdict(list)
    for t in result.timings:
        by_dtype[t.dtype].append(t)
    for dtype, ts in by_dtype.items():
        shapes = list(dict.fromkeys(t.shape for t in ts))  # the rows' shapes: the copy adds no column

        def line(name, timings):
            return [name] + [_cell(timings[s], kind, memory) if s in timings else "" for s in shapes]

        rows = [line(impl, {t.shape: t for t in ts if t.impl == impl}) for impl in dict.fromkeys(t.impl for t in ts)]
        if any(any(c for c in row[1:]) for row in rows):
            copy = {s: copies[(dtype, s)] for s in shapes if (dtype, s) in copies}
            if copy:
                rows.append(line(SAME_BYTES_COPY, copy))
            tables[dtype] = (["impl"] + [_short_shape(s) for s in shapes], rows)
    return tables


def _helpers(l) -> str:
    """The shared definitions a row's count includes, by file: "12 (lab_device.cuh: load_packet, store_packet)"."""
    if not l.helpers:
        return ""
    by_file: dict[str, list[str]] = defaultdict(list)
    for helper in l.helpers:
        file, _, name = helper.partition(":")
        by_file[file].append(name)
    return f"{l.helper_lines} (" + "; ".join(f"{f}: {', '.join(n)}" for f, n in by_file.items()) + ")"


def loc_table(result: OpResult) -> list[list]:
    rows = [[l.impl, l.kernel, l.host, l.total, _helpers(l), l.source] for l in result.loc]
    seen = set()
    for c in result.captures:
        if (c.impl, c.dtype) in seen:
            continue
        seen.add((c.impl, c.dtype))
        rows.append([f"{c.impl} ({c.dtype}, generated)", c.kernel_lines, c.host_lines, c.kernel_lines + c.host_lines,
                     "", f"inductor/{result.op}/{_capture_name(c)}"])
    return rows


def build_table(result: OpResult) -> list[list]:
    rows = []
    for b in result.build:
        if isinstance(b, CudaKernelBuild):
            kernel = re.sub(r"^void |\(.*\)$", "", b.kernel)  # "gelu_vec_kernel<float>"
            rows.append([b.impl, kernel, f"{b.cold_s:.1f} / {b.warm_s:.2f}", b.registers, b.spills, b.shared_bytes])
        else:
            rows.append([b.impl, f"{b.kernel} ({b.variants} compiled variants)", "", b.registers, b.spills,
                         b.shared_bytes])
    for j in result.jit:
        when = (f"{j.first_call_s:.2f}" if j.cold or j.cold_first_call_s is None
                else f"{j.cold_first_call_s:.2f} cold / {j.first_call_s:.2f} warm")
        rows.append([j.impl, f"first call, {j.dtype} (JIT compile + autotune)", when, "", "", ""])
    return rows


def capture_table(result: OpResult) -> list[list]:
    return [[c.impl, c.dtype, c.shape, f"{c.compile_s:.1f}", c.kernels, c.kernel_lines, c.host_lines]
            for c in result.captures]


def _capture_name(c) -> str:
    return f"{c.mode}-{c.dtype}.py"


KERNEL_HEADERS = ["impl", "dtype", "shape", "kernels launched by one call", "launches", "GPU µs", "not its own"]


def kernel_table(result: OpResult) -> list[list]:
    """Per row and dtype, what one call launched (compare.accounting): the row's own kernels, and flagged, those
    that are not (torch's kernels called from a hand-written row)."""
    return [[k.impl, k.dtype, k.shape, ", ".join(k.kernels) or "none", k.launches, k.kernel_us,
             ", ".join(k.foreign) or ("" if k.impl.startswith(("torch:", "peer:")) else "-")] for k in result.kernels]


KERNEL_NOTE = ("one call per row and dtype under torch.profiler: a row whose call launches no kernel, or runs work on "
               "another stream than the one it is timed on, fails; kernels a CUDA or Triton row launches that are "
               "not from its own source are listed as not its own (torch rows launch torch's by definition, peer "
               "rows their own project's)")


def status_table(result: OpResult) -> list[list]:
    return [[r.impl, r.status, r.message] for r in result.rows]


STATUS_HEADERS = ["impl", "status", "message"]
LOC_HEADERS = ["impl", "kernel", "host", "total", "of which shared helpers", "source"]
BUILD_HEADERS = ["impl", "kernel", "cold / warm s", "registers", "spill bytes", "shared bytes"]
CAPTURE_HEADERS = ["impl", "dtype", "shape", "compile s", "kernels", "kernel lines", "host lines"]

# For tables whose cells are all numbers formatted here ("0.60"), which tabulate would otherwise reformat ("0.6").
AS_FORMATTED = {"disable_numparse": True}


@dataclasses.dataclass
class Section:
    """One part of the report, built once (sections) for both renderers (print_terminal, markdown). With headers it
    is a table, left out where it has no rows (except empty_in_markdown, whose headers the markdown shows all the
    same); without, a text. The terminal prints title: the line above the table, the whole text, or the line above
    code. The markdown writes heading (at level; none if ""), then prose, then the table."""

    title: str = ""
    heading: str = ""
    prose: str = ""
    headers: list[str] = dataclasses.field(default_factory=list)
    rows: list[list] = dataclasses.field(default_factory=list)
    code: str = ""  # printed as it is under the title
    level: int = 2
    as_formatted: bool = False  # the cells are shown as formatted here (AS_FORMATTED)
    in_terminal: bool = True
    in_markdown: bool = True
    empty_in_markdown: bool = False

    def table(self, style: str) -> str:
        return tabulate(self.rows, headers=self.headers, tablefmt=style, **(AS_FORMATTED if self.as_formatted else {}))

    def shown(self, markdown: bool) -> bool:
        if not (self.in_markdown if markdown else self.in_terminal):
            return False
        return not self.headers or bool(self.rows) or (markdown and self.empty_in_markdown)


def lanes_prose(lanes: list[dict] | None) -> str:
    """Which GPU ran which rows, for a run shared out over several (--gpus, --cluster); '' for one GPU."""
    if not lanes or len(lanes) < 2:
        return ""
    each = "; ".join(f"{lane['gpu']}: {', '.join(lane['rows'])}" + (
        f" (copy {lane['copy_gbps']:.0f} GB/s)" if lane.get("copy_gbps") else "") for lane in lanes)
    return (f" The rows were shared out over {len(lanes)} GPUs of this model, each row's fractions taken of the "
            f"ceilings measured on the GPU that ran it, the tables' ceilings being the first GPU's: {each}.")


def peers_prose(peers: dict | None) -> str:
    """The other projects' packages whose rows (peer:<name>) this run had, with their versions; '' for none."""
    if not peers:
        return ""
    return " Peer rows from " + ", ".join(f"{name} {version or '(version not recorded)'}"
                                          for name, version in peers.items()) + "."


def sections(result: OpResult, command: str = "", plot: str | None = None,
             show_inductor: bool = False) -> list[Section]:
    """The report of one op, in order. command and plot (the png's file name) are the markdown's; show_inductor
    adds the code torch.compile generated, for the terminal."""
    e, ceilings, memory = result.env, result.ceilings, result.roofline == "memory"
    machine = (f" (driver {e.get('driver')}, {e.get('sm_count')} SMs)" if e.get("sm_count") else "")
    out = [Section(f"{result.op}: {result.summary}  [{e['gpu']}, torch {e['torch']}, triton {e['triton']}]",
                   heading=f"{result.op}: {result.summary}", level=1,
                   prose=f"Produced by `{command}` on **{e['gpu']}**{machine}; torch {e['torch']}, triton "
                         f"{e['triton']}, CUDA {e['cuda_runtime']}, nvcc {e['nvcc']}, git {e['git_revision']}."
                         + peers_prose(e.get("peers")) + lanes_prose(e.get("lanes")))]
    if ceilings.copy_gbps:
        out.append(Section(
            f"copy bandwidth (ceiling): {ceilings.copy_gbps:.0f} GB/s",
            prose=f"Ceiling measured in the same run: device-to-device copy at **{ceilings.copy_gbps:.0f} GB/s** "
                  f"(bytes read + written, a 1 GiB buffer)"
                  + ("; the large-buffer peak that published targets refer to, and the fractions in brackets are of "
                     "it" if memory else "") + "."))
    if result.same_bytes_copies:
        out.append(Section(
            f"per shape: {SAME_BYTES_COPY_METHOD}",
            prose=f"Per-shape ceiling, measured in the same run: {SAME_BYTES_COPY_METHOD}. At small sizes launch "
                  "latency and the ramp-up of a wave keep even this copy far below the large-buffer peak, and no "
                  "kernel that moves those bytes escapes them either: a row's fraction of this copy separates a slow "
                  "kernel from a size that allows no more (1.00: as fast as a plain copy of its bytes)."))
    if ceilings.same_bytes_copy_error:
        out.append(Section(f"copy of the same bytes per shape not measured: {ceilings.same_bytes_copy_error}",
                           prose=f"The per-shape copy could not be measured: {ceilings.same_bytes_copy_error}"))
    if result.counting:
        out.append(Section(f"counting: {result.counting}", prose=f"Counting: {result.counting}"))
    out.append(Section(prose=f"Timing: {TIMING_METHOD}.", in_terminal=False))
    # The verdict per row: first in the file, last in the terminal, under everything a run prints.
    rows = Section("Rows", heading="Rows", headers=STATUS_HEADERS, rows=status_table(result), empty_in_markdown=True)
    out.append(dataclasses.replace(rows, in_terminal=False))
    out.append(Section(
        f"Checks (float64 reference, seed {result.seed})", heading="Checks", headers=CHECK_HEADERS,
        rows=check_table(result), empty_in_markdown=True,
        prose=f"Against a float64 reference on fresh random inputs (seed {result.seed}); outputs poisoned with NaN "
              "before each call; an element passes when |out − ref| ≤ atol + rtol·|ref|; err/tol is the worst "
              f"element's error over its bound (≤ 1 passes). Every case is in {CHECKS_FILE.format(op=result.op)}."))
    out += timing_sections(result)
    out += ladder_sections(result)
    out += targets_sections(result, command)
    if plot:
        out.append(Section(prose=f"![throughput]({plot})", in_terminal=False))
    out.append(Section("Kernels launched by one call (profiler)", heading="Kernels launched",
                       prose=f"Per row and dtype, {KERNEL_NOTE}.", headers=KERNEL_HEADERS, rows=kernel_table(result),
                       as_formatted=True))
    out.append(Section(
        "Lines of code (non-blank, non-comment)", heading="Lines of code", headers=LOC_HEADERS,
        rows=loc_table(result), empty_in_markdown=True,
        prose="Non-blank lines that are not only comments or docstrings, split into kernel (runs on the GPU) and host "
              "(checks, allocation, launch, registration). A row's count includes the definitions it reaches in "
              "the lab's shared files (the headers a .cu includes, a module beside a Triton file), listed with "
              "their lines, so moving code into a shared file does not make a row look shorter."))
    out.append(Section(
        "Build", heading="Build and resources", headers=BUILD_HEADERS, rows=build_table(result),
        empty_in_markdown=True,
        prose="CUDA: `load_inline` cold build of the whole .cu (all its variants) / warm load from the cache, and "
              "ptxas's report per kernel. Triton: per compiled kernel, and the wall time of the first call in each "
              "dtype: JIT compilation plus autotuning into an empty cache (cold), and where this run found them "
              "cached, this run's first call (warm) beside the cold one recorded when the cache was filled. What "
              "each autotuned kernel chose, per tuning key (shape parameters and dtypes), is in the json "
              "(`build`, `chosen_configs`). "
              f"Compile caches of this run: {result.env.get('compile_caches', 'not recorded')}."))
    out.append(Section("torch.compile", heading="torch.compile", headers=CAPTURE_HEADERS, rows=capture_table(result),
                       prose="Captured with a fresh inductor cache; the generated code is under "
                             f"`inductor/{result.op}/`."))
    if show_inductor:
        out += [Section(f"# ---- {c.impl} {c.dtype} {c.shape} ----", code=c.code, in_markdown=False)
                for c in result.captures]
    out += phases_section(result)
    out.append(dataclasses.replace(rows, in_markdown=False))
    return out


def timing_sections(result: OpResult) -> list[Section]:
    """Per dtype: the rate table under a heading of its own, then the other quantities of the same cells."""
    memory = result.roofline == "memory"
    # A compute-bound op's ceiling: its one ceiling row by name in the terminal ("torch:eager"), or the fastest of them
    of_rows = result.ceiling_rows
    unit, note = ("GB/s", "copy bandwidth") if memory else (
        "TFLOP/s", of_rows[0] if len(of_rows) == 1 else ceiling_name(of_rows))
    md_unit = "GB/s (bytes read + written)" if memory else "TFLOP/s"
    md_note = "copy bandwidth" if memory else ceiling_name(of_rows)
    tables = {kind: timing_tables(result, kind)
              for kind in ("rate", "same-bytes", "ms", "host", "speedup", "graph", "profiler")}
    out = []
    for dtype in tables["rate"]:
        def add(kind, title, prose, **options):
            if dtype in tables[kind]:
                headers, rows = tables[kind][dtype]
                out.append(Section(title, prose=prose, headers=headers, rows=rows, **options))

        add("rate", f"Timing, {dtype}: {unit} (fraction of {note}); ! = IQR > 10% of median; h = host-bound (host "
                    "time per call >= the measured time)",
            f"{md_unit}, with the fraction of {md_note} in brackets; `!` marks an IQR over 10% of the median; "
            f"{HOST_BOUND_NOTE}.", heading=f"Timing, {dtype}")
        add("same-bytes", f"Fraction of a copy of the same bytes, {dtype} (GB/s over the line `{SAME_BYTES_COPY}`)",
            f"Fraction of a copy of the same bytes (each row's GB/s over the line `{SAME_BYTES_COPY}`):",
            as_formatted=True)
        add("ms", "", "Median ± IQR, milliseconds:", in_terminal=False)
        add("host", f"Host time per call, {dtype}: microseconds (h = at least the measured time)",
            f"Host time per call, microseconds (calls under {HOST_CHECK_BELOW_MS:g} ms; `h`: at least the measured "
            "time):", as_formatted=True,
            in_terminal=any(t.host_bound for t in result.timings if t.dtype == dtype))
        add("speedup", "", "Speedup over torch:eager:", in_terminal=False)
        add("graph", f"CUDA-graph replay, {dtype}: median ms (events median)",
            "CUDA-graph replay median, ms (the events' median in brackets): what is left once Python and launch "
            "overhead are gone.")
        add("profiler", f"torch.profiler kernel ms / events ms, {dtype}",
            "torch.profiler kernel time / event median, ms; DISAGREE marks kernel time the events did not see.")
    return out


LADDER_NOTE = ("each kernel file's steps, from the version map it opens with, and what each bought at the op's "
               "ladder cells: throughput, × the last step timed there, and in brackets the fraction of {ceiling}")


def ladder_sections(result: OpResult) -> list[Section]:
    """Per side (CUDA, Triton): the steps in the order of the file's version map, each with its change and, per
    ladder cell, its throughput, its gain over the step before and its fraction of the ceiling."""
    from .ladder import Step, ladder

    memory = result.roofline == "memory"
    ceiling = "a copy of the same bytes" if memory else ceiling_name(result.ceiling_rows)
    passed = {r.impl for r in result.rows if r.status == "ok"}
    timings = [t for t in result.timings if t.impl in passed and not t.implausible]
    out = []
    for backend, side in (("cuda", "CUDA"), ("triton", "Triton")):
        steps = [s for s in result.ladder if s.backend == backend]
        if not steps or not result.ladder_cells:
            continue
        as_steps = [Step(s.number, s.impl.split(":", 1)[1], s.change, 0) for s in steps]
        rows = []
        for step, row in zip(steps, ladder(as_steps, backend, timings, result.ladder_cells, memory)):
            cells = []
            for cell in row.cells.values():
                if cell is None:
                    cells.append("")
                    continue
                rate, gain, fraction = cell
                cells.append(f"{rate:.0f}" + (f" ×{gain:.2f}" if gain else "")
                             + (f" ({fraction:.2f})" if fraction is not None else ""))
            rows.append([f"v{step.number}", step.impl, step.change, *cells])
        unit = "GB/s" if memory else "TFLOP/s"
        headers = ["step", "row", "what it changes"] + [f"{d} {s}, {unit}" for d, s in result.ladder_cells]
        out.append(Section(f"Ladder, {side}: {LADDER_NOTE.format(ceiling=ceiling)}", heading=f"Ladder, {side}",
                           prose=f"The steps of {steps[0].source.rsplit(':', 1)[0]}: "
                                 f"{LADDER_NOTE.format(ceiling=ceiling)}. An empty cell: the step failed, was not "
                                 "timed there, or does not take that dtype.",
                           headers=headers, rows=rows, as_formatted=True))
    return out


def targets_sections(result: OpResult, command: str) -> list[Section]:
    """The op's goals (its spec's `targets`, compare.targets) judged on this run's cells, as the summary judges them
    on the committed results."""
    from .summary import OpFile, spec_targets
    from .targets import judge

    targets = spec_targets(result.op)
    if not targets or not result.timings:
        return []
    run = OpFile("this run", Path(f"{result.op}.json"), to_json(result, command))
    rows = []
    for target in targets:
        judged = judge(target, run)
        if not (judged.met or judged.missed or judged.unjudged):
            continue  # none of its cells timed (a run narrowed by --sizes or --dtypes)
        rows.append([target.goal(), target.where_in_words(), judged.counts(), "; ".join(judged.missed) or "—",
                     "; ".join(judged.unjudged) or "—"])
    return [Section("Targets (the spec's goals, on the cells this run timed)", heading="Targets",
                    prose="The spec's goals (`targets`), judged on the cells this run timed: how many cells meet "
                          "each, and every cell that does not with its figure (a fraction of the ceiling, or both "
                          "medians). `python -m compare summary` judges the same goals on every GPU folder's full "
                          "results.",
                    headers=["goal", "cells", "met", "missed", "not judged"], rows=rows, as_formatted=True)]


PHASES_NOTE = ("wall seconds of this run per phase: the process's start-up (in the first op of a run: the "
               "interpreter, imports, finding the ops), the op's own (the environment: the GPU's context and the "
               "versions; counting lines, the ceilings, building the .cu files) and the rows', summed over the rows "
               "(each row in its own worker process: load, checks, "
               "timing, kernel accounting, torch.compile capture); the checks include each row's first call at "
               "every shape and dtype, and the lines 'of the checks' say how much of them that was; the lines 'of the "
               "timing' split the timing the same way")


GATE_NOTE = ("The lines 'of the rows' phases' are the GPU's sharing out: the wall seconds it was held alone by one "
             "row (timed cells, first calls that time their autotuning, profiled calls, cases run again out of "
             "memory; no two overlap, so they are that much of the run's wall time), and the seconds such sections "
             "waited for their turn and other rows' checks waited behind them, each summed over the rows.")


def phases_section(result: OpResult) -> list[Section]:
    if not result.phases:
        return []
    own = {k: v for k, v in result.phases.items() if not is_phase_part(k)}
    at_once = result.isolation.get("rows_checked_at_once", 1)
    overlap = (f" Rows were checked {at_once} at once (--check-rows), so their phases overlap and the total is more "
               f"than the run's wall time. {GATE_NOTE}" if at_once > 1 else "")
    total = sum(own.values())
    rows = [[phase, f"{s:.1f}", f"{s / total:.0%}" if total else ""] for phase, s in result.phases.items()]
    rows.append(["total", f"{total:.1f}", ""])
    return [Section("Where the time went (wall seconds per phase; rows' phases summed over the rows)",
                    heading="Where the time went",
                    prose=f"Where the time went: {PHASES_NOTE}.{overlap}", headers=["phase", "seconds", "share"],
                    rows=rows,
                    as_formatted=True)]


def print_terminal(result: OpResult, show_inductor: bool = False) -> None:
    for s in sections(result, show_inductor=show_inductor):
        if not s.shown(markdown=False):
            continue
        if s.level == 1:
            print(f"\n== {s.title}")
        elif s.headers:
            print(f"\n{s.title}\n{s.table('simple')}")
        elif s.code:
            print(f"\n{s.title}\n{s.code}")
        elif s.title:
            print(s.title)


def markdown(result: OpResult, files: dict[str, str]) -> str:
    parts = []
    for s in sections(result, files["command"], files.get("plot")):
        if s.shown(markdown=True):
            parts += [p for p in ("#" * s.level + " " + s.heading if s.heading else "", s.prose) if p]
            if s.headers:
                parts.append(s.table("github"))
    return "\n\n".join(parts) + "\n"


def to_json(result: OpResult, command: str) -> dict:
    def rows(items):
        return [dataclasses.asdict(i) for i in items]

    def timings(items, leave_out=()):
        return [{k: v for k, v in dataclasses.asdict(t).items() if k not in leave_out} | {"iqr_ms": t.iqr_ms}
                for t in items]

    ceilings = result.ceilings.to_dict()
    if result.same_bytes_copies:  # the per-shape ceilings, in the form of the rows' timings less what has no meaning
        ceilings["same_bytes_copy_method"] = SAME_BYTES_COPY_METHOD
        ceilings["same_bytes_copy"] = timings(result.same_bytes_copies, (
            "flops", "tflops", "fraction_of_same_bytes_copy", "speedup_vs_eager", "profiler_ms", "profiler_disagrees"))
    loc = [dict(dataclasses.asdict(l), total=l.total) for l in result.loc]
    captures = [{k: v for k, v in dataclasses.asdict(c).items() if k != "code"} | {"file": _capture_name(c)}
                for c in result.captures]
    return {
        "op": result.op,
        "summary": result.summary,
        "command": command,
        "env": dict(result.env, timing_method=TIMING_METHOD),
        "roofline": result.roofline,
        **({"ceiling_rows": list(result.ceiling_rows)} if result.roofline == "compute" else {}),
        **({"counting": result.counting} if result.counting else {}),
        "ceilings": ceilings,
        "rows": rows(result.rows),
        "checks": {"file": CHECKS_FILE.format(op=result.op), "cases": len(result.checks),
                   "failed": sum(not c.ok for c in result.checks)},
        "timings": timings(result.timings),
        "loc": loc,
        "build": rows(result.build),
        "jit": rows(result.jit),
        "kernels": rows(result.kernels),
        "row_seconds": result.row_seconds,
        "torch_compile": captures,
        "isolation": result.isolation,
        "ladder": {"steps": rows(result.ladder), "cells": [list(c) for c in result.ladder_cells]},
        "phases": result.phases,
    }


# Every check case of a run, a line each (a run of an op with a backward judges thousands), beside the json, which
# gives their count. The columns are CheckResult's fields; a tuple is written space-separated, None as an empty cell.
# Compressed (gzip; zcat or pandas.read_csv read it): the committed results travel with every working tree sent to a
# GPU machine, whose size is capped, and these files were half of their bytes.
CHECKS_FILE = "{op}.checks.csv.gz"
CHECK_FIELDS = [f.name for f in dataclasses.fields(CheckResult)]
_CHECK_TYPES = {f.name: f.type for f in dataclasses.fields(CheckResult)}  # the annotations, as text: "float | None"


def checks_csv(checks: list[CheckResult]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CHECK_FIELDS)
    for c in checks:
        values = (getattr(c, name) for name in CHECK_FIELDS)
        writer.writerow(["" if v is None else " ".join(map(str, v)) if isinstance(v, (tuple, list)) else v
                         for v in values])
    return out.getvalue()


def checks_gzip(checks: list[CheckResult]) -> bytes:
    """checks_csv compressed, with no timestamp in the header: the same cases give the same bytes."""
    return gzip.compress(checks_csv(checks).encode(), compresslevel=9, mtime=0)


def read_checks(path: Path) -> list[dict]:
    """The check cases of an <op>.checks.csv.gz (or an uncompressed <op>.checks.csv, as results written before the
    files were compressed), each a dict of CheckResult's fields with their types back."""
    def value(name, text):
        kind = _CHECK_TYPES[name].split(" | ")[0]
        if kind == "bool":
            return text == "True"
        if kind == "tuple":
            return tuple(int(s) for s in text.split())
        if kind in ("int", "float"):
            return None if text == "" else int(text) if kind == "int" else float(text)
        return text

    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        return [{name: value(name, text) for name, text in row.items()} for row in csv.DictReader(f)]


def to_csv(result: OpResult) -> str:
    out = io.StringIO()
    fields = ["impl", "dtype", "shape", "median_ms", "iqr_ms", "gbps", "tflops", "fraction_of_ceiling", "ceiling",
              "speedup_vs_eager", "noisy", "host_us", "host_bound", "samples", "implausible", "bytes", "flops",
              "same_bytes_copy_gbps",
              "fraction_of_same_bytes_copy"]
    # One line per implementation and shape; the per-shape copy is a column of each line it applies to, not a line
    # of its own that a program could take for an implementation.
    copy_gbps = {(c.dtype, c.shape): c.gbps for c in result.same_bytes_copies}
    writer = csv.DictWriter(out, fieldnames=fields, extrasaction="ignore")
    writer.writeheader()
    for t in result.timings:
        writer.writerow(dataclasses.asdict(t) | {"iqr_ms": t.iqr_ms,
                                                 "same_bytes_copy_gbps": copy_gbps.get((t.dtype, t.shape))})
    return out.getvalue()


def plot_png(result: OpResult) -> bytes | None:
    if not result.timings:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    memory = result.roofline == "memory"
    dtypes = list(dict.fromkeys(t.dtype for t in result.timings))
    fig, axes = plt.subplots(1, len(dtypes), figsize=(5.5 * len(dtypes), 4.2), squeeze=False, sharey=True)
    for ax, dtype in zip(axes[0], dtypes):
        ts = [t for t in result.timings if t.dtype == dtype]
        shapes = list(dict.fromkeys(t.shape for t in ts))
        for impl in dict.fromkeys(t.impl for t in ts):
            mine = {t.shape: t for t in ts if t.impl == impl}
            xs = [i for i, s in enumerate(shapes) if s in mine]
            ys = [(mine[shapes[i]].gbps if memory else mine[shapes[i]].tflops) for i in xs]
            ax.plot(xs, ys, marker="o", label=impl)
        copy = {c.shape: c.gbps for c in result.same_bytes_copies if c.dtype == dtype}
        if xs := [i for i, s in enumerate(shapes) if s in copy]:
            ax.plot(xs, [copy[shapes[i]] for i in xs], color="k", linestyle=":", marker=".", label=SAME_BYTES_COPY)
        if memory and result.ceilings.copy_gbps:
            ax.axhline(result.ceilings.copy_gbps, color="k", linestyle="--", linewidth=1, label="copy bandwidth")
        ax.set_xticks(range(len(shapes)), [_short_shape(s) for s in shapes], rotation=30, fontsize=8)
        ax.set_title(f"{result.op}, {dtype}")
        ax.set_xlabel("size")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("GB/s (read + written)" if memory else "TFLOP/s")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.suptitle(f"{result.env['gpu']}", fontsize=9)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def _short_shape(shape: str) -> str:
    def short(n):
        n = int(n)
        for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
            if n >= size and n % size == 0:
                return f"{n // size}{unit}"
        return str(n)

    return re.sub(r"\d+", lambda m: short(m.group(0)), shape)


def write_files(result: OpResult, out_dir: Path, command: str) -> dict[str, Path]:
    out_dir = Path(out_dir)
    written = {}
    start = time.perf_counter()
    png = plot_png(result)
    # The plot is most of the report's time; the tables and files that follow take milliseconds.
    result.phases["report (plot)"] = round(time.perf_counter() - start, 2)
    files = {"command": command, "plot": f"{result.op}.png" if png else None}
    if png:
        written["png"] = out_dir / f"{result.op}.png"
        write_atomic(written["png"], png)
    for c in result.captures:
        path = out_dir / "inductor" / result.op / _capture_name(c)
        write_atomic(path, f"# {c.impl}, {c.dtype}, {c.shape}: output code captured from torch.compile "
                           f"(torch {result.env['torch']}) by `{command}`\n" + c.code)
    written["json"] = out_dir / f"{result.op}.json"
    write_atomic(written["json"], json.dumps(to_json(result, command), indent=1, default=str))
    written["csv"] = out_dir / f"{result.op}.csv"
    write_atomic(written["csv"], to_csv(result))
    written["checks"] = out_dir / CHECKS_FILE.format(op=result.op)
    write_atomic(written["checks"], checks_gzip(result.checks))
    written["md"] = out_dir / f"{result.op}.md"
    write_atomic(written["md"], markdown(result, files))
    return written
