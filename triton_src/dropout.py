"""Seeded dropout in Triton. Spec (the mask, bit for bit): specs/dropout.py. CUDA side: cuda_src/dropout.cu.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/dropout.md):
  v1 basic    the tutorial's shape: one program per block of elements, one generator call per element (it keeps
              one of the four words Philox returns and throws three away)
  v2 rand4x   one generator call per four elements: a block of groups as a [groups, 4] tile, each row of the tile
              taking its group's four words; block size and warps autotuned
  v3 persistent  a grid the GPU holds at once, each program taking tile after tile; the four words of each call
              interleaved into the elements' order (no per-element choice of word) and compared as uint32; measured
              slower than v2 (see the step's comment)

Triton's generator is tl.philox(seed, c0, c1, c2, c3): ten rounds of Philox 4x32 on a counter of four words, keyed
by the 64-bit seed, returning four uint32 words; tl.randint4x(seed, offset) is the same call with the counter
(offset, 0, 0, 0) (the high word of a 64-bit offset in c1, in recent Triton). The spec's counter for element i is
(g mod 2^32, g >> 32, 0, 0), g = i div 4, and i takes word i mod 4; tl.philox is called with it spelled out.
"""
import torch
import triton
import triton.language as tl

import triton_src
from compare.spec import variant
from compare.validate import InputError, check_inputs

TWO_TO_32 = tl.constexpr(4294967296.0)


@triton.jit
def _seed_and_threshold(seed_ptr, p_ptr):
    """The seed, the least word that keeps an element (ceil(p·2^32), p clamped to [0, 1]: exact in fp32, p·2^32 only
    raises p's exponent) and the scale 1/(1-p), all read from device memory."""
    seed = tl.load(seed_ptr)
    p = tl.load(p_ptr)
    threshold = tl.ceil(tl.minimum(tl.maximum(p, 0.0), 1.0) * TWO_TO_32).to(tl.int64)
    return seed, threshold, 1.0 / (1.0 - p)


@triton.jit
def _philox_of_groups(seed, groups):
    """The four words of the spec's counter (g mod 2^32, g >> 32, 0, 0) for each group g (int64)."""
    low, high = groups.to(tl.uint32), (groups >> 32).to(tl.uint32)
    zero = low * 0
    return tl.philox(seed, low, high, zero, zero)


