#!/usr/bin/env python3
"""A fix made once reaches every rung that inherits it (README.md, "Single source"), in a copy
of steps/: for each track, the whole file that the most descendants patch is edited at one line
that no descendant's patch touches, and every rung whose program includes that file, through
its patches or not, then resolves to its program before the edit with exactly that one line
changed (`rungs.py expand`, what the build and the tests compile). An edit to a line that a
child's patch removes stops that child, each rung that inherits from it, and the build (`rungs.py
render`) with exit 2 and a message naming the patch; the rungs outside that branch still expand.
Usage: fix_reaches.py ROOT WORKDIR"""
import difflib
import importlib.util
import os
import shutil
import subprocess
import sys

root, work = sys.argv[1], sys.argv[2]
failed = 0
MARK = "  /* fixed once, in the ancestor that holds it */"


def check(ok, what):
    global failed
    failed += not ok
    print(("ok   " if ok else "FAIL ") + what)


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
steps = os.path.join(work, "steps")
shutil.copytree(os.path.join(root, "steps"), steps)
spec = importlib.util.spec_from_file_location("rungs_copy", os.path.join(steps, "rungs.py"))
rungs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rungs)  # STEPS is the copy: what is edited below is what it resolves


def run(*args):
    return subprocess.run([sys.executable, os.path.join(steps, "rungs.py"), *args],
                          capture_output=True, text=True)


_programs = {}


def reached(track, a, name):
    """The rungs whose program includes NAME as made from A's whole file (A's own, or through
    the patches of the rungs between)."""
    if track not in _programs:  # the tree as it is before any edit
        _programs[track] = {r: dict(rungs.program(track, r)) for r in rungs.rung_ids(track)}
    out = []
    for r, files in _programs[track].items():
        h = files.get(name)
        if h and rungs.sources(track, h, name)[-1] == f"{track}/{a}/{name}":
            out.append(r)
    return out


def expand(track, r):
    """(exit code, program, message) as `rungs.py expand TRACK R` gives them, in this process."""
    rungs._resolved.clear()
    try:
        return 0, rungs.expand(track, r), ""
    except rungs.TreeError as e:
        return 2, "", f"stepwise: {e}"


def patched_by(track, a, name, rs):
    return [r for r in rs if r != a and rungs.held(track, r, name) == "patch"]


def most_patched(track):
    """The whole file the most descendants patch (then reach): the hardest fix to carry by hand."""
    best = None
    for a in rungs.rung_ids(track):
        for name in sorted(os.listdir(os.path.join(steps, track, a))):
            if name in rungs.OWN or rungs.held(track, a, name) != "whole":
                continue
            rs = reached(track, a, name)
            key = (len(patched_by(track, a, name, rs)), len(rs))
            if best is None or key > best[0]:
                best = (key, a, name)
    return track, best[1], best[2]


# Each track's most patched file, and one kernel file: ae's implicit-GEMM convolution, taught by
# 09 and changed by five descendants' patches.
for track, a, name in [most_patched(t) for t in rungs.TRACKS] + [("ae", "09_conv_gemm", "conv_gemm.cuh")]:
    rs = reached(track, a, name)
    n_patches = len(patched_by(track, a, name, rs))
    path = os.path.join(steps, track, a, name)
    original = open(path).read()
    lines = original.splitlines(keepends=True)
    before = {r: rungs.expand(track, r) for r in rs}
    patchers = patched_by(track, a, name, rs)
    check(n_patches >= 1, f"{track}: {a}'s {name} is patched by {len(patchers)} descendants "
                          f"({' '.join(patchers)}) and reaches {len(rs)} rungs")

    # A line no descendant's patch touches: the fix must reach each rung, through each patch.
    chosen = None
    for i, line in enumerate(lines):
        text = line.rstrip("\n")
        if not text.strip() or text.endswith("\\") or "//" in text or "/*" in text or "*/" in text \
                or rungs.INCLUDE.match(text) or sum(l == line for l in lines) > 1:
            continue
        edited = lines[:i] + [text + MARK + "\n"] + lines[i + 1:]
        open(path, "w").write("".join(edited))
        if all(expand(track, r)[1].count(MARK) == 1 for r in rs):
            chosen = (i, text)
            break
    check(chosen is not None, f"{track}: a line of {a}'s {name} that no patch touches exists")
    if chosen is None:
        open(path, "w").write(original)
        continue
    i, text = chosen
    for r in rs:
        rc, got, _ = expand(track, r)
        diff = [d for d in difflib.ndiff(before[r].splitlines(), got.splitlines()) if d[:1] in "+-"]
        check(rc == 0 and diff == ["- " + text, "+ " + text + MARK],
              f"{track} {r}: the edit to {a}'s {name} line {i + 1} reaches it, one line and no other "
              f"({'through its own patch' if r in patchers else 'inherited'})")
    got = run("expand", track, rs[-1])
    check(got.returncode == 0 and got.stdout == expand(track, rs[-1])[1] and got.stdout.count(MARK) == 1,
          f"{track} {rs[-1]}: rungs.py expand gives the same program with the fix")
    open(path, "w").write(original)
    rungs._resolved.clear()

    # A line of a child's hunk (one it removes, or its context): that child cannot be made, and says which patch to make again.
    child = next(r for r in patchers if rungs.parent_of(track, r)[0] and
                 rungs.sources(track, rungs.holder(track, rungs.parent_of(track, r)[0], name), name)[-1]
                 == f"{track}/{a}/{name}" and rungs.holder(track, rungs.parent_of(track, r)[0], name) == a)
    patch_text = open(os.path.join(steps, track, child, name + rungs.PATCH)).read()
    in_hunk = [l[1:] for l in patch_text.splitlines(keepends=True)
               if l[:1] in " -" and not l.startswith("---") and l[1:].strip()
               and not l[1:].lstrip().startswith(("//", "/*", "*")) and not rungs.INCLUDE.match(l[1:])
               and sum(m == l[1:] for m in lines) == 1]
    check(bool(in_hunk), f"{track} {child}: a hunk of its patch holds a line that {a}'s {name} holds once")
    if not in_hunk:
        continue
    k = lines.index(in_hunk[0])
    open(path, "w").write("".join(lines[:k] + [in_hunk[0].rstrip("\n") + MARK + "\n"] + lines[k + 1:]))
    named = f"steps/{track}/{child}/{name}{rungs.PATCH}"
    below = [r for r in rs if child in rungs.chain(track, r)]
    for r in below:
        rc, _, message = expand(track, r)
        check(rc == 2 and named in message and "hunk" in message,
              f"{track} {r}: an edit inside {child}'s patch stops it (exit {rc}, '{message[:110]}')")
    got = run("expand", track, child)
    check(got.returncode == 2 and named in got.stderr,
          f"{track} {child}: rungs.py expand exits 2, naming {named}")
    for r in sorted(set(rs) - set(below)):
        rc, got, _ = expand(track, r)
        check(rc == 0 and got.count(MARK) == 1, f"{track} {r}: outside {child}'s branch, the same edit reaches it")
    got = run("render", os.path.join(work, "render"))
    check(got.returncode == 2 and named in got.stderr,
          f"{track}: the build's render stops, naming {named} (exit {got.returncode})")
    open(path, "w").write(original)
    rungs._resolved.clear()

print(f"{failed} failed")
sys.exit(1 if failed else 0)
