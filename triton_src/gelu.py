"""GELU (tanh approximation) in Triton. Spec: specs/gelu.py. CUDA side: cuda_src/gelu.cu.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/gelu.md):
  v1 basic    the seed kernel: 1024-element blocks, tanh built from tl.exp
  v2 tuned    block size and warps autotuned per size; GELU as x · sigmoid(2u), one exp2 and one divide

Triton programs operate on blocks: one program loads BLOCK elements as a vector, computes, and stores them. The
compiler picks the vector width of the loads and the layout across threads; we pick the block size and the number
of warps per program.
"""
import torch
import triton
import triton.language as tl

from compare.spec import variant
from compare.validate import check_inputs

# Globals a kernel reads must be compile-time constants.
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
CUBIC_COEFF = tl.constexpr(0.044715)
MINUS_2_LOG2_E = tl.constexpr(-2.8853900817779268)  # exp(-2u) == exp2(-2·log2(e)·u)


# ---- basic: the seed kernel. One block of 1024 elements per program, tanh built from tl.exp. ----------------------
@triton.jit
def gelu_basic_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)  # int64: n may exceed 2^31
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    u = SQRT_2_OVER_PI * (x + CUBIC_COEFF * x * x * x)
    # tanh(u) = 1 - 2 / (exp(2u) + 1): at large u exp overflows to inf and this still gives 1, where the textbook
    # (e^2u - 1) / (e^2u + 1) would give inf / inf = NaN.
    tanh_u = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)
    y = 0.5 * x * (1.0 + tanh_u)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


@variant("basic")
def basic(x: torch.Tensor) -> torch.Tensor:
    check_inputs("gelu", ("x", x))
    y = torch.empty_like(x)
    n = x.numel()
    gelu_basic_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y


# ---- tuned: autotuned block size and warps; the sigmoid form of GELU. -------------------------------------------
# 0.5 * (1 + tanh(u)) == sigmoid(2u), so GELU is x / (1 + 2^(-2u·log2 e)): one exp2 and one divide, no
# cancellation for negative x. Larger blocks give each thread several 16-byte packets in flight; the autotuner
# picks per size because small tensors want more, smaller programs to fill 132 SMs.
@triton.autotune(
    configs=[
        triton.Config({"BLOCK": block}, num_warps=warps)
        for block in (1024, 2048, 4096, 8192)
        for warps in (4, 8)
    ],
    key=["n_elements"],
)
@triton.jit
def gelu_tuned_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    u = SQRT_2_OVER_PI * (x + CUBIC_COEFF * x * x * x)
    y = x / (1.0 + tl.exp2(u * MINUS_2_LOG2_E))
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


@variant("tuned")
def tuned(x: torch.Tensor) -> torch.Tensor:
    check_inputs("gelu", ("x", x))
    y = torch.empty_like(x)
    n = x.numel()
    gelu_tuned_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    return y
