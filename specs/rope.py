"""Rotary position embedding (RoPE), the half-split layout of GPT-NeoX and Llama, applied to q of shape (B, S, H, D):
for each token s, head h and i < D/2, the pair (q[i], q[i + D/2]) is rotated by the angle of (s, i):

    y[..., i]        = q[..., i] · cos[s, i] − q[..., i + D/2] · sin[s, i]
    y[..., i + D/2]  = q[..., i + D/2] · cos[s, i] + q[..., i] · sin[s, i]

cos and sin are (S, D/2) tables in q's dtype, as models keep them precomputed (angle s · 10000^(−2i/D), computed in
float64 here and rounded once). The interleaved layout of GPT-J (pairs (2i, 2i + 1)) is the op rope_interleaved
(specs/rope_interleaved.py), with the same inputs, shapes and tolerances.

Bytes: q read once, y written once, each table read once: 2 · B·S·H·D · itemsize + 2 · S · D/2 · itemsize; six
flops per pair. The tables are H times smaller than q and shared by every head of a token: a kernel that reads them
again for every head reads them from cache, not from memory. CUDA: cuda_src/rope.cu. Triton: triton_src/rope.py.
"""
import math

import torch

from compare.spec import Op, Peer, Tolerance
from specs import _special

BASE = 10000.0


def tables(seq_len: int, head_dim: int, dtype, device):
    """cos and sin of s · BASE^(−2i/D) for s < seq_len, i < D/2, in float64 rounded once to dtype."""
    inv_freq = BASE ** (-torch.arange(0, head_dim // 2, dtype=torch.float64, device=device) * 2.0 / head_dim)
    angles = torch.arange(seq_len, dtype=torch.float64, device=device)[:, None] * inv_freq[None, :]
    return angles.cos().to(dtype), angles.sin().to(dtype)


def make_inputs(shape, dtype, device, generator):
    b, s, h, d = shape
    q = torch.randn(shape, device=device, generator=generator, dtype=torch.float32).to(dtype)
    return (q, *tables(s, d, dtype, device))


def inf_and_nan(shape, dtype, device, generator):
    """q with +inf, -inf and NaN each replacing 1 element in 16: each spreads to its pair partner's output too (an
    inf times a sine or cosine), as the formula says."""
    q, cos, sin = make_inputs(shape, dtype, device, generator)
    return _special.sprinkle(q, generator), cos, sin


def reference(q, cos, sin):
    half = q.shape[-1] // 2
    first, second = q[..., :half], q[..., half:]
    c, s = cos[None, :, None, :], sin[None, :, None, :]  # (S, D/2) against (B, S, H, D/2)
    return torch.cat([first * c - second * s, second * c + first * s], dim=-1)


def torch_eager(q, cos, sin):
    """What model code writes (rotate_half, tables repeated to the full width), in fp32 and rounded once."""
    c = torch.cat([cos, cos], dim=-1)[None, :, None, :].float()
    s = torch.cat([sin, sin], dim=-1)[None, :, None, :].float()
    half = q.shape[-1] // 2
    rotated = torch.cat([-q[..., half:], q[..., :half]], dim=-1).float()
    return (q.float() * c + rotated * s).to(q.dtype)


def load_liger():
    """Liger-Kernel's RoPE (liger_kernel.ops.rope.rope_forward), the row peer:liger, imported in the row's worker
    only. Its kernel takes q and k together and rotates them in place, q given as the (B, H, S, D) view of
    (B, S, H, D) memory, as in Hugging Face models; these tables are its undoubled form (width D/2, rotary_dim = D).
    It computes in the tables' dtype: with 16-bit tables every product and sum is rounded to 16 bits, further from
    the exact rotation than the spec's one ulp, so it gets the tables in float32 (made before timing; 2/H more bytes
    read than q's dtype would take). k is one head per token, the fewest it takes: 1/H more bytes again.
    In place: a check calls it on a copy of q and returns what it returns (a new tensor where q is not contiguous);
    timing gives it a working copy of q per input set (lab_prepare), restored from a pristine one before each timed
    call, outside the events (lab_restore), and times the in-place call alone (lab_timed)."""
    from liger_kernel.ops.rope import rope_forward

    def prepare(q, cos, sin):
        k = q.new_empty(q.shape[0], q.shape[1], 1, q.shape[3])
        return q.clone(), q.clone(), k, cos.float(), sin.float()

    def rotate_in_place(work, pristine, k, cos, sin):
        rotated, *_ = rope_forward(work.transpose(1, 2), k.transpose(1, 2), cos, sin, rotary_dim=work.shape[-1])
        return rotated.transpose(1, 2)

    def restore(work, pristine, k, cos, sin):
        work.copy_(pristine)

    def liger_rope(q, cos, sin):
        return rotate_in_place(*prepare(q, cos, sin))

    liger_rope.lab_prepare, liger_rope.lab_timed, liger_rope.lab_restore = prepare, rotate_in_place, restore
    return liger_rope


# Tolerances. Each output is a·c ± b·s computed in fp32, with or without a fused multiply-add: its error is at most
# 2^-24 · (|a·c| + |b·s|) from rounding the products, plus half an ulp of the result. The terms can cancel, so the
# first part is absolute: under atol = 2^-20 while |a| + |b| < 16 (normal inputs reach about 6 each). The rest is
# within 2 ulps (fp32) or, rounded once to fp16/bf16, 1 ulp of the correctly rounded value. A pair rotated the wrong way
# (sin's sign), the interleaved pairing or a table read for the wrong token is off by the size of the values.
ATOL = 2.0**-20
TOLERANCES = {
    torch.float32: Tolerance(atol=ATOL, rtol=0.0, ulps=2),
    torch.float16: Tolerance(atol=ATOL, rtol=0.0, ulps=1),
    torch.bfloat16: Tolerance(atol=ATOL, rtol=0.0, ulps=1),
}


def _bytes(shape, dtype):
    b, s, h, d = shape
    return (2 * b * s * h * d + 2 * s * (d // 2)) * dtype.itemsize


OP = Op(
    name="rope",
    summary="rotary embedding, half-split layout, q (B, S, H, D) (memory-bound)",
    make_inputs=make_inputs,
    reference=reference,
    torch_eager=torch_eager,
    bytes_moved=_bytes,
    flops=lambda shape: 3 * math.prod(shape),
    # D = 2 (one pair), odd S and H, D = 80 and 96 (not powers of two), D = 36 (a half of 18 elements, not whole
    # 16-byte packets: vectorized rows must take another path), a long sequence; the bench shapes join them.
    check_shapes=[(1, 1, 1, 2), (2, 7, 3, 64), (1, 33, 5, 128), (3, 17, 2, 80), (2, 129, 4, 96), (3, 11, 2, 36),
                  (1, 1000, 8, 128)],
    # 2K, 16K and 32K tokens of 32 heads of 128, and 32K tokens of 32 heads of 64: up to 512 MiB of q in fp32
    bench_shapes=[(1, 2048, 32, 128), (4, 4096, 32, 128), (8, 4096, 32, 128), (16, 2048, 32, 64)],
    quick_bench_shapes=[(1, 2048, 32, 128), (4, 4096, 32, 128)],
    interpret_shapes=[(1, 1, 1, 2), (2, 5, 3, 16), (1, 9, 2, 80)],
    shape_names=("B", "S", "H", "D"),
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    special_inputs={"inf and nan": inf_and_nan},
    tolerances=TOLERANCES,
    peers={"liger": Peer("liger_kernel", load_liger, "liger-kernel")},
)
