"""Matrix multiply, C = A @ B: A is M×K, B is K×N, both row-major and contiguous; C is M×N in the input dtype.

2·M·N·K flops over (M·K + K·N + M·N)·itemsize bytes: at M = N = K = 4096 that is ~1400 flops per byte of fp16, far
beyond what memory can starve, so the kernels are judged against the vendor library (torch:eager is cuBLAS) at the
same shape and dtype. CUDA: cuda_src/matmul.cu. Triton: triton_src/matmul.py.

TF32 stays off: torch.backends.cuda.matmul.allow_tf32 defaults to False, so torch.matmul on fp32 (and the Triton
kernels torch.compile generates for it) computes in true fp32, and every fp32 row here does the same. fp16/bf16
rows multiply in the input type and accumulate in fp32, as cuBLAS does.

What the reference says where a choice is made: IEEE arithmetic, which torch.matmul (the torch:eager row, cuBLAS or
the CPU's BLAS) follows: a NaN in row i of A makes row i of C NaN (a NaN in column j of B, column j); an infinite
term a_ik·b_kj makes c_ij ±inf, NaN where terms of both signs are infinite or where inf meets a zero (inf·0); a
finite c_ij beyond the output dtype's largest value is ±inf. Each of these depends on signs only, never on the order
of the sum, as long as finite partial sums cannot overflow; the special inputs below are built so that they can't
(an fp32 accumulator never comes near 2^128, and where fp16/bf16 partial sums could pass the dtype's range, every
term of that output has one sign, so any overflow is the answer's own).
"""
import math

import torch

from compare.spec import Op, Target, Tolerance
from specs import _special


def make_inputs(shape, dtype, device, generator):
    m, n, k = shape
    # Each entry has variance 1/sqrt(K), so each of the K products has variance 1/K and every output is ~N(0, 1)
    # whatever K is: the tolerances below can then be written relative to an output magnitude of 1.
    scale = max(k, 1) ** -0.25
    a = torch.randn((m, k), device=device, generator=generator, dtype=torch.float32) * scale
    b = torch.randn((k, n), device=device, generator=generator, dtype=torch.float32) * scale
    a, b = _special.first_at_least(a, scale), _special.first_at_least(b, scale)
    return a.to(dtype), b.to(dtype)


def _powers_of_two(shape, dtype, device, generator, exponent, signed=True):
    """Values 2^exponent·u with u uniform over the dtype's values in [1, 2), exactly representable (exponent within
    the dtype's normal range), random signs or all positive."""
    mantissa, top = _special.bit_layout(dtype)
    one = top // 2  # the exponent field of 1.0
    u = _special._from_patterns(one << mantissa, (one + 1) << mantissa, shape, dtype, device, generator)
    u = u.float() if signed else u.float().abs()
    return (u * 2.0**exponent).to(dtype)


def range_edges(shape, dtype, device, generator):
    """Rows of A at the dtype's largest finite magnitudes, and outputs past its range. Every fourth row of A (rows
    1, 5, 9, ...) is 2^E·[1, 2), E the dtype's largest exponent, up to its largest finite value, all of one sign;
    every column of B has one sign, magnitudes 2^b·[1, 2) with b = 2 - floor(log2 K), so such a row's outputs are
    at least 2^E·2^b·K >= 2^(E+2): ±inf in the dtype (past fp16's 65504 in fp32 accumulation, past fp32 itself for
    bf16 and fp32), whatever the order of the sum, since all K terms share a sign. The other rows are N(0, s^2)
    with s = 2^-b / sqrt(7K/3), so their outputs are ~N(0, 1) as in the random inputs (E[v^2] = 7/3 for B's v
    uniform in [1, 2)); their partial sums stay that small in any order."""
    m, n, k = shape
    big_exponent = _special.largest_exponent(dtype)
    b_exp = 2 - int(math.floor(math.log2(max(k, 1))))
    row_sign = torch.randint(0, 2, (m, 1), generator=generator, device=device, dtype=torch.uint8).bool()
    big = _powers_of_two((m, k), dtype, device, generator, big_exponent, signed=False)
    big = torch.where(row_sign, -big, big)
    sigma = 1 / (2.0**b_exp * math.sqrt(7 / 3 * max(k, 1)))  # E[v^2] = 7/3 for v uniform in [1, 2)
    normal = torch.randn((m, k), device=device, generator=generator, dtype=torch.float32) * sigma
    normal = _special.first_at_least(normal, sigma).to(dtype)
    a = torch.where((torch.arange(m, device=device) % 4 == 1)[:, None], big, normal)
    col_sign = torch.randint(0, 2, (1, n), generator=generator, device=device, dtype=torch.uint8).bool()
    b = _powers_of_two((k, n), dtype, device, generator, b_exp, signed=False)
    return a, torch.where(col_sign, -b, b)


