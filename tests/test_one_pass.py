"""The judge's one pass (compare/one_pass.py) gives the torch path's verdict and figures bit for bit: for outputs
that pass, the same three figures; for outputs that do not (an element past its bound, NaN, an unmatched inf), no
figures, so that check.compare judges them element by element. Under Triton's interpreter on the CPU, and on the GPU
where there is one."""
import math

import pytest
import torch

from compare import check, one_pass
from compare.spec import Tolerance

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# Each kind of tolerance, scaled to the dtype's epsilon: with and without atol, with ulps, exact where the bound is 0.
KINDS = ["atol and rtol", "ulps alone", "atol and ulps", "rtol alone"]


def _tolerance(kind, dtype):
    eps = torch.finfo(dtype).eps
    return {"atol and rtol": Tolerance(atol=1e-5, rtol=2 * eps), "ulps alone": Tolerance(atol=0.0, rtol=0.0, ulps=2.0),
            "atol and ulps": Tolerance(atol=1e-6, rtol=0.0, ulps=1.0), "rtol alone": Tolerance(atol=0.0, rtol=2 * eps)}[kind]


def _torch_path(out, ref, tol, dtype):
    e = check.expectation(ref, tol, dtype)
    return check._figures_if_within(out.to(torch.float64), e, tol)


def _reference(n, seed, device):
    g = torch.Generator().manual_seed(seed)
    ref = torch.randn(n, generator=g, dtype=torch.float64) * torch.logspace(-3, 4, n, dtype=torch.float64)
    ref[::97] = 0.0
    ref[5], ref[6], ref[7] = 1e-42, 3e-6, -2e-39  # below the smallest normal number of one dtype or another
    # Just past a tie of float16 and of bfloat16: rounded once, each goes up; through float32 (as torch rounds on the
    # CPU) the excess is lost and the tie goes to even. Both paths must round them alike.
    ref[8], ref[9] = 1 + 2 ** -11 + 2 ** -40, -(1 + 2 ** -8 + 2 ** -40)
    return ref.to(device)


def _near(ref, dtype, tol, seed, spread=0.2):
    """An output within its bound: the rounded reference, moved by up to `spread` of each element's bound."""
    g = torch.Generator().manual_seed(seed)
    bound = check._bound(ref, tol, dtype).cpu()
    target = check.rounded(ref, dtype).cpu()
    noise = (torch.rand(ref.shape, generator=g, dtype=torch.float64) * 2 - 1) * bound * spread
    return (target + torch.where(torch.isfinite(target), noise, torch.zeros_like(noise))).to(dtype).to(ref.device)


def _both(out, ref, tol):
    return one_pass.figures_if_within(out, ref, tol), _torch_path(out, ref, tol, out.dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind", KINDS)
def test_an_output_that_passes_gets_the_torch_paths_figures_bit_for_bit(dtype, kind, device):
    tol = _tolerance(kind, dtype)
    ref = _reference(5000, 0, device)
    if kind == "rtol alone":  # no absolute slack: a value below the smallest normal number cannot be within it
        ref = torch.where((ref != 0) & (ref.abs() < 1e-2), torch.ones_like(ref), ref)
    out = _near(ref, dtype, tol, 1)
    fast, slow = _both(out, ref, tol)
    assert slow is not None, "the planted output should pass"
    assert fast == slow  # floats compared exactly


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_infinities_nan_and_overflow_must_be_matched_exactly(dtype, device):
    tol = _tolerance("atol and rtol", dtype)
    ref = _reference(3000, 2, device)
    ref[10], ref[11], ref[12] = math.inf, -math.inf, math.nan
    ref[13] = 1e300  # overflows every output dtype: the rounded reference is inf
    out = _near(ref, dtype, tol, 3)
    out[10], out[11], out[12], out[13] = math.inf, -math.inf, math.nan, math.inf
    fast, slow = _both(out, ref, tol)
    assert slow is not None and fast == slow
    for index, wrong in ((10, -math.inf), (10, math.nan), (13, math.nan), (12, 0.0), (12, math.inf), (13, 65504.0 if dtype == torch.float16 else 3e38), (14, math.nan),
                         (15, math.inf)):
        bad = out.clone()
        bad[index] = wrong
        fast, slow = _both(bad, ref, tol)
        assert fast is None and slow is None, (index, wrong)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind", KINDS)
def test_one_element_past_its_bound_gives_no_figures(dtype, kind, device):
    tol = _tolerance(kind, dtype)
    ref = _reference(4099, 4, device)
    out = _near(ref, dtype, tol, 5)
    bound = check._bound(ref, tol, dtype)
    for index in (0, 2048, 4098):  # the first element, one inside, the last (a partial block)
        bad = out.clone()
        bad[index] = (check.rounded(ref, dtype)[index] + 4 * bound[index] + 1e-3).to(dtype)
        fast, slow = _both(bad, ref, tol)
        assert fast is None and slow is None, index


def test_an_exact_tolerance_fails_any_error_where_the_bound_is_zero(device):
    tol = Tolerance(atol=0.0, rtol=0.0)  # bound 0 everywhere: the output must equal the reference
    ref = torch.tensor([0.0, 0.5, -2.0, 1024.0], dtype=torch.float64, device=device)
    out = ref.to(torch.float32)
    assert _both(out, ref, tol) == ({"max_abs_err": 0.0, "max_rel_err": 0.0, "worst_ratio": 0.0},) * 2
    bad = out.clone()
    bad[0] = 1e-30
    assert _both(bad, ref, tol) == (None, None)


def test_it_judges_what_it_is_for_and_leaves_the_rest_to_torch():
    ref = torch.zeros(4, dtype=torch.float64)
    assert not one_pass.applies(torch.zeros(4), ref, torch.float32)  # a CPU tensor
    if torch.cuda.is_available():
        cuda_ref = ref.cuda()
        assert one_pass.applies(torch.zeros(4, device="cuda"), cuda_ref, torch.float32)
        assert not one_pass.applies(torch.zeros(4, device="cuda", dtype=torch.float16), cuda_ref, torch.float32)
        assert not one_pass.applies(torch.zeros(5, device="cuda"), cuda_ref, torch.float32)
        assert not one_pass.applies(torch.zeros(4, device="cuda").to(torch.float8_e4m3fn), cuda_ref,
                                    torch.float8_e4m3fn)
