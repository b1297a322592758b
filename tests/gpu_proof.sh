#!/bin/bash
# What proves a change on a GPU machine, in one go: build outside the checkout, the whole test
# suite (no SKIP may remain but those without data), all four compute-sanitizer tools on every
# GPU step, and the benchmarks whose records go to report/results/. Results (JSONL) and logs
# go to $OUT, named after the GPU (mri-h200.jsonl, ...). Phases are the arguments:
#   build test sanitize ladder same recon remeasure mc-sizes mc-tune mc-profile gridding-peer
#   (default: the first four)
# Usage (repo root): OUT=/tmp/out tests/gpu_proof.sh [PHASE...]
# A copy whose .git is not the checkout's names its commit in .stepwise-commit (git-ignored:
# send it with the tree, e.g. `git rev-parse --short HEAD > .stepwise-commit`), or the records
# say what that other .git describes. A copy laid over an older tree: send `git ls-files >
# .stepwise-files` too, and the files the commit no longer has are removed first.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/stepwise-out}
B=${BUILD:-/tmp/stepwise-build}
export STEPWISE_BUILD=$B STEPWISE_NO_INSTALL=1
mkdir -p "$OUT"
phases=" ${*:-build test sanitize ladder} "
phases=${phases/ ladder / ladder-mri ladder-mc ladder-epic ladder-ae probe }
has() { [[ " $phases " == *" $1 "* ]]; }
# LADDER_SKIP="mri/00_cpu/small mri/02_scatter_atomic/large ...": ladder runs left out (recorded elsewhere).
skip() { [[ " ${LADDER_SKIP:-} " == *" $1 "* ]] && echo "skipped $1 (LADDER_SKIP)"; }
JOBS=${JOBS:-8}  # sanitizer runs at a time (tiny problems: the GPU has room for several)
for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do [ -x "$d/nvcc" ] && { export PATH="$d:$PATH"; break; }; done
# The tag is the model number in the GPU's name ("NVIDIA H100 80GB HBM3" -> h100): one word, or
# the files would not come back from the machine under a usable name.
DEVICE_TAG=${DEVICE_TAG:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -o '\b[A-Z][0-9][0-9]*\b' | head -1 | tr 'A-Z' 'a-z')}
DEVICE_TAG=${DEVICE_TAG:-gpu}
# Builds name the commit they come from; a copy of the tree without .git reads .stepwise-commit.
[ -f "$ROOT/.stepwise-commit" ] && export STEPWISE_COMMIT=$(cat "$ROOT/.stepwise-commit")
# A copy laid over an older checkout keeps the files the commit has since deleted or renamed (a
# renamed step's old folder is then a step of its own). With the commit's file list beside it
# (`git ls-files > .stepwise-files`, git-ignored), every other file outside build folders and
# .git goes first.
if [ -f "$ROOT/.stepwise-files" ]; then
  # Both lists in C order, and comm in C order too: in another locale comm matches nothing and
  # would call every file stale.
  stale=$(cd "$ROOT" && LC_ALL=C comm -23 \
            <(find . \( -path './build*' -o -path ./.git -o -path ./.data \) -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort) \
            <(LC_ALL=C sort .stepwise-files) | grep -vx -e .stepwise-files -e .stepwise-commit)
  # A list that would remove a file the tree cannot lack is the list's fault: stop, remove nothing.
  if grep -qx -e meson.build -e stepwise <<< "$stale"; then
    echo "gpu_proof.sh: .stepwise-files does not list meson.build or stepwise; removed nothing" >&2
    exit 2
  fi
  ( cd "$ROOT" && [ -n "$stale" ] && while IFS= read -r f; do rm -f -- "$f"; echo "removed $f (not in .stepwise-files)"; done <<< "$stale"
    find steps common tests labs report -type d -empty -delete )
fi


# GPU step programs: every step whose main file (the nearest along its chain) is a .cu file,
# as TRACK ID pairs (steps/rungs.py list: TRACK ID KIND PARENT HOW DEPTH).
gpu_steps() { python3 "$ROOT/steps/rungs.py" list | awk '$3 == "gpu" { print $1, $2 }'; }
is_gpu() { python3 "$ROOT/steps/rungs.py" list "$1" | awk -v id="$2" '$2 == id { f = $3 == "gpu" } END { exit !f }'; }

