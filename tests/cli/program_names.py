#!/usr/bin/env python3
"""A program names itself in its errors by its base name, as the shell user knows it, not by
the path it was started from: each PROGRAM, started by its full path with a flag it does not
have, must exit 2 with stderr beginning "BASENAME: error:".
Usage: program_names.py PROGRAM..."""
import os, subprocess, sys

failures = []
for program in sys.argv[1:]:
    program = os.path.abspath(program)
    p = subprocess.run([program, "--no-such-flag"], capture_output=True, text=True, timeout=60)
    want = os.path.basename(program) + ": error:"
    if p.returncode != 2 or not p.stderr.startswith(want):
        failures.append(f"{program}: expected exit 2 and stderr starting {want!r}, got {p.returncode}: {p.stderr.strip()!r}")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
