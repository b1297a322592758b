#!/usr/bin/env python3
"""report/evidence/ holds only what is cited, and no citation names a file it does not hold.

    python3 tests/cli/evidence_cited.py REPOSITORY_ROOT

Scans every text file of the repository (not .git/, not a build folder, not what .gitignore
names at the top: build*/, .whl/, .gl/, .data/, lab-work/, __pycache__/) for citations,
`report/evidence/NAME` or `evidence/NAME`. NAME may be a brace list (`ae-h100-0{3,4}-x.txt`) or
a glob (`mc-*-old-numbers.jsonl`). A file does not cite itself. Fails (exit 1, one 'FAIL' line
each) on:
- a file in report/evidence/ (but its README.md) that nothing cites;
- a citation whose NAME (each of its expansions) matches no file there;
- a name that report/evidence/README.md indexes (the first column of its table, or the names a
  bullet starts with) and that the folder does not hold;
- report/evidence/ past 5 MiB (5 * 1024 * 1024 bytes, as `du -sb` counts), naming the largest files.
Exit 0 when none, with a summary line either way."""
import fnmatch
import os
import re
import sys

LIMIT = 5 * 1024 * 1024
EVIDENCE = os.path.join("report", "evidence")
INDEX = os.path.join(EVIDENCE, "README.md")
SKIP_TOP = re.compile(r"^(build.*|\.git|\.whl|\.gl|\.data|lab-work)$")
SKIP_ANY = {".git", "__pycache__"}
# `evidence/` then a name: letters, digits and . _ - + (a file name), { } , (a brace list),
# * ? (a glob), / (a sub-folder); not ] (a Markdown link's text ends there). The longest run is taken, then cut (see name_of).
CITATION = re.compile(r"(?<![A-Za-z0-9_.-])(?:report/)?evidence/([A-Za-z0-9_.+{},*?/-]+)")
INDEXED = re.compile(r"`([^`\s]+)`")
FILE_SHAPE = re.compile(r"\.(jsonl|json|txt|log|csv|gz|md|ncu-rep|nsys-rep)$")


def name_of(raw):
    """The cited name in a raw match: cut at a comma outside braces (a list: "a.txt, b.txt"),
    then strip what ends a sentence (a.txt. / a.txt:)."""
    depth, end = 0, len(raw)
    for i, c in enumerate(raw):
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif c == "," and depth == 0:
            end = i
            break
    return raw[:end].rstrip(".,;:/")


def expand(name):
    """Brace lists, nested or not: a{b,c}d -> abd, acd."""
    m = re.search(r"\{([^{}]*)\}", name)
    if not m:
        return [name]
    return [x for alt in m.group(1).split(",") for x in expand(name[:m.start()] + alt + name[m.end():])]


def is_glob(name):
    return any(c in name for c in "*?[")


def walk_text(root):
    """(path relative to root, text) of every text file the repository holds (but this script,
    whose examples and messages are not citations)."""
    me = os.path.realpath(__file__)
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        top = rel_dir == "."
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIP_ANY and not (top and SKIP_TOP.match(d))
                             and not os.path.isdir(os.path.join(dirpath, d, "meson-private")))
        for f in sorted(filenames):
            path = os.path.join(dirpath, f)
            if os.path.islink(path) or not os.path.isfile(path) or os.path.realpath(path) == me:
                continue
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            if b"evidence/" not in data or b"\0" in data[:8192]:
                continue  # nothing to cite here, or not text (a .gz, an image)
            yield os.path.normpath(os.path.join(rel_dir, f)), data.decode("utf-8", "replace")


def main(argv):
    if len(argv) != 1 or not os.path.isdir(os.path.join(argv[0], EVIDENCE)):
        print(__doc__)
        print(f"FAIL usage: want the repository root (the folder holding {EVIDENCE}/)")
        return 1
    root = argv[0]
    ev_dir = os.path.join(root, EVIDENCE)
    held = {}  # name relative to report/evidence -> size
    total = 0
    for dirpath, dirnames, filenames in os.walk(ev_dir):
        total += os.path.getsize(dirpath)  # as du -sb counts a folder
        for f in filenames:
            path = os.path.join(dirpath, f)
            size = os.lstat(path).st_size
            total += size
            held[os.path.relpath(path, ev_dir).replace(os.sep, "/")] = size
    names = sorted(n for n in held if n != "README.md")

    fails = []
    cited = {n: [] for n in names}
    citations = 0
    citing_files = set()
    for rel, text in walk_text(root):
        own = rel.replace(os.sep, "/")
        for lineno, line in enumerate(text.splitlines(), 1):
            for m in CITATION.finditer(line):
                name = name_of(m.group(1))
                if not name:
                    continue  # the folder itself: report/evidence/
                citations += 1
                citing_files.add(own)
                for e in expand(name):
                    hits = [n for n in held if fnmatch.fnmatchcase(n, e)] if is_glob(e) else (
                        [e] if e in held else [])
                    if not hits:
                        fails.append(f"FAIL {own}:{lineno} cites report/evidence/{e}: no such file"
                                     + (f" (from {name})" if e != name else ""))
                    for h in hits:
                        if h in cited and f"{EVIDENCE}/{h}".replace(os.sep, "/") != own:
                            cited[h].append(f"{own}:{lineno}")

    # The index: every name it lists must be a file here (a deleted file's entry goes with it).
    index_path = os.path.join(root, INDEX)
    if os.path.isfile(index_path):
        with open(index_path, encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                if line.startswith("|") and not line.startswith("|---"):
                    cell = line.split("|")[1]
                elif line.startswith("- `"):
                    cell = re.match(r"-\s*((?:`[^`]+`(?:,\s*|\s+\(|\s*:|\s*$))+)", line)
                    cell = cell.group(1) if cell else ""
                else:
                    continue
                for token in INDEXED.findall(cell):
                    if "/" in token or not FILE_SHAPE.search(token):
                        continue  # a path elsewhere (report/results/...) or not a file's name
                    for e in expand(token):
                        if not (any(fnmatch.fnmatchcase(n, e) for n in held) if is_glob(e) else e in held):
                            fails.append(f"FAIL {INDEX}:{lineno} indexes {e}: no such file in {EVIDENCE}/")

    uncited = [n for n in names if not cited[n]]
    for n in uncited:
        fails.append(f"FAIL {EVIDENCE}/{n} ({held[n]:,} bytes) is cited nowhere: cite it as "
                     f"report/evidence/{n} where it is used, or delete it (and its entry in {INDEX})")
    if total > LIMIT:
        largest = sorted(held.items(), key=lambda kv: -kv[1])[:10]
        fails.append(f"FAIL {EVIDENCE}/ holds {total:,} bytes, over the limit of {LIMIT:,} (5 MiB); largest: "
                     + ", ".join(f"{n} {s:,}" for n, s in largest))

    for line in fails:
        print(line)
    verdict = "FAIL" if fails else "OK"
    print(f"evidence_cited: {verdict}: {len(names)} files, {total:,} of {LIMIT:,} bytes; "
          f"{citations} citations in {len(citing_files)} files; {len(uncited)} uncited, "
          f"{len(fails) - len(uncited) - (1 if total > LIMIT else 0)} bad citations or index entries")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
