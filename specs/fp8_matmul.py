"""fp8 scaled matrix multiply: C = (A @ B) · scale_a · scale_b, with A (M, K) and B (K, N) in float8_e4m3fn, scale_a
(M, 1) one float32 per row of A, scale_b (1, N) one per column of B, and C (M, N) in bfloat16. A is row-major and B
column-major (B is the transpose of a row-major (N, K) tensor: B.t() is contiguous), so both walk K contiguously, as
the fp8 tensor-core instructions read them (wgmma takes 8-bit operands only K-major). This is the GEMM of fp8 training
and inference with per-token scales for the activations and per-channel scales for the weights; torch:eager is
torch._scaled_mm (cuBLASLt), the vendor row the others are measured against.

The arithmetic the tolerance allows (specs/fp8_matmul.py: tolerances):
  * every product a·b of two e4m3 values is exact in float32 (4 significant bits each, exponents far inside);
  * the K-long sums run in float32: each addition rounds by up to half a float32 ulp of the partial sum. The inputs
    make every output ~N(0, 1) before the scales (each entry ~N(0, K^-1/2)), so the errors add like a random walk,
    about 2^-24·sqrt(K); the term 2^-21·sqrt(K) leaves a wide margin, as in specs/matmul.py;
  * Hopper's fp8 tensor cores add the products of each k-step (32) into their accumulator with fewer bits than
    float32 (about 14 in published measurements), which is why cuBLAS, DeepGEMM and Triton's
    max_num_imprecise_acc add the tensor core's partial result into a true float32 accumulator every few k-steps:
    up to 2^-13 of the running sum per k-step, a random walk over K/32 of them with a margin: the term
    2^-10·sqrt(K/32). The margin is measured, not derived (commit 4cb51de says where and by how much): at one
    check case cuBLASLt (torch:eager) and the lab's wgmma rows, bit-identical, went past the term 2^-11·sqrt(K/32)
    this spec had, while the mma.sync and Triton rows stayed within it (bench/same_inputs.py shows it);
  * both scales multiply the float32 sum (two roundings), and the result is rounded once to bfloat16: one bf16 ulp.
The scales lie in [0.5, 2), so the absolute terms are multiplied by 4. A kernel that drops a K tile, reads e4m3 as
e5m2, forgets a scale, transposes an operand or accumulates in bf16 is off by far more.

torch._scaled_mm (cuBLASLt) needs K and N to be multiples of 16: torch:eager pads A, B and scale_b with zeros (and
ones) at odd check shapes, as a caller would; the bench shapes need no padding. The float64 reference reads the exact
e4m3 values. CUDA: cuda_src/fp8_matmul.cu. Triton: triton_src/fp8_matmul.py.
"""
import math

import torch

from compare.spec import Op, Tolerance
from specs import _special

E4M3 = torch.float8_e4m3fn


def make_inputs(shape, dtype, device, generator):
    m, n, k = shape
    sigma = max(k, 1) ** -0.25  # entries ~N(0, K^-1/2): each product ~1/K in variance, each output ~N(0, 1)
    a = _special.first_at_least(torch.randn((m, k), device=device, generator=generator) * sigma, sigma).to(dtype)
    b_rows = _special.first_at_least(torch.randn((n, k), device=device, generator=generator) * sigma, sigma).to(dtype)
    scale_a = torch.rand((m, 1), device=device, generator=generator) * 1.5 + 0.5
    scale_b = torch.rand((1, n), device=device, generator=generator) * 1.5 + 0.5
    return a, b_rows.t(), scale_a, scale_b


def reference(a, b, scale_a, scale_b):
    return (a @ b) * scale_a * scale_b


def _padded(n: int) -> int:
    return -(-n // 16) * 16


def torch_eager(a, b, scale_a, scale_b):
    """torch._scaled_mm, with A row-major and B column-major as it requires, K and N padded to multiples of 16; inputs
    of other layouts or sizes copied into fresh ones of those (cuBLASLt reads the strides it expects, nothing else)."""
    m, k = a.shape
    n = b.shape[1]
    kp, np_ = _padded(k), _padded(n)
    if (kp, np_) == (k, n) and a.stride() == (k, 1) and b.stride() == (1, k) and scale_a.stride() == (1, 1) \
            and scale_b.stride() == (n, 1):
        return torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
    a_in = a.new_zeros((m, kp))
    a_in[:, :k] = a
    b_rows = b.new_zeros((np_, kp))
    b_rows[:n, :k] = b.t()
    sa = scale_a.new_empty((m, 1))
    sa.copy_(scale_a)
    sb = scale_b.new_ones((1, np_))
    sb[:, :n] = scale_b
    c = torch._scaled_mm(a_in, b_rows.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    return c[:, :n].contiguous()


def tolerances(dtype, shape):
    k = max(shape[2], 1)
    accumulation = 2.0**-21 * math.sqrt(k) + 2.0**-10 * math.sqrt(math.ceil(k / 32))
    return Tolerance(atol=4 * accumulation, rtol=0.0, ulps=1)


OP = Op(
    name="fp8_matmul",
    summary="C = (A @ B)·scale_a·scale_b, A and B fp8 e4m3 (B column-major), row and column scales, bf16 out "
            "(compute-bound)",
    make_inputs=make_inputs,
    reference=reference,
    torch_eager=torch_eager,
    bytes_moved=lambda shape, dtype: shape[0] * shape[2] + shape[2] * shape[1] + 2 * shape[0] * shape[1]
    + 4 * (shape[0] + shape[1]),
    flops=lambda shape: 2 * shape[0] * shape[1] * shape[2],
    # Single elements; sizes below and just past a tile, none a multiple of 16 (torch:eager pads them); a K tail; one
    # row with a long K; 1000³ (a multiple of 8, not of 128); more tiles than an H100 has SMs, the last row and column
    # of tiles partial, on TMA's paths (K a multiple of 16, N of 8: cuda:tmastore's stores clipped at both edges).
    check_shapes=[(1, 1, 1), (17, 33, 9), (127, 129, 65), (256, 256, 256), (200, 264, 520), (1, 520, 4096),
                  (1000, 1000, 1000), (1800, 1304, 144)],
    bench_shapes=[(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (16384, 4096, 4096),
                  (4096, 14336, 4096)],
    quick_bench_shapes=[(2048, 2048, 2048), (4096, 4096, 4096)],
    interpret_shapes=[(1, 1, 1), (17, 33, 9), (40, 24, 70)],
    shape_names=("M", "N", "K"),
    dtypes=(E4M3,),
    tolerances=tolerances,
    output_dtypes=lambda dtype: torch.bfloat16,
    # wgmma, setmaxnreg and the sm_90a build exist on Hopper only; elsewhere the row is reported as skipped.
    requires_capability={"cuda:wgmma": (9, 0), "cuda:persistent": (9, 0), "cuda:tmastore": (9, 0)},
    roofline="compute",
)
