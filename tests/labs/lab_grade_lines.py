#!/usr/bin/env python3
"""What the checker prints under a passing time: the student's parameters beside the reference's
(lab.json "compare_params", read from each run's record) and, below the scale's best grade, what
would raise it (lab.json "raise_grade"); lab 03 declares both, and its handout says so.
Usage: lab_grade_lines.py ROOT"""
import json
import os
import sys
import tempfile

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "labs"))
import lab as checker  # noqa: E402

failed = 0


def check(ok, what):
    global failed
    failed += not ok
    print(("ok   " if ok else "FAIL ") + what)


lab = json.load(open(os.path.join(root, "labs", "03-mri-sfu-tuning", "lab.json")))
names = lab.get("compare_params")
check(names == ["threads", "voxels", "unroll", "chunk"], f"lab 03 compares its four tuning parameters ({names})")
with tempfile.TemporaryDirectory() as tmp:
    mine, theirs = os.path.join(tmp, "student.jsonl"), os.path.join(tmp, "reference.jsonl")
    with open(mine, "w") as f:
        f.write(json.dumps({"params": {"threads": 256, "voxels": 1, "unroll": 4, "chunk": 4096, "kernel": "fhd"}}) + "\n")
    with open(theirs, "w") as f:
        f.write(json.dumps({"params": {"threads": 99}}) + "\n")  # an earlier run: the last record counts
        f.write(json.dumps({"params": {"threads": 512, "voxels": 4, "unroll": 8, "chunk": 2048}}) + "\n")
    line = checker.parameter_line(names, checker.params_of(mine), checker.params_of(theirs))
    check(line == "  parameters: yours threads=256 voxels=1 unroll=4 chunk=4096; "
                  "the reference's threads=512 voxels=4 unroll=8 chunk=2048", f"both sets side by side: {line!r}")
    line = checker.parameter_line(names, checker.params_of(mine), checker.params_of(os.path.join(tmp, "none.jsonl")))
    check("the reference's threads=? voxels=?" in line, f"a reference without a record shows '?' ({line!r})")
check(checker.parameter_line(None, {"a": 1}, {"a": 2}) == "", "a lab that compares no parameters prints no line")

for marks in (80, 60, 40):
    hint = checker.grade_hint(lab, marks)
    check(hint.startswith("  to raise it: ") and "task 3" in hint and "sweep" in hint, f"grade {marks} %: the hint names the sweep")
check(checker.grade_hint(lab, 100) == "", "grade 100 %: no hint")
lab06 = json.load(open(os.path.join(root, "labs", "06-ae-tiling", "lab.json")))
check(checker.grade_hint(lab06, 40) == "", "a lab without raise_grade prints no hint")
handout = open(os.path.join(root, "labs", "03-mri-sfu-tuning", "README.md")).read()
check("what would raise it" in handout and "beside 08_tuned's" in handout, "lab 03's handout says what the checker prints")
sys.exit(1 if failed else 0)
