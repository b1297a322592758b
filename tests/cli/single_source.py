#!/usr/bin/env python3
"""Every line of step code is written in one place (README.md, "Single source"):
  - no rung holds a file that is the same as the one its parent's chain already has (an
    unchanged copy inherits instead);
  - no definition of four lines or more (a function, kernel, class or struct at the top level of
    a file) is held, the same text, by two rungs of a track, or by a rung and common/TRACK/:
    the second copy would let a fix reach one and not the other (but for the list in
    tests/cli/single_source_known.txt, which may only shrink).
The files are read here, walking the parent files, not through steps/rungs.py.
Usage: single_source.py ROOT"""
import collections
import os
import re
import sys

root = sys.argv[1]
# The copies the move to single source left (a definition unchanged inside a file that changes
# for another definition): each to be split out into a file of its own, and then taken off.
# The list only shrinks: a new copy fails, and so does a listed one that is gone.
KNOWN = "tests/cli/single_source_known.txt"
known = {l.rstrip("\n") for l in open(os.path.join(root, KNOWN)) if l.strip() and not l.startswith("#")}
seen = set()
OWN = ("README.md", "parent", "sweep.json")
SOURCE = (".cu", ".cpp", ".cuh", ".hpp", ".h")
failed = 0


def check(ok, what):
    global failed
    failed += not ok
    if not ok:
        print("FAIL " + what)


def parent(track, step):
    return open(os.path.join(root, "steps", track, step, "parent")).readline().split()[0]


def nearest(track, step, name):
    while step != "none":
        if os.path.isfile(os.path.join(root, "steps", track, step, name)):
            return step
        step = parent(track, step)
    return None


def definitions(text):
    """Top-level definitions: the lines from the end of the previous one (comments and blank
    lines dropped) to the line where the braces close again and the line ends in } or ;."""
    out, cur, depth = [], [], 0
    for line in text.splitlines():
        code = re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'', '""', line.split("//")[0])
        if depth == 0 and not cur and (not code.strip() or code.lstrip().startswith(("#", "namespace", "}"))):
            continue
        cur.append(line.rstrip())
        depth += code.count("{") - code.count("}")
        if depth <= 0 and code.strip().endswith(("}", ";")):
            body = [l for l in cur if l.strip() and not l.strip().startswith("//")]
            if len(body) >= 4 and any("{" in l for l in body):
                out.append("\n".join(body))
            cur, depth = [], 0
    return out


checked = 0
for track in ("mri", "mc", "epic", "ae"):
    folder = os.path.join(root, "steps", track)
    steps = sorted(d for d in os.listdir(folder) if re.match(r"\d\d_", d))
    holders = collections.defaultdict(set)
    for step in steps:
        up = parent(track, step)
        for name in sorted(os.listdir(os.path.join(folder, step))):
            if name in OWN:
                continue
            path = os.path.join(folder, step, name)
            h = nearest(track, up, name) if up != "none" else None
            if h is not None:
                same = open(path, "rb").read() == open(os.path.join(folder, h, name), "rb").read()
                check(not same, f"steps/{track}/{step}/{name} is the same as steps/{track}/{h}/{name}: "
                                f"an unchanged copy (remove it; {step} inherits it)")
            checked += 1
            if name.endswith(SOURCE):
                for d in definitions(open(path).read()):
                    holders[d].add(f"steps/{track}/{step}/{name}")
    common = os.path.join(root, "common", track)
    for name in sorted(os.listdir(common)) if os.path.isdir(common) else []:
        if name.endswith(SOURCE):
            for d in definitions(open(os.path.join(common, name)).read()):
                if d in holders:
                    holders[d].add(f"common/{track}/{name}")
    for d, where in holders.items():
        rungs = {w.split("/")[2] if w.startswith("steps/") else w for w in where}
        if len(rungs) < 2:
            continue
        key = f"{' '.join(sorted(where))} | {d.splitlines()[0].strip()}"
        if key in known:
            seen.add(key)
            continue
        check(False, f"{track}: one definition held {len(rungs)} times: {', '.join(sorted(where))}\n"
                     f"     {d.splitlines()[0]}")
for key in sorted(known - seen):
    check(False, f"{KNOWN}: '{key}' is no longer held twice: take it off the list")
print(f"{checked} files held by rungs checked; {len(seen)} known copies left ({KNOWN}); {failed} problems")
sys.exit(1 if failed else 0)