if has build; then
  { { [ -f "$B/build.ninja" ] || meson setup "$B" "$ROOT"; } && meson compile -C "$B"; } > "$OUT/build.log" 2>&1 \
    || { tail -50 "$OUT/build.log"; exit 1; }
  echo "build ok"
fi

if has test; then
  timeout "${TEST_TIMEOUT:-900}" meson test -C "$B" --no-rebuild --print-errorlogs > "$OUT/test.log" 2>&1
  grep -E "^ *[0-9]+/[0-9]+ .*(FAIL|SKIP|TIMEOUT)|^(Ok|Fail|Skipped|Expected Fail|Timeout):" "$OUT/test.log"
fi

if has sanitize; then  # every GPU step, tiny, each tool; mri runs both kernels; JOBS at a time
  log="$OUT/sanitize.log"
  work=$(mktemp -d)
  # SAN_TRACKS="ae epic": those tracks only (a call of ten minutes holds about one track).
  gpu_steps | while read -r track id; do
    [ -n "${SAN_TRACKS:-}" ] && [[ " $SAN_TRACKS " != *" $track "* ]] && continue
    kernels=(""); [ "$track" = mri ] && kernels=(fhd q)
    for k in "${kernels[@]}"; do
      for tool in memcheck racecheck synccheck initcheck; do echo "$tool ${track}_$id${k:+ $k}"; done
    done
  done > "$work/jobs"
  export B work ROOT
  xargs -P "$JOBS" -L 1 bash -c '
    tool=$0 prog=$1 k=${2:-}; track=${prog%%_*}; f="$work/$tool.$prog.$k.log"
    pad=""; [ $tool = memcheck ] && pad="--padding 4096"  # a write past one array must not land in the next
    # The cuDNN timed search runs every algorithm of every shape; under initcheck each of those
    # library kernels is instrumented and the run outlasts any limit. initcheck of ae_09 takes
    # the heuristics path (--algo-search 0): our kernels are all checked, and the library
    # kernels it picks too. memcheck, racecheck and synccheck keep the timed search.
    extra=""; [ $tool = initcheck ] && [ $prog = ae_15_cudnn ] && extra="--algo-search 0"
    # ncclCommInitRank asks cudaFuncGetAttributes about kernels NCCL did not build for this GPU
    # and goes on when told there are none: an API error the sanitizer would count. The
    # multi-GPU steps (they include core/communicator.cuh) are checked without API errors;
    # memory errors are reported as for every step.
    api=""; python3 "$ROOT/steps/rungs.py" expand "$track" "${prog#*_}" | grep -qs "core/communicator.cuh" && api="--report-api-errors no"
    # racecheck instruments every shared-memory access: the 128 x 128 GEMM tiles of ae 09-14 take
    # it minutes on tiny beside seven other runs, so it gets longer (RACE_TIMEOUT).
    limit=${SAN_TIMEOUT:-300}; [ $tool = racecheck ] && limit=${RACE_TIMEOUT:-900}
    timeout "$limit" compute-sanitizer --tool $tool $pad $api --error-exitcode 9 \
      "$B/steps/$track/$prog" --size tiny ${k:+--kernel $k} $extra --repeat 1 --warmup 0 --check --quiet > "$f" 2>&1
    echo "$tool $prog $k: exit $? $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$f" | tail -1)" > "$f.summary"' < "$work/jobs"
  : > "$log"
  while read -r tool prog k; do
    f="$work/$tool.$prog.$k.log"
    echo "== $tool $prog $k" >> "$log"; cat "$f" >> "$log" 2>/dev/null
    cat "$f.summary" 2>/dev/null || echo "$tool $prog $k: not run"
  done < "$work/jobs" | tee -a "$log" | grep -v ": exit 0 " || true
  echo "sanitize: $(grep -c ': exit 0 ' "$log") of $(wc -l < "$work/jobs") runs clean"
  rm -rf "$work"
fi

