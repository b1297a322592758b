#!/usr/bin/env python3
"""The labs' driver behind `./stepwise lab` (labs/README.md): list, start, check.

    lab.py ROOT BUILD list
    lab.py ROOT BUILD ID start [DIR]
    lab.py ROOT BUILD ID check [FILE]
    lab.py ROOT BUILD --validate-only ARGS...   # only the arguments: exit 0, or 2 and why

check builds the student's source exactly as the build builds the lab's reference step (the
same compiler line and the same harness and libraries, read from ninja), validates it with
the track's reference (--check), times it against the reference step on the same GPU and
grades the time ratio with the scale in the lab's lab.json.
--validate-only checks what can be checked without a build (the lab exists, the usage, the
file to check exists) and builds and runs nothing: ./stepwise asks it before it builds the
reference step, so that a mistyped file name is said at once.
Before compiling, check asks BUILD/tests/labs/lab_gpu_usable (labs/gpu_usable.cpp) whether a
GPU is usable. Without one it still compiles the file (a student learns whether it compiles),
then says "compiled; not checked" and exits 77. (The tests ask it themselves and skip before
they call this: tests/labs/gpu_first.sh.)
Exit codes: 0 PASS (and list/start done), 1 FAIL, 2 bad usage, 77 no GPU (or no nvcc) for a
GPU lab."""
import json, os, shlex, shutil, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import skeleton  # noqa: E402  (labs/skeleton.py, beside this file)

NO_GPU = 77


def say(*a):
    print(*a, file=sys.stderr)


def usage(msg):
    say(f"stepwise lab: {msg}")
    sys.exit(2)


def labs(root):
    d = os.path.join(root, "labs")
    return sorted(n for n in os.listdir(d) if os.path.isfile(os.path.join(d, n, "lab.json")))


def load(root, lab_id):
    path = os.path.join(root, "labs", lab_id, "lab.json")
    if not os.path.isfile(path):
        usage(f"no lab '{lab_id}' (see ./stepwise lab list)")
    with open(path) as f:
        return json.load(f)


def cmd_list(root):
    for lab_id in labs(root):
        lab = load(root, lab_id)
        where = "gpu" if lab.get("gpu") else "cpu"
        print(f"  {lab_id:<22} {lab['track']:<5} {where}  {lab['title']}")


def default_dir(root, lab_id):
    return os.path.join(root, "lab-work", lab_id)


def cmd_start(root, lab_id, lab, dest):
    dest = os.path.abspath(dest or default_dir(root, lab_id))
    # The skeleton: the lab's file, or, for a lab with a "skeleton" entry, its step's own source
    # with labs/ID/skeleton.patch applied (skeleton.py), made here.
    src = os.path.join(root, lab["skeleton"]["from"] if "skeleton" in lab else os.path.join("labs", lab_id, lab["source"]))
    target = os.path.join(dest, lab["source"])
    if os.path.exists(target):
        usage(f"{target} exists: not overwriting your work (give another DIR, or remove it)")
    # The copy must never land on the repository's own files (the skeleton or its step).
    if os.path.realpath(target) == os.path.realpath(src):
        usage(f"{target} is the lab's skeleton itself")
    if "skeleton" in lab:
        try:
            text = skeleton.make(root, lab_id)
        except skeleton.PatchError as e:
            usage(str(e))
        os.makedirs(dest, exist_ok=True)
        with open(target, "w") as f:
            f.write(text)
    else:
        os.makedirs(dest, exist_ok=True)
        shutil.copyfile(src, target)
    handout = os.path.relpath(os.path.join(root, "labs", lab_id, "README.md"))
    print(f"{target}")
    say(f"lab {lab_id}: your copy is {target}; the handout is {handout}")
    say(f"check it with: ./stepwise lab {lab_id} check" +
        ("" if dest == default_dir(root, lab_id) else f" {target}"))


def ninja_commands(build, target):
    """The compile line of the step's own source and the link line of its program."""
    p = subprocess.run(["ninja", "-C", build, "-t", "commands", target], capture_output=True, text=True)
    if p.returncode != 0:
        usage(f"ninja cannot list the commands of {target} in {build}: {p.stderr.strip()}")
    lines = [shlex.split(l) for l in p.stdout.splitlines() if l.strip()]
    link = lines[-1]
    if "-o" not in link or link[link.index("-o") + 1] != target:
        usage(f"unexpected link line for {target}: {' '.join(link)}")
    compile_line = None
    for words in lines:  # the object that goes into the program's own folder
        if "-c" in words and "-o" in words and words[words.index("-o") + 1].startswith(target + ".p/"):
            compile_line = words
    if compile_line is None:
        usage(f"no compile line for {target}'s source in {build}")
    return compile_line, link


