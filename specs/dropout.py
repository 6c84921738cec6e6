"""Seeded dropout: y = x / (1 - p) where element i is kept, 0 where it is dropped, the choice made by a counter-based
generator of (seed, i), so that every implementation must drop exactly the same elements.

The mask is fixed here, bit for bit:
  * the generator is Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), the
    one behind curand's curandStatePhilox4_32_10_t and Triton's tl.philox / tl.randint4x;
  * its key is the 64-bit seed (low word, high word); element i takes word i mod 4 of the block of four words the
    generator returns for the counter (g mod 2^32, g >> 32, 0, 0), g = i div 4: one generator call feeds four
    consecutive elements;
  * element i is dropped where that word r_i < p·2^32 (exactly: r_i >= ceil(p·2^32) keeps it), p the float32 value
    given, clamped to [0, 1];
  * a dropped element is 0 whatever x holds (a select, not a multiply: x·0 would turn a dropped inf into NaN).

The inputs are x, seed (one int64 on the device) and p (one float32 on the device): kernels read the seed and p from
device memory, so no call waits for the host (nor breaks a CUDA graph) to learn them. Seeds are drawn below 2^53
(the harness hands the reference float64 copies of every input, exact up to there), which still sets both words of
the key.

Bytes: x read once, y written once, 2 · numel · itemsize (the 12 bytes of seed and p left out). The generator's
ten rounds are integer multiplies, not counted as flops (flops: the one multiply per element); a kernel that runs
the generator once per element instead of once per four does four times that integer work, which is what the
first step of each side shows. CUDA: cuda_src/dropout.cu. Triton: triton_src/dropout.py.
"""
import math

import torch

from compare.spec import ELEMENTWISE_SHAPES, Op, Tolerance
from specs import _special

# Philox 4x32's round multipliers and key increments (Random123's PHILOX_M4x32_0/1, PHILOX_W32_0/1).
PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85
PHILOX_ROUNDS = 10
WORD = 0xFFFFFFFF
SEED_LIMIT = 2**53  # seeds drawn below this: exact in the float64 copies the reference gets


