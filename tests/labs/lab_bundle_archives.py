#!/usr/bin/env python3
"""The bundle's Makefile rebuilds the harness's static libraries from the build's own lines,
which meson writes differently from version to version: ar with csrDT, csrD or csr, after
`rm -f LIB &&` or alone, by any ar; a compile or link line is no archive.
Usage: lab_bundle_archives.py ROOT"""
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "labs"))
import lab  # noqa: E402

cases = [
    (["rm", "-f", "common/core/libx.a", "&&", "ar", "csrDT", "common/core/libx.a", "a.o", "b.o"], ("common/core/libx.a", ["a.o", "b.o"])),
    (["rm", "-f", "common/core/libx.a", "&&", "ar", "csrD", "common/core/libx.a", "a.o"], ("common/core/libx.a", ["a.o"])),
    (["/usr/bin/ar", "csr", "libx.a", "a.o", "&&", "true"], ("libx.a", ["a.o"])),
    (["x86_64-linux-gnu-gcc-ar", "csrDT", "libx.a", "a.o"], ("libx.a", ["a.o"])),
    (["nvcc", "-o", "prog", "prog.o", "common/core/libx.a"], None),
    (["c++", "-c", "ar.cpp", "-o", "ar.o"], None),
]
failed = 0
for words, want in cases:
    got = lab.archive_of(words)
    ok = got == want
    failed += not ok
    print(("ok   " if ok else "FAIL ") + f"{' '.join(words)} -> {got}")
sys.exit(1 if failed else 0)
