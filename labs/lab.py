#!/usr/bin/env python3
"""The labs' driver behind `./stepwise lab` (labs/README.md): list, start, check.

    lab.py ROOT BUILD list
    lab.py ROOT BUILD ID start [DIR]
    lab.py ROOT BUILD ID check [FILE]
    lab.py ROOT BUILD --validate-only ARGS...   # only the arguments: exit 0, or 2 and why

check builds the student's source exactly as the build builds the lab's reference step (the
same compiler line and the same harness and libraries, read from ninja) on a GPU machine:
where the build compiles GPU code to PTX only (no GPU at setup), the student's line is the
GPU machine's, SASS for the build's gpu_arch through ptxas (grading_line). It then validates
it with the track's reference (--check), times it against the reference step on the same GPU
and grades the time ratio with the scale in the lab's lab.json.
--validate-only checks what can be checked without a build (the lab exists, the usage, the
file to check is a readable file, start's DIR is or can be a writable folder) and builds and
runs nothing: ./stepwise asks it before it builds the reference step, so that a mistyped
path is said at once.
Before compiling, check asks BUILD/tests/labs/lab_gpu_usable (labs/gpu_usable.cpp) whether a
GPU is usable. Without one it still compiles the file (a student learns whether it compiles),
then says "compiled; not checked" and exits 77. (The tests ask it themselves and skip before
they call this: tests/labs/gpu_first.sh.)
Exit codes: 0 PASS (and list/start done), 1 FAIL, 2 bad usage, 77 no GPU (or no nvcc) for a
GPU lab."""
import json, os, re, shlex, shutil, statistics, subprocess, sys, tempfile

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
    # Only a name that `lab list` lists: a path such as ../labs/ID would also find a lab.json,
    # and its default folder, lab-work/../labs/ID, is inside the repository.
    if lab_id not in labs(root):
        usage(f"no lab '{lab_id}' (see ./stepwise lab list)")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        usage(f"{path}: cannot read the lab's description: {e}")


def cmd_list(root):
    for lab_id in labs(root):
        lab = load(root, lab_id)
        where = "gpu" if lab.get("gpu") else "cpu"
        print(f"  {lab_id:<22} {lab['track']:<5} {where}  {lab['title']}")


def default_dir(root, lab_id):
    return os.path.join(root, "lab-work", lab_id)


def start_dest(root, lab_id, lab, dest):
    """The folder start writes to and the file it writes, or exit 2 saying why not, before
    anything is made: DIR must be a folder, or a path whose nearest existing parent is a
    folder that can be written, and the file must not be there yet."""
    dest = os.path.abspath(dest or default_dir(root, lab_id))
    target = os.path.join(dest, lab["source"])
    # lexists: a link where the file would go counts as there (writing would follow it).
    if os.path.lexists(target):
        usage(f"{target} exists: not overwriting your work (give another DIR, or remove it)")
    # The nearest part of DIR that exists: DIR itself, or the folder that DIR's missing
    # folders would be made in.
    existing = dest
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        what = "a file, not a folder" if os.path.isfile(existing) else "not a folder"
        usage(f"{existing} is {what}: " +
              (f"DIR is the folder to write {lab['source']} in" if existing == dest
               else f"no folder {dest} can be made under it") + " (give another DIR)")
    if not os.access(existing, os.W_OK | os.X_OK):
        usage(f"{existing}: permission denied: cannot write {lab['source']} " +
              ("there" if existing == dest else f"in {dest}") + " (give another DIR)")
    return dest, target


def cmd_start(root, lab_id, lab, dest):
    dest, target = start_dest(root, lab_id, lab, dest)
    # The skeleton: the lab's file, or, for a lab with a "skeleton" entry, its step's own source
    # with labs/ID/skeleton.patch applied (skeleton.py), made here.
    src = os.path.join(root, lab["skeleton"]["from"] if "skeleton" in lab else os.path.join("labs", lab_id, lab["source"]))
    # The copy must never land on the repository's own files (the skeleton or its step).
    if os.path.realpath(target) == os.path.realpath(src):
        usage(f"{target} is the lab's skeleton itself")
    if "skeleton" in lab:
        try:
            data = skeleton.make(root, lab_id).encode()
        except skeleton.PatchError as e:
            usage(str(e))
    else:
        with open(src, "rb") as f:  # byte for byte
            data = f.read()
    # What start_dest could not foresee (a full disk, a read-only file system, a race) is
    # still said as bad usage, naming the path, not as a traceback.
    try:
        os.makedirs(dest, exist_ok=True)
        # "x": never over a file that appeared since start_dest looked.
        with open(target, "xb") as f:
            f.write(data)
    except OSError as e:
        usage(f"{e.filename or target}: {e.strerror or e}: cannot write {lab['source']} (give another DIR)")
    handout = os.path.relpath(os.path.join(root, "labs", lab_id, "README.md"))
    print(f"{target}")
    say(f"lab {lab_id}: your copy is {target}; the handout is {handout}")
    say(f"check it with: ./stepwise lab {lab_id} check" +
        ("" if dest == default_dir(root, lab_id) else f" {target}"))


