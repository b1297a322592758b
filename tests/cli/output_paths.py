#!/usr/bin/env python3
"""Output paths that cannot be written are bad usage (exit 2), refused before any work with a
message naming the flag and the path, and no folder is made that the user did not name: a
dataset writer's --folder (a file, a folder under a file, a missing parent, a place that takes
no folder), its --out / --parboil, and a step's --json and --out. A folder that can be made is,
itself only. Everything is made in a scratch folder; /proc stands for a place where even root
cannot make a folder.
With --probe, the probe's --json alone, refused before it asks for the GPU.
Usage: output_paths.py MRI_DATASET EPIC_DATASET AE_DATASET STEP_PROGRAM
       output_paths.py --probe STEPWISE_PROBE"""
import os, shutil, subprocess, sys, tempfile

probe = sys.argv[2] if sys.argv[1] == "--probe" else None
if not probe:
    mri_dataset, epic_dataset, ae_dataset, step = sys.argv[1:5]
work = tempfile.mkdtemp(prefix="stepwise_output_paths_")
failures = []
a_file = os.path.join(work, "a_file")
with open(a_file, "w") as f:
    f.write("not a folder\n")
missing = os.path.join(work, "missing")  # never made: each case checks that it still is not


def expect_refused(cmd, flag, path, what):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 2:
        failures.append(f"{what}: expected exit 2, got {p.returncode}: {p.stderr.strip()!r}")
    elif f"{flag} {path}" not in p.stderr:
        failures.append(f"{what}: the message does not name {flag} {path}: {p.stderr.strip()!r}")
    if os.path.exists(missing):
        failures.append(f"{what}: made the folder {missing}, which nobody asked for")
        shutil.rmtree(missing)
    with open(a_file) as f:
        if f.read() != "not a folder\n":
            failures.append(f"{what}: wrote into the file {a_file}")


if probe:
    for path, why in ((os.path.join(missing, "r.jsonl"), "in a missing folder"),
                      (os.path.join(a_file, "r.jsonl"), "under a file")):
        expect_refused([probe, "--quiet", "--json", path], "--json", path, f"stepwise_probe --json {why}")
    shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)

for program in (mri_dataset, epic_dataset):
    name = os.path.basename(program)
    for path, why in ((a_file, "a file"), (os.path.join(a_file, "sub"), "a folder under a file"),
                      (os.path.join(missing, "problem"), "a folder whose parent is missing"),
                      ("/proc/stepwise_no_such_folder", "a folder /proc takes no folder in")):
        expect_refused([program, "--size", "tiny", "--folder", path], "--folder", path, f"{name} --folder {why}")
    made = os.path.join(work, name + "_problem")
    p = subprocess.run([program, "--size", "tiny", "--folder", made], capture_output=True, text=True, timeout=120)
    if p.returncode != 0 or not os.path.isfile(os.path.join(made, "meta.json")):
        failures.append(f"{name} --folder a new folder in a folder: exit {p.returncode}, {p.stderr.strip()!r}")

expect_refused([mri_dataset, "--size", "tiny", "--parboil", os.path.join(missing, "q.bin")], "--parboil",
               os.path.join(missing, "q.bin"), "mri_dataset --parboil in a missing folder")
expect_refused([ae_dataset, "--size", "tiny", "--out", os.path.join(a_file, "x.npy")], "--out",
               os.path.join(a_file, "x.npy"), "ae_dataset --out under a file")

for flag in ("--json", "--out"):
    for path, why in ((os.path.join(missing, "r.jsonl"), "in a missing folder"),
                      (os.path.join(a_file, "r.jsonl"), "under a file"),
                      ("/proc/stepwise_no_such_folder/r.jsonl", "in a missing folder of /proc")):
        expect_refused([step, "--size", "tiny", "--repeat", "1", "--warmup", "0", "--quiet", flag, path], flag, path,
                       f"{os.path.basename(step)} {flag} {why}")

shutil.rmtree(work, ignore_errors=True)
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
