import re

import pytest

from compare import discover, env
from compare.spec import Op


def test_every_spec_file_is_an_op():
    names = discover.op_names()
    assert "gelu" in names
    for name in names:
        op = discover.load_op(name)
        assert isinstance(op, Op) and op.name == name


@pytest.mark.parametrize("name", discover.op_names())
def test_each_op_has_cuda_triton_and_torch_rows(name):
    op = discover.load_op(name)
    impls = discover.implementations(op)
    backends = {i.backend for i in impls}
    assert backends - {"peer"} == {"cuda", "triton", "torch"}  # peer rows: the spec's peers, where it has any
    assert {i.variant for i in impls if i.backend == "peer"} == set(op.peers)
    assert {"torch:eager", "torch:compile"} <= {i.name for i in impls}
    assert all(i.name.count(":") == 1 for i in impls)


def test_cuda_rows_come_from_the_torch_library_block():
    assert discover.cuda_variants("gelu") == ["naive", "vec"]


def test_unknown_op_lists_the_ops():
    with pytest.raises(discover.UnknownOp) as info:
        discover.load_op("gleu")
    assert "gelu" in str(info.value) and "gleu" in str(info.value)


def test_select_by_backend_name_and_glob():
    impls = discover.implementations(discover.load_op("gelu"))
    assert [i.name for i in discover.select(impls, ["cuda"])] == ["cuda:naive", "cuda:vec"]
    assert [i.name for i in discover.select(impls, ["*:tuned"])] == ["triton:tuned"]
    with pytest.raises(discover.UnknownOp):
        discover.select(impls, ["cuda:nope"])


def test_wrong_namespace_is_reported_with_file_and_line(tmp_path, monkeypatch):
    (tmp_path / "demo.cu").write_text('// x\nTORCH_LIBRARY(lab_other, m) {\n  m.def("a(Tensor x) -> Tensor");\n}\n')
    monkeypatch.setattr(env, "CUDA_DIR", tmp_path)
    with pytest.raises(discover.SpecError, match=r"demo\.cu:2: .*lab_demo"):
        discover.cuda_variants("demo")


def test_a_spec_field_naming_a_row_that_does_not_exist_is_an_error():
    import dataclasses

    import torch

    op = discover.load_op("matmul")
    typo = dataclasses.replace(op, unsupported_dtypes={"cuda:wmgma": (torch.float32,)})
    with pytest.raises(discover.SpecError, match=r"specs/matmul\.py: unsupported_dtypes names cuda:wmgma, which is "
                                                 r"not a row of matmul; its rows are cuda:naive"):
        discover.implementations(typo)
    assert discover.implementations(op)  # the real spec's names are all rows


def test_a_row_missing_from_its_files_version_map_is_an_error(tmp_path, monkeypatch):
    import shutil

    for name in ("add.cu", "lab.h", "lab_device.cuh", "lab_torch.h"):
        shutil.copy(env.CUDA_DIR / name, tmp_path / name)
    source = tmp_path / "add.cu"
    source.write_text(re.sub(r"(?m)^//   v2 vec .*\n", "", source.read_text()))
    monkeypatch.setattr(env, "CUDA_DIR", tmp_path)
    with pytest.raises(discover.SpecError, match=r"add\.cu: cuda:vec is a row of the file but not a step of its "
                                                 r"version map"):
        discover.implementations(discover.load_op("add"))
