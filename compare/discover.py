"""Finding ops and their implementations. Nothing here names an op: specs/<op>.py, cuda_src/<op>.cu and
triton_src/<op>.py are found by listing folders, and the rows by reading what those files declare."""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from pathlib import Path
from typing import Callable

import specs

from . import env
from .spec import Op


class UnknownOp(LookupError):
    pass


class SpecError(Exception):
    """A spec or source file that the harness cannot use; the message names the file and what to fix."""


def op_names() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(specs.__path__) if not m.name.startswith("_"))


def load_op(name: str) -> Op:
    if name not in op_names():
        raise UnknownOp(f"unknown op {name!r}; the ops are: {', '.join(op_names()) or '(none)'}. "
                        f"`python -m compare new {name}` makes a skeleton for a new one.")
    module = importlib.import_module(f"specs.{name}")
    op = getattr(module, "OP", None)
    if not isinstance(op, Op):
        raise SpecError(f"{env.relpath(module.__file__)}: defines no `OP = compare.spec.Op(...)`")
    if op.name != name:
        raise SpecError(f"{env.relpath(module.__file__)}: OP.name is {op.name!r} but the file is named {name!r}; "
                        f"make them match")
    return op


@dataclasses.dataclass
class Impl:
    """One row: an implementation of an op, e.g. ``cuda:vec``. ``load()`` gives the callable impl(*inputs)."""

    op: str
    backend: str  # "cuda", "triton" or "torch"
    variant: str
    source: Path | None
    loader: Callable[[], Callable] = dataclasses.field(repr=False)
    needs_gpu: bool = True

    @property
    def name(self) -> str:
        return f"{self.backend}:{self.variant}"

    def load(self) -> Callable:
        return self.loader()


def cuda_source(op: str) -> Path:
    return env.CUDA_DIR / f"{op}.cu"


def triton_source(op: str) -> Path:
    return env.TRITON_DIR / f"{op}.py"


_DEF = re.compile(r'\bm\.def\(\s*"(\w+)\s*\(')
_LIBRARY = re.compile(r"\bTORCH_LIBRARY\(\s*(\w+)\s*,")


def cuda_variants(op: str) -> list[str]:
    """The schemas registered in cuda_src/<op>.cu, in file order."""
    path = cuda_source(op)
    if not path.exists():
        return []
    text = path.read_text()
    for m in _LIBRARY.finditer(text):
        if m.group(1) != f"lab_{op}":
            line = text.count("\n", 0, m.start()) + 1
            raise SpecError(f"{env.relpath(path)}:{line}: TORCH_LIBRARY namespace is {m.group(1)!r}; "
                            f"it must be 'lab_{op}' so the harness can find the ops")
    return _DEF.findall(text)


def cuda_op(op: str, variant: str) -> Callable:
    import torch

    fn = getattr(getattr(torch.ops, f"lab_{op}"), variant)
    _register_fake(op, variant)
    return fn


_FAKES: set[str] = set()


def _register_fake(op: str, variant: str) -> None:
    """Shape/dtype propagation for torch.compile and torch.library.opcheck: a lab op's output has the metadata of the
    op's torch_eager output, so that function, run on fake tensors, is the fake implementation."""
    import torch

    qualname = f"lab_{op}::{variant}"
    if qualname in _FAKES:
        return
    eager = load_op(op).torch_eager
    try:
        torch.library.register_fake(qualname, lambda *args: eager(*args))
    except RuntimeError as exc:  # registered already by an earlier import in this process
        if "already" not in str(exc):
            raise
    _FAKES.add(qualname)


def triton_module(op: str):
    return importlib.import_module(f"triton_src.{op}")


def triton_variants(op: str) -> list[tuple[str, Callable]]:
    if not triton_source(op).exists():
        return []
    module = triton_module(op)
    found = [(fn.lab_variant, fn) for fn in vars(module).values()
             if callable(fn) and hasattr(fn, "lab_variant") and getattr(fn, "__module__", None) == module.__name__]
    return sorted(found, key=lambda item: item[1].__code__.co_firstlineno)


def implementations(op: Op) -> list[Impl]:
    impls: list[Impl] = []
    for variant in cuda_variants(op.name):
        impls.append(Impl(op.name, "cuda", variant, cuda_source(op.name),
                          loader=lambda v=variant: cuda_op(op.name, v)))
    for variant, fn in triton_variants(op.name):
        impls.append(Impl(op.name, "triton", variant, triton_source(op.name), loader=lambda f=fn: f,
                          needs_gpu=False))
    impls.append(Impl(op.name, "torch", "eager", None, loader=lambda: op.torch_eager, needs_gpu=False))
    for mode in op.compile_modes:
        variant = "compile" if mode == "default" else f"compile-{mode}"
        impls.append(Impl(op.name, "torch", variant, None, loader=lambda m=mode: compiled(op, m)))
    names = [i.name for i in impls]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SpecError(f"op {op.name!r}: two implementations share the name(s) {duplicates}")
    return impls


def compiled(op: Op, mode: str) -> Callable:
    import torch

    # One specialized kernel per shape, as a hand-written kernel would be tuned per call; no dynamic-shape code.
    return torch.compile(op.torch_eager, mode=None if mode == "default" else mode, dynamic=False)


def select(impls: list[Impl], patterns: list[str] | None) -> list[Impl]:
    """Keep the rows matching any of the patterns: 'cuda' (a backend), 'cuda:vec' (a row), or fnmatch globs."""
    if not patterns:
        return impls
    import fnmatch

    chosen = [i for i in impls if any(p == i.backend or fnmatch.fnmatch(i.name, p) for p in patterns)]
    if not chosen:
        raise UnknownOp(f"no implementation matches {', '.join(patterns)}; "
                        f"this op has: {', '.join(i.name for i in impls)}")
    return chosen
