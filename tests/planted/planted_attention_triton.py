"""A wrong FlashAttention kernel for tests/test_attention.py: the classic bug of an online softmax, the running sum
rescaled when the row's maximum moves but the accumulator not. Right whenever the first key tile holds the row's
maximum (one tile, or scores that happen to peak early); wrong by a factor of 2^(m_old - m_new) on every earlier
tile's share otherwise."""
import torch
import triton
import triton.language as tl

from triton_src.attention import (_head_bases, _load_queries, _program_tile, _running_state, _store_rows,
                                  checked_output, query_grid, softmax_scale)


@triton.jit
def attention_unrescaled_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, qk_scale, HEAD_DIM: tl.constexpr,
                                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    head, block = _program_tile(seq_len, False, BLOCK_M)
    q_base, k_base, v_base, o_base = _head_bases(q_ptr, k_ptr, v_ptr, o_ptr, head, seq_len, HEAD_DIM)
    offs_m = block * BLOCK_M + tl.arange(0, BLOCK_M)
    q = _load_queries(q_base, offs_m, seq_len, HEAD_DIM)
    acc, l_i, m_i = _running_state(BLOCK_M, HEAD_DIM)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    for start_n in range(0, seq_len, BLOCK_N):
        cols = start_n + offs_n
        kt = tl.load(k_base + cols[None, :] * HEAD_DIM + offs_d[:, None], mask=cols[None, :] < seq_len, other=0.0)
        s = tl.where(cols[None, :] < seq_len, tl.dot(q, kt) * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        l_i = l_i * tl.math.exp2(m_i - m_new) + tl.sum(p, 1)
        v = tl.load(v_base + cols[:, None] * HEAD_DIM + offs_d[None, :], mask=cols[:, None] < seq_len, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)  # the bug: acc is not multiplied by 2^(m_old - m_new)
        m_i = m_new
    _store_rows(o_base, acc, l_i, offs_m, seq_len, HEAD_DIM)


def unrescaled(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    o = checked_output("attention", q, k, v)
    s, d = q.shape[-2:]
    if o.numel():
        attention_unrescaled_kernel[query_grid(q)](q, k, v, o, s, softmax_scale(d), HEAD_DIM=d, BLOCK_M=16,
                                                   BLOCK_N=16)
    return o
