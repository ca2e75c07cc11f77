"""Gloo's all-reduce (PyTorch's CPU backend) timed as nccl-tests and
mpi_allreduce.c time theirs, for cpu_vs_mpi.sh's side-by-side table:

    python3 gloo_allreduce.py --np 2 [-b 8] [-e 128M] [-f 2 | -f 0 -i 1M] [-n 20] [-w 5] [-c 1]

It starts NP rank processes on this host (a TCPStore on a free loopback
port), each float32 sum all-reduce out of place (Gloo reduces in place, so
the input is copied into the output tensor first and the copy is timed
too, as an out-of-place call must make it), and rank 0 prints one row per
size in nccl-tests' format: size, count, type, redop, root, time (µs, the
ranks' mean of each rank's mean over -n calls after -w warm-ups, a barrier
before), algbw and busbw (GB/s, busbw = algbw·2(n−1)/n), #wrong (elements
of -c checked calls that differ from the exact sum, over every rank); the
in-place columns are N/A. The exit status is non-zero when any element was
wrong or a rank failed.
"""
import argparse
import os
import sys
import time

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size(s):
    s = s.strip().upper()
    if s and s[-1] in UNITS:
        return int(s[:-1]) * UNITS[s[-1]]
    return int(s)


def sizes(a):
    out, n = [], a.b
    while n <= a.e:
        out.append(n)
        n = n * a.f if a.f else n + a.i
        if n == 0:
            break
    return out


def rank_main(a, rank):
    import torch
    import torch.distributed as dist

    store = dist.TCPStore("127.0.0.1", a.port, a.np, rank == 0)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=a.np)
    n = a.np
    status = 0
    if rank == 0:
        print("# Gloo all-reduce (torch %s): %d ranks, float sum, out of place" % (torch.__version__, n))
        print("#%13s%14s%10s%8s%8s%9s%8s%8s%8s%9s%8s%8s%8s" % (
            "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"))
        print("#%13s%14s%10s%8s%8s%9s%8s%8s%8s%9s%8s%8s%8s" % (
            "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""), flush=True)
    for nbytes in sizes(a):
        count = nbytes // 4
        if count == 0:
            continue
        send = torch.arange(count, dtype=torch.float32).remainder_(7).add_(rank + 1)
        recv = torch.empty_like(send)

        def call():
            recv.copy_(send)
            dist.all_reduce(recv)

        for _ in range(a.w):
            call()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(a.n):
            call()
        sec = torch.tensor([(time.perf_counter() - t0) / a.n], dtype=torch.float64)
        dist.all_reduce(sec)
        sec = sec.item() / n
        wrong = 0
        want = torch.arange(count, dtype=torch.float32).remainder_(7).mul_(n).add_(n * (n + 1) / 2)
        for _ in range(a.c):
            recv.fill_(-1)
            call()
            wrong += int((recv != want).sum())
        w = torch.tensor([wrong], dtype=torch.int64)
        dist.all_reduce(w)
        wrong = int(w.item())
        if wrong:
            status = 1
        if rank == 0:
            algbw = nbytes / sec / 1e9
            print("%14d %13d %9s %7s %7d %8.2f %7.2f %7.2f %7s %8s %7s %7s %7s" % (
                count * 4, count, "float", "sum", -1, sec * 1e6, algbw, algbw * 2 * (n - 1) / n,
                wrong if a.c else "N/A", "N/A", "N/A", "N/A", "N/A"), flush=True)
    dist.destroy_process_group()
    return status


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("-b", type=size, default=8)
    ap.add_argument("-e", type=size, default=128 << 20)
    ap.add_argument("-f", type=int, default=2)
    ap.add_argument("-i", type=size, default=1 << 20)
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("-w", type=int, default=5)
    ap.add_argument("-c", type=int, default=1)
    ap.add_argument("--rank", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.np < 1 or a.b < 0 or a.e < a.b or a.f == 1 or a.f < 0 or (a.f == 0 and a.i <= 0) or a.n < 1:
        sys.exit("gloo_allreduce: bad flags: want --np ≥ 1, 0 ≤ -b ≤ -e, -f 0 (with -i > 0) or ≥ 2, -n ≥ 1")
    if a.rank >= 0:
        sys.exit(rank_main(a, a.rank))
    import socket
    import subprocess
    with socket.socket() as s:  # a free port for the store; rank 0 listens on it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, __file__, *sys.argv[1:], "--rank", str(r), "--port", str(port)], env=env)
             for r in range(a.np)]
    sys.exit(max(p.wait() for p in procs))


if __name__ == "__main__":
    main()
