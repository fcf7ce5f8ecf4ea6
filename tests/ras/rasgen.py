#!/usr/bin/env python3
"""rasgen: a large NCCL RAS report in NCCL 2.28.9's JSON form (the layout
tests/sim/nccl/ras.c writes, as NCCL does), for the memory test and the
benchmark of its reader.

usage: rasgen.py RANKS OUT [--group G]

The job: RANKS ranks, hosts of 8 (10.0.h/256.h%256, pid 10000 + rank),
a world communicator (hash 0x1000) and one of every G consecutive ranks
(default 8; hashes 0x2000 + g). Every rank launched AllReduce 7 times on
every communicator, except rank 1, which launched it 6 times: the verdict
is MISSING_RANK, rank 1 on the world communicator. Written in one pass,
a communicator at a time (never the whole text in memory).
"""
import sys

RANK = ('        {\n          "rank": %d,\n          "host": "10.0.%d.%d",\n          "pid": %d,\n'
        '          "cuda_dev": %d,\n          "nvml_dev": %d,\n          "status": {\n'
        '            "init_state": 0,\n            "async_error": 0,\n            "finalize_called": false,\n'
        '            "destroy_flag": false,\n            "abort_flag": false\n          },\n'
        '          "collective_counts": {\n            "Broadcast": 0,\n            "Reduce": 0,\n'
        '            "AllGather": 0,\n            "ReduceScatter": 0,\n            "AllReduce": %d\n          }\n'
        '        }')


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    n, out = int(argv[1]), argv[2]
    group = int(argv[argv.index("--group") + 1]) if "--group" in argv else 8
    comms = [(0x1000, range(n))] + [(0x2000 + g, range(g * group, min(n, g * group + group)))
                                    for g in range((n + group - 1) // group)]
    with open(out, "w") as f:
        w = f.write
        w('{\n  "nccl_version": "2.28.9",\n  "cuda_runtime_version": 12090,\n  "cuda_driver_version": 13000,\n'
          '  "timestamp": "2026-11-24 00:00:00",\n  "communicators_count": %d,\n  "communicators": [\n' % len(comms))
        for ci, (h, members) in enumerate(comms):
            if ci:
                w(',\n')
            w('    {\n      "hash": "0x%x",\n      "secondary_hash": "0x1:0x2",\n      "size": %d,\n'
              '      "ranks_count": %d,\n      "missing_ranks_count": 0,\n      "ranks": [\n'
              % (h, len(members), len(members)))
            w(',\n'.join(RANK % (i, p // 8 // 256, p // 8 % 256, 10000 + p, p % 8, p % 8, 7 - (p == 1))
                         for i, p in enumerate(members)))
            w('\n      ],\n      "missing_ranks": [\n      ]\n    }')
        w('\n  ],\n  "ras": {\n    "collection_time_sec": 0.002,\n    "timeouts_count": 0\n  }\n}\n')
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
