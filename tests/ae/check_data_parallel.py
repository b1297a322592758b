#!/usr/bin/env python3
"""ae 24_data_parallel trains the same minibatches on any number of ranks (--batch is the
minibatch over all of them). Three runs of the same problem, each with --json:
  - 23_pooled_epilogue, the parent, on one GPU;
  - 24 alone (one rank): its losses must equal 23's bit for bit (the sums over one rank change
    nothing, and the loss divides by the same minibatch);
  - 24 on 2 ranks (launch_ranks.py): the record names 2 ranks, its check passed with the ranks'
    weights identical, and every loss of the run is within the bf16 class's loss bound (a
    relative 2e-2, common/ae/validation.cpp) of the one-rank run's: the same training, its sums
    taken in another order.
Exits 77 (SKIP) before any run where this host has fewer than 2 GPUs.

Usage: check_data_parallel.py LAUNCH_RANKS STEP_23 STEP_24 [FLAGS...]"""
import json
import os
import subprocess
import sys
import tempfile

LOSS_BOUND = 2e-2  # the bf16 class's loss threshold (common/ae/validation.cpp, thresholds())


def record(cmd, path, what):
    p = subprocess.run(cmd + ["--json", path], capture_output=True, text=True, timeout=600)
    sys.stdout.write(p.stdout)
    if p.returncode == 77:
        sys.exit(77)
    if p.returncode != 0:
        sys.exit(f"FAIL: {what} exited {p.returncode}: {p.stderr.strip()}")
    with open(path) as f:
        lines = f.read().splitlines()
    if len(lines) != 1:
        sys.exit(f"FAIL: {what} wrote {len(lines)} records, not 1 (only rank 0 writes)")
    r = json.loads(lines[0])
    if not r["validation"]["pass"]:
        sys.exit(f"FAIL: {what}: its check did not pass: {r['validation'].get('failure')}")
    return r


def main():
    launch, step23, step24, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    # launch_ranks.py counts the GPUs before it starts anything: fewer than 2, SKIP before any run.
    if subprocess.run([sys.executable, launch, "--ranks", "2", "--", "true"]).returncode == 77:
        sys.exit(77)
    run = ["--repeat", "1", "--warmup", "0", "--quiet"] + flags
    with tempfile.TemporaryDirectory() as tmp:
        parent = record([step23] + run, os.path.join(tmp, "23.jsonl"), "23")
        alone = record([step24] + run, os.path.join(tmp, "24-1.jsonl"), "24 alone")
        two = record([sys.executable, launch, "--ranks", "2", "--", step24] + run, os.path.join(tmp, "24-2.jsonl"),
                     "24 on 2 ranks")
    a, b, c = (r["training"]["losses"] for r in (parent, alone, two))
    if len(a) != len(b) or len(b) != len(c) or not a:
        sys.exit(f"FAIL: loss curves of {len(a)}, {len(b)} and {len(c)} points")
    if a != b:
        first = next(i for i in range(len(a)) if a[i] != b[i])
        sys.exit(f"FAIL: 24 alone is not 23 bit for bit: loss {first + 1} is {b[first]!r} against 23's {a[first]!r}")
    if alone.get("ranks", {}).get("size") != 1 or two.get("ranks", {}).get("size") != 2:
        sys.exit(f"FAIL: the records name {alone.get('ranks')} and {two.get('ranks')} ranks, not 1 and 2")
    replicas = two["validation"].get("replicas", {})
    if replicas.get("identical") is not True:
        sys.exit(f"FAIL: 2 ranks: the record does not say the ranks' weights were identical: {replicas!r}")
    worst, at = 0.0, 0
    for i, (x, y) in enumerate(zip(b, c)):
        e = abs(y - x) / abs(x)
        if not e <= worst:  # NaN counts as the worst
            worst, at = e, i
    every = two["training"]["every"]
    print(f"{len(c)} losses: 24 alone = 23 bit for bit; 2 ranks against 1: worst relative difference {worst:.3g} "
          f"(loss {at * every + 1}: {c[at]!r} against {b[at]!r}; bound {LOSS_BOUND})")
    if not worst <= LOSS_BOUND:
        sys.exit(f"FAIL: 2 ranks' loss differs from one rank's by {worst:.3g} > {LOSS_BOUND}")


if __name__ == "__main__":
    main()