def _mulhilo(a: int, b):
    """The high and low 32-bit words of a·b for a < 2^32 and b holding a uint32 (an int64 tensor or an int): b in
    16-bit halves, so no partial product passes 2^48 and int64 never overflows."""
    low_half, high_half = a * (b & 0xFFFF), a * (b >> 16)
    return (high_half + (low_half >> 16)) >> 16, (low_half + ((high_half & 0xFFFF) << 16)) & WORD


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Philox 4x32-10 on counter words c0..c3 and key words k0, k1 (int64 tensors holding uint32s, or ints): the
    four output words. Written with torch's integer ops (and Python's: the same operators), as the reference."""
    for _ in range(PHILOX_ROUNDS):
        hi0, lo0 = _mulhilo(PHILOX_M0, c0)
        hi1, lo1 = _mulhilo(PHILOX_M1, c2)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        k0, k1 = (k0 + PHILOX_W0) & WORD, (k1 + PHILOX_W1) & WORD
    return c0, c1, c2, c3


def random_words(seed, first_group: int, groups: int, device):
    """The generator's words for groups first_group .. first_group + groups - 1, in element order (4 per group), as
    an int64 tensor; seed an int or an int64 tensor of one element (a tensor keeps torch.compile from specializing
    on its value)."""
    g = torch.arange(first_group, first_group + groups, device=device, dtype=torch.int64)
    words = philox4x32_10(g & WORD, g >> 32, 0, 0, seed & WORD, seed >> 32)
    return torch.stack(torch.broadcast_tensors(*words), dim=1).reshape(-1)


def keep_threshold(p: float) -> int:
    """The least word that keeps an element: ceil(p·2^32), p clamped to [0, 1] (exact: p·2^32 is p's exponent
    raised by 32)."""
    return math.ceil(min(max(p, 0.0), 1.0) * 2.0**32)


REFERENCE_GROUPS = 1 << 22  # groups per step of the reference: a few int64 tensors of 32 MB at a time


def keep_mask(seed: int, p: float, first: int, n: int, device) -> torch.Tensor:
    """Whether elements first .. first + n - 1 of a call are kept, as bools, computed REFERENCE_GROUPS generator
    calls at a time."""
    keep, threshold = torch.empty(n, dtype=torch.bool, device=device), keep_threshold(p)
    end_group = (first + n + 3) // 4
    for group in range(first // 4, end_group, REFERENCE_GROUPS):
        words = random_words(seed, group, min(REFERENCE_GROUPS, end_group - group), device)
        start = 4 * group - first  # where this step's first word falls among the n elements (negative at first)
        words = words[max(0, -start): n - start]
        keep[max(0, start): max(0, start) + words.numel()] = words >= threshold
    return keep


def reference_from(first: int, x, seed, p):
    """The reference for elements first, first + 1, ... of a call, given those elements as x: the mask's words
    are those of their place in the whole call."""
    seed, p = int(seed.item()), float(p.item())
    keep = keep_mask(seed, p, first, x.numel(), x.device).reshape(x.shape)
    return torch.where(keep, x / (1.0 - p), torch.zeros((), dtype=x.dtype, device=x.device))


def reference(x, seed, p):
    return reference_from(0, x, seed, p)


def torch_eager(x, seed, p):
    """The mask in torch's integer ops (torch.nn.functional.dropout draws from torch's own generator state, a
    different stream: it cannot reproduce this mask), then the select."""
    words = random_words(seed, 0, (x.numel() + 3) // 4, x.device)[: x.numel()]
    threshold = torch.ceil(p.clamp(0.0, 1.0).double() * 2.0**32).long()
    keep = (words >= threshold).reshape(x.shape)
    return torch.where(keep, x.float() / (1.0 - p), 0.0).to(x.dtype)


def _first_kept_seed(p: float, device, generator) -> torch.Tensor:
    """A seed under which element 0 is kept: candidates drawn at once, the first that keeps it taken. With element 0
    kept and x[0] nonzero, no case is one an all-zeros output could pass (the judge refuses those as degenerate:
    one element at p near 1 would nearly always be)."""
    threshold = keep_threshold(p)
    candidates = torch.randint(0, SEED_LIMIT, (4096,), generator=generator, device=device, dtype=torch.int64)
    for seed in candidates.tolist():
        if philox4x32_10(0, 0, 0, 0, seed & WORD, seed >> 32)[0] >= threshold:
            return torch.tensor([seed], dtype=torch.int64, device=device)
    raise RuntimeError(f"dropout: no seed among 4096 keeps element 0 at p = {p}; make_inputs needs a lower p")


def _inputs_at(p: float, x: torch.Tensor, device, generator) -> tuple:
    return x, _first_kept_seed(p, device, generator), torch.tensor([p], dtype=torch.float32, device=device)


def _random_x(shape, dtype, device, generator):
    x = torch.randn(shape, device=device, generator=generator, dtype=torch.float32)
    if x.numel():
        x.reshape(-1)[:1] = 1.0 + x.reshape(-1)[:1].abs()  # element 0, always kept, is nonzero
    return x.to(dtype)


def make_inputs(shape, dtype, device, generator):
    """x from a normal distribution; p uniform in [0.05, 0.95) (as float32: any value, not only round ones, so the
    threshold's rounding is exercised); the seed uniform below 2^53."""
    x = _random_x(shape, dtype, device, generator)
    p = float(0.05 + 0.9 * torch.rand((), generator=generator, device=device, dtype=torch.float32))  # a float32
    return _inputs_at(p, x, device, generator)


def keep_all(shape, dtype, device, generator):
    """p = 0: every element kept, y = x exactly (the scale is 1)."""
    return _inputs_at(0.0, _random_x(shape, dtype, device, generator), device, generator)


def drop_nearly_all(shape, dtype, device, generator):
    """p = 1 - 2^-8: about one element in 256 kept (element 0 among them), each scaled by 256."""
    return _inputs_at(1.0 - 2.0**-8, _random_x(shape, dtype, device, generator), device, generator)


def inf_and_nan(shape, dtype, device, generator):
    """x with +inf, -inf and NaN each replacing 1 element in 16, p = 0.5: a dropped one is 0 (a kernel that
    multiplies by the mask returns NaN there), a kept one stays inf or NaN."""
    x = _special.sprinkle(_random_x(shape, dtype, device, generator), generator)
    return _inputs_at(0.5, x, device, generator)


# Tolerances: the mask is exact or far off (a kept element where the reference has 0, or 0 where it has x/(1-p)),
# so the bound is about the scale. A kernel computes x·(1/(1-p)) or x/(1-p) in fp32: 1 - p rounds once (half an
# ulp), the reciprocal or the division once more (IEEE: half an ulp; Triton's default division, div.full.f32: two
# ulps), the product once: at most 3.5 fp32 ulps from the exact value, so 4 ulps of the correctly rounded one in
# fp32. fp16/bf16 are computed in the same fp32 arithmetic and rounded once: within 1 ulp. atol = 0: the kept
# values are the inputs scaled, the dropped ones exactly 0.
TOLERANCES = {
    torch.float32: Tolerance(atol=0.0, rtol=0.0, ulps=4),
    torch.float16: Tolerance(atol=0.0, rtol=0.0, ulps=1),
    torch.bfloat16: Tolerance(atol=0.0, rtol=0.0, ulps=1),
}

OP = Op(
    name="dropout",
    summary="seeded dropout, Philox 4x32-10 mask (elementwise, memory-bound)",
    make_inputs=make_inputs,
    reference=reference,
    reference_from=reference_from,
    torch_eager=torch_eager,
    bytes_moved=lambda shape, dtype: 2 * math.prod(shape) * dtype.itemsize,
    flops=lambda shape: math.prod(shape),
    **ELEMENTWISE_SHAPES,
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    ladder_cells=[(torch.float32, (1 << 28,)), (torch.bfloat16, (1 << 28,))],
    special_inputs={"keep all": keep_all, "drop nearly all": drop_nearly_all, "inf and nan": inf_and_nan},
    tolerances=TOLERANCES,
)
