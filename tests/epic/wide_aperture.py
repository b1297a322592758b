#!/usr/bin/env python3
"""At 80 MHz the aperture covers more than 32 grid columns: the fused steps' trips then hold more
column transforms than a block has lanes, so some threads transform two (06 gives each of more
than 32 lanes a column), and 07's trips of two samples no longer fit in shared memory (one
sample a trip). The image must still validate, and
the record must show that those paths ran (else the test proves nothing about them).
Usage: wide_aperture.py PROGRAM [FLAG...]"""
import json, os, subprocess, sys, tempfile

exe, extra = sys.argv[1], sys.argv[2:]
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "r.jsonl")
    p = subprocess.run([exe, "--size", "tiny", "--start-freq", "80", "--slices", "3", "--samples", "9", "--check", "--quiet",
                        "--repeat", "1", "--warmup", "0", "--json", path, *extra], capture_output=True, text=True)
    if p.returncode == 77:
        sys.exit(77)
    if p.returncode != 0:
        sys.exit(f"{exe} exited {p.returncode}: {p.stdout}{p.stderr}")
    r = json.loads(open(path).read().splitlines()[-1])
failures = []
params = r.get("params", {})
occupied = params.get("occupied_columns_max", 0)
if not occupied > 32:
    failures.append(f"occupied_columns_max {occupied}: not more than 32, so no thread had two columns")
if r.get("step") == "07_sample_trips" and params.get("samples_per_trip") != 1:
    failures.append(f"07's samples_per_trip {params.get('samples_per_trip')}: two samples fitted, the one-sample trip did not run")
if not r.get("validation", {}).get("pass"):
    failures.append("validation did not pass")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
