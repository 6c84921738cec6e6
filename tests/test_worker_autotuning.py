"""The worker and Triton's autotuner, run under the interpreter here (Triton's autotuner runs there too), with the
autotuner's timing replaced so that the config each key gets is known:
  * compare.worker.autotune_picks: what a row's autotuned kernel chose, per tuning key, for the json's build
    entries (chosen_configs);
  * compare.worker.compile_case: a Triton row's first call at a shape made beside other rows' checks, its
    autotuning untimed (every configuration launched once), so that only the timing of the candidates needs the GPU
    alone. What it must never do: keep a choice made without timing, or write one to Triton's disk cache. A
    torch.compile row's likewise, its inductor kernels' candidates kept for the call after (a stand-in kernel here,
    a compiled one in the GPU test)."""
import pytest
import torch
import triton
import triton.language as tl

from compare import worker

CONFIGS = [triton.Config({"BLOCK": 16}, num_warps=1), triton.Config({"BLOCK": 32}, num_warps=2)]


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)


@pytest.fixture(autouse=True)
def no_choice_made():
    """Each test starts and ends with the kernel's autotuner holding no choice."""
    scale_kernel.cache.clear()
    yield
    scale_kernel.cache.clear()


def test_each_tuning_key_is_listed_with_its_parameters_dtypes_and_the_config_it_got():
    timings = iter([[2.0] * 3, [1.0] * 3, [1.0] * 3, [2.0] * 3])  # n = 100 gets BLOCK 32, n = 50 BLOCK 16

    def bench(call, quantiles=None, **_):
        call()
        return next(timings)

    scale_kernel.do_bench = bench
    for n, dtype in ((100, torch.float32), (50, torch.float16)):
        x = torch.ones(n, dtype=dtype)
        y = torch.empty_like(x)
        scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
        assert torch.equal(y, 2 * x)
    picks = worker.autotune_picks(scale_kernel)
    assert len(picks) == 2
    assert picks[0].startswith("n=100, torch.float32: BLOCK: 32, num_warps: 2")
    assert picks[1].startswith("n=50, torch.float16: BLOCK: 16, num_warps: 1")


def test_a_kernel_that_does_not_autotune_has_no_picks():
    assert worker.autotune_picks(scale_kernel.fn) == []


def tuned_row(x):
    y = torch.empty_like(x)
    scale_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
    return y


def plain_row(x):
    y = torch.empty_like(x)
    scale_kernel.fn[(triton.cdiv(x.numel(), 32),)](x, y, x.numel(), BLOCK=32)  # the kernel itself, not tuned
    return y


def failing_row(x):
    raise ValueError("this row takes no such input")


@pytest.fixture
def timed_launches(monkeypatch):
    """The autotuner's timing replaced by one that launches and reports BLOCK 32 faster; the launches it timed."""
    launches = []

    def bench(call, quantiles=None, **_):
        call()
        launches.append(call)
        return [2.0] * 3 if len(launches) % 2 else [1.0] * 3

    scale_kernel.do_bench = bench  # an instance entry over Triton's cached property (its getter needs a GPU)
    return launches


def test_an_autotuned_row_is_compiled_untimed_and_its_choice_is_left_to_the_timed_call(monkeypatch, timed_launches):
    monkeypatch.setitem(worker._row, "fn", tuned_row)
    x = torch.arange(100, dtype=torch.float32)
    choice_left, seconds = worker.compile_case((x,))
    assert choice_left and seconds >= 0
    assert timed_launches == [] and scale_kernel.cache == {}  # launched untimed, nothing kept
    assert scale_kernel.do_bench.__name__ == "bench"  # the autotuner's own timing restored
    assert torch.equal(tuned_row(x), 2 * x)  # the call after it times both configurations and keeps the faster
    assert len(timed_launches) == 2 and list(scale_kernel.cache.values())[0].kwargs == {"BLOCK": 32}
    # Once chosen, a first call made again at that key leaves nothing to time: no section alone.
    assert worker.compile_case((x,))[0] is False
    assert len(scale_kernel.cache) == 1 and len(timed_launches) == 2


