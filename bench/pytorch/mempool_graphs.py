"""What a training job does with NCCL's memory and CUDA graphs, one mode per
run (torchrun, one process per rank; ranks beyond the GPUs share them):

  --mode ddp       DistributedDataParallel, the reference (also on Gloo);
  --mode ddp-pool  the same, its gradient buckets in an NCCL memory pool:
                   torch.cuda.MemPool over ProcessGroupNCCL's allocator
                   (ncclMemAlloc/ncclMemFree) — on a GPU without multicast,
                   which PyTorch's refuses, over --allocator (capi/testdata/ncclalloc.c)
                   — registered with the communicator (register_mem_pool:
                   ncclCommRegister);
  --mode fsdp2     FSDP2 (fully_shard per layer), all-gathers and
                   reduce-scatters on streams of their own, its
                   communication buffers from the process group's
                   allocator where the GPU has multicast
                   (set_allocate_memory_from_process_group_for_comm);
  --mode graphs    all-reduces (one-shot, two-shot and ring sizes),
                   all-gather, reduce-scatter and broadcast captured in one
                   torch.cuda.graph and replayed with new inputs, every
                   element checked against host-computed values.

The training modes write each step's loss to a CSV (compare.py compares two);
graphs prints "graphs: OK" or exits non-zero.

    torchrun --nproc_per_node 2 mempool_graphs.py --mode ddp --backend gloo --out gloo.csv
    LD_PRELOAD=build/lib/libnccl.so.2 torchrun --nproc_per_node 2 mempool_graphs.py --mode ddp-pool --out pool.csv
    python3 compare.py gloo.csv pool.csv --rtol 1e-5
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ddp_train import TinyLM, init_rank, run_steps  # noqa: E402


def nccl_backend():
    return dist.distributed_c10d._get_default_group()._get_backend(torch.device("cuda"))


def train(args, rank, world, dev):
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = TinyLM(dim=128, layers=2).to(dev)
    if args.mode == "ddp-pool":
        backend = nccl_backend()
        if backend.supports_tensor_alloc(dev):
            allocator = backend.mem_allocator
        else:  # PyTorch's NCCL allocator wants multicast: the same calls through a pluggable one
            so = args.allocator or sys.exit("this GPU has no multicast: --allocator libncclalloc.so (capi/testdata/ncclalloc.c)")
            allocator = torch.cuda.memory.CUDAPluggableAllocator(so, "ncclalloc_alloc", "ncclalloc_free").allocator()
            print(f"rank {rank}: no multicast, ncclMemAlloc through {os.path.basename(so)}")
        pool = torch.cuda.MemPool(allocator)
        with torch.cuda.use_mem_pool(pool):  # DDP's buckets come from ncclMemAlloc
            model = nn.parallel.DistributedDataParallel(model, device_ids=[dev.index], bucket_cap_mb=1)
        backend.register_mem_pool(pool)
        pooled = pool.snapshot()
        if not pooled:
            sys.exit(f"rank {rank}: the NCCL memory pool holds no segment")
        print(f"rank {rank}: {len(pooled)} segments, {sum(s['total_size'] for s in pooled)} bytes in the NCCL pool, registered")
    elif args.mode == "fsdp2":
        from torch.distributed.fsdp import fully_shard

        for layer in model.body.layers:
            fully_shard(layer)
        fully_shard(model)
        if nccl_backend().supports_tensor_alloc(dev):  # wants multicast, as mem_allocator
            model.set_allocate_memory_from_process_group_for_comm(True)
        elif rank == 0:
            print("fsdp2: no multicast, communication buffers from PyTorch's allocator")
    else:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[dev.index], bucket_cap_mb=1)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    run_steps(model, opt, dev, rank, world, args.steps, 8, 64, args.out, args.mode)


def graphs(args, rank, world, dev):
    sizes = (1024, 256 << 10, 2 << 20)  # floats: one shot, two shots, the ring (ringo's defaults)
    ar = [torch.zeros(n, device=dev) for n in sizes]
    ag_in, ag_out = torch.zeros(4099, device=dev), torch.zeros(4099 * world, device=dev)
    rs_in, rs_out = torch.zeros(4099 * world, device=dev), torch.zeros(4099, device=dev)
    bc = torch.zeros(65537, device=dev)

    def ops():
        for t in ar:
            dist.all_reduce(t)
        dist.all_gather_into_tensor(ag_out, ag_in)
        dist.reduce_scatter_tensor(rs_out, rs_in)
        dist.broadcast(bc, src=world - 1)

    def val(r, it, n):  # small integers: every sum is exact in float32
        return (torch.arange(n, device=dev) % 7) + r + it

    def fill(it):
        for t in ar:
            t.copy_(val(rank, it, t.numel()))
        ag_in.copy_(val(rank, it, ag_in.numel()))
        rs_in.copy_(val(rank, it, rs_in.numel()))
        bc.copy_(val(rank, it, bc.numel()))

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture, as torch.cuda.graphs asks
        fill(0)
        ops()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        ops()
    bad = 0
    for it in range(1, args.steps + 1):
        fill(it)
        g.replay()
        torch.cuda.synchronize()
        want = {}
        for t in ar:
            n = t.numel()
            want[f"all_reduce {n}"] = (t, sum(val(q, it, n) for q in range(world)))
        want["all_gather"] = (ag_out, torch.cat([val(q, it, ag_in.numel()) for q in range(world)]))
        full = sum(val(q, it, rs_in.numel()) for q in range(world))
        want["reduce_scatter"] = (rs_out, full[rank * rs_out.numel():(rank + 1) * rs_out.numel()])
        want["broadcast"] = (bc, val(world - 1, it, bc.numel()))
        for what, (got, exp) in want.items():
            if not torch.equal(got, exp.to(got.dtype)):
                i = int((got != exp).nonzero()[0])
                print(f"rank {rank}, replay {it}, {what}: element {i} = {got[i].item()}, want {exp[i].item()}")
                bad += 1
    if bad:
        sys.exit(f"rank {rank}: {bad} wrong results in {args.steps} replays")
    if rank == 0:
        print(f"graphs: OK ({args.steps} replays of {len(ar) + 3} collectives, {world} ranks)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", required=True, choices=("ddp", "ddp-pool", "fsdp2", "graphs"))
    ap.add_argument("--backend", default="nccl", choices=("nccl", "gloo"))
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--out", default="losses.csv")
    ap.add_argument("--allocator", help="libncclalloc.so, for ddp-pool where PyTorch's NCCL allocator is refused")
    args = ap.parse_args()
    if args.backend == "gloo" and args.mode != "ddp":
        sys.exit("Gloo runs the ddp reference only")

    rank, world, dev = init_rank(args.backend)
    if args.mode == "graphs":
        graphs(args, rank, world, dev)
    else:
        train(args, rank, world, dev)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
