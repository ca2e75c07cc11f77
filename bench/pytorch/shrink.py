"""A data-parallel training job of 4 ranks that loses one to kill -9,
carries on with 3, and takes a replacement back to 4 (issue 21): the
survivors catch the error, shrink the process group, re-shard the data and
train on; a few steps later a new process joins through ncclCommGrow and
the 4 train to the end. Rank 0 prints the loss of every step and both
recovery times.

    LD_PRELOAD=build/lib/libnccl.so.2 python3 shrink.py [--seed 1] [--steps 200]

How it works, and why:

- The ranks are started here (the launcher), with torchrun's environment
  (RANK, WORLD_SIZE, LOCAL_RANK), not by torchrun: torchrun's agent stops
  every worker once one has died (fault.py says the same), which would end
  the survivors before they could shrink. The launcher also holds the
  TCPStore, so that no rank's death takes the store with it, and starts the
  replacement once the victim is gone.
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
- A survivor's all-reduce at the kill step can end without an error when
  its kernels stop before PyTorch reads the loss (ringo stops them once
  ncclCommGetAsyncError has reported it, or a second later, where NCCL
  would wait for an abort); that survivor fails one step later. So after
  the shrink the survivors agree on the earliest failed step (an
  all-reduce MIN) and go on from it with the weights they kept from before
  it, as a job restarting from its last good state does.
- The shrink is torch.distributed.shrink_group([victim], shrink_flags=
  NCCL_SHRINK_ABORT): PyTorch 2.11's NCCL process group implements it with
  ncclCommShrink, and then waits for the parent's ncclCommGetAsyncError to
  say ncclSuccess (NCCL clears the parent's abort flags after the shrink;
  ringo reports a shrunk parent's state as ncclSuccess too).
- The grow: PyTorch 2.11 has no grow, and its libtorch does not import
  ncclCommGrow, so the job calls NCCL 2.29's C API through ctypes on the
  library the process loaded (ringo's, under LD_PRELOAD). Rank 0 of the
  shrunk group takes a unique ID from its communicator
  (ncclCommGetUniqueId, on the communicator PyTorch's process group holds)
  and puts it in the store with the step; the survivors call ncclCommGrow
  with their communicator and keep their ranks, the replacement calls it
  with NULL, the ID and rank 3. The grown communicator is not a PyTorch
  process group, so from there the job all-reduces the gradients with
  ncclAllReduce on the tensors' memory and the current stream, after rank
  0 broadcasts the weights to the newcomer (ncclBroadcast). A library
  without ncclCommGrow (NCCL before 2.29) skips the grow, said in a line.
- With TORCH_NCCL_USE_COMM_NONBLOCKING=1 PyTorch makes its communicators
  non-blocking, and so are those grown from them: the ctypes calls then
  wait out ncclInProgress on the new communicator's ncclCommGetAsyncError.
- Every rank's device is LOCAL_RANK modulo the GPUs it sees: on one GPU the
  4 ranks share it, which ringo allows and NCCL refuses ("Duplicate GPU").

The model is a linear regression on synthetic data (seeded), its
parameters replicated; each step a rank takes its shard's batch, computes
the gradient, all-reduces it and averages. Rank 0 prints "step S ranks N
loss L" for every step, "recovered in T ms" (from the kill, which the
victim notes in the store, to the first all-reduce on the shrunk group,
with its phases), "grown in T ms" (from its grow call to the first
all-reduce of the 4; the replacement prints its own, and how long its
ncclCommGrow took) and "done": the launcher checks
that every step was printed, that the loss at the end is below the loss at
the start and below the loss before the grow, that the last steps ran on 4
ranks (unless the library has no grow), and that every rank but the victim
ended cleanly.
"""
import argparse
import ctypes
import faulthandler
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
NCCL_FLOAT32, NCCL_SUM = 7, 0  # nccl.h's ncclFloat32 and ncclSum


def plan(seed, steps):
    """The victim, the step it dies at and the step of the grow, from the seed."""
    rng = random.Random(seed)
    victim, kill = rng.randrange(1, WORLD), rng.randrange(steps // 4, steps // 2)
    return victim, kill, kill + (steps - kill) // 2


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_byte * 128)]


