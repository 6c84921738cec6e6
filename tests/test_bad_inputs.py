"""Every CUDA and Triton implementation of every op, fed what it can't take: a clear exception that names the op
and the problem, or the right answer, never a crash or a silent wrong result."""
import math

import pytest
import torch

from compare import build, check, discover, worker

OPS = [discover.load_op(n) for n in discover.op_names()]
GPU = torch.cuda.is_available()
CAPABILITY = torch.cuda.get_device_capability() if GPU else None
ROWS = [(op, impl) for op in OPS for impl in discover.implementations(op)
        if (impl.backend == "triton" or (impl.backend == "cuda" and GPU))
        and op.unavailable_reason(impl.name, CAPABILITY) is None]
IDS = [f"{op.name}-{impl.name}" for op, impl in ROWS]


@pytest.fixture(scope="module")
def loaded():
    """impl.name -> callable, building each op's .cu once."""
    fns = {}
    for op, impl in ROWS:
        if impl.backend == "cuda":
            build.build(discover.base_name(op.name), op.cuda_flags, progress=False)
        else:
            worker._use_interpreter_autotune_stub(impl)
        fns[(op.name, impl.name)] = impl.load()
    return fns


def device():
    return torch.device("cuda" if GPU else "cpu")


def inputs_for(op, shape, dtype=None, dev=None):
    """The op's inputs, in float32 by default where the op takes it (else its first dtype: fp8 operands)."""
    gen = torch.Generator(device=dev or device()).manual_seed(0)
    dtype = dtype or (torch.float32 if torch.float32 in op.dtypes else op.dtypes[0])
    return op.make_inputs(shape, dtype, dev or device(), gen)


def row_dtype(op, impl):
    """float32 where the op and the row take it, else the first dtype the row takes (tensor-core rows refuse fp32 by
    design; an fp8 op has no fp32)."""
    return next(d for d in (torch.float32, *op.dtypes)
                if d in op.dtypes and d not in op.unsupported_dtypes.get(impl.name, ()))


def small_shape(op):
    return (op.interpret_shapes or op.check_shapes)[1]


def expect_clear_error(fn, args, op, *words):
    with pytest.raises(Exception) as info:
        out = fn(*args)
        if GPU:
            torch.cuda.synchronize()
        pytest.fail(f"accepted the input and returned {type(out).__name__}")
    text = str(info.value)
    named = op.pass_of[0] if op.pass_of else op.name  # a pass of an op with a gradient: its rows name the op
    assert named in text, f"the error does not name the op: {text}"
    assert any(w.lower() in text.lower() for w in words), f"the error does not say {words}: {text}"


@pytest.mark.parametrize("op,impl", ROWS, ids=IDS)
def test_unsupported_dtypes_are_rejected(op, impl, loaded):
    fn = loaded[(op.name, impl.name)]
    for bad in (torch.float64, torch.int32):
        args = [t.to(bad) for t in inputs_for(op, small_shape(op))]
        expect_clear_error(fn, args, op, "dtype", "Double", "Int")


DECLARED = [(op, impl, dtype, shape) for op, impl in ROWS for dtype in op.dtypes
            for shape in op.check_shapes if not op.supports(impl.name, dtype, shape)]


@pytest.mark.parametrize("op,impl,dtype,shape", DECLARED,
                         ids=[f"{op.name}-{i.name}-{str(d)[6:]}-{s}" for op, i, d, s in DECLARED])
def test_what_a_row_declares_unsupported_it_refuses_cleanly(op, impl, dtype, shape, loaded):
    """The spec's unsupported_dtypes / unsupported_shapes excuse a row from checks only if it really refuses."""
    if not GPU and (dtype == torch.bfloat16 or math.prod(shape) > 1 << 20):
        pytest.skip("the interpreter is slow and has no bfloat16")
    expect_clear_error(loaded[(op.name, impl.name)], inputs_for(op, shape, dtype), op, "takes", "dtype", "N <=",
                       "supports", "float")


@pytest.mark.parametrize("op,impl", ROWS, ids=IDS)
def test_mismatched_shapes_are_rejected(op, impl, loaded):
    args = list(inputs_for(op, small_shape(op)))
    if len(args) < 2:
        pytest.skip(f"{op.name} takes one tensor")
    last = args[-1]
    args[-1] = last.narrow(0, 0, last.shape[0] - 1).contiguous()
    expect_clear_error(loaded[(op.name, impl.name)], args, op, "shape", "differ", "mismatch", "dimension", "size")


@pytest.mark.parametrize("op,impl", ROWS, ids=IDS)
def test_mixed_dtypes_are_rejected(op, impl, loaded):
    args = list(inputs_for(op, small_shape(op)))
    if len(args) < 2:
        pytest.skip(f"{op.name} takes one tensor")
    # A float dtype the last input does not have already (an op without float32 makes its inputs in float16).
    args[-1] = args[-1].to(torch.bfloat16 if args[-1].dtype == torch.float16 else torch.float16)
    expect_clear_error(loaded[(op.name, impl.name)], args, op, "dtype")


