"""Planted wrong kernels: every deliberately wrong implementation in tests/planted/ (Triton and CUDA) must be
rejected by the checker, with a message that names what is wrong; a case whose reference can't tell right from
trivial must be refused; and a run with crashing, hanging, raising and non-compiling rows must still report every
other row.

The Triton patterns run everywhere (under the interpreter without a GPU, on tiny shapes); the CUDA ones need a GPU
(marked gpu) except for the test that the planted .cu builds. Each pattern is fed the cases `python -m compare`
feeds a row, in the same order and with the same seeds (see cases() below), so "caught here" means "caught by a
real run".
"""
import dataclasses
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from compare import build, check, discover, env, layouts, schedule
from compare.spec import Op, Tolerance

PLANTED = Path(__file__).parent / "planted"
GPU = torch.cuda.is_available()
DEVICE = torch.device("cuda" if GPU else "cpu")
SEED = 0  # the CLI's default base seed: the same inputs a default run checks


def _load_planted_triton():
    if str(PLANTED) not in sys.path:  # its neighbour gelu_math.py, as compare.discover loads planted files
        sys.path.append(str(PLANTED))
    spec = importlib.util.spec_from_file_location("planted_triton", PLANTED / "planted_triton.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Triton's JIT looks kernels' globals up through their module
    spec.loader.exec_module(module)
    return module


planted_triton = _load_planted_triton()

# The checker's words for each hazard (compare/check.py). Output that is never written reads back as NaN on the GPU,
# where the checker fills the allocator's free memory with NaN first; the CPU allocator can't be poisoned, so under
# the interpreter unwritten memory holds whatever was there before: NaN or any wrong value.
NAN = "NaN"
OUTSIDE = "outside atol"
MODIFIED = "modified"
NON_FINITE = "non-finite reference"  # a finite output where the reference is inf or NaN (the special inputs)
UNWRITTEN = (NAN,) if GPU else (NAN, OUTSIDE)
EXPECT = {
    "gelu_unwritten": UNWRITTEN,
    "gelu_zeros": (OUTSIDE, NON_FINITE),
    "gelu_returns_input": (OUTSIDE, NON_FINITE),
    "gelu_in_place": (MODIFIED,),
    "gelu_tail_unwritten": UNWRITTEN,
    "gelu_off_by_one": UNWRITTEN,
    # The checker's non-contiguous view is every other element of a NaN-filled buffer: reading it as contiguous
    # memory picks up the NaN gaps (and wrong values).
    "gelu_wrong_stride": (NAN, OUTSIDE),
    "gelu_low_precision": (OUTSIDE,),
    "gelu_textbook_tanh": (NAN,),
    "gelu_cached": (OUTSIDE, NON_FINITE),
    "softmax_half_rows": UNWRITTEN,
    "softmax_no_max": (NAN,),
    "softmax_wrong_stride": (NAN, OUTSIDE),
    "softmax_cached": (OUTSIDE, NON_FINITE),
    "softmax_race": (OUTSIDE,),
}
# Hazards that only some input sets can show: the failures must all be on those (a layout of compare.layouts, a
# special input set).
LAYOUT = "a non-contiguous layout"
EXPECT_INPUTS = {
    "gelu_wrong_stride": LAYOUT,
    "softmax_wrong_stride": LAYOUT,
    "softmax_no_max": ("large magnitudes", "range edges", "inf and nan"),  # exp overflows; a +inf row: inf/inf
}
OPS = {name: discover.load_op(name) for name in ("gelu", "softmax")}
PLANTED_CU = PLANTED / "planted.cu"
CUDA_PATTERNS = re.findall(r'\bm\.def\(\s*"(\w+)\s*\(', PLANTED_CU.read_text())


def cases(op: Op, name: str):
    """The cases compare.runner gives a row, from its own schedule (compare.schedule), in its order and with its seeds:
    the checks before timing and the fresh-input checks after it (the planted rows are not timed here)."""
    dtypes = list(op.dtypes) if GPU else [d for d in op.dtypes if d in (torch.float32, torch.float16)]
    return (schedule.check_cases(op, name, dtypes, GPU, [], SEED)
            + schedule.recheck_cases(op, name, dtypes, GPU, [], SEED))


def judge(op: Op, name: str, fn) -> list:
    """Every case, called and judged as a run would (in this process: compare.check.run_case_in_process); the
    results. On the GPU stop at the first failure: the shapes are large, and the first failure's message is what is
    asserted."""
    results = []
    for case in cases(op, name):
        r = check.run_case_in_process(op, name, fn, case, DEVICE)
        results.append(r)
        _log(name, r)
        if GPU and r.status == "FAIL":
            break
    return results


def describe(results) -> str:
    return "\n".join(f"{r.status:10} {r.dtype} {r.shape} ({r.inputs}, seed {r.seed}): {r.message[:150]}"
                     for r in results if not r.ok) or "every case passed"


def _log(name, r):
    """With PLANTED_LOG=path, every check result is appended there as a JSON line (for reading a GPU run later)."""
    path = os.environ.get("PLANTED_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"pattern": name, **dataclasses.asdict(r)}) + "\n")


def assert_caught(name: str, results, expect, inputs=None) -> None:
    failed = [r for r in results if r.status == "FAIL"]
    assert failed, f"{name} was not caught:\n{describe(results)}"
    # The first failure must say what is wrong, in the checker's words for this hazard, and no failure may be for an
    # unrelated reason (a shape or dtype slip in the planted code would otherwise count as a catch).
    assert any(word in failed[0].message for word in expect), \
        f"{name}: first failure doesn't say {' or '.join(expect)!r}:\n{describe(results)}"
    stray = [r for r in failed if not any(word in r.message for word in expect)]
    assert not stray, f"{name}: failures for another reason than {expect}:\n{describe(results)}"
    # Where only one input set can show the hazard, the failure must be on it (the report names the input set).
    if inputs == LAYOUT:
        assert all(any(name in r.inputs for name in layouts.LAYOUTS) for r in failed), describe(results)
    elif inputs:
        assert {r.inputs for r in failed} <= set(inputs), describe(results)


def test_every_pattern_has_an_expected_message_and_there_are_enough():
    assert set(planted_triton.PATTERNS) == set(EXPECT)
    assert set(CUDA_PATTERNS) == set(EXPECT), "planted.cu and EXPECT must list the same patterns"
    assert len(EXPECT) >= 10


# ---- Triton ------------------------------------------------------------------------------------------------------
TRITON_CPU_SKIPS = {
    # The interpreter runs a grid's programs one after another, so programs can't race: the race is GPU-only.
    # test_race_pattern_is_right_when_programs_run_one_at_a_time shows its only bug is the race.
    "softmax_race": "the interpreter runs programs one at a time: no race to catch without a GPU",
}


@pytest.mark.parametrize("name", list(planted_triton.PATTERNS))
def test_triton_pattern_is_caught(name):
    if not GPU and name in TRITON_CPU_SKIPS:
        pytest.skip(TRITON_CPU_SKIPS[name])
    op_name, fn = planted_triton.PATTERNS[name]
    assert_caught(f"triton {name}", judge(OPS[op_name], f"triton:{name}", fn), EXPECT[name],
                  EXPECT_INPUTS.get(name))


# Controls: the patterns whose bug shows only on some inputs are right on the others, so a catch above is a catch of
# the planted bug, not of some other slip in the planted code. One call each, judged directly: the cached patterns
# are right on the first call at a shape they have not seen.
CONTROL_SHAPES = {"gelu": (1031,), "softmax": (6, 129)}


def _control(name, shape=None, seed=12345):
    op_name, fn = planted_triton.PATTERNS[name]
    op = OPS[op_name]
    shape = shape or CONTROL_SHAPES[op_name]
    (x,) = check.make_inputs(op, shape, torch.float32, DEVICE, seed)
    return check.compare(fn(x.clone()), op.reference(x.double()), op.tolerance(torch.float32, shape), torch.float32)


@pytest.mark.parametrize("name", ["gelu_wrong_stride", "softmax_wrong_stride", "gelu_cached", "softmax_cached",
                                  "softmax_no_max"])
def test_triton_pattern_is_right_where_its_hazard_is_absent(name):
    ok, message, _ = _control(name)  # contiguous, random, N(0, 1)-sized softmax inputs, a shape not seen before
    assert ok, message


def test_textbook_tanh_pattern_fails_exactly_where_e_to_the_2u_overflows():
    fn = planted_triton.gelu_textbook_tanh
    tol = OPS["gelu"].tolerance(torch.float32, (1,))
    x = torch.linspace(-9.9, 9.9, 4001, device=DEVICE)  # u < 44.4: e^2u finite
    ok, message, _ = check.compare(fn(x), OPS["gelu"].reference(x.double()), tol, torch.float32)
    assert ok, message
    y = fn(torch.tensor([10.2, 12.0, 30.0], device=DEVICE))  # u > 44.4: inf / inf
    assert bool(torch.isnan(y).all()), y


@pytest.mark.skipif(GPU, reason="on a GPU the programs run concurrently and race")
def test_race_pattern_is_right_when_programs_run_one_at_a_time():
    for shape in ((5, 127), (4, 300), (2, 5000)):  # 1, 2 and 20 programs per row (256 columns each)
        ok, message, _ = _control("softmax_race", shape, seed=SEED)
        assert ok, f"{shape}: {message}"


# ---- CUDA -------------------------------------------------------------------------------------------------------
def _build_planted():
    return build.build("planted", path=PLANTED_CU, progress=False)


@pytest.fixture(scope="module")
def planted_cuda():
    if not env.nvcc_path():
        pytest.skip("needs the CUDA toolkit (nvcc)")
    _build_planted()
    return torch.ops.lab_planted


def test_planted_cu_builds(planted_cuda):
    result = _build_planted()
    assert result.kernels and all(k.registers > 0 for k in result.kernels)
    # Every launcher's kernels were compiled (ptxas lists each instantiation).
    names = " ".join(k.kernel for k in result.kernels)
    for kernel in ("gelu_full_blocks_kernel", "gelu_textbook_tanh_kernel", "softmax_racy_sum_kernel",
                   "softmax_no_max_kernel"):
        assert kernel in names
    for name in CUDA_PATTERNS:
        assert callable(getattr(planted_cuda, name))


@pytest.mark.gpu
@pytest.mark.parametrize("name", CUDA_PATTERNS)
def test_cuda_pattern_is_caught(planted_cuda, name):
    op = OPS[name.split("_")[0]]
    assert_caught(f"cuda {name}", judge(op, f"cuda:{name}", getattr(planted_cuda, name)), EXPECT[name],
                  EXPECT_INPUTS.get(name))


def test_without_a_gpu_a_judged_call_gets_nan_wherever_its_output_lands_and_the_settings_come_back():
    """compare.worker.uninitialized_cpu_memory_poisoned: an output allocated and never written, right after a
    correct answer of the same size was freed (the block the C library is likeliest to hand out again), reads NaN;
    deterministic algorithms and the fill setting are as they were afterwards."""
    from compare import worker

    before = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
              torch.utils.deterministic.fill_uninitialized_memory)
    x = torch.randn(4099)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        xt = x.to(dtype)
        for _ in range(20):
            answer = torch.nn.functional.gelu(xt)
            del answer
            with worker.uninitialized_cpu_memory_poisoned(torch.device("cpu")):
                out = torch.empty_like(xt)
            assert torch.isnan(out).all(), f"{dtype}: {int((~torch.isnan(out)).sum())} of {out.numel()} not NaN"
    assert (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
            torch.utils.deterministic.fill_uninitialized_memory) == before


# ---- Unwritten output right after a correct row on the same inputs ----------------------------------------------
# compare.runner gives every row inputs of its own (the row's name is in the seeds) and a worker process of its own,
# so a row never meets memory holding another row's answer to its inputs. This is the worst case without those
# defences: a row that never writes its output, called in the same process right after a correct row on the very
# same inputs, where the allocator may hand it the block still holding that answer. Poisoning free memory before
# each judged call, and scrubbing nothing else, must still show it. Whether the stale block is reused depends on the
# allocator, so the sequence is repeated over many cases: one escape fails.
STALE_ROUNDS = 3 if GPU else 50


@pytest.mark.parametrize("backend", ["triton", "cuda"])
def test_unwritten_output_is_caught_right_after_a_correct_row_on_the_same_inputs(backend, request):
    op = OPS["gelu"]
    if backend == "cuda":
        if not GPU:
            pytest.skip("needs a CUDA GPU")
        unwritten = request.getfixturevalue("planted_cuda").gelu_unwritten
    else:
        unwritten = planted_triton.gelu_unwritten
    escaped, total = [], 0
    for seed in range(SEED, SEED + STALE_ROUNDS):
        for case in schedule.check_cases(op, "row", [torch.float32, torch.float16], GPU, [], seed):
            if case.inputs != "random" or case.layout:
                continue
            good = check.run_case_in_process(op, "torch:eager", op.torch_eager, case, DEVICE)
            if good.status == "degenerate":  # e.g. gelu of one very negative x: nothing to judge either way
                continue
            assert good.ok, good.message
            bad = check.run_case_in_process(op, f"{backend}:gelu_unwritten", unwritten, case, DEVICE)
            _log(f"{backend}:gelu_unwritten after torch:eager", bad)
            if bad.status == "degenerate":  # refused, not passed (if rows ever get inputs of their own)
                continue
            total += 1
            if bad.status != "FAIL" or not any(word in bad.message for word in UNWRITTEN):
                escaped.append(f"{bad.dtype} {bad.shape} seed {seed}: {bad.status}: {bad.message[:120]}")
    assert not escaped, (f"{len(escaped)} of {total} unwritten outputs right after a correct row on the same inputs "
                         f"were not reported as unwritten:\n" + "\n".join(escaped))


# ---- Degenerate cases are refused, not passed ----------------------------------------------------------------------
def _op_with_reference(reference, tol=Tolerance(atol=1e-6, rtol=1e-5)):
    def make_inputs(shape, dtype, device, generator):
        return (torch.randn(shape, device=device, generator=generator, dtype=torch.float32).to(dtype),)

    return Op(name="degenerate", summary="", make_inputs=make_inputs, reference=reference,
              torch_eager=lambda x: reference(x.double()).to(x.dtype), bytes_moved=lambda s, d: 0, flops=lambda s: 0,
              check_shapes=[(1000,)], bench_shapes=[(1000,)], dtypes=(torch.float32,),
              tolerances={torch.float32: tol})


def _exact(op):
    return lambda x: op.reference(x.double()).to(x.dtype)


def test_nearly_all_zeros_reference_is_refused():
    op = _op_with_reference(lambda x: x * 1e-9)  # |ref| ~ 3e-9, far below atol = 1e-6
    for fn in (_exact(op), torch.zeros_like):  # the exact answer and the trivial one get the same verdict
        r = check.check_case(op, "x", fn, torch.float32, (1000,), DEVICE, SEED)
        assert (r.ok, r.status) == (False, "degenerate"), r.message
        assert "refused" in r.message and "all-zeros" in r.message


def test_nearly_constant_reference_is_refused():
    op = _op_with_reference(lambda x: 3.0 + x * 1e-9)  # every value within atol + rtol·3 of the median
    for fn in (_exact(op), lambda x: torch.full_like(x, 3.0)):
        r = check.check_case(op, "x", fn, torch.float32, (1000,), DEVICE, SEED)
        assert (r.ok, r.status) == (False, "degenerate"), r.message
        assert "refused" in r.message and "constant" in r.message


def test_a_reference_that_can_fail_is_judged():
    # Control for the two above: same machinery, a reference with spread: the exact answer passes, zeros fail.
    op = _op_with_reference(lambda x: 3.0 + x)
    assert check.check_case(op, "x", _exact(op), torch.float32, (1000,), DEVICE, SEED).status == "ok"
    r = check.check_case(op, "x", torch.zeros_like, torch.float32, (1000,), DEVICE, SEED)
    assert r.status == "FAIL" and OUTSIDE in r.message


# ---- A run with broken rows finishes, reports each, and fails -------------------------------------------------------
# Appended to the copy's triton_src/gelu.py. "python": a segfault and an endless loop in the wrapper, which any
# machine can run. "kernel": the GPU versions, a Triton store 4 TB past the output (an illegal memory access, which
# poisons the process's CUDA context) and a Triton kernel spinning on a flag nobody sets (a device hang).
BROKEN_ROWS = {
    "python": '''
import ctypes as _planted_ctypes


@variant("planted_crash")
def planted_crash(x):
    _planted_ctypes.string_at(0)  # reads address 0: SIGSEGV


@variant("planted_hang")
def planted_hang(x):
    while True:
        pass
''',
    "kernel": '''
@triton.jit
def _planted_wild_store_kernel(y_ptr):
    tl.store(y_ptr + (1 << 40), 1.0)  # 2^40 elements past the output: an illegal address


@variant("planted_crash")
def planted_crash(x):
    y = torch.empty_like(x)
    _planted_wild_store_kernel[(1,)](y)
    return y


@triton.jit
def _planted_spin_kernel(flag_ptr):
    i = tl.program_id(0)
    while tl.load(flag_ptr, volatile=True) == 0:  # the flag is never set
        i += 1
    tl.store(flag_ptr, i)


@variant("planted_hang")
def planted_hang(x):
    flag = torch.zeros(1, dtype=torch.int32, device=x.device)
    _planted_spin_kernel[(1,)](flag)
    return x
''',
}
RAISES = '''

@variant("planted_raise")
def planted_raise(x):
    raise RuntimeError("planted: this implementation always raises")
'''
BROKEN_LINE = "  const int planted_syntax_error = ;  // planted by tests/test_planted.py\n"


def _copy_repo(root: Path) -> None:
    for folder in ("compare", "specs", "cuda_src", "triton_src"):
        shutil.copytree(env.ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))


