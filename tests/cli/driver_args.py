#!/usr/bin/env python3
"""How ./stepwise takes its own arguments, every command checked before anything is set up or
built (a fresh build takes minutes):
1. a flag missing its value (bench --size, --json; tune --json; show --out; run --ranks; test's
   --suite) is exit 2 naming the flag, not a bash error;
2. every command answers --help (its usage, exit 0) and refuses an argument it does not know
   (exit 2 and its usage), after its positional arguments too;
3. `test` checks meson test's options first (exit 2 before meson runs) and prints this run's
   count, none when no test ran (never the previous run's, never a traceback);
4. bench checks its track and --size before the build, and says a bad size once;
5. a step is named by its number without the leading zero too (4 for 04); a --kernel after --
   is the only one the mri programs get; --ranks N > 1 for a step that runs as one process is
   exit 2 before any build or GPU count;
6. odd tracks ("", "mri/") are unknown tracks, exit 2.
The good forms go on as before (bench's sizes, run's kernels, tune's sweep, --ranks of a
multi-GPU step). meson, ninja and nvidia-smi are stand-ins on PATH that record being called
(meson test writes the log a case gives it); STEPWISE_BUILD is an empty folder that a case
fills with stand-in step programs, which record their arguments.
Usage: driver_args.py STEPWISE WORKDIR"""
import json
import os
import re
import shutil
import subprocess
import sys

driver, work = sys.argv[1], os.path.abspath(sys.argv[2])
root = os.path.dirname(os.path.abspath(driver))
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
build = os.path.join(work, "build")
bin_dir = os.path.join(work, "bin")
calls = os.path.join(work, "tool-calls")        # meson, ninja, nvidia-smi
programs = os.path.join(work, "program-calls")  # the stand-in step programs
testlog = os.path.join(work, "testlog-to-write")
os.makedirs(bin_dir)

tools = {
    # meson test writes the log the case put in testlog-to-write, and exits as meson did.
    "meson": f'''#!/bin/sh
echo "meson $*" >> "{calls}"
if [ "$1" = test ]; then
  if [ -f "{testlog}" ]; then mkdir -p "$STEPWISE_BUILD/meson-logs"; cp "{testlog}" "$STEPWISE_BUILD/meson-logs/testlog.json"; exit 0; fi
  exit 1
fi
exit 0
''',
    "ninja": f'#!/bin/sh\necho "ninja $*" >> "{calls}"\nexit 0\n',
    # Two GPUs, so that a multi-GPU step's two ranks start.
    "nvidia-smi": f'#!/bin/sh\necho "nvidia-smi $*" >> "{calls}"\necho "GPU 0: stand-in"\necho "GPU 1: stand-in"\n',
}
for name, text in tools.items():
    path = os.path.join(bin_dir, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)

env = {k: v for k, v in os.environ.items() if not k.startswith("STEPWISE_")}
env.update(PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), STEPWISE_BUILD=build, STEPWISE_NO_INSTALL="1")

failed = 0


def check(ok, what, p=None):
    global failed
    failed += not ok
    print(("ok   " if ok else "FAIL ") + what)
    if not ok and p is not None:
        print(f"     exit {p.returncode}\n     stdout: {p.stdout[-1500:]!r}\n     stderr: {p.stderr[-1500:]!r}")


def read(path):
    return open(path).read().splitlines() if os.path.exists(path) else []


def steps(track):
    return sorted(d for d in os.listdir(os.path.join(root, "steps", track)) if re.match(r"\d\d_", d))


def stand_in(track, step):
    """A step program that records its arguments (one line a run) and succeeds."""
    path = os.path.join(build, "steps", track, f"{track}_{step}")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\necho "{track}_{step} $*" >> "{programs}"\nexit 0\n')
    os.chmod(path, 0o755)


def drive(*args, programs_of=()):
    """The driver on a fresh, empty build folder holding stand-ins for PROGRAMS_OF
    ((track, step) pairs); returns the run with .tools and .programs, what was called."""
    shutil.rmtree(build, ignore_errors=True)
    os.makedirs(build)
    for f in (calls, programs):
        if os.path.exists(f):
            os.remove(f)
    for track, step in programs_of:
        stand_in(track, step)
    p = subprocess.run([driver, *args], capture_output=True, text=True, env=env, cwd=work, timeout=120)
    p.tools, p.programs = read(calls), read(programs)
    return p


