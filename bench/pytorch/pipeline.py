"""Trains a small MLP pipeline-parallel with torch.distributed.pipelining
(GPipe schedule): one stage per rank (torchrun), activations and their
gradients sent between stages with PyTorch's point-to-point operations
(batch_isend_irecv). The last rank also trains an unsplit copy of the same
model on the same micro-batches and checks, step by step, that the
pipeline's losses equal the copy's (within --rtol); it prints one line per
few steps and OK or FAIL, and exits non-zero on FAIL. Ranks beyond the GPUs
share them (rank r on GPU r mod the GPU count).

    LD_PRELOAD=build/lib/libnccl.so.2 torchrun --nproc_per_node 2 pipeline.py
"""
import argparse
import copy
import inspect
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.pipelining import PipelineStage, ScheduleGPipe


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--microbatches", type=int, default=4)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--rtol", type=float, default=1e-5)
    args = ap.parse_args()

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count()
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    torch.backends.cuda.matmul.allow_tf32 = False
    dist.init_process_group("nccl", device_id=dev)

    torch.manual_seed(0)  # the same model everywhere
    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.dim, args.dim), nn.Tanh()]
    full = nn.Sequential(*layers).to(dev)
    ref = copy.deepcopy(full) if rank == world - 1 else None
    per = len(layers) // world
    mine = nn.Sequential(*full[rank * per : len(layers) if rank == world - 1 else (rank + 1) * per])
    mb = args.batch // args.microbatches
    example = torch.empty(mb, args.dim, device=dev)
    stage = PipelineStage(mine, rank, world, dev, input_args=(example,), output_args=example)
    kw = {}
    if "scale_grads" in inspect.signature(ScheduleGPipe).parameters:
        kw["scale_grads"] = False  # gradients summed over micro-batches, as the copy's below
    sched = ScheduleGPipe(stage, n_microbatches=args.microbatches, loss_fn=F.mse_loss, **kw)
    opt = torch.optim.SGD(mine.parameters(), lr=0.01)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.01) if ref is not None else None

    gen = torch.Generator(device="cpu").manual_seed(1234)  # the same data everywhere
    worst, ok = 0.0, True
    for step in range(args.steps):
        x = torch.randn(args.batch, args.dim, generator=gen).to(dev)
        y = torch.randn(args.batch, args.dim, generator=gen).to(dev) * 0.5
        opt.zero_grad(set_to_none=True)
        if rank == 0:
            sched.step(x)
        elif rank == world - 1:
            losses = []
            sched.step(target=y, losses=losses)
        else:
            sched.step()
        opt.step()
        if ref is not None:
            ref_opt.zero_grad(set_to_none=True)
            want = []
            for xm, ym in zip(x.chunk(args.microbatches), y.chunk(args.microbatches)):
                l = F.mse_loss(ref(xm), ym)
                l.backward()
                want.append(l.item())
            ref_opt.step()
            got = [float(l) for l in losses]
            diff = max(abs(g - w) / abs(w) for g, w in zip(got, want))
            worst = max(worst, diff)
            if diff > args.rtol or len(got) != len(want):
                ok = False
            if step % 10 == 0 or step == args.steps - 1:
                print(f"  step {step:3d}: pipeline loss {sum(got) / len(got):.6f}, unsplit {sum(want) / len(want):.6f}", flush=True)
    if rank == world - 1:
        print(f"{'OK  ' if ok else 'FAIL'} pipeline (GPipe, {world} stages, {args.microbatches} micro-batches, {args.steps} steps): "
              f"largest relative loss difference to the unsplit model {worst:.2e} (tolerance {args.rtol:g})", flush=True)
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
