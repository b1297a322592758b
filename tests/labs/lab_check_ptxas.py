#!/usr/bin/env python3
"""`lab ID check FILE` compiles FILE as the grading build does, ptxas included, on any machine
with nvcc. Without a GPU the build compiles GPU code to PTX alone (meson.build: gpu_tests off),
so ptxas never sees it there; a kernel over a limit of the GPU (here 120 KB of static shared
memory, over the 48 KB a kernel may hold statically) would pass that compile and be rejected
only on the GPU machine. The lab's skeleton with such a kernel added must fail here too:
exit 1, "does not compile", ptxas's message, not "compiled; not checked" (77). Without a GPU,
the skeleton as handed out still compiles: exit 77, "compiled; not checked".
Needs the lab's reference step and lab_gpu_usable built; skips (77) without nvcc, before
compiling anything. Usage: lab_check_ptxas.py STEPWISE ROOT LAB_ID"""
import glob, json, os, shutil, subprocess, sys, tempfile

stepwise, root, lab = sys.argv[1:4]


def nvcc():
    # Where ./stepwise looks for it (find_cuda): PATH, then /usr/local/cuda*/bin.
    return shutil.which("nvcc") or next(
        (p for p in ["/usr/local/cuda/bin/nvcc"] + sorted(glob.glob("/usr/local/cuda-*/bin/nvcc"))
         if os.access(p, os.X_OK)), None)


if nvcc() is None:
    print("lab_check_ptxas.py: no nvcc: skipped before compiling anything")
    sys.exit(77)


def expect(cond, what, p=None):
    if not cond:
        detail = f"\n--- stdout:\n{p.stdout}--- stderr:\n{p.stderr}" if p is not None else ""
        sys.exit(f"lab_check_ptxas.py: {what}{detail}")


def run(*args):
    return subprocess.run([stepwise, "lab", *args], capture_output=True, text=True, timeout=600)


source = json.load(open(os.path.join(root, "labs", lab, "lab.json")))["source"]
# 30000 floats: 0x1d4c0 bytes. Used, so that no optimizer drops it before ptxas counts it.
TOO_MUCH_SHARED = """
// 120 KB of static shared memory: more than the 48 KB (0xc000) a kernel may hold statically.
__global__ void lab_check_too_much_shared(float* out) {
  __shared__ float tile[30000];
  for (int i = threadIdx.x; i < 30000; i += blockDim.x) tile[i] = out[i];
  __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x * 7919) % 30000];
}
"""

with tempfile.TemporaryDirectory() as tmp:
    p = run(lab, "start", tmp)
    expect(p.returncode == 0, f"lab {lab} start {tmp}: exit {p.returncode}", p)
    skeleton = os.path.join(tmp, source)
    big = os.path.join(tmp, "too_much_shared_" + source)
    with open(skeleton) as f, open(big, "w") as g:
        g.write(f.read() + TOO_MUCH_SHARED)

    p = run(lab, "check", big)
    expect(p.returncode == 1 and "does not compile" in p.stdout and "uses too much shared data" in p.stderr
           and "not checked" not in p.stderr,
           f"lab {lab} check with 120 KB of static shared memory: expected exit 1, 'does not compile' "
           f"and ptxas's 'uses too much shared data', got exit {p.returncode}", p)

    # The same line compiles and links the skeleton as handed out: without a GPU, "compiled"
    # (with one, the lab's skeleton_fails test checks it all the way).
    build = os.environ.get("STEPWISE_BUILD", os.path.join(root, "build"))
    query = os.path.join(build, "tests", "labs", "lab_gpu_usable")
    if os.access(query, os.X_OK) and subprocess.run([query], capture_output=True).returncode == 77:
        p = run(lab, "check", skeleton)
        expect(p.returncode == 77 and "compiled; not checked" in p.stderr,
               f"lab {lab} check of the skeleton without a GPU: expected exit 77, 'compiled; not checked', "
               f"got exit {p.returncode}", p)
print(f"lab {lab}: a kernel over the shared-memory limit is rejected by ptxas, as in grading")
