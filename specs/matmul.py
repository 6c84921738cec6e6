"""Matrix multiply, C = A @ B: A is M×K, B is K×N, both row-major and contiguous; C is M×N in the input dtype.

2·M·N·K flops over (M·K + K·N + M·N)·itemsize bytes: at M = N = K = 4096 that is ~1400 flops per byte of fp16, far
beyond what memory can starve, so the kernels are judged against the vendor library (torch:eager is cuBLAS) at the
same shape and dtype. CUDA: cuda_src/matmul.cu. Triton: triton_src/matmul.py.

TF32 stays off: torch.backends.cuda.matmul.allow_tf32 defaults to False, so torch.matmul on fp32 (and the Triton
kernels torch.compile generates for it) computes in true fp32, and every fp32 row here does the same. fp16/bf16
rows multiply in the input type and accumulate in fp32, as cuBLAS does.
"""
import math

import torch

from compare.spec import Op, Tolerance


def make_inputs(shape, dtype, device, generator):
    m, n, k = shape
    # Each entry has variance 1/sqrt(K), so each of the K products has variance 1/K and every output is ~N(0, 1)
    # whatever K is: the tolerances below can then be written relative to an output magnitude of 1.
    scale = k ** -0.25
    a = torch.randn((m, k), device=device, generator=generator, dtype=torch.float32) * scale
    b = torch.randn((k, n), device=device, generator=generator, dtype=torch.float32) * scale
    return a.to(dtype), b.to(dtype)


def reference(a, b):
    return a @ b


def torch_eager(a, b):
    return torch.matmul(a, b)


def tolerances(dtype, shape):
    # Outputs are ~N(0, 1) and so are the partial sums, so an fp32 accumulator rounds each of its K additions by up
    # to 2^-24 in absolute terms; the errors add like a random walk, ~2^-24·sqrt(K/6) per output, and the worst of
    # a million outputs is ~5 of those. atol allows 16·2^-24·sqrt(K), about 8× that worst case. The fp16/bf16
    # inputs are exact in the float64 reference (it reads the rounded inputs), so what remains is the one rounding
    # of the output (rtol: one ulp, twice the half-ulp 2^-11 / 2^-8) plus the accumulation: atol scales with
    # sqrt(K) and is generous enough for cuBLAS, which by default may reduce split-K partial sums in fp16/bf16
    # (torch's allow_fp16/bf16_reduced_precision_reduction). At K = 4096 atol is 6e-5 (fp32), 1e-3 (fp16) and
    # 8e-3 (bf16), all far below the output magnitude, so an all-zeros output fails.
    root_k = math.sqrt(max(shape[2], 1))
    if dtype == torch.float32:
        return Tolerance(atol=2.0 ** -20 * root_k, rtol=2.0 ** -20)
    if dtype == torch.float16:
        return Tolerance(atol=2.0 ** -16 * root_k, rtol=2.0 ** -10)
    return Tolerance(atol=2.0 ** -13 * root_k, rtol=2.0 ** -7)


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
    # The tensor-core kernels multiply fp16/bf16 only (fp32 would mean TF32); they refuse fp32 with a message.
    unsupported_dtypes={"cuda:mma": (torch.float32,), "cuda:wgmma": (torch.float32,),
                        "triton:persistent": (torch.float32,)},
    # wgmma, setmaxnreg and the sm_90a build exist on Hopper only; elsewhere the row is reported as skipped.
    requires_capability={"cuda:wgmma": (9, 0)},
    # A (M×K) has 2^31 + 2,097,152 elements, so a row offset row·K in 32-bit arithmetic would wrap; N = 8 keeps it to
    # 34 GFLOP, milliseconds even for cuda:naive, and M/8 stays within a 65535-block grid dimension.
    index_overflow_shape=(262144, 8, 8200),
    roofline="compute",
    compile_modes=("default", "max-autotune"),
    shape_names=("M", "N", "K"),
)
