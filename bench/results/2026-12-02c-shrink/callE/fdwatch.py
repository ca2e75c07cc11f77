"""Diagnostic (not part of ringo): every 10 ms, for each shrink.py worker process, its count of socket fds,
threads and child processes; prints a line whenever one changes, with the time."""
import os, sys, time
end = time.time() + float(sys.argv[1])
last = {}
while time.time() < end:
    now = time.time()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            env = open(f"/proc/{pid}/environ", "rb").read()
            if b"SHRINK_WORKER=1" not in env and b"GROW_WORKER=1" not in env:
                continue
            rank = [e for e in env.split(b"\0") if e.startswith(b"RANK=")][0][5:].decode()
            socks = sum(1 for f in os.listdir(f"/proc/{pid}/fd") if os.readlink(f"/proc/{pid}/fd/{f}").startswith("socket:"))
            threads = len(os.listdir(f"/proc/{pid}/task"))
            kids = []
            for t in os.listdir(f"/proc/{pid}/task"):
                try:
                    kids += open(f"/proc/{pid}/task/{t}/children").read().split()
                except OSError:
                    pass
            kidnames = ",".join(sorted(open(f"/proc/{k}/comm").read().strip() for k in kids if os.path.exists(f"/proc/{k}/comm")))
        except (OSError, IndexError):
            continue
        state = (socks, threads, kidnames)
        if last.get(pid) != state:
            print(f"{now:.3f} pid {pid} rank {rank}: {socks} sockets, {threads} threads, children [{kidnames}]", flush=True)
            last[pid] = state
    time.sleep(0.01)