def nccl():
    """The C API of the libnccl.so.2 this process loaded, or None without ncclCommGrow."""
    lib = ctypes.CDLL(None)
    if not hasattr(lib, "ncclCommGrow"):
        return None
    p, i, s = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    for name, args in {
        "ncclCommGetUniqueId": [p, p],
        "ncclCommGrow": [p, i, p, i, p, p],
        "ncclAllReduce": [p, p, s, i, i, p, p],
        "ncclBroadcast": [p, p, s, i, i, p, p],
        "ncclCommDestroy": [p],
        "ncclGetErrorString": [i],
        "ncclGetLastError": [p],
        "ncclCommGetAsyncError": [p, p],
    }.items():
        getattr(lib, name).argtypes = args
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    lib.ncclGetLastError.restype = ctypes.c_char_p
    return lib


NCCL_IN_PROGRESS = 7  # nccl.h's ncclInProgress


def check(lib, what, res, comm=None, timeout=60):
    """Raises on a failed call; a non-blocking communicator's ncclInProgress
    (TORCH_NCCL_USE_COMM_NONBLOCKING=1) is waited out on comm's state."""
    deadline = time.monotonic() + timeout
    while res == NCCL_IN_PROGRESS and comm is not None and time.monotonic() < deadline:
        state = ctypes.c_int(NCCL_IN_PROGRESS)
        if lib.ncclCommGetAsyncError(comm, ctypes.byref(state)) != 0:
            break
        res = state.value
        if res == NCCL_IN_PROGRESS:
            time.sleep(0.001)
    if res != 0:
        raise RuntimeError(f"{what}: {lib.ncclGetErrorString(res).decode()}: {lib.ncclGetLastError(comm).decode()}")


class Grown:
    """The grown communicator: collectives on tensors through ctypes."""

    def __init__(self, lib, comm):
        self.lib, self.comm = lib, comm

    def _stream(self):
        import torch
        return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def all_reduce(self, t):
        check(self.lib, "ncclAllReduce", self.lib.ncclAllReduce(t.data_ptr(), t.data_ptr(), t.numel(), NCCL_FLOAT32,
                                                                NCCL_SUM, self.comm, self._stream()), self.comm)

    def broadcast(self, t, root):
        check(self.lib, "ncclBroadcast", self.lib.ncclBroadcast(t.data_ptr(), t.data_ptr(), t.numel(), NCCL_FLOAT32,
                                                                root, self.comm, self._stream()), self.comm)


def timed(module, name):
    """Wraps module.name (if it exists) to add its run time to the list returned."""
    took = [0.0]
    f = getattr(module, name, None)
    if f is not None:
        def wrapper(*a, **k):
            t = time.time()
            try:
                return f(*a, **k)
            finally:
                took[0] += time.time() - t
        setattr(module, name, wrapper)
    return took


def data(seed, dev):
    import torch
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(SAMPLES, FEATURES, generator=g).to(dev)
    w_true = torch.randn(FEATURES, 1, generator=g).to(dev)
    y = x @ w_true + 0.01 * torch.randn(SAMPLES, 1, generator=g).to(dev)
    return x, y


def gradient(x, y, w, step, me, size):
    """This rank's gradient of the step's batch: sample i belongs to rank i % size."""
    import torch
    idx = torch.arange(step * BATCH, (step + 1) * BATCH, device=x.device) % SAMPLES
    idx = idx[idx % size == me]
    err = x[idx] @ w - y[idx]
    return 2 * x[idx].T @ err / BATCH


def store_for(timeout):
    import torch.distributed as dist
    return dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), WORLD, is_master=False,
                         timeout=timedelta(seconds=timeout))


