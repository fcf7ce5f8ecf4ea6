#!/bin/sh
# RAS's own rules (report/decide/verdicts_ras.c, words/ras_words.c) on
# saved reports no simulated job writes: a text report's async errors
# (the error's own hint, or the kind's for a CUDA error), init errors
# (an unknown ncclResult_t too), ranks inside an init (a minority named,
# else the comm), counts behind and ahead of its majority line (a rank
# line without its process: host "?"), a text report with nothing wrong
# (TRANSPORT_STALL: equal counts), a report without a communicator, and a
# JSON report whose comm RAS sees nothing wrong with (RAS's HEALTHY).
# Each verdict's lines as diagnose prints them.
. "$NW_ROOT/tests/lib.sh"
HEAD='NCCL version 2.27.7 compiled with CUDA 12.9
CUDA runtime version 12090, driver version 12090

Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors
    #  in group  per comm  per node  per comm  in group
    0         1         1         4         4         4   RUNNING      OK
'
# report NAME BODY: a text report of one comm of 4 ranks
report() { printf '%s\n%s\n' "$HEAD" "$2" > "$T/$1.txt"; }
# has FILE LINE: FILE holds LINE, whole
has() { grep -Fxq -- "$2" "$1" || { sed 's/^/    /' "$1" >&2; fail "no line '$2' in $1"; }; }
diag() { "$NW_CLI" diagnose --verbose "$@" > "$T/out" 2>&1; echo "rc=$?" >> "$T/out"; }
at() { echo "  Rank $1${3-} -- GPU $1 managed by process $2 on node n1"; }

note "async errors: the error's words, its hint"
report async "Errors
======

#0-0 (00000000000000a1) ERROR
  Asynchronous error on 1 rank
$(at 2 1002 ' reported System error')"
diag "$T/async.txt"
has "$T/out" 'GPU_FAULT: rank 2 of comm 0x00000000000000a1 reported the async error ncclSystemError'
has "$T/out" '    rank 2 (pid 1002 on n1): async error 2 (ncclSystemError)'
has "$T/out" '    from NCCL RAS: launch counts, not completions; no send/receive counts'
has "$T/out" '  hint: the error string: NCCL_DEBUG=WARN on that rank says where it came from'
has "$T/out" '  culprits: 2'
has "$T/out" 'rc=1'
"$NW_CLI" diagnose --json "$T/async.txt" > "$T/async.json"
assert_grep '"hint":"the error string: NCCL_DEBUG=WARN on that rank says where it came from"' "$T/async.json"

report cuda "Errors
======

#0-0 (00000000000000a2) ERROR
  Asynchronous errors on 2 ranks
  2 ranks reported Unhandled CUDA error
$(at 1 1001)
$(at 3 1003)"
diag "$T/cuda.txt"
has "$T/out" 'GPU_FAULT: ranks 1,3 of comm 0x00000000000000a2 reported the async error ncclUnhandledCudaError'
has "$T/out" '    rank 3 (pid 1003 on n1): async error 1 (ncclUnhandledCudaError)'
has "$T/out" '  hint: Xid / ECC; the error string'

note "init errors"
report init "Errors
======

#0-0 (00000000000000a3) ERROR
  Initialization errors on 3 ranks
  2 ranks reported Internal error
$(at 0 1000)
$(at 1 1001)
$(at 2 1002 ' reported Something unheard of')"
diag "$T/init.txt"
has "$T/out" 'INIT_STALL: ranks 0-2 of comm 0x00000000000000a3 reported the init error ncclInternalError'
has "$T/out" '    rank 1 (pid 1001 on n1): init error 3 (ncclInternalError)'
has "$T/out" '    rank 2 (pid 1002 on n1): init error 8 (an unknown ncclResult_t)'
has "$T/out" '  hint: launch, rendezvous address, network interface'

note "ranks inside an init: a minority, then all of them"
report minority "Errors
======

#0-0 (00000000000000a4) ERROR
  Initialization error on 1 rank
$(at 3 1003 ' reported NCCL operation in progress')

Warnings
========

#0-0 (00000000000000a4) MISMATCH
  Communicator ranks have different AllReduce operation counts
  3 ranks have launched up to operation 2
