#!/usr/bin/env python3
"""Writes a generated problem as a folder with epic_dataset, then runs a step on it with
--input: the folder path (datasets/epic.md) must give a validated image too.
Usage: folder_round_trip.py EPIC_DATASET STEP_PROGRAM [DATASET ARGS...]"""
import subprocess, sys, tempfile

dataset, step, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
with tempfile.TemporaryDirectory() as tmp:
    folder = tmp + "/problem"
    subprocess.run([dataset, "--size", "tiny", "--folder", folder] + extra, check=True)
    sys.exit(subprocess.run([step, "--input", folder, "--check", "--repeat", "1", "--warmup", "0"]).returncode)
