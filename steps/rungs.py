#!/usr/bin/env python3
"""The ladders' rungs and the program each one resolves to (README.md, "Single source").

A rung's folder holds its README.md, its `parent` and only the files it adds or changes; every
other file of its program comes from the nearest ancestor that holds it. The program is the
rung's main translation unit (the nearest `*.cu` or `*.cpp` along the chain) and every file it
includes as `#include <NAME>` that the chain holds, searched rung first, then its parent, up to
the root: exactly the compiler's -I order, which the build passes (steps/meson.build).
`compiler_flags` (the step's own compiler flags) and `needs` (the libraries it links beyond its
track's: cufft, cudnn, nccl, fftwf) are inherited the same way; README.md, `parent` and
`sweep.json` belong to the rung alone.

A rung holds a file it changes in one of two forms: the whole file (a new file, or one it
rewrites) or NAME.patch, a unified diff against the file its parent's chain resolves NAME to,
when it changes a few lines of a long file. A patch is applied at build time (render): an
ancestor's fix outside the patch's lines reaches the rung with no edit (each hunk is found
wherever its lines have moved), and one that touches them stops the build at that hunk, by
name (never a silent copy left behind). `show --out`
writes a rung's whole program; `save` takes such a folder back, each file held in its form.

  rungs.py meson                     one line a rung for steps/meson.build
  rungs.py list [TRACK]              TRACK ID KIND PARENT HOW LANE, one rung a line, in tree order
  rungs.py show TRACK ID [--out DIR] the rung's whole program, each file with the rung it comes
                                     from; --out writes it as one folder that builds alone
  rungs.py diff TRACK ID [ID2]       the files ID holds against what its parent resolves to
                                     (or the two rungs' programs against each other)
  rungs.py path TRACK ID FILE        where FILE of ID's program comes from
  rungs.py expand TRACK ID [OUT]     the rung's whole program as one file (stdout or OUT)
  rungs.py expand-path PATH [OUT]    PATH's text, expanded where PATH is a rung's main file
  rungs.py save TRACK ID DIR         DIR's files (as show --out writes them, edited) become ID's:
                                     each held whole or as a patch, or dropped when unchanged
  rungs.py tidy [TRACK]              every held file rewritten in its form; no program changes
  rungs.py render OUT                the files patches make, OUT/TRACK/ID/NAME (the build's)
  rungs.py rename TRACK ID NEW_ID    the rung renamed or renumbered: its folder, every mention of
                                     its id (records, labs, tests, READMEs) and its evidence names
  rungs.py layout                    which rung holds each file of each program
  rungs.py lessons [TRACK]           the lines each parent -> child pair changes in the program
                                     (and in its held files), the median per track
Exit 2 with a message on a bad tree, rung or argument.
"""
import difflib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

STEPS = os.path.dirname(os.path.abspath(__file__))
TRACKS = ("mri", "mc", "epic", "ae")
OWN = ("README.md", "parent", "sweep.json")  # a rung's own files: never inherited
PATCH = ".patch"  # NAME.patch: a rung's changes to NAME, as a unified diff
NEEDS = ("cufft", "cudnn", "nccl", "fftwf")
INCLUDE = re.compile(r'^\s*#\s*include\s*<([^>]+)>', re.M)


class TreeError(Exception):
    pass


def rung_ids(track):
    folder = os.path.join(STEPS, track)
    if not os.path.isdir(folder):
        raise TreeError(f"unknown track '{track}' (tracks: {' '.join(TRACKS)})")
    return sorted(d for d in os.listdir(folder)
                  if re.fullmatch(r"\d\d_\w+", d) and os.path.isdir(os.path.join(folder, d)))


def parent_of(track, rung):
    """(parent id or None, kind '' | 'branch' | 'reference')."""
    path = os.path.join(STEPS, track, rung, "parent")
    if not os.path.isfile(path):
        raise TreeError(f"steps/{track}/{rung} declares no parent "
                        f"(steps/{track}/{rung}/parent: PARENT_ID [reference|branch], or none)")
    with open(path) as f:
        words = f.readline().split()
    if not words or len(words) > 2 or (len(words) == 2 and words[1] not in ("branch", "reference")):
        raise TreeError(f"steps/{track}/{rung}/parent: want PARENT_ID [reference|branch] or none")
    if words[0] == "none":
        return None, ""
    if words[0] not in rung_ids(track) or not words[0] < rung:
        raise TreeError(f"steps/{track}/{rung}/parent: '{words[0]}' is not an earlier step of {track}")
    return words[0], (words[1] if len(words) == 2 else "")


def resolve_id(track, want):
    """'03', '03_gather' or 'gather' -> '03_gather'."""
    for rung in rung_ids(track):
        if want in (rung, rung.split("_", 1)[0], rung.split("_", 1)[1]):
            return rung
    raise TreeError(f"no step '{want}' in track '{track}' (see ./stepwise list)")


def chain(track, rung):
    """The rung, its parent, ... up to the root: the order files are searched in."""
    out = [rung]
    while True:
        up, _ = parent_of(track, out[-1])
        if up is None:
            return out
        out.append(up)


