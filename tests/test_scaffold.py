"""`python -m compare new NAME` on a copy of the repository: the new op is discovered, builds, and passes."""
import json
import shutil
import subprocess
import sys

import pytest
import torch

from compare import env


@pytest.fixture(scope="module")
def repo_copy(tmp_path_factory):
    root = tmp_path_factory.mktemp("repo")
    for folder in ("compare", "specs", "cuda_src", "triton_src"):
        shutil.copytree(env.ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def lab(root, *args):
    return subprocess.run([sys.executable, "-m", "compare", *args], cwd=root, capture_output=True, text=True,
                          timeout=900)


@pytest.mark.slow
def test_new_op_is_discovered_builds_and_passes(repo_copy, tmp_path):
    made = lab(repo_copy, "new", "scaled_shift")
    assert made.returncode == 0, made.stderr
    for path in ("specs/scaled_shift.py", "cuda_src/scaled_shift.cu", "triton_src/scaled_shift.py"):
        assert (repo_copy / path).exists()
    assert "EDIT" in made.stdout

    listed = lab(repo_copy, "list")
    assert "scaled_shift" in listed.stdout and "cuda:simple" in listed.stdout and "triton:simple" in listed.stdout

    ran = lab(repo_copy, "scaled_shift", "--no-time", "--out", str(tmp_path))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    rows = {r["impl"]: r["status"] for r in json.loads((tmp_path / "scaled_shift.json").read_text())["rows"]}
    assert rows["triton:simple"] == "ok" and rows["torch:eager"] == "ok"
    if torch.cuda.is_available():
        assert rows["cuda:simple"] == "ok"
    elif env.nvcc_path():
        assert rows["cuda:simple"] == "built (needs GPU to run)"


def test_new_refuses_existing_ops_and_bad_names_without_writing(repo_copy):
    before = (repo_copy / "specs" / "gelu.py").read_text()
    again = lab(repo_copy, "new", "gelu")
    assert again.returncode == 2 and "already exists" in again.stderr and "Traceback" not in again.stderr
    assert (repo_copy / "specs" / "gelu.py").read_text() == before
    bad = lab(repo_copy, "new", "Bad-Name")
    assert bad.returncode == 2 and "can't be an op name" in bad.stderr
    assert not list((repo_copy / "specs").glob("*Bad*"))


@pytest.mark.slow
def test_new_op_with_a_gradient_runs_its_three_passes(repo_copy, tmp_path):
    made = lab(repo_copy, "new", "shift_grad", "--backward")
    assert made.returncode == 0, made.stderr
    assert "@backward" in (repo_copy / "triton_src" / "shift_grad.py").read_text()
    assert "simple_backward" in (repo_copy / "cuda_src" / "shift_grad.cu").read_text()
    passes = ("shift_grad", "shift_grad-backward", "shift_grad-fwd-bwd")
    ran = lab(repo_copy, *passes, "--no-time", "--out", str(tmp_path))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    for name in passes:
        data = json.loads((tmp_path / f"{name}.json").read_text())
        rows = {r["impl"]: r["status"] for r in data["rows"]}
        assert rows["triton:simple"] == "ok" and rows["torch:eager"] == "ok", (name, rows)
        assert data["checks"]["cases"] > 0 and data["checks"]["failed"] == 0, name
    assert ran.stdout.count("cached") >= 2 or not env.nvcc_path()  # one build of the .cu serves the three passes


def test_backward_is_for_new_only(repo_copy):
    wrong = lab(repo_copy, "gelu", "--backward")
    assert wrong.returncode == 2 and "--backward goes with 'new NAME'" in wrong.stderr
