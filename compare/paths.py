"""Where an op's results are written when no --out is given. The report (compare.report) writes to the folder it is
handed; the command line (compare.cli) picks it here."""
from __future__ import annotations

import json
import re
from pathlib import Path

from . import env


# The options that narrow a run to some rows, dtypes or sizes: such a run goes to partial/ (and a --quick one to
# quick/), never over the op's full results; compare.summary leaves runs with any of them out wherever they went.
FILTER_OPTIONS = ("--impls", "--dtypes", "--sizes")


def default_out_dir(quick: bool, op: str, filtered_by: list[str] | tuple[str, ...] = (), gpu: str | None = None
                    ) -> Path:
    """results/<gpu>/; see default_out_dir_and_reason."""
    return default_out_dir_and_reason(quick, op, filtered_by, gpu)[0]


def default_out_dir_and_reason(quick: bool, op: str, filtered_by: list[str] | tuple[str, ...] = (),
                               gpu: str | None = None) -> tuple[Path, str]:
    """Where an op's results go when no --out is given, and why there, in words for the terminal ("" for the full
    results' own folder, results/<gpu>/).

    Only a full run writes results/<gpu>/<op>.*: a --quick run goes to …/quick/, and a run filtered by the options
    named in filtered_by (--impls, --dtypes, --sizes) to …/partial/, so that neither replaces the full results with
    a few rows, dtypes or sizes. Results never overwrite those of another GPU model, nor those of another host with
    the same GPU: if <op>.json in the chosen folder came from a different host, this host's go to <folder>/<host>/.
    gpu: the GPU model that ran the rows, where that is not this process's (--gpus, --cluster)."""
    full = env.ROOT / "results" / env.gpu_slug(gpu)
    if quick:
        base, why = full / "quick", f"--quick times two sizes; the full results stay in {env.relpath(full)}/"
    elif filtered_by:
        base, why = full / "partial", (f"filtered by {', '.join(filtered_by)}; the full results stay in "
                                       f"{env.relpath(full)}/")
    else:
        base, why = full, ""
    existing = base / f"{op}.json"
    if existing.exists():
        try:
            host = json.loads(existing.read_text()).get("env", {}).get("host")
        except (OSError, ValueError):
            host = None
        if host and host != env.describe_host():
            other_host = f"{env.relpath(existing)} came from host {host}, so this host's results go beside it"
            return base / host_folder(env.describe_host()), "; ".join(filter(None, (why, other_host)))
    return base, why


def host_folder(host: str) -> str:
    """The folder under results/<gpu>/ that holds a host's results beside another host's with the same GPU."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", host)
