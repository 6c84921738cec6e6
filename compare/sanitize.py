"""Every CUDA and Triton row of an op under NVIDIA's compute-sanitizer: memcheck (out-of-bounds and misaligned
accesses) for every row, racecheck (shared-memory hazards) for the rows whose kernels use shared memory.

    python -m compare softmax --sanitize [--impls ...] [--dtypes ...] [--sizes ...] [--out FILE.json]

The ordinary checks compare outputs, so they can't see a kernel that computes the right values and also reads or
writes a little past the end of its buffers; the sanitizer can. How a run goes, and why:

  * One sanitized child process per op and tool (``python -m compare.sanitize --child ...``) runs the selected rows
    one after another: starting a process under the sanitizer costs seconds (torch, Triton, the instrumentation),
    so one per row would cost more than the rows. Before each row the child prints ``LAB-SANITIZE-ROW <row>`` and
    after it ``LAB-SANITIZE-DONE <row> {json}``; the parent reads the sanitizer's reports and the child's markers
    from one pipe and gives each report to the row whose marker precedes it. A report that names a kernel of
    another row of the same child (a report printed late) goes to that row instead.
  * ``PYTORCH_NO_CUDA_MEMORY_CACHING=1`` in the child: torch's caching allocator hands out blocks rounded up from
    larger segments, and memcheck, which sees only the segments, then misses an access just past a tensor (measured:
    a Triton store one element past a 1000-float tensor was reported only without the cache). Every tensor is then a
    cudaMalloc of its own, and memcheck's padding (``--padding``) keeps the next allocation from starting right
    where a tensor ends.
  * ``--destroy-on-device-error kernel``: a faulting kernel is stopped and the process goes on, so the rows after a
    faulty one still run in the same child. If the CUDA context is lost anyway, or the child dies or hangs, the rows
    that had not run go to a fresh child; so do the rows after the one in which the sanitizer's print limit was
    reached (it prints no more reports after that).
  * Shapes: the first few of the op's check shapes, which are chosen to reach every code path and tail, under a size
    cap (racecheck is much slower than memcheck: fewer and smaller shapes), then the spec's ``sanitize_shapes``
    under the same cap, for paths that only longer rows reach; every dtype the row takes.
  * Autotuned Triton kernels run every config once instead of benchmarking them: each config is code that may run,
    and one launch of each is enough for the sanitizer.

With ``--out FILE`` the results go to a JSON file too. Exit status of ``--sanitize``: 0 when no row has errors, 1 when a row has errors or could not run to its end, 2 when
this machine can't run the sanitizer (no GPU, no compute-sanitizer) or for bad usage.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import math
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from . import env

TOOLS = ("memcheck", "racecheck")
# Every line compute-sanitizer prints starts with its prefix, "=========" by default, then a space.
SANITIZER_LINE = re.compile(r"^={8,}(?: (.*))?$")
ROW_MARKER = "LAB-SANITIZE-ROW"
DONE_MARKER = "LAB-SANITIZE-DONE"
BUILD_MARKER = "LAB-SANITIZE-BUILD"  # the child's build of the rows' .cu: ptxas's resources per kernel, or the error
EXIT_CONTEXT_LOST = 3  # the child's exit status after a row left its CUDA context unusable
PRINT_LIMIT = 200  # reports per child; a faulting kernel stops at its first bad access, so few come per launch
PADDING_BYTES = 4096  # memcheck's unallocated gap after each allocation (covers a 16-byte vector access well past)
# Per tool: at most this many of the op's check shapes (in the spec's order), each with at most this many elements
# (product of the shape's sizes; for matmul M·N·K, which is what the kernels' work grows with).
SHAPE_LIMITS = {"memcheck": (5, 1 << 25), "racecheck": (3, 1 << 21)}
# Triton calls that make the compiler stage values through shared memory (reductions, scans, dots).
_TRITON_SHARED = re.compile(r"\.(?:sum|max|min|argmax|argmin|reduce|xor_sum|cumsum|cumprod|associative_scan|sort|"
                            r"histogram|dot|dot_scaled)\s*\(")


# ---- Where the sanitizer is, and whether it can run here ------------------------------------------------------
def find_sanitizer() -> str | None:
    """compute-sanitizer from $CUDA_HOME/bin, /usr/local/cuda/bin or PATH (the CUDA toolkit ships it)."""
    homes = [os.environ["CUDA_HOME"]] if os.environ.get("CUDA_HOME") else []
    for home in homes + ["/usr/local/cuda"]:
        candidate = Path(home) / "bin" / "compute-sanitizer"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("compute-sanitizer")


def environment_problem() -> str | None:
    """Why --sanitize can't run on this machine, in words for the user; None when it can."""
    problems = []
    if find_sanitizer() is None:
        problems.append("NVIDIA's compute-sanitizer was not found (looked in $CUDA_HOME/bin, /usr/local/cuda/bin and "
                        "on PATH); it comes with the CUDA toolkit: install the toolkit, or set CUDA_HOME to it")
    if not env.has_gpu():
        problems.append("this machine has no CUDA GPU (torch.cuda.is_available() is False), and the sanitizer checks "
                        "kernels while they run on one; run --sanitize on a GPU machine")
    return "--sanitize can't run here: " + "; and ".join(problems) if problems else None


