#!/usr/bin/env python3
"""`lab ID start DIR` and `lab ID check FILE` on paths that are not what they should be, on the
CPU: each is bad usage (exit 2) with a message that names the path and says what is wrong with
it, never a traceback, and writes nothing:
  start: DIR a file; DIR under a file; DIR/SOURCE a link (to nothing: writing would follow it);
         DIR a folder that cannot be written (as a user other than root: root writes anyway);
  check: FILE a folder; FILE a device (/dev/null); FILE unreadable (as a user other than root);
  both:  an empty argument (asked of lab.py --validate-only only: taken for the default, it
         would act on the repository's lab-work/); a lab named by a path (../labs/ID), whose
         default folder would be inside the repository.
Through ./stepwise, whose own first question (lab.py --validate-only) must say it, and lab.py
itself for the cases run as another user. Usage: lab_odd_paths.py STEPWISE ROOT"""
import json, os, pwd, shutil, subprocess, sys, tempfile

stepwise, root = sys.argv[1:3]
lab_py = os.path.join(root, "labs", "lab.py")
LAB = "06-ae-tiling"
source = json.load(open(os.path.join(root, "labs", LAB, "lab.json")))["source"]
failures = []


def expect(p, texts, what):
    out = p.stdout + p.stderr
    missing = [t for t in texts if t not in p.stderr]
    if p.returncode != 2 or missing or "Traceback" in out:
        failures.append(f"{what}: expected exit 2 and {missing or texts} on stderr, no traceback; got exit "
                        f"{p.returncode}\n--- stdout:\n{p.stdout}--- stderr:\n{p.stderr}")


def run(*args):
    return subprocess.run([stepwise, "lab", *args], capture_output=True, text=True, timeout=120)


def other_user():
    """How to run lab.py as a user the permission bits apply to: (python, preexec) or None.
    Root ignores them, so as root the cases run as nobody, with a python nobody can run."""
    if os.geteuid() != 0:
        return sys.executable, None
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        return None

    def drop():
        os.setgid(nobody.pw_gid)
        os.setgroups([])
        os.setuid(nobody.pw_uid)
    for python in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        try:
            p = subprocess.run([python, lab_py, root, root, "--validate-only", "list"],
                               preexec_fn=drop, capture_output=True, timeout=60)
        except OSError:
            continue
        if p.returncode == 0:
            return python, drop
    return None


with tempfile.TemporaryDirectory() as tmp:
    os.chmod(tmp, 0o755)  # the other user must reach the folders below
    a_file = os.path.join(tmp, "a_file")
    with open(a_file, "w") as f:
        f.write("not a folder\n")

    # start: DIR is a file, or lies under one.
    expect(run(LAB, "start", a_file), [a_file, "is a file, not a folder"], "start DIR, DIR a file")
    expect(run(LAB, "start", os.path.join(a_file, "sub", "dir")), [a_file, "is a file, not a folder"],
           "start DIR, DIR under a file")
    if open(a_file).read() != "not a folder\n":
        failures.append(f"start changed {a_file}")

    # start: DIR/SOURCE is a link to nothing; the file it points to must not be made.
    linked = os.path.join(tmp, "linked")
    os.makedirs(linked)
    pointed = os.path.join(tmp, "pointed_to.cu")
    os.symlink(pointed, os.path.join(linked, source))
    expect(run(LAB, "start", linked), [os.path.join(linked, source), "exists"], "start DIR, DIR/SOURCE a dangling link")
    if os.path.lexists(pointed):
        failures.append(f"start wrote through the link at {os.path.join(linked, source)} to {pointed}")

    # check: FILE is a folder, or not a regular file.
    expect(run(LAB, "check", tmp), [tmp, "is a folder, not a file"], "check FILE, FILE a folder")
    if os.path.exists("/dev/null"):
        expect(run(LAB, "check", "/dev/null"), ["/dev/null", "not a regular file"], "check /dev/null")

    # An empty argument is not the default said another way (an unset variable, most likely).
    # Asked of lab.py --validate-only, as ./stepwise asks it first: a start or check that took
    # it for the default would act on the repository's lab-work/.
    for action in ("start", "check"):
        p = subprocess.run([sys.executable, lab_py, root, os.path.join(tmp, "build"), "--validate-only",
                            LAB, action, ""], capture_output=True, text=True, timeout=60)
        expect(p, ["empty"], f"--validate-only {action} ''")

    # A lab is a name that `lab list` lists, not a path to a lab.json.
    escaped = os.path.join(tmp, "escaped")
    expect(run(os.path.join("..", "labs", LAB), "start", escaped), ["no lab"], "start with the lab named by a path")
    if os.path.exists(escaped):
        failures.append(f"start with the lab named by a path wrote {escaped}")

    # Permissions: a folder that cannot be written to, a file that cannot be read.
    user = other_user()
    if user is None:
        print("lab_odd_paths.py: no unprivileged user to run as: permission cases not run")
    else:
        python, preexec = user

        def run_as(*args):
            return subprocess.run([python, lab_py, root, os.path.join(tmp, "build"), *args],
                                  preexec_fn=preexec, capture_output=True, text=True, timeout=120)
        locked = os.path.join(tmp, "locked")
        os.makedirs(locked)
        os.chmod(locked, 0o555)
        expect(run_as(LAB, "start", locked), [locked, "permission denied"], "start DIR, DIR not writable")
        expect(run_as(LAB, "start", os.path.join(locked, "sub")), [locked, "permission denied"],
               "start DIR, DIR to be made in a folder that is not writable")
        unreadable = os.path.join(tmp, source)
        with open(unreadable, "w") as f:
            f.write("// a student's file\n")
        os.chmod(unreadable, 0)
        expect(run_as(LAB, "check", unreadable), [unreadable, "permission denied"], "check FILE, FILE unreadable")
        expect(run_as("--validate-only", LAB, "check", unreadable), [unreadable, "permission denied"],
               "--validate-only check FILE, FILE unreadable")
        os.chmod(locked, 0o755)
        os.chmod(unreadable, 0o644)
        if os.listdir(locked):
            failures.append(f"start wrote into {locked}: {os.listdir(locked)}")
    shutil.rmtree(os.path.join(tmp, "build"), ignore_errors=True)

if failures:
    sys.exit("lab_odd_paths.py:\n" + "\n".join(failures))
print("odd DIR and FILE paths: bad usage, named, no traceback")
