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

open(stamp, "w").write("ok\n")