def test_a_row_without_an_autotuned_kernel_or_that_raises(monkeypatch):
    x = torch.arange(100, dtype=torch.float32)
    monkeypatch.setitem(worker._row, "fn", plain_row)
    assert worker.compile_case((x,))[0] is False
    monkeypatch.setitem(worker._row, "fn", failing_row)
    assert worker.compile_case((x,))[0] is True  # the case runs as before, alone, and its error is judged there


def test_triton_disk_cache_of_autotuning_is_read_and_never_written_inside(monkeypatch, tmp_path):
    from triton.runtime import autotuner

    monkeypatch.setattr(autotuner, "get_cache_manager", lambda key: _manager(tmp_path, key))
    autotuner.get_cache_manager("earlier").put('{"configs_timings": []}', "kernel.autotune.json", binary=False)
    original = autotuner.get_cache_manager
    with worker._untimed_autotuning():
        inside = autotuner.get_cache_manager("earlier")
        assert inside.get_file("kernel.autotune.json")  # a choice tuned in an earlier run is read
        inside.put("{}", "other.autotune.json", binary=False)
        autotuner.get_cache_manager("new key").put("{}", "kernel.autotune.json", binary=False)
    assert autotuner.get_cache_manager is original
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json"))
    assert written == ["earlier/kernel.autotune.json"]


def _manager(base, key):
    """A minimal cache manager of Triton's kind in a folder of the test's."""

    class Manager:
        def get_file(self, name):
            path = base / key / name
            return str(path) if path.exists() else None

        def put(self, data, name, binary=True):
            (base / key).mkdir(parents=True, exist_ok=True)
            (base / key / name).write_text(data)
            return str(base / key / name)

    return Manager()


def test_a_choice_made_at_an_untimed_shape_is_used_there_and_never_by_a_timed_call(timed_launches, monkeypatch):
    """compare.worker.tuned_apart: at a shape no timed cell uses, a row's first call may autotune beside other rows'
    checks, so its choice stays with such shapes: back for the next call there, out of the autotuner's memory
    between them, and a timed call at the same key tunes with the GPU alone as if it had never been made."""
    monkeypatch.setattr(worker, "_chosen_apart", {})
    x = torch.arange(100, dtype=torch.float32)
    with worker.tuned_apart():
        assert torch.equal(tuned_row(x), 2 * x)
        assert len(timed_launches) == 2 and len(scale_kernel.cache) == 1  # tuned, and used inside
    assert scale_kernel.cache == {}  # nothing left for a timed call to start from
    [pick] = worker.autotune_picks(scale_kernel)
    assert pick.startswith("n=100, torch.float32: BLOCK: 32") and pick.endswith("(untimed shape)")
    with worker.tuned_apart():
        tuned_row(x)
    assert len(timed_launches) == 2  # the choice came back: no tuning again at the untimed shape
    tuned_row(x)  # a timed shape at the same key: tuned anew
    assert len(timed_launches) == 4 and len(scale_kernel.cache) == 1
    timed_choice = dict(scale_kernel.cache)
    with worker.tuned_apart():
        tuned_row(x)  # a choice made at a timed shape stands where both share a key
        tuned_row(torch.arange(50, dtype=torch.float32))  # another key, untimed: tuned, and taken out after
    assert len(timed_launches) == 6 and scale_kernel.cache == timed_choice
    picks = worker.autotune_picks(scale_kernel)
    assert [p.startswith("n=50,") and p.endswith("(untimed shape)") for p in picks].count(True) == 1
    assert [p.endswith("(untimed shape)") for p in picks].count(False) == 1  # the timed shape's choice, n=100


def test_inside_tuned_apart_triton_disk_cache_of_autotuning_has_keys_of_its_own(monkeypatch, tmp_path):
    from triton.runtime import autotuner

    monkeypatch.setattr(autotuner, "get_cache_manager", lambda key: _manager(tmp_path, key))
    original = autotuner.get_cache_manager
    original("timed").put("{}", "kernel.autotune.json", binary=False)
    with worker.tuned_apart():
        inside = autotuner.get_cache_manager("timed")
        assert inside.get_file("kernel.autotune.json") is None  # a timed shape's choice is not read here
        inside.put("{}", "kernel.autotune.json", binary=False)
        assert autotuner.get_cache_manager("timed").get_file("kernel.autotune.json")  # its own, read back
    assert autotuner.get_cache_manager is original
    assert len(list(tmp_path.rglob("*.json"))) == 2 and original("timed").get_file("kernel.autotune.json")


