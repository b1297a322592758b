#!/usr/bin/env python3
"""The ladders as declared trees (steps/TRACK/STEP/parent): every step names an earlier step
of its track, or is the root; `./stepwise diff TRACK STEP` shows each file the step holds against
the file its parent's chain holds (a step holds no unchanged copy);
`./stepwise list` shows it; a malformed, missing or later parent is bad input (exit 2, named).
Usage: step_tree.py STEPWISE WORKDIR"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

driver, work = sys.argv[1], sys.argv[2]
root = os.path.dirname(os.path.abspath(driver))
failed = 0


def check(ok, what):
    global failed
    failed += not ok
    print(("ok   " if ok else "FAIL ") + what)


def run(drv, *args):
    env = dict(os.environ, STEPWISE_NO_INSTALL="1", STEPWISE_BUILD=os.path.join(work, "build"))
    return subprocess.run([drv, *args], capture_output=True, text=True, env=env)


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chain import Chain  # noqa: E402  (the chain walked from the parent files, patch(1) for patches)

tree = Chain(root)


def label(track, step, name):
    return f"steps/{track}/{step}/{name}" + (".patch" if tree.held(track, step)[name] == "patch" else "")


def check_diff(track, a, b, out):
    """`diff TRACK B` (A its parent): every file B holds (whole or as a patch) appears, as diff -u
    of what A's chain resolves that name to (or /dev/null) against what B's does, and nothing
    else of B's chain is shown as B's. A file B holds that is the same as A's would be an
    unchanged copy: it must not be there."""
    held = sorted(tree.held(track, b))
    shown = re.findall(r"^\+\+\+ (\S+)", out, re.M)
    ok = all(x == "/dev/null" or x.startswith(f"steps/{track}/{b}/") for x in shown)
    for f in held:
        if label(track, b, f) not in shown:
            continue  # a file of B's folder its program does not include (checked below)
        # A file the diff calls renamed (`# NEW: OLD renamed in B`) is diffed against OLD.
        renamed = re.search(rf"^# {re.escape(f)}: (\S+) renamed in {b}$", out, re.M)
        was = renamed.group(1) if renamed else f
        h = tree.nearest(track, a, was)
        with tempfile.TemporaryDirectory() as tmp:
            old, new = os.path.join(tmp, "old"), os.path.join(tmp, "new")
            open(old, "w").write(tree.text(track, h, was) if h else "")
            open(new, "w").write(tree.text(track, b, f))
            want = subprocess.run(["diff", "-u", "--label", label(track, h, was) if h else "/dev/null",
                                   "--label", label(track, b, f), old if h else os.devnull, new],
                                  capture_output=True, text=True).stdout
        ok = ok and want != "" and want in out
    missing = [f for f in held if label(track, b, f) not in shown]
    return ok and not missing, missing


listing = run(driver, "list").stdout
for track in ("mri", "mc", "epic", "ae"):
    steps = sorted(d for d in os.listdir(os.path.join(root, "steps", track)) if re.match(r"\d\d_", d))
    roots = []
    for step in steps:
        # The step names itself (step_info's first field, the record's "step") as its folder
        # does: a renumbered step that kept its old name writes records under the old number.
        source = tree.text(track, tree.main(track, step)[1], tree.main(track, step)[0])
        names = re.findall(r'return \{"(\d\d_[a-z0-9_]+)"', source)
        check(names == [step], f"{track} {step}: its source names it {step} (step_info says {names})")
        line = open(os.path.join(root, "steps", track, step, "parent")).readline().split()
        parent = line[0]
        if parent == "none":
            roots.append(step)
            check(run(driver, "diff", track, step[:2]).returncode == 2, f"{track} {step}: the root has no parent to diff")
            continue
        check(parent in steps and parent < step, f"{track} {step}: parent {parent} is an earlier step")
        one = run(driver, "diff", track, step[:2])
        ok, missing = check_diff(track, parent, step, one.stdout)
        check(one.returncode == 0 and one.stdout and ok,
              f"{track} {step}: `diff {track} {step[:2]}` shows each file it holds against {parent}'s chain"
              + (f" (not shown: {missing})" if missing else ""))
        shown = re.search(rf"^  {track}_{step}\s+\S+\s+from {parent[:2]}(, (reference|branch))?\b", listing, re.M)
        check(shown is not None, f"{track} {step}: list shows 'from {parent[:2]}'")
    check(roots == [steps[0]], f"{track}: one root, the first step ({roots})")

# `lessons`: each pair's count is what the two programs' diff -u changes (the programs resolved
# here, by chain.py, with the compiler flags and libraries after them), non-blank lines without
# the file headers; in parentheses what `diff TRACK STEP` changes; the median leaves references out.
def changed(text):
    return sum(1 for l in text.splitlines() if l[:1] in "+-" and not l.startswith(("+++ ", "--- ")) and l[1:].strip())


def program_text(track, step):
    text = tree.expand(track, step)
    for extra in ("compiler_flags", "needs"):
        at = tree.nearest(track, step, extra)
        words = tree.text(track, at, extra).split() if at else []
        if words:
            text += f"{extra}: {' '.join(words)}\n"
    return text


for track in ("mri", "mc", "epic", "ae"):
    out = run(driver, "lessons", track)
    check(out.returncode == 0, f"lessons {track} exits 0")
    rows = {m.group(2): (m.group(1), int(m.group(3)), int(m.group(4)), m.group(5))
            for m in re.finditer(r"^\S+\s+(\d\d) -> (\S+)\s+(\d+)  \(files (\d+)\)(.*)$", out.stdout, re.M)}
    counted = []
    for step in tree.steps(track):
        parent, *kind = open(os.path.join(root, "steps", track, step, "parent")).readline().split()
        if parent == "none":
            check(step not in rows, f"lessons {track}: the root {step} has no row")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
            open(a, "w").write(program_text(track, parent))
            open(b, "w").write(program_text(track, step))
            want = changed(subprocess.run(["diff", "-u", a, b], capture_output=True, text=True).stdout)
        files = changed(run(driver, "diff", track, step[:2]).stdout)
        got = rows.get(step)
        check(got is not None and got[0] == parent[:2] and got[1] == want and got[2] == files,
              f"lessons {track} {step}: {want} changed lines of the program against {parent}, {files} of the files ({got})")
        if kind != ["reference"]:
            counted.append(want)
        else:
            check(got is not None and "not counted" in got[3], f"lessons {track} {step}: a reference is not counted")
    counted.sort()
    n = len(counted)
    median = counted[n // 2] if n % 2 else (counted[n // 2 - 1] + counted[n // 2]) / 2
    line = re.search(r"median (\S+) over (\d+) pairs, largest (\d+), over 400: (\d+)", out.stdout)
    check(line is not None and float(line.group(1)) == median and int(line.group(2)) == n
          and int(line.group(3)) == counted[-1] and int(line.group(4)) == sum(c > 400 for c in counted),
          f"lessons {track}: median {median} over {n} pairs, largest {counted[-1]} ({line and line.group(0)})")
bad = run(driver, "lessons", "nope")
check(bad.returncode == 2 and "unknown track 'nope'" in bad.stderr, "lessons of an unknown track: exit 2, named")

# Bad parent files, in a copy of the driver with a steps/ tree of its own.
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
shutil.copy(driver, work)
fake = os.path.join(work, "stepwise")
for name, content in [("00_a", "none"), ("01_b", "00_a"), ("02_c", "00_a")]:
    d = os.path.join(work, "steps", "mri", name)
    os.makedirs(d)
    open(os.path.join(d, "x.cpp"), "w").write("// " + name + "\n")
    open(os.path.join(d, "parent"), "w").write(content + "\n")
shutil.copy(os.path.join(root, "steps", "rungs.py"), os.path.join(work, "steps"))  # what diff resolves with
check(run(fake, "diff", "mri", "02").returncode == 0, "a well-formed tree diffs")
for content, text in [("01_b sideways", "want PARENT_ID"), ("", "want PARENT_ID"), ("03_d", "not an earlier step"),
                      ("02_c", "not an earlier step"), (None, "declares no parent")]:
    path = os.path.join(work, "steps", "mri", "02_c", "parent")
    if content is None:
        os.remove(path)
    else:
        open(path, "w").write(content + "\n")
    p = run(fake, "diff", "mri", "02")
    check(p.returncode == 2 and text in p.stderr, f"parent {content!r}: exit 2 naming the problem ({p.returncode}: {p.stderr.strip()})")
sys.exit(1 if failed else 0)