def held(track, rung, name):
    """How RUNG holds NAME: 'whole' (the file), 'patch' (NAME.patch: its changes to the file its
    parent's chain resolves NAME to) or None."""
    folder = os.path.join(STEPS, track, rung)
    whole, patch = os.path.isfile(os.path.join(folder, name)), os.path.isfile(os.path.join(folder, name + PATCH))
    if whole and patch:
        raise TreeError(f"steps/{track}/{rung} holds both {name} and {name}{PATCH}: want one")
    return "whole" if whole else "patch" if patch else None


def holder(track, rung, name):
    """The rung of the chain that holds NAME (the nearest, whole or as a patch), or None."""
    for r in chain(track, rung):
        if held(track, r, name):
            return r
    return None


def held_path(track, h, name):
    """The file rung H holds for NAME: NAME itself or NAME.patch (relative to steps/)."""
    return f"{track}/{h}/{name}" + (PATCH if held(track, h, name) == "patch" else "")


def sources(track, h, name):
    """The files NAME at holder H is made from (relative to steps/): the patches from H up and
    the whole file they apply to, nearest first."""
    out = []
    while h is not None:
        out.append(held_path(track, h, name))
        if held(track, h, name) == "whole":
            return out
        up, _ = parent_of(track, h)
        h = holder(track, up, name) if up else None
    raise TreeError(f"steps/{out[-1]}: a patch with nothing to patch (no ancestor holds {name})")


class PatchError(Exception):
    pass


def hunks(patch):
    """The hunks of a unified diff, as (old lines, new lines), in order."""
    out, old, new, inside, mark = [], None, None, False, None
    for line in patch.splitlines(keepends=True):
        if line.startswith("@@"):
            if old is not None:
                out.append((old, new))
            if not re.match(r"@@ -\d+(,\d+)? \+\d+(,\d+)? @@", line):
                raise PatchError(f"not a hunk header: {line.rstrip()}")
            old, new, inside = [], [], True
        elif not inside:  # the "--- " and "+++ " header before the first hunk
            continue
        elif line.startswith("\\"):  # "\ No newline at end of file": the line before has none
            if mark in (" ", "-"):
                old[-1] = old[-1].rstrip("\n")
            if mark in (" ", "+"):
                new[-1] = new[-1].rstrip("\n")
        elif line[:1] in (" ", "-", "+"):
            body, mark = line[1:], line[0]
            if mark in (" ", "-"):
                old.append(body)
            if mark in (" ", "+"):
                new.append(body)
        elif line in ("\n", ""):  # an empty context line some editors strip to nothing
            old.append("\n"), new.append("\n")
            mark = " "
        else:
            raise PatchError(f"not a diff line: {line.rstrip()}")
    if old is not None:
        out.append((old, new))
    if not out:
        raise PatchError("no hunks")
    return out


def apply_patch(text, patch):
    """`text` with every hunk of the unified diff `patch` applied. Each hunk's old lines (its
    context and removed lines) must occur exactly once, wherever the text has moved them: a
    change elsewhere in the text reaches the result, and one inside a hunk's lines (or one
    that makes them ambiguous) is an error naming the hunk, never a silent guess. A rung's
    NAME.patch and a lab's skeleton.patch are applied by this one rule."""
    lines, bad = _apply(text, patch)
    if bad:
        i, old, places = bad
        first = next((l.strip() for l in old if l.strip()), "")
        raise PatchError(f"hunk {i} (near '{first[:60]}') matches {places} places, not one")
    return "".join(lines)


def _apply(text, patch):
    """(lines, None) with every hunk applied, or (lines so far, (hunk number, its old lines, how
    many places they match)) at the first hunk that is not at exactly one place."""
    lines = text.splitlines(keepends=True)
    for i, (old, new) in enumerate(hunks(patch), 1):
        n = len(old)
        at = [k for k in range(len(lines) - n + 1) if lines[k:k + n] == old] if n else []
        if len(at) != 1:
            return lines, (i, old, len(at) if n else "all")
        lines[at[0]:at[0] + n] = new
    return lines, None


_resolved = {}


def resolved(track, h, name):
    """NAME's text as rung H holds it (a list of lines): the file, or its patch applied to what
    H's parent's chain resolves NAME to."""
    key = (track, h, name)
    if key not in _resolved:
        how = held(track, h, name)
        if how is None:
            raise TreeError(f"steps/{track}/{h} holds no {name}")
        path = os.path.join(STEPS, held_path(track, h, name))
        with open(path) as f:
            lines = f.read().splitlines(keepends=True)
        if how == "patch":
            up, _ = parent_of(track, h)
            base_at = holder(track, up, name) if up else None
            if base_at is None:
                raise TreeError(f"steps/{track}/{h}/{name}{PATCH}: a patch with nothing to patch "
                                f"(no ancestor holds {name})")
            try:
                lines = apply_patch("".join(resolved(track, base_at, name)), "".join(lines)).splitlines(keepends=True)
            except PatchError as e:
                raise TreeError(f"steps/{held_path(track, h, name)}: {e} in {track}/{base_at}'s {name} (changed since "
                                f"the patch was made: make it again, README.md, \"Single source\")") from None
        _resolved[key] = lines
    return _resolved[key]


