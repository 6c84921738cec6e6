"""The row timeout counts from a row's last finished step, not from its start: a long row that keeps finishing steps
runs to the end, and a row stuck in one step is killed (compare/isolate.py)."""
import time
from pathlib import Path

import pytest

from compare import isolate

PLANTED = Path(__file__).parent / "planted"


@pytest.fixture
def slow_rows(monkeypatch):
    monkeypatch.syspath_prepend(str(PLANTED))  # spawned workers import the serving function by module name
    import slow_rows_worker

    monkeypatch.setattr(isolate, "_serve", slow_rows_worker.serve_with_slow_rows)


def test_a_row_longer_than_the_timeout_that_keeps_progressing_finishes(slow_rows):
    with isolate.Worker(row_timeout_s=3) as worker:
        start = time.monotonic()
        assert worker.call("steps", 12, 0.5) == 12
        assert time.monotonic() - start > 5  # twice the timeout, with a step reported every half second
        assert worker.call("steps", 1, 0.0) == 1  # the progress messages were all consumed: the next reply is its own
        assert worker.starts == 1


def test_a_row_stuck_in_one_step_is_timed_out_and_the_next_row_gets_a_fresh_worker(slow_rows):
    with isolate.Worker(row_timeout_s=3) as worker:
        start = time.monotonic()
        with pytest.raises(isolate.RowFailure) as failure:
            worker.call("stuck", 60)
        assert failure.value.status == "timed out"
        assert "no progress for 3 s" in failure.value.message and "--row-timeout" in failure.value.message
        assert time.monotonic() - start < 30
        assert worker.call("steps", 2, 0.0) == 2 and worker.starts == 2
