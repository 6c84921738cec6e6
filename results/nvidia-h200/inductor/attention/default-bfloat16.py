# torch:compile, bfloat16, B=32 H=16 S=512 D=128: output code captured from torch.compile (torch 2.11.0+cu130) by `python -m compare attention attention_causal --check-rows 8`
# AOT ID: ['37_inference']
from ctypes import c_void_p, c_long, c_int
import torch
import math
import random
import os
import tempfile
from math import inf, nan
from cmath import nanj
from torch._inductor.hooks import run_intermediate_hooks
from torch._inductor.utils import maybe_profile
from torch._inductor.codegen.memory_planning import _align as align
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._inductor.select_algorithm import extern_kernels
import triton
import triton.language as tl
from torch._inductor.runtime.triton_heuristics import start_graph, end_graph
from torch._C import _cuda_getCurrentRawStream as get_raw_stream

aten = torch.ops.aten
inductor_ops = torch.ops.inductor
_quantized = torch.ops._quantized
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
assert_alignment = torch._C._dynamo.guards.assert_alignment
empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu
empty_strided_cpu_pinned = torch._C._dynamo.guards._empty_strided_cpu_pinned
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
empty_strided_xpu = torch._C._dynamo.guards._empty_strided_xpu
empty_strided_mtia = torch._C._dynamo.guards._empty_strided_mtia
reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor
alloc_from_pool = torch.ops.inductor._alloc_from_pool
async_compile = AsyncCompile()
empty_strided_p2p = torch._C._distributed_c10d._SymmetricMemory.empty_strided_p2p


# kernel path: /tmp/tmp85fcyw_8/x2/cx2gs6xtqqxc5m32gcpqjuqqfptdm63ng34ugpsythglq6qvqfhw.py
# Topologically Sorted Source Nodes: [view, exp_, sum_1, div_, to], Original ATen: [aten.view, aten.mul, aten.amax, aten.sub, aten.exp, aten.sum, aten.div, aten._to_copy]
# Source node to ATen node mapping:
#   div_ => div
#   exp_ => exp
#   sum_1 => sum_1
#   to => convert_element_type_2
#   view => view_2
# Graph fragment:
#   %bmm : Tensor "f32[512, 512, 512][262144, 512, 1]cuda:0" = PlaceHolder[target=bmm]
#   %amax_default : Tensor "f32[32, 16, 512, 1][8192, 512, 1, 262144]cuda:0" = PlaceHolder[target=amax_default]
#   %sum_1 : Tensor "f32[32, 16, 512, 1][8192, 512, 1, 262144]cuda:0" = PlaceHolder[target=sum_1]
#   %view_2 : Tensor "f32[32, 16, 512, 512][4194304, 262144, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%bmm, [32, 16, 512, 512]), kwargs = {})
#   %mul_tensor : Tensor "f32[32, 16, 512, 512][4194304, 262144, 512, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%view_2, 1), kwargs = {})
#   %amax_default : Tensor "f32[32, 16, 512, 1][8192, 512, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.amax.default](args = (%mul_tensor, [-1], True), kwargs = {})
#   %sub_tensor : Tensor "f32[32, 16, 512, 512][4194304, 262144, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%mul_tensor, %amax_default), kwargs = {})
#   %mul_tensor_1 : Tensor "f32[32, 16, 512, 512][4194304, 262144, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_tensor, 0.08838834764831845), kwargs = {})
#   %exp : Tensor "f32[32, 16, 512, 512][4194304, 262144, 512, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.exp.default](args = (%mul_tensor_1,), kwargs = {})
#   %sum_1 : Tensor "f32[32, 16, 512, 1][8192, 512, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%exp, [-1], True), kwargs = {})
#   %div : Tensor "f32[32, 16, 512, 512][4194304, 262144, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%exp, %sum_1), kwargs = {})
#   %convert_element_type_2 : Tensor "bf16[32, 16, 512, 512][4194304, 262144, 512, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%div, torch.bfloat16), kwargs = {})
#   return %amax_default,%sum_1,%expand
triton_per_fused__to_copy_amax_div_exp_mul_sub_sum_view_0 = async_compile.triton('triton_per_fused__to_copy_amax_div_exp_mul_sub_sum_view_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 262144, 'r0_': 512},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr2': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused__to_copy_amax_div_exp_mul_sub_sum_view_0', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 2, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 0, 'r0_': 1073741824}}
)
@triton.jit
def triton_per_fused__to_copy_amax_div_exp_mul_sub_sum_view_0(in_ptr0, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 262144
    r0_numel = 512
    R0_BLOCK: tl.constexpr = 512
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 512*x0), None)
    tmp1 = tl.full([1, 1], 1.0, tl.float32)
    tmp2 = tmp0 * tmp1
    tmp3 = tl.broadcast_to(tmp2, [XBLOCK, R0_BLOCK])
    tmp5 = triton_helpers.max2(tmp3, 1)[:, None].to(tl.float32)
    tmp6 = tmp2 - tmp5
    tmp7 = tl.full([1, 1], 0.08838834764831845, tl.float32)
    tmp8 = tmp6 * tmp7
    tmp9 = libdevice.exp(tmp8)
    tmp10 = tl.broadcast_to(tmp9, [XBLOCK, R0_BLOCK])
    tmp12 = tl.sum(tmp10, 1)[:, None].to(tl.float32)
    tmp13 = (tmp9 / tmp12)
    tmp14 = tmp13.to(tl.float32)
    tl.store(out_ptr2 + (r0_1 + 512*x0), tmp14, None)
