"""bench/beyond_copy.py: each row's time beyond a copy of the same bytes, read from a run's csv."""
import csv
import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "bench" / "beyond_copy.py"
_spec = importlib.util.spec_from_file_location("beyond_copy", _PATH)
beyond_copy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(beyond_copy)

FIELDS = ["impl", "dtype", "shape", "median_ms", "bytes", "same_bytes_copy_gbps"]
ROWS = [
    # 1 GB at 2000 GB/s is 500 µs for the copy; the row takes 600
    dict(impl="cuda:a", dtype="bfloat16", shape="M=1024 N=32768", median_ms="0.6", bytes="1000000000",
         same_bytes_copy_gbps="2000"),
    dict(impl="cuda:a", dtype="float32", shape="M=1024 N=32768", median_ms="1.2", bytes="2000000000",
         same_bytes_copy_gbps="2000"),
    dict(impl="triton:b", dtype="bfloat16", shape="M=256 N=65536", median_ms="0.25", bytes="400000000",
         same_bytes_copy_gbps="2000"),
    dict(impl="torch:eager", dtype="bfloat16", shape="M=256 N=65536", median_ms="", bytes="400000000",
         same_bytes_copy_gbps="2000"),  # not timed: left out
    dict(impl="copy (same bytes)", dtype="bfloat16", shape="1048576", median_ms="0.1", bytes="100",
         same_bytes_copy_gbps=""),  # no copy beside it: left out
]


def write(folder: Path) -> Path:
    with (folder / "op.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(ROWS)
    return folder


def test_the_time_beyond_the_copy_is_the_median_less_the_copys_time():
    table = beyond_copy.beyond(ROWS, set(), set(), set())
    assert [r[:3] for r in table] == [["cuda:a", "bfloat16", "M=1024 N=32768"], ["cuda:a", "float32", "M=1024 N=32768"],
                                      ["triton:b", "bfloat16", "M=256 N=65536"]]
    assert table[0][3:] == [600.0, 500.0, 100.0, 0.83]
    assert table[1][3:] == [1200.0, 1000.0, 200.0, 0.83]
    assert table[2][3:] == [250.0, 200.0, 50.0, 0.8]


def test_rows_are_picked_by_impl_dtype_and_shape():
    assert [r[:3] for r in beyond_copy.beyond(ROWS, {"cuda:a"}, {"float32"}, set())] == [
        ["cuda:a", "float32", "M=1024 N=32768"]]
    assert [r[0] for r in beyond_copy.beyond(ROWS, set(), set(), {(256, 65536)})] == ["triton:b"]
    assert beyond_copy.shape_of("M=1024 N=32768") == (1024, 32768)
    assert beyond_copy.shape_of("1048576") == (1048576,)


def test_the_command_reads_a_results_folder_and_says_when_nothing_matches(tmp_path, capsys):
    folder = write(tmp_path)
    assert beyond_copy.main(["op", "--results", str(folder), "--impls", "triton:b", "--sizes", "256x65536"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("triton:b"))
    assert line.split()[-4:] == ["250", "200", "50", "0.8"]
    assert beyond_copy.main(["op", "--results", str(folder), "--dtypes", "fp16"]) == 1
    assert "no timed row matches" in capsys.readouterr().err


def test_a_missing_csv_is_named_with_what_to_run(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        beyond_copy.main(["op", "--results", str(tmp_path)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'op.csv'}: no such file" in err and "python -m compare op" in err