def _break_a_cuda_op(root: Path) -> tuple[str, str, int]:
    """Put a syntax error into a kernel of cuda_src/add.cu (or, without add, of a copy of gelu as a new op).
    Returns (op name, source path as the report shows it, line of the error)."""
    name = "add" if (root / "cuda_src" / "add.cu").exists() and (root / "specs" / "add.py").exists() else None
    if name is None:
        name = "gelu_broken"
        spec = (root / "specs" / "gelu.py").read_text().replace('name="gelu"', 'name="gelu_broken"')
        (root / "specs" / "gelu_broken.py").write_text(spec)
        (root / "cuda_src" / "gelu_broken.cu").write_text(
            (root / "cuda_src" / "gelu.cu").read_text().replace("lab_gelu", "lab_gelu_broken"))
    path = root / "cuda_src" / f"{name}.cu"
    lines = path.read_text().splitlines(keepends=True)
    # Inside the first kernel's body: after the line that computes the thread's index.
    at = next(i for i, line in enumerate(lines) if "threadIdx.x" in line and "=" in line) + 1
    lines.insert(at, BROKEN_LINE)
    path.write_text("".join(lines))
    return name, f"cuda_src/{name}.cu", at + 1


def _add_to_version_map(path: Path, variants: list[str]) -> None:
    """List rows planted in a copy of a kernel file as further steps of its version map (compare/ladder.py), as
    their author would: a file whose rows and map disagree is refused before anything runs."""
    from compare import ladder

    steps = ladder.version_map(path)
    lines = path.read_text().splitlines(keepends=True)
    end = steps[-1].line  # 1-based line of the last step; its continuation lines follow, then a blank line
    while lines[end].strip():
        end += 1
    new = [f"  v{steps[-1].number + n + 1} {v}   planted: see tests/test_planted.py\n" for n, v in enumerate(variants)]
    path.write_text("".join(lines[:end] + new + lines[end:]))


