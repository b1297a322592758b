#!/usr/bin/env python3
"""Writes a known-wrong program: SOURCE with the edits that NAME's entry in SPEC names (the
JSON form of tests/epic/mutants.json and tests/labs/ID/wrong.json: {"NAME": {"why": ...,
"replace": [[OLD, NEW], ...]}}). Each old text must occur exactly once, so an edit that no
longer fits the source stops the build instead of silently testing something else. Where
SOURCE is a rung's main file the edits apply to the rung's whole program as one file
(steps/rungs.py expand), and OUT is that file.
Usage: known_wrong.py SOURCE SPEC NAME OUT"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "steps"))
import rungs  # noqa: E402

if len(sys.argv) != 5:
    sys.exit(__doc__)
source, spec, name, out = sys.argv[1:5]
text = rungs.expand_path(source)
with open(spec) as f:
    wrong = json.load(f)[name]
for old, new in wrong["replace"]:
    count = text.count(old)
    if count != 1:
        sys.exit(f"known_wrong.py: {name}: {old!r} occurs {count} times in {source}, not once")
    text = text.replace(old, new)
where = os.path.relpath(os.path.realpath(source), ROOT)
with open(out, "w") as f:
    f.write(f"// Known wrong ({name}), generated from {where}: {wrong['why']}\n" + text)
