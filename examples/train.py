#!/usr/bin/env python3
"""A data-parallel training loop in Python that drives the CUDA driver and
NCCL through ctypes, as torch's C++ does: what ncclwatch sees of a PyTorch
job, without PyTorch. Runs on real GPUs or on ncclwatch's simulation
(tests/sim: LD_LIBRARY_PATH=build/sim). Debian 12's torchrun (torch 1.13 on
Python 3.11) needs --redirects 1 --tee 1: it crashes with 0, its default
(examples/torchrun.sh adds them).

Per step: a batch from the data-loader thread, then train_step(): a forward
pass (host arithmetic), sync_gradients() (AllReduce of the gradients, sum,
then divide by the number of ranks, checked), and every --bcast-every steps
broadcast_weights() from rank 0; with --pipeline a send/recv ring on a
communicator split from the world. A checkpoint thread wakes up every few
steps and "saves" the weights under a lock.

Ranks come from torchrun (RANK, WORLD_SIZE, LOCAL_RANK), mpirun
(OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK) or srun (SLURM_PROCID, SLURM_NTASKS,
SLURM_LOCALID); rank 0 publishes the ncclUniqueId in a rendezvous directory
(--rendezvous, default as examples/trainer: $NCCLSIM_DIR, $TMPDIR or /tmp,
trainer-rendezvous-UID-KEY, KEY from the launcher).

    torchrun --nproc_per_node 4 --redirects 1 --tee 1 examples/train.py --steps 50
    examples/torchrun.sh --nproc 4 -- examples/train.py --fault skip:rank=2:step=5
    mpirun -np 4 python3 examples/train.py

--fault KIND:rank=R:step=S[:ms=M], as examples/trainer's, plus two of
Python's own:
    skip    R runs run_evaluation() instead of step S's all-reduce, forever
    count   R's all-reduce at step S has a different count
    dtype   R's all-reduce at step S is float16
    order   at step S (a broadcast step) R broadcasts before it all-reduces
    sleep   R sleeps ms=M before step S's all-reduce
    p2p     R sends to the wrong peer in step S's ring (implies --pipeline)
    noinit  R never creates the communicator and idles
    crash   R kills itself with SIGKILL at step S
    exit    R leaves with exit status 0 at step S
    compile R (rank=all: every rank) stalls in compile_step() after init,
            forever or ms=M
    lock    R's main thread waits at step S for the checkpoint lock, which
            the checkpoint thread holds forever
    gil     R's main thread holds the GIL forever at step S (a C call
            through ctypes.PyDLL that never returns)
Exit status: 0 ok, 1 setup, 2 usage, 3 wrong result, 4 NCCL error,
5 CUDA error.
"""
import argparse
import ctypes
import os
import queue
import signal
import sys
import threading
import time

EXIT_SETUP, EXIT_USAGE, EXIT_WRONG, EXIT_NCCL, EXIT_CUDA = 1, 2, 3, 4, 5
NCCL_FLOAT16, NCCL_FLOAT32, NCCL_SUM = 6, 7, 0


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


