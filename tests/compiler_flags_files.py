#!/usr/bin/env python3
"""Every step's compiler_flags file holds flags alone (the build passes each word to the
compiler; the reason lives in the step's README). Usage: compiler_flags_files.py ROOT"""
import glob
import os
import sys

bad = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "steps", "*", "*", "compiler_flags"))):
    with open(path) as f:
        words = f.read().split()
    if not words:
        bad.append(f"{path}: empty (delete the file instead)")
    bad += [f"{path}: '{w}' is not a compiler flag" for w in words if not w.startswith("-")]
    print(f"{os.path.relpath(path, sys.argv[1])}: {' '.join(words)}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
