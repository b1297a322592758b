#!/usr/bin/env python3
"""The reconstruction track's goal on mri_recon's default problem (small, object data blurred
by 1 voxel, R = 1, noise 1e-4; lambda 3000, 50 CG iterations): least squares within 3 % of the
true image and at least 8 dB of PSNR above gridding. F^H d and Q by NUFFT, so that it runs in
seconds; the problem and the settings are the program's defaults.
Usage: recon_goal.py MRI_RECON WORKDIR"""
import json, os, subprocess, sys

exe, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
path = os.path.join(work, 'mri_recon_goal.jsonl')
if os.path.exists(path):
    os.remove(path)
for method in ('ls', 'gridding'):
    subprocess.run([exe, '--method', method, '--fhd-step', 'nufft', '--q-step', 'nufft', '--quiet', '--json', path],
                   check=True)
records = {r['params']['method']: r for r in map(json.loads, open(path))}
ls, grid = records['ls']['validation'], records['gridding']['validation']
print(f"least squares {100 * ls['rel_l2']:.2f} % {ls['psnr_db']:.2f} dB, gridding {100 * grid['rel_l2']:.2f} % "
      f"{grid['psnr_db']:.2f} dB, gain {ls['psnr_db'] - grid['psnr_db']:.2f} dB")
problem = records['ls']['problem']['name']
if problem != 'small-object-blur1':
    sys.exit(f"recon_goal.py: the default problem is {problem}, not small-object-blur1")
if not ls['rel_l2'] < 0.03:
    sys.exit(f"recon_goal.py: least squares is {100 * ls['rel_l2']:.2f} % from the true image (goal: < 3 %)")
if not ls['psnr_db'] >= grid['psnr_db'] + 8:
    sys.exit(f"recon_goal.py: least squares is {ls['psnr_db'] - grid['psnr_db']:.2f} dB above gridding (goal: >= 8 dB)")
