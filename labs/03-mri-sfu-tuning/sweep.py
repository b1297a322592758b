#!/usr/bin/env python3
"""Lab 03-mri-sfu-tuning: build your fhd.cu as a program that stays, and sweep it.

`./stepwise tune` sweeps the repository's own steps only, and `./stepwise lab ... check` deletes
the program it builds. This script builds your source exactly as the checker does (same
compiler line, harness and libraries) into BUILD/labs/03-mri-sfu-tuning/program/, then runs
every point of the sweep.json beside your source the way `./stepwise tune` runs a step's:
one validated run per point, one JSONL record each, tagged "tune". It ends with the heat map as
text: the best kernel time for each voxels x threads (over the other parameters) and the best
point.

    python3 labs/03-mri-sfu-tuning/sweep.py --build-only [FILE]   # prints the program's path
    python3 labs/03-mri-sfu-tuning/sweep.py [FILE] [--json OUT] [--sweep GRID]  # build, sweep, print the map
    python3 labs/03-mri-sfu-tuning/sweep.py --table OUT [--step STEP]  # the map of records already made
    python3 labs/03-mri-sfu-tuning/sweep.py --help                 # this text

FILE defaults to lab-work/03-mri-sfu-tuning/fhd.cu; GRID to sweep.json beside FILE, a JSON
object {"args": [flags of every run], "grid": {"NAME": [values], ...}} (one run per
combination, --NAME VALUE each; the handout's task 2); OUT to sweep.jsonl beside FILE
(appended: remove it to start over; sweeps of several problems may share it, the map is drawn
per problem); --step STEP maps only the records of program STEP (a step's id, e.g.
10_phase_recurrence, or lab_03_mri_sfu_tuning for yours). BUILD is $STEPWISE_BUILD or build/;
run `./stepwise lab 03-mri-sfu-tuning check` once first, which builds what your program links.
Exit: 0 done, 1 your file does not compile, 2 bad usage or a missing or unreadable file (the
message names it), 77 no GPU (nothing was run)."""
import itertools, json, os, shutil, subprocess, sys

LAB = "03-mri-sfu-tuning"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True  # no __pycache__ in the repository
sys.path.insert(0, os.path.join(ROOT, "labs"))
import lab  # noqa: E402  (the checker's own build: labs/lab.py)


def die(msg, code=2):
    print(f"sweep.py: {msg}", file=sys.stderr)
    sys.exit(code)


def build(build_dir, source):
    if shutil.which("nvcc") is None:  # where CUDA installs it, as ./stepwise looks
        for d in ["/usr/local/cuda/bin"] + sorted(f"/usr/local/{n}/bin" for n in os.listdir("/usr/local") if n.startswith("cuda-")):
            if os.access(os.path.join(d, "nvcc"), os.X_OK):
                os.environ["PATH"] = d + os.pathsep + os.environ["PATH"]
                break
    if shutil.which("nvcc") is None:
        die("nvcc (the CUDA Toolkit) not found", 77)
    meta = json.load(open(os.path.join(ROOT, "labs", LAB, "lab.json")))
    target = f"steps/{meta['track']}/{meta['track']}_{meta['reference_step']}"
    if not os.access(os.path.join(build_dir, target), os.X_OK):
        die(f"{build_dir}/{target} is not built: run ./stepwise lab {LAB} check once first")
    work = os.path.join(build_dir, "labs", LAB, "program")
    os.makedirs(work, exist_ok=True)
    print(f"sweep.py: building {source}", file=sys.stderr)
    exe = lab.build_student(build_dir, target, source, work)
    if exe is None:
        die("does not compile (the compiler's messages are above)", 1)
    return exe


def ms(r):
    return r["timing"]["kernel_ms"]["median"]


def read_records(path, step=None):
    """The tune records of a JSONL file (of program `step` only, when it is named); exits 2
    naming the file when it is missing or not the records this script and the program write."""
    if not os.path.isfile(path):
        die(f"{path}: no such file (a sweep writes it: python3 labs/{LAB}/sweep.py)")
    records = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError as e:
                die(f"{path}, line {n}: not a JSON record ({e})")
            if r.get("tag") != "tune":
                continue
            try:
                r["step"], r["problem"]["name"], r["params"]["threads"], ms(r)
            except (KeyError, TypeError) as e:
                die(f"{path}, line {n}: a tune record without {e} (not written by a step program?)")
            records.append(r)
    if not records:
        die(f"{path}: no tune records (tag \"tune\": the sweep's runs)")
    if step is not None:
        held = sorted({r["step"] for r in records})
        records = [r for r in records if r["step"] == step]
        if not records:
            die(f"{path}: no tune records of {step} (it holds tune records of: {', '.join(held)})")
    return records


