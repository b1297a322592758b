#!/bin/bash
# The ae ladder on real images, for report/results/: every step on --size small (384 images,
# batch 16), the GPU steps on an epoch of the whole training split (batch 64, with 8 images and
# their reconstructions recorded for the report's grid, and 256), 07 in TF32 and BF16, and the
# PyTorch peer on the same images. Records go to $OUT/ae-$DEVICE_TAG-$DATA.jsonl (DATA:
# fashion-mnist or cifar-10), logs beside them.
#
#   IDX_DIR=DIR    Fashion-MNIST: train-images-idx3-ubyte or .gz (Debian: /usr/share/datasets/fashion-mnist)
#   CIFAR_DIR=DIR  CIFAR-10, binary version (data_batch_1..5.bin) instead
#   B=DIR          the build (default /tmp/stepwise-build; configured and built when it has no build.ninja)
#   Phases (arguments; default all): small large peer
#
# A copy of the tree without .git names its commit in .stepwise-commit, as for tests/gpu_proof.sh.
# Usage (repo root): IDX_DIR=.data/fashion-mnist OUT=/tmp/out tests/ae/ladder_real_images.sh [PHASE...]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/stepwise-out}
B=${B:-/tmp/stepwise-build}
phases=" ${*:-small large peer} "
has() { [[ "$phases" == *" $1 "* ]]; }
mkdir -p "$OUT"
for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do [ -x "$d/nvcc" ] && { export PATH="$d:$PATH"; break; }; done
[ -f "$ROOT/.stepwise-commit" ] && export STEPWISE_COMMIT=$(cat "$ROOT/.stepwise-commit")
DEVICE_TAG=${DEVICE_TAG:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -o '\b[A-Z][0-9][0-9]*\b' | head -1 | tr 'A-Z' 'a-z')}
DEVICE_TAG=${DEVICE_TAG:-gpu}

if [ -n "${CIFAR_DIR:-}" ]; then
  DATA=cifar-10; flags=(--cifar-dir "$CIFAR_DIR"); peer=(--cifar-dir "$CIFAR_DIR" --images 50000)
elif [ -n "${IDX_DIR:-}" ]; then
  DATA=fashion-mnist; dir=$IDX_DIR
  # A build without zlib refuses .gz files: the raw file (in a scratch folder, not among the
  # records) serves either build (the same images give the same problem, raw or compressed).
  if [ ! -f "$dir/train-images-idx3-ubyte" ]; then
    [ -f "$dir/train-images-idx3-ubyte.gz" ] || { echo "$dir: no train-images-idx3-ubyte[.gz]"; exit 2; }
    raw=${TMPDIR:-/tmp}/stepwise-fashion-mnist
    mkdir -p "$raw" && gunzip -c "$dir/train-images-idx3-ubyte.gz" > "$raw/train-images-idx3-ubyte" || exit 2
    dir=$raw
  fi
  flags=(--idx-dir "$dir"); peer=(--idx-dir "$dir" --images 60000)
else
  echo "name the images: IDX_DIR=DIR (Fashion-MNIST) or CIFAR_DIR=DIR (CIFAR-10)"; exit 2
fi
J=$OUT/ae-$DEVICE_TAG-$DATA.jsonl

steps=$(cd "$ROOT/steps/ae" && ls -d [0-9][0-9]_*/ | tr -d /)
is_gpu() { python3 "$ROOT/steps/rungs.py" list ae | awk -v id="$1" '$2 == id { f = $3 == "gpu" } END { exit !f }'; }
# The ae programs only (the rest of the tree need not build): those the configuration has (no
# GPU steps without CUDA, no 15_cudnn without cuDNN).
{ [ -f "$B/build.ninja" ] || meson setup "$B" "$ROOT"; } > "$OUT/build-ae.log" 2>&1 || { tail -30 "$OUT/build-ae.log"; exit 1; }
have=$(ninja -C "$B" -t targets all 2>/dev/null | cut -d: -f1)
targets=()
for id in $steps; do
  grep -qx "steps/ae/ae_$id" <<< "$have" && targets+=("steps/ae/ae_$id")
done
ninja -C "$B" "${targets[@]}" >> "$OUT/build-ae.log" 2>&1 || { tail -30 "$OUT/build-ae.log"; exit 1; }
# A step the build left out (15_cudnn without cuDNN) is skipped; 10 runs in both precisions.
run() {  # run ID FLAGS...
  local id=$1; shift
  [ -x "$B/steps/ae/ae_$id" ] || { echo "not built: ae_$id"; return; }
  local precisions=(""); [ "$id" = 14_bf16 ] && precisions=(tf32 bf16)
  for p in "${precisions[@]}"; do
    timeout "${AE_TIMEOUT:-300}" "$B/steps/ae/ae_$id" "${flags[@]}" "$@" ${p:+--precision $p} --check --quiet --json "$J" \
      && echo "ok ae_$id $* ${p}" || echo "FAILED ae_$id $* ${p}"
  done
}

if has small; then
  for id in $steps; do
    if is_gpu "$id"; then run "$id" --size small --repeat 3; else run "$id" --size small --repeat 1 --warmup 0; fi
  done
fi
if has large; then
  for id in $steps; do
    is_gpu "$id" || continue
    run "$id" --size large --batch 64 --repeat 1 --warmup 0 --record-images 8
    run "$id" --size large --batch 256 --repeat 1 --warmup 0
  done
fi
if has peer; then
  PYTHONUNBUFFERED=1 timeout "${AE_TIMEOUT:-300}" python3 "$ROOT/steps/ae/pytorch/peer.py" --json "$J" "${peer[@]}" \
    > "$OUT/ae-peer-$DATA.log" 2>&1 && echo "ok peer" || { echo "FAILED peer"; tail -20 "$OUT/ae-peer-$DATA.log"; }
fi
echo "records: $J"