def bash_error(p):
    """What says the driver died of a shell or python error rather than refusing its arguments."""
    m = re.search(r"line \d+: .*|unbound variable|Traceback.*|No such file or directory", p.stderr)
    return m.group(0) if m else None


def refused(p, *words, usage=None):
    """Exit 2, the words in stderr, nothing set up or built, no shell error, the usage if named."""
    return (p.returncode == 2 and all(w in p.stderr for w in words) and not p.tools and not p.programs
            and bash_error(p) is None and (usage is None or f"usage: ./stepwise {usage}" in p.stderr))


def case(p):
    return " ".join(repr(a) if a == "" or " " in a else a for a in p.args[1:])


tuned = next((t, s) for t in ("mri", "mc", "epic", "ae") for s in steps(t)
             if os.path.isfile(os.path.join(root, "steps", t, s, "sweep.json")))


def nearest_needs(track, step):
    """The libraries the step links beyond its track's: the nearest `needs` along its parents."""
    while step != "none":
        path = os.path.join(root, "steps", track, step, "needs")
        if os.path.isfile(path):
            return open(path).read().split()
        step = open(os.path.join(root, "steps", track, step, "parent")).read().split()[0]
    return []


multi = next((t, s) for t in ("mc", "epic", "ae", "mri") for s in steps(t) if "nccl" in nearest_needs(t, s))

# 1. A flag missing its value: exit 2 naming the flag.
for args, flag in [(["bench", "mri", "--size"], "--size"), (["bench", "mri", "--json"], "--json"),
                   (["bench", "mri", "--size", "--json", "x.jsonl"], "--size"),
                   (["tune", tuned[0], tuned[1][:2], "--json"], "--json"),
                   (["tune", tuned[0], tuned[1][:2], "--json", ""], "--json"),
                   (["show", "mri", "04", "--out"], "--out"), (["show", "mri", "04", "--out", ""], "--out"),
                   (["run", "mri", "00", "--ranks"], "--ranks"), (["test", "--suite"], "--suite"),
                   (["test", "--num-processes", "many"], "--num-processes")]:
    p = drive(*args)
    check(refused(p, flag), f"{case(p)}: exit 2 naming {flag}, nothing built ({bash_error(p) or 'no shell error'})", p)

# 2. --help and an unknown argument, for every command.
commands = {"report": [], "test": [], "setup": [], "list": [], "run": ["mri", "00"], "diff": ["mri", "04"],
            "show": ["mri", "04"], "rename": ["mri", "04"], "lessons": ["mri"], "bench": ["mri"],
            "tune": list(tuned), "lab": ["list"], "help": []}
for command, words in commands.items():
    for args in ([command, "--help"], [command, "-h"], [command, *words, "--help"]):
        p = drive(*args)
        check(p.returncode == 0 and p.stdout.startswith(f"usage: ./stepwise {command}") and not p.tools,
              f"{case(p)}: its usage, exit 0, nothing built", p)
    for args in ([command, "--frob"], [command, *words, "--frob"]):
        p = drive(*args)
        check(refused(p, "--frob", usage=command) or (command == "lab" and refused(p, usage="lab")),
              f"{case(p)}: exit 2 with its usage, nothing built", p)
    p = drive("help", command)
    check(p.returncode == 0 and p.stdout == drive(command, "--help").stdout, f"help {command}: {command}'s usage", p)
for args in (["setup", "extra"], ["list", "extra"], ["report", "extra"], ["run", "mri", "00", "extra"],
             ["bench", "mri", "extra"], ["tune", *tuned, "extra"], ["show", "mri", "04", "extra"],
             ["lessons", "mri", "extra"], ["diff", "mri", "04", "05", "06"], ["help", "nosuch"]):
    p = drive(*args)
    check(refused(p, usage=args[0]), f"{case(p)}: exit 2 with its usage, nothing built", p)
p = drive("nosuch")
check(p.returncode == 2 and "unknown command 'nosuch'" in p.stderr and not p.tools, "nosuch: an unknown command", p)