def _run_broken(tmp_path: Path, kind: str, extra_args=()):
    root = tmp_path / "repo"
    _copy_repo(root)
    planted = BROKEN_ROWS[kind] + RAISES
    with open(root / "triton_src" / "gelu.py", "a") as f:
        f.write("\n" + planted)
    _add_to_version_map(root / "triton_src" / "gelu.py", re.findall(r'@variant\("(\w+)"\)', planted))
    other, source, line = _break_a_cuda_op(root)
    out = tmp_path / "results"
    environ = dict(os.environ, LAB_CACHE_DIR=str(tmp_path / "cache"))  # a throwaway build cache
    proc = subprocess.run([sys.executable, "-m", "compare", "gelu", other, "--no-time", "--no-capture",
                           "--row-timeout", "30", "--out", str(out), *extra_args],
                          cwd=root, env=environ, capture_output=True, text=True, timeout=900)
    return proc, out, other, source, line


def _assert_broken_run(proc, out, other, source, line, crash_words):
    log = proc.stdout[-4000:] + "\n--- stderr ---\n" + proc.stderr[-4000:]
    # Exit status 1 from failed rows, not from a traceback (which also exits 1): the run reached its summary and
    # wrote both ops' results.
    assert proc.returncode == 1 and "FAILED:" in proc.stderr and "Traceback" not in proc.stderr, log
    for op in ("gelu", other):
        assert (out / f"{op}.json").exists(), log
    rows = {}
    for op in ("gelu", other):
        data = json.loads((out / f"{op}.json").read_text())  # written: the run finished
        rows.update({(op, r["impl"]): r for r in data["rows"]})
    status = {key: r["status"] for key, r in rows.items()}
    planted = {("gelu", "triton:planted_crash"): "crashed", ("gelu", "triton:planted_hang"): "timed out",
               ("gelu", "triton:planted_raise"): "error"}
    for key, want in planted.items():
        assert status[key] == want, f"{key}: {rows[key]}\n{log}"
    assert any(w in rows[("gelu", "triton:planted_crash")]["message"] for w in crash_words), rows
    assert "no progress for 30 s" in rows[("gelu", "triton:planted_hang")]["message"]
    assert "planted: this implementation always raises" in rows[("gelu", "triton:planted_raise")]["message"]

    # The broken .cu: every CUDA row of that op says so, with the compiler's message at the planted line.
    broken = {key: r for key, r in rows.items() if key[0] == other and key[1].startswith("cuda:")}
    assert broken, rows
    for key, r in broken.items():
        assert r["status"] == "build failed", (key, r)
        if env.nvcc_path():
            assert f"{source}:{line}:" in r["message"] and "error" in r["message"], r["message"]

    # Every other row is reported and healthy.
    allowed = {"ok", "skipped"} if GPU else {"ok", "built (needs GPU to run)", "needs GPU"}
    others = {key: s for key, s in status.items() if key not in planted and key not in broken}
    assert {key for key in others if key[0] == other}, "no healthy row of the broken op was reported"
    for key, s in others.items():
        if not env.nvcc_path() and key[1].startswith("cuda:"):
            assert s == "build failed" and "nvcc" in rows[key]["message"]
            continue
        assert s in allowed, f"{key}: {rows[key]}\n{log}"
    # A crashed and a killed worker: the rows after each ran in a fresh one.
    assert json.loads((out / "gelu.json").read_text())["isolation"]["worker_starts"] >= 3

    # The terminal says the same: the failed rows are listed, and the compiler's message is shown.
    for (op, impl), want in [*planted.items(), *(((k, "build failed") for k in broken))]:
        assert f"{op} {impl}: {want}" in proc.stderr, log
    if env.nvcc_path():
        assert f"{source}:{line}:" in proc.stdout, log


