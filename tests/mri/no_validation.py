#!/usr/bin/env python3
"""--no-validation (an mri step's flag, for a caller that checks the output itself): --out and
--json are written without the reference, and the record says so and does not count as
passed; without it the same run is validated; with --check it is bad usage (exit 2).
Usage: no_validation.py MRI_STEP WORKDIR"""
import json
import os
import subprocess
import sys
import tempfile

exe, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
work = tempfile.mkdtemp(prefix="no_validation_", dir=work)
failed = 0


def check(ok, what):
    global failed
    failed += not ok
    print(("ok   " if ok else "FAIL ") + what)


def run(name, *flags):
    record, out = os.path.join(work, name + ".jsonl"), os.path.join(work, name + ".npy")
    p = subprocess.run([exe, "--size", "tiny", "--repeat", "1", "--json", record, "--out", out, *flags],
                       capture_output=True, text=True)
    r = json.loads(open(record).read().splitlines()[-1]) if p.returncode == 0 and os.path.exists(record) else None
    return p, r, out


p, r, out = run("skipped", "--no-validation")
check(p.returncode == 0 and r is not None and os.path.exists(out), f"--no-validation: exit 0, record and output written ({p.returncode})")
v = r["validation"] if r else {}
check(v.get("pass") is False and v.get("reference") == "none" and "not validated" in v.get("skipped", ""),
      f"--no-validation: the record says it was not validated and does not pass ({v})")
check("check   " not in p.stdout, "--no-validation: no check line is printed")

p, r, _ = run("validated")
v = r["validation"] if r else {}
check(p.returncode == 0 and v.get("pass") is True and v.get("reference") == "cpu-double" and "skipped" not in v,
      f"without it, --json validates against the reference ({v})")

p = subprocess.run([exe, "--size", "tiny", "--check", "--no-validation"], capture_output=True, text=True)
check(p.returncode == 2 and "--no-validation" in p.stderr and "--check" in p.stderr,
      f"--check with --no-validation: exit 2, both named ({p.returncode}: {p.stderr.strip()})")

if not failed:
    import shutil
    shutil.rmtree(work)
sys.exit(1 if failed else 0)
