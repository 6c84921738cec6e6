"""One op's rows spread over several GPUs: on this host (``--gpus``) or as Ray tasks (``--cluster``,
compare/cluster.py), with the results merged into the files a serial run writes.

The unit of work is a lane: one GPU running its share of the op's rows through compare.runner.run_op, exactly as
a serial run does (ceilings first, each row in a worker process of its own, every output judged in the lane's
parent process). Each lane measures its own ceilings, so a row's fraction of the copy bandwidth (or of the vendor
library, for compute-bound ops) is of the GPU that ran it; for that, every lane also runs the baseline rows
(``torch:eager``, and a compute-bound op's ceiling rows: baseline_rows), and the merged result keeps the first
lane's. GPUs of different models never share an op's result: each model runs every row over its own lanes and gets
its own result (and results folder).

Rows go to lanes longest first, by the time each row took in the op's last full results on this GPU model where
those exist (``row_seconds``), else by a rough weight per kind of row."""
from __future__ import annotations

import dataclasses
import json
import multiprocessing as mp
import os
import threading
from pathlib import Path

from . import discover, env
from .results import OpResult, RowStatus, Status
from .spec import Op

BASELINE = "torch:eager"


def baseline_rows(op: Op) -> list[str]:
    """The rows every lane runs: torch:eager (the rows' speedups are over it) and, for a compute-bound op, the rows
    whose fastest timing is its ceiling (Op.ceiling_rows)."""
    return list(dict.fromkeys([BASELINE, *(op.ceiling_rows if op.roofline == "compute" else ())]))


class GpuChoiceError(ValueError):
    """--gpus names GPUs this host does not have, or is malformed."""


def parse_gpus(text: str, available: int) -> list[int]:
    """`all`, a count (`2`: the first two) or a list of indices (`0,2`) -> device indices of this host."""
    text = text.strip()
    if available < 1:
        raise GpuChoiceError(f"--gpus {text}: this machine has no GPU that torch can use; run without --gpus")
    if text == "all":
        return list(range(available))
    if text.isdigit():
        count = int(text)
        if not 1 <= count <= available:
            raise GpuChoiceError(f"--gpus {text}: this machine has {available} GPU(s); ask for 1 to {available}, "
                                 f"or 'all'")
        return list(range(count))
    try:
        chosen = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise GpuChoiceError(f"--gpus {text!r}: give 'all', a count such as 2, or device indices such as 0,2") from None
    wrong = [i for i in chosen if not 0 <= i < available]
    if wrong or not chosen or len(set(chosen)) != len(chosen):
        raise GpuChoiceError(f"--gpus {text}: the indices must be distinct, between 0 and {available - 1} "
                             f"(this machine has {available} GPU(s))")
    return chosen


# Seconds a row of each kind took in a typical run, for planning when no earlier results say better.
_WEIGHTS = {"torch:compile-max-autotune": 600.0, "torch:compile": 60.0, "triton": 40.0, "cuda": 20.0, "torch": 20.0}


def _weight(impl: discover.Impl, earlier: dict[str, float]) -> float:
    if impl.name in earlier:
        return earlier[impl.name]
    return _WEIGHTS.get(impl.name) or _WEIGHTS.get(impl.backend, 20.0)


def earlier_row_seconds(results_dir: Path, op: str) -> dict[str, float]:
    """Per row, the seconds it took in the op's full results in results_dir (empty where there are none)."""
    try:
        data = json.loads((results_dir / f"{op}.json").read_text())
    except (OSError, ValueError):
        return {}
    # "<phase>/<part>" entries are parts of a phase already counted whole
    return {row: sum(s for phase, s in phases.items() if "/" not in phase)
            for row, phases in (data.get("row_seconds") or {}).items()}


def plan(impls: list[discover.Impl], lanes: int, earlier: dict[str, float] | None = None,
         baseline: list[str] | tuple[str, ...] = (BASELINE,)) -> list[list[discover.Impl]]:
    """Rows per lane, longest first onto the least loaded lane; every lane also gets the baseline rows among impls
    (by name: baseline_rows of the op), which are left out of the balance. Lanes that would get no row of their own
    are dropped."""
    earlier = earlier or {}
    every_lane = [i for i in impls if i.name in baseline]
    others = sorted((i for i in impls if i.name not in baseline), key=lambda i: -_weight(i, earlier))
    loads = [0.0] * max(1, min(lanes, len(others)))
    shares: list[list[discover.Impl]] = [[] for _ in loads]
    for impl in others:
        k = loads.index(min(loads))
        shares[k].append(impl)
        loads[k] += _weight(impl, earlier)
    order = {i.name: n for n, i in enumerate(impls)}
    return [sorted(every_lane + share, key=lambda i: order[i.name]) for share in shares]


