"""Finding ops and their implementations. Nothing here names an op: specs/<op>.py, cuda_src/<op>.cu and
triton_src/<op>.py are found by listing folders, and the rows by reading what those files declare (the peer rows,
implementations from other projects, by reading the spec's ``peers``; the vendor library's own entry points, torch
rows beside torch:eager, from its ``vendor_rows``)."""
from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import pkgutil
import re
import sys
from pathlib import Path
from typing import Callable

import specs

from . import env, passes
from .spec import PEER, Op


class UnknownOp(LookupError):
    pass


class SpecError(Exception):
    """A spec or source file that the harness cannot use; the message names the file and what to fix."""


def spec_names() -> list[str]:
    """The ops with a spec file, specs/<op>.py."""
    return sorted(m.name for m in pkgutil.iter_modules(specs.__path__) if not m.name.startswith("_"))


def op_names() -> list[str]:
    """Every op the harness runs: each spec's, and for a spec with a backward its backward passes beside it
    (compare.passes: layernorm, layernorm-backward, layernorm-fwd-bwd)."""
    found = []
    for name in spec_names():
        try:
            found += passes.names(_load_spec(name))
        except SpecError:  # reported by load_op, when the op is asked for
            found.append(name)
    return found


def load_op(name: str) -> Op:
    base, which = passes.split_name(name)
    if base not in spec_names() or (which != passes.FORWARD and _load_spec(base).backward is None):
        raise UnknownOp(f"unknown op {name!r}; the ops are: {', '.join(op_names()) or '(none)'}. "
                        f"`python -m compare new {name}` makes a skeleton for a new one.")
    return passes.pass_op(_load_spec(base), which)


def base_name(op: str) -> str:
    """The spec an op comes from: the op itself, or the op whose backward pass it is."""
    base, which = passes.split_name(op)
    return base if which != passes.FORWARD and base in spec_names() else op


def _load_spec(name: str) -> Op:
    module = importlib.import_module(f"specs.{name}")
    op = getattr(module, "OP", None)
    if not isinstance(op, Op):
        raise SpecError(f"{env.relpath(module.__file__)}: defines no `OP = compare.spec.Op(...)`")
    if op.name != name:
        raise SpecError(f"{env.relpath(module.__file__)}: OP.name is {op.name!r} but the file is named {name!r}; "
                        f"make them match")
    return op


@dataclasses.dataclass(frozen=True)
class Impl:
    """One row: an implementation of an op, e.g. ``cuda:vec``. A plain description (picklable, so the parent can
    hand it to a worker process): the parent reads source files as text and never runs a row's code; ``load()``,
    called in the worker, imports or builds it and gives the callable impl(*inputs)."""

    op: str
    backend: str  # "cuda", "triton", "peer" (compare.spec.Peer) or "torch"
    variant: str
    source: Path | None  # the .cu or .py the row is written in (None for peer and torch rows)
    needs_gpu: bool = True
    # CUDA rows: the TORCH_LIBRARY namespace their schemas are registered in (lab_<op> for the op's own .cu)
    library: str = ""

    @property
    def name(self) -> str:
        return f"{self.backend}:{self.variant}"

    def load(self) -> Callable:
        if self.backend == "cuda":
            return cuda_op(self.op, self.variant, self.source, self.library or f"lab_{base_name(self.op)}")
        if self.backend == "triton":
            op = load_op(self.op) if self.op in op_names() else None
            forward = triton_function(self.source, self.variant)
            if op is None or op.pass_of is None:
                return forward
            return passes.row(op, forward, triton_function(self.source, self.variant, backward=True))
        op = load_op(self.op)
        if self.backend == PEER:  # imports the other project's package: here, in the worker, only
            return passes.row(op, op.peers[self.variant].load(), None)
        if self.variant == "eager":
            return passes.row(op, op.torch_eager, None)
        if self.variant in op.vendor_rows:  # the vendor library's own entry point (Op.vendor_rows)
            return passes.row(op, op.vendor_rows[self.variant], None)
        return passes.row(op, compiled(op, _compile_mode(self.variant)), None)


def cuda_source(op: str) -> Path:
    return env.CUDA_DIR / f"{base_name(op)}.cu"


