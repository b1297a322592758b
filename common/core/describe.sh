#!/bin/sh
# Names the commit a build comes from: `git describe`, or, in a tree copied without its
# .git, the name that ./stepwise recorded in .stepwise-commit before it was copied; else
# "unknown".
root=$1
if d=$(git -C "$root" describe --always --dirty 2>/dev/null); then echo "$d"
elif [ -s "$root/.stepwise-commit" ]; then head -n 1 "$root/.stepwise-commit"
else echo unknown
fi