def device():
    import torch
    dev = torch.device("cuda", int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    return dev


def train(args, x, y, w, step, me, size, all_reduce, grown_at=None):
    """Steps from step to the end on a communicator that does not change."""
    import torch
    while step < args.steps:
        grad = gradient(x, y, w, step, me, size)
        all_reduce(grad)
        torch.cuda.synchronize()
        if grown_at is not None and me in (0, WORLD - 1):
            who = "" if me == 0 else "replacement: "
            print(f"{who}grown in {(time.monotonic() - grown_at) * 1e3:.1f} ms: {size} ranks", flush=True)
        grown_at = None
        w -= args.lr * grad
        if me == 0:
            print(f"step {step} ranks {size} loss {torch.mean((x @ w - y) ** 2).item():.6f}", flush=True)
        step += 1


def worker(args):
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the launcher's stack dump of a hung rank
    import torch
    import torch.distributed as dist

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dev = device()
    store = store_for(300)
    dist.init_process_group("nccl", store=store, rank=rank, world_size=world, device_id=dev,
                            timeout=timedelta(seconds=60))
    victim, kill_step, grow_step = plan(args.seed, args.steps)
    x, y = data(args.seed, dev)
    w = torch.zeros(FEATURES, 1, device=dev)

    group, me, size = None, rank, world  # None: the default group
    step = 0
    before = {}  # the weights before each of the last two steps, for the rollback after a loss
    while step < args.steps:
        if rank == victim and step == kill_step:
            print(f"rank {rank}: kill -9 myself at step {step}", flush=True)
            store.set("kill/t", repr(time.time()))
            os.kill(os.getpid(), signal.SIGKILL)
        if group is not None and step == grow_step:
            break
        before = {step: w.clone(), step - 1: before.get(step - 1)}
        grad = gradient(x, y, w, step, me, size)
        try:
            dist.all_reduce(grad, group=group)
            torch.cuda.synchronize(dev)
        except Exception as e:  # the lost rank: DistBackendError, or RuntimeError on older torch
            if group is not None:
                raise  # a second loss: not what this job covers
            caught = time.time()
            print(f"rank {rank}: step {step}: caught {type(e).__name__} at t {caught:.3f}: {str(e).splitlines()[0]}", flush=True)
            if not hasattr(dist, "shrink_group"):
                sys.exit(f"rank {rank}: this torch ({torch.__version__}) has no torch.distributed.shrink_group")
            teardown = timed(dist.distributed_c10d, "_cleanup_original_group")
            group = dist.shrink_group([victim], shrink_flags=getattr(dist, "SHRINK_ABORT", 1))
            shrunk = time.time()
            me, size = dist.get_rank(group), dist.get_world_size(group)
            probe = torch.ones(1, device=dev)
            dist.all_reduce(probe, group=group)
            torch.cuda.synchronize(dev)
            if probe.item() != size:
                sys.exit(f"rank {rank}: the first all-reduce on the shrunk group gave {probe.item()}, want {size}")
            if me == 0:
                done, killed = time.time(), float(store.get("kill/t"))
                ms = lambda t: f"{t * 1e3:.1f} ms"
                print(f"recovered in {ms(done - killed)}: rank {rank} is rank {me} of {size} (the kill to the error "
                      f"{ms(caught - killed)}, shrink_group {ms(shrunk - caught)} of which the old group's teardown "
                      f"{ms(teardown[0])}, the first all-reduce {ms(done - shrunk)})", flush=True)
            # The survivors go on from the earliest step one of them failed at, with the weights from
            # before it: a survivor whose all-reduce at the kill step ended without an error (its
            # kernels stopped before PyTorch read the loss) fails one step later, its weights changed
            # by a gradient the victim never added to.
            first = torch.tensor([step], device=dev)
            dist.all_reduce(first, op=dist.ReduceOp.MIN, group=group)
            step = int(first.item())
            w = before[step].clone()
            continue  # that step again, on the shrunk group
        w -= args.lr * grad
        if me == 0:
            print(f"step {step} ranks {size} loss {torch.mean((x @ w - y) ** 2).item():.6f}", flush=True)
        step += 1

    lib = nccl() if step < args.steps else None
    if step < args.steps and lib is None:
        if me == 0:
            print("no grow: this libnccl.so.2 has no ncclCommGrow (NCCL before 2.29)", flush=True)
        store.set("grow/id", b"")  # the replacement leaves
        train(args, x, y, w, step, me, size, lambda t: dist.all_reduce(t, group=group))
    elif step < args.steps:
        print(f"rank {rank}: grow at step {step}, t {time.time():.3f}", flush=True)
        torch.cuda.synchronize(dev)
        started = time.monotonic()
        comm = ctypes.c_void_p(group._get_backend(dev)._comm_ptr())
        uid, idp = UniqueId(), None
        if me == 0:
            check(lib, "ncclCommGetUniqueId", lib.ncclCommGetUniqueId(comm, ctypes.byref(uid)), comm)
            store.set("grow/step", str(step))
            store.set("grow/id", bytes(uid.internal))
            idp = ctypes.byref(uid)
        new = ctypes.c_void_p()
        check(lib, "ncclCommGrow", lib.ncclCommGrow(comm, WORLD, idp, -1, ctypes.byref(new), None), new)
        grown = Grown(lib, new)
        grown.broadcast(w, 0)
        train(args, x, y, w, step, me, WORLD, grown.all_reduce, grown_at=started)
        check(lib, "ncclCommDestroy", lib.ncclCommDestroy(new))
    if group is not None:
        dist.destroy_process_group(group)
    if me == 0:
        print("done", flush=True)
    os._exit(0)  # the default group lost a rank: its teardown is not this job's subject


def replacement(args):
    """The new rank 3: joins the survivors' communicator through ncclCommGrow."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    import torch
    dev = device()
    store = store_for(300)
    idb = store.get("grow/id")
    if not idb:
        print("replacement: the survivors have no grow; leaving", flush=True)
        os._exit(0)
    step = int(store.get("grow/step"))
    lib = nccl()
    uid = UniqueId.from_buffer_copy(idb)
    new = ctypes.c_void_p()
    called, started = time.time(), time.monotonic()
    check(lib, "ncclCommGrow", lib.ncclCommGrow(None, WORLD, ctypes.byref(uid), WORLD - 1, ctypes.byref(new), None), new)
    print(f"replacement: rank {WORLD - 1} of {WORLD} from step {step}: ncclCommGrow called at t {called:.3f}, "
          f"took {(time.monotonic() - started) * 1e3:.1f} ms", flush=True)
    x, y = data(args.seed, dev)
    w = torch.zeros(FEATURES, 1, device=dev)
    grown = Grown(lib, new)
    grown.broadcast(w, 0)
    train(args, x, y, w, step, WORLD - 1, WORLD, grown.all_reduce, grown_at=started)
    check(lib, "ncclCommDestroy", lib.ncclCommDestroy(new))
    print("replacement: done", flush=True)
    os._exit(0)


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
    if "GROW_WORKER" in os.environ:
        replacement(args)
        return
    import torch.distributed as dist

    store = dist.TCPStore("127.0.0.1", 0, WORLD + 1, is_master=True, wait_for_workers=False)
    victim, kill_step, grow_step = plan(args.seed, args.steps)
    print(f"seed {args.seed}: rank {victim} kills itself at step {kill_step}, a replacement joins at step {grow_step}",
          flush=True)

    def start(rank, role):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(store.port), WORLD_SIZE=str(WORLD),
                   RANK=str(rank), LOCAL_RANK=str(rank), TORCH_NCCL_BLOCKING_WAIT="1",
                   TORCH_NCCL_ASYNC_ERROR_HANDLING="0", **{role: "1"})
        return subprocess.Popen([sys.executable, __file__] + sys.argv[1:], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)

    procs = [start(r, "SHRINK_WORKER") for r in range(WORLD)]
    deadline = time.monotonic() + args.timeout
    status = 0
    try:
        procs[victim].wait(timeout=max(1, deadline - time.monotonic()))
        procs.append(start(victim, "GROW_WORKER"))
    except subprocess.TimeoutExpired:
        print(f"FAIL: the victim, rank {victim}, did not die")
        status = 1
    losses, sizes = {}, {}  # by step
    for r, p in enumerate(procs):
        name = f"rank {r}" if r < WORLD else "the replacement"
        try:
            out, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGUSR1)  # faulthandler: every thread's Python stack, into its output
            time.sleep(1)
            p.kill()
            out, _ = p.communicate()
            print(f"FAIL: {name} hung past {args.timeout} s (its stacks dumped, then killed)")
            status = 1
        for line in out.splitlines():
            print(f"[{r}] {line}")
            if line.startswith("step "):  # a step redone after the rollback counts once, as last printed
                f = line.split()
                losses[int(f[1])], sizes[int(f[1])] = float(f[-1]), int(f[3])
        if r != victim and p.returncode != 0:
            print(f"FAIL: {name} exited with status {p.returncode}")
            status = 1
    losses, sizes = [losses[s] for s in sorted(losses)], [sizes[s] for s in sorted(sizes)]
    grew = WORLD in sizes[grow_step:]
    if len(losses) != args.steps:
        print(f"FAIL: {len(losses)} steps printed, want {args.steps}")
        status = 1
    elif not losses[-1] < losses[0]:
        print(f"FAIL: the loss did not fall: {losses[0]} at the start, {losses[-1]} at the end")
        status = 1
    elif grew and (sizes[-1] != WORLD or not losses[-1] <= losses[grow_step - 1]):
        print(f"FAIL: after the grow: {sizes[-1]} ranks at the end, loss {losses[grow_step - 1]} before, {losses[-1]} at the end")
        status = 1
    print(f"grow: {'yes' if grew else 'no'}")
    print("OK" if status == 0 else "FAIL")
    sys.exit(status)


if __name__ == "__main__":
    main()