def inf_and_nan(shape, dtype, device, generator):
    """The random inputs with one non-finite entry at a random k in some rows of A (row i % 8 = 1: +inf, 3: -inf,
    5: NaN) and some columns of B (column j % 8 = 2: +inf, 6: NaN), and 1 entry of B in 16 exactly 0 (none in the
    columns j % 8 = 0, so a 1×1 output is never a zero to judge): outputs of
    the other rows and columns (about half) are finite; the rest are ±inf, or NaN where a NaN, infinite terms of both
    signs or an inf·0 meet."""
    m, n, k = shape
    a, b = make_inputs(shape, torch.float32, device, generator)
    inf, nan = float("inf"), float("nan")
    ks = torch.arange(k, device=device)
    at_k = torch.randint(0, max(k, 1), (m, 1), generator=generator, device=device) == ks[None, :]
    row = torch.arange(m, device=device)[:, None] % 8
    a = torch.where(at_k & (row == 1), inf, torch.where(at_k & (row == 3), -inf,
                                                        torch.where(at_k & (row == 5), nan, a)))
    at_k = torch.randint(0, max(k, 1), (1, n), generator=generator, device=device) == ks[:, None]
    col = torch.arange(n, device=device)[None, :] % 8
    zero = (torch.randint(0, 16, (k, n), generator=generator, device=device, dtype=torch.uint8) == 0) & (col != 0)
    b = torch.where(at_k & (col == 2), inf, torch.where(at_k & (col == 6), nan, torch.where(zero, 0.0, b)))
    return a.to(dtype), b.to(dtype)


def subnormals(shape, dtype, device, generator):
    """B made of the dtype's subnormals (mostly), A scaled up to match: A = N(0, 1)·K^-0.25·2^c, B = N(0, 1)·K^-0.25
    ·2^-c with c = E - 2 (13 for fp16, 125 for bf16 and fp32; |N| clipped at 7 so A stays finite). Products and
    outputs are the random inputs' size, ~N(0, 1); a kernel (or a tensor core) that flushes subnormal inputs to 0
    returns ~0 instead, and A near the top of the range tests the other end."""
    m, n, k = shape
    c = _special.largest_exponent(dtype) - 2
    a = torch.randn((m, k), device=device, generator=generator, dtype=torch.float32).clamp_(-7, 7)
    a = _special.first_at_least(a, 1.0)
    b = _special.first_at_least(torch.randn((k, n), device=device, generator=generator, dtype=torch.float32), 1.0)
    scale = max(k, 1) ** -0.25
    return (a * (scale * 2.0**c)).to(dtype), (b * scale * 2.0**-c).to(dtype)


def reference(a, b):
    finite_a, finite_b = torch.isfinite(a), torch.isfinite(b)
    if bool(finite_a.all()) and bool(finite_b.all()):
        return a @ b
    # IEEE semantics for the non-finite outputs, from which terms are infinite (counted by matmuls of 0/1 indicator
    # matrices), not from a BLAS that might skip zeros or reorder: NaN rows/columns, inf·0, +inf and -inf together.
    def ind(mask):
        return mask.to(a.dtype)

    pa, na, pb, nb = a == float("inf"), a == float("-inf"), b == float("inf"), b == float("-inf")
    plus = ind(pa) @ ind(b > 0) + ind(na) @ ind(b < 0) + ind((a > 0) & finite_a) @ ind(pb) + \
        ind((a < 0) & finite_a) @ ind(nb)
    minus = ind(pa) @ ind(b < 0) + ind(na) @ ind(b > 0) + ind((a > 0) & finite_a) @ ind(nb) + \
        ind((a < 0) & finite_a) @ ind(pb)
    inf_times_zero = ind(pa | na) @ ind(b == 0) + ind(a == 0) @ ind(pb | nb)
    nan = (torch.isnan(a).any(dim=1, keepdim=True) | torch.isnan(b).any(dim=0, keepdim=True) |
           ((plus > 0) & (minus > 0)) | (inf_times_zero > 0))
    c = torch.where(finite_a, a, 0.0) @ torch.where(finite_b, b, 0.0)
    c = torch.where(plus > 0, float("inf"), torch.where(minus > 0, float("-inf"), c))
    return c.masked_fill(nan, float("nan"))


def torch_eager(a, b):
    return torch.matmul(a, b)


def tolerances(dtype, shape):
    # Outputs are ~N(0, 1) and so are the partial sums, so an fp32 accumulator rounds each of its K additions by up
    # to 2^-24 in absolute terms, and the errors add like a random walk (~2^-24·sqrt(K/6) per output; the worst of
    # 67M outputs is about 5.5 sigma of that). The fp32 term, 2^-21·sqrt(K) = 8·2^-24·sqrt(K), leaves an error past
    # it a 9-sigma tail. The fp16/bf16
    # inputs are exact in the float64 reference (it reads the rounded inputs), so beyond the fp32 accumulation a
    # kernel that rounds its fp32 result once is within one ulp of the correctly rounded output (ulps = 1), the
    # accumulation term covering the rest. cuBLAS (torch:eager) is the
    # exception: torch leaves allow_fp16/bf16_reduced_precision_reduction on, and at some shapes cuBLAS splits K and
    # rounds and reduces the partial sums in fp16/bf16 (odd shapes near 2K, for one), each partial and each reduction
    # step costing up to half an ulp of a partial sum about as large as the output: a few u beyond one ulp, u =
    # 2^-11 / 2^-8 being half an ulp at 1. That term is 8u (2^-8 fp16, 2^-5 bf16), with room; it can't be limited to the
    # shapes cuBLAS splits, which depend on the GPU and the library version. An fp16-accumulating kernel is off by
    # ~u·sqrt(K/3) per output (~50u for the worst output at K = 520), so it still fails; so does one that stages bf16
    # through fp16 ("range edges" and "subnormals" hold values past 65504).
    root_k = math.sqrt(max(shape[2], 1))
    accumulation = 2.0**-21 * root_k
    if dtype == torch.float32:
        return Tolerance(atol=accumulation, rtol=0.0, ulps=1)
    if dtype == torch.float16:
        return Tolerance(atol=accumulation + 2.0**-8, rtol=0.0, ulps=1)
    return Tolerance(atol=accumulation + 2.0**-5, rtol=0.0, ulps=1)