def build_student(build, target, source, work):
    """Compiles `source` into `work`/student with the reference step's own lines."""
    compile_line, link = ninja_commands(build, target)
    obj_old = compile_line[compile_line.index("-o") + 1]
    obj_new = os.path.join(work, "student.o")
    exe = os.path.join(work, "student")
    cc, skip = [], False
    for w in compile_line:
        if skip:
            skip = False
            continue
        if w in ("-MQ", "-MF"):  # the depfile belongs to the build, not to this compile
            skip = True
            continue
        if w == "-MD":
            continue
        cc.append(obj_new if w == obj_old else w)
    cc[cc.index("-c") + 1] = source
    ld = [obj_new if w == obj_old else w for w in link]
    ld[ld.index("-o") + 1] = exe
    for cmd in (cc, ld):
        p = subprocess.run(cmd, cwd=build, capture_output=True, text=True)
        if p.returncode != 0:
            sys.stderr.write(p.stdout + p.stderr)
            return None
    return exe


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def kernel_ms(path):
    with open(path) as f:
        records = [json.loads(l) for l in f if l.strip()]
    return statistics.median(r["timing"]["kernel_ms"]["median"] for r in records)


def grade_of(scale, ratio):
    for limit, marks in scale:
        if limit is None or ratio <= limit:
            return marks
    return scale[-1][1]


def first_errors(report, keep=4000):
    """The start of a compute-sanitizer report and its summary line: the first error names the
    student's line; what follows it is mostly the teardown failing after the broken launch."""
    if len(report) <= keep:
        return report
    summary = [l for l in report.splitlines() if "ERROR SUMMARY" in l]
    return report[:keep] + "\n=========   ... (cut)\n" + "\n".join(summary[-1:])


def fail(why, detail=""):
    if detail:
        sys.stderr.write(detail if detail.endswith("\n") else detail + "\n")
    print(f"FAIL: {why}")
    print("grade: 0 %")
    sys.exit(1)


def no_gpu(lab_id):
    say(f"lab {lab_id}: this lab needs a GPU; none is usable here: not checked")
    sys.exit(NO_GPU)


GPU_QUERY = os.path.join("tests", "labs", "lab_gpu_usable")


def gpu_usable(build):
    """True or False with the query program's line, or None where it cannot tell (the query not
    built, or a CUDA error other than "no GPU": the programs' own runs will say)."""
    exe = os.path.join(build, GPU_QUERY)
    # The tests run beside each other and their build made it: they must not start ninja.
    if not os.access(exe, os.X_OK) and os.environ.get("STEPWISE_LAB_PREBUILT") != "1":
        say(f"lab: building {GPU_QUERY} (once), which asks whether a GPU is usable")
        subprocess.run(["ninja", "-C", build, GPU_QUERY], capture_output=True, text=True)
    if not os.access(exe, os.X_OK):
        return None, f"{exe} is not built"
    try:
        p = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, f"{exe} did not answer in 120 s"
    line = (p.stdout.strip() or p.stderr.strip()).splitlines()
    line = line[-1] if line else f"exit {p.returncode}"
    return {0: True, NO_GPU: False}.get(p.returncode), line


def check_source(root, lab_id, lab, source):
    """The file check works on: the argument, or the copy `start` made. Exits 2 if absent."""
    source = os.path.abspath(source or os.path.join(default_dir(root, lab_id), lab["source"]))
    if not os.path.isfile(source):
        usage(f"{source}: no such file (start the lab with ./stepwise lab {lab_id} start, or name FILE)")
    return source


