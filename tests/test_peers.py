"""Peer rows: implementations from other projects that a spec names (compare.spec.Peer), found, checked and timed
like every other row as peer:<name>. A peer whose package is missing is skipped with what to install, never an
error; one that is installed runs in a worker of its own and is judged like any row, so a wrong one fails.

The installed peers here are a small package made in tmp_path (lab_fake_peer): a right GELU and a wrong one (erf
instead of tanh), named as peers of a copy of the gelu spec and run through `python -m compare` in a copy of the
harness, so the worker that loads them finds that spec as a real run would."""
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import torch

from compare import discover, env, report, runner
from compare.spec import Peer

PEER_SOURCE = '''
import torch


def gelu(x):  # right: GELU with tanh, computed in fp32 and rounded once, as torch does
    return torch.nn.functional.gelu(x.float(), approximate="tanh").to(x.dtype)


def gelu_erf(x):  # wrong: GELU with erf, another function (specs/gelu.py)
    return torch.nn.functional.gelu(x.float()).to(x.dtype)
'''
# Appended to the copy's specs/gelu.py: a right peer, a wrong one and one whose package is not installed.
PEERS_OF_GELU = '''

import dataclasses as _dataclasses

from compare.spec import Peer


def load_right():
    from lab_fake_peer import gelu

    return gelu


def load_wrong():
    from lab_fake_peer import gelu_erf

    return gelu_erf


def load_absent():
    import lab_absent_peer

    return lab_absent_peer.gelu


OP = _dataclasses.replace(OP, peers={
    "right": Peer("lab_fake_peer", load_right, "lab-fake-peer", needs_gpu=False),
    "wrong": Peer("lab_fake_peer", load_wrong, "lab-fake-peer", needs_gpu=False),
    "absent": Peer("lab_absent_peer", load_absent, "lab-absent-peer"),
})
'''
ABSENT = "lab_absent_peer is not installed: pip install lab-absent-peer (an optional peer of gelu)"


