#!/bin/sh
# Names the commit a build comes from: $STEPWISE_COMMIT when set (a copied tree whose .git,
# if any, is not the one it came from: `STEPWISE_COMMIT=$(cat .stepwise-commit)`), else
# `git describe`, or, in a tree copied without its .git, the name that ./stepwise recorded in
# .stepwise-commit before it was copied; else "unknown".
root=$1
if [ -n "${STEPWISE_COMMIT:-}" ]; then echo "$STEPWISE_COMMIT"
elif d=$(git -C "$root" describe --always --dirty 2>/dev/null); then echo "$d"
elif [ -s "$root/.stepwise-commit" ]; then head -n 1 "$root/.stepwise-commit"
else echo unknown
fi
