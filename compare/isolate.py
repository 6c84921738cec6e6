"""Process isolation: each implementation runs in a worker process of its own, which the parent drives one step
at a time (compare.worker's functions, called by name), so one broken kernel costs only its own row and no row's
code shares a process with the judge or with another row. An illegal memory access poisons the CUDA context of the
process it happens in, a hang never returns and a segfault takes the process down; the parent sees each of these,
records the row as crashed or timed out, and goes on with the next row in a fresh worker.

Workers are forked from a server process (multiprocessing's forkserver) that was started as a fresh interpreter
and has imported torch, Triton, inductor and the harness, and nothing else: never a row's code, never a CUDA
context. A worker so starts in a fraction of a second where a fresh interpreter importing all that takes seconds, and
is still a process of its own, as isolated from the parent and from other rows as a spawned one. It takes the
parent's environment, working folder and import path as they are when it starts, not as they were when the server
started. Where the platform has no forkserver, workers are spawned.

Arguments and replies travel through multiprocessing's pickler, which torch extends: CUDA tensors cross as CUDA IPC
handles (no copy; the receiver maps the sender's memory), CPU tensors through shared memory.

A row is timed out when a step makes no progress for row_timeout_s: each call is a step (one check case, one timed
cell), and a long call may report progress (compare.worker.progress) to restart the clock. A row's total time has
no limit, so a long but healthy row (torch.compile with mode="max-autotune" autotunes every shape and dtype,
minutes in all) is never cut off, while a hang is caught within row_timeout_s."""
from __future__ import annotations

import contextlib
import inspect
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
import traceback
import warnings

DEFAULT_ROW_TIMEOUT_S = 600.0
PROGRESS = "progress"  # a worker's message between a request and its reply: a step finished
_PROGRESS_EVERY_S = 1.0  # at most one progress message a second


class RowFailure(Exception):
    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status  # "crashed" or "timed out"
        self.message = message


# What the fork server imports once, for every worker forked from it: the harness's worker side (torch, Triton)
# and inductor, which every Triton and torch row imports for the profiler (compare.worker.import_profiler_modules).
_PRELOAD = ["compare.worker", "torch._inductor"]
_context = None


def worker_context():
    """The multiprocessing context workers start in (see the module docstring); the first call starts the fork
    server without waiting for its imports, which then go on beside the caller's work."""
    global _context
    if _context is None:
        if "forkserver" in mp.get_all_start_methods():
            _context = mp.get_context("forkserver")
            _context.set_forkserver_preload(_PRELOAD)
            from multiprocessing import forkserver

            forkserver.ensure_running()
        else:
            _context = mp.get_context("spawn")
    return _context


def _serve(conn, environ: dict) -> None:
    # A forked worker has the fork server's environment: the parent's, as it is now, instead (multiprocessing itself
    # hands on the parent's working folder and import path)
    os.environ.clear()
    os.environ.update(environ)
    from . import worker

    last = [0.0]

    def send(message) -> None:
        try:
            conn.send(message)
        except (BrokenPipeError, ConnectionResetError):  # the parent let go of this worker before its answer
            _exit_now()

    def progress() -> None:
        if time.monotonic() - last[0] >= _PROGRESS_EVERY_S:
            last[0] = time.monotonic()
            send((PROGRESS, None, True))

    worker.set_progress_callback(progress)
    while True:
        try:
            name, args = conn.recv()
        except EOFError:
            _exit_now()
        if name == "ready":  # the start handshake: the imports above are done
            send(("ok", os.getpid(), True))
            continue
        try:
            reply = ("ok", getattr(worker, name)(*args))
            del args  # the parent's tensors (CUDA IPC): released before the reply, not held until the next call
        except BaseException as exc:  # report, never die silently
            reply = ("error", short_error(exc))
        # The reply says whether this worker can go on: after a kernel fault its CUDA context is poisoned and every
        # later call would fail too, so it exits and the parent starts a fresh one for the next row.
        healthy = worker.cuda_context_healthy()
        send((*reply, healthy))
        if not healthy:
            conn.close()
            os._exit(3)


