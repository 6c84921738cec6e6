"""LayerNorm over the last dimension of an (M, N) tensor, with a weight and a bias of N elements, and its backward:
  y = (x - mean) · rstd · weight + bias,   mean = Σx / N,   var = Σ(x - mean)² / N,   rstd = 1 / sqrt(var + eps)
with eps = 1e-5, statistics in fp32 (torch.nn.functional.layer_norm's definition: the biased variance).

Memory-bound both ways. Forward: read x, write y (2·M·N elements), plus the weight and bias. Backward: read x and
dy, write dx (3·M·N), plus the weight, dweight and dbias, and whatever the forward saved (mean and rstd: 2·M floats,
the row's choice; recomputing them costs no extra bytes). The backward's dweight and dbias are sums over all M
rows: a reduction across rows, where CUDA and Triton differ most (atomics, partial sums in two stages, a cluster's
shared memory). CUDA: cuda_src/layernorm.cu. Triton: triton_src/layernorm.py. Beside them, Liger-Kernel's
LayerNorm is the peer row peer:liger (`pip install liger-kernel`, or the lab's extra: `pip install -e ".[peers]"`),
its backward through autograd; it keeps a row in one block and refuses N > 65536.

What the reference gives where inputs are not finite (IEEE arithmetic through the formula, as the kernels do): a
row holding NaN or ±inf has a NaN mean or variance, so its whole output row is NaN; other rows are unaffected. The
backward passes are not run on those rows: the gradient of a non-finite statistic depends on how autograd orders
its terms, not on anything a kernel should match.
"""
import torch

from compare.spec import Backward, Op, Peer
from specs import _norm

EPS = 1e-5  # triton_src/layernorm.py and cuda_src/layernorm.cu use the same
with_params = _norm.inputs_with_params(2)  # weight and bias


def reference(x, weight, bias):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS) * weight + bias


def torch_eager(x, weight, bias):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps=EPS)


def load_liger():
    """Liger-Kernel's LayerNorm, the row peer:liger: imported in the row's worker only."""
    from liger_kernel.ops.layer_norm import LigerLayerNormFunction

    return lambda x, weight, bias: LigerLayerNormFunction.apply(x, weight, bias, EPS)


OP = Op(
    name="layernorm",
    summary="LayerNorm of an (M, N) tensor with weight and bias (reduction per row, memory-bound)",
    make_inputs=with_params(_norm.randn),
    reference=reference,
    torch_eager=torch_eager,
    bytes_moved=lambda shape, dtype: _norm.bytes_moved(shape, dtype, 2, 2),  # x, y; weight, bias
    flops=lambda shape: _norm.flops_per_element(shape, 8),
    **_norm.SHAPES,
    special_inputs=_norm.special_inputs(with_params),
    # |x̂·w| + |b| stays below ~6 for these inputs (x̂ within ±4, w around 1 ± 0.5·3, b within ±1.5): _norm.tolerances.
    tolerances=lambda dtype, shape, inputs: _norm.tolerances(dtype, shape, inputs, out_scale=8.0),
    peers={"liger": Peer("liger_kernel", load_liger, "liger-kernel")},
    unsupported_shapes={"peer:liger": _norm.wider_than_one_block},
    targets=_norm.FORWARD_TARGETS,
    backward=Backward(
        inputs=("x", "weight", "bias"),
        bytes_moved=lambda shape, dtype: _norm.bytes_moved(shape, dtype, 3, 3),  # x, dy, dx; weight, dweight, dbias
        tolerances=lambda dtype, shape, inputs: _norm.grad_tolerances(dtype, shape, inputs, 3),
        make_grad_output=_norm.grad_output,
        flops=lambda shape: _norm.flops_per_element(shape, 14),
        check_shapes=_norm.BACKWARD_CHECK_SHAPES,
        skip_special_inputs=("inf and nan",),
        targets=_norm.BACKWARD_TARGETS,
    ),
)
