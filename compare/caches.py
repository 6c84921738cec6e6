"""Where Triton and torch.compile keep what they compile between runs, and what a Triton row's first call cost when
nothing was cached.

By default both keep their caches in the lab's cache folder (LAB_CACHE_DIR, default ~/.cache/kernel-lab, beside
the CUDA builds), and Triton keeps its autotuning results there too (TRITON_CACHE_AUTOTUNING: keyed on the kernel's
source, the GPU model, the Triton version and the autotuning key, so a changed kernel is tuned again). Triton's own
key names the GPU's architecture only, which an H100 and an H200 share: the lab adds the model's name
(autotuning_results_per_gpu_model), so a choice timed on one is never read on the other from a shared folder.
Inductor's choice among a kernel's configurations (its .best_config files) is keyed on the kernel's source, whose
device properties (multiprocessors, compute capability) an H100 and an H200 share too: the lab tags inductor's
cache keys with the model (inductor_results_per_gpu_model). A second run of an op then skips JIT compilation,
autotuning and inductor's compilation, and takes seconds. With --cold both start from empty folders, removed at the
end, as on a fresh machine. A cache folder the user chose (TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR) is used either
way and left alone.

The cost of a cold first call stays in the report: the first time a Triton row's first call in a dtype runs
against a cache (its kernel source, Triton version and GPU not yet recorded there), it is cold, and its time is
recorded in a file inside that Triton cache, so the record and the compiled kernels are kept and deleted together.
A later, warm run reports both: its own first call and the cold one recorded. torch.compile's compile time needs no
record: compare.capture always compiles into a fresh cache of its own."""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

COMPILE_CACHE_VARIABLES = ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR")
_RECORD = "lab-first-calls.json"
DESCRIPTION = "LAB_COMPILE_CACHES"  # the caches a run uses, in words, for its report (env.describe)


def lab_cache_root() -> Path:
    return Path(os.environ.get("LAB_CACHE_DIR") or Path.home() / ".cache" / "kernel-lab")


@contextlib.contextmanager
def compile_caches(cold: bool = False):
    """Set the compile caches for this process and the workers it starts (see the module docstring); yields a
    sentence saying which caches the run uses, for the report."""
    unset = [name for name in COMPILE_CACHE_VARIABLES if not os.environ.get(name)]
    saved_autotuning = os.environ.get("TRITON_CACHE_AUTOTUNING")
    folder = tempfile.mkdtemp(prefix="lab-compile-cache-") if cold and unset else None
    base = Path(folder) if folder else lab_cache_root()
    for name in unset:
        os.environ[name] = str(base / name.removesuffix("_CACHE_DIR").lower())
    if not cold:
        os.environ["TRITON_CACHE_AUTOTUNING"] = "1"
    saved_words = os.environ.get(DESCRIPTION)
    os.environ[DESCRIPTION] = ("empty (--cold): Triton and torch.compile compile everything, Triton autotunes "
                               "everything" if cold else
                               f"kept between runs in {base} (Triton's compiled kernels and autotuning results, "
                               f"inductor's compiled graphs); --cold starts from empty ones")
    try:
        yield os.environ[DESCRIPTION]
    finally:
        if saved_words is None:
            os.environ.pop(DESCRIPTION, None)
        else:
            os.environ[DESCRIPTION] = saved_words
        for name in unset:
            os.environ.pop(name, None)
        if saved_autotuning is None:
            os.environ.pop("TRITON_CACHE_AUTOTUNING", None)
        else:
            os.environ["TRITON_CACHE_AUTOTUNING"] = saved_autotuning
        if folder:
            shutil.rmtree(folder, ignore_errors=True)


def first_call_key(impl: str, dtype: str, source: Path, triton_version: str, gpu: str) -> str:
    digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()[:16]
    return f"{impl} | {dtype} | {digest} | triton {triton_version} | {gpu}"


def _record_path() -> Path | None:
    folder = os.environ.get("TRITON_CACHE_DIR")
    return Path(folder) / _RECORD if folder else None


def cold_first_call(key: str, measured_s: float) -> tuple[bool, float]:
    """Whether this run's first call (measured_s) was the cold one, and the cold first call's time: this one if
    the key is new to the Triton cache in use (then recorded), else the one recorded when the cache was filled."""
    path = _record_path()
    if path is None:
        return True, measured_s
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(_RECORD + ".lock"), "w") as lock:  # runs on several GPUs share the record
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            record = {}
        if key in record:
            return False, float(record[key])
        record[key] = round(measured_s, 3)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True))
        os.replace(tmp, path)
    return True, measured_s


_AUTOTUNING_SALT = "kernel-lab: autotuned on "


def autotuning_results_per_gpu_model(gpu: str) -> None:
    """From now on in this process, Triton's autotuners read and write their disk cache of autotuning results
    under keys that also name the GPU model `gpu` (torch's name for it). Triton keys them on the architecture
    (sm_90 for both an H100 and an H200), so without this a folder shared by two machines, or by two GPU models in
    one (--gpus, a Ray cluster with one home folder), would hand one model the configuration timed on the other.
    Once per process: a second call with the same model changes nothing; another model is an error."""
    from triton.runtime import autotuner

    salted = getattr(autotuner.get_cache_manager, "lab_gpu_model", None)
    if salted is not None:
        if salted != gpu:
            raise RuntimeError(f"compare/caches.py: this process keys Triton's autotuning results on {salted!r}; "
                               f"it cannot key them on {gpu!r} too (one process, one GPU model)")
        return
    original = autotuner.get_cache_manager

    def manager(key):
        return original(hashlib.sha256(f"{_AUTOTUNING_SALT}{gpu} | {key}".encode()).hexdigest())

    manager.lab_gpu_model = gpu
    autotuner.get_cache_manager = manager


_INDUCTOR_TAG = "kernel-lab: compiled on "


def inductor_results_per_gpu_model(gpu: str) -> None:
    """From now on in this process, torch.compile's cache keys (torch.compiler.config.cache_key_tag, which inductor
    puts in its compiled graphs' keys and its kernels' autotuning results', the .best_config files) also name the
    GPU model `gpu`, after any tag the user set. Those results are keyed on the generated kernel's source, and an
    H100 and an H200 generate the same (132 multiprocessors, compute capability 9.0). Once per process, as
    autotuning_results_per_gpu_model."""
    from torch.compiler import config

    tag = config.cache_key_tag
    if _INDUCTOR_TAG in tag:
        if not tag.endswith(_INDUCTOR_TAG + gpu):
            raise RuntimeError(f"compare/caches.py: this process tags torch.compile's cache keys {tag!r}; it "
                               f"cannot tag them with {gpu!r} too (one process, one GPU model)")
        return
    config.cache_key_tag = f"{tag} | {_INDUCTOR_TAG}{gpu}" if tag else _INDUCTOR_TAG + gpu
