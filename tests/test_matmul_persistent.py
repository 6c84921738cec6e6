"""triton:persistent has two paths in one kernel: TMA descriptors where the strides allow them, pointers elsewhere.
The spec's interpreter shapes all take the pointer path (K or N is not a multiple of 8), so these
shapes make sure the descriptor path, the walk of several tiles per program and the edges of both paths are checked
too, under the interpreter in CI and on a GPU."""
import pytest
import torch

from compare import check, discover, worker

OP = discover.load_op("matmul")
IMPL = next(i for i in discover.implementations(OP) if i.name == "triton:persistent")
# (shape, takes the TMA path): K and N multiples of 8 (16-byte row strides in fp16/bf16) and K > 0.
SHAPES = [
    ((40, 24, 72), True),  # one partial tile in every dimension
    ((300, 264, 136), True),  # more tiles than the interpreter's 4 programs; M, N and K tails
    ((130, 520, 8), True),  # K shorter than one K step
    ((300, 264, 130), False),  # K % 8 = 2: A's rows are not 16-byte multiples
    ((257, 131, 64), False),  # N % 8 = 3: B's and C's rows are not
]


@pytest.fixture(scope="module")
def persistent():
    worker._use_interpreter_autotune_stub(IMPL)
    return IMPL.load()


def _module():
    return discover.triton_module("matmul")


def _expect_tma(eligible: bool, device: torch.device) -> bool:
    return eligible and (device.type == "cpu" or torch.cuda.get_device_capability(device)[0] >= 9)


@pytest.mark.slow
@pytest.mark.parametrize("shape,tma", SHAPES, ids=[f"{'x'.join(map(str, s))}-{'tma' if t else 'pointers'}"
                                                    for s, t in SHAPES])
def test_both_paths_match_the_reference(shape, tma, device, persistent):
    dtypes = [torch.float16] if device.type == "cpu" else [torch.float16, torch.bfloat16]
    for dtype in dtypes:
        a, b = OP.make_inputs(shape, dtype, device, torch.Generator(device=device).manual_seed(0))
        c = torch.empty(shape[:2], dtype=dtype, device=device)
        assert _module()._uses_tma(a, b, c) == _expect_tma(tma, device)
        r = check.check_case(OP, IMPL.name, persistent, dtype, shape, device, seed=0)
        assert r.ok, f"{shape} {dtype}: {r.status}: {r.message}"


@pytest.mark.slow
def test_a_misaligned_view_takes_the_pointer_path(device, persistent):
    """A contiguous view that starts 2 bytes into its storage: TMA needs a 16-byte aligned base address."""
    shape = (40, 24, 72)
    a, b = OP.make_inputs(shape, torch.float16, device, torch.Generator(device=device).manual_seed(0))
    storage = torch.empty(a.numel() + 1, dtype=a.dtype, device=device)
    shifted = storage[1:].view(a.shape)
    shifted.copy_(a)
    assert shifted.is_contiguous() and shifted.data_ptr() % 16 != 0
    assert not _module()._uses_tma(shifted, b, torch.empty(shape[:2], dtype=a.dtype, device=device))
    ok, message, _ = check.compare(persistent(shifted, b), (a.double() @ b.double()),
                                   OP.tolerance(torch.float16, shape), torch.float16)
    assert ok, message


def test_an_empty_inner_dimension_gives_zeros(device, persistent):
    a = torch.empty((5, 0), dtype=torch.float16, device=device)
    b = torch.empty((0, 8), dtype=torch.float16, device=device)
    out = persistent(a, b)
    assert out.shape == (5, 8) and bool((out == 0).all())
