#!/usr/bin/env python3
"""`./stepwise lab ID export DIR`: the handout bundle holds no answer and checks as the repository does.

    lab_export.py STEPWISE ROOT BUILD           bad input; then, with nvcc, every lab's bundle
                                               contents (no answer in it, the skeleton start's)
    lab_export.py STEPWISE ROOT BUILD --bundle LAB  with nvcc, that LAB's skeleton compiles in its
                                               bundle with the bundle's Makefile and its ./check
                                               grades it (fail, or 77 without a GPU): one test a
                                               lab, so that they build side by side
    lab_export.py STEPWISE ROOT BUILD --gpu [LAB...]  with a GPU only (77 at once without one, before
                                               compiling anything): the reference solution
                                               passes in the bundle and a known-wrong one fails

No answer: no file named skeleton.patch, reference.patch or wrong.json, no path under steps/,
and no line of the lesson in any file: the '+' lines of `steps/rungs.py diff TRACK NN` of the
reference step, and the lines of the lab's reference solution, that are 20 characters or more
and that the skeleton does not itself hand out (a skeleton is its step with the student's part
taken out: the rest of the step is the lab's starting point, by design) nor the harness
the repository's own check compiles against (common/, a lab's harness files)."""
import json, os, shutil, subprocess, sys, tempfile

stepwise, root, build = (os.path.abspath(a) for a in sys.argv[1:4])
want_gpu = sys.argv[4:5] == ["--gpu"]
bundle = sys.argv[5] if sys.argv[4:5] == ["--bundle"] and len(sys.argv) == 6 else None
if sys.argv[4:] and not want_gpu and bundle is None:
    sys.exit(f"lab_export.py: want STEPWISE ROOT BUILD [--bundle LAB | --gpu [LAB...]], not {sys.argv[4:]}")
only = sys.argv[5:] if want_gpu else [bundle] if bundle else []  # those labs alone
env = {**os.environ, "STEPWISE_BUILD": build, "STEPWISE_LAB_PREBUILT": "1"}
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, env=env, **kw)


if want_gpu:
    # A GPU first, before anything compiles (tests/labs/gpu_first.sh does the same).
    q = os.path.join(build, "tests", "labs", "lab_gpu_usable")
    if shutil.which("nvcc") is None or not os.access(q, os.X_OK):
        print("skipped: no nvcc or no GPU query built")
        sys.exit(77)
    p = run([q])
    if p.returncode != 0:
        print(f"skipped: no usable GPU ({(p.stdout + p.stderr).strip()})")
        sys.exit(77)

labs = sorted(n for n in os.listdir(os.path.join(root, "labs"))
              if os.path.isfile(os.path.join(root, "labs", n, "lab.json")) and (not only or n in only))
tmp = tempfile.mkdtemp(prefix="lab-export-")

if not want_gpu and not bundle:
    # Bad input, said at once (exit 2, naming the problem), before anything is made.
    p = run([stepwise, "lab", "99-no-such-lab", "export", os.path.join(tmp, "x")])
    check(p.returncode == 2 and "no lab '99-no-such-lab'" in p.stderr, "unknown lab: exit 2, named")
    f = os.path.join(tmp, "a-file")
    open(f, "w").write("x")
    p = run([stepwise, "lab", labs[0], "export", f])
    check(p.returncode == 2 and f in p.stderr and "not a folder" in p.stderr, "export to a file: exit 2, named")
    d = os.path.join(tmp, "full")
    os.makedirs(d)
    open(os.path.join(d, "keep"), "w").write("x")
    p = run([stepwise, "lab", labs[0], "export", d])
    check(p.returncode == 2 and "not empty" in p.stderr and os.listdir(d) == ["keep"],
          "export to a non-empty folder: exit 2, named, nothing written")
    p = run([stepwise, "lab", labs[0], "export", os.path.join(f, "under")])
    check(p.returncode == 2 and "not a folder" in p.stderr, "export under a file: exit 2, named")
    p = run([stepwise, "lab", labs[0], "export"])
    check(p.returncode == 2, "export without DIR: exit 2")
if not want_gpu:
    if shutil.which("nvcc") is None:
        # A bundle's compile lines are the build's GPU steps', which a build without nvcc has not.
        print("skipped: no nvcc: the bundles themselves (their build needs the CUDA Toolkit)")
        shutil.rmtree(tmp, ignore_errors=True)
        sys.exit(1 if failures else 77 if bundle else 0)
if only and sorted(only) != labs:
    sys.exit(f"lab_export.py: no lab {sorted(set(only) - set(labs))} (labs: {labs})")

sys.path.insert(0, os.path.join(root, "labs"))
sys.path.insert(0, os.path.join(root, "steps"))
import skeleton as sk  # noqa: E402
import rungs  # noqa: E402


def lines_of(text):
    return {l.strip() for l in text.splitlines()}


def reference_solution(lab_id, lab):
    t = os.path.join(root, "tests", "labs", lab_id)
    if os.path.isfile(os.path.join(t, "reference.cu")):
        return open(os.path.join(t, "reference.cu")).read()
    step = os.path.join(root, lab["skeleton"]["from"])
    if os.path.isfile(os.path.join(t, "reference.patch")):
        return sk.apply_named(step, os.path.join(t, "reference.patch"))
    return rungs.expand_path(step)  # the reference step's own source


