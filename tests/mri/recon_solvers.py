#!/usr/bin/env python3
"""mri_recon's two solvers on one problem (tiny, F^H d and Q by cpu-double, lambda 3000, 20
CG iterations, where the residual is still far above rounding): --solver gpu gives the image
of --solver cpu (relative error to the true image equal within 1e-9, every residual within
1e-6 of its own value; tests/mri/recon_gpu.cpp says why these limits) and records itself as a
GPU run. --solver gpu exits 77 where there is no GPU: SKIP.
Usage: recon_solvers.py MRI_RECON WORKDIR"""
import json, os, shutil, subprocess, sys, tempfile

exe, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
work = tempfile.mkdtemp(prefix='recon_solvers_', dir=work)  # tests run side by side


def record(solver):
    path = os.path.join(work, f"{solver}.jsonl")
    p = subprocess.run([exe, '--size', 'tiny', '--fhd-step', 'cpu-double', '--q-step', 'cpu-double', '--iterations', '20',
                        '--solver', solver, '--quiet', '--json', path], capture_output=True, text=True)
    sys.stderr.write(p.stderr)
    if p.returncode == 77:
        shutil.rmtree(work)
        sys.exit(77)
    if p.returncode != 0:
        sys.exit(f"recon_solvers.py: mri_recon --solver {solver} exited {p.returncode}")
    (r,) = map(json.loads, open(path))
    if r['params'].get('solver') != solver:
        sys.exit(f"recon_solvers.py: the record of --solver {solver} names solver {r['params'].get('solver')!r}")
    return r


gpu = record('gpu')
cpu = record('cpu')
if gpu['kind'] != 'gpu' or not isinstance(gpu.get('device'), dict) or cpu['kind'] != 'cpu':
    sys.exit(f"recon_solvers.py: kinds {gpu['kind']}/{cpu['kind']}, GPU device {gpu.get('device')!r}")
g, c = gpu['validation']['rel_l2'], cpu['validation']['rel_l2']
print(f"relative error to the true image: gpu {g:.12e}, cpu {c:.12e}")
if not abs(g - c) <= 1e-9:
    sys.exit(f"recon_solvers.py: the solvers' images differ from the true image by {g} and {c}")
rg, rc = gpu['residuals'], cpu['residuals']
if len(rg) != 20 or len(rc) != 20:
    sys.exit(f"recon_solvers.py: {len(rg)} and {len(rc)} residuals recorded for 20 iterations")
for i, (a, b) in enumerate(zip(rg, rc), 1):
    if not abs(a - b) <= 1e-6 * b:
        sys.exit(f"recon_solvers.py: iteration {i}: residual {a} on the GPU, {b} on the CPU")
for key in ('solver_ms', 'solver_setup_ms'):
    if not gpu['timing'].get(key, -1) >= 0:
        sys.exit(f"recon_solvers.py: the GPU record has no timing.{key}")
shutil.rmtree(work)
