#!/usr/bin/env python3
"""The labs keep their answers one honest step away, on any machine (no build, no GPU):
  1. every handout (labs/ID/README.md) keeps its fixed sections and has, in its background, a
     paragraph beginning "**Where the answer is.**" that names the files holding the answer: the
     reference step's folder (steps/TRACK/NN_name/) and every step folder that holds a source of
     its program (steps/rungs.py show), the lab's skeleton.patch and tests/labs/ID/ where they
     exist, and asks the student to try first, then compare;
  2. a skeleton's own comments (its header, before the first line of code) name none of the
     earlier steps that hold the kernels the student writes;
  3. labs/05-epic-fusion/phases.py shows the record of the problem asked for (--problem,
     --image-size), says which, and exits 2 when none matches; the commands the handouts give
     name the problem of the task;
  4. labs/README.md's tips for a student without a GPU show no tune records of a lab's
     reference step (they are lab 03's task 3, done): each sweep.py command there is run and
     the programs of its maps are checked.
Usage: handouts_answer_free.py ROOT"""
import glob, json, os, re, shlex, subprocess, sys, tempfile

root = os.path.abspath(sys.argv[1])
sys.dont_write_bytecode = True
failed = 0


def check(ok, what):
    global failed
    failed += not ok
    print(("ok   " if ok else "FAIL ") + what)


def run(args, **kw):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, cwd=root, **kw)


def holders(track, step):
    """The step folders (steps/TRACK/NN_name/) that hold a source file of the step's program."""
    p = run([os.path.join(root, "steps", "rungs.py"), "show", track, step])
    if p.returncode != 0:
        sys.exit(f"handouts_answer_free.py: rungs.py show {track} {step} failed:\n{p.stderr}")
    out = []
    for line in p.stdout.splitlines():
        cols = line.split()
        if len(cols) >= 2 and re.search(r"\.(cu|cuh|cpp|hpp|h)$", cols[0]):
            folder = os.path.dirname(cols[1]) + "/"
            if folder not in out:
                out.append(folder)
    return out


labs = []
for meta_path in sorted(glob.glob(os.path.join(root, "labs", "*", "lab.json"))):
    lab_id = os.path.basename(os.path.dirname(meta_path))
    labs.append((lab_id, json.load(open(meta_path))))
check(len(labs) >= 7, f"{len(labs)} labs found under labs/")

# 1. The paragraph that names where the answer is, in every handout.
sections = ["Objectives", "Background", "Tasks", "Questions", ("How to check", "Build and check"), "Grading"]
reference_steps = set()  # (track, step) of every lab
for lab_id, meta in labs:
    readme = open(os.path.join(root, "labs", lab_id, "README.md")).read()
    headings = re.findall(r"^## (.+?)\s*$", readme, re.M)
    for want in sections:
        names = want if isinstance(want, tuple) else (want,)
        check(any(h in names for h in headings), f"{lab_id}: the handout has its section {' or '.join(names)}")
    m = re.search(r"^\*\*Where the answer is\.\*\*(.*?)(?:\n\s*\n|\Z)", readme, re.S | re.M)
    check(m is not None, f"{lab_id}: the handout has a paragraph '**Where the answer is.**'")
    if m is None:
        continue
    para = " ".join(m.group(0).split())
    background = readme.split("\n## Background", 1)[-1].split("\n## ", 1)[0]
    check(m.group(0).strip() in background, f"{lab_id}: that paragraph is in the background")
    named = []
    if meta.get("reference_step"):
        track, step = meta["track"], meta["reference_step"]
        reference_steps.add((track, step))
        named.append(f"steps/{track}/{step}/")
        named += [f for f in holders(track, step) if f not in named]
    if "skeleton" in meta:
        named.append(f"labs/{lab_id}/{meta['skeleton']['patch']}")
    if os.path.isdir(os.path.join(root, "tests", "labs", lab_id)):
        named.append(f"tests/labs/{lab_id}/")
    check(bool(named), f"{lab_id}: there are files that hold the answer to name")
    for path in named:
        check(path in para, f"{lab_id}: the paragraph names {path}")
    check("try first, then compare" in para, f"{lab_id}: the paragraph says: try first, then compare")
    check(re.search(r"[Dd]o not open", para) is not None, f"{lab_id}: the paragraph asks not to open them before")

    # 2. The skeleton's header names no earlier step that holds the student's kernels.
    if "skeleton" in meta and meta.get("reference_step"):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, meta["source"])
            p = run([os.path.join(root, "labs", "skeleton.py"), root, lab_id, out])
            check(p.returncode == 0, f"{lab_id}: the skeleton is made from its step ({p.stderr.strip()})")
            if p.returncode != 0:
                continue
            header = []
            for line in open(out):
                if not line.startswith("//"):
                    break
                header.append(line)
            header = "".join(header)
        for folder in holders(meta["track"], meta["reference_step"]):
            rung = folder.rstrip("/").split("/")[-1]
            if rung == meta["reference_step"]:
                continue
            number = rung.split("_")[0]
            hit = re.search(rf"\b({re.escape(rung)}|{number}'s)", header)
            check(hit is None, f"{lab_id}: the skeleton's header does not point at {rung}"
                  + (f" (it says {hit.group(0)!r})" if hit else ""))

