#!/usr/bin/python3
"""frgen: write PyTorch Flight Recorder dumps for tests and benchmarks.

Uses only pickle and json. The layout is the one FlightRecorder::dump()
pickles (docs/flight-recorder.md): {"version", "pg_config", "comm_lib_version",
"pg_status", "entries": [...]}, one file per rank named <prefix><rank>.

usage: frgen.py SCENARIO DIR [--ranks N] [--entries N] [--json] [--version V]
                [--prefix P] [--no-frames] [--taint S]
--taint S appends S (terminal escapes, for tests/cli/test-cli-control-chars.sh)
to every process group's description, frame name and file name.
Scenarios: see SCENARIOS below (missing-rank, type-mismatch, size-mismatch,
dtype-mismatch, state-mismatch, p2p-unmatched, p2p-ok, alltoall-ok, multi-pg,
healthy, late-mismatch, transport, ...). Prints one line per scenario:
"frgen SCENARIO: expect KIND culprits=SET" (what a right answer is).
"""
import json
import os
import pickle
import sys

T0 = 1_700_000_000_000_000_000      # wall-clock ns, like c10::getTime()
STEP = 10_000_000                     # 10 ms between ops


def frames(fn, line):
    return [
        {"name": fn, "filename": "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", "line": 2696},
        {"name": "wrapper", "filename": "/usr/lib/python3/site-packages/torch/distributed/c10d_logger.py", "line": 83},
        {"name": "train_step", "filename": "/home/user/train.py", "line": line},
        {"name": "<module>", "filename": "/home/user/train.py", "line": 200},
    ]


class Rank:
    def __init__(self, rank, pgs, version, with_frames):
        self.rank = rank
        self.pgs = pgs                  # name -> (desc, ranks)
        self.version = version
        self.entries = []
        self.coll = {n: 0 for n in pgs}
        self.p2p = {n: 0 for n in pgs}
        self.t = T0
        self.with_frames = with_frames
        self.comm_lib = "2.21.5"

    def grank(self, pg):
        return self.pgs[pg][1].index(self.rank)

    def entry(self, pg, name, state, sizes, dtype, p2p=False, line=40, out_sizes=None):
        if p2p:
            self.p2p[pg] += 1
        else:
            self.coll[pg] += 1
        self.t += STEP
        e = {
            "record_id": len(self.entries),
            "pg_id": int(pg) if pg.isdigit() else 0,
            "process_group": (pg, self.pgs[pg][0]),
            "collective_seq_id": self.coll[pg],
            "p2p_seq_id": self.p2p[pg],
            "op_id": len(self.entries) + 1,
            "profiling_name": "nccl:" + name,
            "time_created_ns": self.t,
            "input_sizes": [sizes],
            "input_dtypes": [dtype],
            "output_sizes": [out_sizes if out_sizes is not None else sizes],
            "output_dtypes": [dtype],
            "state": state,
            "time_discovered_started_ns": None,
            "time_discovered_completed_ns": self.t + STEP // 2 if state == "completed" else None,
            "retired": state == "completed",
            "timeout_ms": 600000,
            "is_p2p": p2p,
        }
        if self.version >= (2, 10):
            e["thread_name"] = "pt_main_thread"
            e["thread_id"] = "140000000000000"
        if self.with_frames:
            e["frames"] = frames(name.split(" ")[0], line)
        self.entries.append(e)

    def coll_op(self, pg, name, state="completed", sizes=(1024,), dtype="Float", line=40, out_sizes=None):
        self.entry(pg, name, state, list(sizes), dtype, line=line,
                   out_sizes=list(out_sizes) if out_sizes is not None else None)

    def send(self, pg, dst, state="completed", n=256):
        self.entry(pg, "send %d->%d" % (self.grank(pg), dst), state, [n], "Float", p2p=True, line=77)

    def recv(self, pg, src, state="completed", n=256):
        self.entry(pg, "recv %d<-%d" % (self.grank(pg), src), state, [n], "Float", p2p=True, line=78)

    def dump(self):
        comm_lib = self.comm_lib
        d = {"version": "%d.%d" % self.version}
        d["pg_config"] = {n: {"name": n, "desc": desc, "ranks": str(list(r))} for n, (desc, r) in self.pgs.items()}
        if self.version >= (2, 4):
            d["comm_lib_version"] = comm_lib
        last = {}
        for e in self.entries:
            last[e["pg_id"]] = e["collective_seq_id"]
        d["pg_status"] = {str(k): {"last_enqueued_collective": v, "last_started_collective": -1,
                                   "last_completed_collective": v} for k, v in last.items()}
        d["entries"] = self.entries
        return d


