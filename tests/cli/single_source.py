#!/usr/bin/env python3
"""Every line of step code is written in one place (README.md, "Single source"):
  - every NAME.patch a rung holds applies (patch(1), no fuzz) to the file its parent's chain
    resolves NAME to, and changes it; every whole file differs from its parent's (an unchanged
    copy inherits instead);
  - each file is held in its form: a patch where its context lines (each hunk's fewest that
    place it at one place) repeat fewer of the parent's lines than the whole file would (its
    lines unchanged from the parent's), else the whole file (steps/rungs.py tidy rewrites
    them so);
  - each rung's whole program, resolved here (walking the parent files, patch(1)), is the one
    steps/rungs.py gives (expand: what the build compiles and the tests edit);
  - no definition of four lines or more (a function, kernel, class or struct at the top level of
    a file; in a patch, of the lines it adds) is held, the same text, by two rungs of a track, or
    by a rung and common/TRACK/: the second copy would let a fix reach one and not the other
    (but for the list in tests/cli/single_source_known.txt, which may only shrink).
Prints the held lines and how many repeat an ancestor's. Usage: single_source.py ROOT"""
import collections
import difflib
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chain import Chain  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "steps"))
import rungs as rung_tree  # noqa: E402

root = sys.argv[1]
# The copies the move to single source left (a definition unchanged inside a file that changes
# for another definition): each to be split out into a file of its own, and then taken off.
# The list only shrinks: a new copy fails, and so does a listed one that is gone.
KNOWN = "tests/cli/single_source_known.txt"
known = {l.rstrip("\n") for l in open(os.path.join(root, KNOWN)) if l.strip() and not l.startswith("#")}
seen = set()
SOURCE = (".cu", ".cpp", ".cuh", ".hpp", ".h")
failed = 0
tree = Chain(root)


def check(ok, what):
    global failed
    failed += not ok
    if not ok:
        print("FAIL " + what)


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


def added(patch):
    """The runs of lines a patch adds, as text (what the rung writes itself)."""
    runs, cur = [], []
    for line in patch.splitlines()[2:]:
        if line.startswith("+"):
            cur.append(line[1:])
        elif cur:
            runs.append("\n".join(cur))
            cur = []
    return "\n\n".join(runs + (["\n".join(cur)] if cur else []))


checked = held_lines = repeated = context = 0
for track in ("mri", "mc", "epic", "ae"):
    steps = tree.steps(track)
    holders = collections.defaultdict(set)
    for step in steps:
        for name, how in tree.held(track, step).items():
            label = f"steps/{track}/{step}/{name}" + (".patch" if how == "patch" else "")
            path = os.path.join(root, label)
            checked += 1
            try:
                body, base = tree.text(track, step, name), tree.base(track, step, name)
            except ValueError as e:
                check(False, str(e))
                continue
            held_text = open(path).read()
            held_lines += len(held_text.splitlines())
            if how == "patch":
                check(base is not None and body != base, f"{label}: changes nothing (remove it; {step} inherits {name})")
                ctx = sum(1 for l in held_text.splitlines()[2:] if l.startswith(" "))
                context += ctx
            elif base is not None:
                check(body != base, f"{label} is the same as its parent's: an unchanged copy (remove it; {step} inherits it)")
            if base is not None and body != base and name not in ("compiler_flags", "needs"):
                a, b = base.splitlines(keepends=True), body.splitlines(keepends=True)
                kept = sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
                if how == "whole":
                    # The patch tidy would make instead (its maker: this checks the tree is tidy's;
                    # what each form gives is checked apart, by patch(1), below).
                    made = rung_tree.minimal_patch(a, b, f"a/{name}", f"b/{name}")
                    ctx = sum(1 for l in made.splitlines()[2:] if l.startswith(" ")) if made else kept
                    repeated += kept
                    check(ctx >= kept, f"{label}: repeats {kept} of its parent's lines; as {name}.patch it would "
                                       f"repeat {ctx} (python3 steps/rungs.py tidy {track})")
                else:
                    check(ctx < kept, f"{label}: its context repeats {ctx} of its parent's lines, the whole file "
                                      f"{kept} (hold it whole: python3 steps/rungs.py tidy {track})")
            if name.endswith(SOURCE):
                for d in definitions(added(held_text) if how == "patch" else held_text):
                    holders[d].add(label)
        # The program rungs.py resolves is the one resolved here.
        try:
            mine = tree.expand(track, step)
        except ValueError as e:
            check(False, f"{track} {step}: {e}")
            continue
        p = subprocess.run([sys.executable, os.path.join(root, "steps", "rungs.py"), "expand", track, step],
                           capture_output=True, text=True)
        check(p.returncode == 0 and p.stdout == mine,
              f"{track} {step}: steps/rungs.py expand differs from the program resolved here ({p.stderr.strip()})")
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
print(f"{checked} files held by rungs checked: {held_lines} lines, {repeated} of them ({100 * repeated / max(held_lines, 1):.1f} %) "
      f"unchanged from an ancestor's in whole files, {context} ({100 * context / max(held_lines, 1):.1f} %) patch context; "
      f"{len(seen)} known copies left ({KNOWN}); {failed} problems")
sys.exit(1 if failed else 0)
