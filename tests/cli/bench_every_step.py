#!/usr/bin/env python3
"""The driver's bench over every step of every track, on the tiny problems, as report runs
them on the default ones: each step's defaults must run it. Passes when bench exits 0, every
step of `./stepwise list` ran (ok), was skipped for want of a GPU or is absent from this
build, and every record it wrote validated.

usage: bench_every_step.py STEPWISE RESULTS_DIR"""
import json
import os
import re
import subprocess
import sys

stepwise, results_dir = sys.argv[1:3]
os.makedirs(results_dir, exist_ok=True)
records = os.path.join(results_dir, "bench-every-step.jsonl")
if os.path.exists(records):
    os.remove(records)

listing = subprocess.run([stepwise, "list"], capture_output=True, text=True, check=True).stdout
steps = []  # (track, id, built)
track = None
for line in listing.splitlines():
    if line.endswith(":") and not line.startswith(" "):
        track = line[:-1]
    elif line.strip():
        name = line.split()[0]
        steps.append((track, name[len(track) + 1:], "(" not in line))
if not steps:
    sys.exit("stepwise list named no steps")

run = subprocess.run([stepwise, "bench", "all", "--size", "tiny", "--json", records, "--", "--quiet",
                      "--repeat", "1", "--warmup", "0"], capture_output=True, text=True)
log = run.stderr
failures = []
if run.returncode != 0:
    failures.append(f"bench exited {run.returncode}")
for track, step, built in steps:
    if not built:
        continue
    said = re.findall(rf"^  {track} {step}(?: \w+)?: (ok|skipped|absent)", log, re.M)
    if not said:
        failures.append(f"{track} {step}: bench did not run it")
failed_lines = [l for l in log.splitlines() if "FAILED" in l]
failures += failed_lines

ran = 0
if os.path.exists(records):
    for line in open(records):
        r = json.loads(line)
        ran += 1
        if not r.get("validation", {}).get("pass", False):
            failures.append(f"{r['track']} {r['step']}: its record did not validate")
if failures:
    print(log[-4000:])
    print("\n".join(failures))
    sys.exit(1)
print(f"bench over {len(steps)} steps: {ran} records, all validated; no step failed")
