#!/usr/bin/env python3
"""A long run says on stderr that it is alive, also when stderr is a log (here a pipe): a line
"PROGRAM: still running: STAGE, N s" once a period. The period, 10 s by default, is made
0.2 s (STEPWISE_STILL_RUNNING_S) so that a run of a second or two must write several; --quiet
writes none, and stdout is the same report either way.
Usage: still_running.py STEP_PROGRAM [FLAGS...] (FLAGS: a run of a second or more)"""
import os, re, subprocess, sys

step, flags = sys.argv[1], sys.argv[2:]
name = os.path.basename(step)
env = dict(os.environ, STEPWISE_STILL_RUNNING_S="0.2")
failures = []

p = subprocess.run([step, *flags], capture_output=True, text=True, env=env, timeout=300)
lines = [l for l in p.stderr.splitlines() if l.startswith(f"{name}: still running: ")]
if p.returncode != 0:
    failures.append(f"exit {p.returncode}: {p.stderr.strip()!r}")
if not any(re.fullmatch(rf"{re.escape(name)}: still running: (warm-up|repeat) \d+ of \d+, \d+ s", l) for l in lines):
    failures.append(f"no 'still running: repeat I of N, S s' line on stderr: {p.stderr.strip()!r}")
if not p.stdout.startswith(name + "  "):
    failures.append(f"stdout is not the step's report: {p.stdout!r}")

q = subprocess.run([step, *flags, "--quiet"], capture_output=True, text=True, env=env, timeout=300)
if q.returncode != 0 or q.stderr or q.stdout:
    failures.append(f"--quiet: expected exit 0 and silence, got {q.returncode}, stdout {q.stdout!r}, stderr {q.stderr!r}")

print(f"{len(lines)} still-running lines without --quiet, none with it" if not failures else "")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
