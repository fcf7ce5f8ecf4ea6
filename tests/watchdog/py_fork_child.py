"""A Python fork child that ends from a thread: a thread of the parent
forks; the child's only thread is that thread, so when it returns from its
function the child's main thread is gone without exit().

    py_fork_child.py          the child makes NCCL calls through ctypes (on
                              the simulation, NCCLSIM_NULL=1) and returns:
                              its last thread ends, glibc ends the child
                              with status 0
    py_fork_child.py stall    the child starts a thread that enters
                              ncclCommInitRank as rank 0 of 2 (the full
                              simulation: it never completes), prints
                              "child main gone" and returns: the process
                              goes on without its main thread
The parent's thread waits for the child and prints "child PID status S"."""
import ctypes
import os
import sys
import threading

NCCL_FLOAT32, NCCL_SUM = 7, 0


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


def child_work():
    nccl = ctypes.CDLL("libnccl.so.2")
    comm = ctypes.c_void_p()
    assert nccl.ncclCommInitAll(ctypes.byref(comm), 1, None) == 0
    buf = (ctypes.c_float * 4)()
    for i in range(3):
        assert nccl.ncclAllReduce(buf, buf, ctypes.c_size_t(i + 1), NCCL_FLOAT32, NCCL_SUM, comm, None) == 0
    assert nccl.ncclCommDestroy(comm) == 0
    print("child %d done" % os.getpid(), flush=True)


def stuck_in_init():
    nccl = ctypes.CDLL("libnccl.so.2")
    uid = UniqueId()
    assert nccl.ncclGetUniqueId(ctypes.byref(uid)) == 0
    comm = ctypes.c_void_p()
    nccl.ncclCommInitRank(ctypes.byref(comm), 2, uid, 0)


def forker(stall):
    pid = os.fork()
    if pid == 0:
        if stall:
            threading.Thread(target=stuck_in_init, name="stuck").start()
            print("child main gone", flush=True)
        else:
            child_work()
        return                  # the child's main thread ends here
    _, status = os.waitpid(pid, 0)
    print("child %d status %d" % (pid, status), flush=True)


t = threading.Thread(target=forker, args=(sys.argv[1:] == ["stall"],))
t.start()
t.join()
