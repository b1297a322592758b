#!/usr/bin/env python3
"""--sky puts the total-intensity image over the band into the record: N x N, scaled to its peak
(so its largest value is 1), with the named sources in view at the pixels the sky model puts
them, and the image's peak at the brightest of them. Without --sky the record has no sky.
Usage: sky_record.py PROGRAM"""
import json, os, subprocess, sys, tempfile

exe = sys.argv[1]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def record(*flags):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.jsonl")
        p = subprocess.run([exe, "--size", "tiny", "--quiet", "--repeat", "1", "--warmup", "0", "--json", path, *flags],
                           capture_output=True, text=True)
        if p.returncode == 77:
            sys.exit(77)
        if p.returncode != 0:
            sys.exit(f"{exe} exited {p.returncode}: {p.stderr}")
        return json.loads(open(path).read().splitlines()[-1])


r = record("--sky")
sky = r.get("sky", {})
image = sky.get("intensity", [])
check(len(image) == 64 and all(len(row) == 64 for row in image), "a 64 x 64 image")
flat = [v for row in image for v in row]
check(flat and max(flat) == 1.0, "scaled to its peak")
names = {s["name"]: s["pixel"] for s in sky.get("sources", [])}
check(names.get("Cyg A-like") == [36, 40], "Cyg A-like at pixel (l 36, m 40)")
if flat:
    top = max(range(len(flat)), key=lambda i: flat[i])
    check((top % 64, top // 64) == (36, 40), "the image's peak is at the brightest source (row m, column l)")
check("sky" not in record(), "no sky without --sky")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
