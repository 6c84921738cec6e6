"""Fused attention forward (FlashAttention) in Triton, non-causal. Spec: specs/attention.py. CUDA side:
cuda_src/attention.cu. The causal op (triton_src/attention_causal.py) runs these kernels with CAUSAL set.

Steps (each one a row, triton:<name>; measured figures: results/<gpu>/attention.md):
  v1 basic    the tutorial's kernel: one program per (block of 64 queries, head), the scores of one 64-key tile at a
              time in registers, an online softmax (running max and sum, the accumulator rescaled when the max
              moves), P rounded to the input dtype for the P V product; every tile masked
  v2 tuned    masks only where they can matter (the key tail; for the causal op the tiles the diagonal crosses, the
              tiles past it skipped and the longest query blocks started first), tiles, warps and pipeline depth
              autotuned per sequence length
  v3 tma      v2 with Q, K, V and O moved by the TMA unit through host-side tensor descriptors of (B·H, S, D) (the
              zero fill past S per head); views TMA can't describe take v2's pointer path

What every step shares (_attend): S = Q Kᵀ never leaves the program. For each tile of keys the program computes its
raw scores s = q·k (fp32), the new running maximum m of s·c, c = log2(e)/sqrt(D), the probabilities p = 2^(s·c − m)
(the scale, log2(e) and the shift one fused multiply-add per score, exp2 cheaper than exp), rescales its sum l and
its accumulator by 2^(m_old − m_new), and adds p V. One division by l at the end. Its numerics are those the
spec's tolerance is derived from.
"""
import math

import torch
import triton
import triton.language as tl

import triton_src
from compare.spec import variant
from compare.validate import InputError, check_inputs

LOG2_E = 1.4426950408889634
HEAD_DIMS = (64, 128)


