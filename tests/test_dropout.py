"""Seeded dropout (specs/dropout.py): the spec's generator is Philox 4x32-10 (its published known answers), its mask
has the rate it claims, and the judge catches dropouts that draw a mask of their own, map the generator's words to
elements differently, ignore the seed, or multiply by the mask (a dropped inf turned into NaN)."""
import pytest
import torch

from compare import check, discover
from specs import dropout

OP = discover.load_op("dropout")


@pytest.mark.parametrize("counter,key,words", [
    # Random123's known-answer vectors for philox4x32 with 10 rounds (kat_vectors): zeros, all ones, and pi's digits
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
])
def test_the_generator_is_philox_4x32_10_on_ints_and_on_tensors(counter, key, words):
    assert dropout.philox4x32_10(*counter, *key) == words
    as_tensors = dropout.philox4x32_10(*(torch.tensor([c], dtype=torch.int64) for c in counter), *key)
    assert tuple(int(w) for w in as_tensors) == words


def test_the_mask_keeps_one_minus_p_and_changes_with_the_seed():
    x = torch.ones(1 << 20, dtype=torch.float64)
    p = torch.tensor([0.3], dtype=torch.float32)
    y = dropout.reference(x, torch.tensor([12345.0], dtype=torch.float64), p.double())
    kept = (y != 0).double().mean().item()
    assert abs(kept - 0.7) < 0.005, kept  # 5 standard deviations of a 2^20-element mean
    other = dropout.reference(x, torch.tensor([12346.0], dtype=torch.float64), p.double())
    assert 0.35 < ((y != 0) != (other != 0)).double().mean().item() < 0.49  # 2·0.3·0.7 = 0.42 for independent masks


def test_the_reference_in_steps_equals_it_in_one(monkeypatch):
    x = torch.randn(4099, dtype=torch.float64)
    seed, p = torch.tensor([2.0**52 + 7], dtype=torch.float64), torch.tensor([0.4], dtype=torch.float64)
    whole = dropout.reference(x, seed, p)
    monkeypatch.setattr(dropout, "REFERENCE_GROUPS", 7)  # many steps, the last one partial
    assert torch.equal(dropout.reference(x, seed, p), whole)


def test_the_reference_of_a_slice_is_the_slice_of_the_reference(monkeypatch):
    """reference_from(first, x[first:]) is reference(x)[first:] at every offset mod 4 (a slice can start inside a
    generator call's four words), in one step and in many."""
    x = torch.randn(4099, dtype=torch.float64)
    seed, p = torch.tensor([2.0**40 + 3], dtype=torch.float64), torch.tensor([0.5], dtype=torch.float64)
    whole = dropout.reference(x, seed, p)
    for groups in (dropout.REFERENCE_GROUPS, 5):
        monkeypatch.setattr(dropout, "REFERENCE_GROUPS", groups)
        for first in (1, 2, 3, 4, 1001, 4098):
            assert torch.equal(dropout.reference_from(first, x[first:], seed, p), whole[first:]), (groups, first)


def _fresh_mask(x, seed, p):
    keep = torch.rand(x.shape, device=x.device) >= p
    return torch.where(keep, x.float() / (1 - p), 0.0).to(x.dtype)


def _one_word_per_counter(x, seed, p):
    """The tutorial's mapping: element i takes word 0 of counter i, not word i mod 4 of counter i div 4."""
    i = torch.arange(x.numel(), device=x.device)
    words = dropout.philox4x32_10(i & dropout.WORD, i >> 32, 0, 0, seed & dropout.WORD, seed >> 32)[0]
    keep = (words >= torch.ceil(p.double() * 2.0**32).long()).reshape(x.shape)
    return torch.where(keep, x.float() / (1 - p), 0.0).to(x.dtype)


def _fixed_seed(x, seed, p):
    return dropout.torch_eager(x, torch.zeros_like(seed), p)


def _multiplied_by_the_mask(x, seed, p):
    kept = (dropout.torch_eager(torch.ones_like(x), seed, p) != 0).to(torch.float32)
    return (x.float() * kept / (1 - p)).to(x.dtype)


def _failures(fn) -> list[str]:
    return check.schedule_failures(OP, "torch:planted", fn, [torch.float32, torch.float16], torch.device("cpu"))


def test_the_torch_row_passes_every_check():
    assert _failures(dropout.torch_eager) == []


@pytest.mark.parametrize("wrong,where", [
    (_fresh_mask, "random"), (_one_word_per_counter, "random"), (_fixed_seed, "random"),
    (_multiplied_by_the_mask, "inf and nan"),
])
def test_a_wrong_dropout_is_caught(wrong, where):
    failed = _failures(wrong)
    assert any(f"{where}: FAIL" in f for f in failed), failed[:3]


def test_p_one_drops_every_element_in_every_row_that_runs_here(device):
    """The ends of the threshold's range: p = 1 (threshold 2^32, above every word: a row that holds it in 32 bits
    needs a flag for it) drops everything, p = 0 keeps x exactly. The checks cannot hold p = 1 (an all-zero output
    is one a do-nothing row could give), so each row runs it here: the Triton rows under the interpreter without a
    GPU."""
    from compare import discover, worker

    rows = [i for i in discover.implementations(OP) if i.backend == "triton" or i.name == "torch:eager"]
    rows += [i for i in discover.implementations(OP) if i.backend == "cuda" and device.type == "cuda"]
    x = torch.randn(4099, device=device)
    seed = torch.tensor([7], dtype=torch.int64, device=device)
    for impl in rows:
        if impl.backend == "triton":
            worker._use_interpreter_autotune_stub(impl)
        fn = dropout.torch_eager if impl.name == "torch:eager" else impl.load()
        assert torch.equal(fn(x, seed, torch.tensor([1.0], device=device)), torch.zeros_like(x)), impl.name
        assert torch.equal(fn(x, seed, torch.tensor([0.0], device=device)), x), impl.name

