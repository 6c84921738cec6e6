"""``python -m compare new NAME``: a working skeleton for a new elementwise op, in the three files every op has.

The skeleton computes y = 2·x + 1 in every implementation and passes its own checks as generated; replace that
math in the three marked places (reference, CUDA device function, Triton kernel) and the checks tell you whether
they agree."""
from __future__ import annotations

import keyword
import os
import re
import string
import sys
from pathlib import Path

from . import discover, env

SPEC = '''"""$title: y = 2·x + 1 (EDIT: say what your op computes).

Elementwise: each element is read once and written once, 2 · numel · itemsize bytes, so the ceiling is the
device's copy bandwidth. CUDA: cuda_src/$name.cu. Triton: triton_src/$name.py.
"""
import math

import torch

from compare.spec import ELEMENTWISE_SHAPES, Op, Tolerance


def make_inputs(shape, dtype, device, generator):
    return (torch.randn(shape, device=device, generator=generator, dtype=torch.float32).to(dtype),)


def reference(x):
    return 2.0 * x + 1.0  # EDIT: the float64 ground truth


def torch_eager(x):
    return 2.0 * x + 1.0  # EDIT: the same op written with torch operations


OP = Op(
    name="$name",
    summary="$title (elementwise)",
    make_inputs=make_inputs,
    reference=reference,
    torch_eager=torch_eager,
    bytes_moved=lambda shape, dtype: 2 * math.prod(shape) * dtype.itemsize,
    flops=lambda shape: 2 * math.prod(shape),  # EDIT: flops per element of your op
    **ELEMENTWISE_SHAPES,  # the sizes every elementwise op uses; list your own to change them
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    tolerances={
        torch.float32: Tolerance(atol=1e-6, rtol=1e-5),
        torch.float16: Tolerance(atol=1e-4, rtol=1e-3),
        torch.bfloat16: Tolerance(atol=1e-3, rtol=8e-3),
    },
)
'''

CUDA = '''// $title. Spec: specs/$name.py. Triton side: triton_src/$name.py.
// Device half (nvcc, __CUDACC__ defined): kernels and launchers. Host half (C++ compiler): the torch binding.
#include "lab.h"

cudaError_t launch_${name}_simple(lab::DType dtype, const void* x, void* y, int64_t n, cudaStream_t stream);

#ifdef __CUDACC__
#include "lab_device.cuh"

__device__ __forceinline__ float ${name}_math(float v) {
  return 2.0f * v + 1.0f;  // EDIT: your op, in fp32
}

// v1 simple: one thread per element. Next steps: see cuda_src/gelu.cu (128-bit packets, one per thread).
template <typename T>
__global__ void ${name}_simple_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = lab::from_float<T>(${name}_math(lab::to_float(x[i])));
}

cudaError_t launch_${name}_simple(lab::DType dtype, const void* x, void* y, int64_t n, cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kThreads = 256;
    ${name}_simple_kernel<T><<<lab::blocks_for(n, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

#else  // host half: the torch binding

#include "lab_torch.h"

at::Tensor ${name}_simple(const at::Tensor& x) {
  return lab::unary_elementwise(x, "$name", "simple", launch_${name}_simple);
}

TORCH_LIBRARY(lab_$name, m) { m.def("simple(Tensor x) -> Tensor"); }

TORCH_LIBRARY_IMPL(lab_$name, CUDA, m) { m.impl("simple", &${name}_simple); }

#endif
'''

TRITON = '''"""$title in Triton. Spec: specs/$name.py. CUDA side: cuda_src/$name.cu."""
import torch
import triton
import triton.language as tl

from compare.spec import variant
from compare.validate import check_inputs


@triton.jit
def ${name}_simple_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = 2.0 * x + 1.0  # EDIT: your op, in fp32
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


@variant("simple")
def simple(x: torch.Tensor) -> torch.Tensor:
    check_inputs("$name", ("x", x))
    y = torch.empty_like(x)
    n = x.numel()
    ${name}_simple_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y
'''


class ScaffoldError(Exception):
    pass


def targets(name: str) -> dict[Path, str]:
    return {env.SPECS_DIR / f"{name}.py": SPEC, env.CUDA_DIR / f"{name}.cu": CUDA,
            env.TRITON_DIR / f"{name}.py": TRITON}


def create(name: str) -> list[Path]:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name) or name in ("all", "list", "new"):
        raise ScaffoldError(f"{name!r} can't be an op name: use lower-case letters, digits and '_', starting "
                            f"with a letter (it becomes a Python module and a C++ identifier)")
    files = targets(name)
    existing = [env.relpath(p) for p in files if p.exists()]
    if existing or name in discover.op_names():
        raise ScaffoldError(f"op {name!r} already exists ({', '.join(existing) or 'specs'}); nothing was written")
    title = name.replace("_", " ").capitalize()
    written = []
    try:
        for path, template in files.items():
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(string.Template(template).substitute(name=name, title=title))
            written.append((tmp, path))
        for tmp, path in written:
            os.replace(tmp, path)
    finally:
        for tmp, _ in written:
            tmp.unlink(missing_ok=True)
    return list(files)


def main(name: str) -> int:
    try:
        paths = create(name)
    except ScaffoldError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"created op {name!r}:")
    for p in paths:
        print(f"  {env.relpath(p)}")
    print(f"""
It computes y = 2x + 1 everywhere and passes its checks as it is. Make it yours by editing the lines marked EDIT:
  1. specs/{name}.py        reference() (float64 ground truth), torch_eager(), summary, flops, tolerances
  2. cuda_src/{name}.cu     {name}_math(): the per-element math in fp32
  3. triton_src/{name}.py   the `y = ...` line of {name}_simple_kernel
Then run:
  python -m compare {name}            check, time and count every implementation
  python -m pytest -k {name}          the tests pick the new op up automatically
Add faster versions as new m.def/m.impl entries in the .cu and new @variant functions in the .py.""")
    return 0
