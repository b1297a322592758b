#!/usr/bin/env python3
"""An AE step's --record-images N record, as the report reads it: N images and the trained
model's reconstructions of them, each [channel][row][column] of integers 0..255 of the data
set's shape, the inputs the data set's first N images (as ae_dataset writes them, independently
of the step) quantized the documented way: round(clip(v, 0, 1) * 255).

  check_record_images.py STEP AE_DATASET N SEED

Exit 0 pass, 1 fail."""
import json
import os
import struct
import subprocess
import sys
import tempfile


def read_npy_float32(path):
    """(shape, values) of a little-endian float32 .npy (version 1 or 2), without numpy."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"FAIL: {path} is not a .npy file")
    major = data[6]
    header_len, start = (struct.unpack("<H", data[8:10])[0], 10) if major == 1 else (struct.unpack("<I", data[8:12])[0], 12)
    header = eval(data[start:start + header_len].decode("latin1"), {"__builtins__": {}}, {"True": True, "False": False})
    if header["descr"] != "<f4" or header["fortran_order"]:
        sys.exit(f"FAIL: {path}: expected C-ordered <f4, got {header}")
    shape = tuple(header["shape"])
    count = 1
    for d in shape:
        count *= d
    values = struct.unpack(f"<{count}f", data[start + header_len:start + header_len + 4 * count])
    return shape, values


def main():
    step, dataset, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        images = os.path.join(tmp, "images.npy")
        p = subprocess.run([dataset, "--size", "tiny", "--seed", seed, "--out", images], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"FAIL: {dataset} exited {p.returncode}: {p.stderr}")
        shape, pixels = read_npy_float32(images)
        record_path = os.path.join(tmp, "record.jsonl")
        p = subprocess.run([step, "--size", "tiny", "--seed", seed, "--record-images", str(n), "--json", record_path,
                            "--quiet", "--repeat", "1", "--warmup", "0"], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"FAIL: {step} exited {p.returncode}: {p.stderr}")
        with open(record_path) as f:
            record = json.loads(f.read().splitlines()[-1])

    rec = record.get("reconstructions")
    if not isinstance(rec, dict):
        sys.exit("FAIL: the record has no 'reconstructions' object")
    _, channels, height, width = shape
    check((rec.get("count"), rec.get("channels"), rec.get("height"), rec.get("width")) == (n, channels, height, width),
          f"count and shape: {rec.get('count')}, {rec.get('channels')}x{rec.get('height')}x{rec.get('width')}, "
          f"want {n}, {channels}x{height}x{width}")
    check(abs(rec.get("scale", 0) - 1 / 255) < 1e-12, f"scale 1/255: {rec.get('scale')}")
    check(isinstance(rec.get("mse"), (int, float)) and rec["mse"] >= 0, f"mse of the images: {rec.get('mse')}")

    def shaped(which):
        imgs = rec.get(which)
        ok = isinstance(imgs, list) and len(imgs) == n and all(
            isinstance(img, list) and len(img) == channels and all(
                isinstance(plane, list) and len(plane) == height and all(
                    isinstance(row, list) and len(row) == width for row in plane) for plane in img) for img in imgs)
        check(ok, f"{which}: {n} images of {channels}x{height}x{width}")
        if not ok:
            return None
        values = [v for img in imgs for plane in img for row in plane for v in row]
        check(all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in values),
              f"{which}: integers 0..255")
        return values

    got_in, got_out = shaped("input"), shaped("output")
    if got_in is not None:
        image_size = channels * height * width
        want = [round(min(1.0, max(0.0, v)) * 255) for v in pixels[:n * image_size]]
        # Rounding at exactly .5 may differ (C's lround against Python's to-even): allow 1 level there.
        wrong = [i for i, (g, w) in enumerate(zip(got_in, want)) if abs(g - w) > 1 or (g != w and
                 abs(min(1.0, max(0.0, pixels[i])) * 255 - (g + w) / 2) > 1e-3)]
        check(not wrong, f"inputs are the data set's first {n} images: {len(wrong)} values differ, first at {wrong[:1]}")
        # A record whose inputs were repeated or shifted by one image would match itself: the
        # images differ from each other.
        check(len({tuple(got_in[i * image_size:(i + 1) * image_size]) for i in range(n)}) == n, "the images differ")
    if got_out is not None and got_in is not None:
        check(got_out != got_in, "the outputs are the model's, not a copy of the inputs")
        # Clipping to [0, 1] only brings an output closer to its input (which lies there), and
        # rounding moves each value by at most half a level: the 8-bit images' RMS error cannot
        # exceed the recorded one by more than that.
        rms_8bit = (sum((a - b) ** 2 for a, b in zip(got_in, got_out)) / len(got_in)) ** 0.5 / 255
        rms = rec.get("mse", 0) ** 0.5
        check(rms_8bit <= rms + 1.0 / 255 + 1e-9, f"the outputs go with the recorded mse: RMS {rms_8bit:.4g} (8-bit) "
              f"against {rms:.4g}")

    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