def launcher_ranks():
    for r, s, l in (("RANK", "WORLD_SIZE", "LOCAL_RANK"),
                    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
                    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
                    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID")):
        if r in os.environ and s in os.environ:
            return int(os.environ[r]), int(os.environ[s]), int(os.environ.get(l, "0"))
    return 0, 1, 0


def job_key():
    run = os.environ.get("TORCHELASTIC_RUN_ID")
    if not run or run == "none":
        run = os.environ.get("SLURM_JOB_ID")
    if run and len(run) < 40:
        key = "job-" + run
    elif (os.environ.get("GROUP_WORLD_SIZE", "1") != "1" and os.environ.get("MASTER_ADDR")
          and os.environ.get("MASTER_PORT")):
        key = "torchrun-%.30s-%.8s" % (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"])
    else:
        key = "ppid-%d" % os.getppid()
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in key)


def rendezvous(directory, rank, nccl):
    path = os.path.join(directory, "ncclUniqueId")
    uid = UniqueId()
    if rank == 0:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        check_nccl(nccl.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
        tmp = os.path.join(directory, ".ncclUniqueId.%d.tmp" % os.getpid())
        with open(tmp, "wb") as f:
            f.write(bytes(uid))
        os.rename(tmp, path)
        return uid
    while True:
        try:
            with open(path, "rb") as f:
                data = f.read()
            ctypes.memmove(ctypes.byref(uid), data, 128)
            return uid
        except FileNotFoundError:
            time.sleep(0.02)


def check_nccl(res, what):
    if res != 0:
        print("train.py: %s failed: NCCL error %d" % (what, res), file=sys.stderr, flush=True)
        sys.exit(EXIT_NCCL)


def check_cuda(res, what):
    if res != 0:
        print("train.py: %s failed: CUDA error %d" % (what, res), file=sys.stderr, flush=True)
        sys.exit(EXIT_CUDA)


def load_library(name):
    """The driver or NCCL; one line saying where to find them when not."""
    try:
        return ctypes.CDLL(name)
    except OSError as e:
        sim = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "sim"))
        print("train.py: %s (no GPU driver or NCCL here? ncclwatch's simulation of both: "
              "LD_LIBRARY_PATH=%s, after make)" % (e, sim), file=sys.stderr, flush=True)
        sys.exit(EXIT_SETUP)


