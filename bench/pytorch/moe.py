"""Trains a small mixture-of-experts layer with expert parallelism, one
process per rank (torchrun): one expert per rank, every rank's tokens routed
by a shared top-1 gate, dispatched to their experts and combined back with
all_to_all_single (unequal splits, the counts exchanged first with an
all_to_all_single of their own), gradients through both, the gate's
gradients averaged with all_reduce. Writes each step's loss (the mean over
ranks) and time to a CSV; run it on ringo and on Gloo with CUDA tensors and
compare.py checks the losses step by step. Ranks beyond the GPUs share them.

    LD_PRELOAD=build/lib/libnccl.so.2 torchrun --nproc_per_node 2 moe.py --out ringo.csv
    torchrun --nproc_per_node 2 moe.py --backend gloo --out gloo.csv
    python3 compare.py gloo.csv ringo.csv
"""
import argparse
import csv
import os
import time

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dnn
import torch.nn as nn


class Expert(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--tokens", type=int, default=512, help="tokens per rank per step")
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--out", required=True)
    ap.add_argument("--backend", default="nccl", choices=("nccl", "gloo"))
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    args = ap.parse_args()

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if args.device == "cuda":
        local = int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count()
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
        torch.backends.cuda.matmul.allow_tf32 = False
    else:
        dev = torch.device("cpu")
    if args.backend == "nccl":
        dist.init_process_group("nccl", device_id=dev)
    else:
        dist.init_process_group("gloo")

    # The gate is the same everywhere (seed 0); expert e is rank e's (seed
    # 100 + e); each rank's tokens and targets its own (seed 1000 + rank).
    torch.manual_seed(0)
    gate = nn.Linear(args.dim, world).to(dev)
    torch.manual_seed(100 + rank)
    expert = Expert(args.dim).to(dev)
    opt = torch.optim.SGD(list(gate.parameters()) + list(expert.parameters()), lr=0.05)
    gen = torch.Generator(device="cpu").manual_seed(1000 + rank)
    rows = []

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    for step in range(args.steps):
        x = torch.randn(args.tokens, args.dim, generator=gen).to(dev)
        y = torch.sin(x).roll(1, dims=1)
        sync()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        probs = torch.softmax(gate(x), dim=-1)
        weight, choice = probs.max(dim=-1)
        order = torch.argsort(choice, stable=True)
        send_counts = torch.bincount(choice, minlength=world)
        recv_counts = torch.empty_like(send_counts)
        dist.all_to_all_single(recv_counts, send_counts)  # how many tokens each expert gets from whom
        ins, outs = send_counts.tolist(), recv_counts.tolist()
        routed = torch.empty(sum(outs), args.dim, device=dev)
        routed = dnn.all_to_all_single(routed, x[order], outs, ins)  # dispatch
        done = expert(routed)
        back = torch.empty(args.tokens, args.dim, device=dev)
        back = dnn.all_to_all_single(back, done, ins, outs)  # combine
        out = torch.empty_like(back)
        out[order] = back
        out = out * weight.unsqueeze(1)
        loss = ((out - y) ** 2).mean()
        loss.backward()
        for p in gate.parameters():  # the gate is replicated: average its gradients
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
        l = loss.detach().clone()
        dist.all_reduce(l)
        l /= world
        sync()
        rows.append((step, l.item(), (time.perf_counter() - t0) * 1e3))
    if rank == 0:
        with open(args.out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "loss", "step_ms"])
            w.writerows(rows)
        print(f"{args.out}: {args.steps} steps, loss {rows[0][1]:.5f} -> {rows[-1][1]:.5f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
