#!/usr/bin/env python3
"""Fixed seed, identical output: runs each "PROGRAM [ARG...] [ENV=VALUE...]" spec with the
same arguments and --out (plus the spec's own arguments), and requires every output file to
be byte-identical to the first. A spec with RANKS=N runs as N ranks (tests/launch_ranks.py;
rank 0 writes the output); the GPUs are counted before anything runs (fewer: exit 77).
--differ requires the last output to differ from the first instead (a known-wrong build).
Usage: same_output.py [--differ] "ARGS" SPEC [SPEC...]"""
import os, shlex, subprocess, sys, tempfile

differ = sys.argv[1] == "--differ"
argv = sys.argv[2:] if differ else sys.argv[1:]
args, specs = shlex.split(argv[0]), argv[1:]
launch = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch_ranks.py")
ranks = [int(w.split("=", 1)[1]) for spec in specs for w in shlex.split(spec) if w.startswith("RANKS=")]
if ranks and subprocess.run([sys.executable, launch, "--ranks", str(max(ranks)), "--", "true"]).returncode == 77:
    sys.exit(77)  # fewer GPUs than ranks: SKIP before any run
outputs = []
with tempfile.TemporaryDirectory() as work:
    for i, spec in enumerate(specs):
        program, *rest = shlex.split(spec)
        assignments = [w for w in rest if "=" in w and not w.startswith("-")]
        own_args = [w for w in rest if w not in assignments]
        env = dict(os.environ, **dict(a.split("=", 1) for a in assignments))
        out = os.path.join(work, f"out{i}.npy")
        n = env.pop("RANKS", None)
        wrap = [sys.executable, launch, "--ranks", n, "--"] if n else []
        rc = subprocess.run([*wrap, program, *args, *own_args, "--out", out, "--quiet"], env=env).returncode
        if rc == 77:
            sys.exit(77)  # no GPU here: meson reports SKIP
        if rc != 0:
            sys.exit(f"{spec} exited {rc}")
        outputs.append(open(out, "rb").read())
if differ:
    if outputs[-1] == outputs[0]:
        sys.exit(f"{specs[-1]} gives the same output as {specs[0]}; it should differ")
    print(f"{specs[-1]} differs from {specs[0]}, as it should")
    sys.exit(0)
for spec, data in zip(specs[1:], outputs[1:]):
    if data != outputs[0]:
        at = next((i for i, (a, b) in enumerate(zip(data, outputs[0])) if a != b), min(len(data), len(outputs[0])))
        sys.exit(f"{spec} differs from {specs[0]} (first at byte {at} of {len(outputs[0])}; {len(data)} bytes)")
print(f"{len(specs)} runs, identical output")
