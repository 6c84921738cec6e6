"""Steps with a fallback take the inputs they are for. A Hopper step (TMA, wgmma) hands inputs it can't describe to
the step before it (an unaligned view, another GPU), so a step whose own path never ran would still pass every
check, timed as its predecessor. On inputs it is for, its own kernel must be the one launched (GPU only)."""
import pytest
import torch

from compare import discover, timing

HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
CASES = [
    # (op, row, its kernel, dtype, shape)
    *[(op, "cuda:wgmma", "attention_wgmma_kernel", dtype, shape)
      for op in ("attention", "attention_causal") for dtype in (torch.float16, torch.bfloat16)
      for shape in ((2, 3, 1000, 128), (1, 2, 513, 64))],
    *[(op, "triton:tma", "attention_tma_kernel", torch.bfloat16, (2, 3, 1000, 128))
      for op in ("attention", "attention_causal")],
    ("fp8_matmul", "cuda:wgmma", "fp8_matmul_wgmma_kernel", torch.float8_e4m3fn, (256, 256, 256)),
    ("fp8_matmul", "cuda:wgmma", "fp8_matmul_wgmma_kernel", torch.float8_e4m3fn, (1000, 1000, 1024)),
    ("fp8_matmul", "cuda:persistent", "fp8_matmul_persistent_kernel", torch.float8_e4m3fn, (1000, 1000, 1024)),
    ("fp8_matmul", "cuda:persistent", "fp8_matmul_persistent_kernel", torch.float8_e4m3fn, (2048, 2048, 256)),
    ("fp8_matmul", "cuda:tmastore", "fp8_matmul_tmastore_kernel", torch.float8_e4m3fn, (1800, 1304, 144)),
    ("fp8_matmul", "cuda:tmastore", "fp8_matmul_tmastore_kernel", torch.float8_e4m3fn, (2048, 2048, 256)),
    ("fp8_matmul", "triton:persistent", "fp8_matmul_persistent_kernel", torch.float8_e4m3fn, (1000, 1000, 1024)),
    ("fp8_matmul", "triton:k256", "fp8_matmul_k256_kernel", torch.float8_e4m3fn, (1000, 1000, 1024)),
    ("fp8_matmul", "triton:k256", "fp8_matmul_k256_kernel", torch.float8_e4m3fn, (1800, 1304, 144)),
    ("matmul", "cuda:warptile", "matmul_warptile_kernel", torch.float32, (1000, 1000, 1000)),
    ("matmul", "cuda:tmastore", "matmul_tmastore_kernel", torch.bfloat16, (1000, 1000, 1000)),
    ("matmul", "cuda:tmastore", "matmul_tmastore_kernel", torch.float16, (200, 264, 520)),
    ("matmul", "cuda:multicast", "matmul_multicast_kernel", torch.bfloat16, (1000, 1000, 1000)),
    ("matmul", "cuda:multicast", "matmul_multicast_kernel", torch.float16, (300, 264, 520)),  # odd tile rows
    ("softmax", "cuda:cluster", "softmax_cluster_kernel", torch.float32, (32, 262144)),
    ("softmax", "cuda:cluster", "softmax_cluster_kernel", torch.bfloat16, (3, 70001)),
    ("softmax", "cuda:staged_cluster", "softmax_staged_cluster_kernel", torch.float32, (32, 262144)),  # 16 blocks
    ("softmax", "cuda:staged_cluster", "softmax_staged_cluster_kernel", torch.bfloat16, (32, 262144)),  # 8
    ("softmax", "cuda:staged_cluster", "softmax_staged_cluster_kernel", torch.float16, (5, 139264)),  # 8 of 2176
    ("softmax", "cuda:staged_cluster", "softmax_cluster_kernel", torch.bfloat16, (64, 131072)),  # four parts: v6's
    ("softmax", "cuda:resident", "softmax_resident_kernel", torch.float32, (32, 262144)),  # parts in registers too
    ("softmax", "cuda:resident", "softmax_resident_kernel", torch.bfloat16, (4, 4000000)),  # uneven parts
    ("softmax", "cuda:resident", "softmax_resident_kernel", torch.float16, (3, 70000)),
    ("softmax", "cuda:resident", "softmax_split_stats_kernel", torch.float32, (4, 4000000)),  # too big: v5's
    ("softmax", "cuda:resident", "softmax_block_kernel", torch.float32, (3, 32768)),  # v3 holds the row
    ("softmax", "cuda:grid_ring", "softmax_grid_ring_kernel", torch.float32, (32, 262144)),  # 4 groups of 33
    ("softmax", "cuda:grid_ring", "softmax_grid_ring_kernel", torch.bfloat16, (300, 65600)),  # 25 rows a group
    ("softmax", "cuda:grid_ring", "softmax_grid_ring_kernel", torch.float16, (3, 70000)),  # uneven parts
    ("softmax", "cuda:grid_ring", "softmax_resident_kernel", torch.bfloat16, (4, 4000000)),  # parts too big: v8's
    ("softmax", "triton:packed", "softmax_packed_kernel", torch.bfloat16, (4096, 32768)),
    ("softmax", "triton:exchange", "softmax_exchange_kernel", torch.float32, (32, 262144)),  # 2 groups of 128
    ("softmax", "triton:exchange", "softmax_exchange_kernel", torch.bfloat16, (3, 70000)),  # a ragged last part
    ("softmax", "triton:exchange", "softmax_split_stats_kernel", torch.float32, (4, 4000000)),  # too many parts
    ("softmax", "triton:wide_exchange", "softmax_exchange_kernel", torch.float32, (32, 262144)),  # 4 groups of 64
    ("softmax", "triton:wide_exchange", "softmax_exchange_kernel", torch.bfloat16, (300, 65600)),  # a 64-col part
    ("softmax", "triton:wide_exchange", "softmax_split_stats_kernel", torch.float16, (4, 4000000)),  # too many
    ("softmax", "triton:own_zeroing", "softmax_exchange_kernel", torch.float32, (32, 262144)),
    ("softmax", "triton:own_zeroing", "softmax_exchange_kernel", torch.float16, (300, 65600)),
    ("softmax", "triton:own_zeroing", "softmax_exchange_kernel", torch.bfloat16, (3, 70000)),  # a row a group
    ("softmax", "triton:packed", "softmax_packed_kernel", torch.float16, (5, 20002)),
]
# Steps that take their own path only where the GPU runs thread-block clusters and bulk copies (compute capability
# 9.0 on), and hand every input to the step before elsewhere.
NEEDS_CLUSTERS = {("softmax", "cuda:cluster"), ("softmax", "cuda:staged_cluster"), ("softmax", "cuda:resident"),
                  ("softmax", "cuda:grid_ring")}