def ninja_commands(build, target):
    """The compile line of the step's own source and the link line of its program."""
    try:
        p = subprocess.run(["ninja", "-C", build, "-t", "commands", target], capture_output=True, text=True)
    except OSError as e:
        usage(f"cannot run ninja to read how {build} builds {target}: {e.strerror or e}")
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


PTX_ONLY = re.compile(r"(-gencode=?)arch=compute_(\w+),code=compute_\2$")


def grading_line(words):
    """The compile line as a GPU machine's build has it, and whether it had to be changed.
    Without a GPU the build compiles GPU code to PTX alone, at cicc -O0, and ptxas never runs
    (meson.build: gpu_tests off): a kernel over a limit of the GPU (too much shared memory,
    too many registers) compiles there and is rejected by the grading build. The lab's check
    compiles the student's file for the real architecture on every machine: SASS for the
    build's gpu_arch plus its PTX (meson.build's cuda_arch_args with gpu_tests on), through
    ptxas, which needs no GPU."""
    out, changed = [], False
    for i, w in enumerate(words):
        # "-gencode=arch=..." as meson.build spells it, or "-gencode" "arch=...".
        spec = w if w.startswith("-gencode=") else (
            (words[i - 1] + w) if i and words[i - 1] in ("-gencode", "--generate-code") else None)
        m = PTX_ONLY.match(spec) if spec else None
        if m:
            arch = m.group(2)
            w = ("-gencode=" if w.startswith("-gencode=") else "") + \
                f"arch=compute_{arch},code=[sm_{arch},compute_{arch}]"
            changed = True
        out.append(w)
    if changed:  # the PTX-only build's unoptimized cicc goes with it
        out = [w for w in out if w != "-Xcicc=-O0"]
    return out, changed


def build_student(build, target, source, work):
    """Compiles `source` into `work`/student with the reference step's own lines, for the GPU
    the build targets (grading_line). Returns the program (None if it does not compile) and
    whether the reference step's own line was PTX-only."""
    compile_line, link = ninja_commands(build, target)
    compile_line, ptx_only = grading_line(compile_line)
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
            return None, ptx_only
    return exe, ptx_only


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
    if os.path.isdir(source):
        usage(f"{source} is a folder, not a file: name the source file to check "
              f"(e.g. {os.path.join(source, lab['source'])})")
    if not os.path.exists(source):
        why = "a link to nothing" if os.path.islink(source) else "no such file"
        usage(f"{source}: {why} (start the lab with ./stepwise lab {lab_id} start, or name FILE)")
    if not os.path.isfile(source):  # a device, a pipe: nothing the compiler could be given
        usage(f"{source} is not a regular file: name the source file to check")
    if not os.access(source, os.R_OK):
        usage(f"{source}: permission denied: the file cannot be read")
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
    try:
        os.makedirs(os.path.join(build, "labs", lab_id), exist_ok=True)
        work = tempfile.mkdtemp(prefix="check-", dir=os.path.join(build, "labs", lab_id))
    except OSError as e:
        usage(f"{e.filename or build}: {e.strerror or e}: no folder to build your file in")
    try:
        say(f"lab {lab_id}: building {source}")
        exe, ref_ptx_only = build_student(build, target, source, work)
        if exe is None:
            fail("does not compile (the compiler's messages are above)")
        if gpu is False:
            # The student without a GPU still learns whether the file compiles, for the GPU
            # grading compiles for (ptxas included).
            say(f"lab {lab_id}: compiled; not checked: no usable GPU ({gpu_line})")
            sys.exit(NO_GPU)
        say(f"lab {lab_id}: compiled" + (f"; GPU: {gpu_line}" if gpu else ""))
        if ref_ptx_only and gpu and lab.get("grade_by") != "agreement":
            # The reference step was built as a machine without a GPU builds it: its time is
            # that of JIT-compiled, unoptimized PTX, not the grading build's.
            say(f"lab {lab_id}: note: {build} builds GPU code PTX-only (gpu_tests off), so the "
                f"reference's time is not the grading build's: set it up with -Dgpu_tests=enabled")

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
        try:
            ref_ms = kernel_ms(ref_json)
        except (OSError, ValueError, KeyError, TypeError, statistics.StatisticsError) as e:
            usage(f"the reference step {ref_id} left no timing record in {ref_json}: {e!r}")
        try:
            st_ms = kernel_ms(st_json)
        except (OSError, ValueError, KeyError, TypeError, statistics.StatisticsError) as e:
            # The harness writes the record; a program that ends before it (an exit() of its
            # own) has no time to grade.
            fail(f"your program exited 0 but left no timing record ({e!r})")
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
    lab_id = lab_id.rstrip("/") or lab_id  # a shell's completion of the folder's name
    lab = load(root, lab_id)
    if arg == "":  # an unset shell variable, most likely: not the default, silently
        usage(f"lab {lab_id} {action}: the {'DIR' if action == 'start' else 'FILE'} given is empty")
    if validate_only:  # what start and check would refuse before doing anything
        if action == "check":
            check_source(root, lab_id, lab, arg)
        else:
            start_dest(root, lab_id, lab, arg)
        return None
    if action == "start":
        return cmd_start(root, lab_id, lab, arg)
    return cmd_check(root, build, lab_id, lab, arg)


if __name__ == "__main__":
    main(sys.argv[1:])
