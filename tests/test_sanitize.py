"""`python -m compare OP --sanitize` (compare/sanitize.py): every CUDA and Triton row under compute-sanitizer.

Without a GPU (CI): sanitizer output recorded in the format compute-sanitizer prints is read back into per-row
results (reports attributed by the child's markers, or by the kernel they name when printed late; racecheck errors
and warnings apart); a scripted child shows how rows are handed to a fresh child after a crash, a lost CUDA context,
a hang or the print limit; which rows get racecheck; the shapes; the child's command line; and what a machine without
a GPU or without compute-sanitizer is told.

On a GPU (marked gpu; they need compute-sanitizer too): every shipped row of every op is clean, and the planted
kernels that write one element past the end of their output (tests/planted/planted_oob.cu, planted_oob_triton.py),
which the ordinary checks pass, are reported on their own rows and nowhere else.
"""
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from compare import build, check, discover, env, sanitize

PLANTED = Path(__file__).parent / "planted"
PLANTED_CU = PLANTED / "planted_oob.cu"
PLANTED_TRITON = PLANTED / "planted_oob_triton.py"
GELU_KERNELS = {"cuda:naive": ["gelu_naive_kernel"], "cuda:vec": ["gelu_fast", "gelu_unaligned_kernel", "gelu_vec_kernel"],
                "triton:basic": ["gelu_basic_kernel"], "triton:tuned": ["gelu_tuned_kernel"]}

# ---- Recorded output: what a memcheck child prints through compute-sanitizer, markers and all ----------------------
MEMCHECK_OUTPUT = """\
========= COMPUTE-SANITIZER
LAB-SANITIZE-BUILD {"kernels": [{"kernel": "void gelu_vec_kernel<float>(float const*, float*, long)", "base": "gelu_vec_kernel", "registers": 16, "spill_bytes": 0, "shared_bytes": 0, "stack_bytes": 0}]}
LAB-SANITIZE-ROW cuda:naive
LAB-SANITIZE-DONE cuda:naive {"cases": 15, "seconds": 1.84}
LAB-SANITIZE-ROW cuda:vec
========= Invalid __global__ write of size 4 bytes
=========     at gelu_vec_kernel<float>(const float *, float *, long)+0x1b0 in gelu.cu:68
=========     by thread (127,0,0) in block (7,0,0)
=========     Access at 0x7f3a9e001ffc is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f3a9e000000 of size 8188 bytes
=========     Device Frame: void gelu_vec_kernel<float>(const float *, float *, long) (gelu.cu:68)
=========
========= Invalid __global__ write of size 2 bytes
=========     at gelu_vec_kernel<__half>(const __half *, __half *, long)+0x1c0 in gelu.cu:68
=========     by thread (31,0,0) in block (0,0,0)
=========     Access at 0x7f3a9e0040fe is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f3a9e004000 of size 254 bytes
=========
LAB-SANITIZE-DONE cuda:vec {"cases": 15, "seconds": 2.31}
LAB-SANITIZE-ROW triton:basic
/venv/lib/python3.11/site-packages/triton/runtime/jit.py:712: UserWarning: a warning the child printed
LAB-SANITIZE-DONE triton:basic {"cases": 15, "seconds": 4.02}
========= ERROR SUMMARY: 2 errors
"""

RACECHECK_OUTPUT = """\
========= COMPUTE-SANITIZER
LAB-SANITIZE-ROW cuda:naive
========= Error: Race reported between Write access at softmax_naive_kernel<float>(const float *, float *, long, long)+0x2d0 in softmax.cu:80
=========     and Read access at softmax_naive_kernel<float>(const float *, float *, long, long)+0x310 in softmax.cu:84 [1016 hazards]
=========
========= Warning: Race reported between Write access at softmax_naive_kernel<float>(const float *, float *, long, long)+0x350 in softmax.cu:88
=========     and Write access at softmax_naive_kernel<float>(const float *, float *, long, long)+0x350 in softmax.cu:88 [31 hazards]
=========
LAB-SANITIZE-DONE cuda:naive {"cases": 9, "seconds": 12.5}
LAB-SANITIZE-ROW triton:basic
LAB-SANITIZE-DONE triton:basic {"cases": 9, "seconds": 20.1}
========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)
"""


