#!/bin/sh
# Passes when PROGRAM ARGS... exits with exactly CODE; 77 (no GPU) passes through as SKIP.
# usage: expect_exit.sh CODE PROGRAM [ARGS...]
want=$1
shift
"$@"
got=$?
[ "$got" = 77 ] && [ "$want" != 77 ] && exit 77
if [ "$got" != "$want" ]; then
  echo "expect_exit.sh: '$*' exited $got, expected $want" >&2
  exit 1
fi
exit 0
