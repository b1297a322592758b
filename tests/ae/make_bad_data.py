#!/usr/bin/env python3
"""Writes the data folders the AE CLI tests feed to a step program, each wrong in one way
(or right, where a test needs real files): make_bad_data.py OUTDIR STAMP"""
import gzip
import os
import struct
import sys

out, stamp = sys.argv[1], sys.argv[2]


def folder(name):
    path = os.path.join(out, name)
    os.makedirs(path, exist_ok=True)
    return path


def cifar_records(count):
    # label byte, then 1024 red, 1024 green, 1024 blue bytes
    return b"".join(bytes([r % 10]) + bytes((i * 7 + r) % 256 for i in range(3072)) for r in range(count))


def idx_images(count, magic=0x00000803):
    return struct.pack(">IIII", magic, count, 28, 28) + bytes(i % 251 for i in range(count * 28 * 28))


# Ten good CIFAR-10 images: two per training batch.
d = folder("ae_cifar_ten")
for i in range(1, 6):
    open(os.path.join(d, f"data_batch_{i}.bin"), "wb").write(cifar_records(2))

# data_batch_1.bin cut 100 bytes short of its second record.
d = folder("ae_cifar_truncated")
for i in range(1, 6):
    data = cifar_records(2)
    open(os.path.join(d, f"data_batch_{i}.bin"), "wb").write(data[:-100] if i == 1 else data)

# An IDX label file (magic 0x00000801) where the images should be.
d = folder("ae_idx_wrong_magic")
open(os.path.join(d, "train-images-idx3-ubyte"), "wb").write(idx_images(4, magic=0x00000801))

# Debian's gzip file copied under the raw name.
d = folder("ae_idx_gzip_raw")
open(os.path.join(d, "train-images-idx3-ubyte"), "wb").write(gzip.compress(idx_images(4)))

# Sixteen good images the way Fashion-MNIST draws them: a bright ellipse, a different one in
# each, on an exactly black background. Convolutions of all-zero patches must stay exactly 0
# (a ReLU's input there is the bias alone), which algorithms that round over a tile do not.
d = folder("ae_idx_black_background")
pixels = bytearray()
for n in range(16):
    cy, cx, ry, rx = 10 + n % 8, 9 + (n * 5) % 10, 4 + n % 5, 3 + (n * 3) % 6
    for y in range(28):
        for x in range(28):
            inside = ((y - cy) / ry) ** 2 + ((x - cx) / rx) ** 2 <= 1
            pixels.append(60 + (x * 7 + y * 3 + n * 11) % 190 if inside else 0)
open(os.path.join(d, "train-images-idx3-ubyte"), "wb").write(struct.pack(">IIII", 0x00000803, 16, 28, 28) + bytes(pixels))

open(stamp, "w").write("ok\n")
