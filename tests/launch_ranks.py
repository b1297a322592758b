#!/usr/bin/env python3
"""Runs PROGRAM as N ranks on this host, one GPU each, as a multi-GPU step runs (core/ranks.hpp):
under mpirun when it is installed (--launcher mpirun), or as N processes with RANK, WORLD_SIZE and
LOCAL_RANK set (--launcher env, torchrun's variables). Before starting anything it counts the
GPUs: fewer than N is exit 77 (SKIP). Rank 0's output is shown; the exit code is the first
non-zero one among the ranks, or 0.
Usage: launch_ranks.py [--ranks N] [--launcher auto|mpirun|env] [--timeout S] -- PROGRAM [ARGS...]"""
import argparse, os, shutil, socket, subprocess, sys


def gpus():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU ")) if out.returncode == 0 else 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--launcher", choices=["auto", "mpirun", "env"], default="auto")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd or a.ranks < 1:
        ap.error("a program to run and --ranks >= 1")
    have = gpus()
    if have < a.ranks:
        print(f"launch_ranks.py: {a.ranks} ranks need {a.ranks} GPUs; this machine has {have}")
        sys.exit(77)
    env = dict(os.environ, STEPWISE_ROOT=f"127.0.0.1:{free_port()}", NCCL_NVLS_ENABLE="0")
    launcher = a.launcher if a.launcher != "auto" else ("mpirun" if shutil.which("mpirun") else "env")
    if launcher == "mpirun":
        root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        # Open MPI binds each of a few ranks to one core: the harness's host work (generating a
        # problem, the references) runs OpenMP threads, which would then share that core.
        full = ["mpirun", "-np", str(a.ranks), *root, "--oversubscribe", "--bind-to", "none",
                "-x", "STEPWISE_ROOT", "-x", "NCCL_NVLS_ENABLE", *cmd]
        p = subprocess.run(full, env=env, timeout=a.timeout)
        sys.exit(p.returncode)
    procs = []
    for r in range(a.ranks):
        e = dict(env, RANK=str(r), WORLD_SIZE=str(a.ranks), LOCAL_RANK=str(r))
        out = None if r == 0 else subprocess.DEVNULL  # rank 0 speaks for the run
        procs.append(subprocess.Popen(cmd, env=e, stdout=out))
    codes = []
    for p in procs:
        try:
            codes.append(p.wait(timeout=a.timeout))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            sys.exit(f"launch_ranks.py: ranks still running after {a.timeout} s: killed")
    print(f"launch_ranks.py: {a.ranks} ranks ({launcher}) exited {codes}", file=sys.stderr)
    sys.exit(next((c for c in codes if c != 0), 0))


main()
