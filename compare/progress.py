"""A one-line progress display for long runs: which op and row, which phase, how far, and about how long is left.

On a terminal the line is redrawn in place (at most ten times a second) below the run's ordinary output, which
stays as it was; anywhere else (a log file, a pipe, CI) the display writes nothing at all. The time left is a plain
estimate: the rows still to run, at the mean time of the rows finished so far in this op (the first row of an op
has no estimate)."""
from __future__ import annotations

import shutil
import sys
import time

_REDRAW_EVERY_S = 0.1


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


class Progress:
    def __init__(self, stream=None, enabled: bool | None = None, now=time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.now = now
        self._op = ""
        self._rows = 0
        self._row_index = 0
        self._row = ""
        self._phase = ""
        self._done = 0
        self._total: int | None = None
        self._op_start = self._row_start = now()
        self._finished_rows: list[float] = []
        self._drawn = ""
        self._last_draw = 0.0

    def start_op(self, op: str, rows: int) -> None:
        self._op, self._rows, self._row_index, self._row = op, rows, 0, ""
        self._finished_rows = []
        self._op_start = self.now()
        self._phase, self._done, self._total = "", 0, None
        self._draw(force=True)

    def start_row(self, index: int, row: str) -> None:
        """index counts from 1."""
        if self._row:
            self._finished_rows.append(self.now() - self._row_start)
        self._row_index, self._row, self._row_start = index, row, self.now()
        self._phase, self._done, self._total = "", 0, None
        self._draw(force=True)

    def phase(self, name: str, total: int | None = None) -> None:
        self._phase, self._done, self._total = name, 0, total
        self._draw(force=True)

    def step(self, n: int = 1) -> None:
        self._done += n
        self._draw()

    def line(self) -> str:
        """The text of the display as it stands."""
        parts = [f"{self._op} row {self._row_index}/{self._rows} {self._row}".rstrip()]
        if self._phase:
            parts.append(f"{self._phase} {self._done}/{self._total}" if self._total else self._phase)
        parts.append(f"{_clock(self.now() - self._op_start)} elapsed")
        if self._finished_rows and self._rows:
            mean = sum(self._finished_rows) / len(self._finished_rows)
            this_row = max(0.0, mean - (self.now() - self._row_start))
            left = this_row + mean * max(0, self._rows - self._row_index)
            parts.append(f"about {_clock(left)} left")
        return " · ".join(parts)

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = self.now()
        if not force and now - self._last_draw < _REDRAW_EVERY_S:
            return
        self._last_draw = now
        width = shutil.get_terminal_size((100, 20)).columns - 1
        text = self.line()[:width]
        self.stream.write("\r" + text + " " * max(0, len(self._drawn) - len(text)))
        self.stream.flush()
        self._drawn = text

    def clear(self) -> None:
        """Erase the line, before ordinary output is printed (and at the end)."""
        if self.enabled and self._drawn:
            self.stream.write("\r" + " " * len(self._drawn) + "\r")
            self.stream.flush()
            self._drawn = ""

    def redraw(self) -> None:
        self._draw(force=True)


class Silent(Progress):
    """The display for runs that ask for none (--in-process tests, library callers)."""

    def __init__(self):
        super().__init__(enabled=False)
