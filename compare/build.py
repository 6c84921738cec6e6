"""Building cuda_src/<op>.cu through torch's load_inline, with a cache that never serves a stale module.

The .cu is compiled twice from one file: by nvcc as the device half (``__CUDACC__`` defined: kernels and their
launchers, CUDA headers only) and by the C++ compiler as the host half (the torch binding). Neither sees torch's
implicit headers, which is most of what a typical extension build spends its time on.

Cache key: the source text, every header of the lab it includes (directly or through another header: lab.h,
lab_device.cuh, lab_torch.h, any other found beside it or in cuda_src/), every flag, the target architectures and
the torch/CUDA/Python versions. Any change gives a new module name, so a stale build is never loaded. The ptxas
resource report and the cold build time are stored beside the built module, so a warm run still reports them.

Processes building the same module at once (one per GPU with --gpus, Ray tasks sharing a host, two runs) take turns
through a lock file beside its folder: the first builds, the others wait and load what it built, since two compilers
writing one folder break each other's build.
"""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from . import caches, callgraph, env

SHARED_HEADERS = ("lab.h", "lab_device.cuh", "lab_torch.h")  # what cuda_src/ gives every op to include
NVCC_FLAGS = ["-O3", "-lineinfo", "-Xptxas=-v", "--expt-relaxed-constexpr"]
CXX_FLAGS = ["-O2"]
SIDECAR = "lab_build.json"


class BuildError(Exception):
    """A compiler error; the message points at the user's file and line."""


@dataclasses.dataclass
class KernelResources:
    kernel: str  # demangled, e.g. "void gelu_vec_kernel<float>(float const*, float*, long)"
    base: str  # the function's own name, e.g. "gelu_vec_kernel"
    registers: int
    spill_bytes: int  # spill stores + spill loads
    shared_bytes: int
    stack_bytes: int


@dataclasses.dataclass
class BuildResult:
    op: str
    source: str
    module: str
    cold_s: float | None  # wall time of the build that produced the cached module
    warm_s: float | None  # wall time to load it from the cache in this run
    built_now: bool  # True if this run compiled it (a cold build)
    kernels: list[KernelResources]
    log: str = ""


def cache_root() -> Path:
    return caches.lab_cache_root() / "torch_extensions"


def _arch_list() -> str:
    return os.environ.get("TORCH_CUDA_ARCH_LIST") or env.default_arch_list()


