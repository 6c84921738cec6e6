"""What a newcomer meets first: the README's set-up, option errors, where results go, what a run without a GPU
leaves out, and a clean terminal and temporary folder."""
import json
import os
import re
import subprocess
import sys
import warnings
from importlib import metadata
from pathlib import Path

import pytest
import torch

from compare import cli, discover, env, paths

NO_GPU = pytest.mark.skipif(torch.cuda.is_available(), reason="exercises the no-GPU path")


def run_cli(*args, **env_vars):
    return subprocess.run([sys.executable, "-m", "compare", *args], capture_output=True, text=True, cwd=env.ROOT,
                          timeout=600, env={**os.environ, **env_vars})


# -- README set-up


def test_readme_installs_into_a_venv_with_the_test_extra_and_says_how_big_it_is():
    readme = (env.ROOT / "README.md").read_text()
    setup = readme[:readme.index("## ")]  # the part before the first section
    assert re.search(r"python3 -m venv \.venv && \. \.venv/bin/activate && pip install -e \"\.\[test\]\"", setup)
    assert "several GB" in setup
    assert "python -m pytest" in setup
    assert "python -m pytest" in (env.ROOT / ".ci" / "run").read_text()  # CI runs the README's test command
    requires = metadata.requires("kernel-lab") or []
    assert any(r.startswith("pytest") and 'extra == "test"' in r for r in requires), requires


# -- --impls: every pattern must match


def gelu_rows():
    return discover.implementations(discover.load_op("gelu"))


def test_a_pattern_that_matches_nothing_is_an_error_even_beside_one_that_matches():
    with pytest.raises(discover.UnknownOp) as info:
        discover.select(gelu_rows(), ["triton", "cuda:nope"])
    message = str(info.value)
    assert "'cuda:nope'" in message and "'triton'" not in message
    assert "triton:basic" in message and "torch:eager" in message  # the op's rows, to pick from
    assert [i.name for i in discover.select(gelu_rows(), ["triton", "cuda:nope"], missing_ok=True)] == [
        "triton:basic", "triton:tuned"]


def test_with_all_a_pattern_needs_to_match_some_op_only():
    ops = [discover.load_op(name) for name in discover.op_names()]
    rows = cli.choose_rows(ops, ["cuda:wgmma"], across_ops=True)
    assert {name: [i.name for i in chosen] for name, (_, chosen) in rows.items() if chosen} == {
        name: ["cuda:wgmma"] for name in ("attention", "attention_causal", "fp8_matmul", "matmul")}
    assert rows["gelu"] == ([], [])  # skipped, and never handed to the runner (where no patterns means every row)
    rows = cli.choose_rows(ops, ["cuda:wgmma", "triton:tuned"], across_ops=True)
    assert rows["gelu"][0] == ["triton:tuned"] and rows["matmul"][0] == ["cuda:wgmma", "triton:tuned"]
    with pytest.raises(discover.UnknownOp) as info:
        cli.choose_rows(ops, ["cuda:wgmma", "cuda:wgmmma"], across_ops=True)
    assert "'cuda:wgmmma'" in str(info.value) and "'cuda:wgmma'" not in str(info.value)
    # Ops named one by one: each must have the row.
    with pytest.raises(discover.UnknownOp) as info:
        cli.choose_rows([discover.load_op("gelu"), discover.load_op("matmul")], ["cuda:wgmma"], across_ops=False)
    assert "gelu" in str(info.value)


def test_unmatched_pattern_stops_the_run_before_any_work():
    p = run_cli("gelu", "--impls", "triton,cuda:nope", "--no-time")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "'cuda:nope'" in p.stderr and "cuda:vec" in p.stderr and "Traceback" not in p.stderr
    assert "== gelu" not in p.stdout and "building" not in p.stderr


# -- where results go


def test_filtered_and_quick_runs_go_beside_the_full_results(tmp_path, monkeypatch):
    monkeypatch.setattr(env, "ROOT", tmp_path)
    full = tmp_path / "results" / env.gpu_slug()
    assert paths.default_out_dir_and_reason(False, "gelu") == (full, "")
    for filters in (["--impls"], ["--dtypes"], ["--sizes"], ["--impls", "--dtypes"]):
        where, why = paths.default_out_dir_and_reason(False, "gelu", filters)
        assert where == full / "partial"
        assert all(f in why for f in filters) and f"results/{env.gpu_slug()}/" in why
    assert paths.default_out_dir(True, "gelu", ["--impls"]) == full / "quick"  # --quick keeps its folder
    # Another host's partial results are not overwritten either.
    (full / "partial").mkdir(parents=True)
    (full / "partial" / "gelu.json").write_text(json.dumps({"env": {"host": "some-other-host"}}))
    where, why = paths.default_out_dir_and_reason(False, "gelu", ["--impls"])
    assert where.parent == full / "partial" and "some-other-host" in why


def test_partial_results_are_gitignored_like_quick_ones():
    ignored = (env.ROOT / ".gitignore").read_text().split()
    assert "results/*/quick/" in ignored and "results/*/partial/" in ignored