# ---- The rows, and what each needs ------------------------------------------------------------------------------
class RowError(LookupError):
    """A row name that is not a CUDA or Triton row of what is being sanitized; the message lists the rows."""


def available_rows(op, cu: Path | None = None, triton_file: Path | None = None) -> list:
    """The CUDA and Triton rows to choose from, as compare.discover.Impl: the op's own, or, when a .cu or a Triton
    file is given, that file's (every m.def("<name>(...)") of the .cu, registered as torch.ops.lab_<file stem>.*, and
    every @variant("<name>") function of the Triton file), run on the op's inputs. Found by reading the files."""
    from . import discover

    if cu is None and triton_file is None:
        return [i for i in discover.implementations(op) if i.backend in ("cuda", "triton")]
    rows = []
    if cu is not None:
        cu = Path(cu).resolve()
        rows += [discover.Impl(op.name, "cuda", v, cu, library=f"lab_{cu.stem}")
                 for v in discover._DEF.findall(cu.read_text())]
    if triton_file is not None:
        triton_file = Path(triton_file).resolve()
        rows += [discover.Impl(op.name, "triton", v, triton_file, needs_gpu=False)
                 for v in discover.python_variants(triton_file)]
    return rows


def choose_rows(rows: list, names: list[str]) -> list:
    """The rows with these exact names, in the given order; RowError names the unknown ones and lists the rows."""
    by_name = {r.name: r for r in rows}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise RowError(f"no CUDA or Triton row named {', '.join(unknown)} (only CUDA and Triton rows run under the "
                       f"sanitizer); the rows are: {', '.join(by_name) or '(none)'}")
    return [by_name[n] for n in names]


def kernel_names(row) -> list[str]:
    """The kernels (and the device functions they call) a row reaches, by the line counter's walk from its entry."""
    from . import callgraph

    if row.backend == "cuda":
        return callgraph.cuda_kernel_names(row.source, row.variant)
    return callgraph.triton_kernel_names(row.source, row.variant)


def uses_shared_memory(row, kernels: list[str], built_kernels: list | None = None) -> bool:
    """CUDA: ptxas reported shared memory for one of the row's kernels (built_kernels: compare.build's
    KernelResources; static shared memory, in header helpers too), or the row's code declares it (`extern
    __shared__`, whose size ptxas can't know). Triton: the row's kernels reduce, scan or multiply tiles (tl.sum,
    tl.max, tl.dot, ...), which the compiler stages through shared memory."""
    from . import callgraph

    text = Path(row.source).read_text()
    if row.backend == "cuda":
        if any(k.shared_bytes > 0 for k in built_kernels or () if k.base in kernels):
            return True
        entities, _ = callgraph.c_entities(text)
        clean = callgraph.strip_c_comments(text).splitlines()
        return any("__shared__" in clean[line - 1] for name in kernels if name in entities
                   for first, last in entities[name].spans for line in range(first, last + 1))
    tree = ast.parse(text)
    return any(isinstance(node, ast.FunctionDef) and node.name in kernels
               and _TRITON_SHARED.search(ast.get_source_segment(text, node) or "") for node in tree.body)


@dataclasses.dataclass
class RowPlan:
    row: str
    kernels: list[str]
    tools: list[str]


def plan_rows(rows: list, built_kernels: list | None = None) -> list[RowPlan]:
    """Per row: its kernels (to attribute reports) and the tools to run: memcheck always, racecheck when it uses
    shared memory. built_kernels: ptxas's report of the rows' .cu (None: judged from the source alone)."""
    plans = []
    for row in rows:
        kernels = kernel_names(row)
        tools = ["memcheck"] + (["racecheck"] if uses_shared_memory(row, kernels, built_kernels) else [])
        plans.append(RowPlan(row.name, kernels, tools))
    return plans


