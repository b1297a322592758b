#!/usr/bin/env python3
"""Fixed seed, identical output: runs each "PROGRAM [ARG...] [ENV=VALUE...]" spec with the
same arguments and --out (plus the spec's own arguments), and requires every output file to
be byte-identical to the first.
Usage: same_output.py "ARGS" SPEC [SPEC...]"""
import os, shlex, subprocess, sys, tempfile

args, specs = shlex.split(sys.argv[1]), sys.argv[2:]
outputs = []
with tempfile.TemporaryDirectory() as work:
    for i, spec in enumerate(specs):
        program, *rest = shlex.split(spec)
        assignments = [w for w in rest if "=" in w and not w.startswith("-")]
        own_args = [w for w in rest if w not in assignments]
        env = dict(os.environ, **dict(a.split("=", 1) for a in assignments))
        out = os.path.join(work, f"out{i}.npy")
        rc = subprocess.run([program, *args, *own_args, "--out", out, "--quiet"], env=env).returncode
        if rc == 77:
            sys.exit(77)  # no GPU here: meson reports SKIP
        if rc != 0:
            sys.exit(f"{spec} exited {rc}")
        outputs.append(open(out, "rb").read())
for spec, data in zip(specs[1:], outputs[1:]):
    if data != outputs[0]:
        sys.exit(f"{spec} differs from {specs[0]}")
print(f"{len(specs)} runs, identical output")
