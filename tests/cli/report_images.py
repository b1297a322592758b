#!/usr/bin/env python3
"""Which images `./stepwise report` trains the ae rows on (ae_report_flags): CIFAR-10 where
STEPWISE_CIFAR10 names it; else Fashion-MNIST raw, or gzipped when the build reads gzip;
else the generated shapes. Each case is a folder made here; the driver is sourced, so nothing
builds or runs. Usage: report_images.py STEPWISE WORKDIR"""
import os
import shutil
import subprocess
import sys

driver, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def flags(env, build_ninja):
    build = os.path.join(work, "build")
    os.makedirs(build, exist_ok=True)
    with open(os.path.join(build, "build.ninja"), "w") as f:
        f.write(build_ninja)
    full = {k: v for k, v in os.environ.items() if not k.startswith("STEPWISE_")}
    full.update(env, STEPWISE_BUILD=build)
    out = subprocess.run(["bash", "-c", 'source "$1"; ae_report_flags; printf "%s\\n" "${AE_FLAGS[@]}"', "sourced", driver],
                         env=full, capture_output=True, text=True, check=True).stdout
    return out.split()


def folder(name, *files):
    path = os.path.join(work, name)
    os.makedirs(path, exist_ok=True)
    for f in files:
        open(os.path.join(path, f), "wb").close()
    return path


raw = folder("raw", "train-images-idx3-ubyte")
gz = folder("gz", "train-images-idx3-ubyte.gz")
empty = folder("empty")
zlib = "build x.o: cpp_COMPILER x.cpp\n FLAGS = -DSTEPWISE_AE_HAVE_ZLIB\n"
cases = [
    ("raw Fashion-MNIST", {"STEPWISE_FASHION_MNIST": raw}, "", ["--idx-dir", raw]),
    ("gzipped, a build with zlib", {"STEPWISE_FASHION_MNIST": gz}, zlib, ["--idx-dir", gz]),
    ("gzipped, a build without zlib", {"STEPWISE_FASHION_MNIST": gz}, "", []),
    ("no images", {"STEPWISE_FASHION_MNIST": empty}, zlib, []),
    ("a missing folder", {"STEPWISE_FASHION_MNIST": os.path.join(work, "nowhere")}, zlib, []),
    ("CIFAR-10 first", {"STEPWISE_FASHION_MNIST": raw, "STEPWISE_CIFAR10": empty}, zlib, ["--cifar-dir", empty]),
]
failed = 0
for name, env, ninja, want in cases:
    got = flags(env, ninja)
    want = ["--record-images", "8"] + want
    ok = got == want
    failed += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {' '.join(got)}" + ("" if ok else f" (want {' '.join(want)})"))
sys.exit(1 if failed else 0)
