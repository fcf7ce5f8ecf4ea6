"""py_calls: ns per ncclAllReduce made from Python through ctypes, for
`make bench` (tests/bench/pystack.sh): the simulated NCCL in null mode
(NCCLSIM_NULL=1), one communicator of one rank, CALLS calls, REPEATS
repeats; prints the median ns per call. Run with and without the preload,
and with NCCLWATCH_PY_FRAMES=4 and 0: the differences are what the
recording, and the per-op Python call site, add to a Python caller.

usage: python3 py_calls.py CALLS REPEATS"""
import ctypes
import sys
import time


def main():
    calls, repeats = int(sys.argv[1]), int(sys.argv[2])
    nccl = ctypes.CDLL("libnccl.so.2")
    comm = (ctypes.c_void_p * 1)()
    if nccl.ncclCommInitAll(comm, 1, None) != 0:
        sys.exit(1)
    buf = (ctypes.c_float * 4)()
    allreduce = nccl.ncclAllReduce
    c = ctypes.c_void_p(comm[0])
    four = ctypes.c_size_t(4)

    def inner():
        # a few Python frames deep, as a training step would be
        for _ in range(calls):
            allreduce(buf, buf, four, 7, 0, c, None)

    def middle():
        inner()

    results = []
    for r in range(repeats + 1):
        t = time.perf_counter_ns()
        middle()
        if r:
            results.append((time.perf_counter_ns() - t) / calls)
    results.sort()
    print("%.1f" % results[len(results) // 2])


if __name__ == "__main__":
    main()
