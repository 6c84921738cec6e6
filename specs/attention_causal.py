"""Fused attention forward, causal: O = softmax(Q Kᵀ · D^-1/2 + M) V with M[i, j] = -inf for key j > query i (the
mask of a decoder: each token sees itself and the tokens before it). Everything else is specs/attention.py's: the
shapes, inputs, tolerances and the vendor rows (with is_causal=True). FLOPs are half the non-causal count,
2·B·H·S²·D, the standard convention: the masked half is work no kernel needs to do, so a kernel that computes it and
throws it away is slower, not credited. The check shapes' S (77, 200, 513, 1000) put the diagonal through the middle
of tiles of every size.

The kernels are attention's, instantiated with the mask on: cuda_src/attention_causal.cu compiles
cuda_src/attention.cu's kernels and registers them with causal = true; triton_src/attention_causal.py calls
triton_src/attention.py's kernels with CAUSAL set.
"""
import dataclasses

from specs import attention


def reference(q, k, v):
    return attention.attention_reference(q, k, v, causal=True)


def torch_eager(q, k, v):
    return attention.eager(q, k, v, causal=True)


OP = dataclasses.replace(
    attention.OP,
    name="attention_causal",
    summary="fused attention forward, causal, softmax(Q Kᵀ/sqrt(D) + mask) V, Q K V (B, H, S, D) (compute-bound)",
    reference=reference,
    torch_eager=torch_eager,
    flops=lambda shape: attention.flops(shape, causal=True),
    counting="FLOPs 2·B·H·S²·D, half the non-causal count: the masked half of the scores is not credited "
             "(the exponentials not counted); bytes: Q, K and V read once, O written once",
    vendor_rows=attention.vendor_rows(causal=True),
)