class Trainer:
    def __init__(self, args, rank, size, local):
        self.args, self.rank, self.size, self.local = args, rank, size, local
        self.cuda = load_library("libcuda.so.1")
        self.nccl = load_library("libnccl.so.2")
        self.count = args.count
        self.checkpoint_lock = threading.Lock()
        self.save_now = threading.Event()    # ask the checkpoint thread for a save
        self.saving = threading.Event()      # it holds the lock, saving
        self.weights = [0.0] * self.count

    def setup_device(self):
        cu = self.cuda
        check_cuda(cu.cuInit(0), "cuInit")
        self.device = ctypes.c_int()
        check_cuda(cu.cuDeviceGet(ctypes.byref(self.device), 0), "cuDeviceGet")
        self.context = ctypes.c_void_p()
        check_cuda(cu.cuDevicePrimaryCtxRetain(ctypes.byref(self.context), self.device), "cuDevicePrimaryCtxRetain")
        check_cuda(cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        self.stream = ctypes.c_void_p()
        check_cuda(cu.cuStreamCreate(ctypes.byref(self.stream), 0), "cuStreamCreate")
        self.buffers = {}
        for name in ("gradients", "weights", "act_out", "act_in"):
            ptr = ctypes.c_uint64()
            check_cuda(cu.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(self.count * 4)), "cuMemAlloc")
            self.buffers[name] = ptr.value

    def init_comms(self, uid):
        self.world = ctypes.c_void_p()
        check_nccl(self.nccl.ncclCommInitRank(ctypes.byref(self.world), self.size, uid, self.rank),
                   "ncclCommInitRank")
        self.pipeline = None
        if self.args.pipeline:
            self.pipeline = ctypes.c_void_p()
            check_nccl(self.nccl.ncclCommSplit(self.world, 0, self.rank, ctypes.byref(self.pipeline), None),
                       "ncclCommSplit")

    def upload(self, name, values):
        host = (ctypes.c_float * len(values))(*values)
        check_cuda(self.cuda.cuMemcpyHtoD_v2(ctypes.c_uint64(self.buffers[name]), host,
                                             ctypes.c_size_t(len(values) * 4)), "cuMemcpyHtoD")

    def download(self, name, n):
        host = (ctypes.c_float * n)()
        check_cuda(self.cuda.cuMemcpyDtoH_v2(host, ctypes.c_uint64(self.buffers[name]),
                                             ctypes.c_size_t(n * 4)), "cuMemcpyDtoH")
        return list(host)

    def synchronize(self):
        check_cuda(self.cuda.cuStreamSynchronize(self.stream), "cuStreamSynchronize")

    # ---- the collectives, each from its own function (their call sites) ----

    def sync_gradients(self, count, dtype=NCCL_FLOAT32):
        buf = ctypes.c_void_p(self.buffers["gradients"])
        check_nccl(self.nccl.ncclAllReduce(buf, buf, ctypes.c_size_t(count), dtype, NCCL_SUM,
                                           self.world, self.stream), "ncclAllReduce")

    def broadcast_weights(self):
        buf = ctypes.c_void_p(self.buffers["weights"])
        check_nccl(self.nccl.ncclBroadcast(buf, buf, ctypes.c_size_t(self.count), NCCL_FLOAT32, 0,
                                           self.world, self.stream), "ncclBroadcast")

    def pass_activations(self, wrong_peer):
        n = self.size
        nxt, prev = (self.rank + 1) % n, (self.rank - 1) % n
        if wrong_peer:
            nxt = (self.rank + 2) % n
        out = ctypes.c_void_p(self.buffers["act_out"])
        inn = ctypes.c_void_p(self.buffers["act_in"])
        self.nccl.ncclGroupStart()
        check_nccl(self.nccl.ncclSend(out, ctypes.c_size_t(self.count), NCCL_FLOAT32, nxt,
                                      self.pipeline, self.stream), "ncclSend")
        check_nccl(self.nccl.ncclRecv(inn, ctypes.c_size_t(self.count), NCCL_FLOAT32, prev,
                                      self.pipeline, self.stream), "ncclRecv")
        check_nccl(self.nccl.ncclGroupEnd(), "ncclGroupEnd")

    # ---- the step ----

    def forward(self, batch, step):
        return [float((self.rank + 1) * (step + 1) + (i % 7)) for i in range(self.count)]

    def run_evaluation(self):
        """The skip fault: an evaluation that never ends on one rank."""
        while True:
            time.sleep(0.2)

    def wait_for_checkpoint(self):
        """The lock fault: a save is asked for, then waited for on its lock,
        which the checkpoint thread never gives back."""
        self.save_now.set()
        self.saving.wait()
        with self.checkpoint_lock:
            pass

    def hold_gil_forever(self):
        """The gil fault: a C call that never returns, made with the GIL held."""
        libc = ctypes.PyDLL(None)
        while True:
            libc.sleep(3600)

    def train_step(self, step, batch, fault):
        grads = self.forward(batch, step)
        count = self.count
        dtype = NCCL_FLOAT32
        mine = fault.applies(self.rank, step)
        if mine and fault.kind == "skip":
            self.run_evaluation()
        if mine and fault.kind == "sleep":
            time.sleep(fault.ms / 1000.0)
        if mine and fault.kind == "count":
            count = max(1, count // 2)
        if mine and fault.kind == "dtype":
            dtype = NCCL_FLOAT16
        if mine and fault.kind == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        if mine and fault.kind == "exit":
            print("rank %d exits at step %d" % (self.rank, step), flush=True)
            os._exit(0)
        if mine and fault.kind == "lock":
            self.wait_for_checkpoint()
        if mine and fault.kind == "gil":
            self.hold_gil_forever()
        bcast = self.args.bcast_every and step % self.args.bcast_every == 0
        if bcast and mine and fault.kind == "order":
            self.broadcast_weights()
        self.upload("gradients", grads)
        self.sync_gradients(count, dtype)
        if bcast and not (mine and fault.kind == "order"):
            self.broadcast_weights()
        if self.pipeline is not None:
            self.pass_activations(mine and fault.kind == "p2p")
        self.synchronize()
        got = self.download("gradients", min(count, self.count))
        for i in range(min(count, 8)):
            want = sum((r + 1) * (step + 1) + (i % 7) for r in range(self.size))
            if abs(got[i] - want) > 1e-3 * abs(want):
                print("rank %d step %d: element %d is %g, expected %g" % (self.rank, step, i, got[i], want),
                      file=sys.stderr, flush=True)
                sys.exit(EXIT_WRONG)


class Fault:
    def __init__(self, spec):
        self.kind, self.rank, self.step, self.ms = "none", -1, -1, 0
        self.all = False
        if not spec:
            return
        parts = spec.split(":")
        self.kind = parts[0]
        kinds = ("skip", "count", "dtype", "order", "sleep", "p2p", "noinit", "crash", "exit",
                 "compile", "lock", "gil")
        if self.kind not in kinds:
            usage("unknown fault kind %r" % self.kind)
        for p in parts[1:]:
            k, _, v = p.partition("=")
            if k == "rank" and v == "all":
                self.all = True
            elif k in ("rank", "step", "ms") and v.isdigit():
                setattr(self, k, int(v))
            else:
                usage("bad fault field %r" % p)

    def applies(self, rank, step):
        return self.kind != "none" and (self.all or self.rank == rank) and (self.step == step or self.step < 0)


def usage(msg):
    print("train.py: %s (try --help)" % msg, file=sys.stderr)
    sys.exit(EXIT_USAGE)


def data_loader(batches, stop, count):
    """The data-loader thread: batches into a bounded queue."""
    n = 0
    while not stop.is_set():
        batch = [float(n % 13)] * 4
        while not stop.is_set():
            try:
                batches.put(batch, timeout=0.1)
                break
            except queue.Full:
                continue
        n += 1


def checkpoint_loop(trainer, stop, fault):
    """The checkpoint thread: every half second, or when asked, 'saves'
    under the lock."""
    # Its own count of saves, in its Thread's __dict__ (made a real dict,
    # as vars() does: ncclwatch reads the thread's name from either kind).
    vars(threading.current_thread()).setdefault("saves", 0)
    while not stop.is_set():
        asked = trainer.save_now.wait(0.5)
        trainer.save_now.clear()
        with trainer.checkpoint_lock:
            trainer.saving.set()
            if asked and fault.kind == "lock":
                write_checkpoint_forever()
            trainer.saved = list(trainer.weights[:4])
            vars(threading.current_thread())["saves"] += 1


def write_checkpoint_forever():
    """The lock fault: a save that never ends, the lock held."""
    while True:
        time.sleep(0.2)


def compile_step(fault):
    """The compile fault: like a JIT compile that never ends."""
    deadline = time.monotonic() + fault.ms / 1000.0 if fault.ms else None
    while deadline is None or time.monotonic() < deadline:
        time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--count", type=int, default=1024)
    ap.add_argument("--bcast-every", type=int, default=10)
    ap.add_argument("--pipeline", action="store_true")
    ap.add_argument("--rendezvous")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--fault", default="")
    args = ap.parse_args()
    fault = Fault(args.fault)
    if fault.kind == "p2p":
        args.pipeline = True
    rank, size, local = launcher_ranks()
    base = os.environ.get("NCCLSIM_DIR") or os.environ.get("TMPDIR") or "/tmp"
    rdv = args.rendezvous or os.path.join(base, "trainer-rendezvous-%d-%s" % (os.getuid(), job_key()))

    trainer = Trainer(args, rank, size, local)
    stop = threading.Event()
    batches = queue.Queue(maxsize=4)
    loader = threading.Thread(target=data_loader, args=(batches, stop, args.count), daemon=True)
    saver = threading.Thread(target=checkpoint_loop, args=(trainer, stop, fault), name="checkpoint",
                             daemon=True)
    loader.start()
    saver.start()
    # Named once it runs, as frameworks rename their workers: the stacks
    # show the name of the moment they are taken.
    loader.name = "data-loader"
    trainer.setup_device()
    if fault.kind == "noinit" and (fault.all or fault.rank == rank):
        while True:
            time.sleep(0.2)
    uid = rendezvous(rdv, rank, trainer.nccl)
    trainer.init_comms(uid)
    if fault.kind == "compile" and (fault.all or fault.rank == rank):
        compile_step(fault)
    for step in range(args.steps):
        batch = batches.get()
        trainer.train_step(step, batch, fault)
        if args.verbose:
            print("rank %d step %d done" % (rank, step), flush=True)
    stop.set()
    nccl = trainer.nccl
    for comm in (trainer.pipeline, trainer.world):
        if comm is not None:
            check_nccl(nccl.ncclCommFinalize(comm), "ncclCommFinalize")
            check_nccl(nccl.ncclCommDestroy(comm), "ncclCommDestroy")
    if rank == 0:
        try:
            os.unlink(os.path.join(rdv, "ncclUniqueId"))
        except OSError:
            pass
    print("rank %d ok steps=%d" % (rank, args.steps), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