def triton_source(op: str) -> Path:
    return env.TRITON_DIR / f"{base_name(op)}.py"


_DEF = re.compile(r'\bm\.def\(\s*"(\w+)\s*\(')
_LIBRARY = re.compile(r"\bTORCH_LIBRARY\(\s*(\w+)\s*,")


def cuda_variants(op: str) -> list[str]:
    """The rows of cuda_src/<op>.cu: its schemas in file order, less the backwards (<name>_backward) of an op with
    a gradient, each of which must be there (compare.spec)."""
    path = cuda_source(op)
    if not path.exists():
        return []
    text = path.read_text()
    base = base_name(op)
    for m in _LIBRARY.finditer(text):
        if m.group(1) != f"lab_{base}":
            line = text.count("\n", 0, m.start()) + 1
            raise SpecError(f"{env.relpath(path)}:{line}: TORCH_LIBRARY namespace is {m.group(1)!r}; "
                            f"it must be 'lab_{base}' so the harness can find the ops")
    schemas = _DEF.findall(text)
    if base not in spec_names() or _load_spec(base).backward is None:
        return schemas
    rows = [s for s in schemas if not (s.endswith("_backward") and s.removesuffix("_backward") in schemas)]
    missing = [r for r in rows if f"{r}_backward" not in schemas]
    if missing:
        raise SpecError(f"{env.relpath(path)}: specs/{base}.py declares a backward, but no schema "
                        f"{', '.join(m + '_backward' for m in missing)} is registered for "
                        f"{', '.join(missing)}: each row needs m.def(\"<name>_backward(...)\")")
    return rows


def cuda_op(op: str, variant: str, source: Path | None = None, library: str | None = None) -> Callable:
    """Build (or load from the build cache) the .cu and return its registered op. Runs in a worker only."""
    import torch

    from . import build

    source = Path(source) if source else cuda_source(op)
    library = library or f"lab_{base_name(op)}"
    spec_op = load_op(op) if op in op_names() else None
    build.build(library.removeprefix("lab_"), spec_op.cuda_flags if spec_op else (), progress=False, path=source)
    fn = getattr(getattr(torch.ops, library), variant)
    if spec_op is not None and spec_op.pass_of is not None:  # a forward and backward pair (compare.passes)
        return passes.row(spec_op, fn, getattr(getattr(torch.ops, library), f"{variant}_backward"))
    if spec_op is not None and library == f"lab_{op}":
        _register_fake(op, variant)
    return fn


_FAKES: set[str] = set()


def _register_fake(op: str, variant: str) -> None:
    """Shape/dtype propagation for torch.compile and torch.library.opcheck: a lab op's output has the metadata of the
    op's torch_eager output, so that function, run on fake tensors, is the fake implementation (or the spec's own
    Op.fake, where an output's size depends on an input's value)."""
    import torch

    qualname = f"lab_{op}::{variant}"
    if qualname in _FAKES:
        return
    spec = load_op(op)
    fake = spec.fake or spec.torch_eager
    try:
        torch.library.register_fake(qualname, lambda *args: fake(*args))
    except RuntimeError as exc:  # registered already by an earlier import in this process
        if "already" not in str(exc):
            raise
    _FAKES.add(qualname)


def triton_module(op: str):
    return importlib.import_module(f"triton_src.{op}")


def triton_function(source: Path, variant: str, backward: bool = False) -> Callable:
    """The function marked @variant(variant) (with backward, @backward(variant)) in a Triton source file, imported
    (in a worker only). Files of the repository's triton_src/ import as triton_src.<op>; any other file (a planted
    one in the tests) by its path."""
    source = Path(source).resolve()
    if source.parent == env.TRITON_DIR.resolve():
        module = importlib.import_module(f"triton_src.{source.stem}")
    else:
        name = f"lab_source_{source.stem}"
        module = sys.modules.get(name)
        if module is None or getattr(module, "__file__", None) != str(source):
            if str(source.parent) not in sys.path:  # a file outside triton_src/ may import its neighbours
                sys.path.append(str(source.parent))
            spec = importlib.util.spec_from_file_location(name, source)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # Triton's JIT looks kernels' globals up through their module
            spec.loader.exec_module(module)
    mark = "lab_backward" if backward else "lab_variant"
    for fn in vars(module).values():
        if callable(fn) and getattr(fn, mark, None) == variant:
            return fn
    raise SpecError(f"{env.relpath(source)}: no function marked @{'backward' if backward else 'variant'}({variant!r})")


