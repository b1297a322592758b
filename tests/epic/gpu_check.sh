#!/bin/bash
# On a GPU machine: what proves EPIC's validation there. Phases (arguments, default all):
#   build    the GPU steps, 07_sample_trips's and 12_tensor_dft's known-wrong builds and the error tools
#   mutants  07's and 12's mutants at tiny, small and large: each must fail validation, the
#            zero-baseline check among what says so (tests/epic/meson.build)
#   steps    every GPU step at tiny, small and large with --check: each must pass (10 and 11 at
#            128 x 128); the verdict lines go to the log
#   tests    every test that names a GPU step of epic (the imaging paths, refusals, flags)
#   errors   the error tools: each step's worst zero-baseline error and the channels' and
#            gulps' separations, the figures behind power_threshold
# Logs to $OUT (default /tmp/epic-gpu-check); exit 1 if anything failed.
# Usage (repo root): OUT=/tmp/out BUILD=/tmp/b tests/epic/gpu_check.sh [PHASE...]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/epic-gpu-check}
B=${BUILD:-$ROOT/build-gpu-epic}
mkdir -p "$OUT"
phases=" ${*:-build mutants steps tests errors} "
has() { [[ "$phases" == *" $1 "* ]]; }
for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do [ -x "$d/nvcc" ] && { export PATH="$d:$PATH"; break; }; done
steps="01_gpu_pipeline 02_gather_grid 03_multiply_accumulate 04_gpu_batched 05_fused 06_occupied_columns 07_sample_trips 08_pol_pairs 09_fused_half 10_cluster_128 11_folded_128 12_tensor_dft"
mutants="zero_channel swap_channels duplicate_channel drop_gulp repeat_gulp unsquared_correction"
status=0
# The tests whose names match a pattern (meson lists "SUITE / NAME" or "SUITE - PROJECT:NAME").
test_names() {
  local names
  names=$(meson test -C "$B" --list 2>/dev/null | awk '{print $NF}' | sed 's/^.*://' | grep -E "$1")
  [ -n "$names" ] || { echo "no test matches $1" >&2; return 1; }
  echo "$names"
}

if has build; then
  targets=""
  for s in $steps; do targets+=" epic_$s epic_power_errors_$s"; done
  for m in $mutants; do targets+=" epic_mutant_07_sample_trips_$m epic_mutant_12_tensor_dft_$m"; done
  { [ -f "$B/build.ninja" ] || meson setup "$B" "$ROOT"; } > "$OUT/build.log" 2>&1 \
    && meson compile -C "$B" $targets >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
  echo "build ok"
fi

if has mutants; then
  names=$(test_names '^epic_mutant_(07_sample_trips|12_tensor_dft)_') || exit 1
  meson test -C "$B" --no-rebuild --print-errorlogs --num-processes 4 $names > "$OUT/mutants.log" 2>&1 || status=1
  grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Timeout):" "$OUT/mutants.log"
fi

if has steps; then
  for size in tiny small large; do
    for s in $steps; do
      extra=""; case $s in 07_*|08_*) extra="--image-size 128";; esac
      "$B/steps/epic/epic_$s" --size $size $extra --check --repeat 1 --warmup 0 > "$OUT/step.txt" 2>&1
      rc=$?
      [ $rc -eq 0 ] || status=1
      echo "== $s $size $extra: exit $rc" >> "$OUT/steps.log"
      grep -E "check |power |FAILED" "$OUT/step.txt" >> "$OUT/steps.log"
      echo "$s $size: exit $rc; $(grep -o 'power   [A-Z]*.*' "$OUT/step.txt" | cut -c1-150)"
    done
  done
  rm -f "$OUT/step.txt"
fi

if has tests; then
  names=$(test_names 'epic_0[1-8]_') || exit 1
  meson test -C "$B" --no-rebuild --print-errorlogs --num-processes 4 $names > "$OUT/tests.log" 2>&1 || status=1
  grep -E "^ *[0-9]+/[0-9]+ .*(FAIL|SKIP|TIMEOUT)|^(Ok|Fail|Skipped|Timeout):" "$OUT/tests.log"
fi

if has errors; then
  for s in $steps; do
    extra=""; case $s in 07_*|08_*) extra="--image-size 128";; esac
    "$B/tests/epic/epic_power_errors_$s" $extra >> "$OUT/errors.log" 2>&1 || status=1
  done
  grep -E "^step|^worst" "$OUT/errors.log"
fi
exit $status
