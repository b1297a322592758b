#!/usr/bin/env python3
"""The labs' driver behind `./stepwise lab` (labs/README.md): list, start, check.

    lab.py ROOT BUILD list
    lab.py ROOT BUILD ID start [DIR]
    lab.py ROOT BUILD ID check [FILE]
    lab.py ROOT BUILD ID export DIR [--gpu GPU]
    lab.py ROOT BUILD --validate-only ARGS...   # only the arguments: exit 0, or 2 and why

export writes the handout bundle to DIR (new or empty): README.md (the handout), the skeleton,
lab.json (less its "skeleton" entry), src/ (common/core, common/TRACK and what they include,
never a steps/ or tests/ file), gen/ (the build's generated headers), a Makefile whose lines
are the build's own for the reference step and the harness libraries (grading_line: SASS for
GPU_ARCH through ptxas), check.py and check (checker/lab.py is this file: run_checks grades the
same), and bundle.json with the reference: the build's prebuilt reference step (reference/,
with the architecture it was built for) or, where BUILD has not built it or --gpu is given, the
latest matching record of report/results/TRACK-GPU.jsonl (default h200), named file:line.

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


def make_skeleton(root, lab_id):
    """The skeleton made from its step (skeleton.py; imported here, not at the top: a bundle's
    copy of this file has no skeleton.py and never makes one)."""
    import skeleton  # labs/skeleton.py, beside this file
    try:
        return skeleton.make(root, lab_id).encode()
    except skeleton.PatchError as e:
        usage(str(e))


def cmd_start(root, lab_id, lab, dest):
    dest, target = start_dest(root, lab_id, lab, dest)
    # The skeleton: the lab's file, or, for a lab with a "skeleton" entry, its step's own source
    # with labs/ID/skeleton.patch applied (skeleton.py), made here.
    src = os.path.join(root, lab["skeleton"]["from"] if "skeleton" in lab else os.path.join("labs", lab_id, lab["source"]))
    # The copy must never land on the repository's own files (the skeleton or its step).
    if os.path.realpath(target) == os.path.realpath(src):
        usage(f"{target} is the lab's skeleton itself")
    if "skeleton" in lab:
        data = make_skeleton(root, lab_id)
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


def params_of(path):
    """The last record's params (the step's tunables and what it chose), or {}."""
    try:
        with open(path) as f:
            records = [json.loads(l) for l in f if l.strip()]
        return dict(records[-1].get("params") or {})
    except (OSError, ValueError, IndexError, AttributeError):
        return {}


def parameter_line(names, mine, theirs):
    """The student's parameters beside the reference's (lab.json "compare_params"), or ''."""
    if not names:
        return ""
    shown = lambda params: " ".join(f"{n}={params[n]}" if n in params else f"{n}=?" for n in names)
    return f"  parameters: yours {shown(mine)}; the reference's {shown(theirs)}"


def grade_hint(lab, marks):
    """What would raise a grade below the scale's best (lab.json "raise_grade"), or ''."""
    best = max(m for _, m in lab["grade"])
    return f"  to raise it: {lab['raise_grade']}" if lab.get("raise_grade") and marks < best else ""


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


class StepReference:
    """The reference step's program, run on the student's problem and GPU just before the
    student's program: the repository's build's, or the prebuilt copy in a bundle."""

    def __init__(self, exe, step, ptx_only, where):
        self.exe, self.step, self.ptx_only, self.where = exe, step, ptx_only, where
        self.label, self.suffix = step, ""

    def kernel_ms(self, lab_id, flags, work):
        ref_json = os.path.join(work, "reference.jsonl")
        p = run([self.exe, *flags, "--check", "--quiet", "--json", ref_json])
        if p.returncode == NO_GPU:
            no_gpu(lab_id)
        if p.returncode != 0:
            usage(f"the reference step {self.step} failed (exit {p.returncode}):\n{p.stderr}")
        try:
            ms = kernel_ms(ref_json)
        except (OSError, ValueError, KeyError, TypeError, statistics.StatisticsError) as e:
            usage(f"the reference step {self.step} left no timing record in {ref_json}: {e!r}")
        self.params = params_of(ref_json)
        return ms

    def compare_device(self, lab_id, st_json):
        pass  # the same GPU, by construction


