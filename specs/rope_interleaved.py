"""Rotary position embedding (RoPE), the interleaved layout of GPT-J (and of Meta's original Llama code, as complex
pairs), applied to q of shape (B, S, H, D): for each token s, head h and i < D/2, the pair (q[2i], q[2i + 1]) is
rotated by the angle of (s, i):

    y[..., 2i]      = q[..., 2i] · cos[s, i] − q[..., 2i + 1] · sin[s, i]
    y[..., 2i + 1]  = q[..., 2i + 1] · cos[s, i] + q[..., 2i] · sin[s, i]

Everything but the pairing is specs/rope.py's: the (S, D/2) tables, the shapes, the bytes and the tolerances (the
arithmetic per pair is the same). A kernel of one layout given the other's q pairs the wrong elements, which the
checks catch (tests/test_rope.py). CUDA: cuda_src/rope_interleaved.cu. Triton: triton_src/rope_interleaved.py.
"""
import dataclasses

import torch

from specs import rope


def reference(q, cos, sin):
    a, b = q[..., 0::2], q[..., 1::2]
    c, s = cos[None, :, None, :], sin[None, :, None, :]  # (S, D/2) against (B, S, H, D/2)
    return torch.stack([a * c - b * s, b * c + a * s], dim=-1).flatten(-2)


def torch_eager(q, cos, sin):
    """What GPT-J's model code writes (rotate_every_two, tables repeated to every element), in fp32 and rounded
    once."""
    c = cos.repeat_interleave(2, dim=-1)[None, :, None, :].float()
    s = sin.repeat_interleave(2, dim=-1)[None, :, None, :].float()
    x = q.float()
    rotated = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return (x * c + rotated * s).to(q.dtype)


OP = dataclasses.replace(
    rope.OP,
    name="rope_interleaved",
    summary="rotary embedding, interleaved (GPT-J) layout, q (B, S, H, D) (memory-bound)",
    reference=reference,
    torch_eager=torch_eager,
    peers={},  # Liger-Kernel's RoPE is half-split only
)
