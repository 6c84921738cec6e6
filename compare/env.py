"""Where things are and what machine this is: repository paths, the GPU (or its absence), versions, and the
environment a CUDA build needs on a machine without a GPU."""
from __future__ import annotations

import functools
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

import cuda_src
import specs
import triton_src

CUDA_DIR = Path(cuda_src.__file__).resolve().parent
TRITON_DIR = Path(triton_src.__file__).resolve().parent
SPECS_DIR = Path(specs.__file__).resolve().parent
ROOT = SPECS_DIR.parent
_IMPORTED = time.perf_counter()  # where the process's start time cannot be read: the harness's first import


def seconds_since_start() -> float:
    """Wall seconds since this process started: on Linux from its start time in /proc (the interpreter's own
    start-up and every import included), elsewhere since this module was first imported."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22, starttime: clock ticks since boot
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError, AttributeError):
        return time.perf_counter() - _IMPORTED


def relpath(path: str | os.PathLike) -> str:
    """A path as the user should see it: relative to the repository where possible."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


@functools.cache
def has_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


def use_triton_interpreter_if_no_gpu() -> bool:
    """Without a GPU, Triton kernels run on CPU tensors through Triton's interpreter. Triton reads the switch when
    a kernel is decorated, so this must run before any triton_src module is imported. Returns True if on."""
    if not has_gpu():
        os.environ["TRITON_INTERPRET"] = "1"
    return os.environ.get("TRITON_INTERPRET") == "1"


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1"


def default_arch_list() -> str:
    """What to build for when TORCH_CUDA_ARCH_LIST is unset: this GPU's architecture, with Hopper (9.0) built as its
    architecture-specific target 9.0a, since wgmma and setmaxnreg exist only there and an sm_90a binary runs on
    every 9.0 GPU. Without a GPU (CI), 9.0a too, so the Hopper-only code is compiled as well."""
    if not has_gpu():
        return "9.0a"
    import torch

    major, minor = torch.cuda.get_device_capability()
    return f"{major}.{minor}" + ("a" if (major, minor) == (9, 0) else "")


def prepare_cuda_build_env() -> None:
    """Make load_inline able to build (not run) CUDA code on a machine with the toolkit but no GPU: torch then
    cannot ask a device for its architecture, and some CUDA headers live in the nvidia wheels, not the toolkit."""
    if "CUDA_HOME" not in os.environ and Path("/usr/local/cuda/bin/nvcc").exists():
        os.environ["CUDA_HOME"] = "/usr/local/cuda"
    if "TORCH_CUDA_ARCH_LIST" not in os.environ:
        os.environ["TORCH_CUDA_ARCH_LIST"] = default_arch_list()
    for site in map(Path, sys.path):
        include = site / "nvidia" / "cu13" / "include"
        if include.is_dir():
            paths = [p for p in os.environ.get("CPATH", "").split(os.pathsep) if p]
            if str(include) not in paths:
                os.environ["CPATH"] = os.pathsep.join(paths + [str(include)])
            break


@functools.cache
def nvcc_path() -> str | None:
    home = os.environ.get("CUDA_HOME") or ("/usr/local/cuda" if Path("/usr/local/cuda").exists() else None)
    candidates = [Path(home) / "bin" / "nvcc"] if home else []
    for c in candidates:
        if c.exists():
            return str(c)
    from shutil import which

    return which("nvcc")


@functools.cache
def nvcc_version() -> str | None:
    nvcc = nvcc_path()
    if not nvcc:
        return None
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release ([\d.]+)", out)
    return m.group(1) if m else out.strip().splitlines()[-1]


@functools.cache
def gpu_name() -> str:
    import torch

    return torch.cuda.get_device_name() if has_gpu() else "no GPU"


def gpu_slug(name: str | None = None) -> str:
    """Folder name for results: one per GPU model, e.g. 'nvidia-h100-80gb-hbm3'; 'cpu' without a GPU. name: a GPU
    model's name as torch gives it (another process's, a Ray task's), instead of this process's GPU."""
    if name is None:
        if not has_gpu():
            return "cpu"
        name = gpu_name()
    if name == "no GPU":
        return "cpu"
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


@functools.cache
def git_revision() -> str:
    """The checkout's commit (+dirty). A copy of the tree without .git (a GPU machine's) can pass it in
    LAB_GIT_REVISION."""
    if os.environ.get("LAB_GIT_REVISION"):
        return os.environ["LAB_GIT_REVISION"]
    try:
        rev = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True)
        if rev.returncode != 0:
            return "unknown"
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except OSError:
        return "unknown"


def describe_host() -> str:
    return platform.node() or "unknown-host"


def describe() -> dict:
    import torch
    import triton

    info = {
        "gpu": gpu_name(),
        "host": describe_host(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda_runtime": torch.version.cuda,
        "nvcc": nvcc_version(),
        "git_revision": git_revision(),
        "triton_interpreter": interpreting(),
        "compile_caches": os.environ.get("LAB_COMPILE_CACHES", "as Triton and torch set them"),
    }
    if has_gpu():
        props = torch.cuda.get_device_properties(0)
        info["sm_count"] = props.multi_processor_count
        info["compute_capability"] = f"{props.major}.{props.minor}"
        info["memory_gib"] = round(props.total_memory / 2**30, 1)
        info["l2_bytes"] = getattr(props, "L2_cache_size", None)
        info["driver"] = driver_version()
    return info


@functools.cache  # one query per process: `compare all` describes the machine once per op
def driver_version() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return None
