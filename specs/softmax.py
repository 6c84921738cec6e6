"""Softmax over the last dimension of a 2-D (M, N) tensor, the numerically stable form:
y[r, c] = exp(x[r, c] - max_r) / sum_c' exp(x[r, c'] - max_r).

A reduction per row, but still memory-bound: the least any kernel can do is read each element once and write it once,
2 · M · N · itemsize bytes, with about 5 flops per element. The kernels differ in how many times they read the row
from HBM (three, two or one) and in how they reduce it (shared memory, warp shuffles, or an online running sum for
rows too long to hold on chip). CUDA: cuda_src/softmax.cu. Triton: triton_src/softmax.py.

What the reference says where a choice is made (torch.softmax, the torch:eager row, says the same on the CPU and
the GPU, since it computes exp(x - max) / sum as the formula does):
  * a row holding NaN is NaN throughout (NaN - max, or max = NaN, reaches the sum and so every output);
  * a row holding +inf is NaN throughout, not the limit (1 at the inf, 0 elsewhere): inf - max = inf - inf = NaN;
  * a row of nothing but -inf is NaN throughout (exp(-inf - (-inf)) = 0/0); -inf entries in a row with a finite
    maximum are 0 and drop out of the sum;
  * entries far below the row maximum (x - max < -104 in fp32 and bf16, < -17 in fp16) are exactly 0.
"""
import math

import torch

from compare.spec import Op, Target, Tolerance
from specs import _special


def make_inputs(shape, dtype, device, generator):
    x = torch.randn(shape, device=device, generator=generator, dtype=torch.float32)
    return (x.to(dtype),)


def large_magnitudes(shape, dtype, device, generator):
    """Each row sits around +1e4 or -1e4 (noise of a few units on top): exp(1e4) overflows every float format, so a
    kernel that skips the max subtraction returns inf/inf = NaN. The noise is 8·N(0, 1), or one spacing of the dtype
    near 1e4 times N(0, 1) where that is more (bf16: 64), so that rows still hold distinct values (a row of ties has
    a constant output, and short rows of nothing else would make a case that a constant output passes)."""
    m, n = shape
    sign = torch.randint(0, 2, (m, 1), device=device, generator=generator).float() * 2 - 1
    spacing = 2.0 ** 13 * torch.finfo(dtype).eps  # 1e4 lies in [2^13, 2^14)
    noise = torch.randn(shape, device=device, generator=generator, dtype=torch.float32) * max(8.0, spacing)
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


def range_edges(shape, dtype, device, generator):
    """Rows at the dtype's largest finite magnitudes. Even rows: random signs from the two highest binades, with a
    share of the row tied at the largest finite value, +max: all of it in rows r % 4 = 0 (the row's sum of
    exponentials is N, past fp16's range for N > 65504), a random share (one entry up to all, log-uniformly) in rows
    r % 4 = 2; the output is 1/ties there, 0 elsewhere, while x - max reaches -2·max (-inf in fp32). Odd rows: all
    negative, tied at -2^(E-1) (the smallest magnitude of the second-highest binade) above values down to -max, so
    nothing is near 0 and an exponent taken against 0 rather than the row maximum underflows every term."""
    m, n = shape
    big = _special.top_binades(shape, dtype, device, generator).abs()
    upper = torch.tensor(torch.finfo(dtype).max, dtype=dtype, device=device)
    lower = torch.tensor(-(2.0 ** (_special.largest_exponent(dtype) - 1)), dtype=dtype, device=device)
    signs = torch.randint(0, 2, shape, generator=generator, device=device, dtype=torch.uint8).bool()
    share = torch.rand((m, 1), generator=generator, device=device) * -math.log(max(n, 2))
    share = torch.where((torch.arange(m, device=device) % 4 == 0)[:, None], 0.0, share)  # e^0: every entry tied
    keep = torch.randint(0, n, (m, 1), generator=generator, device=device)
    col = torch.arange(n, device=device)[None, :]
    tied = (torch.rand(shape, generator=generator, device=device) < share.exp()) | (col == keep)
    odd = (torch.arange(m, device=device) % 2 == 1)[:, None]
    x = torch.where(odd, -big, torch.where(signs, -big, big))
    return (torch.where(tied, torch.where(odd, lower, upper), x),)