def checked_output(name: str, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The checks every row makes, and its output: q, k, v of one (B, H, S, D) shape and one 16-bit dtype,
    contiguous, D a head size the kernels are written for."""
    check_inputs(name, ("q", q), ("k", k), ("v", v), dtypes=(torch.float16, torch.bfloat16), ndim=4,
                 same_shape=True)
    if q.shape[-1] not in HEAD_DIMS:
        raise InputError(f"{name}: head dimension D = {q.shape[-1]} (shape {tuple(q.shape)}); these kernels take "
                         f"D = {' or '.join(map(str, HEAD_DIMS))}")
    return torch.empty_like(q)


def softmax_scale(head_dim: int) -> float:
    """1/sqrt(D) with log2(e) folded in: the scores go straight into exp2."""
    return LOG2_E / math.sqrt(head_dim)


@triton.jit
def _masked(s, cols, offs_m, seq_len, CAUSAL: tl.constexpr):
    """The scores of keys past S (and, CAUSAL, of keys after the query) set to -inf."""
    visible = cols[None, :] < seq_len
    if CAUSAL:
        visible = visible & (cols[None, :] <= offs_m[:, None])
    return tl.where(visible, s, float("-inf"))


@triton.jit
def _softmax_step(acc, l_i, m_i, s, v, qk_scale):
    """One key tile of the online softmax, from the tile's raw scores s (masked ones -inf): the new running maximum
    of s·qk_scale, the tile's probabilities (scale and shift one FMA per score), the sum and the accumulator rescaled
    to the new maximum, and P (rounded to V's dtype) V added."""
    m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
    p = tl.math.exp2(s * qk_scale - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, l_i, m_new


@triton.jit
def _attend(acc, l_i, m_i, q, k_base, v_base, offs_m, lo, hi, seq_len, qk_scale, MASK: tl.constexpr,
            CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    """The online softmax over the key tiles [lo, hi): returns the rescaled accumulator, sum and maximum. With MASK,
    keys past S (and, CAUSAL, keys after the query) score -inf; without it every key of every tile counts."""
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    for start_n in tl.range(lo, hi, BLOCK_N):
        cols = start_n + offs_n
        k_ptrs = k_base + cols[None, :] * HEAD_DIM + offs_d[:, None]  # Kᵀ: [HEAD_DIM, BLOCK_N]
        v_ptrs = v_base + cols[:, None] * HEAD_DIM + offs_d[None, :]
        if MASK:
            s = _masked(tl.dot(q, tl.load(k_ptrs, mask=cols[None, :] < seq_len, other=0.0)), cols, offs_m, seq_len,
                        CAUSAL)
            v = tl.load(v_ptrs, mask=cols[:, None] < seq_len, other=0.0)
        else:
            s = tl.dot(q, tl.load(k_ptrs))
            v = tl.load(v_ptrs)
        acc, l_i, m_i = _softmax_step(acc, l_i, m_i, s, v, qk_scale)
    return acc, l_i, m_i


@triton.jit
def _program_tile(seq_len, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr):
    """(head, block of queries) of this program. The grid is 1-D and head-major, as v2's CUDA grid: B·H may pass
    the 65535 a second grid axis allows, and a head's blocks, resident together, share its K and V in L2. Causal
    heads run their last (longest) blocks first, so the short ones fill the tail."""
    q_blocks = tl.cdiv(seq_len, BLOCK_M)
    head = tl.program_id(0) // q_blocks
    block = tl.program_id(0) % q_blocks
    if CAUSAL:
        block = q_blocks - 1 - block
    return head, block


@triton.jit
def _head_bases(q_ptr, k_ptr, v_ptr, o_ptr, head, seq_len, HEAD_DIM: tl.constexpr):
    """The first element of this head in each tensor (64-bit: q may pass 2^31 elements)."""
    head = head.to(tl.int64) * seq_len * HEAD_DIM
    return q_ptr + head, k_ptr + head, v_ptr + head, o_ptr + head


@triton.jit
def _load_queries(q_base, offs_m, seq_len, HEAD_DIM: tl.constexpr):
    offs_d = tl.arange(0, HEAD_DIM)
    return tl.load(q_base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < seq_len, other=0.0)


@triton.jit
def _store_rows(o_base, acc, l_i, offs_m, seq_len, HEAD_DIM: tl.constexpr):
    offs_d = tl.arange(0, HEAD_DIM)
    out = acc / l_i[:, None]
    tl.store(o_base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], out.to(o_base.dtype.element_ty),
             mask=offs_m[:, None] < seq_len)


@triton.jit
def _running_state(BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    """The online softmax's start: no keys seen (m = -inf, l = 0, O = 0)."""
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    return tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32), l_i, m_i


# ---- v1 basic: the tutorial's kernel, every tile masked. ---------------------------------------------------------
@triton.jit
def attention_basic_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, qk_scale, CAUSAL: tl.constexpr,
                           HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    head, block = _program_tile(seq_len, CAUSAL, BLOCK_M)
    q_base, k_base, v_base, o_base = _head_bases(q_ptr, k_ptr, v_ptr, o_ptr, head, seq_len, HEAD_DIM)
    offs_m = block * BLOCK_M + tl.arange(0, BLOCK_M)
    q = _load_queries(q_base, offs_m, seq_len, HEAD_DIM)
    acc, l_i, m_i = _running_state(BLOCK_M, HEAD_DIM)
    hi = seq_len
    if CAUSAL:  # no key after the block's last query
        hi = tl.minimum(seq_len, (block + 1) * BLOCK_M)
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_base, v_base, offs_m, 0, hi, seq_len, qk_scale, True, CAUSAL,
                            HEAD_DIM, BLOCK_N)
    _store_rows(o_base, acc, l_i, offs_m, seq_len, HEAD_DIM)


def run_basic(name: str, q, k, v, causal: bool) -> torch.Tensor:
    o = checked_output(name, q, k, v)
    s, d = q.shape[-2:]
    if o.numel():
        attention_basic_kernel[query_grid(q)](q, k, v, o, s, softmax_scale(d), CAUSAL=causal, HEAD_DIM=d,
                                              BLOCK_M=64, BLOCK_N=64, num_warps=4)
    return o


@variant("basic")
def basic(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return run_basic("attention", q, k, v, causal=False)


# ---- v2 tuned: masks only on the tiles that need them, tiles and pipeline autotuned. -----------------------------
# A tile of keys is wholly visible to a block of queries when every key is inside S and (causal) no later than the
# block's first query: those tiles run the unmasked loop. The rest (the key tail; the tiles the diagonal crosses)
# run the masked one, and causal tiles past the block's last query not at all. Causal blocks differ in work (the
# last block of queries sees every key): the grid starts the longest ones first, so the short ones fill the tail.
def _tile_config(block_m, block_n, warps, stages, pre_hook=None):
    return triton.Config({"BLOCK_M": block_m, "BLOCK_N": block_n}, num_warps=warps, num_stages=stages,
                         pre_hook=pre_hook)


def tile_configs(pre_hook=None):
    """128-query blocks hold the fp32 accumulator of D = 128 in 8 warps' registers, or in 4 with 64-key tiles;
    64-query blocks give short sequences more programs."""
    return [_tile_config(128, 64, 4, 3, pre_hook), _tile_config(128, 64, 8, 3, pre_hook),
            _tile_config(128, 128, 8, 3, pre_hook), _tile_config(64, 64, 4, 4, pre_hook),
            _tile_config(128, 32, 4, 4, pre_hook)]


@triton.jit
def _key_ranges(block, seq_len, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """(end of the unmasked tiles, end of the masked ones): the unmasked tiles [0, split) are wholly visible to
    every query of the block, the masked ones [split, hi) partly."""
    if CAUSAL:
        first_query = block * BLOCK_M
        split = ((first_query + 1) // BLOCK_N) * BLOCK_N
        hi = tl.minimum(seq_len, first_query + BLOCK_M)
    else:
        split = (seq_len // BLOCK_N) * BLOCK_N
        hi = seq_len
    return split, hi


@triton.autotune(configs=tile_configs(), key=["seq_len", "HEAD_DIM", "CAUSAL"])
@triton.jit
def attention_tuned_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, qk_scale, CAUSAL: tl.constexpr,
                           HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    head, block = _program_tile(seq_len, CAUSAL, BLOCK_M)
    q_base, k_base, v_base, o_base = _head_bases(q_ptr, k_ptr, v_ptr, o_ptr, head, seq_len, HEAD_DIM)
    offs_m = block * BLOCK_M + tl.arange(0, BLOCK_M)
    q = _load_queries(q_base, offs_m, seq_len, HEAD_DIM)
    acc, l_i, m_i = _running_state(BLOCK_M, HEAD_DIM)
    split, hi = _key_ranges(block, seq_len, CAUSAL, BLOCK_M, BLOCK_N)
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_base, v_base, offs_m, 0, split, seq_len, qk_scale, False, CAUSAL,
                            HEAD_DIM, BLOCK_N)
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_base, v_base, offs_m, split, hi, seq_len, qk_scale, True, CAUSAL,
                            HEAD_DIM, BLOCK_N)
    _store_rows(o_base, acc, l_i, offs_m, seq_len, HEAD_DIM)


def query_grid(q: torch.Tensor):
    """The 1-D grid _program_tile reads: one program per block of BLOCK_M queries of each head."""
    b, h, s, _ = q.shape
    return lambda meta: (triton.cdiv(s, meta["BLOCK_M"]) * b * h,)


def launch_tuned(q, k, v, o, causal: bool) -> None:
    s, d = q.shape[-2:]
    attention_tuned_kernel[query_grid(q)](q, k, v, o, s, softmax_scale(d), CAUSAL=causal, HEAD_DIM=d)


def run_tuned(name: str, q, k, v, causal: bool) -> torch.Tensor:
    o = checked_output(name, q, k, v)
    if o.numel():
        launch_tuned(q, k, v, o, causal)
    return o


@variant("tuned")
def tuned(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return run_tuned("attention", q, k, v, causal=False)


# ---- v3 tma: the tiles moved by the TMA unit. --------------------------------------------------------------------
# Host-side descriptors (triton_src.descriptor; no device allocator needed) of each tensor as (B·H, S, D): a tile
# [1, BLOCK, D] never crosses into the next head, and rows past S come back as zeros (the masked loop still gives
# them -inf scores: a zero key scores 0, not -inf). The descriptors' block shapes are the config's, set before each
# launch by the pre_hook. Where TMA can't describe a tensor (a base address or row stride that is not a multiple of
# 16 bytes, a GPU before Hopper, a Triton without host-side descriptors) the call takes v2's kernel.
def _set_block_shapes(nargs):
    for name, block in (("q_desc", "BLOCK_M"), ("k_desc", "BLOCK_N"), ("v_desc", "BLOCK_N"), ("o_desc", "BLOCK_M")):
        nargs[name].block_shape = [1, nargs[block], nargs["HEAD_DIM"]]


@triton.jit
def _attend_tma(acc, l_i, m_i, q, k_desc, v_desc, head, offs_m, lo, hi, seq_len, qk_scale, MASK: tl.constexpr,
                CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    """_attend with the key and value tiles loaded through their descriptors."""
    offs_n = tl.arange(0, BLOCK_N)
    for start_n in tl.range(lo, hi, BLOCK_N):
        k = k_desc.load([head, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        s = tl.dot(q, tl.trans(k))
        if MASK:
            s = _masked(s, start_n + offs_n, offs_m, seq_len, CAUSAL)
        v = v_desc.load([head, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
        acc, l_i, m_i = _softmax_step(acc, l_i, m_i, s, v, qk_scale)
    return acc, l_i, m_i


@triton.autotune(configs=tile_configs(_set_block_shapes), key=["seq_len", "HEAD_DIM", "CAUSAL"])
@triton.jit
def attention_tma_kernel(q_ptr, q_desc, k_desc, v_desc, o_desc, seq_len, qk_scale, CAUSAL: tl.constexpr,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    head, block = _program_tile(seq_len, CAUSAL, BLOCK_M)
    offs_m = block * BLOCK_M + tl.arange(0, BLOCK_M)
    q = q_desc.load([head, block * BLOCK_M, 0]).reshape(BLOCK_M, HEAD_DIM)
    acc, l_i, m_i = _running_state(BLOCK_M, HEAD_DIM)
    split, hi = _key_ranges(block, seq_len, CAUSAL, BLOCK_M, BLOCK_N)
    acc, l_i, m_i = _attend_tma(acc, l_i, m_i, q, k_desc, v_desc, head, offs_m, 0, split, seq_len, qk_scale, False,
                                CAUSAL, HEAD_DIM, BLOCK_N)
    acc, l_i, m_i = _attend_tma(acc, l_i, m_i, q, k_desc, v_desc, head, offs_m, split, hi, seq_len, qk_scale, True,
                                CAUSAL, HEAD_DIM, BLOCK_N)
    out = (acc / l_i[:, None]).to(q_ptr.dtype.element_ty)
    o_desc.store([head, block * BLOCK_M, 0], out.reshape(1, BLOCK_M, HEAD_DIM))  # rows past S are not written


def uses_tma(*tensors: torch.Tensor) -> bool:
    """Whether descriptors can describe these (contiguous) tensors: 16-byte aligned bases and rows."""
    if triton_src.TensorDescriptor is None:
        return False
    if tensors[0].is_cuda and torch.cuda.get_device_capability(tensors[0].device)[0] < 9:
        return False
    return all(t.data_ptr() % 16 == 0 and t.shape[-1] * t.element_size() % 16 == 0 for t in tensors)


def run_tma(name: str, q, k, v, causal: bool) -> torch.Tensor:
    o = checked_output(name, q, k, v)
    if not o.numel():
        return o
    if not uses_tma(q, k, v, o):
        launch_tuned(q, k, v, o, causal)  # v2's kernel into the output already checked and allocated
        return o
    b, h, s, d = q.shape
    descs = [triton_src.descriptor(t.view(b * h, s, d)) for t in (q, k, v, o)]
    attention_tma_kernel[query_grid(q)](q, *descs, s, softmax_scale(d), CAUSAL=causal, HEAD_DIM=d)
    return o


@variant("tma")
def tma(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return run_tma("attention", q, k, v, causal=False)