def main_file(track, rung):
    for r in chain(track, rung):
        folder = os.path.join(STEPS, track, r)
        mains = sorted(f[:-len(PATCH)] if f.endswith(PATCH) else f for f in os.listdir(folder)
                       if f.endswith((".cu", ".cpp", ".cu" + PATCH, ".cpp" + PATCH)))
        if len(mains) > 1:
            raise TreeError(f"steps/{track}/{r} holds {len(mains)} main files ({', '.join(mains)}): want one")
        if mains:
            return mains[0], r
    raise TreeError(f"steps/{track}/{rung}: no main file (*.cu or *.cpp) along its chain")


def program(track, rung):
    """[(name, holding rung)] of the rung's program: the main file first, then the files it
    includes from the chain, in the order first included; then compiler_flags and needs."""
    name, r = main_file(track, rung)
    files, seen, todo = [], set(), [(name, r)]
    while todo:
        name, r = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        files.append((name, r))
        for inc in INCLUDE.findall("".join(resolved(track, r, name))):
            h = holder(track, rung, inc)
            if h is not None and inc not in seen:
                todo.append((inc, h))
    for extra in ("compiler_flags", "needs"):
        h = holder(track, rung, extra)
        if h is not None:
            files.append((extra, h))
    return files


def expand(track, rung):
    """The rung's whole program as one file: each `#include <NAME>` of the chain replaced by the
    file it resolves to, recursively. It is the translation unit the compiler sees (less the
    line markers); the labs' skeletons and the known-wrong builds edit this text."""
    def inline(name, h, stack):
        if name in stack:
            raise TreeError(f"steps/{track}/{h}/{name} includes itself (through {' -> '.join(stack)})")
        out = []
        for line in text(track, h, name):
            m = INCLUDE.match(line)
            inc = m.group(1) if m else None
            where = holder(track, rung, inc) if inc else None
            if where is None:
                out.append(line)
            else:
                body = inline(inc, where, stack + [name])
                out.append(body if body.endswith("\n") else body + "\n")
        return "".join(out)
    name, r = main_file(track, rung)
    return inline(name, r, [])


def expand_path(path):
    """PATH's text; where PATH is a rung's main file (steps/TRACK/ID/MAIN), the rung's whole
    program (expand). Tools that read "a step's source" call this."""
    real = os.path.realpath(path)
    rel = real.split(os.sep)[-3:]  # steps/TRACK/ID/MAIN, or the build's rendered/TRACK/ID/MAIN
    if len(rel) == 3 and rel[0] in TRACKS and re.fullmatch(r"\d\d_\w+", rel[1]) and rel[2].endswith((".cu", ".cpp")):
        try:
            if rel[1] in rung_ids(rel[0]) and main_file(rel[0], rel[1])[0] == rel[2] and (
                    os.path.dirname(os.path.dirname(os.path.dirname(real))) != STEPS
                    or main_file(rel[0], rel[1])[1] == rel[1]):
                return expand(rel[0], rel[1])
        except TreeError:
            pass
    with open(path) as f:
        return f.read()


def words(track, rung, name):
    h = holder(track, rung, name)
    return [] if h is None else "".join(resolved(track, h, name)).split()


def kind(track, rung):
    return "gpu" if main_file(track, rung)[0].endswith(".cu") else "cpu"


def tree_order(track):
    """Rungs depth-first from the root(s), children in number order, each with its lane (the
    side branches on its way from the root): the ladder as a tree."""
    ids = rung_ids(track)
    kids = {r: [] for r in ids}
    roots = []
    for r in ids:
        up, _ = parent_of(track, r)
        (kids[up] if up else roots).append(r)
    out = []

    def walk(r, lane):  # lane: how many side branches lead here (a first child stays in line)
        out.append((r, lane))
        for i, k in enumerate(kids[r]):
            walk(k, lane + (i > 0))
    for r in roots:
        walk(r, 0)
    return out


def layout_line(track, rung):
    return " ".join(f"{n}@{h}" for n, h in program(track, rung))


def rendered_names(track, rung):
    """The files of the rung's program that a patch makes (the build writes them, rendered/)."""
    return [n for n, h in program(track, rung) if held(track, h, n) == "patch"]


def cmd_render(out_root):
    """Write each rung's patched files to OUT_ROOT/TRACK/ID/NAME, the first folder of its include
    path; a file is written only when its text changes (so that nothing rebuilds for nothing),
    and a file no longer made is removed (so that it cannot shadow the chain's)."""
    for track in TRACKS:
        for rung in rung_ids(track):
            folder = os.path.join(out_root, track, rung)
            names = rendered_names(track, rung)
            for n in names:
                body = "".join(resolved(track, holder(track, rung, n), n))
                path = os.path.join(folder, n)
                if os.path.isfile(path):
                    with open(path) as f:
                        if f.read() == body:
                            continue
                os.makedirs(folder, exist_ok=True)
                with open(path, "w") as f:
                    f.write(body)
            for n in (os.listdir(folder) if os.path.isdir(folder) else []):
                if n not in names:
                    os.remove(os.path.join(folder, n))


