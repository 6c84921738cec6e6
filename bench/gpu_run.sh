#!/usr/bin/env bash
# What needs the GPU, in one command:
#   bench/gpu_run.sh tests            the GPU-marked tests: those not marked sanitizer, then those (a process
#                                     under compute-sanitizer per op) in LAB_SANITIZER_JOBS pytest-xdist workers
#                                     at once (default 4; 1, or no pytest-xdist, runs them one after another)
#   bench/gpu_run.sh OP... [OPTIONS]  the full comparison of those ops (or `all`)
#   bench/gpu_run.sh --background 'OP... [OPTIONS]' ['OP... [OPTIONS]' ...]
#                                     one or more comparisons (or 'tests [PYTEST ARGS]': the GPU-marked tests, the
#                                     arguments quoted as in a shell: -k "a and b"; or
#                                     'cmd:COMMAND LINE': any command, such as a profiler over bench/host_overhead.py
#                                     --profiler-range), one after another, detached (setsid), for work longer
#                                     than one command may last. They run in a snapshot of the tree taken now
#                                     (gpu-out/background/tree/, its results/ emptied), which later commands, each
#                                     re-copying the working tree, leave alone; each writes where it would in a
#                                     checkout, so the result files name the command as it was typed
#   bench/gpu_run.sh --wait [SECONDS] then, in the next commands (while the machine is still held): wait up to
#                                     SECONDS (default 540: 9 minutes), then collect whatever has been written so
#                                     far (the log says whether every run has finished). Give it fewer seconds
#                                     than the command's own limit leaves, less the seconds the collecting takes:
#                                     a command cut off while it waits brings nothing back
#   bench/gpu_run.sh --for SECONDS 'RUN' ['RUN' ...]
#                                     --background and --wait in one command: the runs start, and after at most
#                                     SECONDS (or once all are done) what they wrote so far is collected, so nothing
#                                     depends on the machine still being held for a later command; runs not finished
#                                     by then go on, for a --wait while the machine is held
# Logs and a tarball of results/ go to $OUT (default ./gpu-out), from where the results are unpacked into the
# repository and committed. Where the tree is a copy without .git, set LAB_GIT_REVISION to its commit so the
# reports name it.
set -u -o pipefail
OUT=${OUT:-$PWD/gpu-out}
JOB=$PWD/gpu-out/background  # survives between commands on the same machine ($OUT is emptied before each)
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
# Python's bytecode cache, written. On the lent machines many installed modules have no .pyc files and Python writes
# none, so every fresh interpreter (the run's own, the rows' fork server, a spawned process) compiles them from
# source, seconds each time, where a pip install writes them once: a profile of a warm gelu run's parent found most
# of the modules it imported compiled from source and no .pyc written. The first run on a machine fills this folder.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-$HOME/.cache/kernel-lab/pycache}

gpu_tests() {  # pytest arguments; returns the worse of the two passes' statuses
  local jobs=${LAB_SANITIZER_JOBS:-4} parallel=() first second
  if [ "$jobs" -gt 1 ] && python3 -c "import xdist" 2>/dev/null; then parallel=(-n "$jobs"); fi
  # -v: each test's name as it ends, so a log collected before the suite ends still says which ran
  python3 -m pytest -v --durations=15 -m "gpu and not sanitizer" -p no:cacheprovider tests "$@"
  first=$?
  python3 -m pytest -v --durations=15 -m "gpu and sanitizer" -p no:cacheprovider "${parallel[@]}" tests "$@"
  second=$?
  # 5 is pytest's "no test selected" (a -k that picks no test of one pass): the other pass's status stands
  if [ "$first" -eq 5 ]; then return "$second"; fi
  if [ "$second" -eq 5 ] || [ "$first" -gt "$second" ]; then return "$first"; fi
  return "$second"
}
export -f gpu_tests

collect() {
  tar czf "$OUT/results.tgz" --exclude=results/cpu results
}

