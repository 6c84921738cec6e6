"""``python -m compare summary``: results/README.md, every op's best CUDA row and best Triton row next to torch eager
and torch.compile (and, for an op whose ceiling is other vendor rows, the fastest of them), on every GPU folder with
full results, at each op's headline cells.

It reads the result files only (``results/<gpu>/<op>.json``, and ``results/<gpu>/<host>/<op>.json`` for another host
with the same GPU), never runs anything and needs no GPU. The ``partial/`` and ``quick/`` folders (runs narrowed by
options) and ``cpu/`` (no timings) are left out. The same files give the same output, byte for byte."""
from __future__ import annotations

import json
import math
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Collection, Sequence

from .results import DEFAULT_CEILING_ROWS, ceiling_name
from .targets import Target, judge

# Folders under results/<gpu>/ that do not hold an op's full results: runs narrowed by options, and captured code.
NARROWED = ("partial", "quick")
NOT_FULL_RESULTS = (*NARROWED, "inductor")
# Folders under results/ that are not a GPU's.
NOT_A_GPU = ("cpu",)
DTYPE_ORDER = ("float32", "float16", "bfloat16")
SAME_BYTES_COPY = "copy (same bytes)"
REQUIRED_KEYS = {"op": str, "command": str, "env": dict, "roofline": str, "rows": list, "timings": list}
OPTIONAL_LISTS = ("loc", "build", "jit", "torch_compile")
TIMING_KEYS = {"impl": str, "dtype": str, "shape": str, "median_ms": (int, float)}


class SummaryError(Exception):
    """Results that cannot be summarized: the message says what, where, and what to do."""


@dataclass
class OpFile:
    """One op's full results on one GPU folder."""
    folder: str  # the GPU folder, relative to the results folder: "nvidia-h200" or "nvidia-h200/<host>"
    path: Path
    data: dict

    @property
    def memory(self) -> bool:
        return self.data["roofline"] == "memory"

    def statuses(self) -> dict[str, tuple[str, str]]:
        return {r["impl"]: (r.get("status", ""), r.get("message") or "") for r in self.data["rows"]}

    @property
    def ceiling_rows(self) -> list[str]:
        """A compute-bound op's ceiling rows (the json's 'ceiling_rows'; torch:eager in files written before it)."""
        return list(self.data.get("ceiling_rows") or DEFAULT_CEILING_ROWS)


# -- finding and reading the result files


def result_folders(results: Path) -> list[tuple[str, Path]]:
    """(name, folder) of every folder that holds full results: results/<gpu>/ and results/<gpu>/<host>/."""
    found = []
    for gpu in sorted(p for p in results.iterdir() if p.is_dir()):
        if gpu.name in NOT_A_GPU or gpu.name.startswith("."):
            continue
        found.append((gpu.name, gpu))
        for host in sorted(p for p in gpu.iterdir() if p.is_dir()):
            if host.name not in NOT_FULL_RESULTS and not host.name.startswith(".") and _holds_full_results(host):
                found.append((f"{gpu.name}/{host.name}", host))
    return found


def _holds_full_results(folder: Path) -> bool:
    """Whether a folder under results/<gpu>/ is another host's: named as the lab names a host's folder
    (paths.host_folder of the json's env.host) and holding some op's json from a run not narrowed by --impls,
    --dtypes, --sizes or --quick. An experiment's folder (a run given --out, narrowed or not, or a full run's files
    moved aside) is not a host's full results. A json that cannot be read counts as full, so that load() names it."""
    from . import paths

    narrowing = (*paths.FILTER_OPTIONS, "--quick")
    for path in folder.glob("*.json"):
        try:
            data = json.loads(path.read_text())
            command = data.get("command", "")
            words = shlex.split(command) if isinstance(command, str) else []
            host = (data.get("env") or {}).get("host")
        except (OSError, ValueError, AttributeError):
            return True
        if (isinstance(host, str) and paths.host_folder(host) == folder.name
                and not any(word.split("=")[0] in narrowing for word in words)):
            return True
    return False


