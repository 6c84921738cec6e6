"""bench/exchange_sass.py: the norms' exchange kernels compiled for sm_90 without a GPU, their row loop counted."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "exchange_sass.py"


@pytest.mark.slow
def test_the_lean_step_takes_fewer_reductions_a_row_than_the_exchange_step():
    """lean_exchange's point (triton_src/layernorm.py, v12): fewer shuffles, barriers and 64-bit flag compares in
    each row's fixed work than v10's. A change that loses it (a reduction split again, the flags 64-bit again)
    fails here, where no GPU is needed to see it."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}  # compiled code, not the interpreter
    out = subprocess.run([sys.executable, str(SCRIPT), "--dtype", "fp32"], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    kinds = lines[1].split()[-11:]
    rows = {}
    for line in lines[2:]:
        words = line.split()
        rows[words[0], words[1]] = dict(zip(["a row", *kinds], map(int, words[-12:])))
    for norm in ("layernorm", "rmsnorm"):
        exchange, lean = rows[norm, "exchange"], rows[norm, "lean_exchange"]
        assert lean["a row"] < exchange["a row"], (norm, lean, exchange)
        assert lean["SHFL"] < exchange["SHFL"] and lean["SEL"] < exchange["SEL"], (norm, lean, exchange)
    assert rows["layernorm", "lean_exchange"]["BAR"] < rows["layernorm", "exchange"]["BAR"]
    assert all(row["ATOMG"] >= 1 and row["LDG"] >= 2 for row in rows.values())  # the loop found is the row loop