$(at 0 1000)
$(at 1 1001)
$(at 2 1002)"
diag "$T/minority.txt"
has "$T/out" 'INIT_STALL: 1 of 4 ranks of comm 0x00000000000000a4 are still inside its init (a minority: they are named)'
has "$T/out" '  culprits: 3'
has "$T/out" '    RAS lists a comm once its ranks exchanged their peer info: these ranks are past the rendezvous, in the connection setup'
report all "Errors
======

#0-0 (00000000000000a5) ERROR
  Initialization errors on 2 ranks
  2 ranks reported NCCL operation in progress
$(at 0 1000)
$(at 1 1001)"
diag "$T/all.txt"
has "$T/out" 'INIT_STALL: 2 of 2 ranks of comm 0x00000000000000a5 are still inside its init (no minority to blame: the comm itself)'
has "$T/out" '  culprits: - (the communicator or its link, not a rank)'

note "counts behind and ahead of the majority line"
report counts "Warnings
========

#0-0 (00000000000000a6) MISMATCH
  Communicator ranks have different AllReduce operation counts
  5 ranks have launched up to operation 7
  Rank 1 has launched up to operation 6 -- GPU 1 managed by process 1001 on node n1
  Rank 4 has launched up to operation 5
  Rank 6 has launched up to operation 9 -- GPU 6 managed by process 1006 on node n2"
diag "$T/counts.txt"
has "$T/out" 'MISSING_RANK: ranks 1,4 never launched the AllReduce the others launched last on comm 0x00000000000000a6 (RAS: AllReduce launches=5-6 there, launches=7 on 5 peers); the others wait in it'
has "$T/out" '    rank 1 (pid 1001 on n1): AllReduce launched 6 times'
has "$T/out" '    rank 4 (pid -1 on ?): AllReduce launched 5 times'
has "$T/out" '    5 ranks launched AllReduce 7 times (text report: only the outliers are listed by rank)'
has "$T/out" 'MISSING_RANK: rank 6 launched the AllReduce the other 5 ranks never launched on comm 0x00000000000000a6 (RAS: AllReduce launches=9 there, launches=7 on the others): it went past where the others are'
has "$T/out" '    rank 6 (pid 1006 on n2): AllReduce launched 9 times'

note "nothing wrong in a text report; no communicator"
report equal "Errors
======

#0-0 (00000000000000a9) INCOMPLETE
$(at 3 1003 ' (no answer)')"
diag "$T/equal.txt"
has "$T/out" 'TRANSPORT_STALL: launch counts equal; RAS cannot see completion: the text report shows no mismatch, error or missing process'
report nocomm "No communicator data collected!"
diag "$T/nocomm.txt"
has "$T/out" 'INIT_STALL: RAS reports no communicator: no init of this job got past its rendezvous (or no NCCL communicator exists)'
has "$T/out" '    RAS lists a comm only once every rank exchanged its peer info: a rank that never arrived cannot be named from RAS; thread stacks can'

note "a JSON report RAS sees nothing wrong in"
python3 - "$T/healthy.json" <<'PY'
import json, sys
def rank(r):
    return {"rank": r, "host": "h", "pid": 500 + r, "cuda_dev": r, "nvml_dev": r,
            "status": {"init_state": 0, "async_error": 0, "finalize_called": False, "destroy_flag": False,
                       "abort_flag": False}, "collective_counts": {}}
comm = {"hash": "0xe1", "secondary_hash": "0x1:0x2", "size": 2, "ranks_count": 2, "missing_ranks_count": 0,
        "ranks": [rank(0), rank(1)], "missing_ranks": []}
json.dump({"nccl_version": "2.28.9", "cuda_runtime_version": 12090, "cuda_driver_version": 13000,
           "timestamp": "2026-11-24 00:00:00", "communicators_count": 1, "communicators": [comm],
           "ras": {"collection_time_sec": 0.002, "timeouts_count": 0}}, open(sys.argv[1], "w"))
PY
diag "$T/healthy.json"
has "$T/out" 'HEALTHY: nothing RAS can see is wrong: every rank answered, no error, no launch count differs (RAS cannot see completion, nor send/receive)'
has "$T/out" 'rc=0'
echo ok
