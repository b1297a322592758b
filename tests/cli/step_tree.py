#!/usr/bin/env python3
"""The ladders as declared trees (steps/TRACK/STEP/parent): every step names an earlier step
of its track, or is the root; `./stepwise diff TRACK STEP` is the diff against that parent;
`./stepwise list` shows it; a malformed, missing or later parent is bad input (exit 2, named).
Usage: step_tree.py STEPWISE WORKDIR"""
import os
import re
import shutil
import subprocess
import sys

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


def expected_diff(track, a, b):
    """diff -u of two steps' sources (and compiler flags, where either has some), labelled by
    their paths from the root: what `diff TRACK B` must print when A is B's parent. Computed
    here, not by the driver, so that one driver call a step suffices."""
    def src(step):
        folder = os.path.join(root, "steps", track, step)
        return next(f for f in sorted(os.listdir(folder)) if f.endswith((".cu", ".cpp")))
    out = ""
    pa, pb = f"steps/{track}/{a}/{src(a)}", f"steps/{track}/{b}/{src(b)}"
    out += subprocess.run(["diff", "-u", "--label", pa, "--label", pb, os.path.join(root, pa), os.path.join(root, pb)],
                          capture_output=True, text=True).stdout
    fa, fb = (os.path.join(root, "steps", track, x, "compiler_flags") for x in (a, b))
    if os.path.exists(fa) or os.path.exists(fb):
        out += subprocess.run(["diff", "-u", "--label", f"steps/{track}/{a}/compiler_flags", "--label",
                               f"steps/{track}/{b}/compiler_flags", fa if os.path.exists(fa) else "/dev/null",
                               fb if os.path.exists(fb) else "/dev/null"], capture_output=True, text=True).stdout
    return out


listing = run(driver, "list").stdout
for track in ("mri", "mc", "epic", "ae"):
    steps = sorted(d for d in os.listdir(os.path.join(root, "steps", track)) if re.match(r"\d\d_", d))
    roots = []
    for step in steps:
        # The step names itself (step_info's first field, the record's "step") as its folder
        # does: a renumbered step that kept its old name writes records under the old number.
        folder = os.path.join(root, "steps", track, step)
        source = "".join(open(os.path.join(folder, f)).read() for f in os.listdir(folder) if f.endswith((".cu", ".cpp")))
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
        check(one.returncode == 0 and one.stdout and one.stdout == expected_diff(track, parent, step),
              f"{track} {step}: `diff {track} {step[:2]}` is diff -u of {parent}'s source and its own")
        shown = re.search(rf"^  {track}_{step}\s+\S+\s+from {parent[:2]}(, (reference|branch))?\b", listing, re.M)
        check(shown is not None, f"{track} {step}: list shows 'from {parent[:2]}'")
    check(roots == [steps[0]], f"{track}: one root, the first step ({roots})")

# `lessons`: each pair's count is what `diff -u` of the two sources (and of their compiler
# flags) changes, non-blank lines without the file headers; the median leaves references out.
def changed(a, b):
    p = subprocess.run(["diff", "-u", a, b], capture_output=True, text=True)
    return sum(1 for l in p.stdout.splitlines()
               if l[:1] in "+-" and not l.startswith(("+++ ", "--- ")) and l[1:].strip())


def source(folder):
    return next(os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith((".cu", ".cpp")))


for track in ("mri", "mc", "epic", "ae"):
    out = run(driver, "lessons", track)
    check(out.returncode == 0, f"lessons {track} exits 0")
    rows = {m.group(2): (m.group(1), int(m.group(3)), m.group(4))
            for m in re.finditer(r"^\S+\s+(\d\d) -> (\S+)\s+(\d+)(.*)$", out.stdout, re.M)}
    counted = []
    for step in sorted(d for d in os.listdir(os.path.join(root, "steps", track)) if re.match(r"\d\d_", d)):
        parent, *kind = open(os.path.join(root, "steps", track, step, "parent")).readline().split()
        if parent == "none":
            check(step not in rows, f"lessons {track}: the root {step} has no row")
            continue
        a, b = os.path.join(root, "steps", track, parent), os.path.join(root, "steps", track, step)
        want = changed(source(a), source(b))
        fa, fb = os.path.join(a, "compiler_flags"), os.path.join(b, "compiler_flags")
        if os.path.exists(fa) or os.path.exists(fb):
            want += changed(fa if os.path.exists(fa) else "/dev/null", fb if os.path.exists(fb) else "/dev/null")
        got = rows.get(step)
        check(got is not None and got[0] == parent[:2] and got[1] == want,
              f"lessons {track} {step}: {want} changed lines against {parent} ({got})")
        if kind != ["reference"]:
            counted.append(want)
        else:
            check(got is not None and "not counted" in got[2], f"lessons {track} {step}: a reference is not counted")
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
