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

  rungs.py meson                     one line a rung for steps/meson.build
  rungs.py list [TRACK]              TRACK ID KIND PARENT HOW LANE, one rung a line, in tree order
  rungs.py show TRACK ID [--out DIR] the rung's whole program, each file with the rung it comes
                                     from; --out writes it as one folder that builds alone
  rungs.py diff TRACK ID [ID2]       the files ID holds against what its parent resolves to
                                     (or the two rungs' programs against each other)
  rungs.py path TRACK ID FILE        where FILE of ID's program comes from
  rungs.py expand TRACK ID [OUT]     the rung's whole program as one file (stdout or OUT)
  rungs.py expand-path PATH [OUT]    PATH's text, expanded where PATH is a rung's main file
  rungs.py layout                    which rung holds each file of each program (the build's
                                     reconfigure trigger)
Exit 2 with a message on a bad tree, rung or argument.
"""
import difflib
import hashlib
import os
import re
import shutil
import subprocess
import sys

STEPS = os.path.dirname(os.path.abspath(__file__))
TRACKS = ("mri", "mc", "epic", "ae")
OWN = ("README.md", "parent", "sweep.json")  # a rung's own files: never inherited
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


def holder(track, rung, name):
    """The rung of the chain that holds NAME (the nearest), or None."""
    for r in chain(track, rung):
        if os.path.isfile(os.path.join(STEPS, track, r, name)):
            return r
    return None


def main_file(track, rung):
    for r in chain(track, rung):
        folder = os.path.join(STEPS, track, r)
        mains = sorted(f for f in os.listdir(folder) if f.endswith((".cu", ".cpp")))
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
        with open(os.path.join(STEPS, track, r, name)) as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
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
    rel = os.path.relpath(real, STEPS).split(os.sep)
    if len(rel) == 3 and rel[0] in TRACKS and re.fullmatch(r"\d\d_\w+", rel[1]) and rel[2].endswith((".cu", ".cpp")):
        try:
            if main_file(rel[0], rel[1]) == (rel[2], rel[1]):
                return expand(rel[0], rel[1])
        except TreeError:
            pass
    with open(path) as f:
        return f.read()


def words(track, rung, name):
    h = holder(track, rung, name)
    if h is None:
        return []
    with open(os.path.join(STEPS, track, h, name)) as f:
        return f.read().split()


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


def cmd_meson():
    # track, id, kind, main (relative to steps/), flags, needs, include dirs (relative to
    # steps/, the root first), layout digest, the program's files (relative to steps/); fields
    # split by '|', lists by ' '.
    for track in TRACKS:
        for rung in rung_ids(track):
            name, r = main_file(track, rung)
            needs = words(track, rung, "needs")
            bad = [n for n in needs if n not in NEEDS]
            if bad:
                raise TreeError(f"steps/{track}/{holder(track, rung, 'needs')}/needs: unknown '{bad[0]}' "
                                f"(known: {' '.join(NEEDS)})")
            digest = hashlib.sha1(layout_line(track, rung).encode()).hexdigest()[:12]
            # Root first: meson gives the compiler a target's include directories last first, so
            # the compiler searches the rung's folder first, then its parent's, up to the root.
            dirs = " ".join(f"{track}/{c}" for c in reversed(chain(track, rung)))
            files = " ".join(f"{track}/{h}/{n}" for n, h in program(track, rung))
            print("|".join([track, rung, kind(track, rung), f"{track}/{r}/{name}",
                            " ".join(words(track, rung, "compiler_flags")), " ".join(needs), dirs, digest,
                            files]))


def cmd_list(tracks):
    for track in tracks:
        for rung, depth in tree_order(track):
            up, how = parent_of(track, rung)
            print(track, rung, kind(track, rung), up or "none", how or "-", depth)


def cmd_show(track, rung, out):
    files = program(track, rung)
    if out and os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise TreeError(f"--out {out}: exists and is not an empty folder")
    width = max(len(n) for n, _ in files)
    for n, h in files:
        mark = "" if h == rung else f"from {h}"
        print(f"  {n:<{width}}  steps/{track}/{h}/{n}" + (f"   ({mark})" if mark else "   (this rung)"))
    if out:
        try:
            os.makedirs(out, exist_ok=True)
            for n, h in files:
                shutil.copyfile(os.path.join(STEPS, track, h, n), os.path.join(out, n))
        except OSError as e:
            raise TreeError(f"--out {out}: {e.strerror}")
        print(f"wrote {len(files)} files to {out} (build them with -I{out} and the track's harness; "
              f"steps/{track}/{rung}/README.md is the lesson)", file=sys.stderr)


def text(track, h, n):
    with open(os.path.join(STEPS, track, h, n)) as f:
        return f.read().splitlines(keepends=True)


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


def cmd_diff(track, a, b):
    pa, pb = dict(program(track, a)), dict(program(track, b))
    moved = renames(track, pa, pb)
    for n in list(pb) + [n for n in pa if n not in pb and n not in moved.values()]:
        old = moved.get(n, n)
        ha, hb = pa.get(old), pb.get(n)
        if ha == hb and old == n:
            continue  # the same file: inherited unchanged
        la = f"steps/{track}/{ha}/{old}" if ha else "/dev/null"
        lb = f"steps/{track}/{hb}/{n}" if hb else "/dev/null"
        ta = text(track, ha, old) if ha else []
        tb = text(track, hb, n) if hb else []
        if old != n:
            print(f"# {n}: {old} renamed in {b}")
        elif ha is None:
            print(f"# {n}: new in {b}")
        elif hb is None:
            print(f"# {n}: dropped by {b} (its program no longer includes it)")
        sys.stdout.flush()
        if shutil.which("diff"):  # GNU diff's minimal diff; difflib's is longer
            subprocess.run(["diff", "-u", "--label", la, "--label", lb,
                            os.path.join(STEPS, track, ha, old) if ha else os.devnull,
                            os.path.join(STEPS, track, hb, n) if hb else os.devnull])
        else:
            sys.stdout.writelines(difflib.unified_diff(ta, tb, la, lb))


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
        print(os.path.join(STEPS, args[0], h, args[2]))
    else:
        raise TreeError(f"usage: rungs.py meson | layout | list [TRACK] | show TRACK STEP [--out DIR] | "
                        f"diff TRACK STEP [STEP2] | path TRACK STEP FILE (not '{' '.join(argv)}')")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except TreeError as e:
        print(f"stepwise: {e}", file=sys.stderr)
        sys.exit(2)
    except BrokenPipeError:
        sys.exit(0)
