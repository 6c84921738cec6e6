"""Process isolation: each implementation's checks and timings run in a worker process, so one broken kernel
costs only its own row. An illegal memory access poisons the CUDA context of the process it happens in, a hang
never returns and a segfault takes the process down; the parent sees each of these, records the row as crashed or
timed out, and starts a fresh worker for the next row. A healthy run uses one worker for all rows.

A row is timed out when it makes no progress for row_timeout_s: the worker reports each finished step (a check, a
capture, a timing) and every report restarts the clock. A row's total time has no limit, so a long but healthy row
(torch.compile with mode="max-autotune" autotunes every shape and dtype, minutes in all) is never cut off, while a
hang is caught within row_timeout_s of its last step."""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
import traceback

DEFAULT_ROW_TIMEOUT_S = 600.0
PROGRESS = "progress"  # a worker's message between a request and its reply: a step finished
_PROGRESS_EVERY_S = 1.0  # at most one progress message a second


class RowFailure(Exception):
    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status  # "crashed" or "timed out"
        self.message = message


def _serve(conn) -> None:
    from . import runner

    last = [0.0]

    def progress() -> None:
        if time.monotonic() - last[0] >= _PROGRESS_EVERY_S:
            last[0] = time.monotonic()
            conn.send((PROGRESS, None, True))

    runner.set_progress_callback(progress)
    while True:
        try:
            name, args = conn.recv()
        except EOFError:
            return
        if name == "ready":  # the start handshake: the imports above are done
            conn.send(("ok", os.getpid(), True))
            continue
        try:
            reply = ("ok", getattr(runner, name)(*args))
        except BaseException as exc:  # report, never die silently
            reply = ("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}")
        # The reply says whether this worker can go on: after a kernel fault its CUDA context is poisoned and every
        # later call would fail too, so it exits and the parent starts a fresh one for the next row.
        healthy = runner.cuda_context_healthy()
        conn.send((*reply, healthy))
        if not healthy:
            conn.close()
            os._exit(3)


class Worker:
    """A lazily started worker process running functions of compare.runner by name."""

    def __init__(self, row_timeout_s: float = DEFAULT_ROW_TIMEOUT_S):
        self.row_timeout_s = row_timeout_s
        self.proc = None
        self.conn = None
        self.starts = 0
        self.start_s = 0.0

    def _start(self) -> None:
        ctx = mp.get_context("spawn")  # a fresh interpreter: no CUDA context inherited from the parent
        self.conn, child = ctx.Pipe()
        start = time.perf_counter()
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=True)
        self.proc.start()
        child.close()
        self.starts += 1
        # Wait until it has imported the harness (torch, triton): that is the cost of isolation, measured.
        self.conn.send(("ready", ()))
        if not self.conn.poll(300):
            self._stop()
            raise RowFailure("crashed", "the worker process did not start within 300 s")
        self.conn.recv()
        self.start_s += time.perf_counter() - start

    def _stop(self) -> None:
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(10)
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None

    def call(self, name: str, *args, timeout_s: float | None = None):
        if self.proc is None or not self.proc.is_alive():
            self._stop()
            self._start()
        timeout_s = self.row_timeout_s if timeout_s is None else timeout_s
        try:
            self.conn.send((name, args))
        except (BrokenPipeError, OSError):  # it died between calls: start a fresh one
            self._stop()
            self._start()
            self.conn.send((name, args))
        while True:
            try:
                ready = self.conn.poll(timeout_s)
            except (EOFError, OSError):
                ready = True
            if not ready:
                self._stop()
                raise RowFailure("timed out", f"no progress for {timeout_s:.0f} s (a hang or an endless kernel); "
                                              f"the worker was killed. A step that is slow but healthy needs a "
                                              f"larger --row-timeout")
            try:
                kind, value, healthy = self.conn.recv()
            except (EOFError, OSError):
                self.proc.join(10)
                code = self.proc.exitcode
                self._stop()
                raise RowFailure("crashed", f"the worker process died ({_describe_exit(code)}); see its output above")
            if kind != PROGRESS:
                break
        if not healthy:
            self._stop()  # it is exiting; the next call starts a fresh worker
        if kind == "error":
            raise RowFailure("error", value)
        return value

    def close(self) -> None:
        if self.conn is not None and self.proc is not None and self.proc.is_alive():
            self.conn.close()
            self.proc.join(5)
        self._stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "no exit code"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class InProcess:
    """The same interface without isolation (--in-process): faster to debug, but one crash ends the run."""

    starts = 0
    start_s = 0.0

    def call(self, name: str, *args, timeout_s: float | None = None):
        from . import runner

        return getattr(runner, name)(*args)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass
