"""Triton's disk cache of autotuning results, as the lab keys it (compare.caches.autotuning_results_per_gpu_model):
Triton's key names the GPU's architecture only, so an H100 and an H200 (both sm_90) would share a choice timed on
one of them; the lab's key names the model too. Likewise inductor's chosen kernel configurations
(compare.caches.inductor_results_per_gpu_model)."""
import pytest
import triton
import triton.language as tl
from triton.runtime import autotuner

from compare import caches


@pytest.fixture
def keys_asked(monkeypatch):
    """Triton's cache manager replaced by one that records the keys it is asked for (and restored after)."""
    asked = []

    def manager(key):
        asked.append(key)
        return key

    monkeypatch.setattr(autotuner, "get_cache_manager", manager)
    return asked


def test_each_gpu_model_reads_and_writes_autotuning_results_under_keys_of_its_own(keys_asked, monkeypatch):
    caches.autotuning_results_per_gpu_model("NVIDIA H100 80GB HBM3")
    h100 = autotuner.get_cache_manager("triton's key")
    assert h100 != "triton's key" and keys_asked == [h100]
    caches.autotuning_results_per_gpu_model("NVIDIA H100 80GB HBM3")  # again: nothing changes
    assert autotuner.get_cache_manager("triton's key") == h100
    assert autotuner.get_cache_manager("another key") not in (h100, "another key")
    with pytest.raises(RuntimeError, match=r"compare/caches\.py.*'NVIDIA H200'"):
        caches.autotuning_results_per_gpu_model("NVIDIA H200")
    assert autotuner.get_cache_manager("triton's key") == h100

    monkeypatch.setattr(autotuner, "get_cache_manager", lambda key: key)  # another process, another model
    caches.autotuning_results_per_gpu_model("NVIDIA H200")
    assert autotuner.get_cache_manager("triton's key") not in (h100, "triton's key")


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=1), triton.Config({"BLOCK": 128}, num_warps=2)],
                 key=["n"])
@triton.jit
def _doubled_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n) * 2, mask=offsets < n)


@pytest.mark.gpu
def test_a_choice_timed_on_one_gpu_model_is_timed_again_on_another(tmp_path, monkeypatch):
    """Triton's real autotuner and disk cache: a choice written under one model's keys is read back under them, and
    neither under Triton's own key nor another model's (each of those times the configurations again)."""
    import torch

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_doubled_kernel, "cache_results", True)  # what TRITON_CACHE_AUTOTUNING=1 sets at import
    from triton.runtime.cache import get_cache_manager as original  # Triton's own (a worker's load_row salts it)

    timed = []
    bench = _doubled_kernel._bench
    monkeypatch.setattr(autotuner.Autotuner, "_bench", lambda self, *a, **k: timed.append(1) or bench(*a, **k))
    x = torch.ones(1000, device="cuda")

    def first_call(model):
        monkeypatch.setattr(autotuner, "get_cache_manager", original)
        if model:
            caches.autotuning_results_per_gpu_model(model)
        _doubled_kernel.cache.clear()
        timed.clear()
        _doubled_kernel[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](x, 1000)
        return len(timed)

    assert first_call("this model") == 2  # both configurations timed, the choice written
    assert first_call("this model") == 0  # read back
    assert first_call(None) == 2  # Triton's own key: not found
    assert first_call("another model") == 2
    assert first_call("another model") == 0


def test_inductor_s_kernel_choices_are_keyed_on_the_gpu_model(monkeypatch):
    """Inductor's key for a kernel's chosen configuration (AutotuneCache._prepare_key, from the kernel's file name,
    its source's hash) is the same for an H100 and an H200 until the lab tags it; a user's own tag is kept."""
    from torch._inductor.runtime.autotune_cache import AutotuneCache
    from torch.compiler import config

    monkeypatch.setattr(config, "cache_key_tag", "")
    untagged = AutotuneCache._prepare_key("/cache/ab/cabcdef.py")
    caches.inductor_results_per_gpu_model("NVIDIA H100 80GB HBM3")
    h100 = AutotuneCache._prepare_key("/cache/ab/cabcdef.py")
    caches.inductor_results_per_gpu_model("NVIDIA H100 80GB HBM3")  # again: nothing changes
    assert AutotuneCache._prepare_key("/cache/ab/cabcdef.py") == h100 != untagged
    with pytest.raises(RuntimeError, match=r"compare/caches\.py.*'NVIDIA H200'"):
        caches.inductor_results_per_gpu_model("NVIDIA H200")

    monkeypatch.setattr(config, "cache_key_tag", "the user's")  # another process, another model, a tag of its own
    caches.inductor_results_per_gpu_model("NVIDIA H200")
    assert config.cache_key_tag.startswith("the user's") and "NVIDIA H200" in config.cache_key_tag
    assert AutotuneCache._prepare_key("/cache/ab/cabcdef.py") not in (h100, untagged)
