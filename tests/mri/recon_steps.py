#!/usr/bin/env python3
"""mri_recon with F^H d and Q computed by ladder step programs (--fhd-step/--q-step ID): the
least-squares image of each named step within 0.2 dB of the one from the CPU double
reference's sums, on tiny; and the record's times of a step program: Q and F^H d are its timed
run (after a warm-up), its first run and what the process paid once are recorded beside them
and added up in first_image_ms, and a gridding step (11 on) breaks its run into phases; each stage
says when it starts. A step
that needs a GPU makes the test SKIP (77) where there is none.
Usage: recon_steps.py MRI_RECON WORKDIR STEP [STEP...]"""
import json, os, shutil, subprocess, sys, tempfile

exe, work, steps = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(work, exist_ok=True)
work = tempfile.mkdtemp(prefix='recon_steps_', dir=work)  # tests run side by side


def skip():
    """No GPU for a step that needs one: SKIP (77), leaving nothing behind."""
    shutil.rmtree(work)
    sys.exit(77)


def check_times(step, t):
    for sum_ in ('q', 'fhd'):
        phases = t.get(f'{sum_}_phases_ms')
        if not isinstance(phases, dict):
            sys.exit(f"recon_steps.py: {step}: the record has no timing.{sum_}_phases_ms")
        want = ['first_run', 'load', 'store']
        if int(step[:2]) >= 11:  # the gridding steps record their own breakdown
            want += ['upload', 'plan', 'prepare', 'fft_plan', 'spread', 'fft', 'deapodize', 'device_setup']
        for key in want:
            if not phases.get(key, -1) >= 0:
                sys.exit(f"recon_steps.py: {step}: timing.{sum_}_phases_ms has no {key} ({phases})")
        if not phases['load'] + phases['store'] <= t[f'{sum_}_ms'] * (1 + 1e-9):
            sys.exit(f"recon_steps.py: {step}: {sum_}'s load and store ({phases}) exceed its run, {t[f'{sum_}_ms']} ms")
    total = t['q_ms'] + t['fhd_ms'] + t['solver_ms']
    if not abs(t['total_ms']['median'] - total) <= 1e-9 * total:
        sys.exit(f"recon_steps.py: {step}: total_ms {t['total_ms']['median']} is not Q + F^H d + solver, {total}")
    if not abs(t['first_image_ms'] - total - t['one_time_ms']) <= 1e-9 * abs(t['first_image_ms']):
        sys.exit(f"recon_steps.py: {step}: first_image_ms {t['first_image_ms']} is not the total {total} "
                 f"plus one_time_ms {t['one_time_ms']}")


def psnr(step):
    path = os.path.join(work, f"recon_steps_{step}.jsonl")
    if os.path.exists(path):
        os.remove(path)
    p = subprocess.run([exe, '--size', 'tiny', '--fhd-step', step, '--q-step', step, '--quiet', '--json', path],
                       capture_output=True, text=True)
    sys.stderr.write(p.stderr)
    if p.returncode == 77:
        skip()
    if p.returncode != 0:
        sys.exit(f"recon_steps.py: mri_recon with {step} exited {p.returncode}")
    (record,) = map(json.loads, open(path))
    if record['params']['fhd_step'] != step or record['params']['q_step'] != step:
        sys.exit(f"recon_steps.py: the record names {record['params']['fhd_step']}/{record['params']['q_step']}, not {step}")
    if step != 'cpu-double':
        check_times(step, record['timing'])
    return record['validation']['psnr_db']


def progress(step):
    """Without --quiet each stage says when it starts: a large reconstruction is not silence."""
    p = subprocess.run([exe, '--size', 'tiny', '--fhd-step', step, '--q-step', step, '--iterations', '2'],
                       capture_output=True, text=True)
    if p.returncode == 77:
        skip()
    if p.returncode != 0:
        sys.exit(f"recon_steps.py: mri_recon with {step} exited {p.returncode}: {p.stderr}")
    lines = p.stdout.splitlines()
    want = [f"  ...     F^H d by {step}", f"  ...     Q on the 2x grid by {step}", "  ...     the true image, to compare with"]
    at = [lines.index(w) if w in lines else -1 for w in want]
    image = next((i for i, line in enumerate(lines) if line.startswith("  image ")), -1)
    if min(at) < 0 or at != sorted(at) or not at[-1] < image:
        sys.exit(f"recon_steps.py: mri_recon with {step} does not announce its stages in order before the image "
                 f"({want} at {at}, image at {image}):\n{p.stdout}")


reference = psnr('cpu-double')
progress(steps[0])
for step in steps:
    got = psnr(step)
    print(f"{step}: {got:.3f} dB, cpu-double {reference:.3f} dB")
    if not abs(got - reference) <= 0.2:
        sys.exit(f"recon_steps.py: {step}'s image is {got - reference:+.3f} dB from cpu-double's (allowed: 0.2 dB)")
shutil.rmtree(work)