def load(path: Path, folder: str) -> OpFile:
    """Read one op's json and check that it has what the summary uses; a SummaryError names the file otherwise."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SummaryError(f"{path}: cannot be read as JSON ({exc}). Rerun that op (python -m compare OP) to "
                           "write it again, or move the file out of the results folder") from None

    def bad(what: str) -> SummaryError:
        return SummaryError(f"{path}: {what}, so it is not an op's results as `python -m compare OP` writes them. "
                            "Rerun that op to write it again, or move the file out of the results folder")

    if not isinstance(data, dict):
        raise bad(f"holds a JSON {type(data).__name__}, not an object")
    for key, kind in REQUIRED_KEYS.items():
        if key not in data:
            raise bad(f"has no {key!r}")
        if not isinstance(data[key], kind):
            raise bad(f"its {key!r} is a {type(data[key]).__name__}, not a {kind.__name__}")
    if data["op"] != path.stem:
        raise bad(f"its 'op' is {data['op']!r}, but the file is named {path.name}")
    if data["roofline"] not in ("memory", "compute"):
        raise bad(f"its 'roofline' is {data['roofline']!r}, neither 'memory' nor 'compute'")
    if not isinstance(data.get("ceilings", {}), dict):
        raise bad("its 'ceilings' is not an object")
    ceiling_rows = data.get("ceiling_rows", list(DEFAULT_CEILING_ROWS))
    if not (isinstance(ceiling_rows, list) and ceiling_rows and all(isinstance(r, str) for r in ceiling_rows)):
        raise bad("its 'ceiling_rows' is not a list of row names")
    lists = {key: data.get(key, []) for key in OPTIONAL_LISTS}
    lists["ceilings.same_bytes_copy"] = data.get("ceilings", {}).get("same_bytes_copy", [])
    for key, entries in lists.items():
        if not (isinstance(entries, list) and all(isinstance(e, dict) for e in entries)):
            raise bad(f"its {key!r} is not a list of objects")
    for i, row in enumerate(data["rows"]):
        if not (isinstance(row, dict) and isinstance(row.get("impl"), str) and isinstance(row.get("status"), str)):
            raise bad(f"rows[{i}] lacks an 'impl' or a 'status'")
    for i, t in enumerate(data["timings"]):
        if not isinstance(t, dict):
            raise bad(f"timings[{i}] is not an object")
        for key, kind in TIMING_KEYS.items():
            if not isinstance(t.get(key), kind):
                raise bad(f"timings[{i}] has no {key!r}")
        for key in ("gbps", "tflops", "fraction_of_ceiling", "fraction_of_same_bytes_copy", "q25_ms", "q75_ms"):
            if t.get(key) is not None and not isinstance(t[key], (int, float)):
                raise bad(f"timings[{i}]'s {key!r} is not a number")
    return OpFile(folder, path, data)


def load_all(results: Path) -> tuple[dict[str, dict[str, OpFile]], dict[str, list[str]]]:
    """Per op, per GPU folder: its results; and per GPU folder, the ops found only in its partial/ or quick/."""
    if not results.is_dir():
        raise SummaryError(f"no results folder at {results}: run an op on a GPU machine first (python -m compare OP "
                           "writes results/<gpu>/OP.json), or name the folder: python -m compare summary FOLDER")
    ops: dict[str, dict[str, OpFile]] = {}
    narrowed: dict[str, list[str]] = {}
    for folder, path in result_folders(results):
        for file in sorted(path.glob("*.json")):
            f = load(file, folder)
            ops.setdefault(f.data["op"], {})[folder] = f
        narrowed[folder] = sorted({p.stem for sub in NARROWED for p in (path / sub).glob("*.json")})
    if not ops:
        raise SummaryError(f"no full results under {results}: there is no {results}/<gpu>/<op>.json (the partial/, "
                           "quick/ and cpu/ folders are not summarized). Run `python -m compare OP` on a GPU machine "
                           "without --impls, --dtypes, --sizes or --quick, or name another folder: "
                           "python -m compare summary FOLDER")
    return ops, narrowed


# -- choosing the cells and the rows


def dims(shape: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", shape)]


def short_shape(shape: str) -> str:
    """'268435456' -> '256M', 'M=4096 N=32768' -> 'M=4K N=32K' (K, M, G = 2^10, 2^20, 2^30)."""
    def short(n: int) -> str:
        for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
            if n >= size and n % size == 0:
                return f"{n // size}{unit}"
        return str(n)

    return re.sub(r"\d+", lambda m: short(int(m.group(0))), shape)


def dtype_key(dtype: str) -> tuple:
    return (DTYPE_ORDER.index(dtype), "") if dtype in DTYPE_ORDER else (len(DTYPE_ORDER), dtype)


def headline_cells(f: OpFile) -> list[tuple[str, str]]:
    """(dtype, shape) per dtype timed: for a memory-bound op the largest timed shape (most elements); for a
    compute-bound op the largest square shape (every dimension equal), or the one with the most flops if no timed
    shape is square."""
    shapes: dict[str, dict[str, dict]] = {}
    for t in f.data["timings"]:
        shapes.setdefault(t["dtype"], {}).setdefault(t["shape"], t)
    cells = []
    for dtype in sorted(shapes, key=dtype_key):
        timed = shapes[dtype]
        if f.memory:
            shape = max(timed, key=lambda s: (math.prod(dims(s)), s))
        else:
            square = [s for s in timed if len(set(dims(s))) == 1]
            shape = (max(square, key=lambda s: (dims(s)[0], s)) if square
                     else max(timed, key=lambda s: (timed[s].get("flops") or math.prod(dims(s)), s)))
        cells.append((dtype, shape))
    return cells


def rate(f: OpFile, t: dict) -> float | None:
    """GB/s for a memory-bound op, TFLOP/s for a compute-bound one."""
    return t.get("gbps") if f.memory else t.get("tflops")


def fraction(f: OpFile, t: dict) -> tuple[float | None, bool]:
    """The fraction of the op's ceiling, and whether a memory-bound op's fell back to the large-buffer copy."""
    if f.memory and t.get("fraction_of_same_bytes_copy") is not None:
        return t["fraction_of_same_bytes_copy"], False
    return t.get("fraction_of_ceiling"), f.memory


def counted(f: OpFile, t: dict) -> bool:
    """A timing that may count: its row passed every check (status ok) and it was not refused as implausible."""
    value = rate(f, t)
    return (f.statuses().get(t["impl"], ("",))[0] == "ok" and not t.get("implausible") and value is not None
            and math.isfinite(value))


def among(impl: str, rows: str | Collection[str]) -> bool:
    """Whether impl is one of rows: a backend ("cuda": each cuda:<name> row) or a collection of row names."""
    return impl.split(":")[0] == rows if isinstance(rows, str) else impl in rows


def best(f: OpFile, rows: str | Collection[str], dtype: str, shape: str) -> dict | None:
    """The timing of the counted row among rows (a backend, or row names) with the highest median throughput at the
    cell."""
    ts = [t for t in f.data["timings"] if among(t["impl"], rows) and t["dtype"] == dtype
          and t["shape"] == shape and counted(f, t)]
    return max(ts, key=lambda t: (rate(f, t), t["impl"]), default=None)


def timing(f: OpFile, impl: str, dtype: str, shape: str) -> dict | None:
    return next((t for t in f.data["timings"] if t["impl"] == impl and t["dtype"] == dtype and t["shape"] == shape),
                None)


def compile_modes(files: dict[str, OpFile]) -> list[str]:
    """torch:compile, then its other modes (torch:compile-<mode>) in name order, as timed on any GPU folder."""
    names = {t["impl"] for f in files.values() for t in f.data["timings"]} | {
        r["impl"] for f in files.values() for r in f.data["rows"]}
    others = sorted(n for n in names if n.startswith("torch:compile-"))
    return ["torch:compile", *others]


# -- the cells' text


def seconds(s: float) -> str:
    return f"{s:.1f} s" if s >= 1 else f"{s:.2f} s"


def lines_of(f: OpFile, impl: str, dtype: str) -> str:
    """kernel + host lines: of the row's own source, or for torch.compile of the code it generated for the dtype."""
    loc = next((l for l in f.data.get("loc", []) if l.get("impl") == impl), None)
    if loc is not None and loc.get("kernel") is not None and loc.get("host") is not None:
        return f"{loc['kernel'] + loc['host']} ({loc['kernel']}+{loc['host']})"
    capture = compile_capture(f, impl, dtype)
    if capture is not None and capture.get("kernel_lines") is not None and capture.get("host_lines") is not None:
        k, h = capture["kernel_lines"], capture["host_lines"]
        return f"{k + h} ({k}+{h}) generated"
    return "—"