def _exit_now() -> None:
    """The parent closed the pipe (or let go of this worker before it answered): the row is over, and the parent may be
    waiting for this exit before its next timing. torch.compile's compile workers are shut down, multiprocessing's own
    clean-up runs (what a worker process runs when its target returns: its finalizers, which remove its temporary
    folder) and the output is flushed; then the process ends without the interpreter's teardown (its other exit handlers
    and the freeing of every module; the system frees the memory and the driver the CUDA context either way)."""
    import multiprocessing.util

    async_compile = sys.modules.get("torch._inductor.async_compile")
    if async_compile is not None and hasattr(async_compile, "shutdown_compile_workers"):
        async_compile.shutdown_compile_workers()
    multiprocessing.util._exit_function()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@contextlib.contextmanager
def handed_over(device):
    """Tensors made inside are for a worker: on a GPU each one gets a CUDA allocation of its own, in a memory pool
    that holds nothing else. CUDA IPC hands a worker the whole allocation a tensor sits in (the caching allocator's
    segment, often 2 or 20 MB shared by many tensors), and a row can read and write all of it: beside its input it
    would find whatever else of this process's the segment holds, such as the judge's pristine copy of that input,
    and could change both (tests/test_cheats.py plants such a row). Elsewhere (CPU tensors cross one storage each,
    through shared memory) it does nothing."""
    if getattr(device, "type", device) != "cuda":
        yield
        return
    import torch

    global _handover_pool
    # One thread at a time: torch lets only one thread allocate into a pool at once, and rows checked side by side
    # (--check-rows) make their inputs on threads of their own.
    with _handover_lock:
        _keep_ipc_limbo_occupied(device)
        if _handover_pool is None:
            # no_split: a segment of its own for every tensor, its free ones reused by later tensors of this pool
            # only. Without it (an older torch), tensors handed over may share a segment with each other, never with
            # anything else of this process's.
            splits = "no_split" in inspect.signature(torch.cuda.MemPool.__init__).parameters
            _handover_pool = torch.cuda.MemPool(no_split=True) if splits else torch.cuda.MemPool()
        with torch.cuda.use_mem_pool(_handover_pool):
            yield


_handover_pool = None
_handover_lock = threading.Lock()
_limbo_occupied: set = set()


def _keep_ipc_limbo_occupied(device) -> None:
    """Once per device: leave one tiny shared CUDA block in torch's IPC limbo for good, so that no thread's memory
    allocation can reset the reference-counter file a send of another thread is using. In torch's
    torch/csrc/CudaIPCTypes.cpp, GetNewRefCountedSentData (every CUDA tensor sent to a worker) takes the file under
    its mutex but uses it after letting go, while CudaIPCCollect, which the caching allocator calls from whatever
    thread misses its cache, resets that file whenever the limbo of sent blocks is empty: a null pointer in the
    sending thread (the parent died so once, in _share_cuda_; Worker._send says where). A block shared and never
    released by a consumer stays in the limbo, which then is never empty. Sends themselves take turns
    (Worker._send), and the file they reset when it runs out is theirs alone."""
    import torch

    if device in _limbo_occupied:
        return
    _limbo_occupied.add(device)
    try:
        block = torch.empty(1, device=device)
        block.untyped_storage()._share_cuda_()  # a reference count of 1 that no worker will ever take back
        del block  # into the limbo, for the life of this process
    except (AttributeError, RuntimeError) as exc:  # another torch: runs go on, with the race this guards against
        warnings.warn(f"compare.isolate: could not keep torch's CUDA IPC limbo occupied ({exc}); a parent that "
                      f"sends to workers from several threads may crash in torch's _share_cuda_", stacklevel=2)


