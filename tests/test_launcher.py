"""triton_src.Launcher, the launch path of the triton:direct rows (softmax, layernorm, rmsnorm): what its cache key
tells apart (on the CPU), and on the GPU that a repeated call skips Triton's per-call path yet launches what that
path would, bit for bit."""
import pytest
import torch

import triton_src
from triton_src import _specialization


def test_the_key_tells_apart_what_triton_specializes_on():
    x = torch.zeros(64, dtype=torch.float16)
    assert _specialization(x) == _specialization(torch.ones(64, dtype=torch.float16))  # values never count
    assert _specialization(x) != _specialization(x.float())  # the dtype
    assert _specialization(x) != _specialization(x[1:])  # 16-byte alignment
    assert _specialization(x[8:]) == _specialization(x)  # 16 bytes further: aligned again
    assert _specialization(16) != _specialization(17)  # an integer's value
    assert _specialization(True) != _specialization(1)  # a bool is not the int 1
    assert _specialization(1e-5) == _specialization(1e-6)  # a float's value is not specialized
    assert _specialization(object()) is None  # anything else: through kernel[grid]


def test_a_launch_hook_counts_as_set_only_when_it_would_be_called(monkeypatch):
    """Triton 3.5 and later hold each launch hook in a HookChain that is never None: an empty chain is no hook, and
    the Launcher's own launch path must be taken; a chain holding a call, or a hook set as a plain function (as
    before Triton 3.5, and as a profiler may), must send each launch through CompiledKernel[grid]."""
    from triton import knobs

    from triton_src import launch_hooks_set

    chain = getattr(knobs.runtime.launch_enter_hook, "calls", None)
    if chain is not None:  # Triton 3.5 and later
        assert chain == [] and not launch_hooks_set(), "no profiler is running: no hook should count as set"
        hook = lambda metadata: None  # noqa: E731
        knobs.runtime.launch_enter_hook.add(hook)
        try:
            assert launch_hooks_set()
        finally:
            knobs.runtime.launch_enter_hook.remove(hook)
        assert not launch_hooks_set()
    monkeypatch.setattr(knobs.runtime, "launch_enter_hook", None)
    monkeypatch.setattr(knobs.runtime, "launch_exit_hook", None)
    assert not launch_hooks_set()
    monkeypatch.setattr(knobs.runtime, "launch_exit_hook", lambda metadata: None)
    assert launch_hooks_set()


def test_under_the_interpreter_every_launch_goes_through_triton():
    from triton_src import softmax

    if torch.cuda.is_available():
        pytest.skip("on a GPU the kernels are compiled; the GPU test below covers them")
    launcher = triton_src.launcher(softmax.softmax_basic_kernel)
    assert launcher is triton_src.launcher(softmax.softmax_basic_kernel)  # one a kernel
    assert launcher.params is None
    x = torch.randn(3, 100)
    for _ in range(2):
        y = torch.full_like(x, float("nan"))
        launcher[(3,)](x, y, 100, BLOCK=128)
        torch.testing.assert_close(y, torch.softmax(x, -1))
    assert launcher.compiled == {}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,shape", [(torch.float32, (3, 262144)), (torch.bfloat16, (64, 32768)),
                                         (torch.float16, (300, 1000)), (torch.float32, (5, 40001))])
def test_a_repeated_call_skips_triton_and_matches_it_bit_for_bit(dtype, shape, monkeypatch):
    from triton_src import softmax

    x = torch.randn(shape, device="cuda").to(dtype)
    expected = softmax.packed(x)  # v5: the same kernels, launched through kernel[grid]
    softmax.direct(x)  # compiles and autotunes through Triton, and keeps the compiled kernels
    calls = _count_jit_runs(monkeypatch)
    y = softmax.direct(x)
    assert calls == [], f"{len(calls)} launches went through Triton's per-call path"
    assert _same_bits((y,), (expected,))


def _count_jit_runs(monkeypatch) -> list:
    """Every launch that goes through Triton's per-call Python from here on: JITFunction.run (kernel[grid]) or
    CompiledKernel[grid] (which builds the launch hooks' metadata and calls them)."""
    import triton
    from triton.compiler.compiler import CompiledKernel

    calls = []
    run, getitem = triton.runtime.JITFunction.run, CompiledKernel.__getitem__
    monkeypatch.setattr(triton.runtime.JITFunction, "run", lambda self, *a, **k: calls.append(self) or run(
        self, *a, **k))
    monkeypatch.setattr(CompiledKernel, "__getitem__", lambda self, grid: calls.append(self) or getitem(self, grid))
    return calls


def _same_bits(got, expected) -> bool:
    return all(torch.equal(g.view(torch.uint8), e.view(torch.uint8)) for g, e in zip(got, expected, strict=True))


@pytest.mark.gpu
@pytest.mark.parametrize("norm,step", [("layernorm", "occupancy"), ("rmsnorm", "split")])
@pytest.mark.parametrize("dtype,shape", [(torch.bfloat16, (4096, 16384)), (torch.float32, (256, 65536)),
                                         (torch.float16, (300, 1000)), (torch.float32, (5, 40001))])