def test_a_filtered_run_leaves_the_full_results_alone_and_says_where_it_wrote(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(env, "ROOT", tmp_path)
    full = tmp_path / "results" / env.gpu_slug()
    full.mkdir(parents=True)
    (full / "gelu.json").write_text(json.dumps({"env": {"host": env.describe_host()}, "full": True}))
    # 0 or 1: whether the row passes its checks is other tests' business; where its results go is this one's.
    assert cli.main(["gelu", "--impls", "triton:basic", "--dtypes", "fp32", "--no-time", "--no-capture"]) in (0, 1)
    out = capsys.readouterr().out
    assert json.loads((full / "gelu.json").read_text())["full"] is True
    written = json.loads((full / "partial" / "gelu.json").read_text())
    assert [r["impl"] for r in written["rows"]] == ["triton:basic"]
    assert "partial/gelu.json" in out and "filtered by --impls, --dtypes" in out


def existing_file_and_unwritable_folder(tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    unwritable = locked / "results"
    if cli.out_problem(unwritable) is None:  # root writes anywhere: use a folder no one can write in
        unwritable = Path("/proc/kernel-lab-results")
    return a_file, unwritable


@pytest.mark.parametrize("case", ["file", "under a file", "unwritable"])
def test_a_bad_out_folder_fails_before_any_work(tmp_path, case):
    a_file, unwritable = existing_file_and_unwritable_folder(tmp_path)
    out, words = {"file": (a_file, "is a file"), "under a file": (a_file / "sub", "which is a file"),
                  "unwritable": (unwritable, "cannot write")}[case]
    if case == "unwritable" and cli.out_problem(out) is None:
        pytest.skip("no unwritable folder on this machine")
    p = run_cli("gelu", "--out", str(out))
    assert p.returncode == 2, p.stdout + p.stderr
    assert "--out" in p.stderr and words in p.stderr and "Traceback" not in p.stderr
    assert p.stdout == "" and "building" not in p.stderr  # nothing checked, nothing built
    assert cli.out_problem(tmp_path / "new" / "folder") is None  # a folder to be made is fine


def test_sanitize_out_is_a_file_that_may_exist(tmp_path):
    report_file = tmp_path / "sanitize.json"
    report_file.write_text("{}")
    assert cli.out_problem(report_file, is_file=True) is None
    assert cli.out_problem(tmp_path / "new" / "sanitize.json", is_file=True) is None
    assert "is a folder" in cli.out_problem(tmp_path, is_file=True)
    assert "which is a file" in cli.out_problem(report_file / "x.json", is_file=True)


# -- option values


@pytest.mark.parametrize("args, words", [
    (["--row-timeout", "0"], "--row-timeout: must be a finite number of seconds > 0"),
    (["--row-timeout", "-5"], "--row-timeout: must be a finite number of seconds > 0"),
    (["--row-timeout", "soon"], "--row-timeout: 'soon' is not a number of seconds"),
    (["--sizes", "0"], "--sizes: bad size '0': every dimension must be at least 1"),
    (["--sizes", "1M,4096x0"], "--sizes: bad size '4096x0'"),
    (["--seed", "-1"], "--seed: must be 0 or more"),
])
def test_bad_option_values_are_refused_with_the_reason(args, words, capsys):
    with pytest.raises(SystemExit) as info:
        cli.make_parser().parse_args(["gelu", *args])
    assert info.value.code == 2 and words in capsys.readouterr().err


def test_good_option_values_still_parse():
    args = cli.make_parser().parse_args(["gelu", "--row-timeout", "0.5", "--sizes", "1,1M", "--seed", "0"])
    assert args.row_timeout == 0.5 and args.sizes == [(1,), (1 << 20,)] and args.seed == 0


# -- a run without a GPU says what it leaves out


def notes_for(*argv):
    args = cli.make_parser().parse_args(["gelu", *argv])
    ops = [discover.load_op("gelu")]
    return cli.cpu_run_notes(args, ops, cli.choose_rows(ops, args.impls, across_ops=False))


def test_cpu_notes_say_what_is_left_out_and_why():
    notes = "\n".join(notes_for())
    for words in ("timing", "needs a GPU", "bfloat16", "not trustworthy", "torch.compile rows", "inductor",
                  "CUDA rows", "built", "plots"):
        assert words in notes, words
    assert "ignored" not in notes
    narrow = "\n".join(notes_for("--impls", "triton", "--dtypes", "fp32,fp16", "--no-time"))
    for words in ("timing", "bfloat16", "torch.compile", "CUDA"):
        assert words not in narrow.split("leaves out", 1)[1], words  # only what this run would have done


def test_cpu_notes_name_each_ignored_option_in_one_line():
    notes = notes_for("--graph", "--profile-check", "--sizes", "1M", "--quick", "--show", "inductor")
    for option in ("--graph", "--profile-check", "--sizes", "--quick", "--show inductor"):
        assert len([n for n in notes if n.startswith(f"{option} ignored without a GPU: ")]) == 1, option


# -- quiet output, no leftovers


def test_only_the_interpreter_warnings_named_are_hidden():
    def shown(message, module):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with cli.interpreter_warnings_hidden():
                warnings.warn_explicit(message, RuntimeWarning, "x.py", 1, module=module)
        return bool(caught)

    for message in ("overflow encountered in exp", "overflow encountered in exp2", "invalid value encountered in "
                    "multiply", "divide by zero encountered in divide"):
        assert not shown(message, "triton.runtime.interpreter"), message
    assert shown("the interpreter does not support this", "triton.runtime.interpreter")
    assert shown("overflow encountered in exp", "somebody.else")
    assert shown("overflow encountered in exp", "triton.runtime.interpreter_and_more")


def test_worker_processes_get_the_same_filters():
    code = ("import warnings; warnings.warn_explicit('overflow encountered in exp', RuntimeWarning, 'x.py', 1, "
            "module='triton.runtime.interpreter'); print('done')")
    before = os.environ.get("PYTHONWARNINGS")
    with cli.interpreter_warnings_hidden():
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.stdout.strip() == "done" and "RuntimeWarning" not in p.stderr, p.stderr
    assert os.environ.get("PYTHONWARNINGS") == before


def test_cold_compile_caches_are_removed_and_a_chosen_one_is_kept(tmp_path, monkeypatch):
    from compare import caches

    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr("tempfile.tempdir", None)  # gettempdir() reads TMPDIR again
    (tmp_path / "tmp").mkdir()
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    with pytest.raises(KeyboardInterrupt):
        with caches.compile_caches(cold=True):
            made = [os.environ[name] for name in caches.COMPILE_CACHE_VARIABLES]
            for folder in made:
                os.makedirs(folder)
                assert str(tmp_path / "tmp") in folder
            raise KeyboardInterrupt
    assert list((tmp_path / "tmp").iterdir()) == []
    assert not any(name in os.environ for name in caches.COMPILE_CACHE_VARIABLES)

    chosen = tmp_path / "my-triton-cache"
    chosen.mkdir()
    monkeypatch.setenv("TRITON_CACHE_DIR", str(chosen))
    with caches.compile_caches(cold=True):
        assert os.environ["TRITON_CACHE_DIR"] == str(chosen)
        assert os.environ["TORCHINDUCTOR_CACHE_DIR"] != str(chosen)
    assert chosen.is_dir() and os.environ["TRITON_CACHE_DIR"] == str(chosen)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_kept_compile_caches_live_in_the_lab_cache_and_keep_autotuning(tmp_path, monkeypatch):
    from compare import caches

    monkeypatch.setenv("LAB_CACHE_DIR", str(tmp_path / "lab"))
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.delenv("TRITON_CACHE_AUTOTUNING", raising=False)
    with caches.compile_caches() as words:
        assert os.environ["TRITON_CACHE_DIR"] == str(tmp_path / "lab" / "triton")
        assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "lab" / "torchinductor")
        assert os.environ["TRITON_CACHE_AUTOTUNING"] == "1" and "kept between runs" in words
    assert "TRITON_CACHE_DIR" not in os.environ and "TRITON_CACHE_AUTOTUNING" not in os.environ


def test_a_first_call_is_cold_once_per_cache_and_later_runs_report_the_recorded_cold_time(tmp_path, monkeypatch):
    from compare import caches

    source = tmp_path / "k.py"
    source.write_text("x = 1\n")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    key = caches.first_call_key("triton:tuned", "float32", source, "3.6.0", "NVIDIA H200")
    assert caches.cold_first_call(key, 4.2) == (True, 4.2)  # new to this cache: this run compiled it
    assert caches.cold_first_call(key, 0.3) == (False, 4.2)  # cached: the cold time is the recorded one
    source.write_text("x = 2\n")  # an edited kernel is compiled again
    assert caches.cold_first_call(caches.first_call_key("triton:tuned", "float32", source, "3.6.0", "NVIDIA H200"),
                                  3.9) == (True, 3.9)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "another"))  # another cache knows nothing of it
    assert caches.cold_first_call(key, 5.0) == (True, 5.0)


@NO_GPU
def test_a_cpu_run_prints_no_warnings_explains_itself_once_and_leaves_no_temporary_folders(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    # An error after the caches were made must clean up too.
    p = run_cli("gelu", "--impls", "cuda:nope", TMPDIR=str(tmp))
    assert p.returncode == 2 and list(tmp.iterdir()) == []
    p = run_cli("gelu", "--impls", "triton:basic,torch", "--graph", "--quick", "--out", str(tmp_path / "out"),
                TMPDIR=str(tmp))
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr, p.stdout + p.stderr  # 1: a row failed
    assert "Warning" not in p.stderr and "Warning" not in p.stdout, p.stderr
    assert p.stdout.count("no GPU: ") == 1 and p.stdout.count("--graph ignored") == 1
    assert p.stdout.count("--quick ignored") == 1
    assert list(tmp.iterdir()) == [], list(tmp.iterdir())
    assert (tmp_path / "out" / "gelu.json").exists()  # --out as given, not a partial/ folder under it
