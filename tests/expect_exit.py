#!/usr/bin/env python3
"""Runs a program and insists on its exit code and a text on stderr: a bare should_fail would
also pass on a crash, and a bare exit code would pass on the wrong error. Exit 77 (no usable
GPU) passes through as SKIP unless 77 is what is expected. A failure's text must be on stderr;
a success's (exit 0) may be on either stream, since a verdict is the program's output.
Usage: expect_exit.py CODE TEXT PROGRAM [ARGS...]"""
import subprocess, sys

code, text, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
p = subprocess.run(cmd, capture_output=True, text=True)
sys.stdout.write(p.stdout)
sys.stderr.write(p.stderr)
if p.returncode == 77 and code != 77:
    sys.exit(77)
if p.returncode != code:
    sys.exit(f"expect_exit.py: {' '.join(cmd)}: expected exit {code}, got {p.returncode}")
where = p.stderr + p.stdout if code == 0 else p.stderr
if text not in where:
    sys.exit(f"expect_exit.py: {' '.join(cmd)}: expected {text!r} on {'stdout or stderr' if code == 0 else 'stderr'}")
