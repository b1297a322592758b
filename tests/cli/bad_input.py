#!/usr/bin/env python3
"""Bad input must give exit 2 and a message that names the problem (never a crash, never
a silent wrong answer). Usage: bad_input.py CASE STEP_PROGRAM MRI_DATASET_PROGRAM"""
import atexit, json, os, shutil, struct, subprocess, sys, tempfile

case, program, dataset = sys.argv[1:4]
work = tempfile.mkdtemp(prefix="stepwise_cli_")
atexit.register(shutil.rmtree, work, ignore_errors=True)
folder = os.path.join(work, "tiny")
subprocess.run([dataset, "--size", "tiny", "--folder", folder, "--parboil", os.path.join(work, "tiny.bin")],
               check=True, stdout=subprocess.DEVNULL)


def npy(path, descr, shape, payload):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload)


def edit_meta(**changes):
    path = os.path.join(folder, "meta.json")
    meta = json.load(open(path))
    meta.update(changes)
    json.dump(meta, open(path, "w"))


# Each case: (arguments, text the message must contain); some first damage the folder.
if case == "unknown_flag":
    args, want = ["--bogus-flag"], "--bogus-flag"
elif case == "missing_folder":
    args, want = ["--input", os.path.join(work, "nowhere")], "nowhere"
elif case == "missing_npy":
    os.remove(os.path.join(folder, "kx.npy"))
    args, want = ["--input", folder], "kx.npy: cannot open"
elif case == "truncated_npy":
    path = os.path.join(folder, "ky.npy")
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-100])
    args, want = ["--input", folder], "ky.npy: truncated"
elif case == "wrong_dtype":
    npy(os.path.join(folder, "x.npy"), "<f8", "(512,)", b"\0" * 8 * 512)
    args, want = ["--input", folder], "x.npy: wrong dtype: expected float32, found float64"
elif case == "wrong_shape":
    npy(os.path.join(folder, "kz.npy"), "<f4", "(1023,)", b"\0" * 4 * 1023)
    args, want = ["--input", folder], "kz.npy: wrong shape"
elif case == "not_npy":
    open(os.path.join(folder, "phi.npy"), "w").write("hello, this is text\n")
    args, want = ["--input", folder], "phi.npy: not a .npy file"
elif case == "negative_count":
    edit_meta(samples=-5)
    args, want = ["--input", folder], "'samples' must be a positive integer"
elif case == "absurd_count":
    edit_meta(voxels=10**12)
    args, want = ["--input", folder], "more than the limit"
elif case == "negative_repeat":
    args, want = ["--size", "tiny", "--repeat", "-3"], "--repeat"
elif case == "absurd_repeat":
    args, want = ["--size", "tiny", "--repeat", "1000000000"], "--repeat"
elif case == "unknown_size":
    args, want = ["--size", "huge"], "--size"
elif case == "truncated_parboil":
    path = os.path.join(work, "tiny.bin")
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-7])
    args, want = ["--input-parboil", path, "--kernel", "q"], "truncated"
elif case == "parboil_nan_kx":
    # A NaN in kx, the file's first array: with --check too it is bad input (exit 2), never a
    # run whose output is all NaN.
    path = os.path.join(work, "tiny.bin")
    data = bytearray(open(path, "rb").read())
    data[8 + 4 * 5:8 + 4 * 6] = struct.pack("<f", float("nan"))
    open(path, "wb").write(data)
    args, want = ["--input-parboil", path, "--kernel", "q", "--check"], "tiny.bin: kx[5] is NaN"
elif case == "parboil_has_no_data":
    args, want = ["--input-parboil", os.path.join(work, "tiny.bin"), "--kernel", "fhd"], "no k-space data"
else:
    sys.exit("unknown case " + case)

r = subprocess.run([program, "--quiet"] + args, capture_output=True, text=True)
if r.returncode == 77:
    sys.exit(77)  # a GPU step on a machine without a GPU: nothing to check here
ok = r.returncode == 2 and want in r.stderr
print(f"{case}: exit {r.returncode}; stderr: {r.stderr.strip()}")
if not ok:
    print(f"FAIL: expected exit 2 and a message containing {want!r}")
sys.exit(0 if ok else 1)