def cmd_meson():
    # track, id, kind, main (relative to steps/, or to the rendered folder where a patch makes
    # it), flags, needs, include dirs (relative to steps/, the root first), layout digest, the
    # program's files (relative to steps/: what it is made from, patches and the files they
    # apply to), the files it renders (names) and what those are made from; fields split by
    # '|', lists by ' '.
    for track in TRACKS:
        for rung in rung_ids(track):
            name, r = main_file(track, rung)
            needs = words(track, rung, "needs")
            bad = [n for n in needs if n not in NEEDS]
            if bad:
                raise TreeError(f"steps/{track}/{holder(track, rung, 'needs')}/needs: unknown '{bad[0]}' "
                                f"(known: {' '.join(NEEDS)})")
            made = rendered_names(track, rung)
            # The digest covers what the patches make, so that a change to a file a patch applies
            # to reconfigures the build (the driver compares these lines) and re-renders it.
            digest = hashlib.sha1((layout_line(track, rung) + "".join(
                "".join(resolved(track, holder(track, rung, n), n)) for n in made)).encode()).hexdigest()[:12]
            # Root first: meson gives the compiler a target's include directories last first, so
            # the compiler searches the rung's folder first, then its parent's, up to the root.
            dirs = " ".join(f"{track}/{c}" for c in reversed(chain(track, rung)))
            files = " ".join(f for n, h in program(track, rung) for f in sources(track, h, n))
            print("|".join([track, rung, kind(track, rung), f"{track}/{rung}/{name}" if name in made else
                            f"{track}/{r}/{name}", " ".join(words(track, rung, "compiler_flags")),
                            " ".join(needs), dirs, digest, files, " ".join(made),
                            " ".join(f for n in made for f in sources(track, holder(track, rung, n), n))]))


def cmd_list(tracks):
    for track in tracks:
        for rung, depth in tree_order(track):
            up, how = parent_of(track, rung)
            print(track, rung, kind(track, rung), up or "none", how or "-", depth)


def cmd_show(track, rung, out):
    files = program(track, rung)
    if out and os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise TreeError(f"--out {out}: exists and is not an empty folder")
    rows = []
    for n, h in files:
        made = sources(track, h, n)
        mark = "this rung" if h == rung else f"from {h}"
        if len(made) > 1:  # patches, nearest first, and the whole file they apply to
            mark += ": " + ("patches of " + " ".join(f.split("/")[1][:2] for f in made[:-1]) if len(made) > 2
                            else "a patch") + f" on steps/{made[-1]}"
        rows.append((n, "steps/" + made[0], mark))
    w1, w2 = (max(len(r[i]) for r in rows) for i in (0, 1))
    for n, path, mark in rows:
        print(f"  {n:<{w1}}  {path:<{w2}}  ({mark})")
    if out:
        try:
            os.makedirs(out, exist_ok=True)
            for n, h in files:
                with open(os.path.join(out, n), "w") as f:
                    f.writelines(resolved(track, h, n))
        except OSError as e:
            raise TreeError(f"--out {out}: {e.strerror}")
        print(f"wrote {len(files)} files to {out} (build them with -I{out} and the track's harness; "
              f"steps/{track}/{rung}/README.md is the lesson)", file=sys.stderr)


def text(track, h, n):
    return resolved(track, h, n)


def same_kind(a, b):
    """Two names of one kind of file: the same extension, or a CPU part and its GPU version
    (host.hpp and host.cuh, fhd.cpp and fhd.cu)."""
    kinds = ({".cu", ".cpp"}, {".cuh", ".hpp"})
    ea, eb = os.path.splitext(a)[1], os.path.splitext(b)[1]
    return ea == eb or any(ea in k and eb in k for k in kinds)


def renames(track, pa, pb):
    """{new name: old name} for a file of B's program that A's lacks and that is mostly a file
    of A's that B's lacks (a kernel renamed by the lesson), as git's rename detection pairs them."""
    new = [n for n in pb if n not in pa]
    gone = [n for n in pa if n not in pb]
    out = {}
    for n in new:
        tb = text(track, pb[n], n)
        best, score = None, 0.5
        for g in gone:
            if g in out.values() or not same_kind(g, n):
                continue
            r = difflib.SequenceMatcher(None, text(track, pa[g], g), tb, autojunk=False).ratio()
            if r > score:
                best, score = g, r
        if best:
            out[n] = best
    return out


def unified(ta, tb, la, lb, context=3):
    """The unified diff of two texts (lists of lines): GNU diff's minimal one where diff(1) is
    installed (difflib's is longer), else difflib's."""
    if shutil.which("diff"):
        with tempfile.TemporaryDirectory() as tmp:
            for n, t in (("a", ta), ("b", tb)):
                with open(os.path.join(tmp, n), "w") as f:
                    f.writelines(t)
            return subprocess.run(["diff", f"-U{context}", "--label", la, "--label", lb, os.path.join(tmp, "a"),
                                   os.path.join(tmp, "b")], capture_output=True, text=True).stdout
    return "".join(difflib.unified_diff(ta, tb, la, lb, n=context))


