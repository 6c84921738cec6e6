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

What the reference says where a choice is made (EDIT for your op): IEEE arithmetic in float64, rounded to the
output dtype, as torch gives: 2·(±inf) + 1 = ±inf, NaN stays NaN, and 2·x + 1 past the dtype's largest value is
±inf. Where your formula and torch's op disagree on inf or NaN, write the reference to give torch's answer and say
so here (specs/gelu.py does this for gelu(-inf)).
"""
import math

import torch

from compare.spec import ELEMENTWISE_SHAPES, $spec_imports
from specs import _special


def make_inputs(shape, dtype, device, generator):
    return (torch.randn(shape, device=device, generator=generator, dtype=torch.float32).to(dtype),)


# Special inputs, checked at every shape and dtype besides the random ones. The first element of each comes from
# make_inputs, so a one-element case always has an ordinary value to judge.
def range_edges(shape, dtype, device, generator):
    """Half from the dtype's two highest binades (up to its largest finite value), half from every binade, random
    signs: where the op overflows the dtype, and where an intermediate in a narrower type would."""
    x = _special.mix(generator, [_special.top_binades(shape, dtype, device, generator),
                                 _special.every_binade(shape, dtype, device, generator)])
    (first,) = make_inputs(shape, dtype, device, generator)
    return (_special.first_from(x, first),)


def inf_and_nan(shape, dtype, device, generator):
    """The random inputs with +inf, -inf and NaN each replacing 1 element in 16."""
    (x,) = make_inputs(shape, dtype, device, generator)
    return (_special.first_from(_special.sprinkle(x, generator), x),)


def subnormals(shape, dtype, device, generator):
    """Half subnormals of the dtype (and its smallest normals), half the random inputs: a kernel that flushes
    subnormals to zero shows wherever the op keeps them."""
    (x,) = make_inputs(shape, dtype, device, generator)
    return (_special.first_from(_special.mix(generator, [_special.subnormals(shape, dtype, device, generator), x]), x),)


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
    special_inputs={"range edges": range_edges, "inf and nan": inf_and_nan, "subnormals": subnormals},
    # An output passes when |out - expected| <= atol + ulps·ulp(expected), expected the float64 reference correctly
    # rounded to the output dtype. 2·x + 1 computed in fp32 is one rounding (2·x is exact), so fp32 rows return the
    # correctly rounded answer; fp16/bf16 rows computing in fp32 and rounding once get it too here, and in general
    # land within one ulp of it (an fp32 error far below half a 16-bit ulp moves the result at most one ulp).
    # EDIT for your op: measure its rows' worst error over a dense sweep of x (every fp16 and bf16 value, a few
    # million fp32 ones; specs/gelu.py shows how), add ulps for fp32 math that is not correctly rounded (fast exp,
    # approximate division), and an atol where the fp32 formula loses relative accuracy near zero (cancellation).
    tolerances={
        torch.float32: Tolerance(atol=0.0, rtol=0.0, ulps=1),
        torch.float16: Tolerance(atol=0.0, rtol=0.0, ulps=1),
        torch.bfloat16: Tolerance(atol=0.0, rtol=0.0, ulps=1),
    },$spec_backward
)
'''

CUDA = '''// $title. Spec: specs/$name.py. Triton side: triton_src/$name.py.
// Device half (nvcc, __CUDACC__ defined): kernels and launchers. Host half (C++ compiler): the torch binding.
//
// Steps (each one a row, cuda:<name>; measured figures: results/<gpu>/$name.md):
//   v1 simple   one thread per element (EDIT: add a line per faster version, v2 ..., each a new m.def row)
//
#include "lab.h"

cudaError_t launch_${name}_simple(lab::DType dtype, const void* x, void* y, int64_t n, cudaStream_t stream);$cuda_declare

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
}$cuda_device

#else  // host half: the torch binding

#include "lab_torch.h"

at::Tensor ${name}_simple(const at::Tensor& x) {
  return lab::unary_elementwise(x, "$name", "simple", launch_${name}_simple);
}$cuda_host

TORCH_LIBRARY(lab_$name, m) {
  m.def("simple(Tensor x) -> Tensor");$cuda_def
}

TORCH_LIBRARY_IMPL(lab_$name, CUDA, m) {
  m.impl("simple", &${name}_simple);$cuda_impl
}

#endif
'''

TRITON = '''"""$title in Triton. Spec: specs/$name.py. CUDA side: cuda_src/$name.cu.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/$name.md):
  v1 simple   one block of 1024 elements per program (EDIT: a line per faster @variant, v2 ...)