class RecordedReference:
    """The reference step's time as recorded on a named GPU (report/results), for a bundle
    exported from a build that had not built the reference step: nothing runs, and the ratio
    is fair only on that GPU, which the check says when the student's is another."""

    def __init__(self, rec):
        self.rec, self.step, self.ptx_only = rec, rec["step"], False
        self.params = dict(rec.get("params") or {})
        self.label = f"{rec['step']} as recorded on {rec['device']} ({rec['record']})"
        self.suffix = f" (recorded on {rec['device']})"

    def kernel_ms(self, lab_id, flags, work):
        if list(flags) != list(self.rec["flags"]):
            usage(f"the recorded reference time is for {' '.join(self.rec['flags'])}, not {' '.join(flags)}")
        return float(self.rec["kernel_ms"])

    def compare_device(self, lab_id, st_json):
        try:
            with open(st_json) as f:
                names = {(json.loads(l).get("device") or {}).get("name") for l in f if l.strip()}
        except (OSError, ValueError):
            return
        if names and names != {self.rec["device"]}:
            say(f"lab {lab_id}: note: the reference time was recorded on {self.rec['device']}; your GPU is "
                f"{', '.join(sorted(n or '?' for n in names))}: the ratio is fair only on the recorded GPU")


def run_checks(lab_id, lab, exe, work, gpu, gpu_line, reference):
    """Everything after the student's program is built, the same in the repository and in an
    exported bundle: the memory and race checks, validation, then the time against
    `reference` (StepReference: a program run here; RecordedReference: a recorded time)
    and the grade. Exits."""
    say(f"lab {lab_id}: compiled" + (f"; GPU: {gpu_line}" if gpu else ""))
    if reference.ptx_only and gpu and lab.get("grade_by") != "agreement":
        # The reference step was built as a machine without a GPU builds it: its time is
        # that of JIT-compiled, unoptimized PTX, not the grading build's.
        say(f"lab {lab_id}: note: {reference.where} builds GPU code PTX-only (gpu_tests off), so the "
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

    # Timing: the reference and the student's program on the same problem (and, where the
    # reference is a program, on the same GPU).
    flags = lab["time_flags"]
    say(f"lab {lab_id}: timing against {reference.label}: {' '.join(flags)}")
    st_json = os.path.join(work, "student.jsonl")
    ref_ms = reference.kernel_ms(lab_id, flags, work)
    p = run([exe, *flags, "--check", "--quiet", "--json", st_json])
    if p.returncode != 0:
        fail(f"validation with {' '.join(flags)} (exit {p.returncode})", p.stderr)
    try:
        st_ms = kernel_ms(st_json)
    except (OSError, ValueError, KeyError, TypeError, statistics.StatisticsError) as e:
        # The harness writes the record; a program that ends before it (an exit() of its
        # own) has no time to grade.
        fail(f"your program exited 0 but left no timing record ({e!r})")
    reference.compare_device(lab_id, st_json)
    ratio = st_ms / ref_ms
    print(f"PASS: validated; kernel time {st_ms:.4g} ms, reference {reference.step} {ref_ms:.4g} ms"
          f"{reference.suffix}: {ratio:.2f}x the reference time")
    line = parameter_line(lab.get("compare_params"), params_of(st_json), getattr(reference, "params", {}))
    if line:
        print(line)
    marks = grade_of(lab["grade"], ratio)
    print(f"grade: {marks} %")
    if grade_hint(lab, marks):
        print(grade_hint(lab, marks))
    sys.exit(0)


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
        run_checks(lab_id, lab, exe, work, gpu, gpu_line, StepReference(ref_exe, ref_id, ref_ptx_only, build))
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ---- export: the handout bundle (a folder that holds no answer) ----

BUNDLE_TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bundle")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def export_dest(dest):
    """The bundle's folder, absolute, or exit 2 why not: it must not exist yet or be an empty
    folder (a bundle is never mixed with other files), and the folder it is made in must be
    writable."""
    dest = os.path.abspath(dest)
    if os.path.lexists(dest):
        if not os.path.isdir(dest) or os.path.islink(dest):
            usage(f"{dest} exists and is not a folder: DIR is the folder to write the bundle in (give another DIR)")
        if os.listdir(dest):
            usage(f"{dest} is a folder that is not empty: the bundle goes in a new or empty folder (give another DIR)")
    existing = dest
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        usage(f"{existing} is not a folder: no folder {dest} can be made under it (give another DIR)")
    if not os.access(existing, os.W_OK | os.X_OK):
        usage(f"{existing}: permission denied: cannot write the bundle there (give another DIR)")
    return dest


AR_FLAGS = re.compile(r"[a-zA-Z]*c[a-zA-Z]*")  # ar's operation and modifiers: csrDT, csrD, csr, ...


def archive_of(words):
    """(library, objects) when `words` make a static library with ar (`rm -f LIB && ar csrDT
    LIB OBJ...`; meson's modifiers differ between its versions), else None."""
    for i, w in enumerate(words[:-2]):
        base = os.path.basename(w)
        if (base == "ar" or base.endswith(("-ar", "gcc-ar"))) and AR_FLAGS.fullmatch(words[i + 1]) and "r" in words[i + 1]:
            rest = words[i + 3:]
            return words[i + 2], rest[:rest.index("&&")] if "&&" in rest else rest
    return None


def ninja_all_commands(build, target):
    if not os.path.isfile(os.path.join(build, "build.ninja")):
        usage(f"{build} is not a configured build (./stepwise sets it up; or meson setup {build})")
    p = subprocess.run(["ninja", "-C", build, "-t", "commands", target], capture_output=True, text=True)
    if p.returncode != 0:
        usage(f"{build} does not build {target} (nvcc not found when it was set up?): {p.stderr.strip()}")
    return [shlex.split(l) for l in p.stdout.splitlines() if l.strip()]


class BundleBuild:
    """How BUILD builds a program, rewritten for the bundle: the harness's static libraries from
    their sources (copied under src/), then the program from one source file. Every compile
    line is the build's own, through grading_line (SASS for gpu_arch, as a GPU machine builds
    it); paths in the repository become the bundle's copies, paths in the build its generated
    headers (gen/), and the steps' folders are dropped (the student's file is a whole program)."""

    def __init__(self, root, build):
        self.root, self.build = os.path.realpath(root), os.path.realpath(build)
        self.copies = {}     # repository path (relative) -> bundle path
        self.gen_dirs = set()
        self.objects = {}    # bundle object -> (bundle source, compile words)
        self.libs = {}       # build's library path -> (bundle library, [bundle objects])
        self.arch = None

    def where(self, path):
        a = os.path.realpath(os.path.join(self.build, path))
        for base, kind in ((self.build, "build"), (self.root, "root")):
            if a == base or a.startswith(base + os.sep):
                return kind, os.path.relpath(a, base)
        return "outside", a

    def include(self, path):
        kind, rel = self.where(path)
        if kind == "outside":
            return path
        if kind == "build":
            if rel.endswith(".p") or rel.startswith(("steps", "tests")):
                return None  # the targets' private folders, the rendered steps, the tests'
            self.gen_dirs.add(rel)
            return os.path.join("gen", rel)
        if rel.startswith(("steps", "tests")):
            return None  # the steps' folders (the answer) and the tests' (reference solutions)
        return os.path.join("src", rel)

    def source(self, path):
        kind, rel = self.where(path)
        if kind != "root" or rel.startswith(("steps", "tests")):
            usage(f"the harness needs {path}, which is not a file of the harness")
        self.copies[rel] = os.path.join("src", rel)
        return os.path.join("src", rel)

    def rewrite(self, words, obj_map, out=None, src=None):
        res, skip = [], False
        for i, w in enumerate(words):
            if skip:
                skip = False
                continue
            if w in ("-MQ", "-MF"):
                skip = True
                continue
            if w == "-MD":
                continue
            if w.startswith("-I"):
                inc = self.include(w[2:])
                if inc is not None:
                    res.append("-I" + inc)
                continue
            if w in obj_map:
                res.append(obj_map[w])
                continue
            if w.startswith("-Xlinker=") and w[len("-Xlinker="):] in obj_map:
                res.append("-Xlinker=" + obj_map[w[len("-Xlinker="):]])
                continue
            m = re.search(r"arch=compute_(\d+)", w)
            if m:
                self.arch = m.group(1)
            res.append(w)
        if out is not None:
            res[res.index("-o") + 1] = out
        if src is not None:
            res[res.index("-c") + 1] = src
        return res

    def add_program(self, target, own_prefix):
        """The harness libraries `target` links (added to the bundle) and its own source's
        compile line and link line, rewritten (the source and program left as $(SRC), $(EXE))."""
        lines = ninja_all_commands(self.build, target)
        obj_map, own_cc = {}, None
        for words in lines:
            if "-c" in words and "-o" in words:
                o = words[words.index("-o") + 1]
                if o.startswith(own_prefix):
                    own_cc = (o, words)
                    continue
                if ".a.p/" in o:
                    obj_map[o] = os.path.join("build", "obj", o)
            if archive_of(words):
                obj_map[archive_of(words)[0]] = os.path.join("build", "lib", archive_of(words)[0])
        for words in lines:
            if "-c" in words and "-o" in words:
                o = words[words.index("-o") + 1]
                if o in obj_map and obj_map[o] not in self.objects:
                    line, _ = grading_line(words)
                    src = self.source(words[words.index("-c") + 1])
                    self.objects[obj_map[o]] = (src, self.rewrite(line, obj_map, "$@", "$<"))
            if archive_of(words):
                lib, objs = archive_of(words)
                self.libs[obj_map[lib]] = [obj_map[x] for x in objs]
        if own_cc is None:
            usage(f"no compile line for {target}'s source in {self.build}")
        cc, ptx_only = grading_line(own_cc[1])
        cc = self.rewrite(cc, obj_map, "$(EXE).o", "$(SRC)")
        link = lines[-1]
        ld = self.rewrite(link, {**obj_map, own_cc[0]: "$(EXE).o"}, "$(EXE)")
        # A library is on the link line as -Xlinker=LIB or, with another meson, as LIB itself.
        libs = [w[len("-Xlinker="):] if w.startswith("-Xlinker=") else w for w in link]
        # One of the build's own libraries that no archive line made is a path the bundle lacks:
        # said here, not by the linker in the student's folder.
        lost = [w for w in libs if w.endswith(".a") and not os.path.isabs(w) and w not in obj_map]
        if lost:
            usage(f"{target} links {lost[0]}, which no ar line of {self.build} makes: the bundle cannot build it")
        return cc, ld, ptx_only, [obj_map[w] for w in libs if w.endswith(".a") and w in obj_map]

    def copy_sources(self, dest, track):
        """The harness's sources: common/core and common/TRACK whole, and every file their
        includes (and the compiled sources') reach in the repository, never a step's."""
        for folder in ("common/core",) + ((f"common/{track}",) if track != "core" else ()):
            for n in sorted(os.listdir(os.path.join(self.root, folder))):
                if os.path.isfile(os.path.join(self.root, folder, n)):
                    self.copies.setdefault(f"{folder}/{n}", f"src/{folder}/{n}")
        dirs = [os.path.join(self.root, "common")]
        todo = list(self.copies)
        while todo:
            rel = todo.pop()
            path = os.path.join(self.root, rel)
            with open(path, errors="replace") as f:
                text = f.read()
            for inc in INCLUDE_RE.findall(text):
                for base in [os.path.dirname(path)] + dirs:
                    cand = os.path.realpath(os.path.join(base, inc))
                    if os.path.isfile(cand) and cand.startswith(self.root + os.sep):
                        r = os.path.relpath(cand, self.root)
                        if r.startswith(("steps", "tests")):
                            usage(f"the harness includes {r}, a step's or a test's file: not exported")
                        if r not in self.copies:
                            self.copies[r] = f"src/{r}"
                            todo.append(r)
                        break
        for rel, to in self.copies.items():
            os.makedirs(os.path.dirname(os.path.join(dest, to)), exist_ok=True)
            shutil.copy2(os.path.join(self.root, rel), os.path.join(dest, to))
        for rel in sorted(self.gen_dirs):  # the build's generated headers (core/version.hpp)
            os.makedirs(os.path.join(dest, "gen", rel), exist_ok=True)
            folder = os.path.join(self.build, rel)
            for n in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
                if n.endswith((".h", ".hpp", ".cuh")) and os.path.isfile(os.path.join(folder, n)):
                    shutil.copy2(os.path.join(folder, n), os.path.join(dest, "gen", rel, n))


def make_quote(words):
    return " ".join(shlex.quote(w) if not w.startswith("$") else w for w in words).replace("$", "$$") \
        .replace("$$@", "$@").replace("$$<", "$<").replace("$$(", "$(")


def arch_words(words, arch):
    """gencode words with the architecture as the Makefile's $(GPU_ARCH)."""
    return [re.sub(r"(compute|sm)_" + arch + r"\b", r"\1_$(GPU_ARCH)", w) for w in words]


def recorded_reference(root, lab, gpu):
    """The latest record of the reference step on GPU `gpu` (report/results/TRACK-GPU.jsonl)
    whose problem is the lab's timing problem: the flags' values, where the record names them."""
    track, step = lab["track"], lab["reference_step"]
    path = os.path.join(root, "report", "results", f"{track}-{gpu}.jsonl")
    if not os.path.isfile(path):
        have = sorted(n[len(track) + 1:-6] for n in os.listdir(os.path.join(root, "report", "results"))
                      if n.startswith(track + "-") and n.endswith(".jsonl"))
        usage(f"no recorded results of {track} on '{gpu}' ({os.path.relpath(path, root)}); recorded: {' '.join(have)}")
    flags = lab["time_flags"]
    want = {flags[i][2:]: flags[i + 1] for i in range(0, len(flags) - 1, 2) if flags[i].startswith("--")}

    def records(p):
        if not os.path.isfile(p):
            return
        with open(p) as f:
            for n, line in enumerate(f, 1):
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if isinstance(r, dict) and r.get("step") == step and (r.get("validation") or {}).get("pass", True):
                    yield n, r

    def known_of(r):
        prob = r.get("problem") or {}
        known = {"size": prob.get("name"), **{k: v for k, v in (prob.get("params") or {}).items()},
                 **(r.get("params") or {})}
        # A prefix of a problem's samples is named after it: large-first65536 is --size large --samples 65536.
        m = re.fullmatch(r"(\w+)-first(\d+)", str(known.get("size")))
        if m:
            known["size"], known["samples"] = m.group(1), m.group(2)
        return known

    def fits(r):
        known = known_of(r)
        return "size" in known and not any(k in known and str(known[k]) != v for k, v in want.items())

    best = None
    for n, r in records(path):
        if r.get("tag") != "tune" and fits(r) and (best is None or r.get("time", "") >= best[1].get("time", "")):
            best = (n, r)
    # No run of the timing problem among the ladder's: the sweep's point at the step's own
    # parameters (those of its newest ladder run), when the lab names them (compare_params).
    tuned = lab.get("compare_params")
    if best is None and tuned:
        ladder = [r for _, r in records(path) if r.get("tag") != "tune"]
        if ladder:
            own = {k: (max(ladder, key=lambda r: r.get("time", "")).get("params") or {}).get(k) for k in tuned}
            sweep = os.path.join(root, "report", "results", f"{track}-{gpu}-tune.jsonl")
            for n, r in records(sweep):
                if fits(r) and all((r.get("params") or {}).get(k) == v for k, v in own.items()) and \
                        (best is None or r.get("time", "") >= best[1].get("time", "")):
                    best, path = (n, r), sweep
    if best is None:
        usage(f"{os.path.relpath(path, root)} has no record of {step} on {' '.join(flags)}")
    n, r = best
    return {"step": step, "kernel_ms": r["timing"]["kernel_ms"]["median"], "flags": flags,
            "device": (r.get("device") or {}).get("name", gpu), "record": f"{os.path.relpath(path, root)}:{n}",
            "commit": r.get("commit"), "time": r.get("time"), "params": r.get("params") or {}}


def cmd_export(root, build, lab_id, lab, dest, gpu):
    dest = export_dest(dest)
    track = lab["track"]
    ref_id = lab.get("reference_step", "")
    target = lab.get("reference_target") or f"steps/{track}/{track}_{ref_id}"
    bb = BundleBuild(root, build)
    # The one header the build generates (vcs_tag: the commit the harness is from), made now
    # where the build has not made it yet; the bundle carries it (gen/).
    if not os.path.isfile(os.path.join(build, "common", "core", "version.hpp")):
        subprocess.run(["ninja", "-C", build, "common/core/version.hpp"], capture_output=True, text=True)
    cc, ld, ptx_only, libs = bb.add_program(target, target + ".p/")
    q_cc, q_ld, _, q_libs = bb.add_program(GPU_QUERY, GPU_QUERY + ".p/")
    # The query's source is labs/gpu_usable.cpp: its compile line names it; make it the bundle's.
    q_src = None
    for words in ninja_all_commands(bb.build, GPU_QUERY):
        if "-c" in words and words[words.index("-o") + 1].startswith(GPU_QUERY + ".p/"):
            q_src = bb.source(words[words.index("-c") + 1])
    data = make_skeleton(root, lab_id) if "skeleton" in lab else \
        open(os.path.join(root, "labs", lab_id, lab["source"]), "rb").read()
    # The reference's time: the build's prebuilt program, or a recorded time.
    ref_exe = os.path.join(build, target)
    reference = None
    if gpu is None and lab.get("grade_by") != "agreement" and os.access(ref_exe, os.X_OK):
        reference = {"kind": "program", "path": f"reference/{os.path.basename(target)}", "step": ref_id,
                     "gpu_arch": f"sm_{bb.arch}", "ptx_only": ptx_only}
    elif lab.get("grade_by") != "agreement":
        gpu = gpu or "h200"
        reference = {"kind": "recorded", **recorded_reference(root, lab, gpu)}
    try:
        os.makedirs(dest, exist_ok=True)
        bb.copy_sources(dest, track)
        shutil.copy2(os.path.join(root, "labs", lab_id, "README.md"), os.path.join(dest, "README.md"))
        with open(os.path.join(dest, lab["source"]), "xb") as f:
            f.write(data)
        # lab.json less what names the step's source (the skeleton is made already).
        desc = {k: v for k, v in lab.items() if k != "skeleton"}
        with open(os.path.join(dest, "lab.json"), "w") as f:
            json.dump(desc, f, indent=2)
            f.write("\n")
        if reference and reference["kind"] == "program":
            os.makedirs(os.path.join(dest, "reference"))
            shutil.copy2(ref_exe, os.path.join(dest, reference["path"]))
        with open(os.path.join(dest, "bundle.json"), "w") as f:
            json.dump({"lab": lab_id, "source": lab["source"], "gpu_arch": bb.arch,
                       "reference": reference}, f, indent=2)
            f.write("\n")
        os.makedirs(os.path.join(dest, "checker"))
        shutil.copy2(os.path.abspath(__file__), os.path.join(dest, "checker", "lab.py"))
        for n in ("check.py", "check"):
            shutil.copy2(os.path.join(BUNDLE_TEMPLATES, n), os.path.join(dest, n))
        os.chmod(os.path.join(dest, "check"), 0o755)
        write_makefile(dest, lab_id, lab, bb, cc, ld, libs, q_src, q_cc, q_ld, q_libs)
    except OSError as e:
        usage(f"{e.filename or dest}: {e.strerror or e}: cannot write the bundle (give another DIR)")
    print(dest)
    # Only the text of the reference's own kind is made: a prebuilt program has no recorded device.
    if not reference:
        how = "the project's timer (agreement)"
    elif reference["kind"] == "program":
        how = f"the prebuilt {os.path.basename(target)} (sm_{bb.arch}{', PTX only' if ptx_only else ''})"
    else:
        how = f"the time recorded on {reference['device']} ({reference['record']})"
    say(f"lab {lab_id}: bundle in {dest}; graded against {how}")


def write_makefile(dest, lab_id, lab, bb, cc, ld, libs, q_src, q_cc, q_ld, q_libs):
    arch = bb.arch or "90"
    out = [f"# The build of lab {lab_id}'s bundle: the harness's static libraries from src/, then one",
           "# program from SRC. Written by `./stepwise lab ID export`: the compile lines are those of the",
           "# repository's build for a GPU machine (SASS for GPU_ARCH through ptxas), with this folder's paths.",
           "#   make [SRC=FILE] [EXE=PROGRAM] [GPU_ARCH=NN]   the program (default: the skeleton)",
           "#   make harness                                  the libraries and build/gpu_usable only",
           f"GPU_ARCH ?= {arch}", f"SRC ?= {lab['source']}", "EXE ?= build/student", "",
           "LIBS := " + " ".join(dict.fromkeys(libs)), "",
           ".PHONY: all harness", "all: $(EXE)",
           "harness: " + " ".join(dict.fromkeys(libs + q_libs)) + " build/gpu_usable", "",
           "$(EXE): $(SRC) $(LIBS)", "\t@mkdir -p $(dir $(EXE))",
           "\t" + make_quote(arch_words(cc, arch)), "\t" + make_quote(arch_words(ld, arch)), ""]
    q_cc = [("$<" if w == "$(SRC)" else w) for w in q_cc]
    q_cc = [("build/gpu_usable.o" if w == "$(EXE).o" else w) for w in q_cc]
    q_ld = [("build/gpu_usable.o" if w == "$(EXE).o" else "build/gpu_usable" if w == "$(EXE)" else w) for w in q_ld]
    out += [f"build/gpu_usable: {q_src} " + " ".join(dict.fromkeys(q_libs)), "\t@mkdir -p build",
            "\t" + make_quote(arch_words(q_cc, arch)), "\t" + make_quote(arch_words(q_ld, arch)), ""]
    for lib, objs in bb.libs.items():
        out += [f"{lib}: " + " ".join(objs), "\t@mkdir -p $(@D)", "\trm -f $@ && ar csr $@ $^", ""]
    for obj, (src, words) in bb.objects.items():
        out += [f"{obj}: {src}", "\t@mkdir -p $(@D)", "\t" + make_quote(arch_words(words, arch)), ""]
    with open(os.path.join(dest, "Makefile"), "w") as f:
        f.write("\n".join(out))


def main(argv):
    if len(argv) < 3:
        usage("usage: lab.py ROOT BUILD [--validate-only] list | ID start [DIR] | ID check [FILE] | ID export DIR [--gpu GPU]")
    root, build, args = argv[0], argv[1], argv[2:]
    validate_only = args[0] == "--validate-only"
    if validate_only:
        args = args[1:]
    if args == ["list"]:
        return None if validate_only else cmd_list(root)
    gpu = None
    if len(args) >= 2 and args[1] == "export":
        # export DIR [--gpu GPU]: the GPU whose recorded time the bundle grades against.
        rest = args[2:]
        if "--gpu" in rest:
            k = rest.index("--gpu")
            if k + 1 >= len(rest) or not re.fullmatch(r"[\w.-]+", rest[k + 1]):
                usage("lab ID export DIR --gpu GPU: GPU is a name of report/results, e.g. h200")
            gpu = rest[k + 1]
            rest = rest[:k] + rest[k + 2:]
        if len(rest) != 1:
            usage("usage: ./stepwise lab ID export DIR [--gpu GPU]")
        args = args[:2] + rest
    usage_line = ("usage: ./stepwise lab list | ./stepwise lab ID start [DIR] | ./stepwise lab ID check [FILE]"
                  " | ./stepwise lab ID export DIR [--gpu GPU]")
    if len(args) < 2 or len(args) > 3 or args[1] not in ("start", "check", "export"):
        usage(usage_line)
    lab_id, action, arg = args[0], args[1], (args[2] if len(args) == 3 else None)
    lab_id = lab_id.rstrip("/") or lab_id  # a shell's completion of the folder's name
    lab = load(root, lab_id)
    if arg == "":  # an unset shell variable, most likely: not the default, silently
        usage(f"lab {lab_id} {action}: the {'FILE' if action == 'check' else 'DIR'} given is empty")
    if action == "export" and arg is None:
        usage(f"lab {lab_id} export: name the folder to write the bundle in (export DIR)")
    if validate_only:  # what start, check and export would refuse before doing anything
        if action == "check":
            check_source(root, lab_id, lab, arg)
        elif action == "export":
            export_dest(arg)
        else:
            start_dest(root, lab_id, lab, arg)
        return None
    if action == "start":
        return cmd_start(root, lab_id, lab, arg)
    if action == "export":
        return cmd_export(root, build, lab_id, lab, arg, gpu)
    return cmd_check(root, build, lab_id, lab, arg)


if __name__ == "__main__":
    main(sys.argv[1:])