for track in mri mc; do  # every step on small, the GPU steps on large too (mri 02 large: ~1 min a run)
  has ladder-$track || continue
  # The CPU steps once: they are the host's row, not the GPU's, and take seconds a run.
  for id in $(cd "$ROOT/steps/$track" && ls -d [0-9][0-9]_*/ | tr -d /); do
    runs="--repeat 3"; is_gpu "$track" "$id" || runs="--repeat 1 --warmup 0"
    skip "$track/$id/small" && continue
    kernels=(""); [ "$track" = mri ] && kernels=(fhd q)
    for k in "${kernels[@]}"; do
      "$B/steps/$track/${track}_$id" --size small ${k:+--kernel $k} $runs --check --quiet \
        --json "$OUT/$track-$DEVICE_TAG.jsonl" || echo "FAILED ${track}_$id small $k"
    done
  done
  gpu_steps | while read -r t id; do
    [ "$t" = "$track" ] || continue
    skip "$t/$id/large" && continue
    # Steps whose large run takes over 5 s (mri 02, 05, 06) run once: a warm-up adds nothing there.
    runs="--repeat 3"
    case $t/$id in mri/02_*|mri/05_*|mri/06_*) runs="--repeat 1 --warmup 0" ;; esac
    kernels=(""); [ "$t" = mri ] && kernels=(fhd q)
    for k in "${kernels[@]}"; do
      "$B/steps/$t/${t}_$id" --size large ${k:+--kernel $k} $runs --check --quiet \
        --json "$OUT/$track-$DEVICE_TAG.jsonl" || echo "FAILED ${t}_$id large $k"
    done
  done
done

if has ladder-epic; then  # small and large, the CPU imager once a size; 64 x 64, then 128 x 128
  # for the steps that image it (00-04 any size, 05-09 64 only, 10-11 128 only)
  for n in 64 128; do
    for size in small large; do
      for id in $(cd "$ROOT/steps/epic" && ls -d [0-9][0-9]_*/ | tr -d /); do
        case $n/$id in 64/10_*|64/11_*|128/0[5-9]_*) continue ;; esac
        runs="--repeat 3"; [ "$id" = 00_cpu ] && runs="--repeat 1 --warmup 0"
        sky=""; case $n/$size/$id in 64/large/07_*|128/large/10_*) sky="--sky" ;; esac  # the report's sky images
        "$B/steps/epic/epic_$id" --size $size --image-size $n $runs $sky --check --quiet --json "$OUT/epic-$DEVICE_TAG.jsonl" \
          || echo "FAILED epic_$id $size $n"
      done
    done
    # The GPU steps from 02 on over 4 gulps (04 on: the copies overlapped; 02 and 03 copy in
    # line, 04's baseline), and the fused steps over 16 (the steady state): the report's
    # large-gulps4 and large-gulps16 tables.
    for id in $(cd "$ROOT/steps/epic" && ls -d [0-9][0-9]_*/ | tr -d /); do
      case $n/$id in */00_*|*/01_*|64/10_*|64/11_*|128/0[5-9]_*) continue ;; esac
      for gulps in 4 16; do
        case $gulps/$id in 16/0[2-4]_*|16/10_*) continue ;; esac
        [ $gulps = 16 ] && [ $n = 128 ] && continue
        "$B/steps/epic/epic_$id" --size large --gulps $gulps --image-size $n --repeat 3 --quiet \
          $([ $gulps = 4 ] && echo --check) --json "$OUT/epic-$DEVICE_TAG.jsonl" || echo "FAILED epic_$id large $n $gulps gulps"
      done
    done
  done
fi

if has ladder-ae; then  # steps on small; the GPU step and the PyTorch peer on a 50,000-image epoch, batch 64 and 256
  # The peer first (a call cut short by its time limit still has it), on the steps' own images,
  # so that its loss curve compares with theirs.
  "$B/datasets/ae_dataset" --size large --out /tmp/ae-large-images.npy > /dev/null
  PYTHONUNBUFFERED=1 timeout "${AE_TIMEOUT:-240}" python3 "$ROOT/steps/ae/pytorch/peer.py" --json "$OUT/ae-$DEVICE_TAG.jsonl" \
    --images-npy /tmp/ae-large-images.npy \
    > "$OUT/ae-peer.log" 2>&1 || { echo "FAILED ae peer"; tail -20 "$OUT/ae-peer.log"; }
  for id in $(cd "$ROOT/steps/ae" && ls -d [0-9][0-9]_*/ | tr -d /); do
    runs="--repeat 3"; is_gpu ae "$id" || runs="--repeat 1 --warmup 0"
    "$B/steps/ae/ae_$id" --size small $runs --check --quiet --json "$OUT/ae-$DEVICE_TAG.jsonl" || echo "FAILED ae_$id small"
  done
  gpu_steps | while read -r t id; do
    [ "$t" = ae ] || continue
    for batch in 64 256; do
      images=""; [ $batch = 64 ] && images="--record-images 8"  # the report's reconstruction grid (173 KB a record)
      timeout "${AE_TIMEOUT:-240}" "$B/steps/ae/ae_$id" --size large --batch $batch --repeat 1 --warmup 0 --check --quiet \
        $images --json "$OUT/ae-$DEVICE_TAG.jsonl" || echo "FAILED ae_$id large batch $batch"
    done
  done