"""
import torch
import triton
import triton.language as tl

from compare.spec import $triton_imports
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
    return y$triton_backward
'''


# What --backward adds to the three files: the op's gradient (compare/passes.py), dx = 2·dy, in each of them.
WITHOUT_BACKWARD = dict(spec_imports="Op, Tolerance", spec_backward="", cuda_declare="", cuda_device="",
                        cuda_host="", cuda_def="", cuda_impl="", triton_imports="variant", triton_backward="")
WITH_BACKWARD = dict(
    spec_imports="Backward, Op, Tolerance",
    spec_backward='''
    # The gradient: the op then also runs as $name-backward and $name-fwd-bwd (compare/passes.py), judged against
    # autograd of reference(). EDIT: each row's backward, the bytes a backward must move, the gradient's tolerance.
    backward=Backward(
        inputs=("x",),
        bytes_moved=lambda shape, dtype: 2 * math.prod(shape) * dtype.itemsize,  # read dy, write dx
        tolerances=lambda dtype, shape: (Tolerance(atol=0.0, rtol=0.0, ulps=1),),  # dx = 2·dy is exact
        make_grad_output=lambda inputs, generator: make_inputs(tuple(inputs[0].shape), inputs[0].dtype,
                                                               inputs[0].device, generator)[0],
        flops=lambda shape: math.prod(shape),
    ),''',
    cuda_declare='''
// The backward of step v1: dx from dy (and x, which the derivative of most ops needs).
cudaError_t launch_${name}_simple_backward(lab::DType dtype, const void* dy, const void* x, void* dx, int64_t n,
                                          cudaStream_t stream);''',
    cuda_device='''

__device__ __forceinline__ float ${name}_grad(float dy, float x) {
  return 2.0f * dy;  // EDIT: dy times the derivative of your op at x, in fp32
}

template <typename T>
__global__ void ${name}_simple_backward_kernel(const T* __restrict__ dy, const T* __restrict__ x, T* __restrict__ dx,
                                               int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dx[i] = lab::from_float<T>(${name}_grad(lab::to_float(dy[i]), lab::to_float(x[i])));
}

cudaError_t launch_${name}_simple_backward(lab::DType dtype, const void* dy, const void* x, void* dx, int64_t n,
                                          cudaStream_t stream) {
  return lab::dispatch_float_types(dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kThreads = 256;
    ${name}_simple_backward_kernel<T><<<lab::blocks_for(n, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<T*>(dx), n);
    return cudaGetLastError();
  });
}''',
    cuda_host='''

// The backward of "simple": called as simple_backward(dy, x, *saved); this forward saves nothing.
at::Tensor ${name}_simple_backward(const at::Tensor& dy, const at::Tensor& x) {
  return lab::binary_elementwise(dy, x, "$name", "simple_backward", launch_${name}_simple_backward);
}''',
    cuda_def='''
  m.def("simple_backward(Tensor dy, Tensor x) -> Tensor");''',
    cuda_impl='''
  m.impl("simple_backward", &${name}_simple_backward);''',
    triton_imports="backward, variant",
    triton_backward='''


@triton.jit
def ${name}_simple_backward_kernel(dy_ptr, x_ptr, dx_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    dy = tl.load(dy_ptr + offsets, mask=mask).to(tl.float32)
    dx = 2.0 * dy  # EDIT: dy times the derivative of your op at x (load x_ptr as above), in fp32
    tl.store(dx_ptr + offsets, dx.to(dx_ptr.dtype.element_ty), mask=mask)


@backward("simple")
def simple_backward(dy: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Called as simple_backward(dy, x, *saved): the forward above saves nothing beside its output."""
    check_inputs("$name", ("dy", dy), ("x", x), same_shape=True)
    dx = torch.empty_like(x)
    n = x.numel()
    ${name}_simple_backward_kernel[(triton.cdiv(n, 1024),)](dy, x, dx, n, BLOCK=1024)
    return dx''',
)


class ScaffoldError(Exception):
    pass


def targets(name: str) -> dict[Path, str]:
    return {env.SPECS_DIR / f"{name}.py": SPEC, env.CUDA_DIR / f"{name}.cu": CUDA,
            env.TRITON_DIR / f"{name}.py": TRITON}


def create(name: str, with_backward: bool = False) -> list[Path]:
    reserved = ("all", "list", "new", "summary")  # the CLI's own commands
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name) or name in reserved:
        raise ScaffoldError(f"{name!r} can't be an op name: use lower-case letters, digits and '_', starting "
                            f"with a letter (it becomes a Python module and a C++ identifier)")
    files = targets(name)
    existing = [env.relpath(p) for p in files if p.exists()]
    if existing or name in discover.op_names():
        raise ScaffoldError(f"op {name!r} already exists ({', '.join(existing) or 'specs'}); nothing was written")
    title = name.replace("_", " ").capitalize()
    parts = {key: string.Template(text).substitute(name=name)
             for key, text in (WITH_BACKWARD if with_backward else WITHOUT_BACKWARD).items()}
    written = []
    try:
        for path, template in files.items():
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(string.Template(template).substitute(name=name, title=title, **parts))
            written.append((tmp, path))
        for tmp, path in written:
            os.replace(tmp, path)
    finally:
        for tmp, _ in written:
            tmp.unlink(missing_ok=True)
    return list(files)


def main(name: str, with_backward: bool = False) -> int:
    try:
        paths = create(name, with_backward)
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
Add faster versions as new m.def/m.impl entries in the .cu and new @variant functions in the .py, each a new line of
the file's version map (its 'Steps' list, at the top): the report's ladder shows what each step bought.""")
    return 0
