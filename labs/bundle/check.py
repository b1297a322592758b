#!/usr/bin/env python3
"""The checker of an exported lab bundle (./stepwise lab ID export DIR): builds your file against
this folder's harness with the grading build's compiler lines (the Makefile, SASS for GPU_ARCH
through ptxas), runs the lab's memory and race checks and validation, times it against the
reference (the prebuilt program in reference/, or the recorded time bundle.json names) and
grades it, as `./stepwise lab ID check` does in the repository (checker/lab.py is its code).

    python3 check.py [FILE]      (or ./check [FILE]; default: the skeleton's file name here)

Exit codes: 0 PASS, 1 FAIL, 2 bad usage (or a bundle that does not build), 77 no GPU or no
nvcc (the file is still compiled where nvcc is there, as grading compiles it)."""
import json, os, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "checker"))
import lab as L  # noqa: E402  (checker/lab.py: the repository's checker, copied by export)


def main(argv):
    if len(argv) > 1 or (argv and argv[0] in ("-h", "--help")):
        print(__doc__, file=sys.stderr)
        sys.exit(0 if argv and argv[0] in ("-h", "--help") else 2)
    with open(os.path.join(HERE, "lab.json")) as f:
        lab = json.load(f)
    with open(os.path.join(HERE, "bundle.json")) as f:
        bundle = json.load(f)
    lab_id = bundle["lab"]
    if argv and argv[0] == "":
        L.usage(f"lab {lab_id} check: the FILE given is empty")
    source = os.path.abspath(argv[0] if argv else os.path.join(HERE, lab["source"]))
    # check_source's default is lab-work/ID/SOURCE under a root: here, the file beside check.py.
    source = L.check_source(os.path.dirname(HERE), lab_id, lab, source)
    if shutil.which("nvcc") is None:
        L.say(f"lab {lab_id}: this lab needs nvcc (the CUDA Toolkit) and a GPU: not checked")
        sys.exit(L.NO_GPU)
    if shutil.which("make") is None:
        L.usage("make not found: the bundle's Makefile builds the harness and your file")
    # The harness, once (build/ keeps it): not the student's doing if it fails.
    p = subprocess.run(["make", "-s", f"-j{min(8, os.cpu_count() or 1)}", "-C", HERE, "harness"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        L.usage(f"the bundle's harness does not build here (make -C {HERE} harness): see above")
    gpu, gpu_line = True, ""
    if lab.get("gpu"):
        q = subprocess.run([os.path.join(HERE, "build", "gpu_usable")], capture_output=True, text=True)
        line = (q.stdout.strip() or q.stderr.strip()).splitlines()
        gpu_line = line[-1] if line else f"exit {q.returncode}"
        gpu = {0: True, L.NO_GPU: False}.get(q.returncode)
    work = tempfile.mkdtemp(prefix="check-", dir=os.path.join(HERE, "build"))
    try:
        L.say(f"lab {lab_id}: building {source}")
        exe = os.path.join(work, "student")
        p = subprocess.run(["make", "-s", "-C", HERE, f"SRC={source}", f"EXE={exe}", exe],
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.stderr.write(p.stdout + p.stderr)
            L.fail("does not compile (the compiler's messages are above)")
        if gpu is False:
            L.say(f"lab {lab_id}: compiled; not checked: no usable GPU ({gpu_line})")
            sys.exit(L.NO_GPU)
        ref = bundle.get("reference")
        if ref is None:  # graded by agreement: no reference time
            reference = L.StepReference(None, lab.get("reference_step", ""), False, HERE)
        elif ref["kind"] == "program":
            reference = L.StepReference(os.path.join(HERE, ref["path"]), ref["step"], ref["ptx_only"],
                                        f"the build this bundle's reference was exported from")
            reference.label = f"{ref['step']} (the prebuilt reference, {ref['gpu_arch']})"
        else:
            reference = L.RecordedReference(ref)
        L.run_checks(lab_id, lab, exe, work, gpu, gpu_line, reference)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
