#!/usr/bin/env python3
"""The scripts a lab's student runs by hand, on the CPU: each answers --help (exit 0), and a
missing or unfit file is bad usage (exit 2) with a message that names it, never a traceback.
  labs/03-mri-sfu-tuning/sweep.py: --table FILE, --sweep GRID (checked before any build);
  labs/05-epic-fusion/phases.py: FILE without a record of epic 01, and one with it.
Usage: lab_scripts.py ROOT"""
import json, os, subprocess, sys, tempfile

root = sys.argv[1]
sweep = os.path.join(root, "labs", "03-mri-sfu-tuning", "sweep.py")
phases = os.path.join(root, "labs", "05-epic-fusion", "phases.py")


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60)


def expect(p, code, text, what):
    ok = p.returncode == code and text in (p.stdout + p.stderr) and "Traceback" not in p.stderr
    if not ok:
        sys.exit(f"lab_scripts.py: {what}: expected exit {code} and {text!r}, got {p.returncode}"
                 f"\n--- stdout:\n{p.stdout}--- stderr:\n{p.stderr}")


with tempfile.TemporaryDirectory() as tmp:
    missing = os.path.join(tmp, "missing.jsonl")
    for script in (sweep, phases):
        for flag in ("--help", "-h"):
            expect(run(script, flag), 0, "--help", f"{script} {flag}")

    expect(run(sweep, "--table", missing), 2, missing, "sweep.py --table on a missing file")
    garbled = os.path.join(tmp, "garbled.jsonl")
    with open(garbled, "w") as f:
        f.write("not json\n")
    expect(run(sweep, "--table", garbled), 2, garbled, "sweep.py --table on a file that is not JSONL")
    no_tune = os.path.join(tmp, "no_tune.jsonl")
    with open(no_tune, "w") as f:
        f.write(json.dumps({"track": "mri", "step": "08_tuned"}) + "\n")
    expect(run(sweep, "--table", no_tune), 2, "no tune records", "sweep.py --table without tune records")
    bad_grid = os.path.join(tmp, "sweep.json")
    with open(bad_grid, "w") as f:
        f.write('{"args": ["--size", "tiny"]}\n')
    source = os.path.join(tmp, "student.cu")  # any existing source: the grid is checked first
    with open(source, "w") as f:
        f.write("// a student's fhd.cu\n")
    expect(run(sweep, source, "--sweep", bad_grid), 2, bad_grid, "sweep.py --sweep with no grid")
    expect(run(sweep, os.path.join(tmp, "fhd.cu")), 2, os.path.join(tmp, "fhd.cu"), "sweep.py on a missing source")

    expect(run(phases, missing), 2, missing, "phases.py on a missing file")
    other = os.path.join(tmp, "other.jsonl")
    with open(other, "w") as f:
        f.write(json.dumps({"track": "epic", "step": "00_cpu", "params": {}}) + "\n")
    expect(run(phases, other), 2, "no record of epic 01_gpu_pipeline", "phases.py without a record of 01")
    record = {"track": "epic", "step": "01_gpu_pipeline", "problem": {"name": "small"},
              "device": {"name": "a GPU"}, "params": {"phase_ms_per_gulp": {"grid": 0.25, "fft": 0.5}}}
    with open(other, "a") as f:
        f.write("cut short {\n" + json.dumps(record) + "\n")
    p = run(phases, other)
    expect(p, 0, "fft", "phases.py with a record of 01")
    expect(p, 0, "0.75", "phases.py's total")
print("lab scripts: --help, and missing or unfit files named (exit 2)")