class _InductorKernel:
    """What compare.worker needs of a kernel inductor compiled (torch._inductor.runtime.triton_heuristics'
    CachingAutotuner): its run's dispatch as in torch 2.14, which times its candidates (autotune_to_one_config)
    while it has more than one, then launches the one left and keeps that launch for the calls after."""

    def __init__(self, *candidates):
        self.launchers, self._cached_launcher, self.timed = list(candidates), None, 0

    def run(self, x):
        from torch._inductor.runtime import triton_heuristics

        if self._cached_launcher is not None:
            return self._cached_launcher(x)
        if len(self.launchers) > 1:
            triton_heuristics.CachingAutotuner.autotune_to_one_config(self)
        (launcher,) = self.launchers
        self._cached_launcher = launcher
        return launcher(x)


def _timing_kernel_choice(kernel):
    """An autotune_to_one_config that 'times' the candidates and keeps the last (no GPU needed)."""
    kernel.timed += 1
    kernel.launchers = kernel.launchers[-1:]


def test_a_torch_compile_row_s_inductor_tuning_is_left_to_the_call_after_its_first(monkeypatch):
    from torch._inductor.runtime import triton_heuristics

    from compare.discover import Impl

    monkeypatch.setattr(triton_heuristics.CachingAutotuner, "autotune_to_one_config", _timing_kernel_choice)
    first, fastest = (lambda x: x + 1), (lambda x: x + 1.0)
    kernel = _InductorKernel(first, fastest)
    monkeypatch.setitem(worker._row, "impl", Impl("gelu", "torch", "compile", None))
    monkeypatch.setitem(worker._row, "fn", kernel.run)
    x = torch.arange(100, dtype=torch.float32)
    choice_left, seconds = worker.compile_case((x,))
    assert choice_left and seconds >= 0
    assert kernel.timed == 0 and kernel.launchers == [first, fastest] and kernel._cached_launcher is None
    assert triton_heuristics.CachingAutotuner.autotune_to_one_config is _timing_kernel_choice  # restored
    assert torch.equal(kernel.run(x), x + 1)  # the next call times the candidates and keeps its choice
    assert kernel.timed == 1 and kernel.launchers == [fastest] and kernel._cached_launcher is fastest
    # A kernel with one candidate (inductor's heuristics, or its cache of tuning results) leaves nothing to time.
    monkeypatch.setitem(worker._row, "fn", _InductorKernel(first).run)
    assert worker.compile_case((x,))[0] is False
    # A Triton row's first call leaves inductor's kernels as they are (it does not import inductor to patch it).
    monkeypatch.setitem(worker._row, "impl", Impl("gelu", "triton", "basic", None))
    kernel = _InductorKernel(first, fastest)
    monkeypatch.setitem(worker._row, "fn", kernel.run)
    assert worker.compile_case((x,))[0] is False and kernel.timed == 1


@pytest.mark.gpu
def test_a_torch_compile_row_s_first_call_beside_others_leaves_inductor_s_timing_to_the_next_call(monkeypatch):
    """A real compiled function whose kernel has several candidates (max_autotune_pointwise gives a pointwise kernel
    several, timed on its first call) and no tuning result cached: compile_case runs it untimed and reports a choice
    left; the next call times it, and a first call made again finds nothing to time."""
    from torch._inductor import config

    from compare.discover import Impl

    with config.patch(max_autotune_pointwise=True, autotune_local_cache=False, autotune_remote_cache=False,
                      fx_graph_cache=False):
        fn = torch.compile(lambda x: x * 2.0 + 1.0, dynamic=False)
        monkeypatch.setitem(worker._row, "impl", Impl("gelu", "torch", "compile", None))
        monkeypatch.setitem(worker._row, "fn", fn)
        x = torch.randn(1 << 20, device="cuda")
        assert worker.compile_case((x,))[0] is True
        assert torch.equal(fn(x), x * 2.0 + 1.0)
        assert worker.compile_case((x,))[0] is False
