#!/bin/sh
# Writes the tiny problem (a Cartesian grid) as a Parboil mri-q file, a format with no field
# that says so, and runs a step on it with --check: the grid must be found from the
# coordinates alone.
# usage: written_parboil.sh MRI_DATASET PROGRAM
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
"$1" --size tiny --parboil "$dir/tiny.bin" >/dev/null || exit 1
"$2" --input-parboil "$dir/tiny.bin" --kernel q --check --quiet --warmup 0 --repeat 1
