# torch:compile, float8_e4m3fn, M=2048 N=2048 K=2048: output code captured from torch.compile (torch 2.11.0+cu130) by `python -m compare softmax fp8_matmul fp8_quant dropout --gpus all --check-rows 4`
# AOT ID: ['21_inference']
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
        arg0_1, arg1_1, arg2_1, arg3_1 = args
        args.clear()
        assert_size_stride(arg0_1, (2048, 2048), (2048, 1))
        assert_size_stride(arg1_1, (2048, 2048), (1, 2048))
        assert_size_stride(arg2_1, (2048, 1), (1, 1))
        assert_size_stride(arg3_1, (1, 2048), (2048, 1))
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            buf0 = empty_strided_cuda((2048, 2048), (2048, 1), torch.bfloat16)
            # Topologically Sorted Source Nodes: [_scaled_mm], Original ATen: [aten._scaled_mm]
            extern_kernels._scaled_mm(arg0_1, arg1_1, arg2_1, arg3_1, out_dtype=torch.bfloat16, use_fast_accum=False, out=buf0)
            del arg0_1
            del arg1_1
            del arg2_1
            del arg3_1
        return (buf0, )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((2048, 2048), (2048, 1), device='cuda:0', dtype=torch.float8_e4m3fn)
    arg1_1 = rand_strided((2048, 2048), (1, 2048), device='cuda:0', dtype=torch.float8_e4m3fn)
    arg2_1 = rand_strided((2048, 1), (1, 1), device='cuda:0', dtype=torch.float32)
    arg3_1 = rand_strided((1, 2048), (2048, 1), device='cuda:0', dtype=torch.float32)
    return [arg0_1, arg1_1, arg2_1, arg3_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
