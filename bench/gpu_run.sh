#!/usr/bin/env bash
# Everything that needs the GPU, in one go: the GPU tests, then the full comparison of the given ops (default: all).
# Logs and a tarball of results/ are written under $OUT (or ./gpu-out) so they can be copied back and committed.
set -u -o pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
ops=${*:-all}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$OUT/nvidia-smi.txt"
python3 -m pytest -q -m gpu tests 2>&1 | tee "$OUT/pytest-gpu.log"
echo "pytest exit: ${PIPESTATUS[0]}" | tee -a "$OUT/pytest-gpu.log"
python3 -m compare $ops 2>&1 | tee "$OUT/compare.log"
echo "compare exit: ${PIPESTATUS[0]}" | tee -a "$OUT/compare.log"
tar czf "$OUT/results.tgz" --exclude=results/cpu results