# 3. phases.py shows the record asked for, and says which.
phases = os.path.join(root, "labs", "05-epic-fusion", "phases.py")
HEAD = re.compile(r"^epic (\S+), problem (\S+), image size (\S+), .*commit (\S+),")


def record(name, size, commit, grid):
    return {"track": "epic", "step": "01_gpu_pipeline", "commit": commit, "device": {"name": "a GPU"},
            "problem": {"name": name, "params": {"image_size": size}},
            "params": {"phase_ms_per_gulp": {"grid": grid, "fft": 1.0}}}


with tempfile.TemporaryDirectory() as tmp:
    f = os.path.join(tmp, "records.jsonl")
    with open(f, "w") as out:
        for r in (record("small", 64, "aaa", 0.25), record("small-128", 128, "bbb", 2.0),
                  record("small", 64, "ccc", 0.5), record("large-128", 128, "ddd", 40.0)):
            out.write(json.dumps(r) + "\n")
    for args, want in (([], ("small", "64", "ccc", "1.5")),
                       (["--problem", "small"], ("small", "64", "ccc", "1.5")),
                       (["--problem", "small", "--image-size", "64"], ("small", "64", "ccc", "1.5")),
                       (["--problem", "small-128", "--image-size", "128"], ("small-128", "128", "bbb", "3"))):
        p = run([phases, f, *args])
        head = HEAD.match(p.stdout)
        shown = head.group(2, 3, 4) if head else None
        total = re.search(r"^total\s+(\S+)", p.stdout, re.M)
        check(p.returncode == 0 and shown == want[:3] and total is not None and total.group(1) == want[3],
              f"phases.py {' '.join(args) or '(no flags)'}: shows problem {want[0]}, image size {want[1]}, "
              f"commit {want[2]} (got {shown}, exit {p.returncode})")
    check("the last of 2 matching" in run([phases, f]).stdout, "phases.py says which of several matching records it shows")
    for args in (["--problem", "small", "--image-size", "128"], ["--problem", "tiny"]):
        p = run([phases, f, *args])
        check(p.returncode == 2 and "no record of epic 01_gpu_pipeline on problem" in p.stderr
              and "small-128 (image size 128)" in p.stderr and "Traceback" not in p.stderr,
              f"phases.py {' '.join(args)}: none matches: exit 2, naming what the file holds ({p.stderr.strip()})")
    p = run([phases, f, "--image-size", "big"])
    check(p.returncode == 2 and "Traceback" not in p.stderr, "phases.py --image-size big: bad usage (exit 2)")

# The commands the handouts give: they name the task's problem, and show it.
tip = open(os.path.join(root, "labs", "README.md")).read()
no_gpu = tip.split("\n## Without a GPU", 1)[-1].split("\n## ", 1)[0]
commands = [" ".join(c.split()) for c in re.findall(r"`(python3 labs/[^`]+)`", no_gpu)]
handout05 = open(os.path.join(root, "labs", "05-epic-fusion", "README.md")).read()
phase_commands = [c for c in commands if "phases.py" in c]
check(bool(phase_commands), "labs/README.md's no-GPU tips give a phases.py command")
for c in phase_commands:
    args = shlex.split(c)[1:]
    want = args[args.index("--problem") + 1] if "--problem" in args else None
    check(want == "small", f"the tip `{c}` names lab 05's problem, small")
    p = run(args)
    head = HEAD.match(p.stdout)
    check(p.returncode == 0 and head is not None and head.group(1) == "01_gpu_pipeline" and head.group(2) == want
          and ("--image-size" not in args or head.group(3) == args[args.index("--image-size") + 1]),
          f"the tip `{c}` shows 01_gpu_pipeline on {want}: {p.stdout.splitlines()[:1]} {p.stderr.strip()}")
for line in handout05.splitlines():
    c = line.split("#")[0].strip()
    if c.startswith("python3 labs/05-epic-fusion/phases.py"):
        check("--problem small" in c, f"lab 05's handout: `{c}` names the problem of task 1, small")

# 4. The no-GPU tip's sweeps show no tune records of a lab's reference step.
sweep_commands = [c for c in commands if "sweep.py" in c and "--table" in c]
check(bool(sweep_commands), "labs/README.md's no-GPU tips give a sweep.py --table command")
for c in sweep_commands:
    args = shlex.split(c)[1:]
    table = args[args.index("--table") + 1]
    tracks = {}
    with open(os.path.join(root, table)) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and r.get("tag") == "tune":
                tracks[r.get("step")] = r.get("track")
    p = run(args)
    shown = re.findall(r"^(\S+), problem \S+, kernel", p.stdout, re.M)
    check(p.returncode == 0 and bool(shown), f"the tip `{c}` draws a map ({p.stderr.strip()})")
    for step in shown:
        check((tracks.get(step), step) not in reference_steps,
              f"the tip `{c}` shows {tracks.get(step)} {step}, no lab's reference step")

print("handouts: the answer's files named, skeleton headers and no-GPU tips answer-free"
      if not failed else f"{failed} check(s) failed")
sys.exit(1 if failed else 0)
