"""bench/host_overhead.py: host time and one-call profiles of a row, on the kernels a comparison would run."""
import importlib.util
import os
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "bench" / "host_overhead.py"
_spec = importlib.util.spec_from_file_location("host_overhead", _PATH)
host_overhead = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(host_overhead)


def test_rows_run_under_the_labs_compile_caches_with_autotuning_results_kept(monkeypatch, tmp_path):
    """Autotuned afresh in its own process, a row may pick another config than the comparison timed; under the lab's
    caches it takes the comparison's pick, so a profile is of the timed kernel."""
    monkeypatch.setenv("LAB_CACHE_DIR", str(tmp_path))
    for name in ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_AUTOTUNING"):
        monkeypatch.delenv(name, raising=False)
    seen = {}

    def measure(opts):
        seen.update(opts=opts, autotuning=os.environ.get("TRITON_CACHE_AUTOTUNING"),
                    triton_cache=os.environ.get("TRITON_CACHE_DIR"))
        return 0

    monkeypatch.setattr(host_overhead, "measure", measure)
    assert host_overhead.main(["layernorm", "--impls", "triton:tile_ahead", "--dtype", "bf16", "--shape",
                               "256x65536", "--profiler-range"]) == 0
    assert seen["autotuning"] == "1"
    assert seen["triton_cache"] and Path(seen["triton_cache"]).is_relative_to(tmp_path)
    assert seen["opts"].profiler_range and seen["opts"].impls == ["triton:tile_ahead"]
    assert "TRITON_CACHE_AUTOTUNING" not in os.environ  # set for the run only
