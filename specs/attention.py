"""Fused attention forward, non-causal: O = softmax(Q Kᵀ · D^-1/2) V for Q, K, V of shape (B, H, S, D) in float16 or
bfloat16, O in the same dtype, every sum in float32. The causal form (key j masked out of query i's row for j > i)
is specs/attention_causal.py, the same spec with the mask on.

FLOPs are counted the standard way: 4·B·H·S²·D (two S×S×D matrix products per head; the softmax's exponentials are
not counted), halved for the causal form, whose masked half no kernel needs to compute. The bytes are Q, K, V read
once and O written once; at S = 4K and D = 128 that is ~1000 flops per byte, so the op is compute-bound and the
ceiling is the vendor library: the fastest of PyTorch's scaled_dot_product_attention backends (cuDNN, FlashAttention-2,
memory-efficient), each a row torch:sdpa-<backend> timed in the same run at the same shape (Op.ceiling_rows).
torch:eager is the plain math a reader would write (scores materialized, softmax, then P V); torch:compile compiles it.

Inputs (make_inputs): q ~ N(0, 4) and k ~ N(0, 1), so every score q·k·D^-1/2 is ~N(0, 4): each query attends to a
few hundred keys at S = 16K rather than to all of them evenly, and a kernel that drops a key tile or masks the wrong
keys changes its outputs by far more than the tolerance at the check shapes. v = (u + c)/2 with u uniform in
[-1, 1) per element and c uniform in [-1, 1) per (b, h, d): every |v| < 1, and each output column keeps a mean of its
own at long S, so no all-zeros or constant output could pass (the judge refuses such cases as degenerate).

The arithmetic the tolerance allows (tolerances), with u the unit roundoff of the input dtype (2^-11 fp16, 2^-8
bf16) and |v| <= 1:
  * the scores: products of two fp16/bf16 values are exact in float32 and the D-long sums round by about
    2^-24·sqrt(D) of their size, the scale (and a folded log2 e, for exp2) adds a few roundings more: an error ε in a
    score is a relative error ε in its probability, so 2^-24·(sqrt(D) + 4)·s_max, s_max the largest score's size
    for the input set (16 for the random inputs, 200 for "large scores": 8 of their standard deviations);
  * the probabilities P are rounded to the input dtype before the P V product on the tensor cores (as every
    FlashAttention does): a relative error u per term, so u·Σ p_j|v_j| <= u in the output; the row sum l may be taken
    from the rounded or the unrounded P, another u;
  * the float32 sums over S (O's accumulator and l), with rescaling by the running maximum: a random walk of about
    2^-24·sqrt(S) each; 2^-21·sqrt(S) leaves a wide margin, as in specs/matmul.py;
  * O is rounded once to the output dtype: one ulp.
A kernel that skips the max subtraction (exp overflows on "large scores"), masks one key too many or too few, scales
by 1/D, forgets to rescale its accumulator when the running maximum moves, or drops a key tile is off by far more at
the check shapes (tests/test_attention.py plants each).

The float64 reference materializes the scores a block of queries at a time (at most 2^27 of them, 1 GiB), so it fits
at every bench shape. CUDA: cuda_src/attention.cu. Triton: triton_src/attention.py.
"""
from __future__ import annotations

import math

import torch

from compare.spec import Op, Tolerance

# Scores' size for the tolerance's score term, per input set: about 8 standard deviations of q·k·D^-1/2.
_SCORE_SIZE = {"random": 16.0, "large scores": 200.0, "equal scores": 1.0}
REFERENCE_SCORES = 1 << 27  # the float64 reference's score block: 1 GiB


def _values(shape, device, generator):
    b, h, s, d = shape
    per_element = torch.rand(shape, device=device, generator=generator) * 2 - 1
    per_column = torch.rand((b, h, 1, d), device=device, generator=generator) * 2 - 1
    return (per_element + per_column) * 0.5


def make_inputs(shape, dtype, device, generator):
    q = torch.randn(shape, device=device, generator=generator) * 2.0
    k = torch.randn(shape, device=device, generator=generator)
    return q.to(dtype), k.to(dtype), _values(shape, device, generator).to(dtype)