def _results(text, kernels=None, pending=None, tool="memcheck", returncode=0, timed_out=False, print_limit=200):
    lines = text.splitlines(keepends=True)
    run = sanitize.parse_output(lines, kernels or GELU_KERNELS, print_limit)
    output = sanitize.ChildOutput(lines, returncode, timed_out)
    return sanitize.collect(run, output, pending or run.started, tool, 600.0), run


def test_memcheck_reports_go_to_the_row_whose_marker_precedes_them():
    (results, left), run = _results(MEMCHECK_OUTPUT)
    assert left == [] and set(results) == {"cuda:naive", "cuda:vec", "triton:basic"}
    vec = results["cuda:vec"]
    assert (vec.status, vec.errors, vec.cases, vec.seconds) == ("errors", 2, 15, 2.31)
    assert vec.first_error == ("Invalid __global__ write of size 4 bytes at gelu_vec_kernel<float>(const float *, "
                               "float *, long)+0x1b0 in gelu.cu:68")
    assert vec.reports[1][0] == "Invalid __global__ write of size 2 bytes" and "by thread (31,0,0)" in vec.reports[1][2]
    for row in ("cuda:naive", "triton:basic"):
        assert (results[row].status, results[row].errors, results[row].cases) == ("ok", 0, 15)
    assert run.error_total == 2
    assert run.build["kernels"][0]["base"] == "gelu_vec_kernel"
    assert any("a warning the child printed" in line for line in run.other_output)


# The sanitizer prints from its own process: a report may come after the child has printed the next row's marker.
LATE_OUTPUT = """\
========= COMPUTE-SANITIZER
LAB-SANITIZE-ROW cuda:vec
LAB-SANITIZE-DONE cuda:vec {"cases": 15, "seconds": 2.31}
LAB-SANITIZE-ROW triton:basic
========= Invalid __global__ write of size 4 bytes
=========     at gelu_vec_kernel<float>(const float *, float *, long)+0x1b0 in gelu.cu:68
=========     by thread (127,0,0) in block (7,0,0)
=========
========= Invalid __global__ read of size 4 bytes
=========     at void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, ...)+0x90
=========     by thread (0,0,0) in block (0,0,0)
=========
LAB-SANITIZE-DONE triton:basic {"cases": 15, "seconds": 4.02}
========= ERROR SUMMARY: 2 errors
"""


def test_a_report_printed_late_goes_to_the_row_whose_kernel_it_names():
    (results, _), _ = _results(LATE_OUTPUT)
    assert results["cuda:vec"].errors == 1 and "gelu_vec_kernel" in results["cuda:vec"].first_error
    # A kernel of no row (torch's, making inputs) stays with the row whose marker precedes it.
    assert results["triton:basic"].errors == 1 and "FillFunctor" in results["triton:basic"].first_error


def test_racecheck_errors_and_hazard_warnings_are_counted_apart():
    kernels = {"cuda:naive": ["softmax_naive_kernel"], "triton:basic": ["softmax_basic_kernel"]}
    (results, _), run = _results(RACECHECK_OUTPUT, kernels, tool="racecheck")
    naive = results["cuda:naive"]
    assert (naive.status, naive.errors, naive.warnings, naive.tool) == ("errors", 1, 1, "racecheck")
    assert naive.first_error.startswith("Error: Race reported between Write access at softmax_naive_kernel<float>")
    assert "and Read access at" in naive.first_error
    assert (results["triton:basic"].status, results["triton:basic"].warnings) == ("ok", 0)
    assert run.error_total == 1


def test_warnings_alone_do_not_fail_a_row():
    (results, _), _ = _results(RACECHECK_OUTPUT.replace("========= Error: Race", "========= Warning: Race").replace(
        "(1 error, 1 warning)", "(0 errors, 2 warnings)"), {}, tool="racecheck")
    assert (results["cuda:naive"].status, results["cuda:naive"].warnings) == ("ok", 2)


def test_lines_the_sanitizer_does_not_count_as_errors_are_not_errors():
    # A top-level line this reader doesn't know: with the sanitizer's own summary at 0 errors it was a note.
    text = MEMCHECK_OUTPUT.split("LAB-SANITIZE-ROW cuda:vec")[0] + (
        "LAB-SANITIZE-ROW cuda:vec\n========= Some note about the session that is not an error\n"
        "LAB-SANITIZE-DONE cuda:vec {\"cases\": 15}\n========= ERROR SUMMARY: 0 errors\n")
    (results, _), _ = _results(text)
    assert results["cuda:vec"].status == "ok"