def compile_capture(f: OpFile, impl: str, dtype: str) -> dict | None:
    if not impl.startswith("torch:compile"):
        return None
    mode = impl.removeprefix("torch:compile").removeprefix("-") or "default"
    return next((c for c in f.data.get("torch_compile", []) if c.get("mode") == mode and c.get("dtype") == dtype),
                None)


def build_of(f: OpFile, impl: str, dtype: str) -> str:
    """CUDA: the cold build of the op's .cu; Triton: the first call at the dtype; torch.compile: its compile."""
    backend = impl.split(":")[0]
    if backend == "cuda":
        cold = [b["cold_s"] for b in f.data.get("build", []) if b.get("impl") == impl and b.get("cold_s") is not None]
        return f"{seconds(cold[0])} build" if cold else "—"
    if backend == "triton":
        # The cold first call (JIT and autotuning with nothing cached), recorded where the run found it cached.
        jit = [j.get("cold_first_call_s") or j["first_call_s"] for j in f.data.get("jit", [])
               if j.get("impl") == impl and j.get("dtype") == dtype and j.get("first_call_s") is not None]
        return f"{seconds(jit[0])} JIT" if jit else "—"
    capture = compile_capture(f, impl, dtype)
    if capture is not None and capture.get("compile_s") is not None:
        return f"{seconds(capture['compile_s'])} compile"
    return "—"


