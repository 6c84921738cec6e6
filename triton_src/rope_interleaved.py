"""Rotary position embedding (interleaved layout, GPT-J) in Triton. Spec: specs/rope_interleaved.py. CUDA side:
cuda_src/rope_interleaved.cu. The half-split layout: triton_src/rope.py.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/rope_interleaved.md):
  v1 basic    one program per row of q: the pairs' first and second values loaded as two stride-2 vectors (each
              load touches every byte of the row and keeps half), and stored the same way
  v2 token    one program per token, all its heads as one contiguous [heads, D] tile, loaded and stored whole: the
              pairs taken apart in registers (tl.reshape to [heads, D/2, 2], tl.split) and put back (tl.join), the
              table rows loaded once for every head; warps autotuned
"""
import torch
import triton
import triton.language as tl

from compare.spec import variant
from triton_src.rope import checked_output


# ---- v1 basic: one program per row of q, stride-2 loads. ----------------------------------------------------------
@triton.jit
def rope_interleaved_basic_kernel(q_ptr, cos_ptr, sin_ptr, y_ptr, seq_len, heads, half, HALF_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # int64: q may pass 2^31 elements
    position = (row // heads) % seq_len
    i = tl.arange(0, HALF_BLOCK)
    mask = i < half
    first = row * 2 * half + 2 * i
    a = tl.load(q_ptr + first, mask=mask).to(tl.float32)
    b = tl.load(q_ptr + first + 1, mask=mask).to(tl.float32)
    c = tl.load(cos_ptr + position * half + i, mask=mask).to(tl.float32)
    s = tl.load(sin_ptr + position * half + i, mask=mask).to(tl.float32)
    tl.store(y_ptr + first, (a * c - b * s).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(y_ptr + first + 1, (b * c + a * s).to(y_ptr.dtype.element_ty), mask=mask)


@variant("basic")
def basic(q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    y = checked_output("rope_interleaved", q, cos, sin)
    b, s, h, d = q.shape
    if q.numel():
        rope_interleaved_basic_kernel[(b * s * h,)](q, cos, sin, y, s, h, d // 2,
                                                    HALF_BLOCK=triton.next_power_of_2(d // 2))
    return y


# ---- v2 token: one program per token, the tile loaded whole and the pairs split in registers. ---------------------
@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (2, 4, 8)], key=["heads", "half"])
@triton.jit
def rope_interleaved_token_kernel(q_ptr, cos_ptr, sin_ptr, y_ptr, seq_len, heads, half, HEAD_BLOCK: tl.constexpr,
                                  HALF_BLOCK: tl.constexpr):
    token_row = tl.program_id(0).to(tl.int64)  # (b, s) flattened
    position = token_row % seq_len
    h = tl.arange(0, HEAD_BLOCK)[:, None]
    j = tl.arange(0, 2 * HALF_BLOCK)[None, :]
    at = (token_row * heads + h) * 2 * half + j
    mask = (h < heads) & (j < 2 * half)
    x = tl.load(q_ptr + at, mask=mask).to(tl.float32)
    a, b = tl.split(tl.reshape(x, (HEAD_BLOCK, HALF_BLOCK, 2)))  # the pairs' first and second values
    i = tl.arange(0, HALF_BLOCK)[None, :]
    c = tl.load(cos_ptr + position * half + i, mask=i < half).to(tl.float32)
    s = tl.load(sin_ptr + position * half + i, mask=i < half).to(tl.float32)
    y = tl.reshape(tl.join(a * c - b * s, b * c + a * s), (HEAD_BLOCK, 2 * HALF_BLOCK))
    tl.store(y_ptr + at, y.to(y_ptr.dtype.element_ty), mask=mask)


@variant("token")
def token(q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    y = checked_output("rope_interleaved", q, cos, sin)
    b, s, h, d = q.shape
    if q.numel():
        rope_interleaved_token_kernel[(b * s,)](q, cos, sin, y, s, h, d // 2, HEAD_BLOCK=triton.next_power_of_2(h),
                                                HALF_BLOCK=triton.next_power_of_2(d // 2))
    return y
