"""Softmax over the last dimension of a 2-D (M, N) tensor, the numerically stable form:
y[r, c] = exp(x[r, c] - max_r) / sum_c' exp(x[r, c'] - max_r).

A reduction per row, but still memory-bound: the least any kernel can do is read each element once and write it once,
2 · M · N · itemsize bytes, with about 5 flops per element. The kernels differ in how many times they read the row
from HBM (three, two or one) and in how they reduce it (shared memory, warp shuffles, or an online running sum for
rows too long to hold on chip). CUDA: cuda_src/softmax.cu. Triton: triton_src/softmax.py.
"""
import math

import torch

from compare.spec import Op, Tolerance


def make_inputs(shape, dtype, device, generator):
    x = torch.randn(shape, device=device, generator=generator, dtype=torch.float32)
    return (x.to(dtype),)


def large_magnitudes(shape, dtype, device, generator):
    """Each row sits around +1e4 or -1e4 (noise of a few units on top): exp(1e4) overflows every float format, so a
    kernel that skips the max subtraction returns inf/inf = NaN. The noise is 8·N(0, 1) so that fp16, whose spacing
    near 1e4 is 8, still gets distinct values."""
    m, n = shape
    sign = torch.randint(0, 2, (m, 1), device=device, generator=generator).float() * 2 - 1
    noise = torch.randn(shape, device=device, generator=generator, dtype=torch.float32) * 8
    return ((sign * 1e4 + noise).to(dtype),)


def with_neg_inf(shape, dtype, device, generator):
    """-inf entries, the way attention masks produce them: row r % 3 == 0 has a quarter of its entries -inf,
    r % 3 == 1 all but one, r % 3 == 2 its whole first half. Every row keeps at least one finite entry: softmax
    of an all -inf row is NaN (0/0) in the reference. Online kernels meet chunks, threads and whole passes that
    have seen nothing but -inf, where exp(-inf - (-inf)) = NaN must not leak into the sum."""
    m, n = shape
    (x,) = make_inputs(shape, torch.float32, device, generator)
    u = torch.rand(shape, device=device, generator=generator)
    kind = torch.arange(m, device=device)[:, None] % 3
    col = torch.arange(n, device=device)[None, :]
    keep = torch.randint(0, n, (m, 1), device=device, generator=generator)
    masked = torch.where(kind == 0, u < 0.25, torch.where(kind == 1, col != keep, col < n // 2)) & (col != keep)
    return (x.masked_fill(masked, float("-inf")).to(dtype),)


def reference(x):
    return torch.softmax(x, dim=-1)


def torch_eager(x):
    return torch.softmax(x, dim=-1)


OP = Op(
    name="softmax",
    summary="row softmax of an (M, N) tensor (reduction, memory-bound)",
    make_inputs=make_inputs,
    reference=reference,
    torch_eager=torch_eager,
    bytes_moved=lambda shape, dtype: 2 * math.prod(shape) * dtype.itemsize,
    flops=lambda shape: 5 * math.prod(shape),  # max, subtract, exp, sum, scale
    # The special inputs (and the non-contiguous view, on the second and third) run on the first three shapes, chosen
    # for the paths where -inf and huge values are hazards: N = 12000 (a block per row, whole row in registers; the
    # warp-per-row path shares its per-element code), then rows too long to hold whole: 3 of them (too few to fill
    # the GPU: several blocks or programs per row, whose per-slice maxima may be -inf) and 300 (one block or program
    # per row, the online kernels; M = 300 is past two rows per SM on 132 to 148 SMs). N > 65536 reaches those paths
    # for fp16/bf16 in CUDA too, which holds twice as many 16-bit elements in registers. Then N = 1000 (a warp per
    # row / several rows per program), N = 1, odd N (scalar fallbacks), the edges of each path (1024, 32768, 32769),
    # 40000, N past triton:basic's limit (70000), and a long row. (M, 1) with M > 1 is left out: every output is
    # exactly 1, so the checker rightly refuses it as a case a constant output would pass.
    check_shapes=[(48, 12000), (3, 70000), (300, 65600), (33, 1000), (1, 1), (7, 3), (5, 127), (1024, 1024),
                  (64, 4097), (16, 32768), (3, 32769), (3, 40000), (8, 70000), (4, 262144)],
    bench_shapes=[(4096, 256), (4096, 1024), (4096, 4096), (4096, 8192), (4096, 16384), (4096, 32768),
                  (32, 262144)],
    quick_bench_shapes=[(4096, 1024), (32, 262144)],
    # Same paths, smaller: several rows per program, then N = 40000 split over programs (the interpreter counts as
    # two SMs: M <= 3) and online (M = 4), one row per program (N = 5000).
    interpret_shapes=[(5, 127), (3, 40000), (4, 40000), (2, 5000), (1, 1), (4, 300)],
    special_inputs={"large magnitudes": large_magnitudes, "with -inf": with_neg_inf},
    # 2^31 + 1024 elements in rows that every implementation takes (N <= 65536): row · N overflows 32 bits.
    index_overflow_shape=(2**21 + 1, 1024),
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    # Outputs of a long row are about 1/N (4e-6 at N = 262144), so atol must sit well below that or an all-zeros
    # output would pass. fp16/bf16 outputs are computed in fp32 and rounded once (at most half an ulp: 2^-11 and
    # 2^-8 relative); rtol allows two to four times that. fp16 outputs below 6e-5 are subnormal, with an absolute
    # spacing of 6e-8, hence its atol. fp32: fast exponentials and an N-term sum stay within 1e-5 relative.
    tolerances={
        torch.float32: Tolerance(atol=1e-8, rtol=1e-5),
        torch.float16: Tolerance(atol=1e-6, rtol=2e-3),
        torch.bfloat16: Tolerance(atol=1e-5, rtol=8e-3),
    },
    shape_names=("M", "N"),
    # The seed kernel holds a whole row in one block; it refuses longer rows (and the bad-input tests check that).
    unsupported_shapes={"triton:basic": lambda shape: shape[1] > 65536},
)
