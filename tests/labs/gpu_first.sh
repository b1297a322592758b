#!/bin/sh
# gpu_first.sh QUERY COMMAND [ARGS...]: a lab check test that needs a GPU asks QUERY
# (lab_gpu_usable, built once) first. When it answers 77 (no usable GPU) the test exits 77, SKIP,
# at once: COMMAND, which would compile a lab file for 35 to 55 s before it found out, never
# runs (the build compiles every skeleton and reference already). Otherwise COMMAND runs.
query=$1
shift
why=$("$query" 2>&1)
if [ $? -eq 77 ]; then
  echo "gpu_first.sh: skipped before compiling: $why" >&2
  exit 77
fi
exec "$@"
