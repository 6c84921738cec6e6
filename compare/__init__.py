"""The kernel lab's harness: discovers op specs, builds and checks every implementation, times it against the
device's ceiling, counts its lines, captures what torch.compile generates, and writes the report.

Modules, one job each (README.md, "Layout", lists the same; tests/test_layout.py keeps the two lists and this folder
in step): spec (what an op declares), discover (finding ops and rows, without running them), passes (an op with a
gradient as the ops of its forward, backward and forward+backward), ladder (each kernel file's version map, and what
each step bought), schedule (what a row is put through), runner (the parent: drives each row, judges it), results
(what a run produces and the report reads), worker (the process that runs one row), isolate (worker processes),
fanout (rows over several GPUs of a host), cluster (rows as Ray tasks), check (the judge: reference and comparison),
one_pass (the judge's figures for a passing output in one pass on the GPU), layouts (non-contiguous inputs), timing
(events + L2 flush), accounting (kernels launched, plausible speeds), sanitize (compute-sanitizer), build (CUDA via
load_inline), caches (compile caches kept between runs, cold first calls), callgraph (what code a row reaches),
count (lines of code), capture (torch.compile output), report (tables and files), paths (where results go without
--out), summary (results/README.md, across ops and GPUs), targets (an op's goals, judged on its results), progress
(the progress line), cli (``python -m compare``), scaffold (``compare new``), validate (input checks that rows use),
env (paths, machine).
"""