@pytest.mark.parametrize("location, name", [
    ("gelu_vec_kernel<float>(const float *, float *, long)+0x1b0 in gelu.cu:68", "gelu_vec_kernel"),
    ("void lab::(anonymous namespace)::softmax_block_kernel<__half, 8>(const __half *, __half *, long)+0x40",
     "softmax_block_kernel"),
    ("gelu_tuned_kernel+0x2f0 in gelu.py:61", "gelu_tuned_kernel"),
    ("unaligned_kernel():0x160 in memcheck_demo.cu:6", "unaligned_kernel"),
    ("0x7f3a9e001ffc is out of bounds", None),
])
def test_kernel_names_are_read_from_report_locations(location, name):
    assert sanitize.kernel_base_name(location) == name


# ---- A scripted child: what the parent does when a child can't finish its rows -------------------------------------
def _scripted(*scripts):
    """A launch() that answers the n-th child with the n-th script(rows, tool) -> (text, returncode[, timed_out]),
    and records the rows each child was given."""
    calls = []

    def launch(command, environ, timeout_s, on_line=None):
        assert environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] == "1"
        tool = command[command.index("--tool") + 1]
        args = sanitize.child_parser().parse_args(command[command.index("--child"):])
        calls.append((tool, args.rows))
        text, code, *timed_out = scripts[len(calls) - 1](args.rows, tool)
        return sanitize.ChildOutput(text.splitlines(keepends=True), code, bool(timed_out and timed_out[0]))

    launch.calls = calls
    return launch


def _clean(row, cases=3):
    return f"LAB-SANITIZE-ROW {row}\nLAB-SANITIZE-DONE {row} {json.dumps({'cases': cases, 'seconds': 0.5})}\n"


def _plans(*rows):
    return [sanitize.RowPlan(r, GELU_KERNELS.get(r, []), ["memcheck"]) for r in rows]


def _run(launch, rows, **kwargs):
    results, _ = sanitize.run_tool("memcheck", "gelu", _plans(*rows), [(127,)], ["float32"], launch=launch,
                                   progress=False, **kwargs)
    return {r.row: r for r in results}


def test_rows_after_a_child_that_died_run_in_a_fresh_child():
    def crashes_in_vec(rows, tool):
        return (_clean("cuda:naive") + "LAB-SANITIZE-ROW cuda:vec\n========= Invalid __global__ read of size 4 bytes\n"
                "=========     at gelu_vec_kernel<float>(const float *, float *, long)+0x80 in gelu.cu:60\n=========\n"
                "Fatal Python error: Segmentation fault\n", -11)

    launch = _scripted(crashes_in_vec, lambda rows, tool: ("".join(_clean(r) for r in rows), 0))
    results = _run(launch, ["cuda:naive", "cuda:vec", "triton:basic"])
    assert launch.calls == [("memcheck", ["cuda:naive", "cuda:vec", "triton:basic"]), ("memcheck", ["triton:basic"])]
    vec = results["cuda:vec"]
    assert vec.status == "errors" and vec.errors == 1 and "SIGSEGV" in vec.failure
    assert "Segmentation fault" in vec.failure  # the child's last words are kept
    assert results["cuda:naive"].status == results["triton:basic"].status == "ok"


def test_rows_after_a_lost_cuda_context_run_in_a_fresh_child():
    record = {"cases": 1, "failure": "AcceleratorError: CUDA error: an illegal memory access was encountered\n"
                                     "the CUDA context is lost; the rows after this one run in a fresh process"}
    launch = _scripted(
        lambda rows, tool: (f"LAB-SANITIZE-ROW cuda:naive\nLAB-SANITIZE-DONE cuda:naive {json.dumps(record)}\n",
                            sanitize.EXIT_CONTEXT_LOST),
        lambda rows, tool: ("".join(_clean(r) for r in rows), 0))
    results = _run(launch, ["cuda:naive", "cuda:vec"])
    assert [rows for _, rows in launch.calls] == [["cuda:naive", "cuda:vec"], ["cuda:vec"]]
    assert results["cuda:naive"].status == "failed" and "context is lost" in results["cuda:naive"].failure
    assert results["cuda:vec"].status == "ok"


