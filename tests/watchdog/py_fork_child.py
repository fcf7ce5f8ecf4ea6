"""A Python fork child that ends from a thread: a thread of the parent
forks; the child (whose only thread is that thread) makes NCCL calls
through ctypes (on the simulation, NCCLSIM_NULL=1) and returns from the
thread's function, so its last thread ends without exit(); glibc then ends
the child with status 0. The parent's thread waits for the child and
prints "child PID status STATUS"."""
import ctypes
import os
import threading

NCCL_FLOAT32, NCCL_SUM = 7, 0


def child_work():
    nccl = ctypes.CDLL("libnccl.so.2")
    comm = ctypes.c_void_p()
    assert nccl.ncclCommInitAll(ctypes.byref(comm), 1, None) == 0
    buf = (ctypes.c_float * 4)()
    for i in range(3):
        assert nccl.ncclAllReduce(buf, buf, ctypes.c_size_t(i + 1), NCCL_FLOAT32, NCCL_SUM, comm, None) == 0
    assert nccl.ncclCommDestroy(comm) == 0
    print("child %d done" % os.getpid(), flush=True)


def forker():
    pid = os.fork()
    if pid == 0:
        child_work()
        return                  # the child's last thread ends here
    _, status = os.waitpid(pid, 0)
    print("child %d status %d" % (pid, status), flush=True)


t = threading.Thread(target=forker)
t.start()
t.join()
