#!/usr/bin/env python3
"""`./stepwise rename TRACK STEP NEW_ID` moves a step and every mention of it together, in a copy
of the repository: the folder, its children's parent files, its program's step_info, the
records of report/results, the tests' and labs' names, the READMEs; a renumbered step's
evidence files and their citations. The evidence's contents stay as recorded. Every program
but the renamed one's name is the text it was (steps/rungs.py expand). A bad new id, one that
exists, one out of its parent's and children's order, or a wrong argument count: exit 2, named.
Usage: rename_step.py ROOT WORKDIR"""
import os
import re
import shutil
import subprocess
import sys

root, work = sys.argv[1], sys.argv[2]
failed = 0


def check(ok, what):
    global failed
    failed += not ok
    print(("ok   " if ok else "FAIL ") + what)


def copy_repo(dest):
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(root, dest, ignore=lambda d, names: [n for n in names if n.startswith((".git", "build"))
                                                         or (d == root and n in ("lab-work",))])


def run(repo, *args):
    env = dict(os.environ, STEPWISE_NO_INSTALL="1", STEPWISE_BUILD=os.path.join(repo, "build"))
    return subprocess.run([os.path.join(repo, "stepwise"), *args], capture_output=True, text=True, env=env)


def expand(repo, track, step):
    return subprocess.run([sys.executable, os.path.join(repo, "steps", "rungs.py"), "expand", track, step],
                          capture_output=True, text=True).stdout


def mentions(repo, word):
    """Text files outside report/evidence/ that still name WORD."""
    out = []
    pat = re.compile(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9_])")
    for d, dirs, files in os.walk(repo):
        rel = os.path.relpath(d, repo)
        if rel.startswith(os.path.join("report", "evidence")):
            continue
        for f in files:
            try:
                if pat.search(open(os.path.join(d, f), encoding="utf-8").read()):
                    out.append(os.path.relpath(os.path.join(d, f), repo))
            except (UnicodeDecodeError, OSError):
                pass
    return out


def steps(repo, track):
    return sorted(d for d in os.listdir(os.path.join(repo, "steps", track)) if re.match(r"\d\d_", d))


def parent(repo, track, step):
    return open(os.path.join(repo, "steps", track, step, "parent")).readline().split()[0]


# A rename in the middle of a ladder: mc's 07, parent of three.
repo = os.path.join(work, "rename")
copy_repo(repo)
old = next(s for s in steps(repo, "mc") if s.startswith("07_"))
kids = [s for s in steps(repo, "mc") if parent(repo, "mc", s) == old]
before = {s: expand(repo, "mc", s) for s in steps(repo, "mc")}
records = open(os.path.join(repo, "report", "results", "mc-h200.jsonl")).read().count(f'"{old}"')
evidence = {f: open(os.path.join(repo, "report", "evidence", f), "rb").read()
            for f in os.listdir(os.path.join(repo, "report", "evidence"))}
p = run(repo, "rename", "mc", "07", "07_renamed_here")
check(p.returncode == 0, f"rename mc 07 07_renamed_here exits 0 ({p.stderr.strip()})")
check(os.path.isdir(os.path.join(repo, "steps", "mc", "07_renamed_here"))
      and not os.path.exists(os.path.join(repo, "steps", "mc", old)), "the folder moved")
check(len(kids) > 0 and all(parent(repo, "mc", k) == "07_renamed_here" for k in kids),
      f"its children name it their parent ({' '.join(kids)})")
paths = [os.path.relpath(os.path.join(d, n), repo) for d, dirs, files in os.walk(repo)
         for n in dirs + files if n == old and "evidence" not in d]
check(paths == [], f"no folder outside report/evidence/ is named {old} ({paths[:3]})")
left = mentions(repo, old)
check(left == [], f"no text outside report/evidence/ names {old} ({left[:5]})")
check(records > 0 and open(os.path.join(repo, "report", "results", "mc-h200.jsonl")).read().count('"07_renamed_here"') == records,
      f"its {records} records in report/results/mc-h200.jsonl carry the new id")
check(re.search(r'return \{"07_renamed_here"', expand(repo, "mc", "07_renamed_here")) is not None,
      "its step_info names it by the new id")
same = all(expand(repo, "mc", s if s != old else "07_renamed_here") == body.replace(old, "07_renamed_here")
           for s, body in before.items())
check(same, "every mc program is the text it was, but for the new id")
check(all(open(os.path.join(repo, "report", "evidence", f), "rb").read() == b
          for f, b in evidence.items() if f != "README.md"), "the evidence files' contents are as recorded")
index = open(os.path.join(repo, "report", "evidence", "README.md")).read()
check(f"- mc `07_renamed_here` was `{old}`" in index, "report/evidence/README.md says what it was called")
listing = run(repo, "list").stdout
check(re.search(r"mc_07_renamed_here\b", listing) is not None, "list shows the new name")

# A renumber of a leaf: its evidence files (TRACK-DEVICE-NN-...) and their citations follow.
leaf = next(s for s in reversed(steps(repo, "mc"))
            if not any(parent(repo, "mc", k) == s for k in steps(repo, "mc")))
number = int(leaf[:2]) + 1
while any(s.startswith(f"{number:02d}_") for s in steps(repo, "mc")):
    number += 1
fake = f"mc-h200-{leaf[:2]}-renumber-probe.txt"
open(os.path.join(repo, "report", "evidence", fake), "w").write("a record\n")
readme = os.path.join(repo, "steps", "mc", leaf, "README.md")
open(readme, "a").write("\nSee [the probe](../../../" + "/".join(["report", "evidence", fake]) + ").\n")
new = f"{number:02d}_{leaf[3:]}"
p = run(repo, "rename", "mc", leaf[:2], new)
moved = fake.replace(f"-{leaf[:2]}-", f"-{number:02d}-")
check(p.returncode == 0 and os.path.isfile(os.path.join(repo, "report", "evidence", moved))
      and not os.path.exists(os.path.join(repo, "report", "evidence", fake)),
      f"renumber {leaf} -> {new}: its evidence file is renamed ({p.stderr.strip()})")
check("/".join(["report", "evidence", moved]) in open(os.path.join(repo, "steps", "mc", new, "README.md")).read(),
      "and its citation names the new file")

# Bad input: exit 2, naming the problem; nothing moves.
for args, text in [(["mc", "08", "07_renamed_here"], "exists already"),
                   (["mc", "08", "8_short"], "a step's id is NN_name"),
                   (["mc", "08", "08_Upper"], "a step's id is NN_name"),
                   (["mc", "06", "99_late"], "below its children's"),
                   (["mc", "06", "00_early"], "above its parent's"),
                   (["mc", "nope", "08_x"], "no step 'nope'"),
                   (["mc", "08"], "usage: ./stepwise rename")]:
    listed = steps(repo, "mc")
    p = run(repo, "rename", *args)
    check(p.returncode == 2 and text in p.stderr and steps(repo, "mc") == listed,
          f"rename {' '.join(args)}: exit 2, '{text}' ({p.returncode}: {p.stderr.strip()[:120]})")
shutil.rmtree(repo, ignore_errors=True)
sys.exit(1 if failed else 0)