def figures(f: OpFile, t: dict) -> tuple[str, str]:
    """(fraction with its marks, absolute figure) of one timing."""
    frac, fallback = fraction(f, t)
    marks = ("*" if fallback else "") + (" !" if t.get("noisy") else "") + (" h" if t.get("host_bound") else "")
    value = rate(f, t)
    absolute = "—" if value is None else (f"{value:.0f}" if f.memory else f"{value:.1f}")
    return ("—" if frac is None else f"{frac:.2f}") + marks, absolute


def absent(f: OpFile, impl_or_backend: str | tuple[str, ...], dtype: str, shape: str) -> str:
    """Why a line has no figure at a cell: a line of one row, of a backend's best row, or of the best of some rows."""
    status = f.statuses()
    if is_row(impl_or_backend):
        if impl_or_backend not in status:
            return "not run"
        state, _ = status[impl_or_backend]
        if state != "ok":
            return f"{state}, not counted"
        t = timing(f, impl_or_backend, dtype, shape)
        return "implausible, not counted" if t is not None and t.get("implausible") else "not timed here"
    rows = [impl for impl in status if among(impl, impl_or_backend)]
    if not rows:
        return "no row"
    if all(status[impl][0] != "ok" for impl in rows):
        return "no row passed"
    return "no passing row timed here"


