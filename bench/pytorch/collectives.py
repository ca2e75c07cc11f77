"""Calls PyTorch's collectives directly — all_reduce (sum, avg, max),
broadcast, all_gather_into_tensor, reduce_scatter_tensor, barrier, and a
collective on a new_group (ncclCommSplit) — and checks every result against
values computed on the host. Prints one line per check and exits non-zero on
the first failure.

    torchrun --nproc_per_node 2 collectives.py
"""
import os
import sys

import torch
import torch.distributed as dist


def check(name, got, want):
    ok = torch.equal(got.cpu(), want.cpu())
    if dist.get_rank() == 0:
        print(f"{'OK  ' if ok else 'FAIL'} {name}", flush=True)
    if not ok:
        print(f"rank {dist.get_rank()}: {name}: got {got.flatten()[:8]}, want {want.flatten()[:8]}", file=sys.stderr)
        sys.exit(1)


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count()  # ranks may share a GPU
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    n = 1 << 20
    # Small integers: every input and sum is exact in every type checked
    # (bfloat16 holds the integers up to 256: world × (m − 1) plus the
    # ranks' 0 … world − 1 stays below it), so any order of summing gives
    # the same bits.
    m = 256 // world - world
    base = torch.arange(n, device=dev, dtype=torch.float32) % m

    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.int32):
        t = (base + rank).to(dtype)
        dist.all_reduce(t)
        want = sum((base + r) for r in range(world)).to(dtype)
        check(f"all_reduce sum {dtype}", t, want)
    t = (base * 2 + rank * 2).float()
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    check("all_reduce avg", t, sum(base * 2 + r * 2 for r in range(world)) / world)
    t = (base + rank).float()
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    check("all_reduce max", t, base + (world - 1))

    t = (base + rank).float()
    dist.broadcast(t, src=1 % world)
    check("broadcast", t, base + 1 % world)

    out = torch.empty(world * 4099, device=dev)
    dist.all_gather_into_tensor(out, torch.full((4099,), float(rank), device=dev))
    check("all_gather_into_tensor", out, torch.cat([torch.full((4099,), float(r)) for r in range(world)]))

    inp = torch.arange(world * 4099, device=dev, dtype=torch.float32) + rank
    out = torch.empty(4099, device=dev)
    dist.reduce_scatter_tensor(out, inp)
    full = sum(torch.arange(world * 4099, dtype=torch.float32) + r for r in range(world))
    check("reduce_scatter_tensor", out, full[rank * 4099 : (rank + 1) * 4099])

    dist.barrier()
    check("barrier", torch.ones(1), torch.ones(1))

    g = dist.new_group(list(range(world)))
    t = torch.full((7,), float(rank + 1), device=dev)
    dist.all_reduce(t, group=g)
    check("all_reduce on new_group", t, torch.full((7,), float(sum(range(1, world + 1)))))

    dist.destroy_process_group()
    if rank == 0:
        print("all collectives OK")


if __name__ == "__main__":
    main()
