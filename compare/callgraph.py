"""Which code an implementation reaches: from its entry point, the top-level definitions (functions, kernels, types,
constants, macros) it can get to by name, in its own source file and in the lab's files that file draws on.

A CUDA row's entry is the function its `m.impl("<variant>", ...)` line registers. Its code is its .cu and every
header of the lab that the .cu includes, directly or through another header (`#include "name"` found beside the
including file or in cuda_src/, the build's include path; `#include <name>` found in cuda_src/): one namespace for
all of them, as in the compiler's translation unit.

A Triton row's entry is the function marked `@variant("<variant>")`. Its code is its file and the neighbouring
modules it imports names from (`from gelu_math import gelu_fp32`, gelu_math.py lying beside it); each name is
looked up in the module that uses it.

A reference is an identifier that spells a definition's name: there are no scopes and no overload resolution, so a
name defined twice (overloads, a prototype and its body) reaches every definition of it. Whatever is reached from a
kernel is kernel code.

compare.count counts the lines of what this finds; accounting, runner, sanitize and worker use the kernels it finds.
"""
from __future__ import annotations

import ast
import dataclasses
import re
from collections import defaultdict
from pathlib import Path
from typing import Callable, Hashable, Iterable, TypeVar

K = TypeVar("K", bound=Hashable)


@dataclasses.dataclass
class Entity:
    name: str
    spans: list[tuple[int, int]]  # 1-based inclusive line ranges (a prototype and its definition are two spans)
    refs: set[str]
    is_kernel: bool
    file: Path | None = None  # set where the definitions of several files are walked together


def reach(entities: dict[K, Entity], roots: Iterable[K],
          resolve: Callable[[K, str], Iterable[K]] | None = None) -> tuple[set[K], set[K]]:
    """Keys of the entities reachable from the roots, split into (kernel, host). A reference `ref` of the entity at
    `key` leads to the entities at resolve(key, ref); without `resolve`, entities are keyed by name and a reference
    leads to the entity of that name. Anything reached from a kernel is kernel code."""
    resolve = resolve or (lambda _key, ref: (ref,))
    kernel_keys: set[K] = set()
    host_keys: set[K] = set()
    stack = [(r, False) for r in roots]
    while stack:
        key, from_kernel = stack.pop()
        entity = entities.get(key)
        if entity is None:
            continue
        as_kernel = entity.is_kernel or from_kernel
        seen = kernel_keys if as_kernel else host_keys
        if key in seen:
            continue
        seen.add(key)
        stack.extend((target, as_kernel) for ref in entity.refs for target in resolve(key, ref) if target != key)
    return kernel_keys, host_keys - kernel_keys


@dataclasses.dataclass
class Reached:
    """The definitions a row reaches, each with its file set, split into kernel and host code."""

    source: Path  # the row's own file
    kernel: list[Entity]
    host: list[Entity]

    def helpers(self) -> list[str]:
        """'<file name>:<name>' of every definition reached outside the row's own file."""
        return sorted({f"{e.file.name}:{e.name}" for e in self.kernel + self.host if e.file != self.source})


def _reached(source: Path, entities: dict[tuple[Path, str], Entity], roots: Iterable[tuple[Path, str]],
             resolve: Callable[[tuple[Path, str], str], Iterable[tuple[Path, str]]]) -> Reached:
    kernel, host = reach(entities, roots, resolve)
    return Reached(source, [entities[k] for k in sorted(kernel)], [entities[k] for k in sorted(host)])


# ---- Python ----------------------------------------------------------------------------------------------------
def _is_triton_kernel(node: ast.FunctionDef) -> bool:
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = ast.unparse(target)
        if name.split(".")[-1] in ("jit", "autotune", "heuristics"):
            return True
    return False


def _python_refs(node: ast.AST) -> set[str]:
    """The names a statement uses, and `module.attr` for attributes of a plain name (a module imported whole); of a
    function, only the names it does not bind itself (_local_names)."""
    refs = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            refs.add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            refs.add(f"{n.value.id}.{n.attr}")
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        refs -= _local_names(node)
    return refs