def iqrs_overlap(fast: dict, slow: dict) -> bool:
    """Whether two timings' interquartile ranges overlap, `fast` the faster (False where either lacks them)."""
    quartiles = [fast.get("q25_ms"), fast.get("q75_ms"), slow.get("q25_ms"), slow.get("q75_ms")]
    return None not in quartiles and fast["q75_ms"] >= slow["q25_ms"]


def verdict(f: OpFile, cuda: dict | None, triton: dict | None) -> str:
    """CUDA or Triton at a cell: the faster best row and by how much, unless their timings' interquartile ranges
    overlap."""
    if cuda is None or triton is None:
        return "Triton only" if triton else "CUDA only" if cuda else "—"
    fast, slow, name = (cuda, triton, "CUDA") if rate(f, cuda) >= rate(f, triton) else (triton, cuda, "Triton")
    if iqrs_overlap(fast, slow):
        return "tie (IQRs overlap)"
    return f"{name}, {rate(f, fast) / rate(f, slow):.2f}x"


# -- the file


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]

    def line(cells):
        return "| " + " | ".join(str(c).replace("|", "\\|").ljust(w) for c, w in zip(cells, widths)) + " |"

    return "\n".join([line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])


def commit(f: OpFile) -> str:
    rev = str(f.data["env"].get("git_revision") or "unknown")
    sha, plus, rest = rev.partition("+")
    return (sha[:7] if re.fullmatch(r"[0-9a-f]{7,40}", sha) else sha) + plus + rest


def link(path: Path, out_dir: Path) -> str:
    rel = Path(os.path.relpath(path, out_dir)).as_posix()
    return f"[{rel}]({rel})"


def is_row(what: str | tuple[str, ...]) -> bool:
    """A line's `what` (op_lines) names one row ("torch:eager"), not a backend ("cuda") or rows to take the best of."""
    return isinstance(what, str) and ":" in what


def ceiling_rows(files: dict[str, OpFile]) -> list[str]:
    """A compute-bound op's ceiling rows, as its files name them (in the order they first do)."""
    return list(dict.fromkeys(row for f in files.values() for row in f.ceiling_rows))


def op_lines(files: dict[str, OpFile]) -> list[tuple[str, str | tuple[str, ...]]]:
    """(label, backend, impl or rows to take the best of) of the table's lines: for an op whose ceiling is other
    rows than torch:eager, the line "vendor" is the fastest of them."""
    compute = any(not f.memory for f in files.values())
    vendor = ceiling_rows(files) if compute else list(DEFAULT_CEILING_ROWS)
    return [("best CUDA", "cuda"), ("best Triton", "triton"),
            *([("vendor", tuple(vendor))] if vendor != list(DEFAULT_CEILING_ROWS) else []),
            ("torch:eager", "torch:eager"), *[(mode, mode) for mode in compile_modes(files)]]


