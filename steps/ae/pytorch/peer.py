#!/usr/bin/env python3
"""The AE track's peer: PyTorch + cuDNN training the same autoencoder, the same way, on the
same GPU, written as results records (report/README.md) so that the report puts it in the
ladder beside the steps.

The model, loss and optimizer are the steps' (common/ae/model.hpp): conv 3->256 ReLU, maxpool
2, conv 256->128 ReLU, maxpool 2, conv 128->128 ReLU, upsample x2 nearest, conv 128->256 ReLU,
upsample x2, conv 256->3, 3x3 kernels with padding 1; mean squared error; SGD (lr, momentum as
PyTorch defines it); He initialization, biases zero. Minibatches run in order over the images,
the remainder of an epoch left out (drop_last), as in common/ae/problem.hpp. The images sit on
the GPU before the clock starts, as the GPU steps' do.

Modes (params.mode), what a practitioner would try, each a row of its own:
  fp32                TF32 off for convolutions and matmuls, NCHW
  tf32_cl             TF32 on, channels_last (NHWC) tensors and weights
  bf16_cl             tf32_cl with the forward pass and loss under bf16 autocast
  tf32_cl_compile     tf32_cl, the model through torch.compile (inductor, mode "default")
  bf16_cl_compile     bf16_cl, the same
  tf32_cl_compile_ro  tf32_cl, torch.compile mode "reduce-overhead" (CUDA graphs)
  bf16_cl_compile_ro  bf16_cl, the same
A compiled model is compiled for one static batch size (dynamic=False), during the untimed
warm-up steps; its backward pass is compiled with it (AOTAutograd); SGD runs eagerly.
--one-batch trains on the first minibatch at every step (no slicing of the image set), which
separates the loop's own overhead from the walk over the images.

Several GPUs (--ddp): DistributedDataParallel, one process per GPU, run under torchrun:
  torchrun --standalone --nproc_per_node 2 peer.py --ddp --mode bf16_cl_compile bf16_cl --batch 256 --json FILE
--batch is then the minibatch of each GPU: a training step takes world x batch images, rank r
those from r x batch on, so that an epoch is images // (world x batch) steps. The model is
wrapped in DDP with its default buckets (its gradients averaged over the ranks as the backward
pass makes them), then compiled where the mode compiles (torch.compile of the DDP module, as
PyTorch's documentation advises: its graph breaks at the buckets). The CUDA-graph modes (_ro)
are refused with --ddp. Rank 0 writes the record (report/README.md): params.mode the mode's
name (a mode's DDP runs and its single process are one row of the report), params.batch the
flag's images a GPU and params.minibatch those of all GPUs (as 24_data_parallel records them),
"ranks" {"size": WORLD_SIZE, "launcher": "torchrun"} at every world size, 1 included, the
throughput and work.count the images of all GPUs; the losses are the ranks' mean, the time rank
0's from a barrier to a barrier, and validation also asks that every weight is the same on every
rank after the timed run. NCCL_NVLS_ENABLE=0 is set unless the environment sets it (NVLink SHARP
buys these few-MB sums nothing; the steps' communicator does the same).

Images: uniform random pixels by default (the work of a training step does not depend on the
pixel values), the steps' own synthetic images with --images-npy (written by
`ae_dataset --size large --out FILE`: then the loss curves compare with the steps' too), or
CIFAR-10 with --cifar-dir (data_batch_1..5.bin), or Fashion-MNIST with --idx-dir (the folder
Debian's dataset-fashion-mnist installs, train-images-idx3-ubyte[.gz]; 28x28 grey padded to
32x32 and copied to three channels, as common/ae/data.cpp reads it: the steps' --idx-dir
images, so that the loss curves compare). --load DIR starts from
weights saved by a step's --save (one .npy per tensor, the same names and shapes).

Validation: one training step's loss and gradients on 4 images against the same model in
float64 (PyTorch on the CPU), worst tensor's relative L2 error, with the mode's precision and
layout in eager mode; the record passes when that error is within the precision's bound (fp32
1e-3, tf32 1e-2, bf16 3e-2; the peer has no kink analysis, steps/ae/README.md; measured on an H200:
3.0e-7, 3.8e-3 and 1.3e-2, report/results/ae-h200.jsonl) and the timed epoch's loss went down. A compiled mode is also checked against its eager twin: the gradients
of one step on the first timed minibatch through the compiled model, against the same step
eager, within the same bound. The steps' own checks are stricter.

Usage: peer.py --json FILE [--mode fp32 tf32_cl ...] [--batch 64 256] [--images 50000] [--repeat 3] [--one-batch]
       torchrun --standalone --nproc_per_node N peer.py --ddp --json FILE [--mode ...] [--batch 256 ...]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

FLOP_PER_IMAGE = 1033371648  # common/ae/model.hpp, training_flop_per_image of the full model
TENSORS = [f"conv{l}.{k}" for l in range(1, 6) for k in ("weight", "bias")]
# mode -> (precision, channels_last, torch.compile mode or None)
MODES = {"fp32": ("fp32", False, None), "tf32_cl": ("tf32", True, None), "bf16_cl": ("bf16", True, None),
         "tf32_cl_compile": ("tf32", True, "default"), "bf16_cl_compile": ("bf16", True, "default"),
         "tf32_cl_compile_ro": ("tf32", True, "reduce-overhead"), "bf16_cl_compile_ro": ("bf16", True, "reduce-overhead")}
# Gradient bounds against float64 by precision: TF32 keeps 10 mantissa bits, bf16 8.
BOUNDS = {"fp32": 1e-3, "tf32": 1e-2, "bf16": 3e-2}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", required=True, help="append one results record per mode and batch to this file")
    p.add_argument("--mode", nargs="+", choices=list(MODES) + ["all"], default=["fp32", "tf32_cl"],
                   help="the modes to run, or all of them (compiled modes add a compile per batch size)")
    p.add_argument("--one-batch", action="store_true", help="train on the first minibatch at every step")
    p.add_argument("--batch", nargs="+", type=int, default=[64, 256])
    p.add_argument("--images", type=int, default=50000, help="images per epoch (default: CIFAR-10's training set size)")
    p.add_argument("--epochs", type=int, default=1, help="epochs per timed run")
    p.add_argument("--repeat", type=int, default=3, help="timed runs (each from the initial weights)")
    p.add_argument("--warmup", type=int, default=20, help="untimed training steps first (cuDNN picks its algorithms)")
    p.add_argument("--lr", type=float, default=0.001)
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--cifar-dir", help="train on CIFAR-10 (binary version) instead of random images")
    p.add_argument("--idx-dir", help="train on Fashion-MNIST (train-images-idx3-ubyte or .gz in this folder, e.g. "
                   "/usr/share/datasets/fashion-mnist) instead of random images")
    p.add_argument("--images-npy", help="train on the steps' synthetic images, as datasets/ae_dataset writes them "
                   "(float32, images x 3 x 32 x 32), instead of random images")
    p.add_argument("--load", help="initial weights: a folder of .npy files as a step's --save writes them")
    p.add_argument("--ddp", action="store_true", help="DistributedDataParallel over the processes torchrun starts, one "
                   "GPU each (--batch per GPU; rank 0 writes the record)")
    a = p.parse_args(argv)
    if "all" in a.mode:
        a.mode = [m for m in MODES if not (a.ddp and MODES[m][2] == "reduce-overhead")]
    a.rank, a.world, a.local_rank = 0, 1, 0
    if a.ddp:
        refused = [m for m in a.mode if MODES[m][2] == "reduce-overhead"]
        if refused:
            p.error(f"--ddp with --mode {' '.join(refused)}: the CUDA-graph modes are not run under DDP")
        if not os.environ.get("RANK") or not os.environ.get("WORLD_SIZE"):
            p.error("--ddp: RANK and WORLD_SIZE are not set: run it under torchrun "
                    "(torchrun --standalone --nproc_per_node N peer.py --ddp ...)")
        try:
            a.rank, a.world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
            a.local_rank = int(os.environ.get("LOCAL_RANK") or a.rank)
        except ValueError:
            p.error("--ddp: RANK, WORLD_SIZE and LOCAL_RANK must be whole numbers")
        if not 0 <= a.rank < a.world:
            p.error(f"--ddp: RANK={a.rank} with WORLD_SIZE={a.world}")
    for name in ("images", "epochs", "repeat"):
        if getattr(a, name) < 1:
            p.error(f"--{name} must be at least 1")
    if a.warmup < 0:
        p.error("--warmup must be at least 0")
    for b in a.batch:
        if b < 1 or b * a.world > a.images:
            p.error(f"--batch {b}: want 1 .. --images ({a.images})" + (f" / {a.world} GPUs" if a.ddp else ""))
    if not (a.lr > 0) or not (0 <= a.momentum < 1):
        p.error("--lr must be > 0 and --momentum in [0, 1)")
    return a


def read_cifar10(folder, count):
    import numpy as np
    chunks, have = [], 0
    for i in range(1, 6):
        path = os.path.join(folder, f"data_batch_{i}.bin")
        raw = np.fromfile(path, dtype=np.uint8)
        if raw.size == 0 or raw.size % 3073:
            sys.exit(f"peer.py: {path}: {raw.size} bytes is not a whole number of 3073-byte CIFAR-10 records")
        records = raw.reshape(-1, 3073)
        if (records[:, 0] > 9).any():
            sys.exit(f"peer.py: {path}: a label above 9: not a CIFAR-10 batch")
        chunks.append(records[:, 1:].reshape(-1, 3, 32, 32))
        have += len(records)
        if have >= count:
            break
    images = np.concatenate(chunks)[:count]
    if len(images) < count:
        sys.exit(f"peer.py: --images {count}: {folder} holds only {len(images)}")
    return images.astype(np.float32) / 255.0


def read_idx_images(folder, count):
    """The first `count` images of Fashion-MNIST's training file, as common/ae/data.cpp reads
    them: each 28x28 byte image centred in 32x32 with zeros around it, divided by 255, the same
    grey in all three channels."""
    import gzip
    import numpy as np
    for name in ("train-images-idx3-ubyte", "train-images-idx3-ubyte.gz"):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            break
    else:
        sys.exit(f"peer.py: --idx-dir {folder}: no train-images-idx3-ubyte[.gz] there")
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if len(raw) < 16 or int.from_bytes(raw[:4], "big") != 0x803:
        sys.exit(f"peer.py: {path}: not an IDX image file (magic 0x00000803)")
    n, rows, cols = (int.from_bytes(raw[i:i + 4], "big") for i in (4, 8, 12))
    if rows > 32 or cols > 32 or len(raw) != 16 + n * rows * cols:
        sys.exit(f"peer.py: {path}: {n} images of {rows}x{cols} in {len(raw)} bytes: not what the steps read")
    if n < count:
        sys.exit(f"peer.py: --images {count}: {path} holds only {n}")
    pixels = np.frombuffer(raw, dtype=np.uint8, offset=16, count=count * rows * cols).reshape(count, rows, cols)
    images = np.zeros((count, 3, 32, 32), dtype=np.float32)
    top, left = (32 - rows) // 2, (32 - cols) // 2
    images[:, :, top:top + rows, left:left + cols] = (pixels.astype(np.float32) / np.float32(255))[:, None]
    return images


def host_info():
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "threads": os.cpu_count() or 0}


def commit():
    given = os.environ.get("STEPWISE_COMMIT")
    if given:
        return given
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        return subprocess.run(["git", "-C", here, "describe", "--always", "--dirty"], capture_output=True,
                              text=True, check=True).stdout.strip() or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def clock_mhz(device):
    try:
        out = subprocess.run(["nvidia-smi", "-i", str(device), "--query-gpu=clocks.max.sm", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, check=True).stdout.strip()
        return int(out.splitlines()[0])
    except (OSError, subprocess.CalledProcessError, ValueError, IndexError):
        return 0


def main(argv):
    a = parse_args(argv)
    import numpy as np
    import torch
    import torch.nn.functional as F
    from torch import nn

    if not torch.cuda.is_available():
        print("peer.py: skipped: no usable GPU", file=sys.stderr)
        return 77
    dev = torch.device("cuda", a.device + a.local_rank)
    torch.cuda.set_device(dev)
    root = a.rank == 0  # writes the records and prints
    DistributedDataParallel = type(None)  # plain() unwraps it where --ddp wraps the model in it
    if a.ddp:
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel
        os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # before NCCL starts
        dist.init_process_group(backend="nccl")
    torch.backends.cudnn.benchmark = True  # the library's fastest algorithms for these shapes

    class Autoencoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 256, 3, padding=1)
            self.conv2 = nn.Conv2d(256, 128, 3, padding=1)
            self.conv3 = nn.Conv2d(128, 128, 3, padding=1)
            self.conv4 = nn.Conv2d(128, 256, 3, padding=1)
            self.conv5 = nn.Conv2d(256, 3, 3, padding=1)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)  # the latent 128 x 8 x 8
            x = F.interpolate(F.relu(self.conv3(x)), scale_factor=2, mode="nearest")
            x = F.interpolate(F.relu(self.conv4(x)), scale_factor=2, mode="nearest")
            return self.conv5(x)

    def initial_state():
        torch.manual_seed(a.seed)
        m = Autoencoder()
        if a.load:
            state = {}
            for name, t in m.state_dict().items():
                path = os.path.join(a.load, name + ".npy")
                if not os.path.isfile(path):
                    sys.exit(f"peer.py: --load {a.load}: {name}.npy is missing")
                v = np.load(path)
                if v.dtype != np.float32 or tuple(v.shape) != tuple(t.shape) or not np.isfinite(v).all():
                    sys.exit(f"peer.py: {path}: want finite float32 {tuple(t.shape)}, got {v.dtype} {v.shape}")
                state[name] = torch.from_numpy(v)
            m.load_state_dict(state)
        else:
            for layer in (m.conv1, m.conv2, m.conv3, m.conv4, m.conv5):
                nn.init.kaiming_normal_(layer.weight, mode="fan_in", nonlinearity="relu")  # He et al. 2015
                nn.init.zeros_(layer.bias)
        return {k: v.clone() for k, v in m.state_dict().items()}

    if sum(bool(x) for x in (a.cifar_dir, a.idx_dir, a.images_npy)) > 1:
        sys.exit("peer.py: --cifar-dir, --idx-dir and --images-npy: name one source of images")
    if a.idx_dir:
        images_np = read_idx_images(a.idx_dir, a.images)
        source, problem_name = "fashion-mnist", "fashion-mnist"
    elif a.cifar_dir:
        images_np = read_cifar10(a.cifar_dir, a.images)
        source, problem_name = "cifar-10", "cifar-10"
    elif a.images_npy:
        try:
            images_np = np.load(a.images_npy, mmap_mode="r")
        except (OSError, ValueError) as e:
            sys.exit(f"peer.py: --images-npy {a.images_npy}: {e}")
        if images_np.dtype != np.float32 or images_np.ndim != 4 or tuple(images_np.shape[1:]) != (3, 32, 32):
            sys.exit(f"peer.py: --images-npy {a.images_npy}: want float32 (images, 3, 32, 32), got {images_np.dtype} {images_np.shape}")
        if images_np.shape[0] < a.images:
            sys.exit(f"peer.py: --images-npy {a.images_npy}: holds {images_np.shape[0]} images, --images asks for {a.images}")
        images_np = np.ascontiguousarray(images_np[:a.images])
        if not np.isfinite(images_np).all():
            sys.exit(f"peer.py: --images-npy {a.images_npy}: not every pixel is finite")
        # The steps' synthetic set of the same count: the same problem as theirs.
        source, problem_name = "synthetic", "large" if a.images == 50000 else "custom"
    else:
        g = torch.Generator().manual_seed(a.seed)
        images_np = torch.rand((a.images, 3, 32, 32), generator=g).numpy()
        source, problem_name = "random-uniform", "large" if a.images == 50000 else "custom"
    state0 = initial_state()

    def step_loss(model, x, precision):
        # The forward pass and the loss, under bf16 autocast where the mode asks (the loss in
        # float32, as autocast computes mse_loss).
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
            return F.mse_loss(model(x).float(), x.float())

    def plain(model):
        # torch.compile wraps the module (OptimizedModule): its state_dict names carry the prefix
        # "_orig_mod.", so weights load into the module it wraps, which shares their storage. DDP
        # wraps it in turn (its .module).
        m = getattr(model, "_orig_mod", model)
        return m.module if isinstance(m, DistributedDataParallel) else m

    def replicas_identical(model):
        # Every weight, its lowest and highest over the ranks: equal where every rank has the same.
        flat = torch.cat([t.detach().reshape(-1) for t in plain(model).parameters()])
        lowest, highest = flat.clone(), flat.clone()
        dist.all_reduce(lowest, op=dist.ReduceOp.MIN)
        dist.all_reduce(highest, op=dist.ReduceOp.MAX)
        return bool(torch.equal(lowest, highest))

    def worst_error(params_ref, params):
        worst, worst_name = 0.0, ""
        for (name, p_ref), (_, p) in zip(params_ref, params):
            e = (p.grad.double().cpu() - p_ref.grad.double().cpu()).norm() / p_ref.grad.double().cpu().norm()
            if e.item() > worst:
                worst, worst_name = e.item(), name
        return worst, worst_name

    def check_gradients(precision, channels_last):
        # One step on 4 images, the mode's precision and layout on the GPU (eager) against
        # float64 on the CPU.
        x = torch.from_numpy(images_np[:4].copy())
        ref = Autoencoder().double()
        ref.load_state_dict(state0)
        loss_ref = F.mse_loss(ref(x.double()), x.double())
        loss_ref.backward()
        m = Autoencoder().to(dev)
        m.load_state_dict(state0)
        xg = x.to(dev)
        if channels_last:
            m = m.to(memory_format=torch.channels_last)
            xg = xg.contiguous(memory_format=torch.channels_last)
        loss = step_loss(m, xg, precision)
        loss.backward()
        worst, worst_name = worst_error(ref.named_parameters(), m.named_parameters())
        return abs(loss.item() - loss_ref.item()) / loss_ref.item(), worst, worst_name

    def check_compiled(compiled, precision, fmt, x):
        # The compiled model's gradients of one step from the initial weights against the same
        # step eager, on a minibatch of the size it was compiled for.
        plain(compiled).load_state_dict(state0)
        compiled.zero_grad(set_to_none=True)
        if hasattr(torch, "compiler") and hasattr(torch.compiler, "cudagraph_mark_step_begin"):
            torch.compiler.cudagraph_mark_step_begin()
        step_loss(compiled, x, precision).backward()
        eager = Autoencoder().to(dev)
        eager.load_state_dict(state0)
        eager = eager.to(memory_format=fmt)
        step_loss(eager, x, precision).backward()
        return worst_error(eager.named_parameters(), compiled.named_parameters())

    device_props = torch.cuda.get_device_properties(dev)
    device = {"name": device_props.name, "sm": f"{device_props.major}.{device_props.minor}",
              "sms": device_props.multi_processor_count, "clock_mhz": clock_mhz(a.device)}
    for mode in a.mode:
        precision, channels_last, compile_mode = MODES[mode]
        tf32 = precision != "fp32"  # bf16 autocast leaves some work in float32: TF32 there too
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        fmt = torch.channels_last if channels_last else torch.contiguous_format
        images = torch.from_numpy(images_np).to(dev).contiguous(memory_format=fmt)
        loss_error, grad_error, grad_worst = check_gradients(precision, channels_last)
        bound = BOUNDS[precision]
        for batch in a.batch:
            whole = batch * a.world  # a training step's images over all GPUs
            steps = a.images // whole * a.epochs
            model = Autoencoder().to(dev).to(memory_format=fmt)
            if compile_mode:
                torch._dynamo.reset()  # a fresh compile per mode and batch size: no shapes carried over
            if a.ddp:
                model = DistributedDataParallel(model, device_ids=[dev.index])
            if compile_mode:
                model = torch.compile(model, mode=compile_mode, dynamic=False)
            times, losses = [], None
            torch.cuda.reset_peak_memory_stats(dev)
            for run in range(a.repeat + 1):  # run 0: the warm-up steps (and the compile), untimed
                plain(model).load_state_dict(state0)
                opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum)
                n = a.warmup if run == 0 else steps
                run_losses = torch.zeros(max(n, 1), device=dev)
                per_epoch = a.images // whole
                torch.cuda.synchronize(dev)
                if a.ddp:
                    dist.barrier(device_ids=[dev.index])  # every rank loaded: no rank's clock runs while it waits for another
                start = time.perf_counter()
                for t in range(n):
                    first = (0 if a.one_batch else (t % per_epoch) * whole) + a.rank * batch  # this rank's share
                    x = images[first:first + batch]
                    if compile_mode == "reduce-overhead":
                        torch.compiler.cudagraph_mark_step_begin()  # a new training step: graphs may replay
                    loss = step_loss(model, x, precision)
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                    run_losses[t] = loss.detach()  # copied at once: a graph's output is reused next step
                torch.cuda.synchronize(dev)
                if a.ddp:
                    dist.barrier(device_ids=[dev.index])  # rank 0's time ends with the slowest rank's
                    dist.all_reduce(run_losses, op=dist.ReduceOp.AVG)  # each rank's is its images' mean
                if run > 0:
                    times.append((time.perf_counter() - start) * 1e3)
                    losses = run_losses.cpu().tolist()
            identical = replicas_identical(model) if a.ddp else None
            compiled_error, compiled_worst = (check_compiled(model, precision, fmt, images[:batch]) if compile_mode
                                              else (None, None))
            ms = statistics.median(times)
            count = steps * whole
            first4 = sum(losses[:4]) / min(4, len(losses))
            last4 = sum(losses[-4:]) / min(4, len(losses))
            finite = all(v == v and abs(v) != float("inf") for v in losses)
            passed = (finite and last4 < first4 and grad_error <= bound and loss_error <= bound and
                      (compiled_error is None or compiled_error <= bound) and identical is not False)
            if not root:
                continue
            every = max(1, (len(losses) + 999) // 1000)
            stats = {"median": ms, "min": min(times), "max": max(times)}
            record = {
                "schema": 1, "track": "ae", "step": "pytorch",
                "title": f"PyTorch {torch.__version__} + cuDNN {torch.backends.cudnn.version()}, {mode}",
                "kind": "gpu", "commit": commit(),
                "time": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "host": host_info(), "device": device,
                "problem": {"name": problem_name, "params": {
                    "model": {"channels": 3, "height": 32, "width": 32, "widths": [256, 128, 128, 256], "parameters": 751875},
                    "data": {"source": source, "images": a.images}, "batch": whole, "epochs": a.epochs,
                    "lr": a.lr, "momentum": a.momentum, "steps": steps, "init": a.load or "he", "seed": a.seed}},
                "params": {"mode": mode + ("_one_batch" if a.one_batch else ""), "batch": batch, "epochs": a.epochs,
                           "lr": a.lr, "momentum": a.momentum,
                           "precision": precision, "channels_last": channels_last, "compile": compile_mode or "none",
                           "one_batch": a.one_batch, "torch": torch.__version__, "cudnn": torch.backends.cudnn.version()},
                "timing": {"kernel_ms": stats, "total_ms": stats, "repeat": a.repeat, "warmup": a.warmup},
                "work": {"unit": "images", "count": count, "steps": steps, "flop": count * FLOP_PER_IMAGE,
                         "flop_per_image": FLOP_PER_IMAGE},
                "throughput": {"value": count / (ms * 1e-3), "unit": "images/s"},
                "memory": {"peak_bytes": torch.cuda.max_memory_allocated(dev)},
                "validation": {"reference": "pytorch-float64", "rel_l2": grad_error, "max_abs": None, "psnr_db": None,
                               "snr_db": None, "compared": 751875, "pass": passed, "class": precision,
                               "loss_error": loss_error, "worst_tensor": grad_worst, "bound": bound,
                               "compiled_vs_eager": compiled_error, "compiled_worst_tensor": compiled_worst,
                               "loss_first4": first4, "loss_last4": last4},
                "training": {"losses": losses[::every], "every": every, "steps": len(losses)},
            }
            if a.ddp:
                record["params"].update({"minibatch": whole, "world_size": a.world, "ddp": True})
                record["ranks"] = {"size": a.world, "launcher": "torchrun"}
                record["validation"]["replicas"] = {"compared": "every weight after the timed run, the lowest and the "
                                                                f"highest of the {a.world} ranks'", "identical": identical}
            with open(a.json, "a") as f:
                f.write(json.dumps(record) + "\n")
            print(f"pytorch {mode}{f' ddp x {a.world}' if a.ddp else ''} batch {batch}{' a GPU' if a.ddp else ''}: "
                  f"{count / (ms * 1e-3):,.0f} images/s ({ms:.1f} ms per run of {steps} steps), "
                  f"peak {torch.cuda.max_memory_allocated(dev) / 2**20:.0f} MiB, gradient error {grad_error:.2e} "
                  f"({grad_worst}), loss {first4:.4f} -> {last4:.4f}"
                  f"{'' if identical is None else ', replicas ' + ('identical' if identical else 'DIFFER')}: "
                  f"{'PASS' if passed else 'FAIL'}")
    if a.ddp:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