OP = Op(
    name="matmul",
    summary="C = A @ B, row-major A (M×K) and B (K×N), fp32 accumulation (compute-bound)",
    make_inputs=make_inputs,
    reference=reference,
    torch_eager=torch_eager,
    bytes_moved=lambda shape, dtype: (shape[0] * shape[2] + shape[2] * shape[1] + shape[0] * shape[1]) * dtype.itemsize,
    flops=lambda shape: 2 * shape[0] * shape[1] * shape[2],
    # No size here is a multiple of every tile: single elements, odd sizes below one tile, sizes just past a tile,
    # a K tail inside the tensor-core kernel's aligned path (200×264×520: K % 32 = 8), one GEMV-like row with a
    # long K, and 1000³ (a multiple of 8, not of 128).
    check_shapes=[(1, 1, 1), (17, 33, 9), (127, 129, 65), (256, 256, 256), (200, 264, 520), (1, 520, 4096),
                  (1000, 1000, 1000)],
    # Squares, then three LLM-like GEMMs with 4096 tokens or 16384 tokens: a 4096→4096 projection, an MLP
    # up-projection (4096→14336) and its down-projection (14336→4096). The slow rows set the cost: cuda:naive runs at
    # ~5.5 TFLOP/s on an H200, 0.2 s per call at 8192³ and ~0.1 s per rectangle, about 5 s per dtype for all of
    # these shapes (roughly 10 calls each); cuda:smem takes about half that.
    bench_shapes=[(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
                  (16384, 4096, 4096), (4096, 14336, 4096), (4096, 4096, 14336)],
    quick_bench_shapes=[(1024, 1024, 1024), (4096, 4096, 4096)],
    interpret_shapes=[(1, 1, 1), (17, 33, 9), (40, 24, 70)],
    dtypes=(torch.float32, torch.float16, torch.bfloat16),
    tolerances=tolerances,
    special_inputs={"range edges": range_edges, "inf and nan": inf_and_nan, "subnormals": subnormals},
    # The tensor-core kernels multiply fp16/bf16 only (fp32 would mean TF32); they refuse fp32 with a message.
    # cuda:warptile is the fp32 path's last step (fp16/bf16 have the tensor cores) and refuses fp16/bf16 likewise.
    unsupported_dtypes={"cuda:mma": (torch.float32,), "cuda:wgmma": (torch.float32,),
                        "cuda:tmastore": (torch.float32,), "cuda:multicast": (torch.float32,),
                        "triton:persistent": (torch.float32,),
                        "cuda:warptile": (torch.float16, torch.bfloat16)},
    # wgmma, setmaxnreg and the sm_90a build exist on Hopper only; elsewhere the row is reported as skipped.
    requires_capability={"cuda:wgmma": (9, 0), "cuda:tmastore": (9, 0), "cuda:multicast": (9, 0)},
    # A (M×K) has 2^31 + 2,097,152 elements, so a row offset row·K in 32-bit arithmetic would wrap; N = 8 keeps it to
    # 34 GFLOP, milliseconds even for cuda:naive, and M/8 stays within a 65535-block grid dimension.
    index_overflow_shape=(262144, 8, 8200),
    roofline="compute",
    compile_modes=("default", "max-autotune"),
    shape_names=("M", "N", "K"),
    # 4096³: fp32 for the SIMT steps (v1-v3 and v6; the tensor-core rows refuse fp32), bf16 for the tensor-core ones
    # (v4, v5, v7, v8), where the SIMT steps but v6 widen to fp32 and run at their fp32 rate.
    ladder_cells=[(torch.float32, (4096, 4096, 4096)), (torch.bfloat16, (4096, 4096, 4096))],
    # Goals for the CUDA ladder against cuBLAS (python -m compare summary judges them): the tensor-core kernels at
    # least as fast at the large squares, the SIMT kernel within the last steps of the SGEMM ladder in fp32.
    targets=(
        Target("M = N = K = 4K and 8K", at_least=1.00, rows=("cuda",), dtypes=("float16", "bfloat16"),
               where=lambda shape: shape in ((4096,) * 3, (8192,) * 3)),
        Target("M = N = K = 4K", at_least=0.85, rows=("cuda",), dtypes=("float32",),
               where=lambda shape: shape == (4096,) * 3),
    ),
)
