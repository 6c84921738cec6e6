"""compare.layouts: every layout holds exactly its input's values, is laid out as it says, surrounds them with NaN,
and a kernel that ignores what the layout changed (a stride, the row pitch, the offset) reads NaN or wrong values."""
import math

import pytest
import torch

from compare import layouts

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
SHAPES_1D = [(1,), (2,), (127,), (1025,)]
SHAPES_2D = [(1, 1), (1, 9), (7, 1), (3, 5), (17, 33), (64, 64), (5, 127)]
SHAPES_3D = [(2, 3, 4)]


def source(shape, dtype, device):
    """Values to lay out, with NaN, ±inf and -0 among them (all must survive bit for bit)."""
    g = torch.Generator(device=device).manual_seed(math.prod(shape))
    t = torch.randn(shape, generator=g, device=device).to(dtype)
    flat = t.reshape(-1)
    for i, v in enumerate([float("nan"), float("inf"), float("-inf"), -0.0]):
        if flat.numel() > 4 * (i + 1):
            flat[4 * (i + 1)] = v
    return t


def bits(t):
    """The bit patterns of t's values, in logical order."""
    return t.contiguous().view({4: torch.int32, 2: torch.int16, 1: torch.uint8}[t.element_size()])


def buffer_of(view):
    """The whole buffer a view lives in, as a flat tensor (a copy)."""
    return torch.empty(0, dtype=view.dtype, device=view.device).set_(view.untyped_storage()).clone()


def cases():
    for name in layouts.LAYOUTS:
        for shape in SHAPES_1D + SHAPES_2D + SHAPES_3D:
            if layouts._rank_ok(name, len(shape)):
                yield name, shape


CASES = list(cases())


def test_names_for_each_rank():
    assert layouts.names_for(0) == []
    assert layouts.names_for(1) == ["every other element", "offset slice"]
    assert layouts.names_for(2) == ["every other element", "transposed", "column slice", "row slice with padding"]
    assert layouts.names_for(3) == layouts.names_for(2)
    assert set(layouts.LAYOUTS) == {"every other element", "offset slice", "transposed", "column slice",
                                    "row slice with padding"}


def test_applies_by_rank_and_not_to_empty_tensors():
    assert layouts.applies("offset slice", torch.zeros(3))
    assert not layouts.applies("offset slice", torch.zeros(3, 3))
    assert not layouts.applies("transposed", torch.zeros(3))
    assert layouts.applies("transposed", torch.zeros(3, 3))
    assert not layouts.applies("every other element", torch.zeros(()))
    assert not layouts.applies("every other element", torch.zeros(0))
    assert not layouts.applies("column slice", torch.zeros(0, 4))
    assert layouts.applicable is layouts.applies


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name,shape", CASES, ids=[f"{n}-{'x'.join(map(str, s))}" for n, s in CASES])
def test_same_values_same_device_and_dtype(name, shape, dtype, device):
    t = source(shape, dtype, device)
    v = layouts.LAYOUTS[name](t)
    assert v.shape == t.shape and v.dtype == t.dtype and v.device == t.device
    assert torch.equal(bits(v), bits(t))
    assert v.untyped_storage().data_ptr() != t.untyped_storage().data_ptr()  # a buffer of its own


@pytest.mark.parametrize("name,shape", CASES, ids=[f"{n}-{'x'.join(map(str, s))}" for n, s in CASES])
def test_strides_offsets_and_contiguity(name, shape, device):
    t = source(shape, torch.float32, device)
    v = layouts.LAYOUTS[name](t)
    *lead, n = shape
    m = lead[-1] if lead else 1
    if name == "every other element":
        assert v.stride()[-1] == 2 and v.stride()[:-1] == tuple(s * 2 for s in t.stride()[:-1])
    elif name == "offset slice":
        assert v.is_contiguous() and v.storage_offset() == layouts.OFFSET
        assert v.data_ptr() % 16 != 0 and v.data_ptr() % (2 * v.element_size()) != 0  # misaligned base
    elif name == "transposed":
        assert v.stride()[-2:] == (1, m)
    elif name == "column slice":
        assert v.stride()[-2:] == (n + layouts.COLUMN_EXTRA, 1) and v.storage_offset() == layouts.COLUMN_OFFSET
        assert v.data_ptr() % 16 != 0
    elif name == "row slice with padding":
        pitch = layouts.padded_pitch(n)
        assert pitch > n and pitch % layouts.PITCH_MULTIPLE == 0
        assert v.stride()[-2:] == (2 * pitch, 1)
    # Non-contiguous wherever torch can tell (dimensions of size 1 have no stride that matters), except the
    # offset slice, which is contiguous but misaligned.
    if name != "offset slice":
        trivially = sum(s > 1 for s in shape) <= (1 if name == "transposed" else 0) or (
            name in ("column slice", "row slice with padding") and m == 1 and not lead[:-1])
        if not trivially:
            assert not v.is_contiguous(), (name, shape, v.stride())