''', device_str='cuda')


async_compile.wait(globals())
del async_compile

class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def recursively_apply_fns(self, fns):
        new_callables = []
        for fn, c in zip(fns, self.partitions):
            new_callables.append(fn(c))
        self.partitions = new_callables

    def call(self, args):
        arg0_1, arg1_1, arg2_1 = args
        args.clear()
        assert_size_stride(arg0_1, (32, 16, 512, 128), (1048576, 65536, 128, 1))
        assert_size_stride(arg1_1, (32, 16, 512, 128), (1048576, 65536, 128, 1))
        assert_size_stride(arg2_1, (32, 16, 512, 128), (1048576, 65536, 128, 1))
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            buf0 = empty_strided_cuda((512, 512, 512), (262144, 512, 1), torch.float32)
            # Topologically Sorted Source Nodes: [q3, k3, transpose, scores], Original ATen: [aten.view, aten.transpose, aten.bmm]
            extern_kernels.bmm_dtype(reinterpret_tensor(arg0_1, (512, 512, 128), (65536, 128, 1), 0), reinterpret_tensor(arg1_1, (512, 128, 512), (65536, 1, 128), 0), out_dtype=torch.float32, out=buf0)
            del arg0_1
            del arg1_1
            buf3 = empty_strided_cuda((32, 16, 512, 512), (4194304, 262144, 512, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view, exp_, sum_1, div_, to], Original ATen: [aten.view, aten.mul, aten.amax, aten.sub, aten.exp, aten.sum, aten.div, aten._to_copy]
            stream0 = get_raw_stream(0)
            triton_per_fused__to_copy_amax_div_exp_mul_sub_sum_view_0.run(buf0, buf3, 262144, 512, stream=stream0)
            del buf0
            buf4 = empty_strided_cuda((512, 512, 128), (65536, 128, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [view, exp_, div_, to, matmul], Original ATen: [aten.view, aten.mul, aten.sub, aten.exp, aten.div, aten._to_copy, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf3, (512, 512, 512), (262144, 512, 1), 0), reinterpret_tensor(arg2_1, (512, 512, 128), (65536, 128, 1), 0), out=buf4)
            del arg2_1
            del buf3
        return (reinterpret_tensor(buf4, (32, 16, 512, 128), (1048576, 65536, 128, 1), 0), )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((32, 16, 512, 128), (1048576, 65536, 128, 1), device='cuda:0', dtype=torch.bfloat16)
    arg1_1 = rand_strided((32, 16, 512, 128), (1048576, 65536, 128, 1), device='cuda:0', dtype=torch.bfloat16)
    arg2_1 = rand_strided((32, 16, 512, 128), (1048576, 65536, 128, 1), device='cuda:0', dtype=torch.bfloat16)
    return [arg0_1, arg1_1, arg2_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
