"""Kills one rank of a two-process PyTorch job (one GPU each) in the middle
of all-reduces and checks that the survivor ends with an error instead of
hanging, and that nothing of ringo's is left in /dev/shm. The ranks are
started here, not by torchrun, whose agent would kill the survivor itself.

    LD_PRELOAD=build/lib/libnccl.so.2 python3 fault.py [--timeout 60]

Exits 0 when the survivor failed within the timeout with nothing left
behind; 1 when it hung (it is then killed), exited cleanly, or left
segments.
"""
import argparse
import glob
import os
import signal
import socket
import subprocess
import sys
import time


def worker(rank, world, kill_step):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    t = torch.ones(1 << 20, device=dev)
    for step in range(1 << 30):
        if rank == 1 and step == kill_step:
            print(f"rank 1: kill -9 myself at step {step}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        dist.all_reduce(t)
        t.fill_(1.0)
        torch.cuda.synchronize()
        if step % 100 == 0:
            print(f"rank {rank}: step {step}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=60, help="seconds the survivor may take to fail")
    ap.add_argument("--kill-step", type=int, default=200)
    args = ap.parse_args()
    if "FAULT_RANK" in os.environ:
        worker(int(os.environ["FAULT_RANK"]), 2, args.kill_step)
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    before = set(glob.glob("/dev/shm/ringo-*"))
    procs = []
    for r in range(2):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE="2",
                   RANK=str(r), LOCAL_RANK=str(r), FAULT_RANK=str(r))
        procs.append(subprocess.Popen([sys.executable, __file__, "--kill-step", str(args.kill_step)],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    try:
        procs[1].wait(timeout=300)
    except subprocess.TimeoutExpired:
        print("FAIL rank 1 never reached its kill step")
        for p in procs:
            p.kill()
        return 1
    died = time.time()
    hung = False
    try:
        rc = procs[0].wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        hung = True
        procs[0].kill()
        rc = procs[0].wait()
    took = time.time() - died
    out = procs[0].stdout.read().splitlines()
    print("rank 1:", procs[1].stdout.read().strip().splitlines()[-1:], "exit", procs[1].returncode)
    print("rank 0, last lines:")
    for line in out[-12:]:
        print("   ", line[:300])
    left = sorted(set(glob.glob("/dev/shm/ringo-*")) - before)
    if hung:
        print(f"FAIL rank 0 still running {args.timeout:.0f} s after rank 1 died (killed)")
    elif rc == 0:
        print("FAIL rank 0 exited 0 after rank 1 died")
    elif left:
        print(f"FAIL rank 0 failed after {took:.1f} s but left {left}")
    else:
        print(f"OK   rank 0 failed {took:.1f} s after rank 1 died (exit {rc}); nothing left in /dev/shm")
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
