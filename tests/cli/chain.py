"""A rung's files, resolved along its parent chain for the tests, independently of
steps/rungs.py: the parent files are walked here and a rung's NAME.patch is applied by patch(1)
(no fuzz), so that a fault of rungs.py's own resolution or patch applier shows as a difference."""
import os
import re
import subprocess
import tempfile

OWN = ("README.md", "parent", "sweep.json")
PATCH = ".patch"


class Chain:
    def __init__(self, root):
        self.root = root
        self.cache = {}

    def folder(self, track, step):
        return os.path.join(self.root, "steps", track, step)

    def steps(self, track):
        return sorted(d for d in os.listdir(os.path.join(self.root, "steps", track)) if re.match(r"\d\d_", d))

    def parent(self, track, step):
        return open(os.path.join(self.folder(track, step), "parent")).readline().split()[0]

    def held(self, track, step):
        """The names STEP holds (NAME for NAME.patch too), with how: 'whole' or 'patch'."""
        out = {}
        for f in sorted(os.listdir(self.folder(track, step))):
            if f not in OWN:
                out[f[:-len(PATCH)] if f.endswith(PATCH) else f] = "patch" if f.endswith(PATCH) else "whole"
        return out

    def nearest(self, track, step, name):
        """The nearest of STEP and its ancestors that holds NAME (whole or as a patch), or None."""
        while step != "none":
            if name in self.held(track, step):
                return step
            step = self.parent(track, step)
        return None

    def text(self, track, step, name):
        """NAME as STEP holds it: the file, or its patch applied by patch(1) to its parent's."""
        key = (track, step, name)
        if key not in self.cache:
            how = self.held(track, step).get(name)
            path = os.path.join(self.folder(track, step), name)
            if how == "whole":
                self.cache[key] = open(path).read()
            else:
                base_at = self.nearest(track, self.parent(track, step), name)
                if base_at is None:
                    raise ValueError(f"steps/{track}/{step}/{name}{PATCH}: nothing to patch")
                self.cache[key] = apply(self.text(track, base_at, name), path + PATCH)
        return self.cache[key]

    def base(self, track, step, name):
        """What STEP's parent's chain resolves NAME to, or None."""
        up = self.parent(track, step)
        at = self.nearest(track, up, name) if up != "none" else None
        return self.text(track, at, name) if at else None

    def main(self, track, step):
        while step != "none":
            mains = [n for n in self.held(track, step) if n.endswith((".cu", ".cpp"))]
            if mains:
                return mains[0], step
            step = self.parent(track, step)
        raise ValueError(f"steps/{track}: no main file")

    def expand(self, track, step):
        """The rung's whole program as one file: each `#include <NAME>` its chain holds inlined."""
        def inline(name, at):
            out = []
            for line in self.text(track, at, name).splitlines(keepends=True):
                m = re.match(r'^\s*#\s*include\s*<([^>]+)>', line)
                where = self.nearest(track, step, m.group(1)) if m else None
                if where is None:
                    out.append(line)
                else:
                    body = inline(m.group(1), where)
                    out.append(body if body.endswith("\n") else body + "\n")
            return "".join(out)
        return inline(*self.main(track, step))


def apply(base, patch):
    """BASE (text) with the unified diff at PATCH applied by patch(1): no fuzz, offsets allowed."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "base"), os.path.join(tmp, "out")
        open(src, "w").write(base)
        p = subprocess.run(["patch", "--silent", "--fuzz=0", "--no-backup-if-mismatch", "-r", os.devnull,
                            "-o", out, src, patch], capture_output=True, text=True)
        if p.returncode != 0:
            raise ValueError(f"{patch} does not apply: {(p.stdout + p.stderr).strip()}")
        return open(out).read()


def unified(a, b, name):
    """GNU diff -u of two texts, labelled a/NAME and b/NAME (the form rungs hold)."""
    with tempfile.TemporaryDirectory() as tmp:
        pa, pb = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        open(pa, "w").write(a)
        open(pb, "w").write(b)
        return subprocess.run(["diff", "-u", "--label", f"a/{name}", "--label", f"b/{name}", pa, pb],
                              capture_output=True, text=True).stdout