def lesson(lab_id, lab, skeleton_text, answer):
    lines = set()
    if lab.get("reference_step"):
        p = subprocess.run([sys.executable, os.path.join(root, "steps", "rungs.py"), "diff", lab["track"],
                            lab["reference_step"][:2]], capture_output=True, text=True)
        lines |= {l[1:].strip() for l in p.stdout.splitlines() if l.startswith("+") and not l.startswith("+++")}
    lines |= lines_of(answer)
    # What the lab hands out anyway: the skeleton, and the harness the repository's own check
    # compiles against (common/, and a lab's own harness files), which the bundle copies.
    given = lines_of(skeleton_text)
    for d, _, ns in os.walk(os.path.join(root, "common")):
        for n in ns:
            given |= lines_of(open(os.path.join(d, n), errors="replace").read())
    for n in os.listdir(os.path.join(root, "labs", lab_id)):
        if n not in ("README.md", "lab.json", "skeleton.patch") and os.path.isfile(os.path.join(root, "labs", lab_id, n)):
            given |= lines_of(open(os.path.join(root, "labs", lab_id, n), errors="replace").read())
    # A line the skeleton holds inside a longer one (a declaration with a TODO comment after it)
    # is handed out too.
    return {l for l in lines if len(l) >= 20 and any(c.isalnum() for c in l) and l not in given
            and l not in skeleton_text}


for lab_id in labs:
    lab = json.load(open(os.path.join(root, "labs", lab_id, "lab.json")))
    dest = os.path.join(tmp, lab_id)
    p = run([stepwise, "lab", lab_id, "export", dest])
    check(p.returncode == 0, f"{lab_id}: exported ({p.stderr.strip().splitlines()[-1:] if p.stderr else ''})")
    if p.returncode != 0:
        print(p.stdout + p.stderr)
        continue
    skel = open(os.path.join(dest, lab["source"])).read()
    answer = reference_solution(lab_id, lab)
    if not want_gpu and not bundle:
        files = [os.path.relpath(os.path.join(d, n), dest) for d, _, ns in os.walk(dest) for n in ns]
        bad = [f for f in files if os.path.basename(f) in ("skeleton.patch", "reference.patch", "wrong.json")
               or f.startswith("steps/") or "/steps/" in f]
        check(not bad, f"{lab_id}: no patch, wrong.json or steps/ file in the bundle {bad[:3]}")
        expected = sk.make(root, lab_id) if "skeleton" in lab else open(os.path.join(root, "labs", lab_id, lab["source"])).read()
        check(skel == expected, f"{lab_id}: the skeleton is start's")
        check(open(os.path.join(dest, "README.md")).read() == open(os.path.join(root, "labs", lab_id, "README.md")).read(),
              f"{lab_id}: the handout is the lab's README.md")
        words = lesson(lab_id, lab, skel, answer)
        leaks = []
        for f in files:
            data = open(os.path.join(dest, f), "rb").read()
            leaks += [(f, w) for w in words if w.encode() in data]
        check(not leaks, f"{lab_id}: none of the lesson's {len(words)} lines is in the bundle's {len(files)} files"
              + "".join(f"\n       {f}: {w}" for f, w in leaks[:5]))
        ref_json = json.load(open(os.path.join(dest, "bundle.json")))["reference"]
        check(lab.get("grade_by") == "agreement" or ref_json is not None, f"{lab_id}: a reference time: {ref_json and ref_json['kind']}")
    elif bundle:
        # The skeleton compiles in the bundle, with its own Makefile (nvcc through ptxas; no GPU).
        p = run(["make", "-s", f"-j{min(8, os.cpu_count() or 2)}", "-C", dest, "harness", os.path.join(dest, "build", "skeleton"),
                 f"EXE={os.path.join(dest, 'build', 'skeleton')}"], timeout=1200)
        check(p.returncode == 0, f"{lab_id}: the skeleton compiles in the bundle" + ("" if p.returncode == 0 else "\n" + p.stderr[-3000:]))
        # And the bundle's check, without a GPU, says so after compiling (77) or grades.
        p = run([os.path.join(dest, "check")], timeout=600)
        check(p.returncode in (1, 77), f"{lab_id}: ./check on the skeleton: {p.returncode} (1 FAIL, or 77 no GPU)")
    else:
        ref = os.path.join(dest, "reference_solution.cu")
        open(ref, "w").write(answer)
        p = run([os.path.join(dest, "check"), ref], timeout=900)
        check(p.returncode == 0, f"{lab_id}: the reference solution passes in the bundle: {p.stdout.strip()}"
              + ("" if p.returncode == 0 else "\n" + p.stderr[-3000:]))
        spec = os.path.join(root, "tests", "labs", lab_id, "wrong.json")
        name = sorted(json.load(open(spec)))[0]
        wrong = os.path.join(dest, f"wrong_{name}.cu")
        subprocess.run([sys.executable, os.path.join(root, "tests", "known_wrong.py"), ref, spec, name, wrong], check=True)
        p = run([os.path.join(dest, "check"), wrong], timeout=900)
        check(p.returncode == 1, f"{lab_id}: the known-wrong '{name}' fails in the bundle: {p.stdout.strip()}")
    shutil.rmtree(dest, ignore_errors=True)

shutil.rmtree(tmp, ignore_errors=True)
print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
