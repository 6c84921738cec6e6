"""The kernel lab's harness: discovers op specs, builds and checks every implementation, times it against the
device's ceiling, counts its lines, captures what torch.compile generates, and writes the report.

Modules, one job each: spec (what an op declares), discover (finding ops and implementations), build (CUDA via
load_inline), check (numerics), timing (events + L2 flush), count (lines of code), capture (torch.compile output),
report (tables and files), runner (one op, end to end), cli (``python -m compare``), scaffold (``compare new``).
"""
