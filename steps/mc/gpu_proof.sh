#!/bin/bash
# The MC track's proof on a GPU machine, in one go: build the MC programs outside the
# checkout, run their tests, compute-sanitizer, and the benchmarks. Results (JSONL) and logs
# go to $OUT. Phases to run are the arguments (default: all):
#   build test sanitize ladder sizes tune profile
# Usage (repo root): OUT=/tmp/out steps/mc/gpu_proof.sh [PHASE...]
set -u
OUT=${OUT:-/tmp/mc-out}
B=${BUILD:-/tmp/mc-build}
mkdir -p "$OUT"
phases=${*:-build test sanitize ladder sizes tune profile}
has() { [[ " $phases " == *" $1 "* ]]; }
S=$B/steps/mc
# Results files are named after the GPU: mc-h100.jsonl, mc-h200.jsonl, ...
DEVICE_TAG=${DEVICE_TAG:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -o 'H[0-9]*' | tr 'A-Z' 'a-z')}
DEVICE_TAG=${DEVICE_TAG:-gpu}
gpu_steps="02_gpu_naive 03_gpu_tallies 04_gpu_rng_direction 05_gpu_tuned 06_hybrid 07_radial_walk"
targets="mc_00_cpu mc_01_cpu_omp mc_unit_tests mc_radial_walk mc_mutant_wrong_disk mc_mutant_no_reweight mc_mutant_mu_forward"
for s in $gpu_steps; do targets="$targets mc_$s"; done

if has build; then
  { meson setup "$B" >/dev/null && meson compile -C "$B" $targets; } > "$OUT/mc-build.log" 2>&1 \
    || { tail -50 "$OUT/mc-build.log"; exit 1; }
  echo "build ok"
fi

if has test; then
  tests="mc_unit mc_mutant_wrong_disk_fails_validation mc_mutant_no_reweight_fails_validation"
  tests="$tests mc_mutant_mu_forward_fails_validation mc_radial_walk_passes_validation"
  tests="$tests mc_cpu_steps_identical_output mc_06_hybrid_cpu_side_is_00"
  for s in 00_cpu 01_cpu_omp $gpu_steps; do tests="$tests mc_${s}_tiny"; done
  for s in $gpu_steps; do tests="$tests mc_${s}_reproducible"; done
  meson test -C "$B" --no-rebuild $tests > "$OUT/mc-test.log" 2>&1
  grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Expected Fail):" "$OUT/mc-test.log"
fi

if has sanitize; then
  for s in $gpu_steps; do
    for tool in memcheck racecheck synccheck initcheck; do
      log="$OUT/mc-sanitize.log"
      echo "== $tool mc_$s" >> "$log"
      timeout ${SAN_TIMEOUT:-300} compute-sanitizer --tool $tool --error-exitcode 9 "$S/mc_$s" --size tiny --repeat 1 --warmup 0 --check --quiet >> "$log" 2>&1
      echo "$tool mc_$s exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)"
    done
  done
fi

if has ladder; then
  "$S/mc_00_cpu" --size small --repeat 1 --warmup 0 --json "$OUT/mc-${DEVICE_TAG:-h100}.jsonl" --quiet || echo "FAILED 00_cpu small"
  for s in 01_cpu_omp $gpu_steps; do
    "$S/mc_$s" --size small --repeat 3 --warmup 1 --json "$OUT/mc-${DEVICE_TAG:-h100}.jsonl" --quiet || echo "FAILED $s small"
  done
  for s in $gpu_steps; do
    "$S/mc_$s" --size large --repeat 3 --warmup 1 --json "$OUT/mc-${DEVICE_TAG:-h100}.jsonl" --quiet || echo "FAILED $s large"
  done
fi

if has sizes; then
  for e in $(seq 14 30); do
    n=$((1 << e))
    for s in 05_gpu_tuned 06_hybrid 07_radial_walk; do
      "$S/mc_$s" --photons $n --repeat 3 --warmup 1 --tag sizes --json "$OUT/mc-${DEVICE_TAG:-h100}-sizes.jsonl" --quiet || echo "FAILED $s 2^$e"
    done
    if [ "$e" -le "${CPU_MAX_LOG2:-26}" ]; then
      "$S/mc_01_cpu_omp" --photons $n --repeat 1 --warmup 0 --tag sizes --json "$OUT/mc-${DEVICE_TAG:-h100}-sizes.jsonl" --quiet || echo "FAILED 01 2^$e"
    fi
  done
fi

if has tune; then  # exactly what `./stepwise tune mc STEP` runs (the steps' sweep.json)
  for s in ${TUNE_STEPS:-05_gpu_tuned 07_radial_walk}; do
    for t in 32 64 128 256 512; do
      for p in 1 2 4 8 16 32 64 128 256 512 1024 2048; do
        "$S/mc_$s" --size large --repeat 3 --warmup 1 --threads $t --photons-per-thread $p \
          --tag tune --json "$OUT/mc-${DEVICE_TAG:-h100}-tune.jsonl" --quiet || echo "FAILED tune $s $t $p"
      done
    done
  done
fi

if has profile; then  # instructions per interaction of the tuned kernels, 3D (05) and in r (07)
  for s in 05_gpu_tuned 07_radial_walk; do
    n=${s%%_*}
    ncu --clock-control none --kernel-name transport --launch-skip 1 --launch-count 1 \
      --metrics smsp__inst_executed.sum,smsp__thread_inst_executed.sum,sm__cycles_elapsed.avg,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_alu.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_lsu.sum,gpu__time_duration.sum \
      "$S/mc_$s" --photons $((1 << 28)) --repeat 1 --warmup 1 --quiet > "$OUT/mc-$n-ncu.txt" 2>&1
    echo "== $s"; grep -E "smsp__|sm__|gpu__" "$OUT/mc-$n-ncu.txt"
    cuobjdump -sass "$S/mc_$s" > "$OUT/mc-$n-sass.txt" 2>&1 && echo "sass: $(grep -c '^ */\*[0-9a-f]*\*/' "$OUT/mc-$n-sass.txt") lines"
  done
fi

# A short table last: the ladder, then one line per sweep file.
python3 - "$OUT" "$DEVICE_TAG" <<'PY'
import glob, json, os, sys
out, tag = sys.argv[1:3]
for path in sorted(glob.glob(os.path.join(out, f"mc-{tag}*.jsonl"))):
    rows = [json.loads(l) for l in open(path)]
    name = os.path.basename(path)
    if name == f"mc-{tag}.jsonl":
        for r in rows:
            v = r["validation"]
            print(f'{r["step"]:22s} {r["problem"]["name"]:6s} {r["throughput"]["value"]:12.0f} photons/ms  '
                  f'p={v["chi2"]["p_value"]:.3g} energy z={v["energy"]["z"]:.2f} {"PASS" if v["pass"] else "FAIL"}')
    else:
        best = max(rows, key=lambda r: r["throughput"]["value"])
        print(f'{name}: {len(rows)} records, {sum(r["validation"]["pass"] for r in rows)} pass; best {best["step"]} '
              f'{best["params"]} n={best["work"]["count"]} {best["throughput"]["value"]:.0f} photons/ms')
PY
