#!/usr/bin/env python3
"""labs/skeleton.py makes a skeleton only from a patch that fits its step exactly: the hunk's
lines at one place. A step whose student region changed, or holds the region twice, stops it
(exit 2, naming the lab's patch and the hunk), so no skeleton of something else is handed out.
Usage: skeleton_strict.py SKELETON_PY WORKDIR"""
import json
import os
import shutil
import subprocess
import sys

tool, work = sys.argv[1:3]
failed = 0


def check(ok, what):
    global failed
    failed += not ok
    print(("ok   " if ok else "FAIL ") + what)


step = "int f(int x) {\n  // the sum\n  return x + 1;\n}\n\nint g() { return 2; }\n"
patch = ("--- steps/t/00_a/a.cu\n+++ skeleton\n@@ -1,4 +1,4 @@\n int f(int x) {\n"
         "   // the sum\n-  return x + 1;\n+  return 0;  // TODO: the sum\n }\n")


def make(step_text):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "steps", "t", "00_a"))
    os.makedirs(os.path.join(work, "labs", "00-x"))
    open(os.path.join(work, "steps", "t", "00_a", "a.cu"), "w").write(step_text)
    open(os.path.join(work, "labs", "00-x", "skeleton.patch"), "w").write(patch)
    json.dump({"source": "a.cu", "skeleton": {"from": "steps/t/00_a/a.cu", "patch": "skeleton.patch"}},
              open(os.path.join(work, "labs", "00-x", "lab.json"), "w"))
    out = os.path.join(work, "out.cu")
    p = subprocess.run([sys.executable, tool, work, "00-x", out], capture_output=True, text=True)
    return p, (open(out).read() if p.returncode == 0 else None)


p, text = make(step)
check(p.returncode == 0 and text == step.replace("  return x + 1;\n", "  return 0;  // TODO: the sum\n"),
      "a fitting patch: the step with the student's line taken out")
p, _ = make(step.replace("x + 1", "x + 2"))
check(p.returncode == 2 and "labs/00-x/skeleton.patch no longer fits" in p.stderr and "matches 0 places" in p.stderr,
      f"the student's region changed in the step: exit 2, named ({p.stderr.strip()})")
p, _ = make(step + "\n" + step.split("\n\n")[0] + "\n")
check(p.returncode == 2 and "matches 2 places" in p.stderr, f"the region twice in the step: exit 2 ({p.stderr.strip()})")
p, _ = make(step.replace("  // the sum\n", "  // the total\n"))
check(p.returncode == 2 and "hunk 1" in p.stderr, f"a context line changed: exit 2 ({p.stderr.strip()})")
sys.exit(1 if failed else 0)
