#!/usr/bin/env python3
"""Runs a program with --stands set to the real LWA-SV layout (lwasv_stands.csv), looked for in
$STEPWISE_DATA, then in .data/ of the checkout; exits 77 (SKIP) when it is in neither. The file
is not part of the repository. Usage: with_real_stands.py SOURCE_ROOT PROGRAM [ARGS...]"""
import os, subprocess, sys

root, cmd = sys.argv[1], sys.argv[2:]
for folder in [os.environ.get("STEPWISE_DATA"), os.path.join(root, ".data")]:
    if folder and os.path.isfile(os.path.join(folder, "lwasv_stands.csv")):
        path = os.path.join(folder, "lwasv_stands.csv")
        break
else:
    print("lwasv_stands.csv is neither in $STEPWISE_DATA nor in .data/: skipped")
    sys.exit(77)
sys.exit(subprocess.run(cmd + ["--stands", path]).returncode)