def default_shapes(op, tool: str) -> list[tuple[int, ...]]:
    """The tool's shapes for the op: its first small check shapes, then the spec's sanitize_shapes under the tool's
    size cap (the paths only longer rows reach), each shape once."""
    most, max_elements = SHAPE_LIMITS[tool]
    small = [tuple(s) for s in op.check_shapes if math.prod(s) <= max_elements]
    shapes = small[:most] or [tuple(min(op.check_shapes, key=math.prod))]
    return shapes + [s for s in dict.fromkeys(map(tuple, op.sanitize_shapes))
                     if math.prod(s) <= max_elements and s not in shapes]


def dtype_names(op, wanted: list[str] | None) -> list[str]:
    names = [str(d).removeprefix("torch.") for d in op.dtypes]
    return [n for n in names if not wanted or n in wanted]


def describe_shapes(shapes) -> str:
    return ", ".join("x".join(map(str, s)) for s in shapes)


# ---- Reading what a sanitized child printed --------------------------------------------------------------------
@dataclasses.dataclass
class Report:
    """One report of the sanitizer (its lines, prefix removed), and the row it is attributed to."""

    lines: list[str]
    row: str | None  # None: printed before the first row
    warning: bool = False  # racecheck's "Warning: Race reported ..." (a possible hazard), not an error
    printed_during: str | None = None  # the row whose marker preceded it (row may differ: see parse_output)

    @property
    def kernel(self) -> str | None:
        """The kernel the report names: 'at gelu_vec_kernel<float>(...)+0x1b0' or 'Write access at k+0x140'."""
        for line in self.lines:
            if line.startswith("Saved host backtrace"):  # '... up to driver entry point at kernel launch time'
                continue
            for m in re.finditer(r"(?:^|\s)at (\S.*)", line):
                name = kernel_base_name(m.group(1))
                if name:
                    return name
        return None

    def summary(self) -> str:
        """The first line and where (the next line), e.g. 'Invalid __global__ write of size 4 bytes at k+0x1b0 in
        f.cu:12'."""
        return " ".join(line.strip() for line in self.lines[:2])


def kernel_base_name(location: str) -> str | None:
    """A function's own name from a sanitizer location: 'gelu_vec_kernel<float>(const float *, float *, long)+0x1b0
    in gelu.cu:68' -> 'gelu_vec_kernel'; 'lab::(anonymous namespace)::k<float>(...)' -> 'k'; 'gelu_kernel+0x80 in
    gelu.py:30' -> 'gelu_kernel'; an address ('0x7f2a... is out of bounds') -> None."""
    text = location.replace("(anonymous namespace)", "").strip()
    text = re.sub(r"^void\s+", "", text)
    if text.startswith("0x"):
        return None
    m = re.match(r"[\w:]+", text)
    name = m.group(0).split("::")[-1] if m else ""
    return name or None