def test_a_hung_row_is_reported_as_timed_out_and_the_rest_still_run():
    launch = _scripted(lambda rows, tool: (_clean("cuda:naive") + "LAB-SANITIZE-ROW cuda:vec\n", -9, True),
                       lambda rows, tool: ("".join(_clean(r) for r in rows), 0))
    results = _run(launch, ["cuda:naive", "cuda:vec", "triton:basic"], timeout_s=30)
    assert results["cuda:vec"].status == "failed" and "timed out: no row finished for 30 s" in results["cuda:vec"].failure
    assert results["triton:basic"].status == "ok"


def test_rows_after_the_print_limit_run_again_in_a_fresh_child():
    # With a print limit of 2, the sanitizer printed nothing after cuda:vec's second report: triton:basic's clean
    # record from that child proves nothing, so it runs again.
    launch = _scripted(lambda rows, tool: (MEMCHECK_OUTPUT, 0), lambda rows, tool: (_clean("triton:basic", 15), 0))
    results = _run(launch, ["cuda:naive", "cuda:vec", "triton:basic"], print_limit=2)
    assert [rows for _, rows in launch.calls] == [["cuda:naive", "cuda:vec", "triton:basic"], ["triton:basic"]]
    assert results["cuda:vec"].print_limit_reached and results["cuda:vec"].errors == 2
    assert results["triton:basic"].status == "ok"


def test_a_child_that_ends_before_its_first_row_fails_every_row_once():
    launch = _scripted(lambda rows, tool: ("========= COMPUTE-SANITIZER\n========= Error: No attachable process found. "
                                           "compute-sanitizer timed-out.\n========= Default timeout can be adjusted "
                                           "with --launch-timeout.\n", 1))
    results = _run(launch, ["cuda:naive", "triton:basic"])
    assert len(launch.calls) == 1
    for r in results.values():
        assert r.status == "failed" and "before its first row" in r.failure and "No attachable process" in r.failure


# ---- Which rows, which tools, which shapes -------------------------------------------------------------------------
def _tools(op_name, built_kernels=None):
    op = discover.load_op(op_name)
    return {p.row: p.tools for p in sanitize.plan_rows(sanitize.available_rows(op), built_kernels)}


def test_racecheck_runs_for_rows_that_use_shared_memory():
    gelu = _tools("gelu")
    assert set(gelu) == {"cuda:naive", "cuda:vec", "triton:basic", "triton:tuned"}  # no torch rows
    assert all(tools == ["memcheck"] for tools in gelu.values())
    matmul = _tools("matmul")
    assert matmul["cuda:naive"] == ["memcheck"]
    for row in ("cuda:smem", "cuda:regblock", "cuda:mma", "triton:basic", "triton:tuned"):  # __shared__, tl.dot
        assert matmul[row] == ["memcheck", "racecheck"], row
    softmax = _tools("softmax")
    assert softmax["triton:tuned"] == softmax["cuda:naive"] == ["memcheck", "racecheck"]  # tl.max, __shared__


def test_shared_memory_that_only_ptxas_sees_brings_racecheck():
    # softmax_block_kernel reduces through lab::block_reduce_* (lab_device.cuh): the .cu never says __shared__ in
    # it, ptxas does. (Every softmax row also reaches v1's kernel, which declares __shared__: the kernel alone here.)
    row = next(r for r in sanitize.available_rows(discover.load_op("softmax")) if r.name == "cuda:block")
    assert not sanitize.uses_shared_memory(row, ["softmax_block_kernel"])
    block = build.KernelResources("void softmax_block_kernel<float, 8>(float const*, float*, long, long)",
                                  "softmax_block_kernel", 32, 0, 128, 0)
    assert sanitize.uses_shared_memory(row, ["softmax_block_kernel"], [block])