def test_a_norms_repeated_forward_and_backward_skip_triton_and_match_them(norm, step, dtype, shape, monkeypatch):
    import importlib

    module = importlib.import_module(f"triton_src.{norm}")
    x = torch.randn(shape, device="cuda").to(dtype)
    dy = torch.randn(shape, device="cuda").to(dtype)
    params = [torch.randn(shape[1], device="cuda").to(dtype) for _ in range(2 if norm == "layernorm" else 1)]
    step_forward, step_backward = getattr(module, step), getattr(module, f"{step}_backward")
    expected = step_forward(x, *params)  # the step direct launches, through kernel[grid]
    expected_grads = step_backward(dy, x, *params, *expected[1:])
    saved = module.direct(x, *params)  # compiles and autotunes through Triton, and keeps the compiled kernels
    module.direct_backward(dy, x, *params, *saved[1:])
    calls = _count_jit_runs(monkeypatch)
    got = module.direct(x, *params)
    grads = module.direct_backward(dy, x, *params, *got[1:])
    assert calls == [], f"{len(calls)} launches went through Triton's per-call path"
    assert _same_bits(got, expected) and _same_bits(grads, expected_grads)


@pytest.mark.gpu
def test_a_launch_hook_sees_every_repeated_launch(monkeypatch):
    """A profiler's launch hook (Proton sets one) must see a launch the Launcher repeats, as it sees Triton's."""
    from triton import knobs

    from triton_src import softmax

    x = torch.randn(3, 262144, device="cuda")  # v4's long rows: two kernels a call
    expected = softmax.direct(x)  # compiles and autotunes through Triton, and keeps the compiled kernels
    seen = []
    monkeypatch.setattr(knobs.runtime, "launch_enter_hook", lambda metadata: seen.append(metadata.get()["name"]))
    y = softmax.direct(x)
    assert len(seen) == 2, f"the hook saw {seen}; expected v4's two kernels"
    assert _same_bits((y,), (expected,))


def test_the_host_arithmetic_matches_tritons():
    """triton_src.cdiv and next_power_of_2 (the launch paths' own, without Triton's constexpr_function wrapper) give
    what triton.cdiv and triton.next_power_of_2 give."""
    import triton

    for n in [0, 1, 2, 3, 4, 5, 1000, 1023, 1024, 1025, 4096, 65535, 65536, 4_000_000, 2**40 + 1]:
        assert triton_src.next_power_of_2(n) == triton.next_power_of_2(n), n
        for d in [1, 2, 3, 128, 4096]:
            assert triton_src.cdiv(n, d) == triton.cdiv(n, d), (n, d)


def test_the_tuning_key_is_the_one_tritons_autotuner_files_its_choice_under():
    """triton_src.tuning_key rebuilds the key Triton's Autotuner.run uses, so that a Launcher keeps a compiled kernel
    only while its autotuner holds the configuration it ran (choice_kept): checked against the Triton installed."""
    import triton
    import triton.language as tl

    from triton_src import choice_kept, tuning_key

    @triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
    @triton.jit
    def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n) * 2, mask=offsets < n)

    x = torch.arange(40, dtype=torch.float16)
    y = torch.empty_like(x)
    double.do_bench = lambda call, quantiles=None, **_: call() or [1.0] * 3  # timing needs a GPU: equal times
    double[lambda meta: (triton.cdiv(40, meta["BLOCK"]),)](x, y, 40)
    assert torch.equal(y, 2 * x)
    assert list(double.cache) == [tuning_key(double, (x, y, 40), {})] == [(40, "torch.float16", "torch.float16")]
    assert choice_kept(double, (x, y, 40), {}, double.best_config)
    assert not choice_kept(double, (x, y, 41), {}, double.best_config)  # another key: no choice held there
    double.cache.clear()  # what compare.worker.compile_case does after its untimed launches
    assert not choice_kept(double, (x, y, 40), {}, double.best_config)


@pytest.mark.gpu
@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm"])
def test_a_first_call_with_untimed_autotuning_leaves_no_launch_kept(norm, monkeypatch):
    """compare.worker.compile_case launches each configuration once untimed and forgets the pick; the Launcher must
    not keep it either, or every later call, the timed ones included, runs that untimed pick and the autotuner
    never chooses (seen on an H100 with rows checked at once: the timed keys missing from the autotuners' picks and
    the 64K cells of every step from direct on slower, results/nvidia-h100-80gb-hbm3/launcher-kept-untimed-pick/)."""
    import importlib

    from compare import worker

    module = importlib.import_module(f"triton_src.{norm}")
    shape = (256, 65536)
    x = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
    params = [torch.randn(shape[1], device="cuda", dtype=torch.bfloat16) for _ in range(2 if norm == "layernorm"
                                                                                      else 1)]
    kernels = [k for k in vars(module).values() if hasattr(k, "configs") and hasattr(k, "cache")]
    for kernel in kernels:
        kernel.cache.clear()
        triton_src.launcher(kernel).compiled.clear()
    monkeypatch.setitem(worker._row, "fn", module.tile_ahead)
    choice_left, _ = worker.compile_case((x, *params))
    assert choice_left  # an autotuner had a choice to make by timing
    assert all(not triton_src.launcher(k).compiled for k in kernels), "an untimed pick was kept by a Launcher"
    module.tile_ahead(x, *params)  # the call that times the candidates, and keeps the choice
    kept = [(k, compiled) for k in kernels for compiled, _ in triton_src.launcher(k).compiled.values()]
    assert kept
    for kernel, compiled in kept:  # what the Launcher runs from now on is what the autotuner chose, timing them
        [choice] = kernel.cache.values()
        assert compiled.metadata.num_warps == choice.num_warps
