"""Lines of code, by one rule for every language: a line counts if it holds code; blank lines and lines that are
only comments (Python docstrings included) do not. Each implementation's lines are the top-level definitions it
reaches from its entry point, split into

  * kernel: code that runs on the GPU: `__global__`/`__device__` functions, `@triton.jit` kernels (with their
    autotune decorators), and the constants only they use;
  * host: the launcher and binding code that checks inputs, allocates outputs and launches (plus the
    TORCH_LIBRARY lines that register this implementation).

Shared helpers in cuda_src/lab_*.h and the harness are not counted for any implementation: they are the same for
every op, like triton.language is for Triton.
"""
from __future__ import annotations

import ast
import dataclasses
import io
import re
import tokenize
from pathlib import Path


@dataclasses.dataclass
class LineCount:
    impl: str
    kernel: int
    host: int
    source: str

    @property
    def total(self) -> int:
        return self.kernel + self.host


@dataclasses.dataclass
class _Entity:
    name: str
    spans: list[tuple[int, int]]  # 1-based inclusive line ranges (a prototype and its definition are two spans)
    refs: set[str]
    is_kernel: bool


def _reach(entities: dict[str, _Entity], roots: list[str]) -> tuple[set[str], set[str]]:
    """Names of the entities reachable from the roots, split into (kernel, host). Anything reached from a kernel
    is kernel code."""
    kernel_names: set[str] = set()
    host_names: set[str] = set()
    stack = [(r, False) for r in roots]
    while stack:
        name, from_kernel = stack.pop()
        entity = entities.get(name)
        if entity is None:
            continue
        as_kernel = entity.is_kernel or from_kernel
        seen = kernel_names if as_kernel else host_names
        if name in seen:
            continue
        seen.add(name)
        stack.extend((ref, as_kernel) for ref in entity.refs if ref != name)
    return kernel_names, host_names - kernel_names


def _walk(entities: dict[str, _Entity], roots: list[str]) -> tuple[set[int], set[int]]:
    """Lines of the entities reachable from the roots: (kernel lines, host lines)."""
    kernel_names, host_names = _reach(entities, roots)

    def lines(names):
        return {n for name in names for first, last in entities[name].spans for n in range(first, last + 1)}

    return lines(kernel_names), lines(host_names)


# ---- Python ----------------------------------------------------------------------------------------------------
def python_code_lines(text: str) -> set[int]:
    """Line numbers holding Python code (not blank, not comments, not docstrings)."""
    code: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER,
            tokenize.ENCODING}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in skip:
            code.update(range(tok.start[0], tok.end[0] + 1))
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return code
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            code -= set(range(node.lineno, node.end_lineno + 1))
    return code


def count_python(text: str) -> int:
    return len(python_code_lines(text))


def _is_triton_kernel(node: ast.FunctionDef) -> bool:
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = ast.unparse(target)
        if name.split(".")[-1] in ("jit", "autotune", "heuristics"):
            return True
    return False


def _python_entities(tree: ast.Module) -> dict[str, _Entity]:
    entities: dict[str, _Entity] = {}
    for node in tree.body:
        refs = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            kernel = isinstance(node, ast.FunctionDef) and _is_triton_kernel(node)
            entities[node.name] = _Entity(node.name, [(first, node.end_lineno)], refs, kernel)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    entities[t.id] = _Entity(t.id, [(node.lineno, node.end_lineno)], refs - {t.id}, False)
    return entities


def _triton_roots(tree: ast.Module, variant: str) -> list[str]:
    roots = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                if (isinstance(dec, ast.Call) and ast.unparse(dec.func).split(".")[-1] == "variant"
                        and dec.args and isinstance(dec.args[0], ast.Constant) and dec.args[0].value == variant):
                    roots.append(node.name)
    return roots


def triton_kernel_names(path: Path, variant: str) -> list[str]:
    """The @triton.jit functions (and autotuned wrappers) a variant reaches."""
    tree = ast.parse(path.read_text())
    entities = _python_entities(tree)
    kernel_names, _ = _reach(entities, _triton_roots(tree, variant))
    return sorted(n for n in kernel_names if entities[n].is_kernel)


