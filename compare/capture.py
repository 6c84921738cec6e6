"""What torch.compile generates for an op: the inductor output code, captured programmatically with a fresh
inductor cache (so a cache hit can never hide it), with its compile time and kernel count."""
from __future__ import annotations

import contextlib
import dataclasses
import time

import torch

from . import count, discover


@dataclasses.dataclass
class Capture:
    impl: str  # "torch:compile", "torch:compile-max-autotune"
    mode: str
    dtype: str
    shape: str
    compile_s: float
    kernels: int
    kernel_lines: int
    host_lines: int
    code: str


def _fresh_cache():
    import torch._inductor.utils as utils

    fresh = getattr(utils, "fresh_cache", None) or getattr(utils, "fresh_inductor_cache", None)
    return fresh() if fresh else contextlib.nullcontext()


def capture(op, inputs, impl: str, mode: str, dtype: str, shape: str) -> Capture:
    """Compile the op's torch_eager and run it once as its row does; for a backward pass (compare.passes) that call
    runs the backward too, so the code captured includes the backward AOTAutograd compiled."""
    from torch._inductor.utils import run_and_get_code

    from . import passes

    compiled = passes.row(op, discover.compiled(op, mode), None)
    with _fresh_cache():
        start = time.perf_counter()
        _, sources = run_and_get_code(compiled, *inputs)
        if inputs and inputs[0].is_cuda:
            torch.cuda.synchronize()
        compile_s = time.perf_counter() - start
    code = "\n\n".join(sources)
    lines, kernels = count.count_inductor(code, impl)
    return Capture(impl, mode, dtype, shape, compile_s, kernels, lines.kernel, lines.host, code)


def raise_recompile_limit(limit: int = 256) -> None:
    """One compiled graph per (shape, dtype) is wanted here; dynamo's default limit would fall back to eager."""
    import torch._dynamo.config as config

    for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                 "accumulated_cache_size_limit"):
        if hasattr(config, name):
            setattr(config, name, max(getattr(config, name), limit))
