#!/usr/bin/env python3
"""A problem folder whose meta.json has a field of the wrong type is bad input: exit 2 with a
message naming meta.json, never a crash. Writes a good folder with epic_dataset, then breaks
one field at a time. Usage: mistyped_meta.py EPIC_DATASET STEP_PROGRAM"""
import json, subprocess, sys, tempfile

dataset, step = sys.argv[1], sys.argv[2]
failures = []
with tempfile.TemporaryDirectory() as tmp:
    folder = tmp + "/problem"
    subprocess.run([dataset, "--size", "tiny", "--folder", folder], check=True, capture_output=True)
    with open(folder + "/meta.json") as f:
        good = json.load(f)
    breaks = [("format", lambda m: m.__setitem__("format", 3))]
    if isinstance(good.get("sources"), list) and good["sources"]:
        breaks.append(("sources[0].spectral_index", lambda m: m["sources"][0].__setitem__("spectral_index", "x")))
    for name, mistype in breaks:
        meta = json.loads(json.dumps(good))
        mistype(meta)
        with open(folder + "/meta.json", "w") as f:
            json.dump(meta, f)
        p = subprocess.run([step, "--input", folder, "--repeat", "1", "--warmup", "0", "--quiet"],
                           capture_output=True, text=True)
        if p.returncode != 2 or "meta.json" not in p.stderr:
            failures.append(f"{name}: exit {p.returncode}, stderr {p.stderr.strip()!r}")
        print(f"{name}: exit {p.returncode}")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