# 3. test: meson test's options checked first; this run's count or none.
p = drive("test", "--frob")
check(refused(p, "--frob", usage="test") and "passed" not in p.stdout, "test --frob: exit 2 before meson runs", p)
p = drive("test", "-C", "/tmp")
check(refused(p, "-C"), "test -C DIR: the folder is STEPWISE_BUILD's, exit 2", p)


def records(*results):
    return "".join(json.dumps({"name": f"t{i}", "result": r}) + "\n" for i, r in enumerate(results))


def with_old_log(*args):
    """`test ARGS` where a previous run left a log of 288 passes."""
    shutil.rmtree(build, ignore_errors=True)
    os.makedirs(os.path.join(build, "meson-logs"))
    old = os.path.join(build, "meson-logs", "testlog.json")
    with open(old, "w") as f:
        f.write(records(*["OK"] * 288))
    os.utime(old, (1e9, 1e9))
    for f in (calls, programs):
        if os.path.exists(f):
            os.remove(f)
    p = subprocess.run([driver, "test", *args], capture_output=True, text=True, env=env, cwd=work, timeout=120)
    p.tools = read(calls)
    return p


if os.path.exists(testlog):
    os.remove(testlog)
p = with_old_log("no_such_test")  # meson refuses the name (exit 1) and writes no log
check(p.returncode == 1 and "passed" not in p.stdout and bash_error(p) is None,
      f"test no_such_test: meson's exit 1, and no count (not the previous run's 288: {p.stdout.strip()!r})", p)
p = drive("test", "no_such_test")
check(p.returncode == 1 and "passed" not in p.stdout and bash_error(p) is None,
      f"test no_such_test before any test ran: no count, no traceback ({bash_error(p) or 'none'})", p)
with open(testlog, "w") as f:
    f.write(records("OK", "OK", "SKIP", "FAIL", "EXPECTEDFAIL"))
p = with_old_log("--suite", "cli", "-v", "--num-processes", "2", "-t", "-1", "--repeat=1", "cli_step_tree")
check(p.returncode == 0 and p.stdout.strip() == "3 passed, 1 failed, 1 skipped"
      and any(c.endswith("--print-errorlogs --suite cli -v --num-processes 2 -t -1 --repeat=1 cli_step_tree")
              for c in p.tools),
      f"test with meson test's options: passed on, and this run's count ({p.stdout.strip()!r})", p)
os.remove(testlog)

# 4. bench: the track and the size before the build, once.
p = drive("bench", "nosuch")
check(refused(p, "unknown track 'nosuch'"), "bench nosuch: unknown track, before any set-up or build", p)
p = drive("bench", "mri", "--size", "bogus")
check(refused(p, "--size", "bogus") and p.stderr.count("bogus") == 1, "bench mri --size bogus: exit 2, said once", p)
sizes = subprocess.run(["bash", "-c", 'source "$1"; echo "${SIZES[@]}"', "sourced", driver],
                       capture_output=True, text=True, env=env).stdout.split()
cli = open(os.path.join(root, "common", "core", "cli.cpp")).read()
accepted = re.search(r'add_option\("--size".*?IsMember\(\{([^}]*)\}\)', cli, re.S)
accepted = re.findall(r'"([^"]+)"', accepted.group(1)) if accepted else None
check(sizes and sizes == accepted, f"the driver's sizes {sizes} are those the step programs take {accepted}")
mri = [("mri", s) for s in steps("mri")]
size = sizes[0] if sizes else "tiny"
p = drive("bench", "mri", "--size", size, "--json", os.path.join(work, "bench.jsonl"), "--", "--quiet",
          programs_of=mri)
ran = {line.split()[0] for line in p.programs if f"--size {size}" in line and "--quiet" in line}
check(p.returncode == 0 and ran == {f"mri_{s}" for _, s in mri} and len(p.programs) == 2 * len(mri),
      f"bench mri --size {size}: every step, each kernel, with the size and the flags", p)