@pytest.mark.parametrize("op_name", discover.op_names())
def test_default_shapes_are_the_first_small_check_shapes_then_the_specs_own(op_name):
    op = discover.load_op(op_name)
    for tool, (most, max_elements) in sanitize.SHAPE_LIMITS.items():
        shapes = sanitize.default_shapes(op, tool)
        first = [s for s in shapes if s not in [tuple(c) for c in op.sanitize_shapes]]
        assert 1 <= len(first) <= most and all(s in [tuple(c) for c in op.check_shapes] for s in first)
        assert shapes[:len(first)] == first
        assert shapes[len(first):] == [tuple(s) for s in op.sanitize_shapes
                                       if torch.Size(s).numel() <= max_elements and tuple(s) not in first]
        assert all(torch.Size(s).numel() <= max_elements for s in shapes)
    assert max(torch.Size(s).numel() for s in sanitize.default_shapes(op, "racecheck")) <= \
        max(torch.Size(s).numel() for s in sanitize.default_shapes(op, "memcheck"))


def test_spec_sanitize_shapes_come_after_the_defaults_under_each_tools_cap():
    op = dataclasses.replace(discover.load_op("layernorm"),
                             sanitize_shapes=[(3, 16384), (1, 1), (3, 16384), (4096, 4096)])
    memcheck, racecheck = sanitize.default_shapes(op, "memcheck"), sanitize.default_shapes(op, "racecheck")
    # (1, 1) is already a default shape, the second (3, 16384) a repeat; 4096 x 4096 is past racecheck's cap only
    assert memcheck[-2:] == [(3, 16384), (4096, 4096)] and memcheck.count((1, 1)) == 1
    assert racecheck[-1] == (3, 16384) and (4096, 4096) not in racecheck
    assert "layernorm" in discover.op_names() and discover.load_op("layernorm").sanitize_shapes  # the norms name some


def test_planted_files_give_their_rows_with_the_ops_inputs():
    rows = sanitize.available_rows(discover.load_op("gelu"), PLANTED_CU, PLANTED_TRITON)
    assert [r.name for r in rows] == ["cuda:gelu_one_past_end", "cuda:gelu_in_bounds", "triton:gelu_one_past_end",
                                      "triton:gelu_in_bounds"]
    assert {r.library for r in rows if r.backend == "cuda"} == {"lab_planted_oob"}
    plans = {p.row: p for p in sanitize.plan_rows(rows)}
    assert "gelu_one_past_end_kernel" in plans["cuda:gelu_one_past_end"].kernels
    assert "gelu_one_past_end_kernel" not in plans["cuda:gelu_in_bounds"].kernels
    assert "gelu_one_past_end_kernel" in plans["triton:gelu_one_past_end"].kernels


def test_planted_cu_builds():
    if not env.nvcc_path():
        pytest.skip("needs the CUDA toolkit (nvcc)")
    built = build.build("planted_oob", (), progress=False, path=PLANTED_CU)
    assert {"gelu_one_past_end_kernel", "gelu_in_bounds_kernel"} <= {k.base for k in built.kernels}


# ---- The child's command line --------------------------------------------------------------------------------------
def test_the_child_reads_back_the_command_the_parent_writes():
    command = sanitize.child_command("matmul", ["cuda:mma", "triton:tuned"], [(17, 33, 9), (1, 1, 1)],
                                     ["float16", "bfloat16"], seed=7, cu=PLANTED_CU, triton_file=PLANTED_TRITON)
    assert command[1:4] == ["-m", "compare.sanitize", "--child"]
    args = sanitize.child_parser().parse_args(command[3:])
    assert (args.op, args.rows, args.shapes, args.dtypes, args.seed) == (
        "matmul", ["cuda:mma", "triton:tuned"], [(17, 33, 9), (1, 1, 1)], ["float16", "bfloat16"], 7)
    assert (args.cu, args.triton_file) == (PLANTED_CU.resolve(), PLANTED_TRITON.resolve())


def test_the_sanitizer_command_sets_what_the_row_attribution_relies_on():
    command = sanitize.sanitizer_command("/cuda/bin/compute-sanitizer", "memcheck", 600)
    options = dict(zip(command[1::2], command[2::2]))
    assert options["--tool"] == "memcheck"
    assert options["--destroy-on-device-error"] == "kernel" and options["--check-exit-code"] == "no"
    assert "--padding" in options and "--padding" not in sanitize.sanitizer_command("cs", "racecheck", 600)
    assert sanitize.child_environment()["PYTORCH_NO_CUDA_MEMORY_CACHING"] == "1"