def release_handed_over() -> None:
    """Let go of handed_over's memory pool; its next use makes a fresh one. torch.cuda.empty_cache() leaves the
    cached memory of a pool still in use alone, so the harness calls this right before it: the old pool's memory
    then goes back to the driver as soon as the tensors in it are freed."""
    global _handover_pool
    with _handover_lock:
        _handover_pool = None


def short_error(exc: BaseException) -> str:
    """An exception as a person wants to read it: its type, where in the user's files it was raised (not in the
    harness), and a screenful of its message (compiler errors, Triton's among them, put the useful part after the
    first line)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/compare/" not in f.filename]
    where = ""
    if frames:
        from .env import relpath

        where = f" ({relpath(frames[-1].filename)}:{frames[-1].lineno})"
    lines = str(exc).strip().splitlines()
    text = "\n".join(lines[:15]) + ("\n..." if len(lines) > 15 else "")
    return f"{type(exc).__name__}{where}: {text}"


class Worker:
    """A lazily started worker process running functions of compare.worker by name. lost_context is True after a
    call that left the worker's CUDA context poisoned (the worker then exits; a later call starts a fresh one,
    which has loaded no row)."""

    def __init__(self, row_timeout_s: float = DEFAULT_ROW_TIMEOUT_S):
        self.row_timeout_s = row_timeout_s
        self.proc = None
        self.conn = None
        self.starts = 0
        self.start_s = 0.0
        self.lost_context = False
        self._launched_at = None  # set between launch() and the worker's answer to the start handshake
        self._sent_ahead = None  # launch()'s first call, (name, args), until call() collects its reply
        self._starting = None  # launch()'s thread, while it starts the process
        self._start_error = None

    def launch(self, first: tuple[str, tuple] | None = None) -> None:
        """Start the worker process without waiting for it: its imports (torch, the harness; no CUDA context) then
        overlap whatever the caller does meanwhile, such as the previous row. The first call waits for it.
        first: a call (name, args) the worker makes as soon as it has started, such as loading the row it is for,
        which then overlaps the previous row too; call() with the same name and arguments collects its reply."""
        if self.proc is None:
            ctx = worker_context()
            self.conn, child = ctx.Pipe()
            self._launched_at = time.perf_counter()
            self.proc = ctx.Process(target=_serve, args=(child, dict(os.environ)), daemon=True)
            self.starts += 1
            self._sent_ahead = first
            # Starting a process from the fork server waits until the server has forked it, and the first one
            # until the server has finished its own imports (seconds): a thread of its own does that waiting.
            self._starting = threading.Thread(target=self._start_process, args=(child, first), daemon=True)
            self._starting.start()

    def _start_process(self, child, first: tuple[str, tuple] | None) -> None:
        try:
            self.proc.start()
            child.close()
            self._send(("ready", ()))
            if first is not None:
                self._send(first)
        except BaseException as exc:  # the caller's next use of this worker reports it (_started)
            self._start_error = exc

    def _join_start(self) -> BaseException | None:
        """Wait for launch()'s thread, if one is still starting the process; returns what stopped it, if anything."""
        error = None
        if self._starting is not None:
            self._starting.join()
            error, self._starting, self._start_error = self._start_error, None, None
        return error

    def _started(self) -> None:
        """_join_start, a failure to start being a crash."""
        if (error := self._join_start()) is not None:
            self._stop()
            raise RowFailure("crashed", f"the worker process could not be started: {short_error(error)}")

    def send_ahead(self, name: str, *args) -> None:
        """Ask for a call without waiting for its reply: the worker makes it while the caller does other work, and
        call() with the same name and arguments later collects the reply. One call ahead at a time; where none can
        be sent (one is ahead already, or no worker is running), call() makes it when asked."""
        try:
            self._started()
        except RowFailure:
            return  # call() starts a fresh one when asked
        if self._sent_ahead is not None or self.proc is None or not self.proc.is_alive():
            return
        try:
            self._send((name, args))
        except (BrokenPipeError, OSError):
            return
        self._sent_ahead = (name, args)

    def _start(self) -> None:
        self.launch()
        self._started()
        # Wait until it has imported the harness: that is the cost of isolation, measured (from the launch).
        try:
            ready = self.conn.poll(300)
            if ready:
                self.conn.recv()
        except (EOFError, OSError):
            ready = False
        if not ready:
            self._stop()
            raise RowFailure("crashed", "the worker process did not start within 300 s, or died starting")
        self.start_s += time.perf_counter() - self._launched_at
        self._launched_at = None

    def _stop(self) -> None:
        self._join_start()
        if self.proc is not None and self.proc.pid is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(10)
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None
        self._launched_at = None
        self._sent_ahead = None

    def call(self, name: str, *args, timeout_s: float | None = None):
        self._started()
        if self._launched_at is not None and self.proc is not None and self.proc.is_alive():
            self._start()  # launched ahead: wait for its handshake
        elif self.proc is None or not self.proc.is_alive():
            self._stop()
            self._start()
        timeout_s = self.row_timeout_s if timeout_s is None else timeout_s
        ahead, self._sent_ahead = self._sent_ahead, None
        if ahead is not None and ahead != (name, args):
            try:  # asked for something else first: the reply of the call sent ahead is not wanted
                self._reply(timeout_s)
            except RowFailure as failure:
                if failure.status != "error":
                    raise
            ahead = None
        if ahead is None:
            try:
                self._send((name, args))
            except (BrokenPipeError, OSError):  # it died between calls: start a fresh one
                self._stop()
                self._start()
                self._send((name, args))
        return self._reply(timeout_s)

    def _send(self, message) -> None:
        """Send to the worker, one thread at a time and never while another thread allocates into handed_over's
        pool: sending a CUDA tensor shares its allocation (torch's _share_cuda_, CUDA IPC), and with rows checked
        side by side the parent once died of a segmentation fault inside _share_cuda_ while another of its threads
        was making inputs in that pool (an fp8_matmul run with --check-rows 8 on an H100). Torch's reference
        counting of sent blocks is not safe against that (_keep_ipc_limbo_occupied says where), nor against two
        sends at once."""
        with _handover_lock:
            self.conn.send(message)

    def _reply(self, timeout_s: float):
        """The reply to the call in flight, past its progress messages."""
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
            self.lost_context = True
            self._stop()  # it is exiting; the next call starts a fresh worker
        if kind == "error":
            raise RowFailure("error", value)
        return value

    def close(self, wait: bool = True) -> None:
        """End the worker: it exits once its pipe is closed. wait=False returns at once and leaves its exit (the
        interpreter's teardown, its CUDA context destroyed: up to seconds) to go on beside the caller's next work;
        wait_for_exits() then waits for it."""
        self._join_start()  # a worker that failed to start is not alive: _stop below
        if self.conn is not None and self.proc is not None and self.proc.is_alive():
            self.conn.close()
            if not wait:
                _exiting.append(self.proc)
                self.proc = self.conn = None
                self._launched_at = self._sent_ahead = None
                return
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


_exiting: list = []  # worker processes closed without waiting (Worker.close(wait=False)), perhaps still exiting


def wait_for_exits(timeout_s: float = 5.0) -> None:
    """Wait until every worker closed without waiting has exited, killing any still running after timeout_s: called
    before a row's timing, so that no other worker's teardown runs beside it."""
    deadline = time.monotonic() + timeout_s
    while _exiting:
        proc = _exiting.pop()
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()
            proc.join(10)


class InProcess:
    """The same interface without isolation (--in-process): easier to debug, but one crash ends the run, and the
    rows then share the judge's process (which they could reach): not for results to trust."""

    starts = 0
    start_s = 0.0

    def launch(self, first: tuple[str, tuple] | None = None) -> None:
        pass  # nothing to start; a call given as first is made when asked for

    def send_ahead(self, name: str, *args) -> None:
        pass  # made when asked for

    def call(self, name: str, *args, timeout_s: float | None = None):
        from . import worker

        return getattr(worker, name)(*args)

    def close(self, wait: bool = True) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass
