"""A worker process as compare.isolate starts one, with two extra "rows" to exercise the row timeout on any machine:
`steps` finishes one step every `seconds` and reports each (as run_row does after every check and timing), and
`stuck` reports one step and then never finishes the next. Spawned workers import this module by name, so it is a
plain module on sys.path, not a test file (tests/test_row_timeout.py).
"""
import time


def serve_with_slow_rows(conn) -> None:
    from compare import isolate, runner

    def steps(count: int, seconds: float) -> int:
        for _ in range(count):
            time.sleep(seconds)
            runner._progress()
        return count

    def stuck(seconds: float) -> str:
        runner._progress()
        time.sleep(seconds)
        return "finished late"

    runner.steps, runner.stuck = steps, stuck
    isolate._serve(conn)  # the real serving loop
