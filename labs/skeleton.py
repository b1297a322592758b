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
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "steps"))
import rungs  # noqa: E402  (a step's file is its rung's whole program: steps/rungs.py expand)


# One rule applies every patch of the project (steps/rungs.py): each hunk's lines at exactly
# one place of the step's text.
PatchError = rungs.PatchError
apply = rungs.apply_patch


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
