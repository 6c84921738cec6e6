"""fp8 scaled matmul (specs/fp8_matmul.py): the torch row (torch._scaled_mm, padded at odd shapes) passes every
check, and the judge catches a kernel that forgets a scale, drops the last K tile, accumulates in bfloat16, or
reads the e4m3 bytes as e5m2."""
import pytest
import torch

from compare import check, discover
from specs import fp8_matmul

OP = discover.load_op("fp8_matmul")


def _failures(fn) -> list[str]:
    return check.schedule_failures(OP, "torch:planted", fn, [torch.float8_e4m3fn], torch.device("cpu"))


def test_the_torch_row_passes_every_check():
    assert _failures(fp8_matmul.torch_eager) == []


def _without_scale_b(a, b, scale_a, scale_b):
    return fp8_matmul.torch_eager(a, b, scale_a, torch.ones_like(scale_b))


def _last_k_tile_dropped(a, b, scale_a, scale_b):
    k = a.shape[1]
    keep = k - min(32, k // 2) if k > 1 else k
    return ((a[:, :keep].float() @ b[:keep].float()) * scale_a * scale_b).to(torch.bfloat16)


def _bf16_accumulation(a, b, scale_a, scale_b):
    acc = torch.zeros((a.shape[0], b.shape[1]), dtype=torch.bfloat16)
    for j in range(a.shape[1]):
        acc += (a[:, j:j + 1].float() * b[j:j + 1].float()).to(torch.bfloat16)
    return (acc.float() * scale_a * scale_b).to(torch.bfloat16)


def _read_as_e5m2(a, b, scale_a, scale_b):
    a5 = a.contiguous().view(torch.uint8).view(torch.float8_e5m2).float()
    b5 = b.t().contiguous().view(torch.uint8).view(torch.float8_e5m2).float().t()
    return ((a5 @ b5) * scale_a * scale_b).to(torch.bfloat16)


@pytest.mark.parametrize("wrong", [_without_scale_b, _last_k_tile_dropped, _bf16_accumulation, _read_as_e5m2])
def test_a_wrong_matmul_is_caught(wrong):
    assert any("random: FAIL" in f for f in _failures(wrong)), wrong.__name__


def test_b_is_column_major_and_the_scales_are_a_row_and_a_column():
    a, b, scale_a, scale_b = fp8_matmul.make_inputs((5, 7, 64), torch.float8_e4m3fn, "cpu",
                                                    torch.Generator().manual_seed(0))
    assert a.stride() == (64, 1) and b.stride() == (1, 64)
    assert scale_a.shape == (5, 1) and scale_b.shape == (1, 7) and bool((scale_a >= 0.5).all())


@pytest.mark.parametrize("row", ["triton:persistent", "triton:k256"])
@pytest.mark.parametrize("shape", [(40, 24, 64), (130, 70, 256), (1, 520, 48), (150, 260, 528)])
def test_the_persistent_steps_take_their_tma_path_and_are_right(row, shape, device):
    """The persistent steps (v3, v4) read A and Bt through TMA descriptors where K is a multiple of 16, which none of
    the spec's interpreter shapes is: these are (the interpreter runs host-side descriptors, zero fill included;
    K = 528 is two K tiles of 256 and part of a third)."""
    from compare import worker
    from triton_src import fp8_matmul as triton_fp8

    impl = next(i for i in discover.implementations(OP) if i.name == row)
    worker._use_interpreter_autotune_stub(impl)
    args = fp8_matmul.make_inputs(shape, torch.float8_e4m3fn, device, torch.Generator(device=device).manual_seed(1))
    assert triton_fp8.uses_tma(*args[:2])
    ok, message, _ = check.compare(impl.load()(*args), fp8_matmul.reference(*[t.double() for t in args]),
                                   OP.tolerance(torch.float8_e4m3fn, shape), torch.bfloat16)
    assert ok, message


def test_a_single_row_view_with_odd_strides_takes_the_pointer_path():
    """A (1, K) view stored column-major (strides (1, 1)) is contiguous to torch, but a descriptor would carry its
    1-byte row stride, which TMA refuses: the persistent step must see the strides and take v2's path."""
    from compare import layouts
    from triton_src import fp8_matmul as triton_fp8

    a, b, _, _ = fp8_matmul.make_inputs((1, 520, 4096), torch.float8_e4m3fn, "cpu", torch.Generator().manual_seed(0))
    view = layouts.transposed(a)
    assert view.is_contiguous() and view.stride(0) == 1
    assert triton_fp8.uses_tma(a, b) and not triton_fp8.uses_tma(view, b)



@pytest.mark.gpu
def test_the_tma_store_step_takes_v4s_kernel_where_c_rows_do_not_suit_tma():
    """cuda:tmastore (v5) writes C through a tensor map, which needs C's row pitch a multiple of 16 bytes (N a
    multiple of 8); at other N it hands the call to v4 (its own kernel on the inputs it is for:
    tests/test_own_kernels.py), and the answer is right."""
    from compare import timing

    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("cuda:tmastore is built for compute capability 9.0 only")
    fn = next(i for i in discover.implementations(OP) if i.name == "cuda:tmastore").load()
    device = torch.device("cuda")
    shape = (256, 260, 256)
    args = fp8_matmul.make_inputs(shape, torch.float8_e4m3fn, device, torch.Generator(device=device).manual_seed(2))
    out = fn(*args)
    names = [a["name"] for a in timing.gpu_activities(lambda: fn(*args))]
    assert any("fp8_matmul_persistent_kernel" in name for name in names), f"{shape} launched {names}"
    ok, message, _ = check.compare(out, fp8_matmul.reference(*[t.double() for t in args]),
                                   OP.tolerance(torch.float8_e4m3fn, shape), torch.bfloat16)
    assert ok, message

