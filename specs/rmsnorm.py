"""RMSNorm over the last dimension of an (M, N) tensor, with a weight of N elements, and its backward:
  y = x · rstd · weight,   rstd = 1 / sqrt(Σx² / N + eps)
with eps = 1e-6, statistics in fp32 (torch.nn.functional.rms_norm's definition).

LayerNorm without the mean and the bias (specs/layernorm.py): one statistic per row, and in the backward one
reduction across rows (dweight). Memory-bound both ways. Forward: read x, write y (2·M·N elements) and the weight.
Backward: read x and dy, write dx (3·M·N), plus the weight and dweight, and what the forward saved (rstd, M floats,
the row's choice). CUDA: cuda_src/rmsnorm.cu. Triton: triton_src/rmsnorm.py. Beside them, Liger-Kernel's RMSNorm
is the peer row peer:liger (`pip install liger-kernel`, or the lab's extra: `pip install -e ".[peers]"`), in its
"gemma" casting mode, its backward through autograd; it keeps a row in one block and refuses N > 65536.

What the reference gives where inputs are not finite: a row holding NaN is NaN throughout, and other rows are
unaffected. Rows holding ±inf are left out of the special inputs (_norm.special_inputs, infinities=False): their
output has no agreed value. Through the formula in IEEE arithmetic Σx² = inf, rstd = 0 and the finite entries give
0, as this lab's kernels do; torch.nn.functional.rms_norm on CUDA (torch 2.11) gives NaN throughout such a row.
Neither is wrong, and a check that fails one of them would say nothing about the kernel's arithmetic. The backward
passes are not run on the non-finite rows (see specs/layernorm.py).
"""
import torch

from compare.spec import Backward, Op, Peer
from specs import _norm

EPS = 1e-6  # triton_src/rmsnorm.py and cuda_src/rmsnorm.cu use the same
with_weight = _norm.inputs_with_params(1)


def reference(x, weight):
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + EPS) * weight


def torch_eager(x, weight):
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), weight, eps=EPS)


def load_liger():
    """Liger-Kernel's RMSNorm, the row peer:liger: imported in the row's worker only."""
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction

    # apply(x, weight, eps, offset, casting_mode, in_place). "gemma" casting computes in fp32 and rounds once, which
    # is this spec's definition; Liger's default "llama" rounds x·rstd to the input dtype before the weight's
    # multiply: two roundings, outside a 1-ulp bound. in_place=False: the default overwrites dy with dx, and the
    # harness calls the backward again and again on one dy (and checks that inputs come back unmodified).
    return lambda x, weight: LigerRMSNormFunction.apply(x, weight, EPS, 0.0, "gemma", False)


OP = Op(
    name="rmsnorm",
    summary="RMSNorm of an (M, N) tensor with weight (reduction per row, memory-bound)",
    make_inputs=with_weight(_norm.randn),
    reference=reference,
    torch_eager=torch_eager,
    bytes_moved=lambda shape, dtype: _norm.bytes_moved(shape, dtype, 2, 1),  # x, y; weight
    flops=lambda shape: _norm.flops_per_element(shape, 4),
    **_norm.SHAPES,
    special_inputs=_norm.special_inputs(with_weight, infinities=False),
    # A product, nothing cancels: relative bounds (_norm.tolerances with out_scale 0).
    tolerances=lambda dtype, shape, inputs: _norm.tolerances(dtype, shape, inputs, out_scale=0.0),
    peers={"liger": Peer("liger_kernel", load_liger, "liger-kernel")},
    unsupported_shapes={"peer:liger": _norm.wider_than_one_block},
    targets=_norm.FORWARD_TARGETS,
    backward=Backward(
        inputs=("x", "weight"),
        bytes_moved=lambda shape, dtype: _norm.bytes_moved(shape, dtype, 3, 2),  # x, dy, dx; weight, dweight
        tolerances=lambda dtype, shape, inputs: _norm.grad_tolerances(dtype, shape, inputs, 2, centered=False),
        make_grad_output=_norm.grad_output,
        flops=lambda shape: _norm.flops_per_element(shape, 8),
        check_shapes=_norm.BACKWARD_CHECK_SHAPES,
        skip_special_inputs=("inf and nan",),
        targets=_norm.BACKWARD_TARGETS,
    ),
)
