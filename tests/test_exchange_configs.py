"""bench/exchange_configs.py: a config's row is the exchange kernel launched as the config says, checked as a row."""
import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from compare import check, discover, worker

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "exchange_configs.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("exchange_configs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def interpreted(script, op_name: str):
    """The op, with the step whose forward a config's row borrows ready for Triton's interpreter."""
    op = discover.load_op(op_name)
    worker._use_interpreter_autotune_stub(next(i for i in discover.implementations(op) if i.name == script.STEP))
    return op


@pytest.mark.slow
@pytest.mark.parametrize("op_name", ["layernorm-backward", "rmsnorm-backward"])
def test_a_config_row_launches_the_exchange_kernel_as_the_config_says(script, op_name, device, monkeypatch):
    """Its columns, warps, registers, rows ahead and late row as loaded reach the launch, the row passes the lab's
    check (one program a row, as the interpreter runs it), and the shipped constants are back afterwards."""
    from triton_src import layernorm

    norm = importlib.import_module(f"triton_src.{discover.base_name(op_name)}")
    op = interpreted(script, op_name)
    shipped = (layernorm.EXCHANGE_COLS, layernorm.EXCHANGE_WARPS, layernorm.EXCHANGE_PROGRAMS_PER_SM,
               dict(layernorm.EXCHANGE_LAUNCH))
    monkeypatch.setattr(layernorm, "EXCHANGE_AFTER_COLS", 1024)
    if hasattr(norm, "HALF_EXCHANGE_AFTER_COLS"):  # RMSNorm's 16-bit rows
        monkeypatch.setattr(norm, "HALF_EXCHANGE_AFTER_COLS", 1024)
    monkeypatch.setattr(norm, "_split_backward", lambda *a: pytest.fail("the config's rows were handed down"))
    launched, meta_of = [], layernorm.exchange_meta
    monkeypatch.setattr(norm, "exchange_meta", lambda *a, **k: launched.append(meta_of(*a, **k)) or launched[-1])
    config = script.parse_config("cols=8192,warps=4,per_sm=1,ahead=2,as_loaded=1")
    with script.launched_as(config):
        r = check.check_case(op, script.STEP, script.config_row(op, config), torch.float16, (5, 5000), device, 0)
    assert r.ok, f"{r.status}: {r.message}"
    assert launched and all(meta["BLOCK"] == 8192 and meta["num_warps"] == 4 and meta["maxnreg"] == 255
                            and meta["AHEAD"] == 2 and meta["AS_LOADED"] and meta["LEAN"] for meta in launched)
    assert (layernorm.EXCHANGE_COLS, layernorm.EXCHANGE_WARPS, layernorm.EXCHANGE_PROGRAMS_PER_SM,
            layernorm.EXCHANGE_LAUNCH) == shipped


def test_a_config_out_of_reach_is_refused_with_what_to_write(script):
    for text, said in [("cols=3000", "power of two"), ("ahead=3", "ahead is 1 or 2"), ("rows=2", "KEY one of"),
                       ("warps=x", "KEY=INTEGER"), ("lag=3", "lag is 1 or 2")]:
        with pytest.raises(Exception, match=said):
            script.parse_config(text)


def test_the_lines_are_written_with_their_command_and_machine(script, tmp_path):
    out = tmp_path / "deeper" / "configs.md"
    script.write_lines(out, ["layernorm-backward", "--dtypes", "bf16"],
                       ["NVIDIA X; ...", "  cols=2048 ... 0.64 of copy"])
    text = out.read_text()
    assert "`python bench/exchange_configs.py layernorm-backward --dtypes bf16`" in text
    assert "  cols=2048 ... 0.64 of copy\n```" in text and "triton " in text and "git " in text


@pytest.mark.slow
def test_each_cell_is_checked_then_timed_and_says_so(script, device, monkeypatch):
    """The tool's loop on the interpreter (one program a row), backward and forward ops: each config's cell passes
    its three checks, is timed on the config's launch, and gets its line with the fraction of the copy; a shape no
    exchange takes says so."""
    from compare import timing
    from triton_src import layernorm

    from triton_src import rmsnorm

    for op_name in ("layernorm-backward", "rmsnorm-backward"):
        interpreted(script, op_name)
    monkeypatch.setattr(layernorm, "EXCHANGE_AFTER_COLS", 1024)
    monkeypatch.setattr(rmsnorm, "HALF_EXCHANGE_AFTER_COLS", 1024)
    forward_launches = []

    class Recorded:  # a forward exchange kernel whose launches are counted
        def __init__(self, kernel):
            self.kernel = kernel

        def __getitem__(self, grid):
            def launch(*args, **meta):
                forward_launches.append((self.kernel.__name__, meta["LAG"]))
                return self.kernel[grid](*args, **meta)

            return launch

    for norm in (layernorm, rmsnorm):  # the forward's threshold, as each norm's forward reads it
        monkeypatch.setattr(norm, "FORWARD_EXCHANGE_AFTER_COLS", 1024)
        name = f"{norm.__name__.split('.')[-1]}_exchange_forward_kernel"
        monkeypatch.setattr(norm, name, Recorded(getattr(norm, name)))

    def stand_in(ms):
        return lambda **k: timing.Timing(k.get("impl", "copy"), k["dtype"], k["shape"], ms, ms, ms, 0, 0, 0.0, 0.0)

    copy, timed_launches = stand_in(0.010), []

    def time_calls(call, **k):
        call()  # the backward on the config's launch
        timed_launches.append((layernorm.EXCHANGE_WARPS, layernorm.EXCHANGE_COLS))
        return stand_in(0.020)(**k)

    monkeypatch.setattr(timing, "same_bytes_copy", lambda nbytes, device, l2, **k: copy(**k))
    monkeypatch.setattr(timing, "time_calls", time_calls)
    monkeypatch.setattr(timing, "l2_bytes", lambda device: None)
    opts = type("Opts", (), dict(ops=["layernorm-backward", "rmsnorm-backward", "layernorm", "rmsnorm"],
                                 dtypes=["float16"],
                                 shapes=[(3, 5000), (4, 900)],
                                 configs=[script.parse_config("cols=8192,warps=4,per_sm=1,ahead=2,as_loaded=1,lag=2"),
                                          script.parse_config("cols=8192,warps=2,per_sm=1,ahead=1")]))
    lines = []
    script.run(opts, lines.append, device)
    cells = [line for line in lines if line.startswith("  ")]
    assert len(cells) == 16, lines
    assert sum("0.50 of copy" in line for line in cells) == 8, lines  # 10 µs of copy against 20
    assert sum("not an exchange shape" in line for line in cells) == 8, lines  # N = 900
    assert timed_launches == [(4, 8192), (2, 8192)] * 4
    # the forward ops' cells ran the forward's exchange kernel, not the tile kernel of the step before
    assert {(f"{norm}_exchange_forward_kernel", lag) for norm in ("layernorm", "rmsnorm")
            for lag in (1, 2)} == set(forward_launches)
