"""Version maps (compare/ladder.py): the steps a kernel file lists are read back in order, a map that disagrees with
the file's rows is reported with file and line, and the ladder relates each step to the one before."""
from pathlib import Path
from types import SimpleNamespace

import pytest

from compare import discover, ladder

REPO = Path(__file__).resolve().parent.parent

CU = """\
// Some op.
//
// Steps (each one a row, cuda:<name>):
//   v1 naive    one thread per element
//   v2 vec      16-byte loads and stores,
//               four elements per thread
//
// Prose after the map.
#include "lab.h"
"""

PY = '''\
"""Some op in Triton.

Steps:
  v1 basic    the tutorial kernel
  v2 tuned    autotuned block size
"""
import triton
'''


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_cu_map_is_read_in_order_with_continuation_lines(tmp_path):
    steps = ladder.version_map(_write(tmp_path, "op.cu", CU))
    assert [(s.number, s.variant) for s in steps] == [(1, "naive"), (2, "vec")]
    assert steps[1].change == "16-byte loads and stores, four elements per thread"
    assert steps[0].line == 4


def test_a_step_whose_long_name_pushes_its_text_right_keeps_its_continuation_at_the_maps_column(tmp_path):
    long_name = CU.replace("//   v2 vec      16-byte", "//   v2 persistent  16-byte")
    steps = ladder.version_map(_write(tmp_path, "op.cu", long_name))
    assert steps[1].variant == "persistent" and steps[1].change == "16-byte loads and stores, four elements per thread"


def test_a_triton_map_is_read_from_the_docstring(tmp_path):
    steps = ladder.version_map(_write(tmp_path, "op.py", PY))
    assert [(s.number, s.variant, s.change) for s in steps] == [(1, "basic", "the tutorial kernel"),
                                                                (2, "tuned", "autotuned block size")]
    assert steps[1].line == 5


def test_map_and_rows_must_agree(tmp_path):
    path = _write(tmp_path, "op.cu", CU)
    assert ladder.map_problems(path, "cuda", ["naive", "vec"]) == []
    missing = ladder.map_problems(path, "cuda", ["naive", "vec", "tiled"])
    assert len(missing) == 1 and "cuda:tiled is a row of the file but not a step" in missing[0]
    extra = ladder.map_problems(path, "cuda", ["naive"])
    assert len(extra) == 1 and "op.cu:5:" in extra[0] and "names cuda:vec" in extra[0]
    assert "no version map" in ladder.map_problems(_write(tmp_path, "bare.cu", "#include <x>\n"), "cuda", ["a"])[0]


def test_steps_numbered_out_of_order_are_an_error(tmp_path):
    path = _write(tmp_path, "op.cu", CU.replace("v2 vec", "v3 vec"))
    with pytest.raises(ladder.MapError, match=r"op.cu:4: .*\[1, 3\]"):
        ladder.version_map(path)


def _timing(impl, gbps, same):
    return SimpleNamespace(impl=impl, dtype="float32", shape="64M", gbps=gbps, tflops=0.0,
                           fraction_of_ceiling=gbps / 4000, fraction_of_same_bytes_copy=same)


def test_the_ladder_gives_each_step_its_gain_over_the_last_step_timed(tmp_path):
    steps = ladder.version_map(_write(tmp_path, "op.cu", CU.replace("//   v2 vec", "//   v2 mid      x\n//   v3 vec")))
    timings = [_timing("cuda:naive", 1000.0, 0.25), _timing("cuda:vec", 4000.0, 1.0)]  # cuda:mid not timed
    rows = ladder.ladder(steps, "cuda", timings, [("float32", "64M")], memory=True)
    assert [r.impl for r in rows] == ["cuda:naive", "cuda:mid", "cuda:vec"]
    assert rows[0].cells["float32 64M"] == (1000.0, None, 0.25)
    assert rows[1].cells["float32 64M"] is None
    assert rows[2].cells["float32 64M"] == (4000.0, 4.0, 1.0)
@pytest.mark.parametrize("op", discover.op_names())
def test_every_kernel_file_of_the_lab_has_a_map_that_matches_its_rows(op):
    for backend, path, rows in (("cuda", discover.cuda_source(op), discover.cuda_variants(op)),
                                ("triton", discover.triton_source(op), discover.triton_variants(op))):
        if path.exists():
            assert ladder.map_problems(path, backend, rows) == []


def test_the_report_shows_each_step_with_its_change_and_gain():
    from compare import report
    from compare.results import LadderStep, OpResult, RowStatus
    from compare.timing import Timing

    def timing(impl, gbps):
        return Timing(impl, "float32", "64M", median_ms=1.0, q25_ms=0.9, q75_ms=1.1, bytes=1, flops=0, gbps=gbps,
                      tflops=0.0, fraction_of_ceiling=gbps / 4000, fraction_of_same_bytes_copy=gbps / 4100)

    result = OpResult("gelu", "GELU", "memory", {}, rows=[RowStatus("cuda:naive", "ok"), RowStatus("cuda:vec", "ok")],
                      timings=[timing("cuda:naive", 2050.0), timing("cuda:vec", 4100.0)],
                      ladder=[LadderStep("cuda", 1, "cuda:naive", "one thread per element", "cuda_src/gelu.cu:10"),
                              LadderStep("cuda", 2, "cuda:vec", "128-bit packets", "cuda_src/gelu.cu:11")],
                      ladder_cells=[("float32", "64M")])
    (section,) = report.ladder_sections(result)
    assert section.heading == "Ladder, CUDA" and "cuda_src/gelu.cu" in section.prose
    assert section.rows == [["v1", "cuda:naive", "one thread per element", "2050 (0.50)"],
                            ["v2", "cuda:vec", "128-bit packets", "4100 ×2.00 (1.00)"]]
    result.rows[1] = RowStatus("cuda:vec", "FAIL", "wrong")  # a failed step's speed is not shown
    assert report.ladder_sections(result)[0].rows[1][3] == ""


def test_a_run_reads_the_steps_of_the_files_its_rows_come_from():
    from compare import runner
    from compare.results import OpResult

    op = discover.load_op("softmax")
    impls = [i for i in discover.implementations(op) if i.backend == "cuda"]
    result = OpResult("softmax", "", "memory", {})
    runner._read_ladder(op, impls, result)
    assert [s.impl for s in result.ladder] == [f"cuda:{v}" for v in discover.cuda_variants("softmax")]
    assert all(s.source.startswith("cuda_src/softmax.cu:") for s in result.ladder)