fi

if has recon; then  # the reconstruction's quality table (steps/mri/recon): its default problem,
  # gridding, then least squares with F^H d and Q by each CPU reference and each GPU step; and
  # gridding's accuracy by kernel width (CPU double, against the direct sum)
  R="$OUT/mri-$DEVICE_TAG-recon.jsonl"
  "$B/steps/mri/recon/mri_recon" --method gridding --quiet --json "$R" || echo "FAILED recon gridding"
  for s in ${RECON_STEPS:-cpu-double cpu-single $(cd "$ROOT/steps/mri" && ls -d [0-9][0-9]_*/ | tr -d / | grep -v -e '^0[01]_' -e '^11_')}; do
    "$B/steps/mri/recon/mri_recon" --fhd-step $s --q-step $s --solver gpu --quiet --json "$R" || echo "FAILED recon $s"
  done
  for solver in cpu gpu; do  # the two solvers on the same sums: the solver's time
    "$B/steps/mri/recon/mri_recon" --fhd-step nufft --q-step nufft --solver $solver --tag solver-$solver --quiet --json "$R" \
      || echo "FAILED recon solver $solver"
  done
  # Paper scale: 64^3 voxels, 3.2 M samples, Q on 128^3 by the fastest exact step, CG on the GPU.
  "$B/steps/mri/recon/mri_recon" --size large --fhd-step 10_phase_recurrence --q-step 10_phase_recurrence --solver gpu \
    --quiet --json "$R" || echo "FAILED recon large"
  "$B/steps/mri/recon/mri_gridding_accuracy" --size small --json "$R" > "$OUT/gridding-accuracy.txt" || echo "FAILED gridding accuracy"
fi

if has gridding-peer; then  # cuFINUFFT beside the gridding rungs on large, in one call: each tolerance, each method
  # cuFINUFFT's source travels in an ignored folder (PEER_SRC, default .peers/finufft: a copy of
  # finufft 9810998 with POET and build.sh); built with nvcc alone into $B/cufinufft.
  src=${PEER_SRC:-$ROOT/.peers/finufft}
  { JOBS=$(nproc) bash "$src/build.sh" "$B/cufinufft" && meson configure "$B" -Dcufinufft_dir="$B/cufinufft" &&
    meson compile -C "$B" steps/mri/mri_cufinufft steps/mri/mri_17_aggregated_plan; } > "$OUT/gridding-peer-build.log" 2>&1 \
    || { tail -30 "$OUT/gridding-peer-build.log"; echo "FAILED gridding peer build"; }
  J="$OUT/mri-$DEVICE_TAG-gridding-peer.jsonl"
  for tol in 1e-3 1e-4 1e-5 1e-6; do
    for kernel in fhd q; do
      "$B/steps/mri/mri_17_aggregated_plan" --size large --kernel $kernel --tolerance $tol --check --quiet --json "$J" \
        || echo "FAILED 17 $kernel $tol"
      for m in 1 2 3 4; do
        "$B/steps/mri/mri_cufinufft" --size large --kernel $kernel --tolerance $tol --method $m --check --quiet --json "$J" \
          || echo "FAILED cufinufft method $m $kernel $tol"
      done
    done
  done
  python3 - "$J" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    p = r["params"]
    print(f"{r['step']:20} {p.get('kernel')} tol {p.get('tolerance'):g} method {p.get('method', '-')}: compute "
          f"{r['timing']['kernel_ms']['median']:.3f} ms, plan {p.get('plan_ms', 0):.3f} ms, rel L2 "
          f"{r['validation']['rel_l2']:.2e} {'PASS' if r['validation']['pass'] else 'FAIL'}")
PY
fi

if has probe; then
  "$B/probe/stepwise_probe" --json "$OUT/probe-$DEVICE_TAG.jsonl" --quiet
fi

