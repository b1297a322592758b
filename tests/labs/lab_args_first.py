#!/usr/bin/env python3
"""`lab ID check FILE` with a FILE that does not exist is bad usage, said at once and naming the
file, before anything is built (a fresh build of a lab's reference step takes minutes):
1. labs/lab.py --validate-only, what ./stepwise asks before it builds: exit 2 naming the file
   for every lab; exit 0 for an existing file; exit 2 for an unknown lab or bad usage;
2. ./stepwise itself, with no STEPWISE_LAB_PREBUILT: exit 2 naming the file, and none of the
   build's tools called. meson, ninja and nvcc are stand-ins on PATH that record their calls
   (nvcc's makes the driver take the path that builds), and STEPWISE_BUILD is an empty folder.
Usage: lab_args_first.py STEPWISE ROOT"""
import json, os, subprocess, sys, tempfile

stepwise, root = sys.argv[1:3]
lab_py = os.path.join(root, "labs", "lab.py")


def expect(cond, what, p=None):
    if not cond:
        detail = f"\n--- stdout:\n{p.stdout}--- stderr:\n{p.stderr}" if p is not None else ""
        sys.exit(f"lab_args_first.py: {what}{detail}")


def run(cmd, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)


labs = sorted(d for d in os.listdir(os.path.join(root, "labs"))
              if os.path.isfile(os.path.join(root, "labs", d, "lab.json")))
expect(labs, "no lab has a lab.json")

with tempfile.TemporaryDirectory() as tmp:
    build = os.path.join(tmp, "build")  # never configured: nothing may be built there
    missing = os.path.join(tmp, "no-such-dir", "student.cu")

    # 1. lab.py --validate-only
    for lab in labs:
        p = run([sys.executable, lab_py, root, build, "--validate-only", lab, "check", missing])
        expect(p.returncode == 2 and missing in p.stderr and "no such file" in p.stderr,
               f"lab.py --validate-only {lab} check {missing}: expected exit 2 naming the file, got {p.returncode}", p)
        meta = json.load(open(os.path.join(root, "labs", lab, "lab.json")))
        # An existing file, named as the lab's source is (validation only asks that it exists).
        source = os.path.join(tmp, "existing", meta["source"])
        os.makedirs(os.path.dirname(source), exist_ok=True)
        open(source, "w").write("// a student's file\n")
        p = run([sys.executable, lab_py, root, build, "--validate-only", lab, "check", source])
        expect(p.returncode == 0, f"lab.py --validate-only {lab} check {source}: exit {p.returncode}", p)
    for args in (["no-such-lab", "check", missing], [labs[0], "grade"], [labs[0], "check", "a", "b"]):
        p = run([sys.executable, lab_py, root, build, "--validate-only", *args])
        expect(p.returncode == 2, f"lab.py --validate-only {' '.join(args)}: expected exit 2, got {p.returncode}", p)
    expect(not os.path.exists(build), f"lab.py --validate-only made {build}")

    # 2. the driver, with stand-ins for the build's tools
    bin_dir, calls = os.path.join(tmp, "bin"), os.path.join(tmp, "calls")
    os.makedirs(bin_dir)
    for tool in ("meson", "ninja", "nvcc"):
        path = os.path.join(bin_dir, tool)
        with open(path, "w") as f:
            # Success, so that a driver that builds first goes on (and leaves no set-up log).
            f.write(f'#!/bin/sh\necho "{tool} $*" >> "{calls}"\nexit 0\n')
        os.chmod(path, 0o755)
    env = {k: v for k, v in os.environ.items() if k != "STEPWISE_LAB_PREBUILT"}
    env.update(PATH=bin_dir + os.pathsep + env.get("PATH", ""), STEPWISE_BUILD=build,
               STEPWISE_NO_INSTALL="1")
    for lab in labs:
        p = run([stepwise, "lab", lab, "check", missing], env=env)
        made = open(calls).read() if os.path.exists(calls) else ""
        expect(not made, f"./stepwise lab {lab} check {missing}: the build started before the file was "
                         f"checked (called: {made.strip()})", p)
        expect(p.returncode == 2 and missing in p.stderr and "no such file" in p.stderr,
               f"./stepwise lab {lab} check {missing}: expected exit 2 naming the file, got {p.returncode}", p)
print(f"{len(labs)} labs: a missing file is bad usage, said before any build")
