#!/usr/bin/env python3
"""A GPU step's record carries the device memory its arrays take (memory.peak_bytes, counted
by core::DeviceArray): present, positive, and growing with the minibatch, whose activations
are most of it. The minibatches are 4 and 64 of 64 images: some steps size their activations
for at least 32 images (what reconstruct() works on at once), so two small minibatches take
the same (the smaller one a few bytes more: its loss array has more steps). Exits 77 (SKIP)
where the step cannot run (no GPU).

Usage: check_peak_memory.py STEP_PROGRAM"""
import json
import os
import subprocess
import sys
import tempfile


def peak(exe, batch, out):
    p = subprocess.run([exe, "--size", "tiny", "--images", "64", "--batch", str(batch), "--repeat", "1", "--warmup", "0", "--quiet",
                        "--json", out], capture_output=True, text=True, timeout=300)
    if p.returncode == 77:
        sys.exit(77)
    if p.returncode != 0:
        sys.exit(f"FAIL: {exe} --batch {batch} exited {p.returncode}: {p.stderr.strip()}")
    with open(out) as f:
        record = json.loads(f.read().splitlines()[-1])
    memory = record.get("memory")
    if not memory or not isinstance(memory.get("peak_bytes"), int) or memory["peak_bytes"] <= 0:
        sys.exit(f"FAIL: --batch {batch}: no positive memory.peak_bytes in the record: {memory!r}")
    return memory["peak_bytes"]


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        small, large = peak(exe, 4, os.path.join(tmp, "a.jsonl")), peak(exe, 64, os.path.join(tmp, "b.jsonl"))
    print(f"peak device memory: batch 4 {small} bytes, batch 64 {large} bytes")
    if large <= small:
        sys.exit(f"FAIL: batch 64 takes {large} bytes, not more than batch 4's {small}")


if __name__ == "__main__":
    main()