def op_section(op: str, files: dict[str, OpFile], folders: list[str], out_dir: Path,
               targets: Sequence[Target] = ()) -> str:
    first = files[next(folder for folder in folders if folder in files)]
    memory = first.memory
    unit = "GB/s" if memory else "TFLOP/s"
    title = first.data.get("summary")
    out = [f"## {op}" + (f": {title}" if isinstance(title, str) and title else "") + "\n"]
    out.append("Results: " + "; ".join(
        f"{folder}: {link(f.path, out_dir)} from `{f.data['command']}` at commit {commit(f)} on "
        f"{f.data['env'].get('gpu', 'an unnamed GPU')} (torch {f.data['env'].get('torch', '?')}, "
        f"triton {f.data['env'].get('triton', '?')})" for folder, f in files.items()) + ".\n")
    if memory:
        out.append("Headline cells: the largest timed shape per dtype. Fraction of a copy of the same bytes timed in "
                   f"the same run (`{SAME_BYTES_COPY}`, its GB/s on the last line); {unit} counts bytes read + "
                   "written.\n")
    elif ceiling_rows(files) == list(DEFAULT_CEILING_ROWS):
        out.append("Headline cells: the largest square shape timed per dtype. Fraction of `torch:eager` (the vendor "
                   f"library, cuBLAS) at the same shape and dtype in the same run; {unit} of the op's flops.\n")
    else:
        out.append("Headline cells: the largest square shape timed per dtype. Fraction of "
                   f"{ceiling_name(ceiling_rows(files), quote='`')} at the same shape and dtype in the same run (the "
                   f"line `vendor`); {unit} of the op's flops.\n")
    cells = sorted({cell for f in files.values() for cell in headline_cells(f)},
                   key=lambda c: (dtype_key(c[0]), math.prod(dims(c[1])), c[1]))
    headers = ["dtype", "cell", "line"]
    for folder in folders:
        headers += [f"{folder}: row", "fraction", unit, "lines", "build / JIT"]
    rows = []
    for dtype, shape in cells:
        lines = op_lines(files)
        if memory:
            lines.append((SAME_BYTES_COPY, SAME_BYTES_COPY))
        for label, what in lines:
            row = [dtype, short_shape(shape), label]
            for folder in folders:
                f = files.get(folder)
                if f is None:
                    row += ["no results", "", "", "", ""]
                    continue
                if what == SAME_BYTES_COPY:
                    copy = next((c for c in f.data.get("ceilings", {}).get("same_bytes_copy", [])
                                 if c.get("dtype") == dtype and c.get("shape") == shape), None)
                    value = None if copy is None else copy.get("gbps")
                    row += ["", "—", "", "", ""] if value is None else ["", "1.00", f"{value:.0f}", "", ""]
                    continue
                t = timing(f, what, dtype, shape) if is_row(what) else best(f, what, dtype, shape)
                if t is None or not counted(f, t):
                    row += [absent(f, what, dtype, shape), "", "", "", ""]
                    continue
                frac, absolute = figures(f, t)
                row += [f"`{t['impl']}`", frac, absolute, lines_of(f, t["impl"], dtype), build_of(f, t["impl"], dtype)]
            rows.append(row)
    out.append(md_table(headers, rows) + "\n")
    notes = []
    for folder, f in files.items():
        for impl, (status, message) in f.statuses().items():
            if status != "ok":
                first_line = (message.strip().splitlines() or [""])[0]
                first_line = first_line if len(first_line) <= 160 else first_line[:157] + "..."
                notes.append(f"- {folder}: `{impl}` {status}" + (f": {first_line}" if first_line else ""))
        refused = sorted({t["impl"] for t in f.data["timings"] if t.get("implausible")})
        notes += [f"- {folder}: `{impl}` has timings refused as implausible" for impl in refused]
    if notes:
        out.append("Not counted (did not pass, or not run on that GPU):\n\n" + "\n".join(notes) + "\n")
    if targets:
        out.append(targets_part(targets, files))
    return "\n".join(out)


def targets_part(targets: Sequence[Target], files: dict[str, OpFile]) -> str:
    """The op's declared targets (compare.targets), each judged on every GPU folder's full results."""
    lines = ["Targets (the spec's `targets`): per GPU folder, the cells of its results that meet each, and every cell "
             "that does not, with its figure (a fraction of the ceiling, or both medians). A cell where a row the "
             "target needs was not timed or did not pass is listed as not judged.\n"]
    for target in targets:
        lines.append(f"- {target.goal()}: {target.where_in_words()}")
        for folder, f in files.items():
            judged = judge(target, f)
            text = f"  - {folder}: {judged.counts()}"
            if judged.missed:
                text += "; missed: " + "; ".join(judged.missed)
            if judged.unjudged:
                text += "; not judged: " + "; ".join(judged.unjudged)
            lines.append(text)
    return "\n".join(lines) + "\n"