def test_the_child_names_the_rows_when_given_one_it_does_not_have(capsys):
    assert sanitize.child_main(["--child", "--op", "gelu", "--rows", "cuda:vec,cuda:nope,torch:eager",
                                "--shapes", "127"]) == 2
    err = capsys.readouterr().err
    assert "cuda:nope, torch:eager" in err and "only CUDA and Triton rows" in err and "cuda:naive" in err


def test_the_child_is_not_run_without_child_and_refuses_bad_shapes(capsys):
    for argv in (["--op", "gelu", "--rows", "cuda:vec", "--shapes", "127"],
                 ["--child", "--op", "gelu", "--rows", "cuda:vec", "--shapes", "12x"]):
        with pytest.raises(SystemExit) as exit_:
            sanitize.child_main(argv)
        assert exit_.value.code == 2
    assert "bad size" in capsys.readouterr().err


def test_the_child_needs_a_gpu(monkeypatch, capsys):
    monkeypatch.setattr(env, "has_gpu", lambda: False)
    assert sanitize.child_main(["--child", "--op", "gelu", "--rows", "cuda:vec", "--shapes", "127"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err


# ---- Machines that can't run it --------------------------------------------------------------------------------------
def test_what_a_machine_without_the_sanitizer_or_a_gpu_is_told(monkeypatch):
    monkeypatch.setattr(env, "has_gpu", lambda: True)
    monkeypatch.setattr(sanitize, "find_sanitizer", lambda: "/usr/local/cuda/bin/compute-sanitizer")
    assert sanitize.environment_problem() is None
    monkeypatch.setattr(sanitize, "find_sanitizer", lambda: None)
    message = sanitize.environment_problem()
    assert "compute-sanitizer was not found" in message and "CUDA_HOME" in message and "GPU" not in message
    monkeypatch.setattr(env, "has_gpu", lambda: False)
    message = sanitize.environment_problem()
    assert "compute-sanitizer was not found" in message and "no CUDA GPU" in message


def test_find_sanitizer_looks_in_cuda_home_first(monkeypatch, tmp_path):
    tool = tmp_path / "bin" / "compute-sanitizer"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    assert sanitize.find_sanitizer() == str(tool)


@pytest.mark.skipif(env.has_gpu() and sanitize.find_sanitizer() is not None, reason="this machine can sanitize")
def test_sanitize_without_gpu_or_sanitizer_exits_2_with_the_reason():
    proc = subprocess.run([sys.executable, "-m", "compare", "gelu", "--sanitize"], cwd=env.ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--sanitize can't run here" in proc.stderr and "Traceback" not in proc.stderr


# ---- One op end to end, with a scripted child -------------------------------------------------------------------------
def test_an_op_runs_memcheck_on_every_row_then_racecheck_on_those_with_shared_memory(tmp_path, capsys):
    block = {"kernel": "void softmax_block_kernel<float, 8>(float const*, float*, long, long)",
             "base": "softmax_block_kernel", "registers": 32, "spill_bytes": 0, "shared_bytes": 128, "stack_bytes": 0}

    def child(rows, tool):
        built = f"LAB-SANITIZE-BUILD {json.dumps({'kernels': [block]})}\n" if tool == "memcheck" else ""
        return built + "".join(_clean(r) for r in rows) + "========= ERROR SUMMARY: 0 errors\n", 0

    launch = _scripted(child, child)
    op = discover.load_op("softmax")
    result = sanitize.sanitize(op, dtypes=["float32"], launch=launch, progress=False)
    rows = [i.name for i in discover.implementations(op) if i.name.startswith(("cuda:", "triton:"))]
    assert rows[:2] == ["cuda:naive", "cuda:warp"] and "triton:packed" in rows  # the op's own rows, in file order
    assert launch.calls == [("memcheck", rows), ("racecheck", rows)]  # every row reaches v1's __shared__ or a tl.max
    assert [(r.row, r.tool) for r in result.rows] == [(row, tool) for row in rows for tool in sanitize.TOOLS]
    assert not result.failed_rows() and result.dtypes == ["float32"]
    sanitize.print_table(result)
    table = capsys.readouterr().out
    assert all(row in table for row in rows) and "racecheck" in table
    data = json.loads(sanitize.write_json([result], tmp_path / "new" / "sanitize.json").read_text())
    (softmax,) = data["ops"]
    assert softmax["op"] == "softmax" and len(softmax["rows"]) == 2 * len(rows)
    assert {r["status"] for r in softmax["rows"]} == {"ok"}
    assert softmax["shapes"]["racecheck"] == [list(s) for s in sanitize.default_shapes(discover.load_op("softmax"),
                                                                                         "racecheck")]


# ---- On a GPU ------------------------------------------------------------------------------------------------------
needs_sanitizer = pytest.mark.skipif(sanitize.find_sanitizer() is None,
                                     reason="needs NVIDIA compute-sanitizer (CUDA toolkit)")


@pytest.mark.gpu
@pytest.mark.sanitizer
@needs_sanitizer
@pytest.mark.parametrize("op_name", discover.op_names())
def test_shipped_rows_are_clean_under_the_sanitizer(op_name, tmp_path):
    report = tmp_path / "sanitize.json"
    proc = subprocess.run([sys.executable, "-m", "compare", op_name, "--sanitize", "--out", str(report)],
                          cwd=env.ROOT, capture_output=True, text=True, timeout=1800)
    log = proc.stdout[-6000:] + "\n--- stderr ---\n" + proc.stderr[-4000:]
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, log
    (data,) = json.loads(report.read_text())["ops"]
    ran = {(r["row"], r["tool"]): r for r in data["rows"]}
    planned = {(p["row"], tool) for p in data["plans"] for tool in p["tools"]}
    assert set(ran) == planned, log  # every row under memcheck, and under racecheck where it uses shared memory
    for key, r in ran.items():
        assert r["errors"] == 0 and not r["failure"], f"{key}: {r}\n{log}"
        assert r["skipped"] or r["cases"] > 0, f"{key} ran no case: {r}"
    if op_name in ("softmax", "matmul"):  # their kernels reduce or tile through shared memory
        assert any(tool == "racecheck" for _, tool in ran), log


def _planted_rows():
    return {r.name: r for r in sanitize.available_rows(discover.load_op("gelu"), PLANTED_CU, PLANTED_TRITON)}


@pytest.mark.gpu
@pytest.mark.sanitizer
@needs_sanitizer
def test_planted_one_past_the_end_writes_are_reported_on_their_own_rows():
    op = discover.load_op("gelu")
    result = sanitize.sanitize(op, cu=PLANTED_CU, triton_file=PLANTED_TRITON, dtypes=["float32"], progress=False)
    by_row = {(r.row, r.tool): r for r in result.rows}
    assert set(by_row) == {(row, "memcheck") for row in _planted_rows()}
    cases = len(sanitize.default_shapes(op, "memcheck"))
    story = "\n".join(f"{r.row}: {r.status} {r.errors} errors, {r.cases} cases: {r.first_error or r.failure}"
                      for r in result.rows)
    for backend in ("cuda", "triton"):
        bad = by_row[(f"{backend}:gelu_one_past_end", "memcheck")]
        assert bad.errors > 0, story
        # The first report is the stray access itself, in the planted kernel (not a consequence elsewhere).
        assert "Invalid __global__" in bad.first_error and "gelu_one_past_end_kernel" in bad.first_error, story
        assert all(any("gelu_one_past_end_kernel" in line for line in report) for report in bad.reports), story
        # Its control runs right after it, in the same process: clean, and every case ran.
        good = by_row[(f"{backend}:gelu_in_bounds", "memcheck")]
        assert (good.status, good.errors, good.cases) == ("ok", 0, cases), story


@pytest.mark.gpu
@pytest.mark.parametrize("row", ["cuda:gelu_one_past_end", "triton:gelu_one_past_end"])
def test_planted_one_past_the_end_writes_pass_the_ordinary_checks(row):
    # What makes the sanitizer necessary: the values are right, so the checker passes these rows. (The shapes leave
    # room for the stray element in the block torch's caching allocator rounds each tensor up to.)
    op = discover.load_op("gelu")
    fn = _planted_rows()[row].load()
    for shape in ((127,), (1025,)):
        r = check.check_case(op, row, fn, torch.float32, shape, torch.device("cuda"), 0)
        assert r.ok, f"{shape}: {r.message}"
