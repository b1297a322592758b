#!/bin/sh
# Runs an MRI step program on Parboil's mri-q "small" input (32x32x32) and checks its Q
# against Parboil's reference output with Parboil's tolerance.
# usage: parboil_q.sh PROGRAM SOURCE_ROOT
# The data is not committed: it is looked for in $STEPWISE_DATA, then SOURCE_ROOT/.data (each
# holding parboil-mri-q/). Absent in both: exit 77 (SKIP).
program=$1
root=$2
for dir in "${STEPWISE_DATA:-}" "$root/.data"; do
  [ -n "$dir" ] || continue
  input=$dir/parboil-mri-q/32_32_32_dataset.bin
  expect=$dir/parboil-mri-q/32_32_32_dataset.out
  if [ -f "$input" ] && [ -f "$expect" ]; then
    exec "$program" --input-parboil "$input" --expect-parboil "$expect" --kernel q --check --quiet --warmup 0 --repeat 1
  fi
done
echo "parboil_q.sh: no parboil-mri-q data in \$STEPWISE_DATA or $root/.data: skipped" >&2
exit 77
