"""bench/exchange_sass.py: the norms' exchange kernels compiled for sm_90 without a GPU, their row loop counted."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "exchange_sass.py"


def compiled_run(*args: str) -> str:
    """What `python ARGS` prints, run with compiled Triton code, not the interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout


def counted(*dtypes: str) -> dict:
    """bench/exchange_sass.py's table: {(norm, step, dtype): {"a row": instructions, kind: count}}."""
    lines = compiled_run(str(SCRIPT), "--dtype", *dtypes).splitlines()
    kinds = lines[1].split()[-11:]
    rows = {}
    for line in lines[2:]:
        words = line.split()
        rows[words[0], words[1], words[2]] = dict(zip(["a row", *kinds], map(int, words[-12:])))
    assert all(row["ATOMG"] >= 1 and row["LDG"] >= 2 for row in rows.values())  # the loop found is the row loop
    return rows


@pytest.fixture(scope="module")
def rows():
    return counted("bf16", "fp32")


@pytest.mark.slow
def test_the_lean_step_takes_fewer_reductions_a_row_than_the_exchange_step(rows):
    """lean_exchange's point (triton_src/layernorm.py, v12): fewer shuffles, barriers and 64-bit flag compares in
    each row's fixed work than v10's. A change that loses it (a reduction split again, the flags 64-bit again)
    fails here, where no GPU is needed to see it."""
    for norm in ("layernorm", "rmsnorm"):
        for dtype in ("bf16", "fp32"):
            exchange, lean = rows[norm, "exchange", dtype], rows[norm, "lean_exchange", dtype]
            assert lean["a row"] < exchange["a row"], (norm, dtype, lean, exchange)
            assert lean["SHFL"] < exchange["SHFL"] and lean["SEL"] < exchange["SEL"], (norm, dtype, lean, exchange)
        assert rows[norm, "lean_exchange", "fp32"]["STL"] == 0  # no spill in the loop
    assert rows["layernorm", "lean_exchange", "fp32"]["BAR"] < rows["layernorm", "exchange", "fp32"]["BAR"]


@pytest.mark.slow
def test_the_lean_ahead_step_keeps_v12s_reductions_and_fp32_code(rows):
    """lean_ahead (triton_src/layernorm.py, v13): 16-bit rows loaded two rows ahead beside v12's reductions, the
    late row kept as loaded; v12's reductions kept, RMSNorm's loop with nothing spilled (LayerNorm's spills a few
    words a turn), fp32 rows v12's code."""
    for norm in ("layernorm", "rmsnorm"):
        ahead, lean = rows[norm, "lean_ahead", "bf16"], rows[norm, "lean_exchange", "bf16"]
        assert ahead["SHFL"] == lean["SHFL"] and ahead["BAR"] == lean["BAR"], (norm, ahead, lean)
        assert rows[norm, "lean_ahead", "fp32"] == rows[norm, "lean_exchange", "fp32"]
    assert rows["rmsnorm", "lean_ahead", "bf16"]["STL"] == 0 and rows["rmsnorm", "lean_ahead", "bf16"]["LDL"] == 0


def carried_16_bit_tensors() -> list[int]:
    """bf16 tensors each exchange kernel's row loop carries from one turn to the next in Triton's IR
    (bench/exchange_sass.py's carried_tensors): the backward's of both norms launched as v13 launches 16-bit rows
    (two rows ahead, the late row as loaded), then the forward's (v14), its y one row late, then two."""
    program = f"""
import sys
sys.path.insert(0, {str(SCRIPT.parent)!r})
from exchange_sass import carried_tensors, layernorm, rmsnorm
backward = layernorm.exchange_meta(8, ahead=2, lean=True, as_loaded=True)
forwards = [layernorm.exchange_forward_meta(8), dict(layernorm.exchange_forward_meta(8), LAG=2)]
print([carried_tensors(k, "bf16", backward) for k in (layernorm.layernorm_exchange_backward_kernel,
                                                     rmsnorm.rmsnorm_exchange_backward_kernel)]
      + [carried_tensors(k, "bf16", forward) for forward in forwards
         for k in (layernorm.layernorm_exchange_forward_kernel, rmsnorm.rmsnorm_exchange_forward_kernel)])
"""
    return json.loads(compiled_run("-c", program).strip().splitlines()[-1])


@pytest.mark.slow
def test_the_rows_kept_as_loaded_are_carried_by_the_compiled_loop():
    """A row kept as loaded from one turn to the next must be a value the compiled loop carries. Triton's front end
    finds a loop's carried names by running its body once and comparing each name's value with the one it entered
    with: a kept row that enters the loop as the loads in flight (x_1) ends that run as the same value and is
    dropped, so the late row is read as this row's loads. The interpreter runs the loop as Python and cannot see it
    (v13's first GPU run wrote wrong dx from each group's second row on). Backward, 16-bit, two rows ahead: x and
    dy of the next two rows and of the late row, six; forward: x of the next two rows and of the late row, three,
    or of the two late rows, four."""
    assert carried_16_bit_tensors() == [6, 6, 3, 3, 4, 4]


@pytest.mark.slow
def test_the_exchange_forward_step_compiles_for_hopper_without_a_spill(rows):
    """exchange_forward (triton_src/layernorm.py, v14): the interpreter runs its rows of one program only, and
    takes code the compiler refuses (a loop-carried name that changes type did); here both norms' kernels compile
    for sm_90 in both dtypes, two rows of x in flight and one kept with nothing spilled, RMSNorm's row with fewer
    reductions across the program than LayerNorm's (one sum, not two merged)."""
    for dtype in ("bf16", "fp32"):
        for norm in ("layernorm", "rmsnorm"):
            row = rows[norm, "exchange_forward", dtype]
            assert row["STL"] == 0 and row["LDL"] == 0, (norm, dtype, row)
        assert rows["rmsnorm", "exchange_forward", dtype]["SHFL"] < rows["layernorm", "exchange_forward", dtype]["SHFL"]