# 5. Steps by number without the leading zero; --kernel; --ranks.
script = 'source "$1"; shift; for t in mri mc epic ae; do for s in $(step_ids "$t"); do n=${s%%_*}; ' \
         'for w in "$((10#$n))" "$n" "$s" "${s#*_}"; do echo "$t $w $(resolve_step "$t" "$w")"; done; done; done'
out = subprocess.run(["bash", "-c", script, "sourced", driver], capture_output=True, text=True, env=env)
wrong = [line for line in out.stdout.splitlines()
         if (lambda t, w, got="": not (got == w or got[:2] == w.zfill(2) or got[3:] == w))(*line.split())]
check(out.returncode == 0 and out.stdout and not wrong,
      f"resolve_step: every step by its number (with and without the zero), id and name {wrong[:3]} {out.stderr[-300:]}")
for args in (["diff", "mri", "4"], ["show", "mri", "4"], ["diff", "mri", "3", "4"]):
    p = drive(*args)
    q = drive(*[a.zfill(2) if a.isdigit() else a for a in args])
    check(p.returncode == 0 and p.stdout and p.stdout == q.stdout, f"{case(p)}: the same as with 0{args[-1]}", p)
mri_root, mc_root = steps("mri")[0], steps("mc")[0]
p = drive("run", "mri", mri_root[:2], programs_of=[("mri", mri_root)])
check(p.returncode == 0 and len(p.programs) == 2 and "--kernel fhd" in p.programs[0]
      and "--kernel q" in p.programs[1], "run mri 00: each kernel in turn", p)
for kernel in (["--kernel", "q"], ["--kernel=q"]):
    p = drive("run", "mri", mri_root[:2], "--", *kernel, programs_of=[("mri", mri_root)])
    check(p.returncode == 0 and len(p.programs) == 1 and p.programs[0].count("--kernel") == 1
          and " ".join(kernel) in p.programs[0], f"{case(p)}: the user's kernel, once, and no other ({p.programs})", p)
p = drive("run", "mc", mc_root[:2], "--ranks", "2", programs_of=[("mc", mc_root)])
check(refused(p, "one process") and "no usable GPU" not in p.stderr,
      "run mc 00 --ranks 2: a CPU step runs as one process, exit 2, before any build or GPU count", p)
one_gpu = next(s for s in steps(multi[0]) if "nccl" not in nearest_needs(multi[0], s)
               and any(f.endswith(".cu") or f.endswith(".cu.patch") for f in os.listdir(os.path.join(root, "steps", multi[0], s))))
p = drive("run", multi[0], one_gpu[:2], "--ranks", "2")
check(refused(p, "one process", "GPU"), f"run {multi[0]} {one_gpu[:2]} --ranks 2: a one-GPU step, exit 2, before the build", p)
p = drive("run", multi[0], "--ranks", "2")
check(refused(p, "one process", multi[1][:2]), f"run {multi[0]} --ranks 2: not every step is multi-GPU; names {multi[1][:2]}", p)
p = drive("run", multi[0], str(int(multi[1][:2])), "--ranks", "2", "--", "--size", "tiny", programs_of=[multi])
check(p.returncode == 0 and p.programs and all("--size tiny" in line for line in p.programs),
      f"run {multi[0]} {int(multi[1][:2])} --ranks 2: the multi-GPU step is launched", p)
sweep = json.load(open(os.path.join(root, "steps", tuned[0], tuned[1], "sweep.json")))
points = 1
for values in sweep["grid"].values():
    points *= len(values)
p = drive("tune", tuned[0], str(int(tuned[1][:2])), "--json", os.path.join(work, "tune.jsonl"), programs_of=[tuned])
check(p.returncode == 0 and len(p.programs) == points and all("--tag tune" in line for line in p.programs),
      f"tune {tuned[0]} {int(tuned[1][:2])}: every point of {tuned[1]}'s sweep ({points})", p)

# 6. Odd tracks.
for args in (["run", ""], ["run", "mri/", "00"], ["bench", ""], ["lessons", ""], ["diff", "", "04"],
             ["tune", "", "08"], ["show", "../steps/mri", "04"]):
    p = drive(*args)
    check(refused(p, "unknown track"), f"{case(p)}: an unknown track, exit 2", p)

sys.exit(1 if failed else 0)