def cmd_check(root, build, lab_id, lab, source):
    source = check_source(root, lab_id, lab, source)
    track, ref_id = lab["track"], lab.get("reference_step", "")
    # A lab on a track step builds on that step; a lab of its own (00-timing) names its program.
    target = lab.get("reference_target") or f"steps/{track}/{track}_{ref_id}"
    ref_exe = os.path.join(build, target)
    if lab.get("gpu") and shutil.which("nvcc") is None:
        say(f"lab {lab_id}: this lab needs nvcc (the CUDA Toolkit) and a GPU: not checked")
        sys.exit(NO_GPU)
    if not os.access(ref_exe, os.X_OK):
        usage(f"{ref_exe} is not built (meson compile -C {build} {os.path.basename(target)})")
    # Whether there is a GPU at all, before anything whose failure without one would read as
    # the student's.
    gpu, gpu_line = gpu_usable(build) if lab.get("gpu") else (True, "")
    os.makedirs(os.path.join(build, "labs", lab_id), exist_ok=True)
    work = tempfile.mkdtemp(prefix="check-", dir=os.path.join(build, "labs", lab_id))
    try:
        say(f"lab {lab_id}: building {source}")
        exe = build_student(build, target, source, work)
        if exe is None:
            fail("does not compile (the compiler's messages are above)")
        if gpu is False:
            # The student without a GPU still learns whether the file compiles.
            say(f"lab {lab_id}: compiled; not checked: no usable GPU ({gpu_line})")
            sys.exit(NO_GPU)
        say(f"lab {lab_id}: compiled" + (f"; GPU: {gpu_line}" if gpu else ""))

        # First, out-of-bounds accesses, which validation may not see (a write past the end can land
        # in memory nobody checks), when the memory checker exists.
        # Some CUDA installs keep it beside bin/, not in it.
        nvcc_dir = os.path.dirname(shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
        sanitizer = shutil.which("compute-sanitizer") or shutil.which(
            "compute-sanitizer", path=os.path.join(nvcc_dir, "..", "compute-sanitizer"))
        if lab.get("memcheck_flags") and sanitizer:
            flags = lab["memcheck_flags"]
            say(f"lab {lab_id}: memory check: {' '.join(flags)}")
            # --padding puts unowned bytes after every allocation: without it a write just past one
            # array lands in the next (cudaMalloc packs small arrays back to back), which memcheck
            # counts as a valid access.
            p = run([sanitizer, "--tool", "memcheck", "--padding", "4096", "--error-exitcode", "1", exe, *flags, "--quiet"])
            if p.returncode == NO_GPU:
                no_gpu(lab_id)
            if p.returncode != 0:
                fail(f"compute-sanitizer memcheck with {' '.join(flags)} (exit {p.returncode})",
                     first_errors(p.stdout + p.stderr))
        elif lab.get("memcheck_flags"):
            say(f"lab {lab_id}: compute-sanitizer not found: memory check not run")
        # Then shared-memory races (a missing __syncthreads), which may leave the values right
        # on one run and wrong on the next: racecheck sees the hazard itself.
        if lab.get("racecheck_flags") and sanitizer:
            flags = lab["racecheck_flags"]
            say(f"lab {lab_id}: race check: {' '.join(flags)}")
            p = run([sanitizer, "--tool", "racecheck", "--error-exitcode", "1", exe, *flags, "--quiet"])
            if p.returncode == NO_GPU:
                no_gpu(lab_id)
            if p.returncode != 0:
                say(f"lab {lab_id}: racecheck found shared-memory hazards (a missing __syncthreads?)")
                fail(f"compute-sanitizer racecheck with {' '.join(flags)} (exit {p.returncode})",
                     first_errors(p.stdout + p.stderr))
        elif lab.get("racecheck_flags"):
            say(f"lab {lab_id}: compute-sanitizer not found: race check not run")

        # Validation: every voxel on uneven sizes (a partial last block), both kernels.
        for flags in lab["check_flags"]:
            say(f"lab {lab_id}: validating: {' '.join(flags)}")
            p = run([exe, *flags, "--check", "--quiet"])
            if p.returncode == NO_GPU:
                no_gpu(lab_id)
            if p.returncode != 0:
                fail(f"validation with {' '.join(flags)} (exit {p.returncode})", p.stdout + p.stderr)

        # A lab graded by agreement (00-timing) is its own validation: the program compared the
        # student's figures with the project's timer and said so.
        if lab.get("grade_by") == "agreement":
            print("PASS: " + (p.stdout.strip().splitlines() or ["agrees"])[-1])
            print(f"grade: {lab['grade'][-1][1]} %")
            sys.exit(0)

        # Timing: the reference step and the student's program on the same problem and GPU.
        flags = lab["time_flags"]
        say(f"lab {lab_id}: timing against {track} {ref_id}: {' '.join(flags)}")
        ref_json, st_json = os.path.join(work, "reference.jsonl"), os.path.join(work, "student.jsonl")
        p = run([ref_exe, *flags, "--check", "--quiet", "--json", ref_json])
        if p.returncode == NO_GPU:
            no_gpu(lab_id)
        if p.returncode != 0:
            usage(f"the reference step {ref_id} failed (exit {p.returncode}):\n{p.stderr}")
        p = run([exe, *flags, "--check", "--quiet", "--json", st_json])
        if p.returncode != 0:
            fail(f"validation with {' '.join(flags)} (exit {p.returncode})", p.stderr)
        ref_ms, st_ms = kernel_ms(ref_json), kernel_ms(st_json)
        ratio = st_ms / ref_ms
        print(f"PASS: validated; kernel time {st_ms:.4g} ms, reference {ref_id} {ref_ms:.4g} ms: "
              f"{ratio:.2f}x the reference time")
        print(f"grade: {grade_of(lab['grade'], ratio)} %")
        sys.exit(0)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv):
    if len(argv) < 3:
        usage("usage: lab.py ROOT BUILD [--validate-only] list | ID start [DIR] | ID check [FILE]")
    root, build, args = argv[0], argv[1], argv[2:]
    validate_only = args[0] == "--validate-only"
    if validate_only:
        args = args[1:]
    if args == ["list"]:
        return None if validate_only else cmd_list(root)
    if len(args) < 2 or len(args) > 3 or args[1] not in ("start", "check"):
        usage("usage: ./stepwise lab list | ./stepwise lab ID start [DIR] | ./stepwise lab ID check [FILE]")
    lab_id, action, arg = args[0], args[1], (args[2] if len(args) == 3 else None)
    lab = load(root, lab_id)
    if validate_only:  # what start and check would refuse before doing anything
        if action == "check":
            check_source(root, lab_id, lab, arg)
        return None
    if action == "start":
        return cmd_start(root, lab_id, lab, arg)
    return cmd_check(root, build, lab_id, lab, arg)


if __name__ == "__main__":
    main(sys.argv[1:])
