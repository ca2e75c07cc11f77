"""Trains a small transformer language model on synthetic data with
DistributedDataParallel, one process per rank (torchrun), and writes each
step's loss and time to a CSV. Run it once on the NCCL PyTorch ships and once
with ringo's libnccl.so.2 preloaded; compare.py then checks that the losses
agree step by step. Ranks beyond the GPUs share them (rank r on GPU r mod
the GPU count), which NCCL refuses and ringo accepts; --backend gloo runs the
same training on Gloo with CUDA tensors, the peer to compare with there.

    torchrun --nproc_per_node 2 ddp_train.py --steps 300 --out nccl.csv
    LD_PRELOAD=build/lib/libnccl.so.2 torchrun --nproc_per_node 2 ddp_train.py --out ringo.csv
    torchrun --nproc_per_node 4 ddp_train.py --backend gloo --out gloo.csv
"""
import argparse
import csv
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class TinyLM(nn.Module):
    def __init__(self, vocab=2048, dim=256, heads=4, layers=4, ctx=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(ctx, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True)
        self.body = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, vocab)

    def forward(self, x):
        h = self.tok(x) + self.pos[: x.shape[1]]
        mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1], device=x.device)
        return self.head(self.body(h, mask=mask, is_causal=True))


def init_rank(backend):
    """Joins torchrun's job on backend ("nccl" or "gloo"), rank r on GPU r
    modulo the GPU count, and returns the rank, the world size and the
    device."""
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count()
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    if backend == "nccl":
        dist.init_process_group("nccl", device_id=dev)
    else:
        dist.init_process_group("gloo")
    return rank, world, dev


def run_steps(model, opt, dev, rank, world, steps, batch, seq, out, what):
    """Trains model for steps next-token steps on synthetic batches of
    batch × seq tokens (rank's own fixed seed: two runs see the same numbers
    up to the reductions), and has rank 0 write each step's loss — the mean
    over ranks, through the library under test too (a sum, then a division:
    Gloo has no AVG) — and time to the CSV out."""
    gen = torch.Generator(device=dev).manual_seed(1234 + rank)
    lossf = nn.CrossEntropyLoss()
    rows = []
    for step in range(steps):
        x = torch.randint(0, 2048, (batch, seq + 1), device=dev, generator=gen)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logits = model(x[:, :-1])
        loss = lossf(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        l = loss.detach().clone()
        dist.all_reduce(l)
        l /= world
        torch.cuda.synchronize()
        rows.append((step, l.item(), (time.perf_counter() - t0) * 1e3))
    if rank == 0:
        with open(out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "loss", "step_ms"])
            w.writerows(rows)
        print(f"{out}: {what}, {steps} steps, final loss {rows[-1][1]:.6f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--out", required=True)
    ap.add_argument("--backend", default="nccl", choices=("nccl", "gloo"))
    args = ap.parse_args()

    rank, world, dev = init_rank(args.backend)
    # Same initial weights everywhere, different data per rank, fixed seeds:
    # two runs see exactly the same numbers up to the reductions.
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = DDP(TinyLM().to(dev), device_ids=[dev.index], bucket_cap_mb=4)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    run_steps(model, opt, dev, rank, world, args.steps, args.batch, 128, args.out, "ddp")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
