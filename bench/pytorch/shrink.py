"""A data-parallel training job of 4 ranks that loses one to kill -9 and
carries on with 3 (issue 21): the survivors catch the error, shrink the
process group, re-shard the data and train to the end, printing the loss
of every step and the recovery time.

    LD_PRELOAD=build/lib/libnccl.so.2 python3 shrink.py [--seed 1] [--steps 200]

Not yet run: written on a machine without a GPU or torch.

How it works, and why:

- The ranks are started here (the launcher), with torchrun's environment
  (RANK, WORLD_SIZE, LOCAL_RANK), not by torchrun: torchrun's agent stops
  every worker once one has died (fault.py says the same), which would end
  the survivors before they could shrink. The launcher also holds the
  TCPStore, so that no rank's death takes the store with it.
- The victim (a rank other than 0) and the step at which it kills itself
  come from --seed, so every rank knows whom to exclude without asking: the
  survivors pass [victim] to the shrink. (ringo's Comm.Lost would tell them,
  but torch.distributed does not expose it.)
- The survivors notice the loss as an exception from the all-reduce:
  TORCH_NCCL_BLOCKING_WAIT=1 makes the work's wait raise on the
  communicator's error (ringo reports the lost peer through
  ncclCommGetAsyncError within milliseconds), and
  TORCH_NCCL_ASYNC_ERROR_HANDLING=0 keeps torch's watchdog from killing the
  process on that error.
- The shrink is torch.distributed.shrink_group(ranks_to_exclude,
  shrink_flags=...) with NCCL_SHRINK_ABORT (1): PyTorch 2.11's NCCL process
  group implements it with ncclCommShrink (its libtorch imports
  ncclCommShrink; ../../../shared/reference/nccl-api-surface.md, "optional /
  opt-in"), which ringo's libnccl.so.2 now implements. PyTorch's source was
  not at hand to check the exact signature (its stored snapshot is too large
  to fetch here, and the indexed distributed_c10d.py predates shrink_group),
  so the script checks that shrink_group exists and exits with a clear error
  if not, rather than reach for the communicator through private
  attributes with ctypes (the process group would not know of a
  communicator made behind its back).
- Every rank's device is LOCAL_RANK modulo the GPUs it sees: on one GPU the
  4 ranks share it, which ringo allows and NCCL refuses ("Duplicate GPU");
  with --nccl the same script runs on NCCL for contrast (on 2 GPUs or more).

The model is a linear regression on synthetic data (seeded), its
parameters replicated; each step a rank takes its shard's batch, computes
the gradient, all-reduces it and averages. After the shrink the data is
re-sharded over the 3 survivors. Rank 0 prints "step S ranks N loss L" for
every step, "recovered in T ms" (from catching the error to the first
all-reduce on the shrunk group) and "done": the launcher checks that the
loss at the end is below the loss at the start, and that the survivors
ended cleanly.
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import time
from datetime import timedelta

WORLD = 4
FEATURES = 64
SAMPLES = 8192
BATCH = 256


def plan(seed, steps):
    """The victim and the step it dies at, from the seed."""
    rng = random.Random(seed)
    return rng.randrange(1, WORLD), rng.randrange(steps // 4, steps // 2)


def worker(args):
    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dev = torch.device("cuda", int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world, is_master=False,
                          timeout=timedelta(seconds=60))
    dist.init_process_group("nccl", store=store, rank=rank, world_size=world, device_id=dev,
                            timeout=timedelta(seconds=60))
    victim, kill_step = plan(args.seed, args.steps)

    g = torch.Generator().manual_seed(args.seed)
    x = torch.randn(SAMPLES, FEATURES, generator=g).to(dev)
    w_true = torch.randn(FEATURES, 1, generator=g).to(dev)
    y = x @ w_true + 0.01 * torch.randn(SAMPLES, 1, generator=g).to(dev)
    w = torch.zeros(FEATURES, 1, device=dev)

    group, me, size = None, rank, world  # None: the default group
    recovery_ms = None
    step = 0
    while step < args.steps:
        if rank == victim and step == kill_step:
            print(f"rank {rank}: kill -9 myself at step {step}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        # This rank's shard of the step's batch: sample i belongs to the
        # rank i % size, so a shrink re-shards by itself.
        idx = torch.arange(step * BATCH, (step + 1) * BATCH, device=dev) % SAMPLES
        idx = idx[idx % size == me]
        err = x[idx] @ w - y[idx]
        grad = 2 * x[idx].T @ err / BATCH
        try:
            dist.all_reduce(grad, group=group)
            torch.cuda.synchronize(dev)
        except Exception as e:  # the lost rank: DistBackendError, or RuntimeError on older torch
            if group is not None:
                raise  # a second loss: not what this job covers
            caught = time.monotonic()
            print(f"rank {rank}: step {step}: caught {type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
            if not hasattr(dist, "shrink_group"):
                sys.exit(f"rank {rank}: this torch ({torch.__version__}) has no torch.distributed.shrink_group")
            group = dist.shrink_group([victim], shrink_flags=getattr(dist, "SHRINK_ABORT", 1))
            me, size = dist.get_rank(group), dist.get_world_size(group)
            probe = torch.ones(1, device=dev)
            dist.all_reduce(probe, group=group)
            torch.cuda.synchronize(dev)
            if probe.item() != size:
                sys.exit(f"rank {rank}: the first all-reduce on the shrunk group gave {probe.item()}, want {size}")
            recovery_ms = (time.monotonic() - caught) * 1e3
            if me == 0:
                print(f"recovered in {recovery_ms:.1f} ms: rank {rank} is rank {me} of {size}", flush=True)
            continue  # the step again, on the shrunk group
        w -= args.lr * grad
        if me == 0:
            loss = torch.mean((x @ w - y) ** 2).item()
            print(f"step {step} ranks {size} loss {loss:.6f}", flush=True)
        step += 1
    if group is not None:
        dist.destroy_process_group(group)
    if me == 0:
        print("done", flush=True)
    os._exit(0)  # the default group lost a rank: its teardown is not this job's subject


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--timeout", type=float, default=300, help="seconds the whole job may take")
    args = ap.parse_args()
    if "SHRINK_WORKER" in os.environ:
        worker(args)
        return
    import torch.distributed as dist

    store = dist.TCPStore("127.0.0.1", 0, WORLD + 1, is_master=True, wait_for_workers=False)
    victim, kill_step = plan(args.seed, args.steps)
    print(f"seed {args.seed}: rank {victim} kills itself at step {kill_step}", flush=True)
    procs = []
    for r in range(WORLD):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(store.port), WORLD_SIZE=str(WORLD),
                   RANK=str(r), LOCAL_RANK=str(r), SHRINK_WORKER="1",
                   TORCH_NCCL_BLOCKING_WAIT="1", TORCH_NCCL_ASYNC_ERROR_HANDLING="0")
        procs.append(subprocess.Popen([sys.executable, __file__] + sys.argv[1:], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    deadline = time.monotonic() + args.timeout
    status = 0
    losses = []
    for r, p in enumerate(procs):
        try:
            out, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            print(f"FAIL: rank {r} hung past {args.timeout} s (killed)")
            status = 1
        for line in out.splitlines():
            print(f"[{r}] {line}")
            if line.startswith("step "):
                losses.append(float(line.split()[-1]))
        if r == victim:
            continue
        if p.returncode != 0:
            print(f"FAIL: rank {r} exited with status {p.returncode}")
            status = 1
    if len(losses) != args.steps:
        print(f"FAIL: {len(losses)} steps printed, want {args.steps}")
        status = 1
    elif not losses[-1] < losses[0]:
        print(f"FAIL: the loss did not fall: {losses[0]} at the start, {losses[-1]} at the end")
        status = 1
    print("OK" if status == 0 else "FAIL")
    sys.exit(status)


if __name__ == "__main__":
    main()
