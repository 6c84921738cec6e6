"""bench/same_inputs.py: one check case's inputs, the ones the schedule gives a named row, handed to every row."""
import dataclasses
import importlib.util
from pathlib import Path

import pytest
import torch

from compare import discover, schedule
from compare.spec import Tolerance

_PATH = Path(__file__).resolve().parents[1] / "bench" / "same_inputs.py"
_spec = importlib.util.spec_from_file_location("same_inputs", _PATH)
same_inputs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(same_inputs)

ARGS = ["gelu", "--seeds-of", "triton:basic", "--dtype", "fp32", "--shape", "1025", "--impls",
        "triton:basic,triton:tuned,torch:eager"]


def test_every_row_is_judged_on_the_named_rows_seeds(capsys):
    assert same_inputs.main(ARGS) == 0
    out = capsys.readouterr().out
    op = discover.load_op("gelu")
    seeds = schedule.case_seeds(0, op, "triton:basic", torch.float32, (1025,), schedule.RANDOM, None, "check")
    assert f"seeds {', '.join(map(str, seeds))}" in out
    for row in ("triton:basic", "triton:tuned", "torch:eager"):
        assert any(line.split()[:2] == [row, "ok"] for line in out.splitlines()), out
    assert "bit-identical to triton:basic's: triton:basic" in out


def test_a_case_every_row_fails_is_reported_for_each_row(capsys, monkeypatch):
    """Held to the float64 reference exactly, every float32 output fails: each row says so, with the judge's
    message."""
    load = discover.load_op

    def exact(name):
        op = load(name)
        return dataclasses.replace(op, tolerances={dtype: Tolerance(atol=0.0, rtol=0.0) for dtype in op.dtypes})

    monkeypatch.setattr(same_inputs.discover, "load_op", exact)
    same_inputs.main(ARGS)
    lines = capsys.readouterr().out.splitlines()
    for row in ("triton:basic", "triton:tuned", "torch:eager"):
        line = next(line for line in lines if line.split()[:1] == [row])
        assert line.split()[1] == "FAIL" and "outside" in line, line


def test_a_row_the_op_does_not_have_is_named_with_the_rows_it_has():
    with pytest.raises(SystemExit, match="no row 'cuda:nope'.*triton:basic"):
        same_inputs.main(["gelu", "--seeds-of", "cuda:nope", "--dtype", "fp32", "--shape", "1025"])