# On a GPU a row with an illegal memory access doesn't kill its worker: compare.isolate._serve returns the row's
# result ("crashed: CUDA context lost"), then closes its pipe and exits. The row after it must still run in a fresh
# worker. lost_context_worker makes every call look like such a row, on any machine.
def test_rows_after_a_row_that_lost_the_cuda_context_run_in_a_fresh_worker(monkeypatch):
    from compare import isolate

    monkeypatch.syspath_prepend(str(PLANTED))  # spawned workers import the serving function by module name
    import lost_context_worker

    monkeypatch.setattr(isolate, "_serve", lost_context_worker.serve_with_lost_context)
    answers = []
    with isolate.Worker(row_timeout_s=60) as worker:
        for _ in range(3):  # three rows, each of which leaves its worker's CUDA context lost
            try:
                answers.append(worker.call("cuda_context_healthy"))
            except Exception as exc:  # e.g. BrokenPipeError: the call was sent to the exiting worker
                pytest.fail(f"row {len(answers) + 1} (after a row that lost the CUDA context) was not run: "
                            f"{type(exc).__name__}: {exc}; a real run aborts here with a traceback and no results")
        assert answers == [False, False, False] and worker.starts == 3


# An illegal memory access usually surfaces as an exception from the row's own call (the next synchronizing
# operation raises it), in the same reply that says the context is lost. The row must end there as crashed: its
# worker is gone with the row loaded in it, and a fresh worker's answers would belong to no row.
def test_a_row_that_raises_and_loses_the_cuda_context_ends_as_crashed(monkeypatch):
    from compare import isolate, runner

    monkeypatch.syspath_prepend(str(PLANTED))
    import lost_context_worker

    monkeypatch.setattr(isolate, "_serve", lost_context_worker.serve_with_lost_context)
    impl = discover.Impl("gelu", "triton", "basic", PLANTED.parent.parent / "triton_src" / "gelu.py")
    with isolate.Worker(row_timeout_s=60) as worker:
        with pytest.raises(runner._RowStopped) as stopped:
            runner._call(worker, impl, "triton_resources", context=" in a test")  # no row loaded: it raises
    assert stopped.value.status.status == "crashed"
    assert "CUDA context lost in a test" in stopped.value.status.message and "KeyError" in stopped.value.status.message


@pytest.mark.slow
def test_run_with_crashing_hanging_raising_and_uncompilable_rows_reports_every_other_row(tmp_path):
    proc, out, other, source, line = _run_broken(tmp_path, "python")
    _assert_broken_run(proc, out, other, source, line, crash_words=("SIGSEGV", "died"))


@pytest.mark.gpu
@pytest.mark.slow
def test_run_with_illegal_memory_access_and_device_hang_reports_every_other_row(tmp_path):
    # float32 only and no torch.compile rows (a dozen inductor compiles): the point is the broken rows, and a GPU
    # run checks every shape of every row.
    proc, out, other, source, line = _run_broken(tmp_path, "kernel",
                                                 ("--dtypes", "float32", "--impls", "cuda,triton,torch:eager"))
    _assert_broken_run(proc, out, other, source, line, crash_words=("illegal memory access", "died"))
