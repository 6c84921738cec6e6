# torch:compile, float32, 1048576: output code captured from torch.compile (torch 2.11.0+cu130) by `python -m compare softmax fp8_matmul fp8_quant dropout --gpus all --check-rows 4`
# AOT ID: ['36_inference']
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


# kernel path: /tmp/tmp_y_bb3ko/ez/cezm4g4z2w45h5v4w57vy7tksqwks37xhzv7m44hh4334vzzoybe.py
# Topologically Sorted Source Nodes: [g, and_, rshift_2, high_half, and__2, low_half, rshift_3, add, hi0, xor_2, rshift_1, c2, rshift_8, high_half_2, and__10, low_half_2, rshift_9, add_6, hi1, xor_4, and__1, add_2, k0, c0_1, rshift_11, high_half_3, and__15, low_half_3, rshift_12, add_10, hi0_2, rshift, xor, c0, and__7, low_half_1, rshift_5, high_half_1, and__8, lshift_1, add_5, lo0_1, xor_10, add_3, k1, add_9, k1_1, c2_2, rshift_20, high_half_6, and__26, low_half_6, rshift_21, add_18, hi1_2, rshift_6, add_4, hi0_1, and__3, lshift, add_1, lo0, xor_6, c2_1, and__18, low_half_4, rshift_14, high_half_4, and__19, lshift_4, add_13, lo1_1, xor_12, add_8, k0_1, add_14, k0_2, c0_3, rshift_23, high_half_7, and__31, low_half_7, rshift_24, add_22, hi0_4, rshift_15, add_12, hi1_1, and__11, lshift_2, add_7, lo1, xor_8, c0_2, and__23, low_half_5, rshift_17, high_half_5, and__24, lshift_5, add_17, lo0_3, xor_18, add_15, k1_2, add_21, k1_3, c2_4, rshift_32, high_half_10, and__42, low_half_10, rshift_33, add_30, hi1_4, rshift_18, add_16, hi0_3, and__16, lshift_3, add_11, lo0_2, xor_14, c2_3, and__34, low_half_8, rshift_26, high_half_8, and__35, lshift_8, add_25, lo1_3, xor_20, add_20, k0_3, add_26, k0_4, c0_5, rshift_35, high_half_11, and__47, low_half_11, rshift_36, add_34, hi0_6, rshift_27, add_24, hi1_3, and__27, lshift_6, add_19, lo1_2, xor_16, c0_4, and__39, low_half_9, rshift_29, high_half_9, and__40, lshift_9, add_29, lo0_5, xor_26, add_27, k1_4, add_33, k1_5, c2_6, rshift_44, high_half_14, and__58, low_half_14, rshift_45, add_42, hi1_6, rshift_30, add_28, hi0_5, and__32, lshift_7, add_23, lo0_4, xor_22, c2_5, and__50, low_half_12, rshift_38, high_half_12, and__51, lshift_12, add_37, lo1_5, xor_28, add_32, k0_5, add_38, k0_6, c0_7, rshift_47, high_half_15, and__63, low_half_15, rshift_48, add_46, hi0_8, rshift_39, add_36, hi1_5, and__43, lshift_10, add_31, lo1_4, xor_24, c0_6, and__55, low_half_13, rshift_41, high_half_13, and__56, lshift_13, add_41, lo0_7, xor_34, add_39, k1_6, add_45, k1_7, c2_8, rshift_56, high_half_18, and__74, low_half_18, rshift_57, add_54, hi1_8, rshift_42, add_40, hi0_7, and__48, lshift_11, add_35, lo0_6, xor_30, c2_7, and__66, low_half_16, rshift_50, high_half_16, and__67, lshift_16, add_49, lo1_7, xor_36, add_44, k0_7, add_50, k0_8, c0_9, rshift_51, add_48, hi1_7, and__59, lshift_14, add_43, lo1_6, xor_32, c0_8, rshift_53, high_half_17, and__71, low_half_17, rshift_54, add_52, hi0_9, and__64, lshift_15, add_47, lo0_8, xor_38, add_51, k1_8, c2_9], Original ATen: [aten.arange, aten.bitwise_and, aten.__rshift__, aten.mul, aten.add, aten.bitwise_xor, aten.__lshift__]
# Source node to ATen node mapping:
#   add => add
#   add_1 => add_1
#   add_10 => add_10
#   add_11 => add_11
#   add_12 => add_12
#   add_13 => add_13
#   add_14 => add_14
#   add_15 => add_15
#   add_16 => add_16
#   add_17 => add_17
#   add_18 => add_18
#   add_19 => add_19
#   add_2 => add_2
#   add_20 => add_20
#   add_21 => add_21
#   add_22 => add_22
#   add_23 => add_23
#   add_24 => add_24
#   add_25 => add_25
#   add_26 => add_26
#   add_27 => add_27
#   add_28 => add_28
#   add_29 => add_29
#   add_3 => add_3
#   add_30 => add_30
#   add_31 => add_31
#   add_32 => add_32
#   add_33 => add_33
#   add_34 => add_34
#   add_35 => add_35
#   add_36 => add_36
#   add_37 => add_37
#   add_38 => add_38
#   add_39 => add_39
#   add_4 => add_4
#   add_40 => add_40
#   add_41 => add_41
#   add_42 => add_42
#   add_43 => add_43
#   add_44 => add_44
#   add_45 => add_45
#   add_46 => add_46
#   add_47 => add_47
#   add_48 => add_48
#   add_49 => add_49
#   add_5 => add_5
#   add_50 => add_50
#   add_51 => add_51
#   add_52 => add_52
#   add_54 => add_54
#   add_6 => add_6
#   add_7 => add_7
#   add_8 => add_8
#   add_9 => add_9
#   and_ => bitwise_and
#   and__1 => bitwise_and_1
#   and__10 => bitwise_and_10
#   and__11 => bitwise_and_11
#   and__15 => bitwise_and_15
#   and__16 => bitwise_and_16
#   and__18 => bitwise_and_18
#   and__19 => bitwise_and_19
#   and__2 => bitwise_and_2
#   and__23 => bitwise_and_23
#   and__24 => bitwise_and_24
#   and__26 => bitwise_and_26
#   and__27 => bitwise_and_27
#   and__3 => bitwise_and_3
#   and__31 => bitwise_and_31
#   and__32 => bitwise_and_32
#   and__34 => bitwise_and_34
#   and__35 => bitwise_and_35
#   and__39 => bitwise_and_39
#   and__40 => bitwise_and_40
#   and__42 => bitwise_and_42
#   and__43 => bitwise_and_43
#   and__47 => bitwise_and_47
#   and__48 => bitwise_and_48
#   and__50 => bitwise_and_50
#   and__51 => bitwise_and_51
#   and__55 => bitwise_and_55
#   and__56 => bitwise_and_56
#   and__58 => bitwise_and_58
#   and__59 => bitwise_and_59
#   and__63 => bitwise_and_63
#   and__64 => bitwise_and_64
#   and__66 => bitwise_and_66
#   and__67 => bitwise_and_67
#   and__7 => bitwise_and_7
#   and__71 => bitwise_and_71
#   and__74 => bitwise_and_74
#   and__8 => bitwise_and_8
#   c0 => bitwise_xor_1
#   c0_1 => bitwise_xor_5
#   c0_2 => bitwise_xor_9
#   c0_3 => bitwise_xor_13
#   c0_4 => bitwise_xor_17
#   c0_5 => bitwise_xor_21
#   c0_6 => bitwise_xor_25
#   c0_7 => bitwise_xor_29
#   c0_8 => bitwise_xor_33
#   c0_9 => bitwise_xor_37
#   c2 => bitwise_xor_3
#   c2_1 => bitwise_xor_7
#   c2_2 => bitwise_xor_11
#   c2_3 => bitwise_xor_15
#   c2_4 => bitwise_xor_19
#   c2_5 => bitwise_xor_23
#   c2_6 => bitwise_xor_27
#   c2_7 => bitwise_xor_31
#   c2_8 => bitwise_xor_35
#   c2_9 => bitwise_xor_39
#   g => iota
#   hi0 => rshift_4
#   hi0_1 => rshift_7
#   hi0_2 => rshift_13
#   hi0_3 => rshift_19
#   hi0_4 => rshift_25
#   hi0_5 => rshift_31
#   hi0_6 => rshift_37
#   hi0_7 => rshift_43
#   hi0_8 => rshift_49
#   hi0_9 => rshift_55
#   hi1 => rshift_10
#   hi1_1 => rshift_16
#   hi1_2 => rshift_22
#   hi1_3 => rshift_28
#   hi1_4 => rshift_34
#   hi1_5 => rshift_40
#   hi1_6 => rshift_46
#   hi1_7 => rshift_52
#   hi1_8 => rshift_58
#   high_half => mul_1
#   high_half_1 => mul_3
#   high_half_10 => mul_21
#   high_half_11 => mul_23
#   high_half_12 => mul_25
#   high_half_13 => mul_27
#   high_half_14 => mul_29
#   high_half_15 => mul_31
#   high_half_16 => mul_33
#   high_half_17 => mul_35
#   high_half_18 => mul_37
#   high_half_2 => mul_5
#   high_half_3 => mul_7
#   high_half_4 => mul_9
#   high_half_5 => mul_11
#   high_half_6 => mul_13
#   high_half_7 => mul_15
#   high_half_8 => mul_17
#   high_half_9 => mul_19
#   k0 => bitwise_and_5
#   k0_1 => bitwise_and_13
#   k0_2 => bitwise_and_21
#   k0_3 => bitwise_and_29
#   k0_4 => bitwise_and_37
#   k0_5 => bitwise_and_45
#   k0_6 => bitwise_and_53
#   k0_7 => bitwise_and_61
#   k0_8 => bitwise_and_69
#   k1 => bitwise_and_6
#   k1_1 => bitwise_and_14
#   k1_2 => bitwise_and_22
#   k1_3 => bitwise_and_30
#   k1_4 => bitwise_and_38
#   k1_5 => bitwise_and_46
#   k1_6 => bitwise_and_54
#   k1_7 => bitwise_and_62
#   k1_8 => bitwise_and_70
#   lo0 => bitwise_and_4
#   lo0_1 => bitwise_and_9
#   lo0_2 => bitwise_and_17
#   lo0_3 => bitwise_and_25
#   lo0_4 => bitwise_and_33
#   lo0_5 => bitwise_and_41
#   lo0_6 => bitwise_and_49
#   lo0_7 => bitwise_and_57
#   lo0_8 => bitwise_and_65
#   lo1 => bitwise_and_12
#   lo1_1 => bitwise_and_20
#   lo1_2 => bitwise_and_28
#   lo1_3 => bitwise_and_36
#   lo1_4 => bitwise_and_44
#   lo1_5 => bitwise_and_52
#   lo1_6 => bitwise_and_60
#   lo1_7 => bitwise_and_68
#   low_half => mul
#   low_half_1 => mul_2
#   low_half_10 => mul_20
#   low_half_11 => mul_22
#   low_half_12 => mul_24
#   low_half_13 => mul_26
#   low_half_14 => mul_28
#   low_half_15 => mul_30
#   low_half_16 => mul_32
#   low_half_17 => mul_34
#   low_half_18 => mul_36
#   low_half_2 => mul_4
#   low_half_3 => mul_6
#   low_half_4 => mul_8
#   low_half_5 => mul_10
#   low_half_6 => mul_12
#   low_half_7 => mul_14
#   low_half_8 => mul_16
#   low_half_9 => mul_18
#   lshift => lshift
#   lshift_1 => lshift_1
#   lshift_10 => lshift_10
#   lshift_11 => lshift_11
#   lshift_12 => lshift_12
#   lshift_13 => lshift_13
#   lshift_14 => lshift_14
#   lshift_15 => lshift_15
#   lshift_16 => lshift_16
#   lshift_2 => lshift_2
#   lshift_3 => lshift_3
#   lshift_4 => lshift_4
#   lshift_5 => lshift_5
#   lshift_6 => lshift_6
#   lshift_7 => lshift_7
#   lshift_8 => lshift_8
#   lshift_9 => lshift_9
#   rshift => rshift
#   rshift_1 => rshift_1
#   rshift_11 => rshift_11
#   rshift_12 => rshift_12
#   rshift_14 => rshift_14
#   rshift_15 => rshift_15
#   rshift_17 => rshift_17
#   rshift_18 => rshift_18
#   rshift_2 => rshift_2
#   rshift_20 => rshift_20
#   rshift_21 => rshift_21
#   rshift_23 => rshift_23
#   rshift_24 => rshift_24
#   rshift_26 => rshift_26
#   rshift_27 => rshift_27
#   rshift_29 => rshift_29
#   rshift_3 => rshift_3
#   rshift_30 => rshift_30
#   rshift_32 => rshift_32
#   rshift_33 => rshift_33
#   rshift_35 => rshift_35
#   rshift_36 => rshift_36
#   rshift_38 => rshift_38
#   rshift_39 => rshift_39
#   rshift_41 => rshift_41
#   rshift_42 => rshift_42
#   rshift_44 => rshift_44
#   rshift_45 => rshift_45
#   rshift_47 => rshift_47
#   rshift_48 => rshift_48
#   rshift_5 => rshift_5
#   rshift_50 => rshift_50
#   rshift_51 => rshift_51
#   rshift_53 => rshift_53
#   rshift_54 => rshift_54
#   rshift_56 => rshift_56
#   rshift_57 => rshift_57
#   rshift_6 => rshift_6
#   rshift_8 => rshift_8
#   rshift_9 => rshift_9
#   xor => bitwise_xor
#   xor_10 => bitwise_xor_10
#   xor_12 => bitwise_xor_12
#   xor_14 => bitwise_xor_14
#   xor_16 => bitwise_xor_16
#   xor_18 => bitwise_xor_18
#   xor_2 => bitwise_xor_2
#   xor_20 => bitwise_xor_20
#   xor_22 => bitwise_xor_22
#   xor_24 => bitwise_xor_24
#   xor_26 => bitwise_xor_26
#   xor_28 => bitwise_xor_28
#   xor_30 => bitwise_xor_30
#   xor_32 => bitwise_xor_32
#   xor_34 => bitwise_xor_34
#   xor_36 => bitwise_xor_36
#   xor_38 => bitwise_xor_38
#   xor_4 => bitwise_xor_4
#   xor_6 => bitwise_xor_6
#   xor_8 => bitwise_xor_8
# Graph fragment:
#   %arg1_1 : Tensor "i64[1][1]cuda:0" = PlaceHolder[target=arg1_1]
#   %bitwise_xor_5 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_5]
#   %bitwise_xor_11 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_11]
#   %bitwise_xor_7 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_7]
#   %bitwise_xor_13 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_13]
#   %bitwise_xor_9 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_9]
#   %bitwise_xor_19 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_19]
#   %bitwise_xor_15 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_15]
#   %bitwise_xor_21 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_21]
#   %bitwise_xor_17 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_17]
#   %bitwise_xor_27 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_27]
#   %bitwise_xor_23 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_23]
#   %bitwise_xor_29 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_29]
#   %bitwise_xor_25 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_25]
#   %bitwise_xor_35 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_35]
#   %bitwise_xor_31 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_31]
#   %bitwise_xor_33 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_33]
#   %iota : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.prims.iota.default](args = (262144,), kwargs = {start: 0, step: 1, dtype: torch.int64, device: cuda:0, requires_grad: False})
#   %bitwise_and : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%iota, 4294967295), kwargs = {})
#   %rshift_2 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_and, 16), kwargs = {})
#   %mul_1 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_2, 3528531795), kwargs = {})
#   %bitwise_and_2 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_and, 65535), kwargs = {})
#   %mul : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_2, 3528531795), kwargs = {})
#   %rshift_3 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul, 16), kwargs = {})
#   %add : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_1, %rshift_3), kwargs = {})
#   %rshift_4 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add, 16), kwargs = {})
#   %bitwise_xor_2 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Scalar](args = (%rshift_4, 0), kwargs = {})
#   %rshift_1 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%arg1_1, 32), kwargs = {})
#   %bitwise_xor_3 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_2, %rshift_1), kwargs = {})
#   %rshift_8 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_3, 16), kwargs = {})
#   %mul_5 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_8, 3449720151), kwargs = {})
#   %bitwise_and_10 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_3, 65535), kwargs = {})
#   %mul_4 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_10, 3449720151), kwargs = {})
#   %rshift_9 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_4, 16), kwargs = {})
#   %add_6 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_5, %rshift_9), kwargs = {})
#   %rshift_10 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_6, 16), kwargs = {})
#   %bitwise_xor_4 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Scalar](args = (%rshift_10, 0), kwargs = {})
#   %bitwise_and_1 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%arg1_1, 4294967295), kwargs = {})
#   %add_2 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_1, 2654435769), kwargs = {})
#   %bitwise_and_5 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_2, 4294967295), kwargs = {})
#   %bitwise_xor_5 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_4, %bitwise_and_5), kwargs = {})
#   %rshift_11 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_5, 16), kwargs = {})
#   %mul_7 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_11, 3528531795), kwargs = {})
#   %bitwise_and_15 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_5, 65535), kwargs = {})
#   %mul_6 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_15, 3528531795), kwargs = {})
#   %rshift_12 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_6, 16), kwargs = {})
#   %add_10 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_7, %rshift_12), kwargs = {})
#   %rshift_13 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_10, 16), kwargs = {})
#   %rshift : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%iota, 32), kwargs = {})
#   %bitwise_xor : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Scalar](args = (%rshift, 0), kwargs = {})
#   %bitwise_xor_1 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor, %bitwise_and_1), kwargs = {})
#   %bitwise_and_7 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_1, 65535), kwargs = {})
#   %mul_2 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_7, 3528531795), kwargs = {})
#   %rshift_5 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_1, 16), kwargs = {})
#   %mul_3 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_5, 3528531795), kwargs = {})
#   %bitwise_and_8 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_3, 65535), kwargs = {})
#   %lshift_1 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_8, 16), kwargs = {})
#   %add_5 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_2, %lshift_1), kwargs = {})
#   %bitwise_and_9 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_5, 4294967295), kwargs = {})
#   %bitwise_xor_10 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_13, %bitwise_and_9), kwargs = {})
#   %add_3 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%rshift_1, 3144134277), kwargs = {})
#   %bitwise_and_6 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_3, 4294967295), kwargs = {})
#   %add_9 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_6, 3144134277), kwargs = {})
#   %bitwise_and_14 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_9, 4294967295), kwargs = {})
#   %bitwise_xor_11 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_10, %bitwise_and_14), kwargs = {})
#   %rshift_20 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_11, 16), kwargs = {})
#   %mul_13 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_20, 3449720151), kwargs = {})
#   %bitwise_and_26 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_11, 65535), kwargs = {})
#   %mul_12 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_26, 3449720151), kwargs = {})
#   %rshift_21 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_12, 16), kwargs = {})
#   %add_18 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_13, %rshift_21), kwargs = {})
#   %rshift_22 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_18, 16), kwargs = {})
#   %rshift_6 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_2, 16), kwargs = {})
#   %add_4 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_3, %rshift_6), kwargs = {})
#   %rshift_7 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_4, 16), kwargs = {})
#   %bitwise_and_3 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_1, 65535), kwargs = {})
#   %lshift : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_3, 16), kwargs = {})
#   %add_1 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul, %lshift), kwargs = {})
#   %bitwise_and_4 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_1, 4294967295), kwargs = {})
#   %bitwise_xor_6 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_7, %bitwise_and_4), kwargs = {})
#   %bitwise_xor_7 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_6, %bitwise_and_6), kwargs = {})
#   %bitwise_and_18 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_7, 65535), kwargs = {})
#   %mul_8 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_18, 3449720151), kwargs = {})
#   %rshift_14 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_7, 16), kwargs = {})
#   %mul_9 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_14, 3449720151), kwargs = {})
#   %bitwise_and_19 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_9, 65535), kwargs = {})
#   %lshift_4 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_19, 16), kwargs = {})
#   %add_13 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_8, %lshift_4), kwargs = {})
#   %bitwise_and_20 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_13, 4294967295), kwargs = {})
#   %bitwise_xor_12 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_22, %bitwise_and_20), kwargs = {})
#   %add_8 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_5, 2654435769), kwargs = {})
#   %bitwise_and_13 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_8, 4294967295), kwargs = {})
#   %add_14 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_13, 2654435769), kwargs = {})
#   %bitwise_and_21 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_14, 4294967295), kwargs = {})
#   %bitwise_xor_13 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_12, %bitwise_and_21), kwargs = {})
#   %rshift_23 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_13, 16), kwargs = {})
#   %mul_15 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_23, 3528531795), kwargs = {})
#   %bitwise_and_31 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_13, 65535), kwargs = {})
#   %mul_14 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_31, 3528531795), kwargs = {})
#   %rshift_24 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_14, 16), kwargs = {})
#   %add_22 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_15, %rshift_24), kwargs = {})
#   %rshift_25 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_22, 16), kwargs = {})
#   %rshift_15 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_8, 16), kwargs = {})
#   %add_12 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_9, %rshift_15), kwargs = {})
#   %rshift_16 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_12, 16), kwargs = {})
#   %bitwise_and_11 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_5, 65535), kwargs = {})
#   %lshift_2 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_11, 16), kwargs = {})
#   %add_7 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_4, %lshift_2), kwargs = {})
#   %bitwise_and_12 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_7, 4294967295), kwargs = {})
#   %bitwise_xor_8 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_16, %bitwise_and_12), kwargs = {})
#   %bitwise_xor_9 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_8, %bitwise_and_13), kwargs = {})
#   %bitwise_and_23 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_9, 65535), kwargs = {})
#   %mul_10 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_23, 3528531795), kwargs = {})
#   %rshift_17 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_9, 16), kwargs = {})
#   %mul_11 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_17, 3528531795), kwargs = {})
#   %bitwise_and_24 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_11, 65535), kwargs = {})
#   %lshift_5 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_24, 16), kwargs = {})
#   %add_17 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_10, %lshift_5), kwargs = {})
#   %bitwise_and_25 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_17, 4294967295), kwargs = {})
#   %bitwise_xor_18 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_25, %bitwise_and_25), kwargs = {})
#   %add_15 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_14, 3144134277), kwargs = {})
#   %bitwise_and_22 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_15, 4294967295), kwargs = {})
#   %add_21 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_22, 3144134277), kwargs = {})
#   %bitwise_and_30 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_21, 4294967295), kwargs = {})
#   %bitwise_xor_19 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_18, %bitwise_and_30), kwargs = {})
#   %rshift_32 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_19, 16), kwargs = {})
#   %mul_21 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_32, 3449720151), kwargs = {})
#   %bitwise_and_42 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_19, 65535), kwargs = {})
#   %mul_20 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_42, 3449720151), kwargs = {})
#   %rshift_33 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_20, 16), kwargs = {})
#   %add_30 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_21, %rshift_33), kwargs = {})
#   %rshift_34 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_30, 16), kwargs = {})
#   %rshift_18 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_10, 16), kwargs = {})
#   %add_16 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_11, %rshift_18), kwargs = {})
#   %rshift_19 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_16, 16), kwargs = {})
#   %bitwise_and_16 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_7, 65535), kwargs = {})
#   %lshift_3 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_16, 16), kwargs = {})
#   %add_11 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_6, %lshift_3), kwargs = {})
#   %bitwise_and_17 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_11, 4294967295), kwargs = {})
#   %bitwise_xor_14 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_19, %bitwise_and_17), kwargs = {})
#   %bitwise_xor_15 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_14, %bitwise_and_22), kwargs = {})
#   %bitwise_and_34 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_15, 65535), kwargs = {})
#   %mul_16 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_34, 3449720151), kwargs = {})
#   %rshift_26 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_15, 16), kwargs = {})
#   %mul_17 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_26, 3449720151), kwargs = {})
#   %bitwise_and_35 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_17, 65535), kwargs = {})
#   %lshift_8 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_35, 16), kwargs = {})
#   %add_25 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_16, %lshift_8), kwargs = {})
#   %bitwise_and_36 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_25, 4294967295), kwargs = {})
#   %bitwise_xor_20 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_34, %bitwise_and_36), kwargs = {})
#   %add_20 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_21, 2654435769), kwargs = {})
#   %bitwise_and_29 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_20, 4294967295), kwargs = {})
#   %add_26 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_29, 2654435769), kwargs = {})
#   %bitwise_and_37 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_26, 4294967295), kwargs = {})
#   %bitwise_xor_21 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_20, %bitwise_and_37), kwargs = {})
#   %rshift_35 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_21, 16), kwargs = {})
#   %mul_23 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_35, 3528531795), kwargs = {})
#   %bitwise_and_47 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_21, 65535), kwargs = {})
#   %mul_22 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_47, 3528531795), kwargs = {})
#   %rshift_36 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_22, 16), kwargs = {})
#   %add_34 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_23, %rshift_36), kwargs = {})
#   %rshift_37 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_34, 16), kwargs = {})
#   %rshift_27 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_16, 16), kwargs = {})
#   %add_24 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_17, %rshift_27), kwargs = {})
#   %rshift_28 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_24, 16), kwargs = {})
#   %bitwise_and_27 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_13, 65535), kwargs = {})
#   %lshift_6 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_27, 16), kwargs = {})
#   %add_19 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_12, %lshift_6), kwargs = {})
#   %bitwise_and_28 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_19, 4294967295), kwargs = {})
#   %bitwise_xor_16 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_28, %bitwise_and_28), kwargs = {})
#   %bitwise_xor_17 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_16, %bitwise_and_29), kwargs = {})
#   %bitwise_and_39 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_17, 65535), kwargs = {})
#   %mul_18 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_39, 3528531795), kwargs = {})
#   %rshift_29 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_17, 16), kwargs = {})
#   %mul_19 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_29, 3528531795), kwargs = {})
#   %bitwise_and_40 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_19, 65535), kwargs = {})
#   %lshift_9 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_40, 16), kwargs = {})
#   %add_29 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_18, %lshift_9), kwargs = {})
#   %bitwise_and_41 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_29, 4294967295), kwargs = {})
#   %bitwise_xor_26 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_37, %bitwise_and_41), kwargs = {})
#   %add_27 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_30, 3144134277), kwargs = {})
#   %bitwise_and_38 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_27, 4294967295), kwargs = {})
#   %add_33 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_38, 3144134277), kwargs = {})
#   %bitwise_and_46 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_33, 4294967295), kwargs = {})
#   %bitwise_xor_27 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_26, %bitwise_and_46), kwargs = {})
#   %rshift_44 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_27, 16), kwargs = {})
#   %mul_29 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_44, 3449720151), kwargs = {})
#   %bitwise_and_58 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_27, 65535), kwargs = {})
#   %mul_28 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_58, 3449720151), kwargs = {})
#   %rshift_45 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_28, 16), kwargs = {})
#   %add_42 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_29, %rshift_45), kwargs = {})
#   %rshift_46 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_42, 16), kwargs = {})
#   %rshift_30 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_18, 16), kwargs = {})
#   %add_28 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_19, %rshift_30), kwargs = {})
#   %rshift_31 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_28, 16), kwargs = {})
#   %bitwise_and_32 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_15, 65535), kwargs = {})
#   %lshift_7 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_32, 16), kwargs = {})
#   %add_23 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_14, %lshift_7), kwargs = {})
#   %bitwise_and_33 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_23, 4294967295), kwargs = {})
#   %bitwise_xor_22 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_31, %bitwise_and_33), kwargs = {})
#   %bitwise_xor_23 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_22, %bitwise_and_38), kwargs = {})
#   %bitwise_and_50 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_23, 65535), kwargs = {})
#   %mul_24 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_50, 3449720151), kwargs = {})
#   %rshift_38 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_23, 16), kwargs = {})
#   %mul_25 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_38, 3449720151), kwargs = {})
#   %bitwise_and_51 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_25, 65535), kwargs = {})
#   %lshift_12 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_51, 16), kwargs = {})
#   %add_37 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_24, %lshift_12), kwargs = {})
#   %bitwise_and_52 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_37, 4294967295), kwargs = {})
#   %bitwise_xor_28 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_46, %bitwise_and_52), kwargs = {})
#   %add_32 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_37, 2654435769), kwargs = {})
#   %bitwise_and_45 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_32, 4294967295), kwargs = {})
#   %add_38 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_45, 2654435769), kwargs = {})
#   %bitwise_and_53 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_38, 4294967295), kwargs = {})
#   %bitwise_xor_29 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_28, %bitwise_and_53), kwargs = {})
#   %rshift_47 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_29, 16), kwargs = {})
#   %mul_31 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_47, 3528531795), kwargs = {})
#   %bitwise_and_63 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_29, 65535), kwargs = {})
#   %mul_30 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_63, 3528531795), kwargs = {})
#   %rshift_48 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_30, 16), kwargs = {})
#   %add_46 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_31, %rshift_48), kwargs = {})
#   %rshift_49 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_46, 16), kwargs = {})
#   %rshift_39 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_24, 16), kwargs = {})
#   %add_36 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_25, %rshift_39), kwargs = {})
#   %rshift_40 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_36, 16), kwargs = {})
#   %bitwise_and_43 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_21, 65535), kwargs = {})
#   %lshift_10 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_43, 16), kwargs = {})
#   %add_31 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_20, %lshift_10), kwargs = {})
#   %bitwise_and_44 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_31, 4294967295), kwargs = {})
#   %bitwise_xor_24 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_40, %bitwise_and_44), kwargs = {})
#   %bitwise_xor_25 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_24, %bitwise_and_45), kwargs = {})
#   %bitwise_and_55 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_25, 65535), kwargs = {})
#   %mul_26 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_55, 3528531795), kwargs = {})
#   %rshift_41 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_25, 16), kwargs = {})
#   %mul_27 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_41, 3528531795), kwargs = {})
#   %bitwise_and_56 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_27, 65535), kwargs = {})
#   %lshift_13 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_56, 16), kwargs = {})
#   %add_41 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_26, %lshift_13), kwargs = {})
#   %bitwise_and_57 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_41, 4294967295), kwargs = {})
#   %bitwise_xor_34 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_49, %bitwise_and_57), kwargs = {})
#   %add_39 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_46, 3144134277), kwargs = {})
#   %bitwise_and_54 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_39, 4294967295), kwargs = {})
#   %add_45 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_54, 3144134277), kwargs = {})
#   %bitwise_and_62 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_45, 4294967295), kwargs = {})
#   %bitwise_xor_35 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_34, %bitwise_and_62), kwargs = {})
#   %rshift_56 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_35, 16), kwargs = {})
#   %mul_37 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_56, 3449720151), kwargs = {})
#   %bitwise_and_74 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_35, 65535), kwargs = {})
#   %mul_36 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_74, 3449720151), kwargs = {})
#   %rshift_57 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_36, 16), kwargs = {})
#   %add_54 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_37, %rshift_57), kwargs = {})
#   %rshift_58 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_54, 16), kwargs = {})
#   %rshift_42 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_26, 16), kwargs = {})
#   %add_40 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_27, %rshift_42), kwargs = {})
#   %rshift_43 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_40, 16), kwargs = {})
#   %bitwise_and_48 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_23, 65535), kwargs = {})
#   %lshift_11 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_48, 16), kwargs = {})
#   %add_35 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_22, %lshift_11), kwargs = {})
#   %bitwise_and_49 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_35, 4294967295), kwargs = {})
#   %bitwise_xor_30 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_43, %bitwise_and_49), kwargs = {})
#   %bitwise_xor_31 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_30, %bitwise_and_54), kwargs = {})
#   %bitwise_and_66 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_31, 65535), kwargs = {})
#   %mul_32 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_66, 3449720151), kwargs = {})
#   %rshift_50 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_31, 16), kwargs = {})
#   %mul_33 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_50, 3449720151), kwargs = {})
#   %bitwise_and_67 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_33, 65535), kwargs = {})
#   %lshift_16 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_67, 16), kwargs = {})
#   %add_49 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_32, %lshift_16), kwargs = {})
#   %bitwise_and_68 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_49, 4294967295), kwargs = {})
#   %bitwise_xor_36 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_58, %bitwise_and_68), kwargs = {})
#   %add_44 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_53, 2654435769), kwargs = {})
#   %bitwise_and_61 : Tensor "i64[1][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_44, 4294967295), kwargs = {})
#   %add_50 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_61, 2654435769), kwargs = {})
#   %bitwise_and_69 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_50, 4294967295), kwargs = {})
#   %bitwise_xor_37 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_36, %bitwise_and_69), kwargs = {})
#   %rshift_51 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_32, 16), kwargs = {})
#   %add_48 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_33, %rshift_51), kwargs = {})
#   %rshift_52 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_48, 16), kwargs = {})
#   %bitwise_and_59 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_29, 65535), kwargs = {})
#   %lshift_14 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_59, 16), kwargs = {})
#   %add_43 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_28, %lshift_14), kwargs = {})
#   %bitwise_and_60 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_43, 4294967295), kwargs = {})
#   %bitwise_xor_32 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_52, %bitwise_and_60), kwargs = {})
#   %bitwise_xor_33 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_32, %bitwise_and_61), kwargs = {})
#   %rshift_53 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_33, 16), kwargs = {})
#   %mul_35 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_53, 3528531795), kwargs = {})
#   %bitwise_and_71 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_33, 65535), kwargs = {})
#   %mul_34 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_71, 3528531795), kwargs = {})
#   %rshift_54 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%mul_34, 16), kwargs = {})
#   %add_52 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_35, %rshift_54), kwargs = {})
#   %rshift_55 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%add_52, 16), kwargs = {})
#   %bitwise_and_64 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_31, 65535), kwargs = {})
#   %lshift_15 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_64, 16), kwargs = {})
#   %add_47 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_30, %lshift_15), kwargs = {})
#   %bitwise_and_65 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_47, 4294967295), kwargs = {})
#   %bitwise_xor_38 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%rshift_55, %bitwise_and_65), kwargs = {})
#   %add_51 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%bitwise_and_62, 3144134277), kwargs = {})
#   %bitwise_and_70 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_51, 4294967295), kwargs = {})
#   %bitwise_xor_39 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_xor.Tensor](args = (%bitwise_xor_38, %bitwise_and_70), kwargs = {})
#   return %bitwise_xor_5,%bitwise_xor_11,%bitwise_xor_7,%bitwise_xor_13,%bitwise_xor_9,%bitwise_xor_19,%bitwise_xor_15,%bitwise_xor_21,%bitwise_xor_17,%bitwise_xor_27,%bitwise_xor_23,%bitwise_xor_29,%bitwise_xor_25,%bitwise_xor_35,%bitwise_xor_31,%bitwise_xor_37,%bitwise_xor_33,%bitwise_xor_39
triton_poi_fused___lshift_____rshift___add_arange_bitwise_and_bitwise_xor_mul_0 = async_compile.triton('triton_poi_fused___lshift_____rshift___add_arange_bitwise_and_bitwise_xor_mul_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 262144}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*i64', 'out_ptr13': '*i64', 'out_ptr15': '*i64', 'out_ptr16': '*i64', 'out_ptr17': '*i64', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused___lshift_____rshift___add_arange_bitwise_and_bitwise_xor_mul_0', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 4, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 16777216}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused___lshift_____rshift___add_arange_bitwise_and_bitwise_xor_mul_0(in_ptr0, out_ptr13, out_ptr15, out_ptr16, out_ptr17, xnumel, XBLOCK : tl.constexpr):
    xnumel = 262144
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp15 = tl.load(in_ptr0 + (0))
    tmp16 = tl.broadcast_to(tmp15, [XBLOCK])
    tmp0 = x0
    tmp1 = tl.full([1], 4294967295, tl.int64)
    tmp2 = tmp0 & tmp1
    tmp3 = tl.full([1], 16, tl.int64)
    tmp4 = tmp2 >> tmp3
    tmp5 = tl.full([1], 3528531795, tl.int64)
    tmp6 = tmp4 * tmp5
    tmp7 = tl.full([1], 65535, tl.int64)
    tmp8 = tmp2 & tmp7
    tmp9 = tmp8 * tmp5
    tmp10 = tmp9 >> tmp3
    tmp11 = tmp6 + tmp10
    tmp12 = tmp11 >> tmp3
    tmp13 = tl.full([1], 0, tl.int64)
    tmp14 = tmp12 ^ tmp13
    tmp17 = tl.full([1], 32, tl.int64)
    tmp18 = tmp16 >> tmp17
    tmp19 = tmp14 ^ tmp18
    tmp20 = tmp19 >> tmp3
    tmp21 = tl.full([1], 3449720151, tl.int64)
    tmp22 = tmp20 * tmp21
    tmp23 = tmp19 & tmp7
    tmp24 = tmp23 * tmp21
    tmp25 = tmp24 >> tmp3
    tmp26 = tmp22 + tmp25
    tmp27 = tmp26 >> tmp3
    tmp28 = tmp27 ^ tmp13
    tmp29 = tmp16 & tmp1
    tmp30 = tl.full([1], 2654435769, tl.int64)
    tmp31 = tmp29 + tmp30
    tmp32 = tmp31 & tmp1
    tmp33 = tmp28 ^ tmp32
    tmp34 = tmp33 >> tmp3
    tmp35 = tmp34 * tmp5
    tmp36 = tmp33 & tmp7
    tmp37 = tmp36 * tmp5
    tmp38 = tmp37 >> tmp3
    tmp39 = tmp35 + tmp38
    tmp40 = tmp39 >> tmp3
    tmp41 = tmp0 >> tmp17
    tmp42 = tmp41 ^ tmp13
    tmp43 = tmp42 ^ tmp29
    tmp44 = tmp43 & tmp7
    tmp45 = tmp44 * tmp5
    tmp46 = tmp43 >> tmp3
    tmp47 = tmp46 * tmp5
    tmp48 = tmp47 & tmp7
    tmp49 = tmp48 << tmp3
    tmp50 = tmp45 + tmp49
    tmp51 = tmp50 & tmp1
    tmp52 = tmp40 ^ tmp51
    tmp53 = tl.full([1], 3144134277, tl.int64)
    tmp54 = tmp18 + tmp53
    tmp55 = tmp54 & tmp1
    tmp56 = tmp55 + tmp53
    tmp57 = tmp56 & tmp1
    tmp58 = tmp52 ^ tmp57
    tmp59 = tmp45 >> tmp3
    tmp60 = tmp47 + tmp59
    tmp61 = tmp60 >> tmp3
    tmp62 = tmp6 & tmp7
    tmp63 = tmp62 << tmp3
    tmp64 = tmp9 + tmp63
    tmp65 = tmp64 & tmp1
    tmp66 = tmp61 ^ tmp65
    tmp67 = tmp66 ^ tmp55
    tmp68 = tmp58 >> tmp3
    tmp69 = tmp68 * tmp21
    tmp70 = tmp58 & tmp7
    tmp71 = tmp70 * tmp21
    tmp72 = tmp71 >> tmp3
    tmp73 = tmp69 + tmp72
    tmp74 = tmp73 >> tmp3
    tmp75 = tmp67 & tmp7
    tmp76 = tmp75 * tmp21
    tmp77 = tmp67 >> tmp3
    tmp78 = tmp77 * tmp21
    tmp79 = tmp78 & tmp7
    tmp80 = tmp79 << tmp3
    tmp81 = tmp76 + tmp80
    tmp82 = tmp81 & tmp1
    tmp83 = tmp74 ^ tmp82
    tmp84 = tmp32 + tmp30
    tmp85 = tmp84 & tmp1
    tmp86 = tmp85 + tmp30
    tmp87 = tmp86 & tmp1
    tmp88 = tmp83 ^ tmp87
    tmp89 = tmp76 >> tmp3
    tmp90 = tmp78 + tmp89
    tmp91 = tmp90 >> tmp3
    tmp92 = tmp22 & tmp7
    tmp93 = tmp92 << tmp3
    tmp94 = tmp24 + tmp93
    tmp95 = tmp94 & tmp1
    tmp96 = tmp91 ^ tmp95
    tmp97 = tmp96 ^ tmp85
    tmp98 = tmp88 >> tmp3
    tmp99 = tmp98 * tmp5
    tmp100 = tmp88 & tmp7
    tmp101 = tmp100 * tmp5
    tmp102 = tmp101 >> tmp3
    tmp103 = tmp99 + tmp102
    tmp104 = tmp103 >> tmp3
    tmp105 = tmp97 & tmp7
    tmp106 = tmp105 * tmp5
    tmp107 = tmp97 >> tmp3
    tmp108 = tmp107 * tmp5
    tmp109 = tmp108 & tmp7
    tmp110 = tmp109 << tmp3
    tmp111 = tmp106 + tmp110
    tmp112 = tmp111 & tmp1
    tmp113 = tmp104 ^ tmp112
    tmp114 = tmp57 + tmp53
    tmp115 = tmp114 & tmp1
    tmp116 = tmp115 + tmp53
    tmp117 = tmp116 & tmp1
    tmp118 = tmp113 ^ tmp117
    tmp119 = tmp106 >> tmp3
    tmp120 = tmp108 + tmp119
    tmp121 = tmp120 >> tmp3
    tmp122 = tmp35 & tmp7
    tmp123 = tmp122 << tmp3
    tmp124 = tmp37 + tmp123
    tmp125 = tmp124 & tmp1
    tmp126 = tmp121 ^ tmp125
    tmp127 = tmp126 ^ tmp115
    tmp128 = tmp118 >> tmp3
    tmp129 = tmp128 * tmp21
    tmp130 = tmp118 & tmp7
    tmp131 = tmp130 * tmp21
    tmp132 = tmp131 >> tmp3
    tmp133 = tmp129 + tmp132
    tmp134 = tmp133 >> tmp3
    tmp135 = tmp127 & tmp7
    tmp136 = tmp135 * tmp21
    tmp137 = tmp127 >> tmp3
    tmp138 = tmp137 * tmp21
    tmp139 = tmp138 & tmp7
    tmp140 = tmp139 << tmp3
    tmp141 = tmp136 + tmp140
    tmp142 = tmp141 & tmp1
    tmp143 = tmp134 ^ tmp142
    tmp144 = tmp87 + tmp30
    tmp145 = tmp144 & tmp1
    tmp146 = tmp145 + tmp30
    tmp147 = tmp146 & tmp1
    tmp148 = tmp143 ^ tmp147
    tmp149 = tmp136 >> tmp3
    tmp150 = tmp138 + tmp149
    tmp151 = tmp150 >> tmp3
    tmp152 = tmp69 & tmp7
    tmp153 = tmp152 << tmp3
    tmp154 = tmp71 + tmp153
    tmp155 = tmp154 & tmp1
    tmp156 = tmp151 ^ tmp155
    tmp157 = tmp156 ^ tmp145
    tmp158 = tmp148 >> tmp3
    tmp159 = tmp158 * tmp5
    tmp160 = tmp148 & tmp7
    tmp161 = tmp160 * tmp5
    tmp162 = tmp161 >> tmp3
    tmp163 = tmp159 + tmp162
    tmp164 = tmp163 >> tmp3
    tmp165 = tmp157 & tmp7
    tmp166 = tmp165 * tmp5
    tmp167 = tmp157 >> tmp3
    tmp168 = tmp167 * tmp5
    tmp169 = tmp168 & tmp7
    tmp170 = tmp169 << tmp3
    tmp171 = tmp166 + tmp170
    tmp172 = tmp171 & tmp1
    tmp173 = tmp164 ^ tmp172
    tmp174 = tmp117 + tmp53
    tmp175 = tmp174 & tmp1
    tmp176 = tmp175 + tmp53
    tmp177 = tmp176 & tmp1
    tmp178 = tmp173 ^ tmp177
    tmp179 = tmp166 >> tmp3
    tmp180 = tmp168 + tmp179
    tmp181 = tmp180 >> tmp3
    tmp182 = tmp99 & tmp7
    tmp183 = tmp182 << tmp3
    tmp184 = tmp101 + tmp183
    tmp185 = tmp184 & tmp1
    tmp186 = tmp181 ^ tmp185
    tmp187 = tmp186 ^ tmp175
    tmp188 = tmp178 >> tmp3
    tmp189 = tmp188 * tmp21
    tmp190 = tmp178 & tmp7
    tmp191 = tmp190 * tmp21
    tmp192 = tmp191 >> tmp3
    tmp193 = tmp189 + tmp192
    tmp194 = tmp193 >> tmp3
    tmp195 = tmp187 & tmp7
    tmp196 = tmp195 * tmp21
    tmp197 = tmp187 >> tmp3
    tmp198 = tmp197 * tmp21
    tmp199 = tmp198 & tmp7
    tmp200 = tmp199 << tmp3
    tmp201 = tmp196 + tmp200
    tmp202 = tmp201 & tmp1
    tmp203 = tmp194 ^ tmp202
    tmp204 = tmp147 + tmp30
    tmp205 = tmp204 & tmp1
    tmp206 = tmp205 + tmp30
    tmp207 = tmp206 & tmp1
    tmp208 = tmp203 ^ tmp207
    tmp209 = tmp196 >> tmp3
    tmp210 = tmp198 + tmp209
    tmp211 = tmp210 >> tmp3
    tmp212 = tmp129 & tmp7
    tmp213 = tmp212 << tmp3
    tmp214 = tmp131 + tmp213
    tmp215 = tmp214 & tmp1
    tmp216 = tmp211 ^ tmp215
    tmp217 = tmp216 ^ tmp205
    tmp218 = tmp208 >> tmp3
    tmp219 = tmp218 * tmp5
    tmp220 = tmp208 & tmp7
    tmp221 = tmp220 * tmp5
    tmp222 = tmp221 >> tmp3
    tmp223 = tmp219 + tmp222
    tmp224 = tmp223 >> tmp3
    tmp225 = tmp217 & tmp7
    tmp226 = tmp225 * tmp5
    tmp227 = tmp217 >> tmp3
    tmp228 = tmp227 * tmp5
    tmp229 = tmp228 & tmp7
    tmp230 = tmp229 << tmp3
    tmp231 = tmp226 + tmp230
    tmp232 = tmp231 & tmp1
    tmp233 = tmp224 ^ tmp232
    tmp234 = tmp177 + tmp53
    tmp235 = tmp234 & tmp1
    tmp236 = tmp235 + tmp53
    tmp237 = tmp236 & tmp1
    tmp238 = tmp233 ^ tmp237
    tmp239 = tmp226 >> tmp3
    tmp240 = tmp228 + tmp239
    tmp241 = tmp240 >> tmp3
    tmp242 = tmp159 & tmp7
    tmp243 = tmp242 << tmp3
    tmp244 = tmp161 + tmp243
    tmp245 = tmp244 & tmp1
    tmp246 = tmp241 ^ tmp245
    tmp247 = tmp246 ^ tmp235
    tmp248 = tmp238 >> tmp3
    tmp249 = tmp248 * tmp21
    tmp250 = tmp238 & tmp7
    tmp251 = tmp250 * tmp21
    tmp252 = tmp251 >> tmp3
    tmp253 = tmp249 + tmp252
    tmp254 = tmp253 >> tmp3
    tmp255 = tmp247 & tmp7
    tmp256 = tmp255 * tmp21
    tmp257 = tmp247 >> tmp3
    tmp258 = tmp257 * tmp21
    tmp259 = tmp258 & tmp7
    tmp260 = tmp259 << tmp3
    tmp261 = tmp256 + tmp260
    tmp262 = tmp261 & tmp1
    tmp263 = tmp254 ^ tmp262
    tmp264 = tmp207 + tmp30
    tmp265 = tmp264 & tmp1
    tmp266 = tmp265 + tmp30
    tmp267 = tmp266 & tmp1
    tmp268 = tmp263 ^ tmp267
    tmp269 = tmp256 >> tmp3
    tmp270 = tmp258 + tmp269
    tmp271 = tmp270 >> tmp3
    tmp272 = tmp189 & tmp7
    tmp273 = tmp272 << tmp3
    tmp274 = tmp191 + tmp273
    tmp275 = tmp274 & tmp1
    tmp276 = tmp271 ^ tmp275
    tmp277 = tmp276 ^ tmp265
    tmp278 = tmp277 >> tmp3
    tmp279 = tmp278 * tmp5
    tmp280 = tmp277 & tmp7
    tmp281 = tmp280 * tmp5
    tmp282 = tmp281 >> tmp3
    tmp283 = tmp279 + tmp282
    tmp284 = tmp283 >> tmp3
    tmp285 = tmp219 & tmp7
    tmp286 = tmp285 << tmp3
    tmp287 = tmp221 + tmp286
    tmp288 = tmp287 & tmp1
    tmp289 = tmp284 ^ tmp288
    tmp290 = tmp237 + tmp53
    tmp291 = tmp290 & tmp1
    tmp292 = tmp289 ^ tmp291
    tl.store(out_ptr13 + (x0), tmp238, None)
    tl.store(out_ptr15 + (x0), tmp268, None)
    tl.store(out_ptr16 + (x0), tmp277, None)
    tl.store(out_ptr17 + (x0), tmp292, None)
''', device_str='cuda')


# kernel path: /tmp/tmp_y_bb3ko/zk/czki67l437vj2qgq2rbs3mewehfcz6avpog6gfuxiukxafxlgpu2.py
# Topologically Sorted Source Nodes: [rshift_56, high_half_18, and__74, low_half_18, stack, and__75, lshift_18, add_55, lo1_8, rshift_53, high_half_17, and__71, low_half_17, and__72, lshift_17, add_53, lo0_9, reshape, clamp, double, mul_38, ceil, threshold, ge, sub, truediv, where], Original ATen: [aten.__rshift__, aten.mul, aten.bitwise_and, aten.stack, aten.__lshift__, aten.add, aten.view, aten.clamp, aten._to_copy, aten.ceil, aten.ge, aten.rsub, aten.div, aten.scalar_tensor, aten.where]
# Source node to ATen node mapping:
#   add_53 => add_53
#   add_55 => add_55
#   and__71 => bitwise_and_71
#   and__72 => bitwise_and_72
#   and__74 => bitwise_and_74
#   and__75 => bitwise_and_75
#   ceil => ceil
#   clamp => clamp_max, clamp_min
#   double => convert_element_type
#   ge => ge
#   high_half_17 => mul_35
#   high_half_18 => mul_37
#   lo0_9 => bitwise_and_73
#   lo1_8 => bitwise_and_76
#   low_half_17 => mul_34
#   low_half_18 => mul_36
#   lshift_17 => lshift_17
#   lshift_18 => lshift_18
#   mul_38 => mul_38
#   reshape => view
#   rshift_53 => rshift_53
#   rshift_56 => rshift_56
#   stack => cat, unsqueeze, unsqueeze_1, unsqueeze_2, unsqueeze_3
#   sub => sub
#   threshold => convert_element_type_1
#   truediv => div
#   where => full_default, where
# Graph fragment:
#   %bitwise_xor_37 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_37]
#   %bitwise_xor_35 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_35]
#   %bitwise_xor_39 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_39]
#   %bitwise_xor_33 : Tensor "i64[262144][1]cuda:0" = PlaceHolder[target=bitwise_xor_33]
#   %cat : Tensor "i64[262144, 4][4, 1]cuda:0" = PlaceHolder[target=cat]
#   %arg2_1 : Tensor "f32[1][1]cuda:0" = PlaceHolder[target=arg2_1]
#   %arg0_1 : Tensor "f32[1048576][1]cuda:0" = PlaceHolder[target=arg0_1]
#   %rshift_56 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_35, 16), kwargs = {})
#   %mul_37 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_56, 3449720151), kwargs = {})
#   %bitwise_and_74 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_35, 65535), kwargs = {})
#   %mul_36 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_74, 3449720151), kwargs = {})
#   %unsqueeze : Tensor "i64[262144, 1][1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%bitwise_xor_37, 1), kwargs = {})
#   %bitwise_and_75 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_37, 65535), kwargs = {})
#   %lshift_18 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_75, 16), kwargs = {})
#   %add_55 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_36, %lshift_18), kwargs = {})
#   %bitwise_and_76 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_55, 4294967295), kwargs = {})
#   %unsqueeze_1 : Tensor "i64[262144, 1][1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%bitwise_and_76, 1), kwargs = {})
#   %rshift_53 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__rshift__.Scalar](args = (%bitwise_xor_33, 16), kwargs = {})
#   %mul_35 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%rshift_53, 3528531795), kwargs = {})
#   %bitwise_and_71 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%bitwise_xor_33, 65535), kwargs = {})
#   %mul_34 : Tensor "i64[262144][1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%bitwise_and_71, 3528531795), kwargs = {})
#   %unsqueeze_2 : Tensor "i64[262144, 1][1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%bitwise_xor_39, 1), kwargs = {})
#   %bitwise_and_72 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%mul_35, 65535), kwargs = {})
#   %lshift_17 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.__lshift__.Scalar](args = (%bitwise_and_72, 16), kwargs = {})
#   %add_53 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_34, %lshift_17), kwargs = {})
#   %bitwise_and_73 : Tensor "i64[262144][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_and.Scalar](args = (%add_53, 4294967295), kwargs = {})
#   %unsqueeze_3 : Tensor "i64[262144, 1][1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%bitwise_and_73, 1), kwargs = {})
#   %cat : Tensor "i64[262144, 4][4, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.cat.default](args = ([%unsqueeze, %unsqueeze_1, %unsqueeze_2, %unsqueeze_3], 1), kwargs = {})
#   %view : Tensor "i64[1048576][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%cat, [-1]), kwargs = {})
#   %clamp_min : Tensor "f32[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.clamp_min.default](args = (%arg2_1, 0.0), kwargs = {})
#   %clamp_max : Tensor "f32[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.clamp_max.default](args = (%clamp_min, 1.0), kwargs = {})
#   %convert_element_type : Tensor "f64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%clamp_max, torch.float64), kwargs = {})
#   %mul_38 : Tensor "f64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type, 4294967296.0), kwargs = {})
#   %ceil : Tensor "f64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.ceil.default](args = (%mul_38,), kwargs = {})
#   %convert_element_type_1 : Tensor "i64[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%ceil, torch.int64), kwargs = {})
#   %ge : Tensor "b8[1048576][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.ge.Tensor](args = (%view, %convert_element_type_1), kwargs = {})
#   %sub : Tensor "f32[1][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (1.0, %arg2_1), kwargs = {})
#   %div : Tensor "f32[1048576][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%arg0_1, %sub), kwargs = {})
#   %full_default : Tensor "f32[][]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([], 0.0), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %where : Tensor "f32[1048576][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.where.self](args = (%ge, %div, %full_default), kwargs = {})
#   return %cat,%where
triton_poi_fused___lshift_____rshift____to_copy_add_bitwise_and_ceil_clamp_div_ge_mul_rsub_scalar_tensor_stack_view_where_1 = async_compile.triton('triton_poi_fused___lshift_____rshift____to_copy_add_bitwise_and_ceil_clamp_div_ge_mul_rsub_scalar_tensor_stack_view_where_1', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'y': 262144, 'x': 4}, tile_hint=TileHint.DEFAULT,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*i64', 'in_ptr1': '*i64', 'in_ptr2': '*i64', 'in_ptr3': '*i64', 'in_ptr4': '*fp32', 'in_ptr5': '*fp32', 'out_ptr1': '*fp32', 'ynumel': 'i32', 'xnumel': 'i32', 'YBLOCK': 'constexpr', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid2DWithYZOverflow', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused___lshift_____rshift____to_copy_add_bitwise_and_ceil_clamp_div_ge_mul_rsub_scalar_tensor_stack_view_where_1', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 6, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'y': 8388608, 'x': 6291456}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused___lshift_____rshift____to_copy_add_bitwise_and_ceil_clamp_div_ge_mul_rsub_scalar_tensor_stack_view_where_1(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, out_ptr1, ynumel, xnumel, YBLOCK : tl.constexpr, XBLOCK : tl.constexpr):
    ynumel = 262144
    xnumel = 4
    yoffset = (tl.program_id(1) + tl.program_id(2) * tl.num_programs(1)) * YBLOCK
    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
    ymask = yindex < ynumel
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
    xmask = xindex < xnumel
    x1 = xindex
    y0 = yindex
    tmp51 = tl.load(in_ptr4 + (0))
    tmp52 = tl.broadcast_to(tmp51, [1, 1])
    tmp63 = tl.load(in_ptr5 + (x1 + 4*y0), xmask & ymask, eviction_policy='evict_last')
    tmp0 = x1
    tmp1 = tl.full([1, 1], 0, tl.int64)
    tmp2 = tmp0 >= tmp1
    tmp3 = tl.full([1, 1], 1, tl.int64)
    tmp4 = tmp0 < tmp3
    tmp5 = tl.load(in_ptr0 + (tl.broadcast_to(y0, [YBLOCK, XBLOCK])), tmp4 & xmask & ymask, eviction_policy='evict_last', other=0.0)
    tmp6 = tmp0 >= tmp3
    tmp7 = tl.full([1, 1], 2, tl.int64)
    tmp8 = tmp0 < tmp7
    tmp9 = tmp6 & tmp8
    tmp10 = tl.load(in_ptr1 + (tl.broadcast_to(y0, [YBLOCK, XBLOCK])), tmp9 & xmask & ymask, eviction_policy='evict_last', other=0.0)
    tmp11 = tl.full([1, 1], 65535, tl.int64)
    tmp12 = tmp10 & tmp11
    tmp13 = tl.full([1, 1], 3449720151, tl.int64)
    tmp14 = tmp12 * tmp13
    tmp15 = tl.full([1, 1], 16, tl.int64)
    tmp16 = tmp10 >> tmp15
    tmp17 = tmp16 * tmp13
    tmp18 = tmp17 & tmp11
    tmp19 = tmp18 << tmp15
    tmp20 = tmp14 + tmp19
    tmp21 = tl.full([1, 1], 4294967295, tl.int64)
    tmp22 = tmp20 & tmp21
    tmp23 = tl.full(tmp22.shape, 0.0, tmp22.dtype)
    tmp24 = tl.where(tmp9, tmp22, tmp23)
    tmp25 = tmp0 >= tmp7
    tmp26 = tl.full([1, 1], 3, tl.int64)
    tmp27 = tmp0 < tmp26
    tmp28 = tmp25 & tmp27
    tmp29 = tl.load(in_ptr2 + (tl.broadcast_to(y0, [YBLOCK, XBLOCK])), tmp28 & xmask & ymask, eviction_policy='evict_last', other=0.0)
    tmp30 = tmp0 >= tmp26
    tmp31 = tl.full([1, 1], 4, tl.int64)
    tmp32 = tmp0 < tmp31
    tmp33 = tl.load(in_ptr3 + (tl.broadcast_to(y0, [YBLOCK, XBLOCK])), tmp30 & xmask & ymask, eviction_policy='evict_last', other=0.0)
    tmp34 = tl.full([1, 1], 65535, tl.int64)
    tmp35 = tmp33 & tmp34
    tmp36 = tl.full([1, 1], 3528531795, tl.int64)
    tmp37 = tmp35 * tmp36
    tmp38 = tl.full([1, 1], 16, tl.int64)
    tmp39 = tmp33 >> tmp38
    tmp40 = tmp39 * tmp36
    tmp41 = tmp40 & tmp34
    tmp42 = tmp41 << tmp38
    tmp43 = tmp37 + tmp42
    tmp44 = tl.full([1, 1], 4294967295, tl.int64)
    tmp45 = tmp43 & tmp44
    tmp46 = tl.full(tmp45.shape, 0.0, tmp45.dtype)
    tmp47 = tl.where(tmp30, tmp45, tmp46)
    tmp48 = tl.where(tmp28, tmp29, tmp47)
    tmp49 = tl.where(tmp9, tmp24, tmp48)
    tmp50 = tl.where(tmp4, tmp5, tmp49)
    tmp53 = tl.full([1, 1], 0.0, tl.float32)
    tmp54 = triton_helpers.maximum(tmp52, tmp53)
    tmp55 = tl.full([1, 1], 1.0, tl.float32)
    tmp56 = triton_helpers.minimum(tmp54, tmp55)
    tmp57 = tmp56.to(tl.float64)
    tmp58 = tl.full([1, 1], 4294967296.0, tl.float64)
    tmp59 = tmp57 * tmp58
    tmp60 = libdevice.ceil(tmp59)
    tmp61 = tmp60.to(tl.int64)
    tmp62 = tmp50 >= tmp61
    tmp64 = tmp55 - tmp52
    tmp65 = (tmp63 / tmp64)
    tmp66 = tl.where(tmp62, tmp65, tmp53)
    tl.store(out_ptr1 + (x1 + 4*y0), tmp66, xmask & ymask)
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
        assert_size_stride(arg0_1, (1048576, ), (1, ))
        assert_size_stride(arg1_1, (1, ), (1, ))
        assert_size_stride(arg2_1, (1, ), (1, ))
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            buf13 = empty_strided_cuda((262144, ), (1, ), torch.int64)
            buf15 = empty_strided_cuda((262144, ), (1, ), torch.int64)
            buf16 = empty_strided_cuda((262144, ), (1, ), torch.int64)
            buf17 = empty_strided_cuda((262144, ), (1, ), torch.int64)
            # Topologically Sorted Source Nodes: [g, and_, rshift_2, high_half, and__2, low_half, rshift_3, add, hi0, xor_2, rshift_1, c2, rshift_8, high_half_2, and__10, low_half_2, rshift_9, add_6, hi1, xor_4, and__1, add_2, k0, c0_1, rshift_11, high_half_3, and__15, low_half_3, rshift_12, add_10, hi0_2, rshift, xor, c0, and__7, low_half_1, rshift_5, high_half_1, and__8, lshift_1, add_5, lo0_1, xor_10, add_3, k1, add_9, k1_1, c2_2, rshift_20, high_half_6, and__26, low_half_6, rshift_21, add_18, hi1_2, rshift_6, add_4, hi0_1, and__3, lshift, add_1, lo0, xor_6, c2_1, and__18, low_half_4, rshift_14, high_half_4, and__19, lshift_4, add_13, lo1_1, xor_12, add_8, k0_1, add_14, k0_2, c0_3, rshift_23, high_half_7, and__31, low_half_7, rshift_24, add_22, hi0_4, rshift_15, add_12, hi1_1, and__11, lshift_2, add_7, lo1, xor_8, c0_2, and__23, low_half_5, rshift_17, high_half_5, and__24, lshift_5, add_17, lo0_3, xor_18, add_15, k1_2, add_21, k1_3, c2_4, rshift_32, high_half_10, and__42, low_half_10, rshift_33, add_30, hi1_4, rshift_18, add_16, hi0_3, and__16, lshift_3, add_11, lo0_2, xor_14, c2_3, and__34, low_half_8, rshift_26, high_half_8, and__35, lshift_8, add_25, lo1_3, xor_20, add_20, k0_3, add_26, k0_4, c0_5, rshift_35, high_half_11, and__47, low_half_11, rshift_36, add_34, hi0_6, rshift_27, add_24, hi1_3, and__27, lshift_6, add_19, lo1_2, xor_16, c0_4, and__39, low_half_9, rshift_29, high_half_9, and__40, lshift_9, add_29, lo0_5, xor_26, add_27, k1_4, add_33, k1_5, c2_6, rshift_44, high_half_14, and__58, low_half_14, rshift_45, add_42, hi1_6, rshift_30, add_28, hi0_5, and__32, lshift_7, add_23, lo0_4, xor_22, c2_5, and__50, low_half_12, rshift_38, high_half_12, and__51, lshift_12, add_37, lo1_5, xor_28, add_32, k0_5, add_38, k0_6, c0_7, rshift_47, high_half_15, and__63, low_half_15, rshift_48, add_46, hi0_8, rshift_39, add_36, hi1_5, and__43, lshift_10, add_31, lo1_4, xor_24, c0_6, and__55, low_half_13, rshift_41, high_half_13, and__56, lshift_13, add_41, lo0_7, xor_34, add_39, k1_6, add_45, k1_7, c2_8, rshift_56, high_half_18, and__74, low_half_18, rshift_57, add_54, hi1_8, rshift_42, add_40, hi0_7, and__48, lshift_11, add_35, lo0_6, xor_30, c2_7, and__66, low_half_16, rshift_50, high_half_16, and__67, lshift_16, add_49, lo1_7, xor_36, add_44, k0_7, add_50, k0_8, c0_9, rshift_51, add_48, hi1_7, and__59, lshift_14, add_43, lo1_6, xor_32, c0_8, rshift_53, high_half_17, and__71, low_half_17, rshift_54, add_52, hi0_9, and__64, lshift_15, add_47, lo0_8, xor_38, add_51, k1_8, c2_9], Original ATen: [aten.arange, aten.bitwise_and, aten.__rshift__, aten.mul, aten.add, aten.bitwise_xor, aten.__lshift__]
            stream0 = get_raw_stream(0)
            triton_poi_fused___lshift_____rshift___add_arange_bitwise_and_bitwise_xor_mul_0.run(arg1_1, buf13, buf15, buf16, buf17, 262144, stream=stream0)
            del arg1_1
            buf19 = empty_strided_cuda((1048576, ), (1, ), torch.float32)
            # Topologically Sorted Source Nodes: [rshift_56, high_half_18, and__74, low_half_18, stack, and__75, lshift_18, add_55, lo1_8, rshift_53, high_half_17, and__71, low_half_17, and__72, lshift_17, add_53, lo0_9, reshape, clamp, double, mul_38, ceil, threshold, ge, sub, truediv, where], Original ATen: [aten.__rshift__, aten.mul, aten.bitwise_and, aten.stack, aten.__lshift__, aten.add, aten.view, aten.clamp, aten._to_copy, aten.ceil, aten.ge, aten.rsub, aten.div, aten.scalar_tensor, aten.where]
            stream0 = get_raw_stream(0)
            triton_poi_fused___lshift_____rshift____to_copy_add_bitwise_and_ceil_clamp_div_ge_mul_rsub_scalar_tensor_stack_view_where_1.run(buf15, buf13, buf17, buf16, arg2_1, arg0_1, buf19, 262144, 4, stream=stream0)
            del arg0_1
            del arg2_1
            del buf13
            del buf15
            del buf16
            del buf17
        return (buf19, )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((1048576, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg1_1 = rand_strided((1, ), (1, ), device='cuda:0', dtype=torch.int64)
    arg2_1 = rand_strided((1, ), (1, ), device='cuda:0', dtype=torch.float32)
    return [arg0_1, arg1_1, arg2_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
