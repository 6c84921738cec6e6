"""Where a run's parent process spends its time, function by function: `python -m compare ARGS` under cProfile.

    python bench/profile_parent.py OUT.prof ARGS...
    python -c "import pstats; pstats.Stats('OUT.prof').sort_stats('tottime').print_stats(30)"
    python bench/profile_parent.py --gpu OUT.txt ARGS...

A run's phase table says which phase took the time; this says which functions of the parent did. The rows' workers
are other processes and are not profiled: their calls show here as the parent waiting for a reply
(compare/isolate.py, Worker._reply). Waits on the GPU show in whatever synchronizes first: .tolist(), .item(), a
tensor made from host data. With --gpu the run is under torch.profiler instead, and OUT.txt gets the parent's own
GPU work (the judge's references and comparisons, the inputs it makes), by kernel and by the torch op that launched
it: what the GPU was doing while the host waited. Run either on a warm cache (a run before it), or the profile is
mostly compilation.
"""
import cProfile
import os
import runpy
import sys


def _run_compare():
    runpy.run_module("compare", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    gpu = sys.argv[1:2] == ["--gpu"]
    args = sys.argv[2:] if gpu else sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    out = args[0]
    sys.argv = ["compare", *args[1:]]
    sys.path.insert(0, os.getcwd())  # the checkout, where `python -m compare` finds the harness
    if not gpu:
        cProfile.run("_run_compare()", out)
    else:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            try:
                _run_compare()
            except SystemExit:
                pass
        table = prof.key_averages()
        with open(out, "w") as f:
            f.write("By GPU time (the parent's kernels):\n")
            f.write(table.table(sort_by="self_device_time_total", row_limit=40) + "\n")
            f.write("By host time:\n")
            f.write(table.table(sort_by="self_cpu_time_total", row_limit=40) + "\n")
