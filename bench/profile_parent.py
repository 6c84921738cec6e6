"""Where a run's parent process spends its time, function by function: `python -m compare ARGS` under cProfile.

    python bench/profile_parent.py OUT.prof ARGS...
    python -c "import pstats; pstats.Stats('OUT.prof').sort_stats('tottime').print_stats(30)"

A run's phase table says which phase took the time; this says which functions of the parent did. The rows' workers
are other processes and are not profiled: their calls show here as the parent waiting for a reply
(compare/isolate.py, Worker._reply). Waits on the GPU show in whatever synchronizes first: .tolist(), .item(), a
tensor made from host data. Run it on a warm cache (a run before it), or the profile is mostly compilation.
"""
import cProfile
import os
import runpy
import sys

if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    sys.argv = ["compare", *sys.argv[2:]]
    sys.path.insert(0, os.getcwd())  # the checkout, where `python -m compare` finds the harness
    cProfile.run('runpy.run_module("compare", run_name="__main__", alter_sys=True)', out)