def python_variants(source: Path, decorator: str = "variant") -> list[str]:
    """The names given to @variant(...) (or @backward(...)) in a Triton source file, in file order, read from its
    syntax tree: finding the rows never runs their code (the parent process, which judges them, must not)."""
    tree = ast.parse(Path(source).read_text(), filename=str(source))
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            if isinstance(dec, ast.Call) and ast.unparse(dec.func).split(".")[-1] == decorator:
                if not (len(dec.args) == 1 and isinstance(dec.args[0], ast.Constant)
                        and isinstance(dec.args[0].value, str)):
                    raise SpecError(f"{env.relpath(source)}:{dec.lineno}: @{decorator} takes one string literal, "
                                    f"the row's name, e.g. @{decorator}(\"tuned\")")
                found.append(dec.args[0].value)
    return found


def triton_variants(op: str) -> list[str]:
    path = triton_source(op)
    if not path.exists():
        return []
    rows = python_variants(path)
    base = base_name(op)
    if base in spec_names() and _load_spec(base).backward is not None:
        missing = [r for r in rows if r not in python_variants(path, "backward")]
        if missing:
            raise SpecError(f"{env.relpath(path)}: specs/{base}.py declares a backward, but no function is marked "
                            f"{', '.join(f'@backward({m!r})' for m in missing)}: each row needs its backward")
    return rows


def _compile_mode(variant: str) -> str:
    return variant.removeprefix("compile").removeprefix("-") or "default"


def implementations(op: Op) -> list[Impl]:
    impls: list[Impl] = []
    for variant in cuda_variants(op.name):
        impls.append(Impl(op.name, "cuda", variant, cuda_source(op.name), library=f"lab_{base_name(op.name)}"))
    for variant in triton_variants(op.name):
        impls.append(Impl(op.name, "triton", variant, triton_source(op.name), needs_gpu=False))
    for name, peer in op.peers.items():
        impls.append(Impl(op.name, PEER, name, None, needs_gpu=peer.needs_gpu))
    impls.append(Impl(op.name, "torch", "eager", None, needs_gpu=False))
    for name in op.vendor_rows:
        impls.append(Impl(op.name, "torch", name, None, needs_gpu=True))
    for mode in op.compile_modes:
        impls.append(Impl(op.name, "torch", "compile" if mode == "default" else f"compile-{mode}", None))
    misnamed = [name for name in op.peers if not re.fullmatch(r"[\w.-]+", name)]
    if misnamed:
        raise SpecError(f"specs/{base_name(op.name)}.py: peers {misnamed}: a peer's name is the row's name after "
                        f"'peer:' (letters, digits, '_', '.', '-'), e.g. peers={{\"liger\": Peer(...)}}")
    # The harness tells torch:eager and the torch:compile rows apart by their names: a vendor row takes neither.
    misnamed = [name for name in op.vendor_rows
                if not re.fullmatch(r"[\w.-]+", name) or name == "eager" or name.startswith("compile")]
    if misnamed:
        raise SpecError(f"specs/{base_name(op.name)}.py: vendor_rows {misnamed}: a vendor row's name is the row's "
                        f"name after 'torch:' (letters, digits, '_', '.', '-'), neither 'eager' nor starting with "
                        f"'compile' (the rows made from torch_eager), e.g. vendor_rows={{\"sdpa-flash\": fn}}")
    names = [i.name for i in impls]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SpecError(f"op {op.name!r}: two implementations share the name(s) {duplicates}")
    # Each kernel file's version map (compare/ladder.py) lists its rows in ladder order, no more and no fewer: the
    # report's ladder table is read from it.
    from . import ladder

    problems = []
    for backend, source in (("cuda", cuda_source(op.name)), ("triton", triton_source(op.name))):
        rows = [i.variant for i in impls if i.backend == backend]
        if rows:
            problems += ladder.map_problems(source, backend, rows)
    if problems:
        raise SpecError("\n".join(problems))
    # Spec fields keyed by row name: a misspelled name would silently declare nothing (a ceiling row, no ceiling).
    for field in ("unsupported_dtypes", "unsupported_shapes", "requires_capability", "ceiling_rows"):
        unknown = sorted(set(getattr(op, field)) - set(names))
        if unknown:
            raise SpecError(f"specs/{base_name(op.name)}.py: {field} names {', '.join(unknown)}, which "
                            f"{'is not a row' if len(unknown) == 1 else 'are not rows'} of {op.name}; its rows are "
                            f"{', '.join(names)}")
    if op.roofline == "compute" and not op.ceiling_rows:
        raise SpecError(f"specs/{base_name(op.name)}.py: ceiling_rows is empty: a compute-bound op's fractions are "
                        f"of its ceiling rows' fastest timing (the default is torch:eager)")
    return impls


