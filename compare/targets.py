"""An op's targets, judged against its result files: which cells meet the goals the op's spec declares
(``Op.targets``; a backward's in ``Backward.targets``) and, for each cell that does not, the measured figure.

A target is either a floor, "the best row of each of these backends reaches this fraction of the op's ceiling", or
an order, "the best of these rows is at least as fast as each of those rows". It names the cells it is about: the
dtypes, and the shapes by a predicate with a description for people (N ≥ 4K). ``python -m compare summary`` prints
each op's targets per GPU folder from the same files as its tables, and every run's report judges them on the cells
it timed; nothing here measures or runs anything, and a cell without a passing row is not judged, never met."""
from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

Shape = tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class Target:
    """One goal. `cells` says in words which shapes `where` picks ("N ≥ 4K"); `dtypes` are the results' names
    ("float32"), empty for every dtype timed.

    at_least: each of `rows` (a backend, "cuda": its best row at the cell; or a row name) must reach this fraction
    of the op's ceiling (the same-bytes copy for a memory-bound op, the vendor rows for a compute-bound one).
    ahead_of: instead, the best of `rows` taken together must be no slower (median) than each of these rows, where
    that row was timed at the cell."""
    cells: str
    at_least: float | None = None
    ahead_of: Sequence[str] = ()
    rows: Sequence[str] = ("cuda", "triton")
    dtypes: Sequence[str] = ()
    where: Callable[[Shape], bool] = lambda shape: True

    def __post_init__(self):
        if (self.at_least is None) == (not self.ahead_of):
            raise ValueError(f"target {self.cells!r}: give at_least (a fraction of the ceiling) or ahead_of (rows "
                             "to be no slower than), one of the two")
        if not self.rows:
            raise ValueError(f"target {self.cells!r}: rows is empty; name the backends or rows it judges")
        named = [d for d in self.dtypes if not isinstance(d, str)]
        if named:
            raise ValueError(f"target {self.cells!r}: dtypes {named} are not names; give them as the results write "
                             "them, e.g. dtypes=(\"float32\", \"bfloat16\")")

    def goal(self) -> str:
        """The goal in words: 'best CUDA, best Triton ≥ 0.90' or 'the best CUDA or Triton row no slower than
        `torch:compile`'."""
        if self.at_least is not None:
            return f"{', '.join(_name(r) for r in self.rows)} ≥ {self.at_least:.2f} of the ceiling"
        ours = " or ".join(r if ":" in r else _BACKENDS.get(r, r) for r in self.rows)
        return f"the best {ours} row no slower than " + ", ".join(f"`{r}`" for r in self.ahead_of)

    def where_in_words(self) -> str:
        return f"{', '.join(self.dtypes) if self.dtypes else 'every dtype'}, {self.cells}"

    def picks(self, dtype: str, shape: Shape) -> bool:
        return (not self.dtypes or dtype in self.dtypes) and bool(self.where(tuple(shape)))


_BACKENDS = {"cuda": "CUDA", "triton": "Triton"}


def _name(row: str) -> str:
    return f"`{row}`" if ":" in row else f"best {_BACKENDS.get(row, row)}"


def _figure(value: float, goal: float) -> str:
    """Two decimals, or as many more as a miss needs not to read as the goal (0.998, 0.9996 against 1.00)."""
    digits = next((d for d in (2, 3, 4, 5) if round(value, d) < goal), 6)
    return f"{value:.{digits}f}"


@dataclasses.dataclass
class Judged:
    """One target on one results file: the cells that met it, and a line for each that did not (with the figure)."""
    target: Target
    met: int = 0
    missed: list[str] = dataclasses.field(default_factory=list)
    unjudged: list[str] = dataclasses.field(default_factory=list)  # cells a row the target names was not timed at

    def counts(self) -> str:
        total = self.met + len(self.missed)
        return f"{self.met} of {total} met" if total or self.unjudged else "no cell of it timed"


def judge(target: Target, f) -> Judged:
    """The target on one op's results file (a compare.summary.OpFile), read as the summary reads it: only rows that
    passed every check and timings not refused as implausible count."""
    from .summary import best, counted, dims, dtype_key, fraction, iqrs_overlap, is_row, short_shape, timing

    out = Judged(target)
    cells = sorted({(t["dtype"], t["shape"]) for t in f.data["timings"]},
                   key=lambda c: (dtype_key(c[0]), dims(c[1])[::-1]))  # by the last size first: a row's length
    for dtype, shape in cells:
        if not target.picks(dtype, tuple(dims(shape))):
            continue
        where = f"{dtype} {short_shape(shape)}"
        if target.at_least is not None:
            for rows in target.rows:
                t = timing(f, rows, dtype, shape) if is_row(rows) else best(f, rows, dtype, shape)
                t = t if t is not None and counted(f, t) else None
                if t is None:
                    out.unjudged.append(f"{where} {_name(rows)}: no passing row timed")
                    continue
                value, _ = fraction(f, t)
                if value is None:
                    out.unjudged.append(f"{where} `{t['impl']}`: no ceiling timed")
                elif value >= target.at_least:
                    out.met += 1
                else:
                    out.missed.append(f"{where} `{t['impl']}` {_figure(value, target.at_least)}")
            continue
        ours = best(f, _rows_of(f, target.rows), dtype, shape)
        for other in target.ahead_of:
            theirs = timing(f, other, dtype, shape)
            if theirs is None or not counted(f, theirs):
                continue  # not timed here (a peer that refuses the shape, or is not installed): nothing to beat
            if ours is None:
                out.unjudged.append(f"{where}: no passing row of {', '.join(target.rows)} timed")
            elif ours["median_ms"] <= theirs["median_ms"]:
                out.met += 1
            else:
                noise = " (IQRs overlap)" if iqrs_overlap(theirs, ours) else ""  # a miss within the noise
                out.missed.append(f"{where} `{ours['impl']}` {ours['median_ms'] * 1e3:.1f} µs, `{other}` "
                                  f"{theirs['median_ms'] * 1e3:.1f} µs{noise}")
    return out


def _rows_of(f, rows: Sequence[str]) -> list[str]:
    """The row names of a file that rows (backends or row names) stand for."""
    names = {t["impl"] for t in f.data["timings"]}
    return sorted(n for n in names if any(n == r or n.split(":")[0] == r for r in rows))