def merge(parts: list[OpResult], impls: list[discover.Impl], lanes: list[str]) -> OpResult:
    """One result from the lanes' results (all of one GPU model), rows in the op's order. The baseline rows and the
    ceilings are the first lane's; env["lanes"] says which GPU ran which rows and what each one's ceilings were."""
    first = next((p for p in parts if "host" in p.env), parts[0])  # a lost lane's result has no measurements
    merged = dataclasses.replace(first, rows=[], checks=[], timings=[], loc=[], build=[], jit=[], captures=[],
                                 kernels=[], row_seconds={}, isolation=dict(first.isolation), ladder=[],
                                 phases={})
    seen: set[str] = set()
    for part in [first] + [p for p in parts if p is not first]:  # the baseline rows from the first
        own = {r.impl for r in part.rows} - seen
        seen |= own

        def keep(record) -> bool:
            return getattr(record, "impl", None) in own

        merged.rows += [r for r in part.rows if r.impl in own]
        for field in ("checks", "timings", "loc", "build", "jit", "captures", "kernels"):
            getattr(merged, field).extend(x for x in getattr(part, field) if keep(x))
        merged.row_seconds.update({row: s for row, s in part.row_seconds.items() if row in own})
        for phase, seconds in part.phases.items():  # summed over the lanes: GPU-seconds, not the run's wall time
            merged.phases[phase] = round(merged.phases.get(phase, 0.0) + seconds, 2)
        if part is not first:
            for key in ("worker_starts", "worker_start_s"):
                if key in part.isolation:
                    merged.isolation[key] = round(merged.isolation.get(key, 0) + part.isolation[key], 3)
    order = {i.name: n for n, i in enumerate(impls)}
    for field in ("rows", "checks", "timings", "loc", "build", "jit", "captures", "kernels"):  # as a serial run has them
        getattr(merged, field).sort(key=lambda r: order.get(getattr(r, "impl", None), len(order)))
    steps = {(s.backend, s.impl): s for part in parts for s in part.ladder}  # each lane read its rows' files
    merged.ladder = sorted(steps.values(), key=lambda s: (s.backend != "cuda", s.source.rsplit(":", 1)[0], s.number))
    merged.env = dict(first.env)
    peers = {name: version for part in parts for name, version in part.env.get("peers", {}).items()}
    if peers:  # each lane records the peer packages of its own rows
        merged.env["peers"] = peers
    merged.env["lanes"] = [{"gpu": lane, "rows": [r.impl for r in part.rows],
                            "copy_gbps": part.ceilings.copy_gbps} for lane, part in zip(lanes, parts)]
    return merged


def lost_lane(op_name: str, impls: list[discover.Impl], why: str, env_info: dict) -> OpResult:
    """The result of a lane whose process died: each of its rows crashed, with the reason."""
    op = discover.load_op(op_name)
    return OpResult(op.name, op.summary, op.roofline, env_info, ceiling_rows=list(op.ceiling_rows),
                    counting=op.counting, rows=[RowStatus(i.name, Status.CRASHED, why) for i in impls])


# ---- lanes on this host: a process per GPU ---------------------------------------------------------------------

def run_lane(op_name: str, impls: list[discover.Impl], options) -> OpResult:
    """One lane's share of the rows, in the process that sees its GPU (a lane process here, a Ray task there)."""
    from . import runner

    env.use_triton_interpreter_if_no_gpu()  # as the command line does, before any row is imported
    return runner.run_op(discover.load_op(op_name), options, impls)


def _lane_main(op_name: str, impls: list[discover.Impl], options, conn) -> None:
    try:
        conn.send(("ok", run_lane(op_name, impls, options)))
    except BaseException as exc:  # report it to the coordinator rather than die without a word
        from .isolate import short_error

        conn.send(("error", short_error(exc)))
    finally:
        conn.close()


_START_LOCK = threading.Lock()


def _start_lane(op_name: str, impls, options, device: int):
    """A lane process that sees one GPU (CUDA_VISIBLE_DEVICES): everything in it, the worker processes it starts
    included, runs on that GPU as on a machine with one."""
    ctx = mp.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    with _START_LOCK:  # a spawned process takes the environment as it is when it starts
        saved = os.environ.get("CUDA_VISIBLE_DEVICES")
        os.environ["CUDA_VISIBLE_DEVICES"] = _visible(saved, device)
        try:
            proc = ctx.Process(target=_lane_main, args=(op_name, impls, options, send), daemon=False)
            proc.start()
        finally:
            if saved is None:
                del os.environ["CUDA_VISIBLE_DEVICES"]
            else:
                os.environ["CUDA_VISIBLE_DEVICES"] = saved
    send.close()
    return proc, receive


def _visible(saved: str | None, device: int) -> str:
    """The CUDA_VISIBLE_DEVICES entry of this process's device `device` (which may itself be a remapped one)."""
    if saved:
        entries = [e.strip() for e in saved.split(",") if e.strip()]
        if device < len(entries):
            return entries[device]
    return str(device)


def run_local(op_name: str, impls: list[discover.Impl], options, devices: list[int]) -> list[OpResult]:
    """The op's rows over the given GPUs of this host; one result per GPU model among them."""
    import torch

    names = {d: torch.cuda.get_device_name(d) for d in devices}
    baseline = baseline_rows(discover.load_op(op_name))
    results = []
    for model in sorted(set(names.values())):
        group = [d for d in devices if names[d] == model]
        earlier = earlier_row_seconds(env.ROOT / "results" / env.gpu_slug(model), op_name)
        shares = plan(impls, len(group), earlier, baseline)
        lanes = [(d, share, *_start_lane(op_name, share, lane_options(options, f"gpu {d}"), d))
                 for d, share in zip(group, shares)]
        parts = []
        for device, share, proc, receive in lanes:
            try:
                kind, value = receive.recv()
            except EOFError:
                kind, value = "error", "its process died"
            proc.join()
            if kind == "ok":
                parts.append(value)
            else:
                why = f"the process running GPU {device}'s rows failed: {value} (exit code {proc.exitcode})"
                parts.append(lost_lane(op_name, share, why, {"gpu": model}))
        results.append(merge(parts, impls, [f"cuda:{d}" for d, *_ in lanes]))
    return results


def lane_options(options, lane: str):
    """The run's options for one lane: its lines in the terminal say which lane they come from."""
    return dataclasses.replace(options, label=f"[{lane}] ")
