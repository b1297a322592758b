#!/usr/bin/env python3
"""Runs step programs on the same problem, each as N ranks (tests/launch_ranks.py) or alone
(N = 1), and insists that their images (--out) are the same bytes. A run of several ranks should
come first: with fewer GPUs than it needs it exits 77 (SKIP) before anything is computed.
Usage: same_image.py LAUNCH_RANKS N:PROGRAM [N:PROGRAM...] -- ARGS..."""
import os
import struct
import subprocess
import sys
import tempfile
from array import array

launch, rest = sys.argv[1], sys.argv[2:]
if "--" not in rest:
    sys.exit("same_image.py: usage: same_image.py LAUNCH_RANKS N:PROGRAM... -- ARGS...")
runs, args = rest[:rest.index("--")], rest[rest.index("--") + 1:]
if len(runs) < 2:
    sys.exit("same_image.py: two runs or more to compare")


def values(path):
    """The float32 values of a version 1 .npy file (what core::write_npy writes) and its header."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY" or data[6] != 1:
        sys.exit(f"same_image.py: {path}: not a version 1 .npy file")
    start = 10 + struct.unpack("<H", data[8:10])[0]
    header = data[10:start].decode("latin1")
    if "'<f4'" not in header:
        sys.exit(f"same_image.py: {path}: not float32 ({header.strip()})")
    return header, array("f", data[start:])


with tempfile.TemporaryDirectory() as tmp:
    images = []
    for k, run in enumerate(runs):
        ranks, program = run.split(":", 1)
        out = os.path.join(tmp, f"run{k}.npy")
        cmd = [program, *args, "--out", out, "--quiet", "--repeat", "1", "--warmup", "0"]
        if int(ranks) > 1:
            cmd = [sys.executable, launch, "--ranks", ranks, "--timeout", "240", "--", *cmd]
        p = subprocess.run(cmd, capture_output=True, text=True)
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        if p.returncode == 77:
            sys.exit(77)
        if p.returncode != 0:
            sys.exit(f"same_image.py: {' '.join(cmd)}: exit {p.returncode}")
        images.append((f"{os.path.basename(program)} on {ranks} rank(s)", *values(out)))

first, first_header, first_values = images[0]
failed = False
for name, header, vals in images[1:]:
    if header != first_header or len(vals) != len(first_values):
        print(f"FAIL {name}: shape {header.strip()} against {first}'s {first_header.strip()}")
        failed = True
        continue
    same = vals.tobytes() == first_values.tobytes()
    differ = [] if same else [i for i in range(len(vals)) if vals[i:i + 1].tobytes() != first_values[i:i + 1].tobytes()]
    if differ:
        worst = max(abs(vals[i] - first_values[i]) for i in differ)
        print(f"FAIL {name}: {len(differ)} of {len(vals)} values differ from {first}'s (first at index {differ[0]}, "
              f"largest difference {worst:.6g})")
        failed = True
    else:
        print(f"ok   {name}: the same {len(vals)} values as {first}")
sys.exit(1 if failed else 0)