# The context a hunk carries, tried in this order: none where it removes lines (they place it
# themselves), then one line, two, three ... on each side. The same number on both sides:
# patch(1) reads a hunk with less context on one side as one at the start or end of the file.
CONTEXTS = [0, 1, 2, 3, 4, 6, 8]


def changes(ta, tb):
    """The changed runs of two texts (lists of lines), (i1, i2, j1, j2) each: ta[i1:i2] becomes
    tb[j1:j2]; GNU diff's minimal ones where diff(1) is installed, else difflib's."""
    if not shutil.which("diff"):
        return [(i1, i2, j1, j2) for op, i1, i2, j1, j2 in
                difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes() if op != "equal"]
    out = []
    for line in unified(ta, tb, "a", "b", context=0).splitlines():
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", line)
        if m:
            a, la, b, lb = (int(g) if g is not None else 1 for g in m.groups())
            i1, j1 = (a - 1 if la else a), (b - 1 if lb else b)
            out.append((i1, i1 + la, j1, j1 + lb))
    return out


def render_patch(ta, tb, runs, around, la, lb):
    """The unified diff of TA to TB whose hunks are RUNS (changes()), each with AROUND[k] lines
    of context on each side; runs whose context meets are one hunk.
    Returns (text, [the runs' indexes, one list a hunk])."""
    groups = [[max(0, i1 - around[k]), min(len(ta), i2 + around[k]), [k]] for k, (i1, i2, _, _) in enumerate(runs)]
    while True:  # runs whose context meets are one hunk, its context as wide on both sides
        merged = []
        for g in groups:
            if merged and g[0] <= merged[-1][1]:
                merged[-1] = [merged[-1][0], max(merged[-1][1], g[1]), merged[-1][2] + g[2]]
            else:
                merged.append(g)
        for g in merged:
            c = max(runs[g[2][0]][0] - g[0], g[1] - runs[g[2][-1]][1])
            g[0], g[1] = max(0, runs[g[2][0]][0] - c), min(len(ta), runs[g[2][-1]][1] + c)
        stable = len(merged) == len(groups)
        groups = merged
        if stable:
            break
    out = [f"--- {la}\n", f"+++ {lb}\n"]

    def line(mark, text):
        out.append(mark + text if text.endswith("\n") else mark + text + "\n\\ No newline at end of file\n")

    for s, e, ks in groups:
        i1, _, j1, _ = runs[ks[0]]
        _, i2, _, j2 = runs[ks[-1]]
        ns, ne = j1 - (i1 - s), j2 + (e - i2)
        old_n, new_n = e - s, ne - ns
        out.append(f"@@ -{s + 1 if old_n else s},{old_n} +{ns + 1 if new_n else ns},{new_n} @@\n")
        at = s
        for k in ks:
            r1, r2, q1, q2 = runs[k]
            for t in ta[at:r1]:
                line(" ", t)
            for t in ta[r1:r2]:
                line("-", t)
            for t in tb[q1:q2]:
                line("+", t)
            at = r2
        for t in ta[at:e]:
            line(" ", t)
    return "".join(out), [g[2] for g in groups]


def minimal_patch(ta, tb, la, lb):
    """The patch of TA to TB (lists of lines) whose hunks carry the fewest context lines that
    still place each at exactly one place when applied (apply_patch): a run that removes lines
    is often placed by them alone, an added line by a line on each side. Every context line is
    a line of the parent's that the rung repeats, and one an ancestor's fix could not reach
    without making the patch again; "" when no such patch gives TB back."""
    runs = changes(ta, tb)
    if not runs:
        return ""
    pick = [0 if i2 > i1 else 1 for i1, i2, _, _ in runs]
    while True:
        patch, groups = render_patch(ta, tb, runs, [CONTEXTS[p] for p in pick], la, lb)
        lines, bad = _apply("".join(ta), patch)
        if not bad:
            return patch if "".join(lines) == "".join(tb) else ""
        for k in groups[bad[0] - 1]:
            pick[k] += 1
            if pick[k] == len(CONTEXTS):
                return ""


def base_of(track, rung, name):
    """What RUNG's parent's chain resolves NAME to (a list of lines), or None."""
    up, _ = parent_of(track, rung)
    h = holder(track, up, name) if up else None
    return resolved(track, h, name) if h else None


def gives(base, patch, body):
    """Whether PATCH applied to BASE is BODY (a hunk whose lines occur twice in BASE is not)."""
    try:
        return apply_patch("".join(base), patch) == "".join(body)
    except PatchError:
        return False


