"""Rotary position embedding (half-split layout) in Triton. Spec: specs/rope.py. CUDA side: cuda_src/rope.cu.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/rope.md):
  v1 basic    one program per row of q (one token's one head): its two halves as two vectors, the token's row of
              each table beside them
  v2 token    one program per token, all its heads as a [heads, D/2] tile: the token's table rows loaded once and
              broadcast across the heads, and H times the bytes in flight per program; warps autotuned

A half row is D/2 elements, a power of two or not (80 and 96 are real head sizes): the programs take the next power
of two and mask the rest.
"""
import torch
import triton
import triton.language as tl

from compare.spec import variant
from compare.validate import InputError, check_inputs


@triton.jit
def _rotate(q_ptr, cos_ptr, sin_ptr, y_ptr, at, table, half, mask, table_mask):
    """y at offsets `at` (first half) and at + half from q, with the tables at offsets `table`, loaded in their own
    shape (a [1, D/2] row is loaded once and its values broadcast, not loaded again for every row of `at`):
    a·c − b·s and b·c + a·s in fp32."""
    a = tl.load(q_ptr + at, mask=mask).to(tl.float32)
    b = tl.load(q_ptr + at + half, mask=mask).to(tl.float32)
    c = tl.load(cos_ptr + table, mask=table_mask).to(tl.float32)
    s = tl.load(sin_ptr + table, mask=table_mask).to(tl.float32)
    tl.store(y_ptr + at, (a * c - b * s).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(y_ptr + at + half, (b * c + a * s).to(y_ptr.dtype.element_ty), mask=mask)


# ---- v1 basic: one program per row of q. -------------------------------------------------------------------------
@triton.jit
def rope_basic_kernel(q_ptr, cos_ptr, sin_ptr, y_ptr, seq_len, heads, half, HALF_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # int64: q may pass 2^31 elements
    position = (row // heads) % seq_len  # the token s of this row
    i = tl.arange(0, HALF_BLOCK)
    _rotate(q_ptr, cos_ptr, sin_ptr, y_ptr, row * 2 * half + i, position * half + i, half, i < half, i < half)


def checked_output(op: str, q, cos, sin) -> torch.Tensor:
    """q (B, S, H, D) with D even and its (S, D/2) tables checked for the op of either layout
    (triton_src/rope_interleaved.py too); the output, a new tensor like q."""
    check_inputs(op, ("q", q), ndim=4)
    check_inputs(op, ("q", q), ("cos", cos), ("sin", sin))
    b, s, h, d = q.shape
    if d % 2:
        raise InputError(f"{op}: q's last dimension D = {d} must be even (its values are rotated in pairs)")
    for name, table in (("cos", cos), ("sin", sin)):
        if tuple(table.shape) != (s, d // 2):
            raise InputError(f"{op}: {name} has shape {tuple(table.shape)}; it must be (S, D/2) = {(s, d // 2)}")
    return torch.empty_like(q)


@variant("basic")
def basic(q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    y = checked_output("rope", q, cos, sin)
    b, s, h, d = q.shape
    if q.numel():
        rope_basic_kernel[(b * s * h,)](q, cos, sin, y, s, h, d // 2, HALF_BLOCK=triton.next_power_of_2(d // 2))
    return y


# ---- v2 token: one program per token, every head at once. ---------------------------------------------------------
# The tile is [heads, D/2]: the table offsets depend only on the column, so the token's cos and sin rows are loaded
# once as a [1, D/2] row and broadcast over the heads, where v1 loads them once per head.
@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (2, 4, 8)], key=["heads", "half"])
@triton.jit
def rope_token_kernel(q_ptr, cos_ptr, sin_ptr, y_ptr, seq_len, heads, half, HEAD_BLOCK: tl.constexpr,
                      HALF_BLOCK: tl.constexpr):
    token_row = tl.program_id(0).to(tl.int64)  # (b, s) flattened
    position = token_row % seq_len
    h = tl.arange(0, HEAD_BLOCK)[:, None]
    i = tl.arange(0, HALF_BLOCK)[None, :]
    at = (token_row * heads + h) * 2 * half + i
    _rotate(q_ptr, cos_ptr, sin_ptr, y_ptr, at, position * half + i, half, (h < heads) & (i < half), i < half)


@variant("token")
def token(q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    y = checked_output("rope", q, cos, sin)
    b, s, h, d = q.shape
    if q.numel():
        rope_token_kernel[(b * s,)](q, cos, sin, y, s, h, d // 2, HEAD_BLOCK=triton.next_power_of_2(h),
                                    HALF_BLOCK=triton.next_power_of_2(d // 2))
    return y
