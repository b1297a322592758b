#!/usr/bin/env python3
"""Lab 05-epic-fusion, task 1: the per-phase times (ms per gulp) that an EPIC step records in
params.phase_ms_per_gulp, from the last record of a results file that matches the step and the
problem asked for.

    python3 labs/05-epic-fusion/phases.py [FILE] [--step STEP] [--problem NAME] [--image-size N]
    python3 labs/05-epic-fusion/phases.py --help

FILE defaults to $STEPWISE_BUILD/results/local.jsonl (build/results/local.jsonl), where
`./stepwise run epic 01 -- --size small` appends its record; STEP to 01_gpu_pipeline; NAME to
small, the problem of the task (the record's problem.name, exactly: small, large, small-128,
large-gulps4, ...); --image-size N keeps only records whose problem.params.image_size is N
(any, by default). The first line printed names the record shown: step, problem, image size,
device, commit, time, and its line in FILE.
Exit: 0 printed, 2 bad usage, or no such file or no matching record (the message says which
problems the file does hold for STEP, and what to run)."""
import json, os, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN = "./stepwise run epic 01 -- --size small"


def die(msg):
    print(f"phases.py: {msg}", file=sys.stderr)
    sys.exit(2)


def image_size(r):
    params = r.get("problem", {}).get("params") if isinstance(r.get("problem"), dict) else None
    return params.get("image_size") if isinstance(params, dict) else None


def problem_name(r):
    return r["problem"].get("name") if isinstance(r.get("problem"), dict) else None


def main(argv):
    path, step, problem, size = None, "01_gpu_pipeline", "small", None
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__)
            return
        if a == "--step":
            step = next(it, None) or die("--step needs a step id, e.g. 01_gpu_pipeline")
        elif a == "--problem":
            problem = next(it, None) or die("--problem needs a problem name, e.g. small")
        elif a == "--image-size":
            v = next(it, None) or die("--image-size needs a number of pixels, e.g. 64")
            try:
                size = int(v)
            except ValueError:
                die(f"--image-size wants a whole number of pixels, not {v!r}")
        elif a.startswith("-"):
            die(f"unknown option {a} (see --help)")
        elif path is None:
            path = a
        else:
            die("one FILE at most")
    if path is None:
        build = os.environ.get("STEPWISE_BUILD", os.path.join(ROOT, "build"))
        path = os.path.join(build, "results", "local.jsonl")
    if not os.path.isfile(path):
        die(f"{path}: no such file: run `{RUN}` first (it appends a validated record there)")
    found, found_line, matching, held = None, None, 0, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                r = json.loads(line)
            except ValueError:
                continue  # a line cut short by an interrupted run: the others still count
            if not (isinstance(r, dict) and r.get("track") == "epic" and r.get("step") == step
                    and isinstance(r.get("params"), dict)
                    and isinstance(r["params"].get("phase_ms_per_gulp"), dict)):
                continue
            held_as = f"{problem_name(r)} (image size {image_size(r) or '?'})"
            if held_as not in held:
                held.append(held_as)
            if problem_name(r) != problem or (size is not None and image_size(r) != size):
                continue
            found, found_line, matching = r, n, matching + 1
    asked = f"problem {problem}" + (f", image size {size}" if size is not None else "")
    if found is None:
        if held:
            die(f"{path}: no record of epic {step} on {asked} with params.phase_ms_per_gulp; "
                f"it holds epic {step} on: {', '.join(held)} (name one with --problem and --image-size)")
        die(f"{path}: no record of epic {step} with params.phase_ms_per_gulp: run `{RUN}` first")
    phases = found["params"]["phase_ms_per_gulp"]
    device = (found.get("device") or {}).get("name", "no GPU named")
    which = f"line {found_line} of {path}" + (f", the last of {matching} matching" if matching > 1 else "")
    print(f"epic {step}, problem {problem_name(found)}, image size {image_size(found) or '?'}, {device}, "
          f"commit {found.get('commit', '?')}, recorded {found.get('time', '?')} ({which})")
    print(f"{'phase':<10} {'ms per gulp':>12}")
    for name, ms in phases.items():
        print(f"{name:<10} {ms:>12.4g}")
    print(f"{'total':<10} {sum(phases.values()):>12.4g}")


if __name__ == "__main__":
    main(sys.argv[1:])