def hold(track, rung, name, body):
    """Make RUNG hold NAME with the text BODY (a list of lines) in its form: nothing when BODY is
    what its parent's chain has (it inherits); the whole file when the chain has none; else the
    form that repeats fewer of the parent's lines: NAME.patch (its context lines) or the whole
    file (its lines unchanged from the parent's), the whole file on a tie or where a hunk's
    lines would occur twice. Returns the form."""
    folder = os.path.join(STEPS, track, rung)
    base = base_of(track, rung, name)
    patch = minimal_patch(base, body, f"a/{name}", f"b/{name}") if base is not None and base != body else ""
    context = sum(1 for line in patch.splitlines()[2:] if line.startswith(" "))
    kept = sum(m.size for m in difflib.SequenceMatcher(None, base, body, autojunk=False).get_matching_blocks()) if patch else 0
    form = "inherit" if base == body else "patch" if patch and context < kept and gives(base, patch, body) else "whole"
    for n, keep in ((name, form == "whole"), (name + PATCH, form == "patch")):
        path = os.path.join(folder, n)
        if keep:
            with open(path, "w") as f:
                f.write("".join(body) if n == name else patch)
        elif os.path.isfile(path):
            os.remove(path)
    _resolved.clear()
    if form != "inherit" and resolved(track, rung, name) != body:
        raise TreeError(f"steps/{track}/{rung}/{name}: the patch made does not give the text back")
    return form


def held_names(track, rung):
    folder = os.path.join(STEPS, track, rung)
    return sorted({n[:-len(PATCH)] if n.endswith(PATCH) else n for n in os.listdir(folder)
                   if n not in OWN and os.path.isfile(os.path.join(folder, n))})


def cmd_save(track, rung, folder):
    """The inverse of show --out: each file of FOLDER becomes part of RUNG's program, held in
    its form (hold); a file the same as its parent's is dropped from the rung."""
    if not os.path.isdir(folder):
        raise TreeError(f"{folder}: not a folder (save TRACK STEP FOLDER: the folder show --out wrote)")
    for n in sorted(os.listdir(folder)):
        if n in OWN or not os.path.isfile(os.path.join(folder, n)):
            continue
        with open(os.path.join(folder, n)) as f:
            body = f.read().splitlines(keepends=True)
        form = hold(track, rung, n, body)
        print(f"  {n}: {'inherited from ' + str(holder(track, parent_of(track, rung)[0], n)) if form == 'inherit' else form}")


def cmd_tidy(tracks):
    """Every file every rung holds, rewritten in its form (hold): the programs stay the same text."""
    for track in tracks:
        for rung in rung_ids(track):
            for n in held_names(track, rung):
                was = held(track, rung, n)
                body = resolved(track, rung, n)
                form = hold(track, rung, n, body)
                if form != was:
                    print(f"steps/{track}/{rung}/{n}: {was} -> {form}")


REPO = os.path.dirname(STEPS)
NOT_RENAMED = ("report/evidence/",)  # the record of what was: its files are renamed, not rewritten