def _local_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a function binds (its parameters, what it assigns, the functions it defines), which Python looks up
    in the function and not in the module: a kernel's local variable named like one of the module's host functions
    does not make that function kernel code. Names declared global or nonlocal are the module's."""
    bound, shared = set(), set()
    for n in ast.walk(function):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            shared.update(n.names)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            bound.add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not function:
            bound.add(n.name)
    return bound - shared


def python_entities(tree: ast.Module) -> dict[str, Entity]:
    """Top-level functions, classes and assignments of a module, by name."""
    entities: dict[str, Entity] = {}
    for node in tree.body:
        refs = _python_refs(node)
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            kernel = isinstance(node, ast.FunctionDef) and _is_triton_kernel(node)
            entities[node.name] = Entity(node.name, [(first, node.end_lineno)], refs, kernel)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    entities[t.id] = Entity(t.id, [(node.lineno, node.end_lineno)], refs - {t.id}, False)
    return entities


def triton_roots(tree: ast.Module, variant: str) -> list[str]:
    roots = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                # A row is its @variant function, and for an op with a gradient its @backward too.
                if (isinstance(dec, ast.Call) and ast.unparse(dec.func).split(".")[-1] in ("variant", "backward")
                        and dec.args and isinstance(dec.args[0], ast.Constant) and dec.args[0].value == variant):
                    roots.append(node.name)
    return roots


def _neighbour(folder: Path, module: str | None, level: int) -> Path | None:
    """The file of a module imported from a file in `folder`, if it lies beside that file: `name`, `.name`, or
    `<folder>.name` (triton_src.name from triton_src/)."""
    if module is None or level > 1:
        return None
    parts = module.split(".")
    if level == 0 and len(parts) == 2 and parts[0] == folder.name:
        parts = parts[1:]
    if len(parts) != 1:
        return None
    file = folder / f"{parts[0]}.py"
    return file.resolve() if file.is_file() else None


@dataclasses.dataclass
class _Module:
    entities: dict[str, Entity]
    names: dict[str, tuple[Path, str]]  # a name imported from a neighbour: (its file, its name there)
    modules: dict[str, Path]  # a neighbour imported whole: the name it is bound to -> its file
    star: list[Path]  # neighbours imported with `from name import *`