def read_sweep(path):
    try:
        with open(path) as f:
            sweep = json.load(f)
    except ValueError as e:
        die(f"{path}: not JSON ({e})")
    grid = sweep.get("grid") if isinstance(sweep, dict) else None
    if not isinstance(grid, dict) or not grid or not all(isinstance(v, list) and v for v in grid.values()):
        die(f'{path}: needs "grid": {{"NAME": [values], ...}} (and optionally "args": [flags])')
    if not isinstance(sweep.get("args", []), list):
        die(f'{path}: "args" must be a list of flags')
    return sweep


def table(path, step=None):
    """Best kernel time per voxels (rows) x threads (columns), over the other parameters."""
    records = read_records(path, step)
    by = {}
    for r in records:  # one map per program and problem
        by.setdefault((r["step"], r["problem"]["name"], r["params"].get("kernel", "")), []).append(r)
    for (step, problem, kernel), rs in by.items():
        ok = [r for r in rs if r.get("validation", {}).get("pass")]
        failed = len(rs) - len(ok)
        print(f"\n{step}, problem {problem}, kernel {kernel}: {len(rs)} points"
              + (f", {failed} failed validation (left out)" if failed else ""))
        if not ok:
            continue
        threads = sorted({r["params"]["threads"] for r in rs})
        voxels = sorted({r["params"].get("voxels", 1) for r in rs})
        print("kernel ms, best over unroll and chunk; rows voxels, columns threads")
        print("voxels \\ threads " + "".join(f"{t:>9}" for t in threads))
        for v in voxels:
            cells = []
            for t in threads:
                at = [ms(r) for r in ok if r["params"]["threads"] == t and r["params"].get("voxels", 1) == v]
                cells.append(f"{min(at):9.4g}" if at else f"{'-':>9}")
            print(f"{v:>16} " + "".join(cells))
        best = min(ok, key=ms)
        shape = ", ".join(f"{k} {best['params'][k]}" for k in ("threads", "unroll", "chunk", "voxels") if k in best["params"])
        v = best["validation"]
        print(f"best: {shape}: {ms(best):.4g} ms (rel_l2 {v['rel_l2']:.3g}, PSNR {v['psnr_db']:.1f} dB)")
    if step is not None:
        return  # one program's map of a file; the report draws the whole file's
    b = os.path.relpath(os.environ.get("STEPWISE_BUILD", os.path.join(ROOT, "build")), ROOT)
    print(f"\nEvery pair of parameters, with figures (from the repository's root):\n"
          f"  meson compile -C {b} report/stepwise_report && {b}/report/stepwise_report --extra {os.path.abspath(path)} "
          f"--out {b}/lab03-report\n  then read {b}/lab03-report/REPORT.md, section mri, \"Tuning sweeps\"")


def main(argv):
    build_only, out, source, table_of, sweep_path, step = False, None, None, None, None, None
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__)
            return
        if a == "--build-only":
            build_only = True
        elif a == "--json":
            out = next(it, None) or die("--json needs a file")
        elif a == "--sweep":
            sweep_path = os.path.abspath(next(it, None) or die("--sweep needs a file"))
        elif a == "--table":
            table_of = next(it, None) or die("--table needs a file")
        elif a == "--step":
            step = next(it, None) or die("--step needs a program's id, e.g. 10_phase_recurrence")
        elif a.startswith("-"):
            die(f"unknown option {a} (see the top of {__file__})")
        elif source is None:
            source = a
        else:
            die("one FILE at most")
    if step is not None and not table_of:
        die("--step goes with --table FILE (it picks the records to map)")
    if table_of:
        return table(table_of, step)
    build_dir = os.path.abspath(os.environ.get("STEPWISE_BUILD", os.path.join(ROOT, "build")))
    source = os.path.abspath(source or os.path.join(ROOT, "lab-work", LAB, "fhd.cu"))
    if not os.path.isfile(source):
        die(f"{source}: no such file (./stepwise lab {LAB} start makes your copy)")
    sweep_path = sweep_path or os.path.join(os.path.dirname(source), "sweep.json")
    if not build_only and not os.path.isfile(sweep_path):
        die(f"{sweep_path}: no such file (task 2 of labs/{LAB}/README.md)")
    sweep = None if build_only else read_sweep(sweep_path)  # a bad grid is said before the build
    exe = build(build_dir, source)
    if build_only:
        print(exe)
        return
    out = os.path.abspath(out or os.path.join(os.path.dirname(source), "sweep.jsonl"))
    names = list(sweep["grid"])
    points = list(itertools.product(*(sweep["grid"][n] for n in names)))
    for i, values in enumerate(points, 1):
        flags = [x for n, v in zip(names, values) for x in (f"--{n}", str(v))]
        rc = subprocess.call([exe, *sweep.get("args", []), *flags, "--tag", "tune", "--json", out, "--quiet"])
        print(f"[{i}/{len(points)}] {' '.join(flags)}: " + {0: "ok", 77: "skipped (no GPU)"}.get(rc, f"exit {rc}"),
              file=sys.stderr)
        if rc == 77:
            die("no usable GPU: nothing swept", 77)
    table(out)


if __name__ == "__main__":
    main(sys.argv[1:])