TAINT = ""


def tainted(d):
    if not TAINT:
        return d
    d = dict(d)
    d["pg_config"] = {n: dict(c, desc=c["desc"] + TAINT) for n, c in d["pg_config"].items()}
    d["entries"] = [dict(e, process_group=(e["process_group"][0], e["process_group"][1] + TAINT),
                         **({"frames": [dict(f, name=f["name"] + TAINT, filename=f["filename"] + TAINT)
                                        for f in e["frames"]]} if "frames" in e else {}))
                    for e in d["entries"]]
    return d


def write(dirpath, prefix, r, d, as_json):
    d = tainted(d)
    path = os.path.join(dirpath, "%s%d" % (prefix, r))
    if as_json:
        dj = dict(d)
        dj["entries"] = [dict(e, time_discovered_started_ns=e["time_discovered_started_ns"] or 0,
                              time_discovered_completed_ns=e["time_discovered_completed_ns"] or 0)
                         for e in d["entries"]]
        for e in dj["entries"]:
            e.pop("frames", None)     # dump_json writes no frames
        with open(path, "w") as f:
            json.dump(dj, f)
    else:
        with open(path, "wb") as f:
            pickle.dump(d, f, protocol=2)


def world(n):
    return {"0": ("default_pg", list(range(n)))}


def steps(rs, k, pg="0"):
    for i in range(k):
        for r in rs:
            r.coll_op(pg, "all_reduce", line=40 + (i % 3))


