"""Calls PyTorch's point-to-point operations and the collectives made of
them — send/recv, isend/irecv, batch_isend_irecv, all_to_all_single with
equal and unequal splits, all_to_all, gather, scatter — and checks every
result against values computed on the host. Every check runs on every rank;
rank 0 prints OK or FAIL once all ranks have told theirs (a MIN all-reduce),
then a summary line; the exit status is non-zero when any failed. Ranks
beyond the GPUs share them (rank r on GPU r mod the GPU count), which NCCL
refuses and ringo accepts.

    torchrun --nproc_per_node 2 p2p.py
    LD_PRELOAD=build/lib/libnccl.so.2 torchrun --nproc_per_node 4 p2p.py
    torchrun --nproc_per_node 2 p2p.py --backend gloo --device cpu   # the checks alone
"""
import argparse
import os
import sys
import traceback

import torch
import torch.distributed as dist

# Element i of what rank src sends to rank dst (its tag-th message): exact
# in every type used — float32 and int64 get a pattern that tells blocks and
# positions apart, the narrow types small integers.
WIDE = (torch.float32, torch.int64, torch.float64, torch.int32)


def make(src, dst, n, dev, dtype=torch.float32, tag=0):
    i = torch.arange(n, dtype=torch.int64)
    if dtype in WIDE:
        v = src * 100000 + dst * 10000 + tag * 1000 + i % 997
    else:
        v = (src * 16 + dst * 4 + tag * 2 + i % 2) % 64
    return v.to(dtype).to(dev)


