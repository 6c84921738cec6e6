"""``--cluster ADDRESS``: the lanes of compare/fanout.py as Ray tasks, on the GPUs of a Ray cluster.

Each task asks Ray for one GPU (and, with --gpu-type, for that accelerator type) and runs its share of the op's
rows through compare.runner.run_op on the node Ray placed it on, which sees that one GPU; its result comes back to
the caller, which merges the lanes of each GPU model and writes results/<gpu>/ for every model that answered.
Placement, retries and failures are Ray's: a task whose process dies costs its own rows (reported as crashed),
never the others'. The lab's code travels with the tasks (Ray's runtime_env working_dir: this checkout, without
its results, caches and virtual environment). Ray is an optional extra: ``pip install -e ".[cluster]"``."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from . import discover, env, fanout
from .results import OpResult

# Uploaded with the tasks: the source tree only.
_EXCLUDES = [".git", ".venv", "results", "gpu-out", "**/__pycache__", "*.egg-info", ".probe", ".meas", ".whl"]


class ClusterError(RuntimeError):
    """Ray is missing, the cluster cannot be reached, or it has no GPU of the kind asked for."""


def _ray():
    try:
        import ray
    except ImportError:
        raise ClusterError("--cluster needs Ray, an optional extra: pip install -e \".[cluster]\"") from None
    return ray


def connect(address: str) -> None:
    """Join the cluster at address ('auto': the one this machine belongs to), shipping the lab's code."""
    ray = _ray()
    if ray.is_initialized():
        return
    try:
        ray.init(address=address, log_to_driver=True, include_dashboard=False,
                 runtime_env={"working_dir": str(env.ROOT), "excludes": _EXCLUDES})
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ClusterError(f"--cluster {address}: could not join the Ray cluster: {exc}. Start one with "
                           f"`ray start --head` (or give the head's address, host:port)") from None


def gpu_groups(gpu_type: str | None) -> dict[str | None, int]:
    """Per accelerator type the cluster declares (None: GPUs without a declared type), how many GPUs it has; only
    gpu_type where one is asked for."""
    ray = _ray()
    groups: dict[str | None, int] = {}
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        resources = node.get("Resources", {})
        gpus = int(resources.get("GPU", 0))
        if not gpus:
            continue
        types = [k.split(":", 1)[1] for k in resources if k.startswith("accelerator_type:")]
        kind = types[0] if types else None
        groups[kind] = groups.get(kind, 0) + gpus
    if gpu_type is not None:
        if gpu_type not in groups:
            known = ", ".join(sorted(t for t in groups if t)) or "none declared"
            raise ClusterError(f"--gpu-type {gpu_type}: the cluster has no GPU of that accelerator type (its types: "
                               f"{known})")
        groups = {gpu_type: groups[gpu_type]}
    if not groups:
        raise ClusterError("the Ray cluster has no GPU resources (start its nodes with --num-gpus, or let Ray "
                           "detect them)")
    return groups


def _portable(impls: list[discover.Impl]) -> list[discover.Impl]:
    """Sources inside this checkout as paths relative to it: on a node, the lab's code is Ray's copy of it."""
    out = []
    for impl in impls:
        source = impl.source
        if source is not None and Path(source).resolve().is_relative_to(env.ROOT.resolve()):
            source = Path(source).resolve().relative_to(env.ROOT.resolve())
        out.append(dataclasses.replace(impl, source=source))
    return out


def _lane_task(op_name: str, impls, options) -> OpResult:
    impls = [dataclasses.replace(i, source=env.ROOT / i.source) if i.source is not None and not i.source.is_absolute()
             else i for i in impls]
    return fanout.run_lane(op_name, impls, options)


def run(op_name: str, impls: list[discover.Impl], options, address: str, gpu_type: str | None = None,
        max_retries: int = 1) -> list[OpResult]:
    """The op's rows on the cluster: per accelerator type, the rows over as many tasks as it has GPUs; one merged
    result per GPU model that answered (two types that turn out to be the same model are merged)."""
    ray = _ray()
    connect(address)
    task = ray.remote(num_gpus=1, max_retries=max_retries)(_lane_task)
    baseline = fanout.baseline_rows(discover.load_op(op_name))
    launched = []
    for kind, gpus in sorted(gpu_groups(gpu_type).items(), key=lambda kv: str(kv[0])):
        for lane, share in enumerate(fanout.plan(impls, gpus, baseline=baseline)):
            options_here = fanout.lane_options(options, f"{kind or 'gpu'} {lane}")
            call = task.options(accelerator_type=kind) if kind else task
            launched.append((kind, lane, share, call.remote(op_name, _portable(share), options_here)))
    by_kind: dict[str | None, list[tuple[str, OpResult, bool]]] = {}
    for kind, lane, share, ref in launched:
        label = f"{kind or 'gpu'} {lane}"
        try:
            part, lost = ray.get(ref), False
        except Exception as exc:  # the task's process died, or Ray gave up on it
            why = f"the Ray task running these rows failed: {type(exc).__name__}: {str(exc).splitlines()[0]}"
            part, lost = fanout.lost_lane(op_name, share, why, {}), True
        by_kind.setdefault(kind, []).append((label, part, lost))
    by_model: dict[str, list[tuple[str, OpResult]]] = {}
    for kind, parts in by_kind.items():
        answered = [part.env.get("gpu") for _, part, lost in parts if not lost]
        for label, part, lost in parts:
            # A lost task's rows belong with the model its accelerator type turned out to be.
            model = part.env.get("gpu") if not lost else (answered[0] if answered else kind or "unknown GPU")
            if lost:
                part.env["gpu"] = model
            by_model.setdefault(model, []).append((label, part))
    return [fanout.merge([p for _, p in parts], impls, [label for label, _ in parts])
            for _, parts in sorted(by_model.items())]
