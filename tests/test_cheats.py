"""Rows that cheat, run as `python -m compare` runs a row: through compare.runner, in a worker process of their own,
on the schedule of compare.schedule, judged in this (the parent) process. Each must end FAIL (or, for a row calling
torch's kernels, be flagged), in the words that name what it did. The rows are in tests/planted/cheats_triton.py,
which this process never imports (one of them rewrites the judge when imported: it must only reach its worker's
copy).

Where the interpreter allows it the pattern runs in CI (no GPU); the ones that need the GPU (timing, the profiler,
sizes too large for the interpreter, bf16) are marked gpu.
"""
import ast
from pathlib import Path

import pytest
import torch

from compare import discover, env, runner

GPU = torch.cuda.is_available()
CHEATS = Path(__file__).parent / "planted" / "cheats_triton.py"


def run_cheat(name: str, **options):
    op = discover.load_op(name.split("_")[0])
    impl = discover.Impl(op.name, "triton", name, CHEATS, needs_gpu=False)
    settings = dict(capture=False, progress=False, dtypes=["float32"], quick=True)
    settings.update(options)
    result = runner.run_op(op, runner.Options(**settings), impls=[impl])
    (row,) = result.rows
    return row, result


def failed_with(name: str, words: tuple[str, ...], **options):
    row, result = run_cheat(name, **options)
    assert row.status == "FAIL", f"{name} was not caught: {row.status}: {row.message}"
    assert any(w in row.message for w in words), f"{name}: {row.message}"
    return row, result


def test_every_cheat_is_a_discovered_row():
    assert set(discover.python_variants(CHEATS)) == {
        "gelu_wrong_when_large", "gelu_cached_by_input", "gelu_skips_timed_calls", "gelu_side_stream",
        "gelu_patches_the_judge", "gelu_reused_output", "softmax_dirty_workspace", "gelu_autotune_hides_unwritten",
        "softmax_ignores_row_stride", "gelu_clamped", "gelu_erf", "gelu_fp16_staging", "gelu_calls_torch",
        "gelu_hides_changed_inputs"}


# ---- class 2: the judge is out of the row's reach --------------------------------------------------------------
def test_a_row_that_rewrites_the_judge_in_its_process_is_still_judged():
    failed_with("gelu_patches_the_judge", ("outside",))


HARNESS_MODULES_A_ROW_MAY_IMPORT = {"spec", "validate"}


