#!/usr/bin/env python3
"""Lab 05-epic-fusion, task 1: the per-phase times (ms per gulp) that an EPIC step records in
params.phase_ms_per_gulp, from the last such record of a results file.

    python3 labs/05-epic-fusion/phases.py [FILE] [--step STEP]
    python3 labs/05-epic-fusion/phases.py --help

FILE defaults to $STEPWISE_BUILD/results/local.jsonl (build/results/local.jsonl), where
`./stepwise run epic 01 -- --size small` appends its record; STEP to 01_gpu_pipeline.
Exit: 0 printed, 2 bad usage, or no such file or record (the message says what to run)."""
import json, os, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN = "./stepwise run epic 01 -- --size small"


def die(msg):
    print(f"phases.py: {msg}", file=sys.stderr)
    sys.exit(2)


def main(argv):
    path, step = None, "01_gpu_pipeline"
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__)
            return
        if a == "--step":
            step = next(it, None) or die("--step needs a step id, e.g. 01_gpu_pipeline")
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
    found = None
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue  # a line cut short by an interrupted run: the others still count
            if (isinstance(r, dict) and r.get("track") == "epic" and r.get("step") == step
                    and isinstance(r.get("params", {}).get("phase_ms_per_gulp"), dict)):
                found = r
    if found is None:
        die(f"{path}: no record of epic {step} with params.phase_ms_per_gulp: run `{RUN}` first")
    phases = found["params"]["phase_ms_per_gulp"]
    device = (found.get("device") or {}).get("name", "no GPU named")
    print(f"epic {step}, problem {found['problem']['name']}, {device}, commit {found.get('commit', '?')}, "
          f"recorded {found.get('time', '?')}")
    print(f"{'phase':<10} {'ms per gulp':>12}")
    for name, ms in phases.items():
        print(f"{name:<10} {ms:>12.4g}")
    print(f"{'total':<10} {sum(phases.values()):>12.4g}")


if __name__ == "__main__":
    main(sys.argv[1:])