if has same; then  # every GPU step once on its track's headline problem, to hold against its newest record
  J="$OUT/same-$DEVICE_TAG.jsonl"
  gpu_steps | while read -r t id; do
    case $t/$id in
      mri/02_*|mri/05_*|mri/06_*) args="--size large --kernel fhd --repeat 1 --warmup 0" ;;  # over 5 s a run
      mri/*) args="--size large --kernel fhd --repeat 3" ;;
      epic/10_*|epic/11_*) args="--size large --image-size 128 --repeat 3" ;;
      ae/*) args="--size large --batch 256 --repeat 1 --warmup 0" ;;
      *) args="--size large --repeat 3" ;;
    esac
    timeout "${SAME_TIMEOUT:-120}" "$B/steps/$t/${t}_$id" $args --check --quiet --json "$J" || echo "FAILED ${t}_$id $args"
  done
fi

if has remeasure; then  # sweeps of the steps that have a sweep.json
  for f in "$ROOT"/steps/*/[0-9][0-9]_*/sweep.json; do
    d=$(dirname "$f"); track=$(basename "$(dirname "$d")")
    [ "$track" = mc ] && continue  # mc's sweeps are long: the mc-tune phase
    "$ROOT/stepwise" tune "$track" "$(basename "$d")" --json "$OUT/$track-$DEVICE_TAG-tune.jsonl" 2>&1 | tail -1
  done
fi

S=$B/steps/mc
if has mc-sizes; then
  for e in $(seq 14 30); do
    n=$((1 << e))
    for s in 07_fixed_point_rows 08_hybrid 09_radial_walk; do
      "$S/mc_$s" --photons $n --repeat 3 --warmup 1 --tag sizes --json "$OUT/mc-$DEVICE_TAG-sizes.jsonl" --quiet || echo "FAILED $s 2^$e"
    done
    if [ "$e" -le "${CPU_MAX_LOG2:-26}" ]; then
      "$S/mc_01_cpu_omp" --photons $n --repeat 1 --warmup 0 --tag sizes --json "$OUT/mc-$DEVICE_TAG-sizes.jsonl" --quiet || echo "FAILED 01 2^$e"
    fi
  done
fi

if has mc-tune; then  # ./stepwise tune of the steps named (60 points at 2^30 each: minutes)
  for s in ${TUNE_STEPS:-07_fixed_point_rows 09_radial_walk}; do
    "$ROOT/stepwise" tune mc "$s" --json "$OUT/mc-$DEVICE_TAG-tune.jsonl" 2>&1 | tail -1
  done
fi

if has mc-profile; then  # instructions per interaction: the flat loop (05), its cuts (06, 07, 10, 11), the walk in r (09, 12)
  for s in 05_gpu_flat_loop 06_gpu_lean_interaction 07_fixed_point_rows 09_radial_walk 10_gpu_fewer_bits 11_gpu_circle_table 12_radial_carry_vote; do
    n=${s%%_*}
    ncu --clock-control none --kernel-name transport --launch-skip 1 --launch-count 1 \
      --metrics smsp__inst_executed.sum,smsp__thread_inst_executed.sum,sm__cycles_elapsed.avg,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_alu.sum,smsp__inst_executed_pipe_fma.sum,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_lsu.sum,gpu__time_duration.sum \
      "$S/mc_$s" --photons $((1 << 28)) --repeat 1 --warmup 1 --quiet > "$OUT/mc-$n-ncu.txt" 2>&1
    echo "== $s"; grep -E "smsp__|sm__|gpu__" "$OUT/mc-$n-ncu.txt"
  done
fi

# A short table last: one line per record of the ladder files.
python3 - "$OUT" <<'PY'
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.jsonl"))):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    if path.endswith(("-tune.jsonl", "-sizes.jsonl")):
        ok = sum(r.get("validation", {}).get("pass", False) for r in rows)
        print(f"{os.path.basename(path)}: {len(rows)} records, {ok} pass")
        continue
    for r in rows:
        if r["track"] == "probe":
            print("probe", r["ceilings"]); continue
        v = r["validation"]
        print(f'{r["track"]:4s} {r["step"]:22s} {r["problem"]["name"]:6s} {r["params"].get("kernel", ""):3s} '
              f'{r["timing"]["kernel_ms"]["median"]:10.4g} ms {r["throughput"]["value"]:12.4g} {r["throughput"]["unit"]:10s} '
              f'{"PASS" if v["pass"] else "FAIL"}')
PY
