#!/usr/bin/env python3
"""No GPU translation unit reads nlohmann/json.hpp: the header costs nvcc about 5 s of a trivial
kernel's 7.7 s (report/evidence/cpu-vm-nvcc-compile-cost.txt), in each of ~50 .cu files of CI's
build. Steps describe their parameters through core/fields.hpp; json_fwd.hpp is allowed.

Two checks, either fails the test:
 1. sources: from every .cu and .cuh of the tree and every include a lab patch adds, the
    quoted includes followed through the tree (every branch of an #if counts) must not reach
    <nlohmann/json.hpp>;
 2. the build: every .cu object ninja has built lists its headers in the deps log
    (`ninja -t deps`); none may list nlohmann/json.hpp. Needs a build with CUDA; where none
    of its objects is built yet, only check 1 runs, and the test says so.
Usage: json_free_gpu_units.py ROOT [BUILD_DIR]"""
import glob
import os
import re
import shutil
import subprocess
import sys

root = os.path.abspath(sys.argv[1])
build = sys.argv[2] if len(sys.argv) > 2 else None
FORBIDDEN = "nlohmann/json.hpp"
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
# Where the build looks for quoted includes besides the including file's folder (meson.build's
# include_directories): common/, common/TRACK/, steps/mri/ (recon/...), labs/00-timing.
SEARCH = [os.path.join(root, "common"), os.path.join(root, "steps", "mri"), os.path.join(root, "labs", "00-timing")]
SEARCH += sorted(glob.glob(os.path.join(root, "common", "*") + os.sep))


def resolve(name, folder):
    for d in [folder] + SEARCH:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return p
    return None  # a generated header (version.hpp) or a system one


def includes(lines, folder):
    """(path or None, text) of each include in `lines`; angle includes resolve to None."""
    out = []
    for line in lines:
        m = INCLUDE.match(line)
        if m:
            out.append((resolve(m.group(2), folder) if m.group(1) == '"' else None, m.group(2)))
    return out


memo = {}


def chain_to_json(path, stack=()):
    """The include chain from `path` to the forbidden header, or None."""
    if path in memo:
        return memo[path]
    if path in stack:
        return None
    memo_value = None
    with open(path, errors="replace") as f:
        for target, text in includes(f, os.path.dirname(path)):
            if text == FORBIDDEN:
                memo_value = [FORBIDDEN]
                break
            if target:
                sub = chain_to_json(target, stack + (path,))
                if sub:
                    memo_value = [os.path.relpath(target, root)] + sub
                    break
    memo[path] = memo_value
    return memo_value


bad = []
units = sorted(p for ext in ("cu", "cuh") for p in glob.glob(os.path.join(root, "**", "*." + ext), recursive=True)
               if not os.path.relpath(p, root).startswith(("build", "subprojects")))
for unit in units:
    chain = chain_to_json(unit)
    if chain:
        bad.append(f"{os.path.relpath(unit, root)} reaches {' -> '.join(chain)}")
patches = sorted(glob.glob(os.path.join(root, "labs", "*", "*.patch")) + glob.glob(os.path.join(root, "tests", "labs", "*", "*.patch")))
for patch in patches:
    with open(patch, errors="replace") as f:
        added = [line[1:] for line in f if line.startswith("+") and not line.startswith("+++")]
    for target, text in includes(added, os.path.dirname(patch)):
        chain = [text] if text == FORBIDDEN else ([os.path.relpath(target, root)] + (chain_to_json(target) or []) if target else [])
        if chain and chain[-1] == FORBIDDEN:
            bad.append(f"{os.path.relpath(patch, root)} adds an include that reaches {' -> '.join(chain)}")
print(f"sources: {len(units)} .cu/.cuh files and {len(patches)} lab patches checked")

ninja = shutil.which("ninja")
if build and ninja and os.path.isfile(os.path.join(build, ".ninja_deps")):
    deps = subprocess.run([ninja, "-C", build, "-t", "deps"], capture_output=True, text=True, check=True).stdout
    objects = 0
    target = None
    for line in deps.splitlines():
        if line and not line.startswith(" "):
            target = line.split(":")[0]
            if target.endswith(".cu.o"):
                objects += 1
        elif target and target.endswith(".cu.o") and FORBIDDEN in line:
            bad.append(f"{target} (built) lists {line.strip()}")
    print(f"build: {objects} .cu objects in {build}'s deps log checked" if objects else
          f"build: no .cu object built in {build} yet (no CUDA, or not built): sources only")
else:
    print("build: no ninja deps log given: sources only")

for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
