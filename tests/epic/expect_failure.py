#!/usr/bin/env python3
"""Runs a step program that must fail validation: exit 1, "validation FAILED" on stderr with
every text given by --has, and none given by --lacks (which shows which check caught it). Exit
77 (no usable GPU) passes through as SKIP.
Usage: expect_failure.py [--has TEXT]... [--lacks TEXT]... -- PROGRAM [ARGS...]"""
import subprocess
import sys

args, has, lacks = sys.argv[1:], [], []
while args and args[0] != "--":
    flag, text, args = args[0], args[1], args[2:]
    (has if flag == "--has" else lacks if flag == "--lacks" else sys.exit(f"expect_failure.py: unknown {flag}")).append(text)
cmd = args[1:]
p = subprocess.run(cmd, capture_output=True, text=True)
sys.stdout.write(p.stdout)
sys.stderr.write(p.stderr)
if p.returncode == 77:
    sys.exit(77)
if p.returncode != 1:
    sys.exit(f"expect_failure.py: {' '.join(cmd)}: expected exit 1, got {p.returncode}")
verdict = [line for line in p.stderr.splitlines() if "validation FAILED" in line]
if not verdict:
    sys.exit(f"expect_failure.py: {' '.join(cmd)}: no 'validation FAILED' on stderr")
for text in has:
    if not any(text in line for line in verdict):
        sys.exit(f"expect_failure.py: the failure should say {text!r}")
for text in lacks:
    if any(text in line for line in verdict):
        sys.exit(f"expect_failure.py: the failure should not say {text!r}")