# Each scenario: (ranks) -> (list of Rank or None for a missing file, expect line)
def sc_healthy(n, k):
    rs = [Rank(i, world(n), VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    return rs, "HEALTHY culprits=-"


def sc_missing_rank(n, k):
    # the last rank never calls all_reduce #k+1: the others wait in it
    rs = [Rank(i, world(n), VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    for r in rs[:-1]:
        r.coll_op("0", "all_reduce", state="scheduled", line=99)
    return rs, "MISSING_RANK culprits=%d" % (n - 1)


def sc_missing_file(n, k):
    # one rank left no dump at all: the others wait in #k+1 (torch needs every file)
    rs, _ = sc_missing_rank(n, k)
    rs[-1] = None
    return rs, "MISSING_RANK culprits=- unknown=%d" % (n - 1)


def sc_type_mismatch(n, k):
    # rank 0 (read first by torch's analyzer) is right; rank n-1 calls all_gather
    # instead of all_reduce: torch blames the ranks that differ from the first
    # rank read, which is right here; late-mismatch below is where it is not.
    rs = [Rank(i, world(n), VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    for r in rs:
        r.coll_op("0", "all_gather" if r.rank == n - 1 else "all_reduce", state="scheduled")
    return rs, "MISMATCH culprits=%d" % (n - 1)


def sc_first_rank_wrong(n, k):
    # rank 0 is the odd one out: torch's analyzer takes the first rank it reads
    # as the reference and "assumes the current rank is not the source", so it
    # reports every other rank as culprit; the minority is rank 0.
    rs = [Rank(i, world(n), VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    for r in rs:
        r.coll_op("0", "all_gather" if r.rank == 0 else "all_reduce", state="scheduled")
    return rs, "MISMATCH culprits=0"


def sc_size_mismatch(n, k):
    rs = [Rank(i, world(n), VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    for r in rs:
        r.coll_op("0", "all_reduce", state="scheduled", sizes=(2048,) if r.rank == 1 else (1024,))
    return rs, "MISMATCH culprits=1"


def sc_dtype_mismatch(n, k):
    rs = [Rank(i, world(n), VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    for r in rs:
        r.coll_op("0", "all_reduce", state="scheduled", dtype="BFloat16" if r.rank == 2 else "Float")
    return rs, "MISMATCH culprits=2"


def sc_late_mismatch(n, k):
    # a mismatch after a first problem on the same group: torch's analyzer
    # stops pairing a group after its first mismatch; the first problem here
    # is rank 1 missing all_reduce #k+1, and that is the root cause
    rs = [Rank(i, world(n), VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    for r in rs:
        if r.rank != 1:
            r.coll_op("0", "all_reduce", state="scheduled")
    return rs, "MISSING_RANK culprits=1"


def sc_state_mismatch(n, k):
    # every rank issued #k+1; rank 3 completed it, the others did not: the op
    # is stuck on the network/GPU side (all issued, not all completed)
    rs = [Rank(i, world(n), VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    for r in rs:
        r.coll_op("0", "all_reduce", state="completed" if r.rank == 3 else "scheduled")
    return rs, "TRANSPORT_STALL culprits=-"


def sc_transport(n, k):
    rs = [Rank(i, world(n), VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    for r in rs:
        r.coll_op("0", "all_reduce", state="scheduled")
    return rs, "TRANSPORT_STALL culprits=-"


def sc_p2p_ok(n, k):
    rs = [Rank(i, world(n), VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    for r in rs:
        if r.rank % 2 == 0 and r.rank + 1 < n:
            r.send("0", r.rank + 1)
        elif r.rank % 2 == 1:
            r.recv("0", r.rank - 1)
    return rs, "HEALTHY culprits=-"


def sc_p2p_unmatched(n, k):
    # rank 0 sends to rank 1, rank 1 never posts the receive (it went on to
    # an all_reduce nobody else calls)
    rs = [Rank(i, world(n), VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    rs[0].send("0", 1, state="scheduled")
    return rs, "P2P_UNMATCHED culprits=1"


def sc_alltoall_ok(n, k):
    rs = [Rank(i, world(n), VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    for r in rs:
        # uneven splits: sizes differ per rank by design
        r.coll_op("0", "all_to_all", sizes=(n * (r.rank + 1),))
    return rs, "HEALTHY culprits=-"


def sc_multi_pg(n, k):
    # two groups: even ranks and odd ranks; in the odd group, rank 1 misses #k+1
    evens = [i for i in range(n) if i % 2 == 0]
    odds = [i for i in range(n) if i % 2 == 1]
    pgs = dict(world(n))
    pgs["1"] = ("evens", evens)
    pgs["2"] = ("odds", odds)
    rs = [Rank(i, pgs, VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    for r in rs:
        g = "1" if r.rank % 2 == 0 else "2"
        for _ in range(k):
            r.coll_op(g, "all_reduce")
        if r.rank % 2 == 1 and r.rank != 1:
            r.coll_op(g, "all_reduce", state="scheduled")
    return rs, "MISSING_RANK culprits=1"


def sc_coalesced_ok(n, k):
    rs = [Rank(i, world(n), VERSION, FRAMES) for i in range(n)]
    steps(rs, k)
    for r in rs:
        # two all_reduces coalesced into one launch (same seq), closed by "coalesced"
        r.coll_op("0", "all_reduce")
        r.coll["0"] -= 1
        r.coll_op("0", "all_reduce")
        r.coll["0"] -= 1
        r.coll_op("0", "coalesced")
    return rs, "HEALTHY culprits=-"


# ---- the scenarios of torch's own analyzer tests
# (test/distributed/flight_recorder/test_fr_analysis.py), rebuilt as the
# dumps a 2-rank job would leave: their situations, with real sequence
# numbers (their unit tests leave them at 0) and ops left pending where the
# situation is a hang. Two groups as in their template: the default group
# [0, 1] and a group "1" ("sub_pg") that each rank made alone ([0] on rank
# 0, [1] on rank 1).

def torch_pgs(rank):
    return {"0": ("default_pg", [0, 1]), "1": ("sub_pg", [rank])}


def torch_ranks():
    return [Rank(i, torch_pgs(i), VERSION, FRAMES) for i in range(2)]


def coalesced(r, pg, members, closer, state="completed"):
    """members: (name, sizes) issued in one coalescing block: one seq."""
    seq = r.coll[pg] + 1
    for name, sizes in members + [(closer, ())]:
        r.coll[pg] = seq - 1
        r.coll_op(pg, name, state=state, sizes=sizes)


def sc_torch_matched(n, k):
    # their case 1: all_reduce on the default group, all_reduce [5, 5] on sub_pg
    rs = torch_ranks()
    for r in rs:
        r.coll_op("0", "all_reduce", sizes=(4, 4))
        r.coll_op("1", "all_reduce", sizes=(5, 5))
    return rs, "HEALTHY culprits=-"


def sc_torch_allreduce_coalesced(n, k):
    # their case 2: one allreduce_coalesced (a collective of its own)
    rs = torch_ranks()
    for r in rs:
        r.coll_op("0", "allreduce_coalesced", sizes=(4, 4))
    return rs, "HEALTHY culprits=-"


def sc_torch_broadcast_coalesced(n, k):
    # their case 3: two broadcasts in one coalescing block, closed by "coalesced"
    rs = torch_ranks()
    for r in rs:
        coalesced(r, "0", [("broadcast", (4, 4)), ("broadcast", (4, 4))], "coalesced")
    return rs, "HEALTHY culprits=-"


def sc_torch_uneven_allgather(n, k):
    # their case 4: the slow path's all-gather (two _broadcast_oop closed by
    # ALLGATHER_coalesced) with an uneven second member on rank 0: a size
    # mismatch (they report pass_check False). Two ranks, one each way: no
    # majority, so no rank can be blamed: the mismatch is reported with the
    # culprit set empty (torch names rank 1, the rank not read first).
    rs = torch_ranks()
    for r in rs:
        second = (5, 5) if r.rank == 0 else (4, 4)
        coalesced(r, "0", [("_broadcast_oop", (4, 4)), ("_broadcast_oop", second)], "ALLGATHER_coalesced",
                  state="scheduled")
    return rs, "MISMATCH culprits=-"


def sc_torch_reduce_scatter_coalesced(n, k):
    # their case 5: the slow path's reduce-scatter (two _reduce_oop closed by
    # REDUCE_SCATTER_coalesced), matched
    rs = torch_ranks()
    for r in rs:
        coalesced(r, "0", [("_reduce_oop", (4, 4)), ("_reduce_oop", (4, 4))], "REDUCE_SCATTER_coalesced")
    return rs, "HEALTHY culprits=-"


def sc_torch_empty_coalesced(n, k):
    # their case 6: rank 0's coalescing block was empty (it recorded nothing),
    # rank 1's held two reduces; as a hang: rank 1 waits in the group's op,
    # which rank 0 never issued
    rs = torch_ranks()
    for r in rs:
        r.coll_op("0", "all_reduce", sizes=(4, 4))
    coalesced(rs[1], "0", [("_reduce_oop", (4, 4)), ("_reduce_oop", (4, 4))], "REDUCE_SCATTER_coalesced",
              state="scheduled")
    return rs, "MISSING_RANK culprits=0"


def sc_torch_output_size(n, k):
    # their match_one_event: an all_reduce whose output size differs from its
    # input on one rank (SIZE_OR_SYNTAX_MISMATCH); 3 ranks so a majority exists
    rs = [Rank(i, world(3), VERSION, FRAMES) for i in range(3)]
    for r in rs:
        r.coll_op("0", "all_reduce", state="scheduled", sizes=(4, 4), out_sizes=(5, 4) if r.rank == 2 else (4, 4))
    return rs, "MISMATCH culprits=2"


def sc_torch_output_dtype(n, k):
    # their match_one_event: same sizes, output float16 on one rank (DTYPE_MISMATCH)
    rs = [Rank(i, world(3), VERSION, FRAMES) for i in range(3)]
    for r in rs:
        r.coll_op("0", "all_reduce", state="scheduled", sizes=(4, 4))
        if r.rank == 1:
            r.entries[-1]["output_dtypes"] = ["Half"]
    return rs, "MISMATCH culprits=1"


def sc_torch_gather_root(n, k):
    # their match_one_event: gather, the root's output lists every rank's
    # tensor, the others' is empty: a match
    rs = torch_ranks()
    for r in rs:
        r.coll_op("0", "gather", sizes=(4, 4))
        r.entries[-1]["output_sizes"] = [[4, 4], [4, 4]] if r.rank == 0 else [[]]
        r.entries[-1]["output_dtypes"] = ["Float"] if r.rank == 0 else [""]
    return rs, "HEALTHY culprits=-"


def sc_nccl_differs(n, k):
    # transport-like hang where rank 3 runs another NCCL (comm_lib_version):
    # the environment differences name it
    rs, expect = sc_transport(n, k)
    rs[3].comm_lib = "2.18.1"
    return rs, expect


SCENARIOS = {
    "nccl-differs": sc_nccl_differs,
    "torch-matched": sc_torch_matched,
    "torch-allreduce-coalesced": sc_torch_allreduce_coalesced,
    "torch-broadcast-coalesced": sc_torch_broadcast_coalesced,
    "torch-uneven-allgather": sc_torch_uneven_allgather,
    "torch-reduce-scatter-coalesced": sc_torch_reduce_scatter_coalesced,
    "torch-empty-coalesced": sc_torch_empty_coalesced,
    "torch-output-size": sc_torch_output_size,
    "torch-output-dtype": sc_torch_output_dtype,
    "torch-gather-root": sc_torch_gather_root,
    "healthy": sc_healthy,
    "missing-rank": sc_missing_rank,
    "missing-file": sc_missing_file,
    "type-mismatch": sc_type_mismatch,
    "first-rank-wrong": sc_first_rank_wrong,
    "size-mismatch": sc_size_mismatch,
    "dtype-mismatch": sc_dtype_mismatch,
    "late-mismatch": sc_late_mismatch,
    "state-mismatch": sc_state_mismatch,
    "transport": sc_transport,
    "p2p-ok": sc_p2p_ok,
    "p2p-unmatched": sc_p2p_unmatched,
    "alltoall-ok": sc_alltoall_ok,
    "multi-pg": sc_multi_pg,
    "coalesced-ok": sc_coalesced_ok,
}

VERSION = (2, 10)
FRAMES = True


def bench(dirpath, n, k, prefix):
    """One missing rank at scale, written fast: one entry list per rank,
    pickled with the entries of all ranks sharing the same shape."""
    os.makedirs(dirpath, exist_ok=True)
    pg = {"0": {"name": "0", "desc": "default_pg", "ranks": str(list(range(n)))}}
    base = []
    for i in range(k - 1):
        base.append({"record_id": i, "pg_id": 0, "process_group": ("0", "default_pg"),
                     "collective_seq_id": i + 1, "p2p_seq_id": 0, "op_id": i + 1,
                     "profiling_name": "nccl:all_reduce", "time_created_ns": T0 + i * STEP,
                     "input_sizes": [[1024]], "input_dtypes": ["Float"], "output_sizes": [[1024]],
                     "output_dtypes": ["Float"], "state": "completed",
                     "time_discovered_started_ns": None,
                     "time_discovered_completed_ns": T0 + i * STEP + 1000, "retired": True,
                     "timeout_ms": 600000, "is_p2p": False,
                     "frames": frames("all_reduce", 40)})
    last = dict(base[-1], record_id=k - 1, collective_seq_id=k, op_id=k, state="scheduled",
                time_created_ns=T0 + k * STEP, time_discovered_completed_ns=None, retired=False,
                frames=frames("all_reduce", 99))
    head = {"version": "2.10", "pg_config": pg, "comm_lib_version": "2.21.5",
            "pg_status": {"0": {"last_enqueued_collective": k, "last_started_collective": -1,
                                "last_completed_collective": k - 1}}}
    full = pickle.dumps(dict(head, entries=base + [last]), protocol=2)
    short = pickle.dumps(dict(head, entries=base), protocol=2)
    for r in range(n):
        with open(os.path.join(dirpath, "%s%d" % (prefix, r)), "wb") as f:
            f.write(short if r == n - 1 else full)


def main(argv):
    global VERSION, FRAMES, TAINT
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    sc, d = argv[1], argv[2]
    n, k, as_json, prefix = 8, 4, False, "comm_lib_trace_rank_"
    i = 3
    while i < len(argv):
        a = argv[i]
        if a == "--ranks":
            n = int(argv[i + 1]); i += 2
        elif a == "--entries":
            k = int(argv[i + 1]); i += 2
        elif a == "--json":
            as_json = True; i += 1
        elif a == "--version":
            VERSION = tuple(int(x) for x in argv[i + 1].split(".")); i += 2
        elif a == "--prefix":
            prefix = argv[i + 1]; i += 2
        elif a == "--no-frames":
            FRAMES = False; i += 1
        elif a == "--taint":
            TAINT = argv[i + 1]; i += 2
        else:
            sys.stderr.write("frgen: unknown option %s\n" % a)
            return 2
    if sc == "bench":
        bench(d, n, k, prefix)
        print("frgen bench: expect MISSING_RANK culprits=%d" % (n - 1))
        return 0
    if sc not in SCENARIOS:
        sys.stderr.write("frgen: unknown scenario %s (%s)\n" % (sc, " ".join(SCENARIOS)))
        return 2
    os.makedirs(d, exist_ok=True)
    rs, expect = SCENARIOS[sc](n, k)
    for r in rs:
        if r is not None:
            write(d, prefix, r.rank, r.dump(), as_json)
    print("frgen %s: expect %s" % (sc, expect))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