class Checks:
    def __init__(self, dev):
        self.dev, self.results = dev, []

    def run(self, name, fn):
        """Runs fn (which returns whether this rank's results are right) and
        agrees on the outcome with the other ranks."""
        rank = dist.get_rank()
        try:
            ok = bool(fn())
            if not ok:
                print(f"rank {rank}: {name}: wrong result", file=sys.stderr, flush=True)
        except Exception:
            print(f"rank {rank}: {name}:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
            ok = False
        flag = torch.tensor([1 if ok else 0], dtype=torch.int32, device=self.dev)
        dist.all_reduce(flag, op=dist.ReduceOp.MIN)
        ok = flag.item() == 1
        self.results.append((name, ok))
        if rank == 0:
            print(f"{'OK  ' if ok else 'FAIL'} {name}", flush=True)


def equal(got, want):
    return torch.equal(got.cpu(), want.cpu())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="nccl", choices=("nccl", "gloo"))
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    args = ap.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if args.device == "cuda":
        local = int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count()
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
    else:
        dev = torch.device("cpu")
    if args.backend == "nccl":
        dist.init_process_group("nccl", device_id=dev)
    else:
        dist.init_process_group("gloo")
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    checks = Checks(dev)

    def send_recv(n):
        # Blocking, in a ring: even ranks send first, odd ones receive first,
        # so that no two ranks both wait in a send.
        out = torch.empty(n, device=dev)
        x = make(rank, nxt, n, dev)
        if rank % 2 == 0:
            dist.send(x, nxt)
            dist.recv(out, prv)
        else:
            dist.recv(out, prv)
            dist.send(x, nxt)
        return equal(out, make(prv, rank, n, dev))

    for n in (1, 4099, 1 << 20):
        checks.run(f"send/recv ring {n} floats", lambda n=n: send_recv(n))

    def isend_irecv(n, dtype):
        out = torch.empty(n, device=dev, dtype=dtype)
        x = make(rank, nxt, n, dev, dtype)
        if rank % 2 == 0:
            reqs = [dist.isend(x, nxt), dist.irecv(out, prv)]
        else:
            reqs = [dist.irecv(out, prv), dist.isend(x, nxt)]
        for r in reqs:
            r.wait()
        return equal(out, make(prv, rank, n, dev, dtype))

    for dtype in (torch.float32, torch.bfloat16, torch.int8, torch.int64):
        checks.run(f"isend/irecv ring 4099 {dtype}", lambda dtype=dtype: isend_irecv(4099, dtype))

    def batch(n):
        # Both ways round the ring in one batch (one NCCL group): with two
        # ranks, two sends to the same peer, matched in order.
        x_next, x_prev = make(rank, nxt, n, dev, tag=0), make(rank, prv, n, dev, tag=1)
        a, b = torch.empty(n, device=dev), torch.empty(n, device=dev)
        ops = [
            dist.P2POp(dist.isend, x_next, nxt),
            dist.P2POp(dist.irecv, a, prv),
            dist.P2POp(dist.isend, x_prev, prv),
            dist.P2POp(dist.irecv, b, nxt),
        ]
        for r in dist.batch_isend_irecv(ops):
            r.wait()
        return equal(a, make(prv, rank, n, dev, tag=0)) and equal(b, make(nxt, rank, n, dev, tag=1))

    for n in (4099, 1 << 20):
        checks.run(f"batch_isend_irecv both ways {n} floats", lambda n=n: batch(n))

    def a2a_equal(n, dtype):
        inp = torch.cat([make(rank, p, n, dev, dtype) for p in range(world)])
        out = torch.empty(world * n, device=dev, dtype=dtype)
        dist.all_to_all_single(out, inp)
        return equal(out, torch.cat([make(p, rank, n, dev, dtype) for p in range(world)]))

    for n, dtype in ((4099, torch.float32), (1 << 18, torch.float32), (4099, torch.bfloat16), (4099, torch.int64), (4099, torch.int8)):
        checks.run(f"all_to_all_single equal splits {n} {dtype}", lambda n=n, dtype=dtype: a2a_equal(n, dtype))

    def split(src, dst):  # elements src sends dst; some are 0
        return (src + 2 * dst) % 4 * 1001

    def a2a_unequal():
        ins = [split(rank, p) for p in range(world)]
        outs = [split(p, rank) for p in range(world)]
        inp = torch.cat([make(rank, p, ins[p], dev) for p in range(world)])
        out = torch.empty(sum(outs), device=dev)
        dist.all_to_all_single(out, inp, output_split_sizes=outs, input_split_sizes=ins)
        return equal(out, torch.cat([make(p, rank, outs[p], dev) for p in range(world)]))

    checks.run("all_to_all_single unequal splits (some empty)", a2a_unequal)

    def a2a_list():
        inp = [make(rank, p, split(rank, p) + 1, dev) for p in range(world)]
        out = [torch.empty(split(p, rank) + 1, device=dev) for p in range(world)]
        dist.all_to_all(out, inp)
        return all(equal(out[p], make(p, rank, split(p, rank) + 1, dev)) for p in range(world))

    checks.run("all_to_all tensor lists of unequal sizes", a2a_list)

    def gather(n, root):
        x = make(rank, root, n, dev)
        lst = [torch.empty(n, device=dev) for _ in range(world)] if rank == root else None
        dist.gather(x, lst, dst=root)
        return rank != root or all(equal(lst[p], make(p, root, n, dev)) for p in range(world))

    def scatter(n, root):
        lst = [make(root, p, n, dev) for p in range(world)] if rank == root else None
        out = torch.empty(n, device=dev)
        dist.scatter(out, lst, src=root)
        return equal(out, make(root, rank, n, dev))

    for n in (4099, 1 << 20):
        checks.run(f"gather to rank {world - 1} {n} floats", lambda n=n: gather(n, world - 1))
        checks.run(f"scatter from rank 0 {n} floats", lambda n=n: scatter(n, 0))

    dist.destroy_process_group()
    failed = [name for name, ok in checks.results if not ok]
    if rank == 0:
        print(f"p2p.py: {len(checks.results) - len(failed)} of {len(checks.results)} checks OK on {world} ranks ({args.backend})")
        for name in failed:
            print(f"  failed: {name}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
