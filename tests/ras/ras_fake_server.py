#!/usr/bin/env python3
"""A fake RAS server that talks nonsense, for the client's fuzz test.

ras_fake_server.py PORTFILE SEED: listens on a free port (written to
PORTFILE), and answers each connection with the next of a seeded random
series of behaviours: random bytes, a wrong handshake, truncated or mutated
reports (JSON and text), an endless stream, silence, a slow drip, a reset.
Runs until killed.
"""
import json, os, random, socket, sys, time, threading

portfile, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)

def report(nranks=4, missing=1):
    comm = {"hash": "0x%x" % rng.getrandbits(64), "secondary_hash": "0x1:0x2", "size": nranks,
            "ranks_count": nranks - missing, "missing_ranks_count": missing, "ranks": [], "missing_ranks": []}
    for r in range(nranks - missing):
        comm["ranks"].append({"rank": r, "host": "10.0.0.1", "pid": 1000 + r, "cuda_dev": r, "nvml_dev": r,
            "status": {"init_state": 0, "async_error": 0, "finalize_called": False, "destroy_flag": False, "abort_flag": False},
            "collective_counts": {"Broadcast": 0, "Reduce": 0, "AllGather": 0, "ReduceScatter": 0, "AllReduce": 7 - (r == 1)}})
    for r in range(nranks - missing, nranks):
        comm["missing_ranks"].append({"rank": r, "host": "10.0.0.2", "pid": 2000 + r, "cuda_dev": r, "nvml_dev": r,
            "status": {"unresponsive": True, "considered_dead": False}})
    doc = {"nccl_version": "2.28.9", "cuda_runtime_version": 13000, "cuda_driver_version": 13000,
           "timestamp": "2026-11-23 23:00:00", "communicators_count": 1, "communicators": [comm],
           "ras": {"collection_time_sec": 0.001, "timeouts_count": 0}}
    return json.dumps(doc, indent=2).encode()

TEXT = (b"NCCL version 2.27.7 compiled with CUDA 12.9\nCUDA runtime version 12090, driver version 12090\n\n"
        b"Job summary\n===========\n\nCommunicators... (0.001s)\n=============\n\nErrors\n======\n\nWarnings\n========\n\n"
        b"#0-0 (0123456789abcdef) MISMATCH\n  Communicator ranks have different AllReduce operation counts\n"
        b"  3 ranks have launched up to operation 7\n"
        b"  Rank 1 has launched up to operation 6 -- GPU 1 managed by process 1001 on node 10.0.0.1\n\n")

def mutate(b):
    b = bytearray(b)
    for _ in range(rng.randint(1, 8)):
        if not b: break
        i = rng.randrange(len(b))
        op = rng.randrange(4)
        if op == 0: b[i] = rng.randrange(256)
        elif op == 1: del b[i:i + rng.randint(1, 20)]
        elif op == 2: b[i:i] = rng.choice([b"{", b"}", b"[", b"]", b'"', b",", b"-1", b"99999999999999999999999", b"\x00", b"null"])
        else: b = b[:i]
    return bytes(b)

def serve(c, kind):
    try:
        c.settimeout(5)
        hello = b"SERVER PROTOCOL 2\n"
        if kind == "random":
            c.sendall(os.urandom(rng.randint(0, 3000)))
        elif kind == "badhello":
            c.sendall(rng.choice([b"HTTP/1.1 400 Bad Request\r\n\r\n", b"SSH-2.0-OpenSSH_9.2\r\n", b"\n", b"OK\n"]))
        elif kind == "truncjson":
            r = report(rng.randint(1, 64), rng.randint(0, 1))
            c.sendall(hello + b"OK\n" + r[:rng.randrange(len(r))])
        elif kind == "mutjson":
            c.sendall(hello + b"OK\n" + mutate(report(rng.randint(1, 16), rng.randint(0, 2))))
        elif kind == "validjson":
            c.sendall(hello + b"OK\n" + report(rng.randint(1, 16), rng.randint(0, 2)))
        elif kind == "text":
            c.sendall(hello + b"ERROR: Unknown command SET FORMAT json\n" + mutate(TEXT))
        elif kind == "endless":
            c.sendall(hello + b"OK\n")
            end = time.time() + 3
            while time.time() < end:
                c.sendall(b"x" * 65536)
        elif kind == "silent":
            time.sleep(3)
        elif kind == "drip":
            data = hello + b"OK\n" + report(2, 0)
            for i in range(0, len(data), 7):
                c.sendall(data[i:i + 7])
                time.sleep(0.002)
        elif kind == "longline":
            c.sendall(b"SERVER PROTOCOL " + b"9" * 100000)
        elif kind == "reset":
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    except OSError:
        pass
    finally:
        try: c.close()
        except OSError: pass

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
kinds = ["random"] * 4 + ["badhello"] * 2 + ["truncjson"] * 4 + ["mutjson"] * 6 + ["validjson"] * 2 + ["text"] * 3 + \
        ["endless", "silent", "drip", "longline", "reset"]
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c, rng.choice(kinds)), daemon=True).start()
