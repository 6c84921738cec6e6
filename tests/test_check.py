"""The checker must reject wrong answers and refuse checks that cannot fail."""
import torch

from compare import check, discover
from compare.spec import Tolerance

GELU = discover.load_op("gelu")
SHAPE = (4099,)


def run(fn, dtype=torch.float32, shape=SHAPE, device=torch.device("cpu")):
    return check.check_case(GELU, "planted", fn, dtype, shape, device, seed=0)


def test_reference_itself_passes():
    r = run(lambda x: GELU.reference(x.double()).to(x.dtype))
    assert r.ok and r.status == "ok" and r.worst_ratio <= 1


def test_zeros_fail():
    r = run(lambda x: torch.zeros_like(x))
    assert not r.ok and "outside" in r.message


def test_returning_the_input_fails():
    assert not run(lambda x: x).ok


def test_unwritten_tail_fails():
    def tail_left_nan(x):
        y = GELU.reference(x.double()).to(x.dtype)
        y[-3:] = float("nan")  # what a poisoned, never-written tail reads back as
        return y

    r = run(tail_left_nan)
    assert not r.ok and "NaN" in r.message and "indices 4096-4098 of 4099" in r.message


def test_message_says_which_rows_are_wrong():
    ref = torch.randn(8, 5, dtype=torch.float64)
    tol = Tolerance(atol=1e-6, rtol=1e-6)
    half = ref.clone()
    half[4:] = 0.5  # stale values in the second half of the rows: a kernel that wrote half the rows
    ok, message, _ = check.compare(half.float(), ref, tol, torch.float32)
    assert not ok and "rows 4-7 of 8" in message
    scattered = ref.clone()
    scattered[[1, 6], 2] = float("nan")
    ok, message, _ = check.compare(scattered.float(), ref, tol, torch.float32)
    assert not ok and "rows 1-6 of 8, 2 of them wrong" in message
    assert check.where_wrong(torch.zeros(3, dtype=torch.bool)) == ""


def test_slightly_wrong_math_fails():
    # tanh's argument with a wrong constant: a plausible typo, off by ~1e-3 relative.
    r = run(lambda x: (0.5 * x * (1 + torch.tanh(0.79 * (x + 0.044715 * x**3)))))
    assert not r.ok


def test_low_precision_fails_at_fp32_tolerance():
    r = run(lambda x: GELU.reference(x.double()).to(torch.bfloat16).to(x.dtype))
    assert not r.ok


def test_wrong_shape_and_dtype_fail():
    assert "shape" in run(lambda x: GELU.reference(x.double()).to(x.dtype)[:-1]).message
    assert "dtype" in run(lambda x: GELU.reference(x.double())).message


def test_modifying_the_input_fails():
    def in_place(x):
        return x.copy_(GELU.reference(x.double()).to(x.dtype))

    r = run(in_place)
    assert not r.ok and "modified" in r.message


def test_result_cached_from_an_earlier_call_fails():
    cache = {}

    def cached(x):
        if "y" not in cache:
            cache["y"] = GELU.reference(x.double()).to(x.dtype)
        return cache["y"].clone()

    run(cached)  # first call computes on its inputs; a second call with fresh inputs gets the stale answer
    r = check.check_case(GELU, "planted", cached, torch.float32, SHAPE, torch.device("cpu"), seed=1)
    assert not r.ok


def test_inf_output_fails():
    def with_inf(x):
        y = GELU.reference(x.double()).to(x.dtype)
        y[0] = float("inf")
        return y

    assert not run(with_inf).ok


def test_degenerate_reference_is_refused():
    ref = torch.full((100,), 1e-9, dtype=torch.float64)
    assert "zeros" in check.is_degenerate(ref, Tolerance(atol=1e-6, rtol=1e-3))
    ref = torch.full((100,), 3.0, dtype=torch.float64) + torch.rand(100, dtype=torch.float64) * 1e-9
    assert "constant" in check.is_degenerate(ref, Tolerance(atol=1e-6, rtol=1e-3))
    assert check.is_degenerate(torch.randn(100, dtype=torch.float64), Tolerance(atol=1e-6, rtol=1e-3)) == ""


def test_seed_is_stable_and_distinct_per_case():
    a = check.case_seed(0, "gelu", "float32", (1,), "random")
    assert a == check.case_seed(0, "gelu", "float32", (1,), "random")
    assert a != check.case_seed(0, "gelu", "float32", (2,), "random")


def test_strided_copy_keeps_values_and_breaks_contiguity():
    x = torch.randn(5, 7)
    y = check.strided_copy(x)
    assert not y.is_contiguous() and torch.equal(x, y)


def test_ignoring_strides_fails_but_refusing_them_passes():
    def reads_storage_as_contiguous(x):
        flat = torch.as_strided(x, (x.numel(),), (1,))  # ignores x.stride()
        return GELU.reference(flat.double()).to(x.dtype).view(x.shape)

    r = check.check_case(GELU, "planted", reads_storage_as_contiguous, torch.float32, SHAPE, torch.device("cpu"),
                         seed=0, inputs_name=check.NON_CONTIGUOUS)
    assert not r.ok

    def refuses(x):
        if not x.is_contiguous():
            raise ValueError("gelu: x is not contiguous; pass .contiguous()")
        return GELU.reference(x.double()).to(x.dtype)

    r = check.check_case(GELU, "planted", refuses, torch.float32, SHAPE, torch.device("cpu"), seed=0,
                         inputs_name=check.NON_CONTIGUOUS)
    assert r.ok and "refused" in r.message