def fake_peer_package(site, version="1.2.3", source=PEER_SOURCE):
    """lab_fake_peer under site/, with the metadata of the distribution lab-fake-peer (its version)."""
    (site / "lab_fake_peer").mkdir(parents=True)
    (site / "lab_fake_peer" / "__init__.py").write_text(source)
    (site / f"lab_fake_peer-{version}.dist-info").mkdir()
    (site / f"lab_fake_peer-{version}.dist-info" / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: lab-fake-peer\nVersion: {version}\n")
    return site


def never_called():
    raise AssertionError("a peer's loader runs in the row's worker only")


def gelu_with_peers(**peers):
    return dataclasses.replace(discover.load_op("gelu"), peers=peers)


def test_a_peer_is_a_row_after_the_triton_rows_and_before_the_torch_rows():
    op = gelu_with_peers(other=Peer("lab_absent_peer", never_called, "lab-absent-peer"),
                         cpu=Peer("lab_absent_peer", never_called, "lab-absent-peer", needs_gpu=False))
    impls = discover.implementations(op)
    names = [i.name for i in impls]
    assert names.index("peer:other") > max(names.index(i.name) for i in impls if i.backend == "triton")
    assert names.index("peer:cpu") == names.index("peer:other") + 1 < names.index("torch:eager")
    assert {i.name: i.needs_gpu for i in impls if i.backend == "peer"} == {"peer:other": True, "peer:cpu": False}
    assert [i.name for i in discover.select(impls, ["peer"])] == ["peer:other", "peer:cpu"]
    assert [i.name for i in discover.select(impls, ["peer:cpu"])] == ["peer:cpu"]
    # Spec fields keyed by row name take peer rows, and still refuse a name that is no row.
    discover.implementations(dataclasses.replace(op, unsupported_dtypes={"peer:other": (torch.float16,)}))
    with pytest.raises(discover.SpecError, match="unsupported_dtypes names peer:typo, which is not a row"):
        discover.implementations(dataclasses.replace(op, unsupported_dtypes={"peer:typo": (torch.float16,)}))


def test_a_peer_names_its_top_level_package_and_a_plain_row_name():
    with pytest.raises(ValueError, match="top-level import name"):
        Peer("liger_kernel.ops", never_called, "liger-kernel")  # finding it would import liger_kernel
    with pytest.raises(discover.SpecError, match="a peer's name is the row's name"):
        discover.implementations(gelu_with_peers(**{"a:b": Peer("lab_absent_peer", never_called, "x")}))


@pytest.mark.parametrize("name", ["layernorm", "rmsnorm"])
def test_the_norms_name_liger_as_their_peer_in_every_pass(name):
    for op_name in (name, f"{name}-backward", f"{name}-fwd-bwd"):
        op = discover.load_op(op_name)  # the passes (compare.passes) keep the spec's peers
        liger = op.peers["liger"]
        assert (liger.package, liger.pip, liger.needs_gpu) == ("liger_kernel", "liger-kernel", True)
        assert "peer:liger" in [i.name for i in discover.implementations(op)]
        # Liger keeps a row in one block of at most 65536 elements: wider check shapes are declared refused.
        assert not op.supports("peer:liger", torch.float32, (8, 70000))
        assert op.supports("peer:liger", torch.float32, (256, 65536))


def test_the_parent_finds_an_installed_peer_without_importing_it(tmp_path, monkeypatch):
    # A package that refuses to be imported here: finding it and reading its version must not run it.
    site = fake_peer_package(tmp_path, "0.5", source="raise AssertionError('imported in the parent')\n")
    monkeypatch.syspath_prepend(str(site))
    op = gelu_with_peers(fake=Peer("lab_fake_peer", never_called, "lab-fake-peer"))
    impls = discover.select(discover.implementations(op), ["peer"])
    assert op.unavailable_reason("peer:fake", None) is None
    assert runner.peer_versions(op, impls) == {"lab-fake-peer": "0.5"}
    assert "lab_fake_peer" not in sys.modules


def test_a_missing_peer_is_skipped_with_what_to_install_and_fails_nothing(tmp_path):
    # needs_gpu (the default): on a machine without a GPU the missing package is still what the row reports.
    op = gelu_with_peers(absent=Peer("lab_absent_peer", never_called, "lab-absent-peer"))
    options = runner.Options(impls=["peer", "torch:eager"], time=False, capture=False, progress=False)
    result = runner.run_op(op, options)
    rows = {r.impl: r for r in result.rows}
    assert (rows["peer:absent"].status, rows["peer:absent"].message) == ("skipped", ABSENT)
    assert rows["torch:eager"].status == "ok"
    assert result.checks and all(c.ok and c.impl == "torch:eager" for c in result.checks)
    assert result.failed_rows() == []  # the exit status counts failed rows only
    assert "peers" not in result.env  # nothing of it was installed, so no version to record
    report.write_files(result, tmp_path, "python -m compare gelu --impls peer,torch:eager")
    assert re.search(r"\| peer:absent +\| skipped +\| " + re.escape(ABSENT), (tmp_path / "gelu.md").read_text())


def test_an_installed_peer_is_checked_in_its_worker_and_a_wrong_one_fails(tmp_path):
    root = tmp_path / "repo"
    for folder in ("compare", "specs"):
        shutil.copytree(env.ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for package in ("cuda_src", "triton_src"):  # the harness imports them; gelu's CUDA and Triton rows stay out
        (root / package).mkdir()
        shutil.copy(env.ROOT / package / "__init__.py", root / package / "__init__.py")
    with open(root / "specs" / "gelu.py", "a") as f:
        f.write(PEERS_OF_GELU)
    site = fake_peer_package(tmp_path / "site")
    environ = dict(os.environ, LAB_CACHE_DIR=str(tmp_path / "cache"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))

    def compare(*args):
        return subprocess.run([sys.executable, "-m", "compare", *args], cwd=root, env=environ, capture_output=True,
                              text=True, timeout=600)

    listed = compare("list")
    assert listed.returncode == 0, listed.stderr
    assert "peer:right, peer:wrong, peer:absent (not installed), torch:eager" in listed.stdout, listed.stdout

    out = tmp_path / "results"
    proc = compare("gelu", "--impls", "peer,torch:eager", "--no-time", "--no-capture", "--out", str(out))
    log = proc.stdout[-3000:] + "\n--- stderr ---\n" + proc.stderr[-3000:]
    # Exit status 1 for the wrong peer alone: the missing one is skipped, not failed.
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, log
    assert proc.stderr.split("FAILED:", 1)[1].split() == ["gelu", "peer:wrong:", "FAIL"], log
    data = json.loads((out / "gelu.json").read_text())
    rows = {r["impl"]: r for r in data["rows"]}
    assert {impl: r["status"] for impl, r in rows.items()} == {
        "peer:right": "ok", "peer:wrong": "FAIL", "peer:absent": "skipped", "torch:eager": "ok"}, log
    assert rows["peer:absent"]["message"] == ABSENT
    cases = report.read_checks(out / "gelu.checks.csv.gz")
    checked = [c for c in cases if c["impl"] == "peer:right"]
    assert checked and all(c["ok"] for c in checked) and {c["dtype"] for c in checked} == {"float32", "float16"}
    assert any(not c["ok"] for c in cases if c["impl"] == "peer:wrong")
    assert data["env"]["peers"] == {"lab-fake-peer": "1.2.3"}  # which release of the peer was measured
    assert "Peer rows from lab-fake-peer 1.2.3." in (out / "gelu.md").read_text()
    assert not [l for l in data["loc"] if l["impl"].startswith("peer:")]  # another project's lines are not counted


def test_a_run_over_several_gpus_records_the_peers_of_every_lane():
    from compare import fanout
    from compare.results import OpResult, RowStatus

    impls = discover.implementations(gelu_with_peers(a=Peer("lab_a", never_called, "lab-a"),
                                                     b=Peer("lab_b", never_called, "lab-b")))

    def lane(rows, peers):
        return OpResult("gelu", "GELU", "memory", {"gpu": "G", "host": "h", "peers": peers},
                        rows=[RowStatus(r, "ok") for r in rows])

    merged = fanout.merge([lane(["peer:a", "torch:eager"], {"lab-a": "1.0"}),
                           lane(["peer:b", "torch:eager"], {"lab-b": "2.0"})], impls, ["cuda:0", "cuda:1"])
    assert merged.env["peers"] == {"lab-a": "1.0", "lab-b": "2.0"}
