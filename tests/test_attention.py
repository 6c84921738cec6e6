"""Fused attention (specs/attention.py, specs/attention_causal.py): the torch rows pass every check, and the judge
catches the mistakes an attention kernel makes: no max subtraction, a mask one key off, the wrong scale, scores
rounded to the input dtype, an accumulator not rescaled when the running maximum moves (a Triton kernel), a key tile
dropped, the causal and non-causal ops swapped. Under the interpreter without a GPU (fp16), on the GPU as well."""
import importlib.util
import math
import sys
from pathlib import Path

import pytest
import torch

from compare import check, discover, worker
from specs import attention

OP = discover.load_op("attention")
CAUSAL = discover.load_op("attention_causal")
GPU = torch.cuda.is_available()
DEVICE = torch.device("cuda" if GPU else "cpu")
DTYPES = [torch.float16, torch.bfloat16] if GPU else [torch.float16]
PLANTED = Path(__file__).parent / "planted" / "planted_attention_triton.py"


def _failures(fn, op=OP) -> list[str]:
    return check.schedule_failures(op, "torch:planted", fn, DTYPES, DEVICE)


def _attention(q, k, v, causal=False, scale=None, shift=True, mask_offset=0, keys=None, score_dtype=torch.float32):
    """The spec's arithmetic with one thing changed at a time (the defaults are right)."""
    s_len, d = q.shape[-2:]
    scores = torch.matmul(q.to(score_dtype), k.to(score_dtype).transpose(-2, -1)).float()
    scores = scores * (d ** -0.5 if scale is None else scale)
    rows = torch.arange(s_len, device=q.device)[:, None]
    cols = torch.arange(s_len, device=q.device)[None, :]
    hidden = cols > rows + mask_offset if causal else torch.zeros_like(cols > rows)
    if keys is not None:
        hidden = hidden | (cols >= keys)
    scores = scores.masked_fill(hidden, float("-inf"))
    p = torch.exp(scores - scores.amax(-1, keepdim=True)) if shift else torch.exp(scores)
    p = p / p.sum(-1, keepdim=True)
    return torch.matmul(p.to(q.dtype), v)


def test_the_torch_rows_pass_every_check():
    assert _failures(OP.torch_eager) == []
    assert _failures(CAUSAL.torch_eager, CAUSAL) == []
    assert _failures(lambda q, k, v: _attention(q, k, v)) == []  # the planted rows' baseline is right
    assert _failures(lambda q, k, v: _attention(q, k, v, causal=True), CAUSAL) == []


def test_a_softmax_without_its_maximum_overflows_on_large_scores():
    failed = _failures(lambda q, k, v: _attention(q, k, v, shift=False))
    assert failed and all("large scores" in f for f in failed), failed[:3]


@pytest.mark.parametrize("offset", [-1, 1], ids=["diagonal masked", "one key after the diagonal seen"])
def test_a_mask_one_key_off_is_caught(offset):
    failed = _failures(lambda q, k, v: _attention(q, k, v, causal=True, mask_offset=offset), CAUSAL)
    assert any("random: FAIL" in f for f in failed), failed[:3]


def test_the_ops_swapped_are_caught():
    assert any("random: FAIL" in f for f in _failures(CAUSAL.torch_eager, OP))
    assert any("random: FAIL" in f for f in _failures(OP.torch_eager, CAUSAL))


