"""Launch choices of the norms' exchange kernels, tried side by side on one GPU: each checked, then timed, as a row.

    python bench/exchange_configs.py layernorm-backward rmsnorm-backward --dtypes bf16,fp32 \
        --shapes 4096x16384,1024x32768,256x65536 \
        --configs cols=2048,warps=8,per_sm=2,ahead=1 cols=2048,warps=8,per_sm=2,ahead=2,as_loaded=1 \
                  cols=2048,warps=4,per_sm=2,ahead=2,as_loaded=1

The exchange steps (triton_src/layernorm.py v10-v14, triton_src/rmsnorm.py v9-v13) split a row over programs of
EXCHANGE_COLS columns, EXCHANGE_WARPS warps and EXCHANGE_PROGRAMS_PER_SM programs an SM, chosen once among a few;
v13 adds rows ahead and the late row kept as loaded. The backward ops (layernorm-backward, rmsnorm-backward) try the
backward's kernel (v13's), the forward ops (layernorm, rmsnorm) the forward's (v14's, which always keeps its late
row as loaded: `as_loaded` has no say there, and whose rows' y can be written `lag` rows late, 1 as shipped or 2;
the backward's lag is v12's one row). A config here sets those for the length of its cells:
`cols` (columns a program's part of a row), `warps`, `per_sm` (programs an SM: the registers are capped to fit, and
the cooperative launch is refused where they do not), `ahead` (rows a program's loads run ahead, 1 or 2),
`as_loaded` (1: the late row kept as its loaded x and dy, v13's), always with v12's reductions (lean). A key left
unset takes v12's launch (2048 columns, 8 warps, 2 programs an SM, one row ahead, the late row as x̂ and w·dy) and
the forward's shipped lag; mind that the forward as shipped loads two rows ahead, not one. Each cell is
first checked as the lab checks a row (compare.check.check_case, the float64 reference, random inputs, three
seeds), then timed as the lab times one (compare.timing.time_calls: rotating input sets, the L2 flushed before each
call, median and IQR) beside the same-bytes copy in the same process. A cell that fails its check is not timed.

With --out FILE the same lines go to a markdown file, with the command and the machine, written only once every
cell has run (a run cut short leaves an earlier file as it was).

What it prints is a guide to the next step, not a row of the lab's tables: a choice that wins here becomes a step
(its own row, checked on every shape) before any table shows it.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

import triton_src  # noqa: E402
from compare import caches, check, cli, discover, env, passes, report, schedule, timing  # noqa: E402
from triton_src import layernorm  # noqa: E402

KEYS = {"cols": int, "warps": int, "per_sm": int, "ahead": int, "as_loaded": int, "lag": int}
DEFAULTS = dict(cols=layernorm.EXCHANGE_COLS, warps=layernorm.EXCHANGE_WARPS,
                per_sm=layernorm.EXCHANGE_PROGRAMS_PER_SM, ahead=1, as_loaded=0, lag=layernorm.FORWARD_EXCHANGE_LAG)
STEP = "triton:lean_ahead"  # the row whose forward, seeds and checks a backward op's config borrows
FORWARD_STEP = "triton:exchange_forward"  # the row whose seeds and checks a forward op's config borrows
OPS = ["layernorm", "rmsnorm", "layernorm-backward", "rmsnorm-backward"]


def forward_op(op) -> bool:
    """Whether the op is a norm's forward pass (layernorm, rmsnorm), whose config rows try the forward's kernel."""
    return op.pass_of is not None and op.pass_of[1] == passes.FORWARD


def step_of(op) -> str:
    return FORWARD_STEP if forward_op(op) else STEP


def parse_config(text: str) -> dict:
    """'cols=2048,warps=4' -> DEFAULTS with those set; a clear error for anything else."""
    config = dict(DEFAULTS)
    for item in cli.parse_list(text):
        key, _, value = item.partition("=")
        if key not in KEYS or not value.isdigit():
            raise argparse.ArgumentTypeError(f"bad config item {item!r} in {text!r}: use KEY=INTEGER with KEY one of "
                                             f"{', '.join(KEYS)}")
        config[key] = KEYS[key](value)
    if config["ahead"] not in (1, 2):
        raise argparse.ArgumentTypeError(f"{text!r}: ahead is 1 or 2 (rows a program's loads run ahead)")
    if config["lag"] not in (1, 2):
        raise argparse.ArgumentTypeError(f"{text!r}: lag is 1 or 2 (rows between a row's sums and its y)")
    if config["cols"] & (config["cols"] - 1) or config["cols"] < 32 * config["warps"]:
        raise argparse.ArgumentTypeError(f"{text!r}: cols must be a power of two, at least 32 x warps")
    return config


def label(config: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in config.items())


@contextlib.contextmanager
def launched_as(config: dict):
    """layernorm's exchange constants set to the config's while its cells run (both norms' launches read them from
    there: exchange_programs, exchange_slot_words, exchange_meta), put back after."""
    names = ("EXCHANGE_COLS", "EXCHANGE_WARPS", "EXCHANGE_PROGRAMS_PER_SM", "EXCHANGE_LAUNCH",
             "FORWARD_EXCHANGE_AHEAD", "FORWARD_EXCHANGE_LAG")
    saved = {name: getattr(layernorm, name) for name in names}
    layernorm.EXCHANGE_COLS, layernorm.EXCHANGE_WARPS = config["cols"], config["warps"]
    layernorm.EXCHANGE_PROGRAMS_PER_SM, layernorm.FORWARD_EXCHANGE_AHEAD = config["per_sm"], config["ahead"]
    layernorm.FORWARD_EXCHANGE_LAG = config["lag"]
    layernorm.EXCHANGE_LAUNCH = layernorm.exchange_launch(config["warps"], config["per_sm"])
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(layernorm, name, value)


def config_row(op, config: dict):
    """The callable the harness would check and time for a row whose backward is the exchange kernel launched as
    the config says (its forward the step's); for a forward op, the forward's exchange kernel so launched."""
    norm = importlib.import_module(f"triton_src.{discover.base_name(op.name)}")
    if forward_op(op):
        return passes.row(op, functools.partial(norm._exchange_forward, via=triton_src.launcher), None)
    forward = discover.triton_function(discover.triton_source(op.name), STEP.split(":")[1])
    backward = functools.partial(norm._exchange_backward, via=triton_src.launcher, ahead=config["ahead"], lean=True,
                                 as_loaded=bool(config["as_loaded"]))
    return passes.row(op, forward, backward)


def timed(op, fn, dtype: torch.dtype, shape: tuple, device: torch.device, l2: int | None) -> timing.Timing:
    """The cell timed as compare.worker times a row's: a backward row's with each input set's forward run once and
    the backward alone timed."""
    nbytes = op.bytes_moved(shape, dtype)
    prepare, call = getattr(fn, "lab_prepare", lambda *inputs: inputs), getattr(fn, "lab_timed", fn)
    sets = [prepare(*op.make_inputs(shape, dtype, device, torch.Generator(device=device).manual_seed(seed)))
            for seed in range(schedule.input_set_count(nbytes, l2))]
    return timing.time_calls(timing.rotating(call, sets), impl=step_of(op), dtype=str(dtype), shape=str(shape),
                             nbytes=nbytes, flops=op.flops(shape))


def run(opts, say, device: torch.device | None = None) -> None:
    """Every op, dtype, shape and config of opts, each cell a line to say(): checked, then timed (device: the GPU;
    another only in the tests, under Triton's interpreter with the timing stood in for)."""
    device = device or torch.device("cuda")
    l2 = timing.l2_bytes(device)
    say(f"{env.gpu_name()}; each config's cells checked (3 seeds) then timed; fraction of the same-bytes copy")
    for op_name in opts.ops:
        op = discover.load_op(op_name)
        for dtype_name in opts.dtypes:
            dtype = getattr(torch, dtype_name)
            for shape in opts.shapes:
                copy = timing.same_bytes_copy(op.bytes_moved(shape, dtype), device, l2, dtype=dtype_name,
                                              shape=str(shape))
                say(f"{op_name} {dtype_name} {op.describe_shape(shape)}: copy {copy.median_ms * 1e3:.1f} us")
                for config in opts.configs:
                    with launched_as(config):
                        say(f"  {label(config):58} {cell(op, config, dtype, shape, device, l2, copy)}")


def takes(op, x: torch.Tensor) -> bool:
    """Whether the op's exchange step takes x's rows: the forward's past FORWARD_EXCHANGE_AFTER_COLS; the backward's as
    the norm's _exchange_backward decides (RMSNorm's backward_exchange_programs, which leaves it 16-bit rows of 16K)."""
    if forward_op(op):
        return layernorm.exchange_programs(x, layernorm.FORWARD_EXCHANGE_AFTER_COLS) is not None
    norm = importlib.import_module(f"triton_src.{discover.base_name(op.name)}")
    return getattr(norm, "backward_exchange_programs", layernorm.exchange_programs)(x) is not None


def cell(op, config, dtype, shape, device, l2, copy) -> str:
    if not takes(op, torch.empty(shape, device=device, dtype=dtype)):
        return "not an exchange shape (rows this short or this long go to another step)"
    fn = config_row(op, config)
    try:
        for seed in range(3):
            r = check.check_case(op, step_of(op), fn, dtype, shape, device, seed)
            if not r.ok:
                return f"FAILED its check (seed {seed}): {r.status}: {r.message}"
        t = timed(op, fn, dtype, shape, device, l2)
    except RuntimeError as e:  # a cooperative launch refused: the config's programs cannot all be resident
        torch.cuda.synchronize()
        return f"not launched: {str(e).splitlines()[0]}"
    noisy = " (noisy)" if t.noisy else ""
    return f"{t.median_ms * 1e3:8.1f} us  IQR {t.iqr_ms * 1e3:6.1f}  {copy.median_ms / t.median_ms:5.2f} of copy{noisy}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ops", nargs="+", choices=OPS)
    p.add_argument("--dtypes", type=cli.parse_dtypes, default=["bfloat16", "float32"])
    p.add_argument("--shapes", type=cli.parse_sizes, default=[(4096, 16384), (1024, 32768), (256, 65536)])
    p.add_argument("--configs", nargs="+", type=parse_config, default=[dict(DEFAULTS)],
                   help="one or more KEY=VALUE,... (keys: " + ", ".join(KEYS)
                   + "; unset keys as v12 launches its rows)")
    p.add_argument("--out", type=Path, help="also write the lines to this markdown file, once every cell has run")
    opts = p.parse_args(sys.argv[1:] if argv is None else argv)
    if not torch.cuda.is_available():
        print("bench/exchange_configs.py: needs a CUDA GPU (the exchange kernel's programs wait for each other, "
              "which Triton's interpreter cannot run); run it on the GPU machine", file=sys.stderr)
        return 2
    lines = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    with caches.compile_caches():  # the lab's Triton cache: a config compiled once is not compiled again
        run(opts, say)
    if opts.out:
        write_lines(opts.out, sys.argv[1:] if argv is None else argv, lines)
    return 0


def write_lines(out: Path, argv: list[str], lines: list[str]) -> None:
    """The run's lines as markdown, with its command and machine, in one write (report.write_atomic)."""
    machine = env.describe()
    command = " ".join(["python bench/exchange_configs.py", *argv])
    report.write_atomic(out, f"# Exchange kernels' launch choices\n\nProduced by `{command}` on "
                        f"**{machine['gpu']}**; torch {machine['torch']}, triton {machine['triton']}, git "
                        f"{machine['git_revision']}.\n\n```\n" + "\n".join(lines) + "\n```\n")


if __name__ == "__main__":
    sys.exit(main())