def inf_and_nan(shape, dtype, device, generator):
    """Rows by r % 6, each NaN throughout in the reference except kinds 0 and 5: 0 random with 1 entry in 8 -inf
    (never all), 1 one +inf, 2 its first half -inf and a NaN among those -inf (within the first quarter, so a whole
    slice, chunk or warp of a long row sees only -inf and NaN: its maximum ignoring NaN is -inf, and skipping that
    slice as empty would drop the NaN), 3 one NaN, 4 all -inf, 5 random."""
    m, n = shape
    (x,) = make_inputs(shape, torch.float32, device, generator)
    kind = torch.arange(m, device=device)[:, None] % 6
    col = torch.arange(n, device=device)[None, :]
    keep = torch.randint(0, n, (m, 1), generator=generator, device=device)
    spot = torch.randint(0, max(n // 4, 1), (m, 1), generator=generator, device=device)
    masked = (torch.rand(shape, generator=generator, device=device) < 0.125) & (col != keep)
    inf, nan = float("inf"), float("nan")
    x = torch.where((kind == 0) & masked, -inf, x)
    x = torch.where((kind == 1) & (col == keep), inf, x)
    x = torch.where((kind == 2) & (col < n // 2), -inf, x)
    x = torch.where(((kind == 2) & (col == spot)) | ((kind == 3) & (col == keep)), nan, x)
    x = torch.where(kind == 4, -inf, x)
    return (x.to(dtype),)


def subnormals(shape, dtype, device, generator):
    """Even rows: subnormals of the dtype (they act as zeros: outputs near 1/N). Odd rows: spread so the outputs
    run from the largest down through the dtype's subnormal range to 0: x = -s·U(0, 1), s = ln(1/smallest
    subnormal) + 8 (112 for fp32, 100 for bf16, 25 for fp16). fp16 subnormal outputs are judged to the ulp; in
    fp32 and bf16 they sit below atol, which allows an fp32 exponential that flushes them to 0."""
    m, n = shape
    info = torch.finfo(dtype)
    spread = -math.log(info.tiny * info.eps) + 8
    x = torch.rand(shape, generator=generator, device=device) * -spread
    odd = (torch.arange(m, device=device) % 2 == 1)[:, None]
    return (torch.where(odd, x.to(dtype), _special.subnormals(shape, dtype, device, generator)),)


def reference(x):
    # torch.softmax, with the non-finite rows (see the top of this file) set to NaN explicitly, so the semantics
    # don't rest on how a float64 max reduction treats NaN.
    y = torch.softmax(x, dim=-1)
    nan_row = (torch.isnan(x) | (x == float("inf"))).any(dim=-1, keepdim=True) | (x == float("-inf")).all(
        dim=-1, keepdim=True)
    return y.masked_fill(nan_row, float("nan"))


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
    # The special inputs run at every check (and bench) shape; the first three are chosen for the paths where -inf,
    # NaN and huge values are hazards: N = 12000 (a block per row, whole row in registers; the
    # warp-per-row path shares its per-element code), then rows too long to hold whole: 3 of them (too few to fill
    # the GPU: several blocks or programs per row, whose per-slice maxima may be -inf) and 300 (one block or program
    # per row, the online kernels; M = 300 is past two rows per SM on 132 to 148 SMs). Both are rows cuda:cluster
    # spreads over a cluster's blocks, whose shares of the row may be all -inf. N > 65536 reaches those paths
    # for fp16/bf16 in CUDA too, which holds twice as many 16-bit elements in registers. Then N = 1000 (a warp per
    # row / several rows per program), N = 1, odd N (scalar fallbacks), the edges of each path (1024, 32768, 32769),
    # 40000, N past triton:basic's limit (70000), and a long row. N = 20002: triton:packed's 16-bit rows as words,
    # an odd count of them (no vector loads) and 5 rows, so its last program of 2 rows holds a clamped one. (M, 1)
    # with M > 1 is left out: every output is exactly 1, so the checker rightly refuses it as a case a constant
    # output would pass. cuda:grid_ring takes the aligned rows v3 cannot hold: 3 x 70000 as one row a group of
    # blocks, 300 x 65600 (fp32 and fp16/bf16 alike) as 25 rows a group through its ring, its lag and its words;
    # triton:exchange takes the same two shapes (3 groups of one row, 8 groups of 38 rows).
    check_shapes=[(48, 12000), (3, 70000), (300, 65600), (33, 1000), (1, 1), (7, 3), (5, 127), (1024, 1024),
                  (64, 4097), (16, 32768), (3, 32769), (3, 40000), (8, 70000), (4, 262144), (5, 20002)],
    # The last two: rows too long to hold and too few to fill the GPU; 4 rows of 4M elements are past what a
    # cluster holds (v6 hands them to v5, Triton's tuned row splits them too). cuda:resident holds both whole on
    # chip but 4 x 4M in fp32, its parts past shared memory in registers too (fp32 32 x 256K, 16-bit 4 x 4M, whose
    # parts differ by a packet).
    bench_shapes=[(4096, 256), (4096, 1024), (4096, 4096), (4096, 8192), (4096, 16384), (4096, 32768),
                  (32, 262144), (4, 4000000)],
    quick_bench_shapes=[(4096, 1024), (32, 262144)],
    # Same paths, smaller: several rows per program, then N = 40000 split over programs (the interpreter counts as
    # two SMs: M <= 3) and online (M = 4), one row per program (N = 5000). triton:packed takes 16-bit rows from 16K
    # only: tests/test_kernels.py checks its own path at such rows (every CPU run of the op would pay for one here).
    interpret_shapes=[(5, 127), (3, 40000), (4, 40000), (2, 5000), (1, 1), (4, 300)],
    special_inputs={"large magnitudes": large_magnitudes, "with -inf": with_neg_inf, "range edges": range_edges,
                    "inf and nan": inf_and_nan, "subnormals": subnormals},
    # 2^31 + 1024 elements in rows that every implementation takes (N <= 65536): row · N overflows 32 bits.
    index_overflow_shape=(2**21 + 1, 1024),
    # cuda:staged_cluster's clusters of 8 (16-bit) and 16 blocks (fp32), cuda:resident's parts (66 a row on
    # 132 SMs, in shared memory) and cuda:grid_ring's (two groups of 66), within racecheck's size cap.
    sanitize_shapes=[(2, 262144)],
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    # From the arithmetic (and held to it by every row's checks, results/<gpu>/softmax.md):
    #   * fp32: relative error grows as outputs shrink because an output y = e^a / S carries the rounding of its exponent a (x - max,
    #     then a·log2(e)): about 2^-23·|a| relative, |a| <= ln(1/y); the rest is the exponential itself (2^-22 for
    #     ex2.approx) and the sum: a few 2^-22 where outputs matter (>= 1e-6), so rtol = 2^-18 (3.8e-6);
    #     atol = 2^-50 (8.9e-16) takes over below ~1e-10, where that growth would reach rtol. It also covers outputs that an fp32 exponential with flush-to-zero
    #     (cuda:warp to cuda:cluster: ex2.approx.ftz) leaves at 0 below 2^-126. Was atol 1e-8 + rtol 1e-5: 1e-8 absolute
    #     passed any output below 1e-3 to three digits or worse.
    #   * fp16/bf16: computed in fp32 (accurate to ~1e-5 relative, far below half an fp16 or bf16 ulp) and rounded
    #     once, so a correct kernel is at most 1 ulp from the correctly rounded output, subnormal outputs included
    #     (ulps = 1). bf16 adds atol = 2^-126: bf16 shares fp32's exponent range, and an fp32 exponential that
    #     flushes results below fp32's smallest normal (cuda:warp to cuda:cluster, triton:packed) loses bf16's
    #     subnormal outputs. As atol/rtol this would be rtol = 2^-10 (fp16) / 2^-7 (bf16) to cover one ulp at the
    #     bottom of a binade, twice the ulp bound at its top; was rtol 2e-3 / 8e-3 with atol 1e-6 / 1e-5.
    # A wrong formula fails: without the max subtraction, exp overflows on "large magnitudes" (NaN); an fp16 sum
    # overflows at N > 65504 on the tied rows of "range edges".
    tolerances={
        torch.float32: Tolerance(atol=2.0**-50, rtol=2.0**-18),
        torch.float16: Tolerance(atol=0.0, rtol=0.0, ulps=1),
        torch.bfloat16: Tolerance(atol=2.0**-126, rtol=0.0, ulps=1),
    },
    shape_names=("M", "N"),
    # The seed kernel holds a whole row in one block; it refuses longer rows (and the bad-input tests check that).
    # triton:tiled hands it the rows longer than its own path takes, so it refuses the same.
    unsupported_shapes={"triton:basic": lambda shape: shape[1] > 65536, "triton:tiled": lambda shape: shape[1] > 65536},
    # Where the steps differ: N = 1024 is the longest fp32 row a warp holds (v2 against v1); N = 32768 the longest a
    # block holds (v3 against v1 and v2, which hands it to v1; fp32, and fp16 with twice the elements per register);
    # 32 rows of 256K are too long to hold and too few to fill the GPU (v4 against v1, v5 against v4; v6-v9 hold
    # them on chip, v8 in fp32 partly in registers; in bf16 v7's clusters are of 8 blocks, not 16). In Triton, the
    # fp16 row of 32K is where v5 (rows kept as words) differs from v2.
    ladder_cells=[(torch.float32, (4096, 1024)), (torch.float32, (4096, 32768)), (torch.float16, (4096, 32768)),
                  (torch.float32, (32, 262144)), (torch.bfloat16, (32, 262144))],
    # Goals for the rows that cannot keep one row a block: few long rows near a copy of their bytes in both
    # languages, and Triton's 16-bit rows of 32K as close to it as CUDA's (python -m compare summary judges them).
    targets=(
        Target("M = 32, N = 256K; M = 4, N = 4M", at_least=0.85, dtypes=("float32",),
               where=lambda shape: shape in ((32, 262144), (4, 4000000))),
        Target("M = 32, N = 256K", at_least=0.85, dtypes=("bfloat16",), where=lambda shape: shape == (32, 262144)),
        Target("M = 4K, N = 32K", at_least=0.95, rows=("triton",), dtypes=("bfloat16",),
               where=lambda shape: shape == (4096, 32768)),
    ),
)