@pytest.mark.parametrize("op,impl", ROWS, ids=IDS)
def test_empty_tensors_give_empty_results(op, impl, loaded):
    shape = (0,) + tuple(small_shape(op)[1:])
    args = inputs_for(op, shape, row_dtype(op, impl))
    out = loaded[(op.name, impl.name)](*args)
    if GPU:
        torch.cuda.synchronize()
    ref = op.reference(*[t.double() for t in args])
    if not isinstance(ref, tuple):
        assert tuple(out.shape) == tuple(ref.shape) and out.numel() == 0
        return
    # A pass with several outputs: the empty ones empty, a gradient summed over no rows (dweight) all zeros.
    assert isinstance(out, tuple) and len(out) == len(ref)
    for got, want in zip(out, ref):
        assert tuple(got.shape) == tuple(want.shape) and torch.equal(got.double().cpu(), want.cpu())


@pytest.mark.parametrize("op,impl", ROWS, ids=IDS)
def test_non_contiguous_inputs_are_handled_or_refused(op, impl, loaded):
    r = check.check_case(op, impl.name, loaded[(op.name, impl.name)], row_dtype(op, impl), small_shape(op), device(),
                         seed=0, inputs_name=check.NON_CONTIGUOUS)
    assert r.ok, r.message


@pytest.mark.gpu
@pytest.mark.parametrize("op,impl", ROWS, ids=IDS)
def test_cpu_tensors_are_rejected(op, impl, loaded):
    args = inputs_for(op, small_shape(op), dev=torch.device("cpu"))
    expect_clear_error(loaded[(op.name, impl.name)], args, op, "cuda", "device", "CPU")


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("op,impl", ROWS, ids=IDS)
def test_more_than_2_to_the_31_elements(op, impl, loaded):
    """32-bit index arithmetic wraps past 2^31 elements: the last rows of the output would be wrong or unwritten.
    A pass with several outputs (compare.passes) has its per-row outputs (y, dx) judged on their last rows; its sums
    over every row (dweight, dbias) are not, since their reference needs the whole input in float64, but they are
    built from the same loads as dx, whose last rows a wrapped offset would spoil."""
    if op.index_overflow_shape is None:
        pytest.skip(f"{op.name} declares no index_overflow_shape")
    # 16-bit where the row takes it (half the memory), else the first dtype it takes (an fp32-only SIMT row)
    dtype = next(d for d in (torch.float16, *op.dtypes) if d in op.dtypes and op.supports(impl.name, d,
                                                                                          op.index_overflow_shape))
    args = inputs_for(op, op.index_overflow_shape, dtype)
    assert max(t.numel() for t in args) > 2**31
    out = loaded[(op.name, impl.name)](*args)
    torch.cuda.synchronize()
    outs = out if isinstance(out, tuple) else (out,)
    lead = outs[0].shape[0]  # the output's rows: y, or dx for a backward
    rows = max(1, min(lead, 4096 // max(1, math.prod(outs[0].shape[1:]))))
    # The reference on the last rows: slice every input whose leading dimension is the output's.
    tail = [t[-rows:] if t.shape[0] == lead else t for t in args]
    tail64 = [t.double() for t in tail]
    first = (lead - rows) * math.prod(outs[0].shape[1:])  # the flat index of the tail's first element
    ref = op.reference_from(first, *tail64) if op.reference_from else op.reference(*tail64)
    refs = ref if isinstance(ref, tuple) else (ref,)
    tols = op.tolerance(dtype, op.index_overflow_shape)
    tols = tols if isinstance(tols, tuple) else (tols,)
    names = op.output_names or [f"output {i}" for i in range(len(outs))]
    judged, wrong = [], []
    for name, got, want, tol in zip(names, outs, refs, tols):
        if got.dim() and got.shape[0] == lead:
            ok, message, _ = check.compare(got[-rows:], want, tol, dtype)
            judged.append(name)
            wrong += [] if ok else [f"{name}: {message}"]
    del args, out, outs
    torch.cuda.empty_cache()
    assert judged, "no output of the op has a row per input row: nothing was judged"
    assert not wrong, "; ".join(wrong)


@pytest.mark.gpu
# Ops without a gradient: those with one register a forward and backward pair without fake (meta) kernels, so
# torch.compile and opcheck cannot trace them yet.
@pytest.mark.parametrize("op", [op for op in OPS if discover.cuda_variants(op.name) and op.pass_of is None],
                         ids=lambda op: op.name)
def test_cuda_ops_pass_opcheck(op):
    build.build(op.name, op.cuda_flags, progress=False)
    for variant in discover.cuda_variants(op.name):
        fn = discover.cuda_op(op.name, variant)
        for dtype in op.dtypes:
            if op.supports(f"cuda:{variant}", dtype, small_shape(op)):
                # test_schema compares float8 inputs before and after the call with arithmetic torch lacks for
                # float8 ("mul_cuda" not implemented): fp8 operands get the other three tests.
                tests = ("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic") \
                    if dtype.itemsize == 1 and dtype.is_floating_point else None
                torch.library.opcheck(fn, inputs_for(op, small_shape(op), dtype),
                                      **({"test_utils": tests} if tests else {}))