@pytest.mark.parametrize("wrong", [
    lambda q, k, v: _attention(q, k, v, scale=1 / q.shape[-1]),
    lambda q, k, v: _attention(q, k, v, keys=max(1, (q.shape[-2] // 16) * 16)),
], ids=["scaled by 1/D", "the last key tile dropped"])
def test_a_wrong_attention_is_caught(wrong):
    failed = _failures(wrong)
    assert any("random: FAIL" in f for f in failed), failed[:3]


def test_scores_rounded_to_the_input_dtype_are_caught():
    """An error of half an ulp of the score is that relative error in its probability: within fp16's tolerance for
    the random inputs' scores (a few units), not for scores in the hundreds."""
    failed = _failures(lambda q, k, v: _attention(q, k, v, score_dtype=q.dtype))
    assert any("large scores: FAIL" in f for f in failed), failed[:3]


def test_an_accumulator_not_rescaled_is_caught():
    if str(PLANTED.parent.parent.parent) not in sys.path:
        sys.path.append(str(PLANTED.parent.parent.parent))
    spec = importlib.util.spec_from_file_location("planted_attention_triton", PLANTED)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Triton's JIT looks kernels' globals up through their module
    spec.loader.exec_module(module)
    failed = _failures(module.unrescaled)
    assert any("random: FAIL" in f for f in failed), failed[:3]


def test_the_tolerance_follows_the_arithmetic():
    """The bound is what P's rounding allows (2u), a little more at long S and for scores in the hundreds: fp16's is
    2^-10 plus a few percent, bf16's eight times that; the score term is what large scores add."""
    for dtype, u in ((torch.float16, 2.0**-11), (torch.bfloat16, 2.0**-8)):
        short = OP.tolerance(dtype, (1, 1, 16, 64))
        assert 2 * u < short.atol < 2.1 * u and short.ulps == 1
        assert OP.tolerance(dtype, (1, 1, 16384, 64)).atol > short.atol
        assert OP.tolerance(dtype, (1, 1, 16, 64), "large scores").atol > short.atol


def test_the_reference_in_blocks_is_the_reference_whole(monkeypatch):
    g = torch.Generator().manual_seed(3)
    q, k, v = (t.double() for t in attention.make_inputs((2, 3, 50, 64), torch.float32, torch.device("cpu"), g))
    whole = [attention.attention_reference(q, k, v, causal) for causal in (False, True)]
    monkeypatch.setattr(attention, "REFERENCE_SCORES", 2 * 3 * 50 * 7)  # blocks of 7 queries
    for causal, expected in zip((False, True), whole):
        assert torch.allclose(attention.attention_reference(q, k, v, causal), expected, rtol=0, atol=1e-12)


# The CUDA rows carry the gpu marker, so `pytest -m gpu` (bench/gpu_run.sh tests) runs them; the Triton rows run
# everywhere, under the interpreter without a GPU.
CUDA_ROWS = ("cuda:naive", "cuda:flash2", "cuda:warp32", "cuda:lazy", "cuda:wgmma")
ROWS = ["triton:basic", "triton:tuned", "triton:tma", *[pytest.param(row, marks=pytest.mark.gpu) for row in CUDA_ROWS]]


@pytest.mark.parametrize("op", [OP, CAUSAL], ids=lambda op: op.name)
@pytest.mark.parametrize("row", ROWS)
def test_the_rows_pass_on_tiles_their_masks_split(op, row):
    """A sequence several tiles long whose length is a multiple of none: the tuned rows' unmasked tiles, the tiles
    the diagonal crosses and the key tail all run (under the interpreter the autotuner keeps its first config). CUDA
    rows on a GPU only, the wgmma row on Hopper only."""
    if row.startswith("cuda:") and not GPU:
        pytest.skip("CUDA rows need a GPU")
    if GPU and op.unavailable_reason(row, torch.cuda.get_device_capability()):
        pytest.skip(op.unavailable_reason(row, torch.cuda.get_device_capability()))
    impl = next(i for i in discover.implementations(op) if i.name == row)
    if impl.backend == "triton":
        worker._use_interpreter_autotune_stub(impl)
    fn = impl.load()
    for dtype in DTYPES:
        for shape in ((1, 2, 301, 64), (2, 1, 203, 128)):
            result = check.check_case(op, impl.name, fn, dtype, shape, DEVICE, seed=0)
            assert result.ok, f"{shape}: {result.message}"
    if row == "triton:tma" and not GPU:
        from triton_src import attention as triton_attention

        assert triton_attention.uses_tma(*attention.make_inputs((1, 1, 8, 64), torch.float16, DEVICE,
                                                                torch.Generator().manual_seed(0)))


def test_flops_are_counted_the_standard_way():
    shape = (2, 16, 4096, 128)
    assert OP.flops(shape) == 4 * 2 * 16 * 4096**2 * 128
    assert CAUSAL.flops(shape) == OP.flops(shape) // 2
    assert OP.bytes_moved(shape, torch.bfloat16) == 4 * math.prod(shape) * 2


def test_sdpa_rows_get_row_major_aligned_inputs_and_contiguous_ones_untouched():
    # The fused SDPA backends misread strided inputs (cuDNN wrote NaN, flash faulted, efficient refused): their
    # rows copy any input that is not row-major at a 16-byte aligned base, and only those.
    storage = torch.randn(2 * 3 * 80 * 64 + 8, dtype=torch.float16)
    plain = storage[: 2 * 3 * 80 * 64].view(2, 3, 80, 64)
    assert attention.aligned_contiguous(plain) is plain
    offset = storage[1: 1 + 2 * 3 * 80 * 64].view(2, 3, 80, 64)  # row-major, its base one element in
    transposed_one_token = torch.randn(1, 1, 64, 1, dtype=torch.float16).transpose(-1, -2)  # is_contiguous() passes
    column_slice = torch.randn(2, 3, 80, 96, dtype=torch.float16)[..., :64]
    assert transposed_one_token.is_contiguous() and transposed_one_token.stride() != (64, 64, 64, 1)
    for strided in (offset, transposed_one_token, column_slice):
        copied = attention.aligned_contiguous(strided)
        assert copied.data_ptr() != strided.data_ptr() and copied.data_ptr() % 16 == 0
        assert copied.stride() == tuple(math.prod(copied.shape[i + 1:]) for i in range(4))
        assert torch.equal(copied, strided)