_SUMMARY_ERRORS = re.compile(r"^ERROR SUMMARY: (\d+) errors?")
_RACECHECK_SUMMARY = re.compile(r"^RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
_NOT_REPORTS = re.compile(r"^(COMPUTE-SANITIZER|ERROR SUMMARY:|RACECHECK SUMMARY:|LEAK SUMMARY:|Process ID)")


@dataclasses.dataclass
class ChildOutput:
    """What a sanitized child process printed, as lines, and how it ended."""

    lines: list[str]
    returncode: int | None
    timed_out: bool = False


@dataclasses.dataclass
class ParsedRun:
    started: list[str]  # rows whose marker was printed, in order
    done: dict[str, dict]  # row -> the child's record of it (cases, seconds, failure, skipped)
    reports: list[Report]
    error_total: int | None  # the sanitizer's own count of errors, when it printed its summary
    other_output: list[str]  # the child's own output: warnings, tracebacks
    limit_row: str | None  # the row during which the print limit was reached (later reports were not printed)
    build: dict | None = None  # the child's BUILD record: {"kernels": [KernelResources as dicts]} or {"failure"}


def parse_output(lines: list[str], kernels_by_row: dict[str, list[str]] | None = None,
                 print_limit: int = PRINT_LIMIT) -> ParsedRun:
    """Splits a child's output into markers, sanitizer reports (each attributed to a row) and the child's own lines.

    A report goes to the row whose ROW marker precedes it, unless it names a kernel that belongs to other rows only
    (kernels_by_row) and to exactly one of them: then to that one, since the sanitizer may print a report after the
    child has moved on. Reports before the first marker belong to no row (row None)."""
    kernels_by_row = kernels_by_row or {}
    started: list[str] = []
    done: dict[str, dict] = {}
    reports: list[Report] = []
    other: list[str] = []
    totals: list[int] = []
    current: str | None = None
    open_report: Report | None = None
    build = None
    for raw in lines:
        line = raw.rstrip("\r\n")
        # The child's lines and the sanitizer's interleave, but the sanitizer's own lines keep their order: a report's
        # indented lines continue it even when a marker was printed in between.
        if line.startswith(ROW_MARKER + " "):
            current = line.split(" ", 1)[1].strip()
            started.append(current)
            continue
        if line.startswith(DONE_MARKER + " "):
            parts = line.split(" ", 2)
            try:
                done[parts[1]] = json.loads(parts[2]) if len(parts) > 2 else {}
            except json.JSONDecodeError:
                done[parts[1]] = {"failure": f"unreadable record from the child: {line}"}
            continue
        if line.startswith(BUILD_MARKER + " "):
            try:
                build = json.loads(line.split(" ", 1)[1])
            except json.JSONDecodeError:
                build = {"failure": f"unreadable build record from the child: {line}"}
            continue
        sanitizer_line = SANITIZER_LINE.match(line)
        if not sanitizer_line:
            other.append(line)
            continue
        content = sanitizer_line.group(1) or ""
        if not content.strip():  # the sanitizer's blank line ends a report
            open_report = None
        elif content[0].isspace():  # an indented line continues the report
            if open_report is not None:
                open_report.lines.append(content.strip())
        elif m := _SUMMARY_ERRORS.match(content):
            totals.append(int(m.group(1)))
            open_report = None
        elif m := _RACECHECK_SUMMARY.match(content):
            totals.append(int(m.group(2)))
            open_report = None
        elif _NOT_REPORTS.match(content):
            open_report = None
        else:
            open_report = Report([content.strip()], current, content.startswith("Warning"), current)
            reports.append(open_report)
    for report in reports:
        report.row = _attribute(report, kernels_by_row)
    error_total = max(totals) if totals else None
    if error_total == 0:  # the sanitizer says there were no errors: what looked like reports were notes
        reports = [r for r in reports if r.warning]
    limit_row = reports[print_limit - 1].printed_during if print_limit and len(reports) >= print_limit else None
    return ParsedRun(started, done, reports, error_total, other, limit_row, build)


def _attribute(report: Report, kernels_by_row: dict[str, list[str]]) -> str | None:
    kernel = report.kernel
    if kernel is None:
        return report.row
    owners = [row for row, kernels in kernels_by_row.items() if kernel in kernels]
    if report.row in owners or len(owners) != 1:
        return report.row
    return owners[0]


# ---- Results -------------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class RowResult:
    row: str
    tool: str
    cases: int = 0  # (dtype, shape) calls that ran
    seconds: float | None = None
    errors: int = 0
    warnings: int = 0
    first_error: str = ""
    reports: list[list[str]] = dataclasses.field(default_factory=list)  # the first few, line by line
    failure: str = ""  # why the row did not run to its end
    skipped: str = ""
    print_limit_reached: bool = False  # the sanitizer stopped printing during this row: at least `errors`

    @property
    def status(self) -> str:
        if self.errors:
            return "errors"
        if self.failure:
            return "failed"
        return "skipped" if self.skipped else "ok"

    @property
    def failed(self) -> bool:
        return self.status in ("errors", "failed")


REPORTS_KEPT = 5


def _row_result(row: str, tool: str, record: dict, reports: list[Report]) -> RowResult:
    errors = [r for r in reports if not r.warning]
    return RowResult(row, tool, cases=record.get("cases", 0), seconds=record.get("seconds"), errors=len(errors),
                     warnings=len(reports) - len(errors), first_error=errors[0].summary() if errors else "",
                     reports=[r.lines for r in (errors or reports)[:REPORTS_KEPT]],
                     failure=record.get("failure") or "", skipped=record.get("skipped") or "")


def _ended(output: ChildOutput, timeout_s: float) -> str:
    if output.timed_out:
        return f"timed out: no row finished for {timeout_s:g} s, and the sanitized process was killed"
    code = output.returncode
    if code is not None and code < 0:
        try:
            return f"the sanitized process died of {signal.Signals(-code).name}"
        except ValueError:
            return f"the sanitized process died of signal {-code}"
    return f"the sanitized process ended (exit status {code})"


def _tail(lines: list[str], count: int = 12) -> str:
    kept = [line for line in lines if line.strip()][-count:]
    return ("; its last output:\n" + "\n".join(kept)) if kept else ""


def collect(run: ParsedRun, output: ChildOutput, pending: list[str], tool: str,
            timeout_s: float) -> tuple[dict[str, RowResult], list[str]]:
    """Results for the rows of `pending` that this child finished or was running when it ended, and the rows left
    for a fresh child: those it never started, and those after the row where the print limit was reached."""
    results: dict[str, RowResult] = {}
    cut = pending.index(run.limit_row) if run.limit_row in pending else None
    for i, row in enumerate(pending):
        if cut is not None and i > cut:
            break
        mine = [r for r in run.reports if r.row == row]
        if row in run.done:
            results[row] = _row_result(row, tool, run.done[row], mine)
        elif row in run.started:  # it was running when the child ended
            results[row] = _row_result(row, tool, {"failure": _ended(output, timeout_s) + _tail(run.other_output)},
                                       mine)
        if row in results and row == run.limit_row:
            results[row].print_limit_reached = True
    if not run.started:  # the child ended before its first row: every row would meet the same fate
        before = [r.summary() for r in run.reports if r.row is None]
        why = _ended(output, timeout_s) + " before its first row" + _tail(before + run.other_output)
        return {row: RowResult(row, tool, failure=why) for row in pending}, []
    return results, [row for row in pending if row not in results]


# ---- Running children ----------------------------------------------------------------------------------------------
def sanitizer_command(sanitizer: str, tool: str, launch_timeout_s: float, print_limit: int = PRINT_LIMIT) -> list[str]:
    command = [sanitizer, "--tool", tool, "--print-limit", str(print_limit),
               # A Python process's host backtrace is dozens of interpreter frames: the device side says where.
               "--show-backtrace", "device",
               # Not the compilers and ninja that builds and Triton's JIT start.
               "--target-processes", "application-only",
               # The child's exit status is read here; a nonzero one is not a finding about a kernel.
               "--check-exit-code", "no",
               # A faulting kernel is stopped, and the rows after it still run in this process.
               "--destroy-on-device-error", "kernel",
               # torch and Triton take seconds to import before the child's first CUDA call.
               "--launch-timeout", str(max(int(launch_timeout_s), 60))]
    if tool == "memcheck":
        # API errors are torch's and Triton's business (a failed launch raises in the row); reports are about kernels.
        command += ["--padding", str(PADDING_BYTES), "--report-api-errors", "no"]
    return command


def child_command(op_name: str, rows: list[str], shapes, dtypes: list[str], seed: int = 0,
                  cu: Path | None = None, triton_file: Path | None = None) -> list[str]:
    command = [sys.executable, "-m", "compare.sanitize", "--child", "--op", op_name, "--rows", ",".join(rows),
               "--shapes", describe_shapes(shapes).replace(" ", ""), "--dtypes", ",".join(dtypes), "--seed", str(seed)]
    if cu is not None:
        command += ["--cu", str(Path(cu).resolve())]
    if triton_file is not None:
        command += ["--triton-file", str(Path(triton_file).resolve())]
    return command


def child_environment() -> dict[str, str]:
    environ = dict(os.environ)
    environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"  # see the module's docstring
    environ["PYTHONUNBUFFERED"] = "1"
    environ.pop("TRITON_INTERPRET", None)
    return environ


def launch_child(command: list[str], environ: dict[str, str], timeout_s: float,
                 on_line: Callable[[str], None] | None = None) -> ChildOutput:
    """Runs one sanitized child, its stdout and stderr (and the sanitizer's reports) in one pipe, and kills it (its
    whole process group) when no row finishes for timeout_s."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                            cwd=env.ROOT, env=environ, start_new_session=True)
    lines: queue.Queue = queue.Queue()

    def read():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    out: list[str] = []
    timed_out = False
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                timed_out = True
                break
            if line is None:
                break
            out.append(line)
            if line.startswith((ROW_MARKER, DONE_MARKER)):
                deadline = time.monotonic() + timeout_s
                if on_line:
                    on_line(line)
    finally:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the sanitizer and the child: the group started above
            except ProcessLookupError:
                pass
        proc.wait()
        reader.join(timeout=10)
    while not lines.empty():
        line = lines.get()
        if line is not None:
            out.append(line)
    return ChildOutput(out, proc.returncode, timed_out)


def run_tool(tool: str, op_name: str, plans: list[RowPlan], shapes, dtypes: list[str], *, seed: int = 0,
             cu: Path | None = None, triton_file: Path | None = None, timeout_s: float = 600.0,
             print_limit: int = PRINT_LIMIT, progress: bool = True,
             launch: Callable[..., ChildOutput] = launch_child) -> tuple[list[RowResult], dict | None]:
    """Runs the rows under one tool: in one child, and in a fresh child for the rows a child could not finish.
    Returns their results, and the first child's BUILD record (None: no CUDA rows, or the child never said)."""
    kernels_by_row = {p.row: p.kernels for p in plans}
    sanitizer = find_sanitizer() or "compute-sanitizer"
    environ = child_environment()
    results: dict[str, RowResult] = {}
    pending = [p.row for p in plans]
    build = None

    def show(line: str) -> None:
        if progress and line.startswith(ROW_MARKER):
            print(f"  {tool}: {line.split(' ', 1)[1].strip()}", flush=True)

    while pending:
        command = sanitizer_command(sanitizer, tool, timeout_s, print_limit) + child_command(
            op_name, pending, shapes, dtypes, seed, cu, triton_file)
        output = launch(command, environ, timeout_s, show)
        run = parse_output(output.lines, kernels_by_row, print_limit)
        build = build or run.build
        finished, pending = collect(run, output, pending, tool, timeout_s)
        results.update(finished)
    return [results[p.row] for p in plans], build


# ---- One op, end to end -------------------------------------------------------------------------------------------
@dataclasses.dataclass
class SanitizeResult:
    op: str
    dtypes: list[str]
    shapes: dict[str, list[tuple[int, ...]]]  # per tool
    plans: list[RowPlan]
    rows: list[RowResult]
    seconds: float = 0.0

    def failed_rows(self) -> list[RowResult]:
        return [r for r in self.rows if r.failed]


def sanitize(op, impls: list[str] | None = None, *, dtypes: list[str] | None = None, shapes=None, seed: int = 0,
             cu: Path | None = None, triton_file: Path | None = None, timeout_s: float = 600.0,
             progress: bool = True, launch: Callable[..., ChildOutput] = launch_child) -> SanitizeResult:
    """Runs the op's CUDA and Triton rows (or those of `cu` / `triton_file`, on the op's inputs and shapes) under
    memcheck, and those that use shared memory under racecheck too. `impls` selects rows as --impls does; `shapes`
    replaces the default shapes of both tools.

    This process reads the sources only; the sanitized children build and run the rows. The memcheck child reports
    ptxas's resources per kernel, which decide racecheck for CUDA rows whose shared memory is in a header helper."""
    from . import build, discover

    start = time.perf_counter()
    every_row = available_rows(op, cu, triton_file)
    # Patterns that select torch or peer rows only are not an error here: those rows have no kernels of the lab's to
    # check.
    rows = discover.select(every_row, impls, missing_ok=True)
    if not rows:
        raise discover.UnknownOp(f"no CUDA or Triton row of {op.name} to sanitize"
                                 + (f" matches --impls {','.join(impls)}" if impls else "")
                                 + f"; its CUDA and Triton rows are: {', '.join(r.name for r in every_row) or 'none'}")
    names = dtype_names(op, dtypes)
    tool_shapes = {tool: [tuple(s) for s in shapes] if shapes else default_shapes(op, tool) for tool in TOOLS}
    plans = plan_rows(rows)
    results: list[RowResult] = []
    for tool in TOOLS:
        chosen = [p for p in plans if tool in p.tools]
        if not chosen:
            continue
        if progress:
            print(f"  {tool}: {len(chosen)} row(s) at {describe_shapes(tool_shapes[tool])} ({', '.join(names)})",
                  flush=True)
        found, built = run_tool(tool, op.name, chosen, tool_shapes[tool], names, seed=seed, cu=cu,
                                triton_file=triton_file, timeout_s=timeout_s, progress=progress, launch=launch)
        results += found
        if tool == "memcheck" and built and built.get("kernels"):
            plans = plan_rows(rows, [build.KernelResources(**k) for k in built["kernels"]])
    order = {r.name: i for i, r in enumerate(every_row)}
    results.sort(key=lambda r: (order.get(r.row, len(order)), TOOLS.index(r.tool)))
    return SanitizeResult(op.name, names, tool_shapes, plans, results, time.perf_counter() - start)


def print_table(result: SanitizeResult, file=None) -> None:
    from tabulate import tabulate

    file = file or sys.stdout
    table = []
    for r in result.rows:
        errors = "-" if r.skipped else f"{r.errors}{'+' if r.print_limit_reached else ''}"
        if r.warnings:
            errors += f" ({r.warnings} warning{'s' if r.warnings > 1 else ''})"
        note = r.first_error or r.failure or (f"skipped: {r.skipped}" if r.skipped else "")
        note = note.splitlines()[0] if note else ""
        table.append([r.row, r.tool, r.cases, "" if r.seconds is None else f"{r.seconds:.1f}", errors,
                      note[:150] + ("..." if len(note) > 150 else "")])
    print(tabulate(table, headers=["row", "tool", "cases", "s", "errors", "first error"]), file=file)
    for r in result.rows:  # each failed row's first report (or why it failed) in full, below the table
        if r.errors:
            more = f"{'at least ' if r.print_limit_reached else ''}{r.errors} error{'s' if r.errors > 1 else ''}"
            lines = r.reports[0][:1] + ["  " + line for line in r.reports[0][1:]]
            print(f"\n{result.op} {r.row} ({r.tool}): {more}; the first:", file=file)
            print("\n".join("    " + line for line in lines), file=file)
            if r.failure:
                print(f"  and the row did not run to its end: {r.failure}", file=file)
        elif r.failed:
            print(f"\n{result.op} {r.row} ({r.tool}): failed", file=file)
            print("\n".join("    " + line for line in r.failure.splitlines()), file=file)
    if any(r.warnings for r in result.rows):
        print("\nracecheck warnings are possible hazards it could not confirm; they do not fail the run.", file=file)


def write_json(results: list[SanitizeResult], path: Path) -> Path:
    """The --out report: one JSON file for every op of the run (rows, their reports, the shapes and plans)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"gpu": env.gpu_name(), "git_revision": env.git_revision(), "ops": [
        {"op": result.op, "dtypes": result.dtypes, "seconds": round(result.seconds, 1),
         "shapes": {tool: [list(s) for s in shapes] for tool, shapes in result.shapes.items()},
         "plans": [dataclasses.asdict(p) for p in result.plans],
         "rows": [{**dataclasses.asdict(r), "status": r.status} for r in result.rows]}
        for result in results]}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)  # a reader never sees half a file
    return path


def main(ops, impls: dict[str, list[str] | None] | list[str] | None = None, dtypes: list[str] | None = None,
         sizes=None, out: str | None = None, seed: int = 0, timeout_s: float = 600.0) -> int:
    """`python -m compare OP... --sanitize`: a table per op, and with `out` a JSON file of them all; exit status 0,
    1 (a row has errors or failed) or 2. `impls`: --impls patterns for every op, or per op name (as the command line
    resolved them for `all`)."""
    from . import discover

    problem = environment_problem()
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    failed = []
    done: list[SanitizeResult] = []
    for op in ops:
        try:
            patterns = impls.get(op.name) if isinstance(impls, dict) else impls
            rows = discover.select(available_rows(op), patterns, missing_ok=True)
        except discover.SpecError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if not rows:
            print(f"== {op.name}: skipped, none of the rows chosen is a CUDA or Triton row\n", flush=True)
            continue
        print(f"== {op.name} under compute-sanitizer ({env.gpu_name()})", flush=True)
        result = sanitize(op, patterns, dtypes=dtypes, shapes=sizes, seed=seed, timeout_s=timeout_s)
        done.append(result)
        print_table(result)
        print(f"{op.name}: sanitized in {result.seconds:.0f} s\n", flush=True)
        failed += [f"{op.name} {r.row} ({r.tool}): {r.status}" for r in result.failed_rows()]
    if out is not None and done:
        print(f"wrote {env.relpath(write_json(done, Path(out)))}")
    if not done:
        print("error: nothing to sanitize: only CUDA and Triton rows run under the sanitizer, and --impls chose none",
              file=sys.stderr)
        return 2
    if failed:
        print("\nFAILED:\n  " + "\n  ".join(failed), file=sys.stderr)
        return 1
    return 0


# ---- The child: runs rows under the sanitizer, one after another ------------------------------------------------------
def child_parser() -> argparse.ArgumentParser:
    from .cli import parse_dtypes, parse_list, parse_sizes

    p = argparse.ArgumentParser(
        prog="python -m compare.sanitize",
        description="Runs rows of an op for compute-sanitizer, printing a marker before and after each row. "
                    "`python -m compare OP --sanitize` starts it under the sanitizer; it is not meant to be run by "
                    "hand.")
    p.add_argument("--child", action="store_true", required=True, help="run as the sanitized child (required)")
    p.add_argument("--op", required=True, help="the op whose inputs (and rows) to use")
    p.add_argument("--rows", type=parse_list, required=True, metavar="LIST", help="rows by exact name, in order")
    p.add_argument("--shapes", type=parse_sizes, required=True, metavar="LIST", help="e.g. 1,127,1025 or 17x33x9")
    p.add_argument("--dtypes", type=parse_dtypes, metavar="LIST", help="default: every dtype of the op")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cu", type=Path, help="take the CUDA rows from this .cu (ops torch.ops.lab_<file stem>.*)")
    p.add_argument("--triton-file", type=Path, help="take the Triton rows from this file (@variant functions)")
    return p


def run_row(op, row, shapes, dtypes, seed: int) -> dict:
    """Calls the row on the op's inputs at every shape and dtype it takes; the record for its DONE marker."""
    import torch

    from . import check, isolate, worker

    reason = op.unavailable_reason(row.name, torch.cuda.get_device_capability())
    if reason:
        return {"skipped": reason}
    record = {"cases": 0}
    start = time.perf_counter()
    case = "loading it"
    try:
        fn = row.load()
        if row.backend == "triton":
            worker.run_autotune_configs_once(row)
        for dtype in dtypes:
            for shape in shapes:
                if not op.supports(row.name, dtype, shape):
                    continue
                case = f"{str(dtype).removeprefix('torch.')} {op.describe_shape(shape)}"
                fn(*check.make_inputs(op, shape, dtype, torch.device("cuda"), seed))
                torch.cuda.synchronize()  # its reports come before the DONE marker
                record["cases"] += 1
    except Exception as exc:  # the row's failure is reported on its row; the next row still runs
        record["failure"] = f"{isolate.short_error(exc)} (at {case})"
    record["seconds"] = round(time.perf_counter() - start, 2)
    return record


def _build(op, rows) -> dict | None:
    """Builds (or loads from the build cache) the .cu of the CUDA rows, as their load() will; the BUILD record."""
    from . import build

    cuda = [r for r in rows if r.backend == "cuda"]
    if not cuda:
        return None
    try:
        built = build.build(cuda[0].library.removeprefix("lab_"), op.cuda_flags, progress=False, path=cuda[0].source)
    except build.BuildError as exc:
        return {"failure": f"build failed: {exc}"}
    return {"kernels": [dataclasses.asdict(k) for k in built.kernels]}


def child_main(argv: list[str] | None = None) -> int:
    args = child_parser().parse_args(argv)
    from . import discover

    try:
        op = discover.load_op(args.op)
        rows = choose_rows(available_rows(op, args.cu, args.triton_file), args.rows)
    except (discover.UnknownOp, discover.SpecError, RowError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not env.has_gpu():
        print("error: the sanitized child runs kernels and needs a CUDA GPU; this machine has none", file=sys.stderr)
        return 2
    import torch

    from . import worker

    dtypes = [getattr(torch, name) for name in dtype_names(op, args.dtypes)]
    built = _build(op, rows)
    if built is not None:
        print(f"{BUILD_MARKER} {json.dumps(built)}", flush=True)
    for row in rows:
        print(f"{ROW_MARKER} {row.name}", flush=True)
        if row.backend == "cuda" and built and built.get("failure"):
            record = {"failure": built["failure"]}
        else:
            record = run_row(op, row, args.shapes, dtypes, args.seed)
        healthy = worker.cuda_context_healthy()
        if not healthy:
            record["failure"] = (record.get("failure", "") + "\nthe CUDA context is lost; the rows after this one run "
                                 "in a fresh process").strip()
        print(f"{DONE_MARKER} {row.name} {json.dumps(record)}", flush=True)
        if not healthy:
            return EXIT_CONTEXT_LOST
    return 0


if __name__ == "__main__":
    sys.exit(child_main())