def _python_module(file: Path) -> _Module:
    tree = ast.parse(file.read_text())
    entities = {name: dataclasses.replace(e, file=file) for name, e in python_entities(tree).items()}
    module = _Module(entities, {}, {}, [])
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _neighbour(file.parent, node.module, node.level)
            for alias in node.names:
                if source is None and node.module is None and node.level == 1:  # from . import name
                    if whole := _neighbour(file.parent, alias.name, 1):
                        module.modules[alias.asname or alias.name] = whole
                elif source is not None and alias.name == "*":
                    module.star.append(source)
                elif source is not None:
                    module.names[alias.asname or alias.name] = (source, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if (whole := _neighbour(file.parent, alias.name, 0)) and (alias.asname or "." not in alias.name):
                    module.modules[alias.asname or alias.name] = whole
    return module


def triton_reach(path: Path, variant: str) -> Reached:
    """What a Triton variant reaches in its file and in the neighbouring modules it imports from."""
    path = Path(path).resolve()
    modules: dict[Path, _Module] = {}
    pending = [path]
    while pending:  # the row's file and every neighbour it imports from, directly or not
        file = pending.pop()
        if file in modules:
            continue
        modules[file] = module = _python_module(file)
        pending += [f for f, _ in module.names.values()] + list(module.modules.values()) + module.star
    entities = {(file, name): e for file, m in modules.items() for name, e in m.entities.items()}

    def resolve(key: tuple[Path, str], ref: str) -> list[tuple[Path, str]]:
        module = modules[key[0]]
        if ref in module.entities:
            return [(key[0], ref)]
        if ref in module.names:
            return [module.names[ref]]
        head, _, attr = ref.partition(".")
        if attr and head in module.modules:
            return [(module.modules[head], attr)]
        return [(file, ref) for file in module.star if not ref.startswith("_")]

    roots = [(path, name) for name in triton_roots(ast.parse(path.read_text()), variant)]
    return _reached(path, entities, roots, resolve)


def triton_kernel_names(path: Path, variant: str) -> list[str]:
    """The @triton.jit functions (and autotuned wrappers) a variant reaches, in its file or a neighbour's."""
    return sorted({e.name for e in triton_reach(path, variant).kernel if e.is_kernel})


# ---- C++ / CUDA ----------------------------------------------------------------------------------------------
def strip_c_comments(text: str) -> str:
    """Comments and string/char literals blanked out, newlines kept, so positions and line numbers survive."""
    out = []
    i, n = 0, len(text)
    while i < n:
        two = text[i:i + 2]
        if two == "//":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif two == "/*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text[i] in "\"'":
            quote, j = text[i], i + 1
            while j < n and text[j] != quote and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(quote + " " * max(0, j - i - 2) + (quote if j - i >= 2 else ""))
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


_IDENT = re.compile(r"[A-Za-z_]\w*")
_TRANSPARENT = re.compile(r"^\s*(namespace\s*\w*|extern\s*\"?C\"?)\s*$")
_INCLUDE = re.compile(r'\s*#\s*include\s*(?:"([^"\n]+)"|<([^>\n]+)>)')


def _includes(text: str) -> list[tuple[str, bool]]:
    """The files a C++ source includes, as written: (name, quoted). Includes inside comments are not included."""
    raw = text.split("\n")
    found = []
    for i, line in enumerate(strip_c_comments(text).split("\n")):
        if re.match(r"\s*#\s*include\b", line) and (m := _INCLUDE.match(raw[i])):
            found.append((m.group(1), True) if m.group(1) else (m.group(2), False))
    return found


def included_headers(path: Path, include_dirs: Iterable[Path] | None = None) -> list[Path]:
    """The lab's headers a C++/CUDA file includes, directly or through another header, in the order they are
    first included: `#include "name"` is looked up beside the including file and then in the include directories,
    `#include <name>` in the include directories only (default: cuda_src/, the build's include path). Headers
    found in neither (the toolkit's, torch's, the standard library's) are not the lab's and are left out."""
    if include_dirs is None:
        from . import env

        include_dirs = [env.CUDA_DIR]
    dirs = [Path(d) for d in include_dirs]
    path = Path(path).resolve()
    found: list[Path] = []

    def visit(file: Path):
        for name, quoted in _includes(file.read_text()):
            for folder in ([file.parent] if quoted else []) + dirs:
                header = folder / name
                if header.is_file():
                    header = header.resolve()
                    if header != path and header not in found:
                        found.append(header)
                        visit(header)
                    break

    visit(path)
    return found


def _add(entities: dict[str, Entity], entity: Entity) -> None:
    """Prototypes, overloads, specializations, redefined macros: one entity, several spans."""
    if old := entities.get(entity.name):
        entity = Entity(entity.name, old.spans + entity.spans, old.refs | entity.refs,
                        old.is_kernel or entity.is_kernel)
    entities[entity.name] = entity


def _preprocessor(clean: str) -> tuple[str, list[Entity]]:
    """The text with preprocessor directives (continuation lines included) blanked, and the macros it defines."""
    lines = clean.split("\n")
    macros = []
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("#"):
            first = i
            while lines[i].rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
            directive = "\n".join(lines[first:i + 1])
            if m := re.match(r"\s*#\s*define\s+(\w+)", directive):
                refs = set(_IDENT.findall(directive[m.end():])) - {m.group(1)}
                macros.append(Entity(m.group(1), [(first + 1, i + 1)], refs, False))
            lines[first:i + 1] = [""] * (i + 1 - first)
        i += 1
    return "\n".join(lines), macros


def c_entities(text: str) -> tuple[dict[str, Entity], list[tuple[int, int, str]]]:
    """Top-level declarations and macros of a C++ file: {name: entity}, plus the unnamed blocks
    (TORCH_LIBRARY...) as (first line, last line, header)."""
    clean, macros = _preprocessor(strip_c_comments(text))
    entities: dict[str, Entity] = {}
    for macro in macros:
        _add(entities, macro)
    blocks: list[tuple[int, int, str]] = []
    depth = 0  # braces of the current top-level declaration (namespace braces do not count)
    transparent = 0  # open namespace / extern "C" blocks
    start = 0
    body_start = None
    i = 0
    line_of = lambda pos: clean.count("\n", 0, pos) + 1  # noqa: E731

    def finish(end: int):
        nonlocal start, body_start
        chunk = clean[start:end + 1]
        header = clean[start:body_start] if body_start is not None else chunk
        first_code = start + len(chunk) - len(chunk.lstrip())
        refs = set(_IDENT.findall(chunk))
        name = None
        # The declared name is the identifier before the parameter list (and before the template arguments of an
        # explicit specialization, from_float<float>(...)), once template parameter lists and attributes with
        # parentheses of their own (__launch_bounds__(256, 2), alignas(16)) are out of the way.
        head = re.sub(r"\btemplate\s*<(?:[^<>]|<[^<>]*>)*>", " ", header)
        head = re.sub(r"\b(?:__launch_bounds__|alignas|__align__|__attribute__)\s*\((?:[^()]|\([^()]*\))*\)", " ", head)
        head = head.split("=")[0]
        if m := re.search(r"(\w+)\s*(?:<(?:[^<>]|<[^<>]*>)*>\s*)?\(", head):
            name = m.group(1)
        elif m := re.search(r"\b(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)", head):
            name = m.group(1)
        elif idents := _IDENT.findall(head):
            name = idents[-1]
        kernel = "__global__" in header or "__device__" in header
        if name and name.startswith("TORCH_LIBRARY"):
            blocks.append((line_of(first_code), line_of(end), header))
        elif name:
            _add(entities, Entity(name, [(line_of(first_code), line_of(end))], refs - {name}, kernel))
        start, body_start = end + 1, None

    while i < len(clean):
        c = clean[i]
        if c == "{":
            if depth == 0 and _TRANSPARENT.match(clean[start:i].strip() and clean[start:i].strip().split("\n")[-1]):
                transparent += 1
                start = i + 1
            else:
                if depth == 0:
                    body_start = i
                depth += 1
        elif c == "}":
            if depth == 0 and transparent:
                transparent -= 1
                start = i + 1
            else:
                depth -= 1
                if depth == 0:
                    # A struct/enum ends at the ';' after its brace; a function at the brace.
                    j = i + 1
                    while j < len(clean) and clean[j] in " \t":
                        j += 1
                    finish(j if j < len(clean) and clean[j] == ";" else i)
                    i = j if j < len(clean) and clean[j] == ";" else i
        elif c == ";" and depth == 0:
            if clean[start:i].strip():
                finish(i)
            else:
                start = i + 1
        i += 1
    return entities, blocks


def cuda_roots(text: str, variant: str) -> list[str]:
    # A row is its schema's function, and for an op with a gradient its <name>_backward's too.
    return re.findall(r'm\.impl\(\s*"' + re.escape(variant) + r'(?:_backward)?"\s*,\s*&?\s*(?:\w+::)*(\w+)', text)


def cuda_reach(path: Path, variant: str) -> Reached:
    """What a CUDA variant reaches in its .cu and in the lab's headers the .cu includes."""
    path = Path(path).resolve()
    entities: dict[tuple[Path, str], Entity] = {}
    for file in [path, *included_headers(path)]:
        for name, e in c_entities(file.read_text())[0].items():
            entities[(file, name)] = dataclasses.replace(e, file=file)
    by_name: dict[str, list[tuple[Path, str]]] = defaultdict(list)
    for key in entities:
        by_name[key[1]].append(key)
    roots = [key for name in cuda_roots(path.read_text(), variant) for key in by_name.get(name, ())]
    return _reached(path, entities, roots, lambda _key, ref: by_name.get(ref, ()))


def cuda_kernel_names(path: Path, variant: str) -> list[str]:
    """The __global__ functions a CUDA variant can launch, with the device code they reach (in the .cu or in an
    included header)."""
    return sorted({e.name for e in cuda_reach(path, variant).kernel})