start_background() {
  mkdir -p "$JOB"
  if [ -e "$JOB/pid" ] && [ ! -e "$JOB/done" ] && kill -0 "$(cat "$JOB/pid")" 2>/dev/null; then
    echo "error: the runs started earlier are still going ($JOB/runs); collect them with bench/gpu_run.sh --wait," \
         "or stop them: kill -- -$(cat "$JOB/pid")" >&2
    exit 2
  fi
  rm -rf "$JOB/done" "$JOB/tree" "$JOB/compare.log"
  mkdir -p "$JOB/tree/results"  # results/ itself, emptied: a run may write its own folder there (--out results/x)
  tar cf - --exclude=./gpu-out --exclude=./results --exclude=./.git . | tar xf - -C "$JOB/tree"
  printf '%s\n' "$@" > "$JOB/runs"
  # Word splitting of each line is wanted: a line is one command line of options.
  setsid bash -c 'cd "'"$JOB"'/tree" && while read -r run; do
      start=$(date +%s)
      case "$run" in
        tests*) echo "== GPU tests ${run#tests}: python3 -m pytest -v -m \"gpu and not sanitizer\", then -m \"gpu and sanitizer\"" >> "'"$JOB"'/compare.log"
                eval "gpu_tests ${run#tests}" >> "'"$JOB"'/compare.log" 2>&1 ;;
        cmd:*) echo "== ${run#cmd:}" >> "'"$JOB"'/compare.log"
               bash -c "${run#cmd:}" >> "'"$JOB"'/compare.log" 2>&1 ;;
        *) echo "== python3 -m compare $run" >> "'"$JOB"'/compare.log"
           python3 -m compare $run >> "'"$JOB"'/compare.log" 2>&1 ;;
      esac
      echo "compare exit: $? after $(( $(date +%s) - start )) s" >> "'"$JOB"'/compare.log"
    done < "'"$JOB"'/runs"; touch "'"$JOB"'/done"' < /dev/null > /dev/null 2>&1 &
  echo $! > "$JOB/pid"
}

wait_and_collect() {  # at most $1 seconds
  if [ ! -e "$JOB/pid" ]; then
    # A fresh machine (the one that ran --background went back when idle): nothing to wait for, so say so at once
    # rather than spend the device time of a whole wait
    echo "error: no runs were started on this machine ($JOB/pid is missing): the machine that ran them has gone" \
         "back, and what they wrote with it; start them again (bench/gpu_run.sh --for SECONDS 'RUN' ...)" >&2
    exit 2
  fi
  local deadline=$(( $(date +%s) + $1 ))
  while [ ! -e "$JOB/done" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 1; done
  cp "$JOB/compare.log" "$OUT/compare.log" 2>/dev/null
  [ -d "$JOB/tree/results" ] && tar czf "$OUT/results.tgz" -C "$JOB/tree" --exclude=results/cpu results
  grep "compare exit" "$JOB/compare.log"
  if [ -e "$JOB/done" ]; then
    echo "all runs finished"
  else
    echo "still running; call bench/gpu_run.sh --wait again within 30 s (the machine goes back when idle)"
    tail -n 3 "$JOB/compare.log"
  fi
}

case "${1:-}" in
  tests)
    shift
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee -a "$OUT/nvidia-smi.txt"
    gpu_tests "$@" 2>&1 | tee "$OUT/pytest-gpu.log"
    echo "pytest exit: ${PIPESTATUS[0]}" | tee -a "$OUT/pytest-gpu.log"
    ;;
  --background)
    shift
    start_background "$@"
    echo "started in the background: $*; follow with: bench/gpu_run.sh --wait"
    ;;
  --wait)
    limit=${2:-540}
    case "$limit" in
      ''|*[!0-9]*) echo "error: --wait takes a number of seconds, not '$limit'" >&2; exit 2 ;;
    esac
    wait_and_collect "$limit"
    ;;
  --for)
    limit=${2:?--for SECONDS 'RUN' ...}
    shift 2
    start_background "$@"
    wait_and_collect "$limit"
    ;;
  *)
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee -a "$OUT/nvidia-smi.txt"
    start=$(date +%s)
    python3 -m compare "${@:-all}" 2>&1 | tee "$OUT/compare.log"
    echo "compare exit: ${PIPESTATUS[0]} after $(( $(date +%s) - start )) s" | tee -a "$OUT/compare.log"
    collect
    ;;
esac
