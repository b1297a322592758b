#!/usr/bin/env python3
"""mri_recon with F^H d and Q computed by ladder step programs (--fhd-step/--q-step ID): the
least-squares image of each named step within 0.2 dB of the one from the CPU double
reference's sums, on tiny. A step that needs a GPU makes the test SKIP (77) where there is none.
Usage: recon_steps.py MRI_RECON WORKDIR STEP [STEP...]"""
import json, os, shutil, subprocess, sys, tempfile

exe, work, steps = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(work, exist_ok=True)
work = tempfile.mkdtemp(prefix='recon_steps_', dir=work)  # tests run side by side


def psnr(step):
    path = os.path.join(work, f"recon_steps_{step}.jsonl")
    if os.path.exists(path):
        os.remove(path)
    p = subprocess.run([exe, '--size', 'tiny', '--fhd-step', step, '--q-step', step, '--quiet', '--json', path],
                       capture_output=True, text=True)
    sys.stderr.write(p.stderr)
    if p.returncode == 77:
        shutil.rmtree(work)
        sys.exit(77)
    if p.returncode != 0:
        sys.exit(f"recon_steps.py: mri_recon with {step} exited {p.returncode}")
    (record,) = map(json.loads, open(path))
    if record['params']['fhd_step'] != step or record['params']['q_step'] != step:
        sys.exit(f"recon_steps.py: the record names {record['params']['fhd_step']}/{record['params']['q_step']}, not {step}")
    return record['validation']['psnr_db']


reference = psnr('cpu-double')
for step in steps:
    got = psnr(step)
    print(f"{step}: {got:.3f} dB, cpu-double {reference:.3f} dB")
    if not abs(got - reference) <= 0.2:
        sys.exit(f"recon_steps.py: {step}'s image is {got - reference:+.3f} dB from cpu-double's (allowed: 0.2 dB)")
shutil.rmtree(work)