@pytest.mark.parametrize("name,shape", CASES, ids=[f"{n}-{'x'.join(map(str, s))}" for n, s in CASES])
def test_everything_around_the_values_is_nan(name, shape, device):
    t = torch.randn(shape, device=device)  # no NaN among the values themselves
    v = layouts.LAYOUTS[name](t)
    buf = buffer_of(v)
    marked = buf.clone()
    torch.as_strided(marked, v.shape, v.stride(), v.storage_offset()).fill_(0.0)
    outside = torch.isnan(marked)
    assert int(outside.sum()) == buf.numel() - t.numel()  # every element outside the view is NaN ...
    assert not bool(torch.isnan(buf[~outside]).any())  # ... and none inside
    if name in ("every other element", "offset slice", "column slice", "row slice with padding"):
        assert buf.numel() > t.numel()  # these do leave room, and it is NaN


def test_non_float_dtypes_are_padded_with_their_largest_value():
    t = torch.arange(12, dtype=torch.int32).reshape(3, 4)
    v = layouts.column_slice(t)
    assert torch.equal(v, t) and int(buffer_of(v)[0]) == torch.iinfo(torch.int32).max
    b = torch.tensor([True, False, True])
    assert torch.equal(layouts.every_other_element(b), b)


# ---- a kernel that ignores what a layout changed reads NaN (or, transposed, the wrong values) ----------------------
def read_as_contiguous(x):
    """What a kernel that indexes x as a dense row-major array from its data pointer reads (it ignores x.stride())."""
    strides, step = [], 1
    for size in reversed(x.shape):
        strides.insert(0, step)
        step *= size
    return torch.as_strided(x, x.shape, strides, x.storage_offset())


def read_ignoring_row_pitch(x):
    """What a kernel honouring the column stride but taking the row pitch to be N column strides reads (2-D)."""
    m, n = x.shape
    return torch.as_strided(x, (m, n), (n * x.stride(1), x.stride(1)), x.storage_offset())


def read_from_storage_start(x):
    """What a kernel that uses the allocation's base instead of the view's data pointer reads."""
    return torch.as_strided(x, x.shape, x.stride(), 0)


@pytest.mark.parametrize("shape", [(127,), (1025,), (3, 5), (17, 33), (5, 127), (2, 3, 4)])
def test_a_kernel_reading_strided_input_as_contiguous_reads_nan(shape, device):
    t = torch.randn(shape, device=device)
    for name in layouts.names_for(len(shape)):
        v = layouts.LAYOUTS[name](t)
        read = read_as_contiguous(v)
        if name == "offset slice":
            assert torch.equal(read, t)  # contiguous from its data pointer: right; its hazard is the offset
            assert bool(read_from_storage_start(v).isnan().any())
        elif name == "transposed":
            assert not bool(read.isnan().any()) and not torch.equal(read, t)  # the transpose's values
        else:
            assert bool(read.isnan().any()), name


@pytest.mark.parametrize("shape", [(3, 5), (17, 33), (5, 127)])
def test_a_kernel_ignoring_the_row_pitch_reads_nan_on_the_slices_only(shape, device):
    t = torch.randn(shape, device=device)
    for name in layouts.names_for(2):
        v = layouts.LAYOUTS[name](t)
        if name == "transposed":
            continue  # column-major: such a kernel copies it to row-major first, or reads it with its strides
        read = read_ignoring_row_pitch(v)
        if name == "every other element":
            assert torch.equal(read, t)  # rows 2N apart, columns 2 apart: the pitch is N column strides
        else:
            assert bool(read.isnan().any()), name


def test_the_old_strided_copy_is_every_other_element():
    t = torch.randn(5, 7)
    v = layouts.every_other_element(t)
    assert v.stride() == (14, 2) and torch.equal(v, t)