def harness_imports(path: Path) -> list[str]:
    """The compare.* modules a source file imports beyond those a row may use (compare.spec for @variant and
    compare.validate for input checks): 'file:line: compare.check'."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "compare":
            names = [f"compare.{a.name}" for a in node.names] if node.module == "compare" else [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.split(".")[0] == "compare"]
        for name in names:
            if name.split(".")[1:2] and name.split(".")[1] not in HARNESS_MODULES_A_ROW_MAY_IMPORT:
                found.append(f"{path.name}:{node.lineno}: {name}")
            elif name == "compare":
                found.append(f"{path.name}:{node.lineno}: compare")
    return found


def test_rows_import_only_the_spec_and_validate_modules_of_the_harness():
    for path in sorted(env.TRITON_DIR.glob("*.py")):
        assert harness_imports(path) == [], "rows may import compare.spec and compare.validate only"
    (found,) = harness_imports(CHEATS)  # the rule can fail: the judge-patching row breaks it
    assert found.startswith("cheats_triton.py:") and found.endswith(": compare.check"), found


# ---- class 3: state across calls -------------------------------------------------------------------------------
def test_an_output_buffer_reused_across_calls_is_caught():
    failed_with("gelu_reused_output", ("changed into call B's answer",))


def test_a_workspace_never_cleared_is_caught():
    failed_with("softmax_dirty_workspace", ("call A", "call B"))


def test_unwritten_output_hidden_by_the_autotuner_is_caught():
    failed_with("gelu_autotune_hides_unwritten", ("call A", "call B"))


# ---- class 5: inputs the old checks never gave -----------------------------------------------------------------
def test_a_kernel_ignoring_the_row_pitch_is_caught_by_the_layouts():
    row, result = failed_with("softmax_ignores_row_stride", ("outside", "NaN"))
    wrong = {c.inputs for c in result.checks if not c.ok}
    assert wrong and all("slice" in w for w in wrong), wrong  # caught on the slices, and right everywhere else


def test_a_kernel_clamping_its_input_is_caught_by_the_special_inputs():
    row, result = failed_with("gelu_clamped", ("inf", "outside"))
    assert all(c.inputs != "random" for c in result.checks if not c.ok)


# ---- class 6: a different function -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_gelu_with_erf_instead_of_tanh_fails_in_every_dtype(dtype):
    if dtype == "bfloat16" and not GPU:
        pytest.skip("the interpreter's bf16 is not trustworthy: bf16 runs on the GPU")
    failed_with("gelu_erf", ("outside",), dtypes=[dtype])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gelu_staged_through_fp16_fails(dtype):
    if dtype == "bfloat16" and not GPU:
        pytest.skip("the interpreter's bf16 is not trustworthy: bf16 runs on the GPU")
    failed_with("gelu_fp16_staging", ("outside", "inf"), dtypes=[dtype])


# ---- classes 1 and 7: timed shapes, timed calls, kernels (GPU) -------------------------------------------------
@pytest.mark.gpu
def test_a_kernel_wrong_only_at_timed_sizes_is_caught():
    row, result = failed_with("gelu_wrong_when_large", ("NaN",), sizes=[(1 << 25,)], quick=False)
    assert {c.shape for c in result.checks if not c.ok} == {str(1 << 25)}
    assert not result.timings  # a wrong kernel is not timed


@pytest.mark.gpu
def test_a_row_answering_repeated_inputs_from_a_cache_is_caught():
    failed_with("gelu_cached_by_input", ("launched no kernel", "implausible"), sizes=[(1 << 22,)], quick=False)


@pytest.mark.gpu
def test_a_row_that_skips_the_work_when_timed_is_caught():
    row, result = failed_with("gelu_skips_timed_calls", ("NaN", "outside", "implausible"), sizes=[(1 << 22,)],
                              quick=False)
    assert any(c.inputs.startswith("timed call") for c in result.checks if not c.ok) or "implausible" in row.message


@pytest.mark.gpu
def test_a_row_working_on_another_stream_is_caught():
    failed_with("gelu_side_stream", ("another stream",), sizes=[(1 << 22,)], quick=False)


@pytest.mark.gpu
def test_a_row_calling_torch_kernels_is_flagged():
    row, result = run_cheat("gelu_calls_torch", sizes=[(1 << 22,)], quick=False)
    assert row.status == "ok" and "not its own" in row.message, row
    assert all(k.foreign for k in result.kernels), result.kernels


@pytest.mark.gpu
def test_a_correct_row_is_not_flagged():
    op = discover.load_op("gelu")
    impl = next(i for i in discover.implementations(op) if i.name == "triton:tuned")
    result = runner.run_op(op, runner.Options(capture=False, progress=False, dtypes=["float32"],
                                              sizes=[(1 << 22,)]), impls=[impl])
    (row,) = result.rows
    assert row.status == "ok" and row.message == "", row
    assert result.kernels and not any(k.foreign or k.problem for k in result.kernels), result.kernels
    assert all(t.samples >= 10 for t in result.timings)
    timed = [c for c in result.checks if c.inputs.startswith("timed call")]
    assert len(timed) == 2 and all(c.ok for c in timed)


# ---- class 8: the judge's memory within reach ------------------------------------------------------------------
# Unmarked, it runs where the suite runs without a GPU (CI); marked gpu, in the GPU suite (bench/gpu_run.sh tests),
# where the inputs reach the row's worker through CUDA IPC.
@pytest.mark.parametrize("where", ["any", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_a_row_that_changes_its_input_is_caught_in_every_case_even_where_it_rewrites_what_it_can_reach(where):
    """On the CPU its inputs cross one storage each and nothing else is in reach; on a GPU only where every input
    has a CUDA allocation of its own (compare.isolate.handed_over): a case that passes is one where the row found
    the judge's copy of its input and changed it too."""
    row, result = failed_with("gelu_hides_changed_inputs", ("modified",))
    # a case it refused (a non-contiguous input, which check_inputs turns away) is ok without a call to judge
    hidden = [f"{c.dtype} {c.shape} ({c.inputs})" for c in result.checks
              if c.ok and not c.message.startswith("refused")]
    assert not hidden, f"the row changed its inputs unseen in: {', '.join(hidden)}"
