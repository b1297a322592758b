#!/usr/bin/env python3
"""Every numeric flag a program declares refuses NaN, infinities and non-numbers with exit 2
and a message naming the flag: the flags are read from the program's own --help, so a flag
added later is covered without touching this test. Usage: numeric_flags.py PROGRAM"""
import re
import subprocess
import sys

exe = sys.argv[1]
help_text = subprocess.run([exe, "--help"], capture_output=True, text=True).stdout
flags = re.findall(r"^\s+(--[\w-]+) (FLOAT|INT|UINT)\b", help_text, re.M)
if not flags:
    sys.exit(f"{exe} --help lists no numeric flag")
failures = []
for flag, kind in flags:
    for value in ["nan", "inf", "-inf", "NaN", "1e999", "x"]:
        p = subprocess.run([exe, "--size", "tiny", flag, value, "--quiet"], capture_output=True, text=True, timeout=60)
        if p.returncode != 2 or flag not in p.stderr:
            failures.append(f"{flag} ({kind}) {value}: exit {p.returncode}, stderr {p.stderr.strip()!r}")
# The seed is read as text and parsed strictly: neither wrapped nor saturated.
if re.search(r"^\s+--seed\b", help_text, re.M):
    for value in ["-1", "99999999999999999999", "nan", "1.5"]:
        p = subprocess.run([exe, "--size", "tiny", "--seed", value, "--quiet"], capture_output=True, text=True, timeout=60)
        if p.returncode != 2 or "--seed" not in p.stderr:
            failures.append(f"--seed {value}: exit {p.returncode}, stderr {p.stderr.strip()!r}")
print(f"{len(flags)} numeric flags: {', '.join(f for f, _ in flags)}")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