def targets_table(ops: dict[str, dict[str, OpFile]], folders: list[str],
                  targets: dict[str, Sequence[Target]]) -> str:
    rows = []
    for op, declared in targets.items():
        for target in declared:
            row = [op, target.goal(), target.where_in_words()]
            row += [judge(target, ops[op][folder]).counts() if folder in ops[op] else "no results"
                    for folder in folders]
            rows.append(row)
    return md_table(["op", "goal", "cells", *folders], rows)


def glance_table(ops: dict[str, dict[str, OpFile]], folders: list[str]) -> str:
    headers = ["op", "dtype", "cell"]
    for folder in folders:
        headers += [f"{folder}: best CUDA", "best Triton", "torch:compile", "faster"]
    rows = []
    for op in sorted(ops):
        files = ops[op]
        cells = sorted({cell for f in files.values() for cell in headline_cells(f)},
                       key=lambda c: (dtype_key(c[0]), math.prod(dims(c[1])), c[1]))
        for dtype, shape in cells:
            row = [op, dtype, short_shape(shape)]
            for folder in folders:
                f = files.get(folder)
                if f is None:
                    row += ["no results", "", "", ""]
                    continue
                cuda, triton = best(f, "cuda", dtype, shape), best(f, "triton", dtype, shape)
                compiled = timing(f, "torch:compile", dtype, shape)
                compiled = compiled if compiled is not None and counted(f, compiled) else None
                row += [f"`{t['impl']}` {figures(f, t)[0]}" if t else absent(f, backend, dtype, shape)
                        for t, backend in ((cuda, "cuda"), (triton, "triton"))]
                row += [figures(f, compiled)[0] if compiled else absent(f, "torch:compile", dtype, shape),
                        verdict(f, cuda, triton)]
            rows.append(row)
    return md_table(headers, rows)


def spec_targets(op: str) -> Sequence[Target]:
    """The targets the op's spec declares; none for an op with no spec here (results of an op since removed)."""
    from . import discover

    try:
        return discover.load_op(op).targets
    except discover.UnknownOp:
        return ()


