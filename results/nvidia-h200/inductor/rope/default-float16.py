# torch:compile, float16, B=1 S=2048 H=32 D=128: output code captured from torch.compile (torch 2.11.0+cu130) by `python -m compare fp8_quant rope --check-rows 8`
# AOT ID: ['58_inference']
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


# kernel path: /tmp/tmpeis69x_c/3q/c3quloskczaa5z5uc6qjxp4sctbpw7wu4gir6zcgr67ldr2deufb.py
# Topologically Sorted Source Nodes: [float_4, cat, getitem, c, mul, getitem_2, neg, getitem_3, cat_2, rotated, cat_1, getitem_1, s, mul_1, add, to], Original ATen: [aten._to_copy, aten.cat, aten.unsqueeze, aten.mul, aten.slice, aten.neg, aten.add]
# Source node to ATen node mapping:
#   add => add
#   c => convert_element_type
#   cat => clone, expand, unsqueeze, view
#   cat_1 => clone_2, expand_1, unsqueeze_3, view_1
#   cat_2 => cat
#   float_4 => convert_element_type_3
#   getitem => unsqueeze_1, unsqueeze_2
#   getitem_1 => unsqueeze_4, unsqueeze_5
#   getitem_2 => slice_1
#   getitem_3 => slice_2
#   mul => mul
#   mul_1 => mul_1
#   neg => neg
#   rotated => convert_element_type_2
#   s => convert_element_type_1
#   to => convert_element_type_4
# Graph fragment:
#   %arg2_1 : Tensor "f16[1, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0" = PlaceHolder[target=arg2_1]
#   %arg0_1 : Tensor "f16[2048, 64][64, 1]cuda:0" = PlaceHolder[target=arg0_1]
#   %arg1_1 : Tensor "f16[2048, 64][64, 1]cuda:0" = PlaceHolder[target=arg1_1]
#   %convert_element_type_3 : Tensor "f32[1, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%arg2_1, torch.float32), kwargs = {})
#   %unsqueeze : Tensor "f16[2048, 1, 64][64, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%arg0_1, 1), kwargs = {})
#   %expand : Tensor "f16[2048, 2, 64][64, 0, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.expand.default](args = (%unsqueeze, [2048, 2, 64]), kwargs = {})
#   %clone : Tensor "f16[2048, 2, 64][128, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.clone.default](args = (%expand,), kwargs = {memory_format: torch.contiguous_format})
#   %view : Tensor "f16[2048, 128][128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%clone, [2048, 128]), kwargs = {})
#   %unsqueeze_1 : Tensor "f16[1, 2048, 128][262144, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%view, 0), kwargs = {})
#   %unsqueeze_2 : Tensor "f16[1, 2048, 1, 128][262144, 128, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%unsqueeze_1, 2), kwargs = {})
#   %convert_element_type : Tensor "f32[1, 2048, 1, 128][262144, 128, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%unsqueeze_2, torch.float32), kwargs = {})
#   %mul : Tensor "f32[1, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_3, %convert_element_type), kwargs = {})
#   %slice_1 : Tensor "f16[1, 2048, 32, 64][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.slice.Tensor](args = (%arg2_1, 3, 64, 9223372036854775807), kwargs = {})
#   %neg : Tensor "f16[1, 2048, 32, 64][4194304, 2048, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%slice_1,), kwargs = {})
#   %slice_2 : Tensor "f16[1, 2048, 32, 64][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.slice.Tensor](args = (%arg2_1, 3, 0, 64), kwargs = {})
#   %cat : Tensor "f16[1, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.cat.default](args = ([%neg, %slice_2], -1), kwargs = {})
#   %convert_element_type_2 : Tensor "f32[1, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%cat, torch.float32), kwargs = {})
#   %unsqueeze_3 : Tensor "f16[2048, 1, 64][64, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%arg1_1, 1), kwargs = {})
#   %expand_1 : Tensor "f16[2048, 2, 64][64, 0, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.expand.default](args = (%unsqueeze_3, [2048, 2, 64]), kwargs = {})
#   %clone_2 : Tensor "f16[2048, 2, 64][128, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.clone.default](args = (%expand_1,), kwargs = {memory_format: torch.contiguous_format})
#   %view_1 : Tensor "f16[2048, 128][128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%clone_2, [2048, 128]), kwargs = {})
#   %unsqueeze_4 : Tensor "f16[1, 2048, 128][262144, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%view_1, 0), kwargs = {})
#   %unsqueeze_5 : Tensor "f16[1, 2048, 1, 128][262144, 128, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%unsqueeze_4, 2), kwargs = {})
#   %convert_element_type_1 : Tensor "f32[1, 2048, 1, 128][262144, 128, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%unsqueeze_5, torch.float32), kwargs = {})
#   %mul_1 : Tensor "f32[1, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_2, %convert_element_type_1), kwargs = {})
#   %add : Tensor "f32[1, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul, %mul_1), kwargs = {})
#   %convert_element_type_4 : Tensor "f16[1, 2048, 32, 128][8388608, 4096, 128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%add, torch.float16), kwargs = {})
#   return %convert_element_type_4
triton_poi_fused__to_copy_add_cat_mul_neg_slice_unsqueeze_0 = async_compile.triton('triton_poi_fused__to_copy_add_cat_mul_neg_slice_unsqueeze_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 8388608}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp16', 'in_ptr1': '*fp16', 'in_ptr2': '*fp16', 'out_ptr0': '*fp16', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused__to_copy_add_cat_mul_neg_slice_unsqueeze_0', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 5, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 84410368}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused__to_copy_add_cat_mul_neg_slice_unsqueeze_0(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 8388608
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x3 = xindex
    x0 = (xindex % 128)
    x2 = xindex // 4096
    x4 = xindex // 128
    tmp0 = tl.load(in_ptr0 + (x3), None).to(tl.float32)
    tmp2 = tl.load(in_ptr1 + (64*x2 + ((x0 % 64))), None, eviction_policy='evict_last').to(tl.float32)
    tmp20 = tl.load(in_ptr2 + (64*x2 + ((x0 % 64))), None, eviction_policy='evict_last').to(tl.float32)
    tmp1 = tmp0.to(tl.float32)
    tmp3 = tmp2.to(tl.float32)
    tmp4 = tmp1 * tmp3
    tmp5 = x0
    tmp6 = tl.full([1], 0, tl.int64)
    tmp7 = tmp5 >= tmp6
    tmp8 = tl.full([1], 64, tl.int64)
    tmp9 = tmp5 < tmp8
    tmp10 = tl.load(in_ptr0 + (64 + 128*x4 + (x0)), tmp9, eviction_policy='evict_last', other=0.0).to(tl.float32)
    tmp11 = -tmp10
    tmp12 = tl.full(tmp11.shape, 0.0, tmp11.dtype)
    tmp13 = tl.where(tmp9, tmp11, tmp12)
    tmp14 = tmp5 >= tmp8
    tmp15 = tl.full([1], 128, tl.int64)
    tmp16 = tmp5 < tmp15
    tmp17 = tl.load(in_ptr0 + (128*x4 + ((-64) + x0)), tmp14, eviction_policy='evict_last', other=0.0).to(tl.float32)
    tmp18 = tl.where(tmp9, tmp13, tmp17)
    tmp19 = tmp18.to(tl.float32)
    tmp21 = tmp20.to(tl.float32)
    tmp22 = tmp19 * tmp21
    tmp23 = tmp4 + tmp22
    tmp24 = tmp23.to(tl.float32)
    tl.store(out_ptr0 + (x3), tmp24, None)
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
        assert_size_stride(arg0_1, (2048, 64), (64, 1))
        assert_size_stride(arg1_1, (2048, 64), (64, 1))
        assert_size_stride(arg2_1, (1, 2048, 32, 128), (8388608, 4096, 128, 1))
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            buf0 = empty_strided_cuda((1, 2048, 32, 128), (8388608, 4096, 128, 1), torch.float16)
            # Topologically Sorted Source Nodes: [float_4, cat, getitem, c, mul, getitem_2, neg, getitem_3, cat_2, rotated, cat_1, getitem_1, s, mul_1, add, to], Original ATen: [aten._to_copy, aten.cat, aten.unsqueeze, aten.mul, aten.slice, aten.neg, aten.add]
            stream0 = get_raw_stream(0)
            triton_poi_fused__to_copy_add_cat_mul_neg_slice_unsqueeze_0.run(arg2_1, arg0_1, arg1_1, buf0, 8388608, stream=stream0)
            del arg0_1
            del arg1_1
            del arg2_1
        return (buf0, )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((2048, 64), (64, 1), device='cuda:0', dtype=torch.float16)
    arg1_1 = rand_strided((2048, 64), (64, 1), device='cuda:0', dtype=torch.float16)
    arg2_1 = rand_strided((1, 2048, 32, 128), (8388608, 4096, 128, 1), device='cuda:0', dtype=torch.float16)
    return [arg0_1, arg1_1, arg2_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