def count_triton(path: Path, variant: str, impl: str) -> LineCount:
    text = path.read_text()
    tree = ast.parse(text)
    kernel, host = _walk(_python_entities(tree), _triton_roots(tree, variant))
    code = python_code_lines(text)
    return LineCount(impl, len(kernel & code), len(host & code), _rel(path))


def count_inductor(wrapper_source: str, impl: str) -> tuple[LineCount, int]:
    """Lines of what torch.compile generated: the Triton kernels inside the wrapper module (kernel), and its
    `call` function (host). Also returns the number of generated kernels."""
    kernel_sources = re.findall(r"async_compile\.triton\(\s*'[^']*',\s*'''(.*?)'''", wrapper_source, re.DOTALL)
    kernel = sum(count_python(src) for src in kernel_sources)
    host = 0
    try:
        tree = ast.parse(wrapper_source)
        code = python_code_lines(wrapper_source)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "call":
                host += len(set(range(node.lineno, node.end_lineno + 1)) & code)
    except SyntaxError:
        pass
    return LineCount(impl, kernel, host, "generated by torch.compile"), len(kernel_sources)


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


def c_code_lines(text: str) -> set[int]:
    return {i for i, line in enumerate(strip_c_comments(text).splitlines(), 1) if line.strip()}


_IDENT = re.compile(r"[A-Za-z_]\w*")
_TRANSPARENT = re.compile(r"^\s*(namespace\s*\w*|extern\s*\"?C\"?)\s*$")


def _c_entities(text: str) -> tuple[dict[str, _Entity], list[tuple[int, int, str]]]:
    """Top-level declarations of a C++ file: {name: entity}, plus the unnamed blocks (TORCH_LIBRARY...) as
    (first line, last line, header)."""
    clean = strip_c_comments(text)
    # Preprocessor lines are not declarations.
    clean = "\n".join("" if line.lstrip().startswith("#") else line for line in clean.split("\n"))
    entities: dict[str, _Entity] = {}
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
        # The declared name is the identifier before the parameter list, once template parameter lists and
        # attributes with parentheses of their own (__launch_bounds__(256, 2), alignas(16)) are out of the way.
        head = re.sub(r"\btemplate\s*<(?:[^<>]|<[^<>]*>)*>", " ", header)
        head = re.sub(r"\b(?:__launch_bounds__|alignas|__align__|__attribute__)\s*\((?:[^()]|\([^()]*\))*\)", " ", head)
        head = head.split("=")[0]
        if m := re.search(r"(\w+)\s*\(", head):
            name = m.group(1)
        elif m := re.search(r"\b(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)", head):
            name = m.group(1)
        elif idents := _IDENT.findall(head):
            name = idents[-1]
        kernel = "__global__" in header or "__device__" in header
        if name and name.startswith("TORCH_LIBRARY"):
            blocks.append((line_of(first_code), line_of(end), header))
        elif name:
            entity = _Entity(name, [(line_of(first_code), line_of(end))], refs - {name}, kernel)
            if name in entities:  # prototypes, overloads, specializations: one entity, several spans
                old = entities[name]
                entity = _Entity(name, old.spans + entity.spans, old.refs | entity.refs, old.is_kernel or kernel)
            entities[name] = entity
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


def _cuda_roots(text: str, variant: str) -> list[str]:
    return re.findall(r'm\.impl\(\s*"' + re.escape(variant) + r'"\s*,\s*&?\s*(?:\w+::)*(\w+)', text)


def cuda_kernel_names(path: Path, variant: str) -> list[str]:
    """The __global__ functions a CUDA variant can launch."""
    text = path.read_text()
    entities, _ = _c_entities(text)
    kernel_names, _ = _reach(entities, _cuda_roots(text, variant))
    return sorted(kernel_names)


def count_cuda(path: Path, variant: str, impl: str) -> LineCount:
    text = path.read_text()
    entities, blocks = _c_entities(text)
    kernel, host = _walk(entities, _cuda_roots(text, variant))
    lines = text.splitlines()
    for first, last, _header in blocks:  # registration lines that name this variant
        host |= {n for n in range(first, last + 1) if re.search(r'"' + re.escape(variant) + r'\s*[("]', lines[n - 1])}
    code = c_code_lines(text)
    return LineCount(impl, len(kernel & code), len(host & code), _rel(path))


def _rel(path: Path) -> str:
    from . import env

    return env.relpath(path)
