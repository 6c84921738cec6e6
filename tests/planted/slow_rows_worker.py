"""A worker process as compare.isolate starts one, with two extra "rows" to exercise the row timeout on any machine:
`steps` finishes one step every `seconds` and reports each (as a long call does), and
`stuck` reports one step and then never finishes the next. Workers import this module by name, so it is a
plain module on sys.path, not a test file (tests/test_row_timeout.py).
"""
import time


def serve_with_slow_rows(conn, *setup) -> None:
    from compare import isolate, worker

    def steps(count: int, seconds: float) -> int:
        for _ in range(count):
            time.sleep(seconds)
            worker.progress()
        return count

    def stuck(seconds: float) -> str:
        worker.progress()
        time.sleep(seconds)
        return "finished late"

    worker.steps, worker.stuck = steps, stuck
    isolate._serve(conn, *setup)  # the real serving loop