def build_key(op: str, extra_flags: list[str], path: Path | None = None) -> str:
    import torch

    path = path or env.CUDA_DIR / f"{op}.cu"
    h = hashlib.sha256(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    for header in callgraph.included_headers(path):  # an edited header rebuilds every .cu that includes it
        h.update(str(header).encode() + b"\0" + header.read_bytes() + b"\0")
    for part in (NVCC_FLAGS, CXX_FLAGS, extra_flags):
        h.update(json.dumps(part).encode())
    h.update(f"{torch.__version__}|{torch.version.cuda}|{env.nvcc_version()}|{_arch_list()}|{sys.version}".encode())
    return h.hexdigest()[:16]


@contextlib.contextmanager
def _capture_output(log_path: Path):
    """Send this process's stdout/stderr (file descriptors, so compiler subprocesses too) to a file; yields a
    function that writes to the real stderr for progress lines."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved_out, saved_err = os.dup(1), os.dup(2)
    with open(log_path, "wb") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            yield lambda text: os.write(saved_err, text.encode())
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved_out, 1)
            os.dup2(saved_err, 2)
            os.close(saved_out)
            os.close(saved_err)


@contextlib.contextmanager
def _progress(write, label: str, enabled: bool):
    """A ticking 'building …' line while the compiler runs, so a cold build never looks like a hang."""
    if not enabled:
        yield
        return
    done = threading.Event()
    start = time.perf_counter()
    tty = os.isatty(2)

    def tick():
        write(f"  building {label} ...\n" if not tty else "")
        while not done.wait(0.5 if tty else 10):
            elapsed = time.perf_counter() - start
            write(f"\r  building {label} ... {elapsed:4.0f} s" if tty else f"  still building {label} ({elapsed:.0f} s)\n")

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if tty:
            write("\r" + " " * 60 + "\r")


_ERROR_LINE = re.compile(r"^(?P<file>[^\s:()]+?)(?:\((?P<nvline>\d+)\)|:(?P<line>\d+)(?::\d+)?):\s*(?P<kind>error|fatal error|warning)\b(?P<msg>.*)$",
                         re.MULTILINE)


def compiler_diagnostics(log: str) -> list[str]:
    """Compiler error lines, rewritten as 'cuda_src/<op>.cu:LINE: error: ...' (the #line directive we prepend
    makes both nvcc and the host compiler report positions in the user's file)."""
    found = []
    for m in _ERROR_LINE.finditer(log):
        if "error" not in m.group("kind"):
            continue
        line = m.group("nvline") or m.group("line")
        entry = f"{env.relpath(m.group('file'))}:{line}: {m.group('kind')}{m.group('msg')}"
        if entry not in found:
            found.append(entry)
    return found


_ENTRY = re.compile(r"Compiling entry function '(\w+)'")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")


def _demangle(names: list[str]) -> dict[str, str]:
    tool = shutil.which("c++filt") or shutil.which("cu++filt")
    if not tool or not names:
        return {n: n for n in names}
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}


def _base_name(mangled: str) -> str:
    """A kernel's own name from its mangled symbol: '_Z15gelu_vec_kernelIfEvPKT_PS0_l' -> 'gelu_vec_kernel'; names
    nested in namespaces ('_ZN3lab12_GLOBAL__N_16kernelEv', anonymous ones too) give their last component."""
    if not mangled.startswith("_Z"):
        return mangled  # extern "C"
    pos = 2
    nested = mangled[pos:pos + 1] == "N"
    pos += nested
    name = mangled
    while True:
        m = re.match(r"\d+", mangled[pos:])
        if not m:
            return name
        length = int(m.group(0))
        start = pos + len(m.group(0))
        name = mangled[start:start + length]
        pos = start + length
        if not nested:
            return name


def parse_ptxas(log: str) -> list[KernelResources]:
    kernels: list[KernelResources] = []
    current = None
    stack = spills = 0
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current, stack, spills = m.group(1), 0, 0
        elif current and (m := _STACK.search(line)):
            stack, spills = int(m.group(1)), int(m.group(2)) + int(m.group(3))
        elif current and (m := _USED.search(line)):
            kernels.append(KernelResources(current, _base_name(current), int(m.group(1)), spills,
                                           int(m.group(2) or 0), stack))
            current = None
    pretty = _demangle([k.kernel for k in kernels])
    for k in kernels:
        k.kernel = pretty.get(k.kernel, k.kernel)
    return kernels


def _load(path: Path, name: str, build_dir: Path, extra_flags: list[str], verbose: bool):
    from torch.utils.cpp_extension import load_inline

    # Positions in compiler messages then refer to the user's file, not to load_inline's copy of it.
    source = f'#line 1 "{path}"\n' + path.read_text()
    return load_inline(
        name=name,
        cpp_sources=[source],
        cuda_sources=[source],
        extra_cflags=CXX_FLAGS,
        extra_cuda_cflags=NVCC_FLAGS + extra_flags,
        extra_include_paths=[str(env.CUDA_DIR)],
        build_directory=str(build_dir),
        verbose=verbose,
        with_cuda=True,
        is_python_module=False,
        no_implicit_headers=True,
    )


def build(op: str, extra_flags: list[str] | tuple[str, ...] = (), progress: bool = True,
          path: Path | None = None) -> BuildResult:
    """Build (or load from the cache) cuda_src/<op>.cu (or the .cu at `path`) and register its ops as
    torch.ops.lab_<op>.*"""
    env.prepare_cuda_build_env()
    if not env.nvcc_path():
        raise BuildError("no CUDA compiler (nvcc) found: install the CUDA toolkit or set CUDA_HOME")
    extra_flags = list(extra_flags)
    path = Path(path) if path else env.CUDA_DIR / f"{op}.cu"
    name = f"lab_{op}_{build_key(op, extra_flags, path)}"
    build_dir = cache_root() / name
    sidecar = build_dir / SIDECAR
    source = env.relpath(path)
    built_now = False
    log = ""
    cache_root().mkdir(parents=True, exist_ok=True)
    with _exclusive(cache_root() / f"{name}.lock"):
        if not sidecar.exists():
            log = _cold_build(path, name, build_dir, extra_flags, source, progress)
            built_now = True
        record = json.loads(sidecar.read_text())
        # Warm: the module is on disk; load_inline re-checks the sources, finds nothing to do and loads it.
        start = time.perf_counter()
        with _capture_output(build_dir / "load.log"):
            _load(path, name, build_dir, extra_flags, verbose=False)
        warm_s = time.perf_counter() - start
    return BuildResult(op, source, name, record["cold_s"], warm_s, built_now,
                       [KernelResources(**k) for k in record["kernels"]], log)


@contextlib.contextmanager
def _exclusive(lock_path: Path):
    """Hold an exclusive lock on lock_path (flock: released by the kernel if the holder dies) for the block."""
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _cold_build(path: Path, name: str, build_dir: Path, extra_flags: list[str], source: str, progress: bool) -> str:
    """Compile into a fresh folder (a half-finished earlier build must not count as cached); the sidecar, written
    last, marks the build complete. Returns the build log."""
    shutil.rmtree(build_dir, ignore_errors=True)
    build_dir.mkdir(parents=True)
    log_path = build_dir / "build.log"
    start = time.perf_counter()
    try:
        with _capture_output(log_path) as write, _progress(write, source, progress):
            _load(path, name, build_dir, extra_flags, verbose=True)
    except Exception as exc:  # load_inline raises RuntimeError/subprocess errors with the log inside
        log = log_path.read_text(errors="replace") + "\n" + str(exc)
        shutil.rmtree(build_dir, ignore_errors=True)
        diagnostics = compiler_diagnostics(log)
        detail = "\n".join(diagnostics) if diagnostics else log[-4000:]
        raise BuildError(f"building {source} failed:\n{detail}") from None
    cold_s = time.perf_counter() - start
    log = log_path.read_text(errors="replace")
    kernels = parse_ptxas(log)
    sidecar = build_dir / SIDECAR
    tmp = sidecar.with_suffix(".tmp")
    tmp.write_text(json.dumps({"cold_s": cold_s, "kernels": [dataclasses.asdict(k) for k in kernels]}))
    os.replace(tmp, sidecar)
    return log