def compiled(op: Op, mode: str) -> Callable:
    import torch

    # One specialized kernel per shape, as a hand-written kernel would be tuned per call; no dynamic-shape code.
    if not op.compile_divides_exactly:
        fn = torch.compile(op.torch_eager, mode=None if mode == "default" else mode, dynamic=False)
        if _mode_uses_cuda_graphs(mode):
            # Replayed CUDA graphs write every call's output into the same memory: an output is valid until the next
            # call, and torch raises on reading it after. The worker copies what it keeps (compare.worker).
            fn.lab_outputs_until_next_call = True
        return fn
    if mode != "default":
        raise SpecError(f"specs/{op.name}.py: compile_divides_exactly takes inductor options, which torch.compile "
                        f"does not take beside a mode; compile_modes must be ('default',), not naming {mode!r}")
    return torch.compile(op.torch_eager, options=_exact_division_option(), dynamic=False)


def _mode_uses_cuda_graphs(mode: str) -> bool:
    """Whether torch.compile's mode replays CUDA graphs (max-autotune and reduce-overhead do)."""
    if mode == "default":
        return False
    from torch import _inductor

    return bool(_inductor.list_mode_options(mode).get("triton.cudagraphs", False))


def _exact_division_option() -> dict:
    """Inductor's option for correctly rounded float32 division (tl.div_rn for `/`), under its name in the torch
    installed: eager_numerics.division_rounding, or emulate_divison_rounding (sic) in releases before it."""
    from torch._inductor import config

    if hasattr(getattr(config, "eager_numerics", None), "division_rounding"):
        return {"eager_numerics.division_rounding": True}
    if hasattr(config, "emulate_divison_rounding"):
        return {"emulate_divison_rounding": True}
    import torch

    raise SpecError(f"torch {torch.__version__}: inductor has no option for correctly rounded division "
                    f"(eager_numerics.division_rounding), which this op's torch:compile rows need "
                    f"(Op.compile_divides_exactly)")


def select(impls: list[Impl], patterns: list[str] | None, missing_ok: bool = False) -> list[Impl]:
    """Keep the rows matching any of the patterns: 'cuda' (a backend), 'cuda:vec' (a row), or fnmatch globs.

    Every pattern must match a row: one that matches nothing is a typo or a row this op lacks, and running the
    other patterns' rows without a word would hide that. missing_ok=True lets a pattern match nothing here, for a
    caller that checks the patterns across several ops (`compare all --impls cuda:wgmma`)."""
    if not patterns:
        return impls
    import fnmatch

    def matches(impl: Impl, pattern: str) -> bool:
        return pattern == impl.backend or fnmatch.fnmatch(impl.name, pattern)

    unmatched = [p for p in patterns if not any(matches(i, p) for i in impls)]
    if unmatched and not missing_ok:
        op = impls[0].op if impls else "this op"
        raise UnknownOp(f"no implementation matches {', '.join(map(repr, unmatched))} (--impls); {op}'s rows are "
                        f"{', '.join(i.name for i in impls)}: fix or drop "
                        + ("that pattern" if len(unmatched) == 1 else "those patterns"))
    return [i for i in impls if any(matches(i, p) for p in patterns)]