@pytest.mark.gpu
@pytest.mark.parametrize("op_name,impl_name,kernel,dtype,shape", CASES,
                         ids=[f"{c[0]}-{c[1]}-{str(c[3])[6:]}-{'x'.join(map(str, c[4]))}" for c in CASES])
def test_a_step_launches_its_own_kernel_on_the_inputs_it_is_for(op_name, impl_name, kernel, dtype, shape):
    op = discover.load_op(op_name)
    if op.requires_capability.get(impl_name) and not HOPPER:
        pytest.skip(f"{impl_name} is built for compute capability 9.0 only")
    if (op_name, impl_name) in NEEDS_CLUSTERS and torch.cuda.get_device_capability() < (9, 0):
        pytest.skip(f"{impl_name} takes its own path on GPUs with thread-block clusters (compute capability 9.0 on)")
    fn = next(i for i in discover.implementations(op) if i.name == impl_name).load()
    device = torch.device("cuda")
    inputs = op.make_inputs(shape, dtype, device, torch.Generator(device=device).manual_seed(0))
    fn(*inputs)  # JIT compilation and autotuning first
    names = [a["name"] for a in timing.gpu_activities(lambda: fn(*inputs))]
    assert any(kernel in name for name in names), f"{impl_name} at {shape} {dtype} launched {names}"
