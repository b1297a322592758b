#!/usr/bin/env python3
"""A lab's skeleton, made from its step's own source: the step's file with the lab's
skeleton.patch applied (a unified diff: what the student writes is taken out, the TODOs and the
lab's name put in). A step's main file stands for its rung's whole program
as one file (steps/rungs.py expand). Each hunk must match the step's text exactly, context included, at exactly
one place, so a change to the step reaches the lab by construction, and a change inside the
student's region stops the build (exit 2, naming the hunk) instead of handing out a skeleton of
something else.
Usage: skeleton.py ROOT LAB_ID OUT      (lab.json: "skeleton": {"from": STEP_FILE, "patch": FILE})
       skeleton.py --apply STEP_FILE PATCH OUT   (the same for any patch: a lab's reference solution)"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "steps"))
import rungs  # noqa: E402  (a step's file is its rung's whole program: steps/rungs.py expand)


class PatchError(Exception):
    pass


def hunks(patch):
    """The hunks of a unified diff, as (old lines, new lines), in order."""
    out, old, new, inside = [], None, None, False
    for line in patch.splitlines(keepends=True):
        if line.startswith("@@"):
            if old is not None:
                out.append((old, new))
            if not re.match(r"@@ -\d+(,\d+)? \+\d+(,\d+)? @@", line):
                raise PatchError(f"not a hunk header: {line.rstrip()}")
            old, new, inside = [], [], True
        elif not inside:  # the "--- " and "+++ " header before the first hunk
            continue
        elif line.startswith("\\"):  # "\ No newline at end of file"
            continue
        elif line[:1] in (" ", "-", "+"):
            body = line[1:]
            if line[0] in (" ", "-"):
                old.append(body)
            if line[0] in (" ", "+"):
                new.append(body)
        elif line in ("\n", ""):  # an empty context line some editors strip to nothing
            old.append("\n"), new.append("\n")
        else:
            raise PatchError(f"not a diff line: {line.rstrip()}")
    if old is not None:
        out.append((old, new))
    if not out:
        raise PatchError("no hunks")
    return out


def apply(text, patch):
    """`text` with every hunk of `patch` applied; each hunk's old lines occur exactly once."""
    lines = text.splitlines(keepends=True)
    for i, (old, new) in enumerate(hunks(patch), 1):
        n = len(old)
        at = [k for k in range(len(lines) - n + 1) if lines[k:k + n] == old]
        if len(at) != 1:
            first = next((l.strip() for l in old if l.strip()), "")
            raise PatchError(f"hunk {i} (near '{first[:60]}') matches {len(at)} places, not one")
        lines[at[0]:at[0] + n] = new
    return "".join(lines)


def apply_named(step, patch, step_name=None, patch_name=None):
    """apply() on two files; a patch that does not fit names both (as given, or by the names)."""
    try:
        return apply(rungs.expand_path(step), open(patch).read())
    except PatchError as e:
        raise PatchError(f"{patch_name or patch} no longer fits {step_name or step}: {e}") from None


def make(root, lab_id):
    spec = json.load(open(os.path.join(root, "labs", lab_id, "lab.json")))["skeleton"]
    return apply_named(os.path.join(root, spec["from"]), os.path.join(root, "labs", lab_id, spec["patch"]),
                       spec["from"], f"labs/{lab_id}/{spec['patch']}")


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--apply":
        step, patch, out = sys.argv[2:5]
        make_text = lambda: apply_named(step, patch)  # noqa: E731
    elif len(sys.argv) == 4:
        root, lab_id, out = sys.argv[1:4]
        make_text = lambda: make(root, lab_id)  # noqa: E731
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        text = make_text()
    except (PatchError, OSError, KeyError) as e:
        print(f"skeleton.py: {e}", file=sys.stderr)
        sys.exit(2)
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
