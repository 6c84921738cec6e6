#!/usr/bin/env bash
# What needs the GPU, in one command: `bench/gpu_run.sh tests` runs the GPU-marked tests; `bench/gpu_run.sh OP...`
# (or `all`) runs the full comparison of those ops. Logs and a tarball of results/ go to $OUT (default ./gpu-out),
# from where the results are unpacked into the repository and committed. Where the tree is a copy without .git, set
# LAB_GIT_REVISION to its commit so the reports name it.
set -u -o pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee -a "$OUT/nvidia-smi.txt"
if [ "${1:-}" = tests ]; then
  shift
  python3 -m pytest -q -m gpu -p no:cacheprovider tests "$@" 2>&1 | tee "$OUT/pytest-gpu.log"
  echo "pytest exit: ${PIPESTATUS[0]}" | tee -a "$OUT/pytest-gpu.log"
else
  start=$(date +%s)
  python3 -m compare "${@:-all}" 2>&1 | tee "$OUT/compare.log"
  echo "compare exit: ${PIPESTATUS[0]} after $(( $(date +%s) - start )) s" | tee -a "$OUT/compare.log"
  tar czf "$OUT/results.tgz" --exclude=results/cpu results
fi
