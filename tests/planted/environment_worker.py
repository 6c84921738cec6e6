"""A worker process as compare.isolate starts one, with one extra call, `where_am_i`: the value of an environment
variable as the worker sees it, and the ids of the process that started it and of its parent in the process tree.
Workers import this module by name, so it is a plain module on sys.path, not a test file
(tests/test_worker_starts.py)."""
import multiprocessing
import os


def serve_with_where_am_i(conn, *setup) -> None:
    from compare import isolate, worker

    def where_am_i(variable: str) -> tuple:
        return os.environ.get(variable), multiprocessing.parent_process().pid, os.getppid()

    worker.where_am_i = where_am_i
    isolate._serve(conn, *setup)  # the real serving loop
