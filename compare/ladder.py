"""An op's ladder: the steps each kernel file climbs, read from the file's version map, and what each step bought.

Every kernel file opens with its version map, one line per step, under a line that says ``Steps``; a step names
the row it is (the ``cuda:<name>`` schema or ``@variant("<name>")``) and says in one line what it changes
against the step before. In a ``.cu`` the map is part of the opening ``//`` comment; in a Triton file, part of the
module docstring::

    // Steps (each one a row, cuda:<name>; measured: results/<gpu>/softmax.md):
    //   v1 naive    one block per row, shared-memory tree reductions, three passes over the row
    //   v2 warp     short rows: one warp per row, the row held in registers, shuffle reductions
    //               (a longer line goes on, indented under the text)

The map is the table of contents a reader opens the file to; the report's ladder table is the same list with what
each step measured at the op's ladder cells (``Op.ladder_cells``): its throughput, its ratio to the step before
and its fraction of the ceiling. compare.discover checks that a file's map and its rows agree.
"""
from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

_HEADER = re.compile(r"^\s*Steps\b")
_STEP = re.compile(r"^(\s*)v(\d+)\s+([A-Za-z_][\w-]*)\s+(\S.*)$")


@dataclasses.dataclass(frozen=True)
class Step:
    number: int  # the N of vN
    variant: str  # the row's name after "cuda:" / "triton:"
    change: str  # what this step changes, one line (continuations joined)
    line: int  # 1-based line of the step in its file


class MapError(ValueError):
    """A version map that cannot be read; the message names the file and line."""


def _opening_text(path: Path) -> tuple[list[str], int]:
    """The file's opening comment (a .cu's leading // lines) or module docstring (a .py), as lines without the
    comment markers, and the 1-based line number of its first line."""
    text = path.read_text()
    if path.suffix == ".py":
        tree = ast.parse(text)
        if not (tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant)
                and isinstance(tree.body[0].value.value, str)):
            return [], 1
        node = tree.body[0]
        # The docstring's text starts on the line of its opening quotes.
        return node.value.value.splitlines(), node.lineno
    lines = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped.startswith("//"):
            break
        lines.append(stripped[2:])
    return lines, 1


def version_map(path: Path) -> list[Step]:
    """The steps listed in the file's version map, in order ([] where the file has none)."""
    lines, first = _opening_text(path)
    steps: list[Step] = []
    inside = False
    text_column = None
    for offset, line in enumerate(lines):
        if not inside:
            inside = bool(_HEADER.match(line))
            continue
        if not line.strip():
            break
        match = _STEP.match(line)
        if match:
            indent, number, variant, change = match.groups()
            # A continuation lines up with its step's text, or with the column most steps use where a long name
            # pushed this step's text further right: the leftmost text column of the map so far.
            column = len(line) - len(change)
            text_column = column if text_column is None else min(text_column, column)
            steps.append(Step(int(number), variant, change.strip(), first + offset))
            continue
        continuation = len(line) - len(line.lstrip())
        if steps and text_column is not None and continuation >= text_column - 1:
            last = steps[-1]
            steps[-1] = dataclasses.replace(last, change=f"{last.change} {line.strip()}")
            continue
        break  # prose after the map
    numbers = [s.number for s in steps]
    if numbers and numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        where = steps[0].line
        raise MapError(f"{path}:{where}: the version map's steps are numbered {numbers}; number them in order, "
                       f"one apart (v1, v2, ...)")
    return steps


def map_problems(path: Path, backend: str, rows: list[str]) -> list[str]:
    """What is wrong between a kernel file's version map and the rows it declares (empty: they agree). Every row
    of the file is a step of its map, and every step names a row of the file."""
    from .env import relpath

    try:
        steps = version_map(path)
    except MapError as exc:
        return [str(exc)]
    where = relpath(path)
    if not steps:
        return [f"{where}: no version map; open the file with a 'Steps' line followed by one line per row "
                f"('v1 {rows[0] if rows else 'name'}   what this step changes'), see compare/ladder.py"]
    problems = []
    named = [s.variant for s in steps]
    for step in steps:
        if step.variant not in rows:
            problems.append(f"{where}:{step.line}: the version map names {backend}:{step.variant}, which the file "
                            f"does not declare (its rows: {', '.join(f'{backend}:{r}' for r in rows)})")
    for row in rows:
        if row not in named:
            problems.append(f"{where}: {backend}:{row} is a row of the file but not a step of its version map; add "
                            f"a line 'vN {row}   what it changes' under 'Steps'")
    duplicates = sorted({v for v in named if named.count(v) > 1})
    if duplicates:
        problems.append(f"{where}: the version map lists {', '.join(duplicates)} more than once")
    return problems


@dataclasses.dataclass
class LadderRow:
    step: Step
    impl: str
    # Per ladder cell "dtype shape": (throughput, ratio to the previous step, fraction of the ceiling) or None
    cells: dict[str, tuple[float, float | None, float | None] | None]


def ladder(steps: list[Step], backend: str, timings: list, cells: list[tuple[str, str]], memory: bool,
           ) -> list[LadderRow]:
    """The ladder of one side: per step, at each (dtype, shape) cell, the row's throughput (GB/s or TFLOP/s),
    its ratio to the step before (None for the first, or where the step before has no timing there) and its
    fraction of the ceiling (of a copy of the same bytes for memory-bound ops, of the vendor library for
    compute-bound ones). timings are compare.timing.Timing records of rows that passed their checks."""
    by_cell = {(t.impl, t.dtype, t.shape): t for t in timings}
    rows = []
    previous: dict[tuple[str, str], float] = {}
    for step in steps:
        impl = f"{backend}:{step.variant}"
        values = {}
        for dtype, shape in cells:
            t = by_cell.get((impl, dtype, shape))
            if t is None:  # the step does not take this cell (or failed); the next compares with the last one timed
                values[f"{dtype} {shape}"] = None
                continue
            rate = t.gbps if memory else t.tflops
            before = previous.get((dtype, shape))
            ceiling = (getattr(t, "fraction_of_same_bytes_copy", None) if memory else None) or t.fraction_of_ceiling
            values[f"{dtype} {shape}"] = (rate, rate / before if before else None, ceiling)
            previous[(dtype, shape)] = rate
        rows.append(LadderRow(step, impl, values))
    return rows