def render(results: Path, out: Path, command: str,
           targets_of: Callable[[str], Sequence[Target]] = spec_targets) -> str:
    ops, narrowed = load_all(results)
    folders = sorted({folder for files in ops.values() for folder in files})
    out_dir = out.parent
    text = [
        "# Results: CUDA or Triton, per op and GPU\n",
        f"Generated by `{command}` from every GPU folder's full results in "
        f"{link(results, out_dir) if results.resolve() != out_dir.resolve() else 'this folder'} "
        f"(`<gpu>/<op>.json`; `<gpu>/<host>/<op>.json` for another host with the same GPU). Do not edit it by hand: "
        "run the command again after new results. The `partial/` and `quick/` folders (runs narrowed by --impls, "
        "--dtypes, --sizes or --quick) and `cpu/` (no timings) are left out.\n",
        "Every figure is a fraction of the op's ceiling measured in the same run on the same GPU, with the absolute "
        "throughput beside it. Memory-bound ops (GB/s, bytes read + written): a plain device-to-device copy of the "
        "same bytes, timed exactly like the rows (1.00: as fast as a copy; a cell marked `*` has no such copy in "
        "its json and uses the copy bandwidth of a 1 GiB buffer instead). Compute-bound ops (TFLOP/s): `torch:eager` "
        "at the same shape and dtype, which is the vendor library (cuBLAS for matmul), or where an op's spec names "
        "other rows as its ceiling, the fastest of them there (the line `vendor` of the op's table).\n",
        "Headline cells, chosen from each json's timings by one rule: for a memory-bound op the largest timed shape "
        "of each dtype (the size where launch and ramp-up matter least); for a compute-bound op the largest square "
        "shape of each dtype (the one with the most flops if none is square). Smaller sizes, where the host or the "
        "launch can dominate, are in each op's md. \"Best CUDA\" and \"best Triton\" are, at each cell, the row of "
        "that backend with the highest median throughput among the rows whose status is ok: a row that failed a "
        "check, its build or its run, or whose timing was refused as implausible, never counts, and each op lists "
        "those rows. `!` marks a timing whose interquartile range exceeds 10% of its median, `h` one where the host "
        "needs at least the measured time per call. \"faster\" names the backend whose best row is faster when the "
        "interquartile ranges of the two timings do not overlap, with the ratio of their throughputs.\n",
        "Lines: non-blank, non-comment lines of the row, kernel + host, as each op's md counts them (for "
        "`torch:compile`, of the code it generated for that dtype). Build / JIT: for a CUDA row the cold build of the "
        "op's whole `.cu` (one build for all its CUDA rows), for a Triton row the first call at that dtype (JIT "
        "compilation into an empty cache, plus autotuning where the kernel autotunes), for `torch:compile` the "
        "first compiled call at its captured shape.\n",
    ]
    missing = [f"- {folder} has partial or quick results only ({', '.join(names)}): run the ops there without "
               "--impls, --dtypes, --sizes or --quick." for folder, names in narrowed.items()
               if names and folder not in folders]
    for folder in folders:
        lacks = [op for op in sorted(ops) if folder not in ops[op]]
        for op in lacks:
            also = " (it has partial or quick results only)" if op in narrowed.get(folder, []) else ""
            missing.append(f"- {folder} has no full results for {op}{also}: run `python -m compare {op}` on that GPU.")
    if missing:
        text.append("Missing:\n\n" + "\n".join(missing) + "\n")
    text.append("## At a glance\n\nFraction of the ceiling at each headline cell.\n\n"
                + glance_table(ops, folders) + "\n")
    targets = {op: targets_of(op) for op in sorted(ops)}
    if any(targets.values()):
        text.append("## Targets at a glance\n\nThe goals op specs declare (`targets`), with the cells of each GPU "
                    "folder's full results that meet them; each op's section lists every cell missed, with its "
                    "figure.\n\n" + targets_table(ops, folders, targets) + "\n")
    text += [op_section(op, ops[op], folders, out_dir, targets[op]) for op in sorted(ops)]
    return "\n".join(text)


def write_atomic(path: Path, text: str) -> None:
    """Write to a temporary name beside the file, then rename: an interrupted write leaves the old file whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def summarize(results: Path, out: Path, command: str = "python -m compare summary") -> str:
    """Write the summary of the results folder to out; returns the text."""
    if out.is_dir():
        raise SummaryError(f"--out {out} is a folder; give a file name, e.g. {out / 'README.md'}")
    text = render(results, out, command)
    try:
        write_atomic(out, text)
    except OSError as exc:
        raise SummaryError(f"cannot write {out} ({exc.strerror or exc}); give --out a file you can write") from None
    return text


def main(parser, args) -> int:
    """`python -m compare summary [FOLDER] [--out FILE]`, with the command line's parsed arguments."""
    from . import env

    if len(args.ops) > 2:
        parser.error("usage: python -m compare summary [RESULTS_FOLDER] [--out FILE]")
    defaults = vars(parser.parse_args(["summary"]))
    given = [name for name, value in vars(args).items() if name not in ("ops", "out") and value != defaults[name]]
    if given:
        parser.error(f"--{given[0].replace('_', '-')} does not apply to summary, which takes a results folder and "
                     "--out FILE only")
    results = Path(args.ops[1]) if len(args.ops) == 2 else env.ROOT / "results"
    out = Path(args.out) if args.out else results / "README.md"
    command = shlex.join(["python", "-m", "compare", "summary", *args.ops[1:],
                          *(["--out", args.out] if args.out else [])])
    try:
        text = summarize(results, out, command)
    except SummaryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    n_ops = sum(1 for line in text.splitlines()
                if line.startswith("## ") and line not in ("## At a glance", "## Targets at a glance"))
    print(f"wrote {env.relpath(out)} ({n_ops} op{'s' * (n_ops != 1)})")
    return 0
