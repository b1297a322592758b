#!/usr/bin/env python3
"""Writes a known-wrong source: SOURCE with the edits that NAME's entry in SPEC (mutants.json)
names. Each old text must occur exactly once, so an edit that no longer fits the source stops
the build instead of silently testing something else.
Usage: mutant_source.py SOURCE SPEC NAME OUT"""
import json
import sys

source, spec, name, out = sys.argv[1:5]
with open(source) as f:
    text = f.read()
with open(spec) as f:
    wrong = json.load(f)[name]
for old, new in wrong["replace"]:
    count = text.count(old)
    if count != 1:
        sys.exit(f"mutant_source.py: {name}: {old!r} occurs {count} times in {source}, not once")
    text = text.replace(old, new)
where = source.split("/steps/")[-1] if "/steps/" in source else source.split("/common/")[-1]
with open(out, "w") as f:
    f.write(f"// Known wrong ({name}), generated from {where}: {wrong['why']}\n" + text)
