"""bench/gpu_run.sh's background runs, without a GPU: a wait that ends when the runs do, or after the seconds it was
given with what was written so far, and a --wait given something other than seconds refused before it waits."""
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "gpu_run.sh"

pytestmark = pytest.mark.skipif(shutil.which("setsid") is None, reason="gpu_run.sh detaches its runs with setsid")


def _gpu_run(tree: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "bench/gpu_run.sh", *args], cwd=tree, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "OUT": str(tree / "out")})


@pytest.fixture
def tree(tmp_path):
    """A tree of its own to copy into the background folder: the script alone, not this checkout."""
    (tmp_path / "bench").mkdir()
    shutil.copy(SCRIPT, tmp_path / "bench" / "gpu_run.sh")
    yield tmp_path
    pid_file = tmp_path / "gpu-out" / "background" / "pid"
    if pid_file.exists():  # a run still going when the test ends: its whole group stopped
        try:
            os.killpg(int(pid_file.read_text()), signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_wait_collects_when_the_runs_finish(tree):
    done = _gpu_run(tree, "--for", "30", "cmd:echo first run", "cmd:echo second run")
    assert done.returncode == 0, done.stderr
    assert "all runs finished" in done.stdout
    log = (tree / "out" / "compare.log").read_text()
    assert "first run" in log and "second run" in log
    assert log.count("compare exit: 0") == 2


def test_a_wait_given_fewer_seconds_than_the_runs_take_collects_what_is_there_and_says_so(tree):
    started = _gpu_run(tree, "--for", "0", "cmd:echo begun; sleep 60")
    assert "still running" in started.stdout
    again = _gpu_run(tree, "--wait", "2", timeout=20)
    assert again.returncode == 0, again.stderr
    assert "still running" in again.stdout
    assert "begun" in (tree / "out" / "compare.log").read_text()


@pytest.mark.parametrize("seconds", ["abc", "-5", "9m"])
def test_a_wait_that_is_not_seconds_is_refused_at_once(tree, seconds):
    refused = _gpu_run(tree, "--wait", seconds, timeout=10)
    assert refused.returncode == 2
    assert f"--wait takes a number of seconds, not '{seconds}'" in refused.stderr
