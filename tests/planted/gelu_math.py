"""The right GELU math in fp32, shared by the planted Triton files (each wrong in its own way elsewhere):
0.5·(1 + tanh(u)) == 1 / (1 + e^(-2u)), which neither overflows to NaN nor cancels for negative x. The files import
it as a neighbour: compare.discover loads a Triton file from outside triton_src/ with its folder on sys.path."""
import triton
import triton.language as tl

SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
CUBIC_COEFF = tl.constexpr(0.044715)


@triton.jit
def gelu_fp32(x):
    u = SQRT_2_OVER_PI * (x + CUBIC_COEFF * x * x * x)
    return x / (1.0 + tl.exp(-2.0 * u))
