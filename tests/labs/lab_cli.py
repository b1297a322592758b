#!/usr/bin/env python3
"""`./stepwise lab list` and `lab ID start [DIR]`, on the CPU: every lab is listed; start copies
the skeleton byte for byte, refuses to overwrite the student's copy, and leaves the
repository's tracked files as they were; the default folder, lab-work/, is git-ignored; bad
usage exits 2. Usage: lab_cli.py STEPWISE ROOT"""
import filecmp, json, os, subprocess, sys, tempfile

stepwise, root = sys.argv[1:3]


def run(*args):
    return subprocess.run([stepwise, *args], capture_output=True, text=True)


def expect(cond, what, p=None):
    if not cond:
        detail = f"\n--- stdout:\n{p.stdout}--- stderr:\n{p.stderr}" if p is not None else ""
        sys.exit(f"lab_cli.py: {what}{detail}")


def tracked_state():
    # The tracked files under labs/, the only ones a start could reach (the skeletons), as git
    # sees them; None outside a git checkout (a copied tree).
    p = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no", "--", "labs"],
                       capture_output=True, text=True)
    return p.stdout if p.returncode == 0 else None


labs = sorted(d for d in os.listdir(os.path.join(root, "labs"))
              if os.path.isfile(os.path.join(root, "labs", d, "lab.json")))
expect(labs, "no lab has a lab.json")

p = run("lab", "list")
expect(p.returncode == 0, f"lab list: exit {p.returncode}", p)
for lab in labs:
    line = [l for l in p.stdout.splitlines() if l.split()[:1] == [lab]]
    expect(len(line) == 1, f"lab list: {lab} is not listed on one line of its own", p)

before = tracked_state()
with tempfile.TemporaryDirectory() as tmp:
    for lab in labs:
        meta = json.load(open(os.path.join(root, "labs", lab, "lab.json")))
        for key in ("title", "track", "gpu", "source", "check_flags", "grade"):
            expect(key in meta, f"{lab}/lab.json has no '{key}'")
        # What the student's file is built like, and what decides the grade.
        expect("reference_step" in meta or "reference_target" in meta,
               f"{lab}/lab.json names neither a reference_step nor a reference_target")
        expect("time_flags" in meta or meta.get("grade_by") == "agreement",
               f"{lab}/lab.json has no time_flags (and is not graded by agreement)")
        dest = os.path.join(tmp, lab)
        p = run("lab", lab, "start", dest)
        expect(p.returncode == 0, f"lab {lab} start: exit {p.returncode}", p)
        copy = os.path.join(dest, meta["source"])
        if "skeleton" in meta:
            # Made from the step: exactly the step's source with the patch's hunks applied (the
            # hunks found independently here, by their old text), and no copy of it in labs/.
            expect(not os.path.exists(os.path.join(root, "labs", lab, meta["source"])),
                   f"labs/{lab}/{meta['source']}: a hand copy beside the skeleton.patch that makes it")
            sys.path.insert(0, os.path.join(root, "steps"))
            import rungs  # noqa: E402  (the step's whole program, as skeleton.py reads it)
            step = rungs.expand_path(os.path.join(root, meta["skeleton"]["from"]))
            patch = open(os.path.join(root, "labs", lab, meta["skeleton"]["patch"])).read()
            want = step
            for hunk in patch.split("\n@@ ")[1:]:
                body = hunk.split("\n", 1)[1].splitlines(keepends=True)
                old = "".join(l[1:] for l in body if l[:1] in " -")
                new = "".join(l[1:] for l in body if l[:1] in " +")
                expect(want.count(old) == 1, f"lab {lab}: a hunk of the patch does not fit the step once")
                want = want.replace(old, new)
            expect(open(copy).read() == want, f"lab {lab} start: {copy} is not the step with the patch applied")
            expect(want != step, f"lab {lab}: the skeleton is the step itself")
        else:
            skeleton = os.path.join(root, "labs", lab, meta["source"])
            expect(filecmp.cmp(skeleton, copy, shallow=False), f"lab {lab} start: {copy} differs from {skeleton}")
        # The student's work is never overwritten.
        with open(copy, "a") as f:
            f.write("// the student's work\n")
        p = run("lab", lab, "start", dest)
        expect(p.returncode == 2 and "not overwriting" in p.stderr, f"lab {lab} start twice: exit {p.returncode}", p)
        expect(open(copy).read().endswith("// the student's work\n"), f"lab {lab} start twice changed {copy}")
        # check on a file that does not exist is bad usage, before any build.
        p = run("lab", lab, "check", os.path.join(tmp, "missing.cu"))
        expect(p.returncode == 2 and "no such file" in p.stderr, f"lab {lab} check missing file: exit {p.returncode}", p)

for args in (["lab"], ["lab", "no-such-lab", "start"], ["lab", labs[0], "grade"], ["lab", labs[0], "start", "a", "b"]):
    p = run(*args)
    expect(p.returncode == 2, f"{' '.join(args)}: expected exit 2, got {p.returncode}", p)

after = tracked_state()
expect(before == after, "lab start changed the repository's tracked files")
if before is not None:
    p = subprocess.run(["git", "-C", root, "check-ignore", "-q", f"lab-work/{labs[0]}/x.cu"])
    expect(p.returncode == 0, "lab-work/ (lab start's default folder) is not git-ignored")
print(f"{len(labs)} labs listed and started")