def tracked_text_files():
    """The repository's text files (git's list where it is a git checkout), relative to REPO."""
    try:
        # Only where REPO is the checkout's top: a copy inside another checkout (a build
        # folder's) is not that checkout's, and its files would be listed as ignored.
        top = subprocess.run(["git", "-C", REPO, "rev-parse", "--show-toplevel"], capture_output=True, check=True,
                             text=True).stdout.strip()
        if os.path.realpath(top) != os.path.realpath(REPO):
            raise OSError("not the checkout's top")
        out = subprocess.run(["git", "-C", REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, check=True).stdout.decode().split("\0")
        names = [n for n in out if n and os.path.isfile(os.path.join(REPO, n))]
    except (OSError, subprocess.CalledProcessError):
        names = [os.path.relpath(os.path.join(d, f), REPO) for d, dirs, fs in os.walk(REPO)
                 for f in fs if not any(part.startswith((".", "build")) and part != "."
                                        for part in os.path.relpath(d, REPO).split(os.sep))]
    out = []
    for n in names:
        try:
            with open(os.path.join(REPO, n), encoding="utf-8") as f:
                out.append((n, f.read()))
        except (UnicodeDecodeError, OSError):
            pass  # a binary file (an image): the report draws it again
    return out


def cmd_rename(track, old, new):
    """Rename (or renumber) a rung: its folder, every mention of its id in the repository's text
    (its children's parent files, its program's step_info, the build's and tests' names, lab
    references, the records of report/results, the READMEs, the report), and the evidence files
    named after its number. The evidence's contents stay as they were recorded: a line in
    report/evidence/README.md says what the rung was called."""
    if not re.fullmatch(r"\d\d_[a-z0-9_]+", new):
        raise TreeError(f"'{new}': a step's id is NN_name (two digits, then lower-case words joined by _)")
    if new in rung_ids(track):
        raise TreeError(f"{track} {new} exists already")
    for other in TRACKS:
        if other != track and old in rung_ids(other):
            raise TreeError(f"{other} has a step {old} too: its mentions cannot be told from {track}'s")
    up, _ = parent_of(track, old)
    kids = [r for r in rung_ids(track) if parent_of(track, r)[0] == old]
    if (up and not up < new) or any(not new < k for k in kids):
        raise TreeError(f"{track} {new}: a step's number is above its parent's ({up}) and below its children's "
                        f"({' '.join(kids) or 'none'})")
    before = {r: expand(track, r) for r in rung_ids(track)}
    word = re.compile(rf"(?<![A-Za-z0-9]){re.escape(old)}(?![A-Za-z0-9_])")
    on, nn = old[:2], new[:2]
    moved = {}
    if on != nn:  # evidence files named TRACK-DEVICE-NN-...: renumbered with the rung
        ev = os.path.join(REPO, "report", "evidence")
        for f in sorted(os.listdir(ev)) if os.path.isdir(ev) else []:
            m = re.fullmatch(rf"({track}-[a-z0-9]+-){on}(-.*)", f)
            if m:
                moved[f] = m.group(1) + nn + m.group(2)
    undo = []  # what to put back, last first, if any part fails: a rename is all or nothing

    def write(path, text):
        with open(path, encoding="utf-8") as f:
            was = f.read()
        def put_back():
            with open(path, "w", encoding="utf-8") as f:
                f.write(was)
        undo.append(put_back)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def move(a, b):
        os.rename(a, b)

        def back():
            os.rename(b, a)
            folder = os.path.dirname(b)  # a folder made for b, empty again
            while folder != REPO and os.path.isdir(folder) and not os.listdir(folder):
                os.rmdir(folder)
                folder = os.path.dirname(folder)
        undo.append(back)

    try:
        changed = 0
        for name, body in tracked_text_files():
            text = body if name.startswith(NOT_RENAMED) else word.sub(new, body)
            for a, b in moved.items():
                text = text.replace(a, b)
            if text != body:
                write(os.path.join(REPO, name), text)
                changed += 1
        for a, b in moved.items():
            move(os.path.join(REPO, "report", "evidence", a), os.path.join(REPO, "report", "evidence", b))
        move(os.path.join(STEPS, track, old), os.path.join(STEPS, track, new))
        # Other folders named after the rung (the report's test fixtures keep a copy of a step's
        # sweep.json under steps/TRACK/ID/): moved with it.
        for name, _ in tracked_text_files():
            parts = name.split("/")
            if old in parts[:-1] and not name.startswith(NOT_RENAMED) and os.path.isfile(os.path.join(REPO, name)):
                dest = os.path.join(REPO, *[new if p == old else p for p in parts])
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                move(os.path.join(REPO, name), dest)
                folder = os.path.dirname(os.path.join(REPO, name))
                while folder != REPO and not os.listdir(folder):  # the old folder, emptied
                    os.rmdir(folder)
                    undo.append(lambda f=folder: os.makedirs(f, exist_ok=True))
                    folder = os.path.dirname(folder)
        index = os.path.join(REPO, "report", "evidence", "README.md")
        if os.path.isfile(index):
            with open(index, encoding="utf-8") as f:
                text = f.read()
            head = "## Renamed steps\n"
            if head not in text:
                text = text.rstrip("\n") + f"\n\n{head}\nThe evidence keeps the names a step had when it was recorded:\n"
            text = text.rstrip("\n") + ("\n\n" if text.rstrip("\n").endswith(":") else "\n") + f"- {track} `{new}` was `{old}`\n"
            write(index, text)
        _resolved.clear()
        for r, body in before.items():
            r2 = new if r == old else r
            if expand(track, r2) != word.sub(new, body):
                raise TreeError(f"{track} {r2}: its program changed by more than the new name (check git diff)")
    except (TreeError, OSError) as e:
        for step in reversed(undo):
            step()
        _resolved.clear()
        raise TreeError(f"rename {track} {old} {new}: {e}; nothing was changed")
    print(f"{track} {old} -> {new}: {changed} files changed, {len(moved)} evidence files renamed; "
          f"every program of {track} is what it was, but for the name; the report's images name steps "
          f"too: draw them again (build/report/stepwise_report --results report/results --out report)")


def cmd_diff(track, a, b):
    pa, pb = dict(program(track, a)), dict(program(track, b))
    moved = renames(track, pa, pb)
    for n in list(pb) + [n for n in pa if n not in pb and n not in moved.values()]:
        old = moved.get(n, n)
        ha, hb = pa.get(old), pb.get(n)
        if ha == hb and old == n:
            continue  # the same file: inherited unchanged
        la = f"steps/{held_path(track, ha, old)}" if ha else "/dev/null"
        lb = f"steps/{held_path(track, hb, n)}" if hb else "/dev/null"
        ta = text(track, ha, old) if ha else []
        tb = text(track, hb, n) if hb else []
        if old != n:
            print(f"# {n}: {old} renamed in {b}")
        elif ha is None:
            print(f"# {n}: new in {b}")
        elif hb is None:
            print(f"# {n}: dropped by {b} (its program no longer includes it)")
        sys.stdout.flush()
        sys.stdout.write(unified(ta, tb, la, lb))


def changed_lines(diff_text):
    """The + and - lines of a unified diff, less its file headers and blank lines."""
    return sum(1 for line in diff_text.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++ ", "--- ")) and line[1:].strip())


def program_text(track, rung):
    """What the compiler is given: the expanded program, then the compiler flags and the
    libraries it links beyond its track's."""
    text = expand(track, rung)
    for extra in ("compiler_flags", "needs"):
        if words(track, rung, extra):
            text += f"{extra}: {' '.join(words(track, rung, extra))}\n"
    return text


def cmd_lessons(tracks):
    """Every parent -> child pair with the lines its lesson changes: the + and - lines of the
    diff of the two programs (program_text), as the compiler sees them. How a program is split
    into files is not part of its lesson: a file the child drops and one it adds pair their
    similar lines in this diff, and not in the diff of the held files (./stepwise diff, the
    second number). Per track, the median and the largest of the first number; a library
    reference (declared `reference`) is listed but not counted."""
    import contextlib
    import io
    with tempfile.TemporaryDirectory() as tmp:
        for track in tracks:
            counts = []
            for rung in rung_ids(track):
                parent, kind = parent_of(track, rung)
                if parent is None:
                    continue
                paths = []
                for r in (parent, rung):
                    paths.append(os.path.join(tmp, r))
                    with open(paths[-1], "w") as f:
                        f.write(program_text(track, r))
                diff = subprocess.run(["diff", "-u", *paths], capture_output=True, text=True)
                if diff.returncode not in (0, 1):
                    raise TreeError(f"diff of {track} {parent} and {rung}: {diff.stderr.strip()}")
                files = io.StringIO()
                with contextlib.redirect_stdout(files):
                    cmd_diff(track, parent, rung)
                n = changed_lines(diff.stdout)
                note = {"branch": "  (branch)", "reference": "  (reference: not counted)"}.get(kind, "")
                print(f"{track:<5} {parent[:2]} -> {rung:<26} {n:5d}  (files {changed_lines(files.getvalue())}){note}")
                if kind != "reference":
                    counts.append(n)
            if counts:
                v = sorted(counts)
                median = v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
                print(f"{track:<5} median {median:g} over {len(v)} pairs, largest {v[-1]}, "
                      f"over 400: {sum(x > 400 for x in v)}\n")


def main(argv):
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(__doc__.strip())
        return 0
    cmd, args = argv[0], argv[1:]
    out = None
    if cmd == "show" and "--out" in args:
        i = args.index("--out")
        if i + 1 >= len(args):
            raise TreeError("--out: wants a folder")
        out = args[i + 1]
        args = args[:i] + args[i + 2:]
    if cmd == "meson" and not args:
        cmd_meson()
    elif cmd == "rename" and len(args) == 3:
        cmd_rename(args[0], resolve_id(args[0], args[1]), args[2])
    elif cmd == "save" and len(args) == 3:
        cmd_save(args[0], resolve_id(args[0], args[1]), args[2])
    elif cmd == "tidy" and len(args) <= 1:
        cmd_tidy(args or list(TRACKS))
    elif cmd == "render" and len(args) == 1:
        cmd_render(args[0])
    elif cmd == "lessons" and len(args) <= 1:
        cmd_lessons(args or list(TRACKS))
    elif cmd == "layout" and not args:
        for track in TRACKS:
            for rung in rung_ids(track):
                print(track, rung, layout_line(track, rung))
    elif cmd == "list" and len(args) <= 1:
        cmd_list(args or list(TRACKS))
    elif cmd == "show" and len(args) == 2:
        cmd_show(args[0], resolve_id(args[0], args[1]), out)
    elif cmd == "diff" and len(args) in (2, 3):
        b = resolve_id(args[0], args[-1])
        if len(args) == 3:
            a = resolve_id(args[0], args[1])
        else:
            a, _ = parent_of(args[0], b)
            if a is None:
                raise TreeError(f"{args[0]} {b} is the root of its ladder: it has no parent to diff against")
        cmd_diff(args[0], a, b)
    elif cmd in ("expand", "expand-path") and len(args) in ((2, 3) if cmd == "expand" else (1, 2)):
        n = 2 if cmd == "expand" else 1
        body = expand(args[0], resolve_id(args[0], args[1])) if cmd == "expand" else expand_path(args[0])
        if len(args) > n:
            with open(args[n], "w") as f:
                f.write(body)
        else:
            sys.stdout.write(body)
    elif cmd == "path" and len(args) == 3:
        rung = resolve_id(args[0], args[1])
        h = dict(program(args[0], rung)).get(args[2])
        if h is None:
            raise TreeError(f"{args[0]} {rung}: no file '{args[2]}' in its program")
        print(os.path.join(STEPS, held_path(args[0], h, args[2])))
    else:
        raise TreeError(f"usage: rungs.py meson | layout | list [TRACK] | show TRACK STEP [--out DIR] | "
                        f"diff TRACK STEP [STEP2] | path TRACK STEP FILE | expand TRACK STEP [OUT] | "
                        f"expand-path PATH [OUT] | save TRACK STEP DIR | tidy [TRACK] | render OUT | rename TRACK STEP NEW | lessons [TRACK] "
                        f"(not '{' '.join(argv)}')")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except TreeError as e:
        print(f"stepwise: {e}", file=sys.stderr)
        sys.exit(2)
    except BrokenPipeError:
        sys.exit(0)