def large_scores(shape, dtype, device, generator):
    """q and k ~ N(0, 25): scores ~N(0, 625), hundreds in size, so exp of an unshifted score overflows float32 (past
    88): a kernel that does not subtract the row's running maximum returns inf or NaN."""
    q = torch.randn(shape, device=device, generator=generator) * 5.0
    k = torch.randn(shape, device=device, generator=generator) * 5.0
    return q.to(dtype), k.to(dtype), _values(shape, device, generator).to(dtype)


def equal_scores(shape, dtype, device, generator):
    """q = 0: every score is 0 and each output is the plain mean of the values it sees (the first i + 1 of them,
    causal): a kernel's row sum l must count every key exactly once."""
    _, k, v = make_inputs(shape, dtype, device, generator)
    return torch.zeros(shape, device=device, dtype=dtype), k, v


def attention_reference(q, k, v, causal: bool):
    """softmax(q kᵀ / sqrt(D) [+ mask]) v in the inputs' dtype (float64 for the judge), the scores a block of queries
    at a time."""
    b, h, s, d = q.shape
    out = torch.empty_like(q)
    if q.numel() == 0:
        return out
    scale = d ** -0.5
    block = max(1, REFERENCE_SCORES // max(1, b * h * k.shape[-2]))
    for start in range(0, s, block):
        stop = min(s, start + block)
        scores = torch.matmul(q[..., start:stop, :], k.transpose(-2, -1)) * scale
        if causal:
            rows = torch.arange(start, stop, device=q.device)[:, None]
            cols = torch.arange(k.shape[-2], device=q.device)[None, :]
            scores.masked_fill_(cols > rows, float("-inf"))
        out[..., start:stop, :] = torch.matmul(torch.softmax(scores, dim=-1), v)
    return out


def reference(q, k, v):
    return attention_reference(q, k, v, causal=False)


# torch.bmm(a, b, out_dtype=torch.float32): fp16/bf16 products with float32 results, on CUDA (asked once, outside
# what torch.compile traces).
BMM_TO_FLOAT32 = hasattr(torch.ops.aten.bmm, "dtype")


def eager(q, k, v, causal: bool):
    """The plain math: the scores in float32 (fp16/bf16 products, float32 results: torch.bmm's out_dtype on CUDA),
    masked, softmax in float32 (max subtracted, exp, divided by the sum), P rounded to the input dtype, then P V on
    the tensor cores. Scores rounded to fp16 or bf16 instead would carry an error of 2^-11 or 2^-8 of their size into
    every probability: past the spec's tolerance for scores in the hundreds (tests/test_attention.py)."""
    b, h, s, d = q.shape
    q3, k3 = q.reshape(b * h, s, d), k.reshape(b * h, k.shape[-2], d)
    if q.is_cuda and BMM_TO_FLOAT32:
        scores = torch.bmm(q3, k3.transpose(1, 2), out_dtype=torch.float32)
    else:
        scores = torch.bmm(q3.float(), k3.float().transpose(1, 2))
    # The softmax in place, step by step: at S = 16K and H = 32 one float32 copy of the scores is 32 GiB, and
    # torch.softmax's output would be a second.
    scores = scores.view(b, h, s, k.shape[-2]).mul_(d ** -0.5)
    if causal:
        scores.masked_fill_(torch.ones((s, s), dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    scores.sub_(scores.amax(dim=-1, keepdim=True)).exp_()
    scores.div_(scores.sum(dim=-1, keepdim=True))
    return torch.matmul(scores.to(q.dtype), v)


def torch_eager(q, k, v):
    return eager(q, k, v, causal=False)


def aligned_contiguous(t: torch.Tensor) -> torch.Tensor:
    """t itself where it is row-major with a 16-byte aligned base, else such a copy. Strides are compared, not
    is_contiguous(), which ignores those of size-1 dimensions (the transposed S = 1 input keeps them)."""
    row_major = [math.prod(t.shape[i + 1:]) for i in range(t.dim())]
    if list(t.stride()) == row_major and t.data_ptr() % 16 == 0:
        return t
    return t.clone(memory_format=torch.contiguous_format)


def sdpa(backend: str, causal: bool):
    """torch.nn.functional.scaled_dot_product_attention pinned to one backend (SDPBackend.<backend>): a vendor row."""

    def run(q, k, v):
        from torch.nn.attention import SDPBackend, sdpa_kernel

        # The fused backends need unit-stride rows at 16-byte aligned addresses: strided or offset check inputs
        # (column slices, transposes, a base one element in) make cuDNN write NaN and flash fault, so they get
        # aligned contiguous copies (nothing is copied at the timed, contiguous shapes).
        q, k, v = (aligned_contiguous(t) for t in (q, k, v))
        with sdpa_kernel(getattr(SDPBackend, backend)):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return run


def vendor_rows(causal: bool) -> dict:
    return {"sdpa-cudnn": sdpa("CUDNN_ATTENTION", causal), "sdpa-flash": sdpa("FLASH_ATTENTION", causal),
            "sdpa-efficient": sdpa("EFFICIENT_ATTENTION", causal)}


# cuDNN's attention refuses a key sequence of length 1 ("No available kernel"): its row skips S = 1.
SDPA_REFUSES = {"torch:sdpa-cudnn": lambda shape: shape[2] == 1}

UNIT_ROUNDOFF = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}


def tolerances(dtype, shape, inputs="random"):
    _, _, s, d = shape
    scores = 2.0**-24 * (math.sqrt(d) + 4) * _SCORE_SIZE.get(inputs, _SCORE_SIZE["random"])
    atol = 2 * UNIT_ROUNDOFF[dtype] + 2.0**-21 * math.sqrt(max(s, 1)) + scores
    return Tolerance(atol=atol, rtol=0.0, ulps=1)


def flops(shape, causal: bool = False) -> int:
    b, h, s, d = shape
    return 4 * b * h * s * s * d // (2 if causal else 1)


# B·S = 16384 tokens per batch and H·D = 2048: S = 512, 2K, 4K and 16K at D = 128, and D = 64 at S = 4K. Every
# bench shape is also a check shape, judged per row against the float64 reference at up to 2^41 flops per call, so
# each length added costs every row minutes: these five span short to long sequences and both head dims.
BENCH_SHAPES = [(32, 16, 512, 128), (8, 16, 2048, 128), (4, 16, 4096, 128), (1, 16, 16384, 128), (4, 32, 4096, 64)]

OP = Op(
    name="attention",
    summary="fused attention forward, softmax(Q Kᵀ/sqrt(D)) V, Q K V (B, H, S, D) (compute-bound)",
    make_inputs=make_inputs,
    reference=reference,
    torch_eager=torch_eager,
    bytes_moved=lambda shape, dtype: 4 * math.prod(shape) * dtype.itemsize,
    flops=flops,
    # One token; S a multiple of no tile (77, 200, 1000), just past one (513), both head dims; every bench shape too.
    check_shapes=[(1, 1, 1, 64), (2, 3, 77, 64), (1, 2, 200, 128), (2, 2, 513, 64), (1, 1, 1000, 128)],
    bench_shapes=BENCH_SHAPES,
    quick_bench_shapes=[(16, 16, 1024, 128), (4, 16, 4096, 128)],
    interpret_shapes=[(1, 1, 1, 64), (1, 2, 37, 64), (2, 1, 200, 128)],
    shape_names=("B", "H", "S", "D"),
    ladder_cells=[(torch.float16, (4, 16, 4096, 128)), (torch.bfloat16, (1, 16, 16384, 128))],
    dtypes=(torch.float16, torch.bfloat16),
    tolerances=tolerances,
    special_inputs={"large scores": large_scores, "equal scores": equal_scores},
    roofline="compute",
    counting="FLOPs 4·B·H·S²·D, the two S×S×D matrix products of each head (the softmax's exponentials not counted); "
             "bytes: Q, K and V read once, O written once",
    # wgmma, setmaxnreg and the sm_90a build exist on Hopper only; elsewhere the row is reported as skipped.
    requires_capability={"cuda:wgmma": (9, 0)},
    vendor_rows=vendor_rows(causal=False),
    ceiling_rows=("torch:sdpa-cudnn", "torch:sdpa-flash", "torch:sdpa-efficient"),
    unsupported_shapes=SDPA_REFUSES,
    # q, k and v of 2^31 + 2^14 elements each, 128-token sequences: a flat index past 2^31 in every tensor.
    index_overflow_shape=(131073, 1, 128, 128),
)