# ---- v1 basic: one generator call per element, as the Triton tutorial's seeded dropout does it. ------------------
# Each element asks for its group's four words and keeps one (word i mod 4): the generator's integer work, ten
# rounds of two 32x32 multiplies, is done four times over, and at bandwidth speed that work is what limits it.
@triton.jit
def dropout_basic_kernel(x_ptr, seed_ptr, p_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)  # int64: n may exceed 2^31
    mask = offsets < n_elements
    seed, threshold, scale = _seed_and_threshold(seed_ptr, p_ptr)
    w0, w1, w2, w3 = _philox_of_groups(seed, offsets // 4)
    lane = offsets % 4
    word = tl.where(lane == 0, w0, tl.where(lane == 1, w1, tl.where(lane == 2, w2, w3)))
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.where(word.to(tl.int64) >= threshold, x * scale, 0.0)  # a select: a dropped inf is 0, not NaN
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def _checked(x, seed, p):
    check_inputs("dropout", ("x", x))
    check_inputs("dropout", ("seed", seed), dtypes=(torch.int64,))
    check_inputs("dropout", ("p", p), dtypes=(torch.float32,))
    for name, t in (("seed", seed), ("p", p)):
        if t.numel() != 1 or t.device != x.device:
            raise InputError(f"dropout: {name} must be one element on {x.device} (got shape {tuple(t.shape)} on "
                             f"{t.device})")
    return torch.empty_like(x)


@variant("basic")
def basic(x: torch.Tensor, seed: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    y = _checked(x, seed, p)
    n = x.numel()
    if n:
        dropout_basic_kernel[(triton.cdiv(n, 1024),)](x, seed, p, y, n, BLOCK=1024)
    return y


# ---- v2 rand4x: one generator call per four elements. -------------------------------------------------------------
# A program takes GROUPS groups of four consecutive elements as a [GROUPS, 4] tile: one tl.philox per row gives
# the row's four words, and column j takes word j. The tile's rows are contiguous in memory, so its loads are as
# wide as v1's; the integer work per element is a quarter of v1's.
@triton.autotune(
    configs=[triton.Config({"GROUPS": groups}, num_warps=warps) for groups in (256, 512, 1024, 2048)
             for warps in (4, 8)],
    key=["n_elements"],
)
@triton.jit
def dropout_rand4x_kernel(x_ptr, seed_ptr, p_ptr, y_ptr, n_elements, GROUPS: tl.constexpr):
    groups = tl.program_id(0).to(tl.int64) * GROUPS + tl.arange(0, GROUPS)
    lane = tl.arange(0, 4)[None, :]
    offsets = groups[:, None] * 4 + lane
    mask = offsets < n_elements
    seed, threshold, scale = _seed_and_threshold(seed_ptr, p_ptr)
    w0, w1, w2, w3 = _philox_of_groups(seed, groups)
    word = tl.where(lane == 0, w0[:, None],
                    tl.where(lane == 1, w1[:, None], tl.where(lane == 2, w2[:, None], w3[:, None])))
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.where(word.to(tl.int64) >= threshold, x * scale, 0.0)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


@variant("rand4x")
def rand4x(x: torch.Tensor, seed: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    y = _checked(x, seed, p)
    n = x.numel()
    if n:
        dropout_rand4x_kernel[lambda meta: (triton.cdiv(n, 4 * meta["GROUPS"]),)](x, seed, p, y, n)
    return y


# ---- v3 persistent: a resident grid, tiles in turn, the words in element order. -------------------------------------
# v2 picks each element's word with three selects on its lane and compares it as int64 against the threshold: per
# element, more integer work than the generator's own share (results/<gpu>/dropout-profile.md). Here the four words
# of each group are interleaved into the elements' order (tl.interleave twice: w0 w1 w2 w3 of group g at elements
# 4g .. 4g+3), so the tile of words lines up with the tile of x, and each is compared as a uint32 with the
# threshold, capped at 2^32 - 1 (p = 1, whose threshold 2^32 no word reaches, is a flag). The grid is what the GPU
# holds at once, each program looping over tiles, so the loads of seed and p and the threshold's arithmetic happen
# once per program, not once per tile.
# What it bought: nothing; it is slower than v2 (results/nvidia-h200/dropout.md, commit b0e1a4f). Under the
# profiler (results/nvidia-h200/dropout-profile.md, same commit) the interleave's register shuffles cost about what
# the selects did, and PROGRAMS_PER_SM programs at the warps the autotuner picked leave each SM part empty, so each
# program's loop waits on its own loads. The row stays because it shows that a persistent loop and fewer selects
# are not free in Triton.
PROGRAMS_PER_SM = 4


@triton.autotune(
    configs=[triton.Config({"GROUPS": groups}, num_warps=warps) for groups in (256, 512, 1024) for warps in (4, 8)],
    key=["n_elements"],
)
@triton.jit
def dropout_persistent_kernel(x_ptr, seed_ptr, p_ptr, y_ptr, n_elements, GROUPS: tl.constexpr):
    seed, threshold, scale = _seed_and_threshold(seed_ptr, p_ptr)
    keep_some = threshold <= 0xFFFFFFFF
    threshold32 = tl.minimum(threshold, 0xFFFFFFFF).to(tl.uint32)
    tiles = tl.cdiv(n_elements, 4 * GROUPS)
    for tile in tl.range(tl.program_id(0).to(tl.int64), tiles, tl.num_programs(0)):  # int64: n may pass 2^31
        first_group = tile * GROUPS
        w0, w1, w2, w3 = _philox_of_groups(seed, first_group + tl.arange(0, GROUPS))
        words = tl.interleave(tl.interleave(w0, w2), tl.interleave(w1, w3))  # w0 w1 w2 w3 of each group in turn
        offsets = first_group * 4 + tl.arange(0, 4 * GROUPS)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
        y = tl.where((words >= threshold32) & keep_some, x * scale, 0.0)
        tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


@variant("persistent")
def persistent(x: torch.Tensor, seed: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    y = _checked(x, seed, p)
    n = x.numel()
    if n:
        programs = PROGRAMS_PER_SM * triton_src.sm_count(x.device, on_interpreter=2)
        dropout_persistent_kernel[lambda meta: (min(programs, triton.cdiv(n, 4 * meta["GROUPS"])),)](
            x, seed, p, y, n)
    return y
