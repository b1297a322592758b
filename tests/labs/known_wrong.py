#!/usr/bin/env python3
"""Writes a known-wrong solution of a lab: its reference solution with the edits a wrong.json
entry names (each old text must occur exactly once, so an edit that no longer fits the
reference stops the build instead of silently testing something else).
Usage: known_wrong.py REFERENCE WRONG_JSON NAME OUT"""
import json
import sys

reference, spec, name, out = sys.argv[1:5]
with open(reference) as f:
    text = f.read()
with open(spec) as f:
    wrong = json.load(f)[name]
for old, new in wrong["replace"]:
    count = text.count(old)
    if count != 1:
        sys.exit(f"known_wrong.py: {name}: {old!r} occurs {count} times in {reference}, not once")
    text = text.replace(old, new)
with open(out, "w") as f:
    f.write(f"// Known wrong ({name}), generated from {reference.split('/tests/')[-1]}: {wrong['why']}\n" + text)
