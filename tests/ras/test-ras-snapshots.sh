#!/bin/sh
# A RAS report next to attach's snapshots is ONE job with ONE verdict set
# (docs/ras.md, "One job, one verdict"), on files: nwgen's snapshots of 8
# ranks on two hosts (node0: pids 10000-10003, node1: 10004-10007) and a
# RAS JSON report written here, whose hosts are IP addresses (as NCCL's):
# lined up by host and pid. Cases: RAS and stacks name different ranks
# ("stacks disagree"); launch counts equal while a stack minority is
# elsewhere (the stacks' culprit, "launch counts equal"); a report whose
# pids are not those of the snapshots is not used; one that lies in another
# directory joins the job of the processes that are its ranks (it was a
# job of its own, lined up with the snapshots' job by a second path).
. "$NW_ROOT/tests/lib.sh"
NW_GEN="$NW_BUILD/tests/progs/nwgen"
[ -x "$NW_GEN" ] || fail "$NW_GEN is not built"
NCCL='futex_wait@libc.so.6<ncclAllReduce@libnccl.so.2<train_step<main'

# rasjson FILE PIDBASE COUNTS: a RAS report of 8 ranks, rank r pid PIDBASE+r
# on 10.0.0.1 (ranks 0-3) or 10.0.0.2 (4-7), AllReduce counts "c0,c1,...".
rasjson() {
	python3 - "$@" <<'EOF'
import json, sys
path, base, counts = sys.argv[1], int(sys.argv[2]), [int(c) for c in sys.argv[3].split(",")]
ranks = [{"rank": r, "host": "10.0.0.%d" % (1 + r // 4), "pid": base + r, "cuda_dev": r % 4, "nvml_dev": r % 4,
          "status": {"init_state": 0, "async_error": 0, "finalize_called": False, "destroy_flag": False, "abort_flag": False},
          "collective_counts": {"Broadcast": 0, "Reduce": 0, "AllGather": 0, "ReduceScatter": 0, "AllReduce": c}}
         for r, c in enumerate(counts)]
doc = {"nccl_version": "2.28.9", "cuda_runtime_version": 12090, "cuda_driver_version": 13000,
       "timestamp": "2026-11-24 00:00:00", "communicators_count": 1,
       "communicators": [{"hash": "0x5eed", "secondary_hash": "0x1:0x2", "size": len(counts), "ranks_count": len(counts),
                          "missing_ranks_count": 0, "ranks": ranks, "missing_ranks": []}],
       "ras": {"collection_time_sec": 0.01, "timeouts_count": 0}}
json.dump(doc, open(path, "w"), indent=2)
EOF
}

# case NAME SPEC PIDBASE COUNTS: snapshots + report in $T/NAME, diagnose into $T/NAME.txt
case_() {
	_n=$1
	"$NW_GEN" --snapshot "$2" --ranks 8 --out "$T/$_n" > "$T/$_n.gen" 2>&1 || { cat "$T/$_n.gen"; fail "$_n: nwgen"; }
	_d=$(dirname "$(ls "$T/$_n"/*/*.snapshot.seg | head -n 1)")
	rasjson "$_d/ras.json" "$3" "$4"
	"$NW_CLI" diagnose --verbose "$_d" > "$T/$_n.txt" 2> "$T/$_n.err"
	RC=$?
	sed 's/^/    /' "$T/$_n.txt" | grep -v '^      *#'
	[ ! -s "$T/$_n.err" ] || { cat "$T/$_n.err"; fail "$_n: stderr"; }
	assert_eq "$RC" 1 "$_n: exit status"
}

note "RAS: rank 3 launched AllReduce 22 times where the others did 23; stacks: rank 7 elsewhere"
case_ disagree "*=$NCCL;7=compile_step<train_step<main" 10000 23,23,23,22,23,23,23,23
assert_eq "$(grep -c '^job ' "$T/disagree.txt")" 1 "disagree: jobs"
assert_eq "$(grep -c '^[A-Z_]*: ' "$T/disagree.txt")" 1 "disagree: verdicts"
assert_grep '^MISSING_RANK: rank 3 never launched the AllReduce the others launched last on comm 0x0000000000005eed \(RAS: AllReduce launches=22 there, launches=23 on 7 peers\)' "$T/disagree.txt"
assert_grep '^  culprits: 3$' "$T/disagree.txt"
assert_grep '^    rank 3 \(from stacks\): waits in ncclAllReduce: futex_wait < ncclAllReduce < train_step < main$' "$T/disagree.txt"
assert_grep '^    stacks disagree: MISSING_RANK: rank 7 is in compile_step < train_step < main, not inside NCCL' "$T/disagree.txt"
assert_grep '^    NCCL RAS report .*/ras\.json: 8 of its ranks are processes of this job \(same host and pid\)$' "$T/disagree.txt"

note "launch counts equal, rank 7 elsewhere by its stack: the stacks' culprit, with the counts"
case_ equal "*=$NCCL;7=compile_step<train_step<main" 10000 23,23,23,23,23,23,23,23
assert_eq "$(grep -c '^job ' "$T/equal.txt")" 1 "equal: jobs"
assert_eq "$(grep -c '^[A-Z_]*: ' "$T/equal.txt")" 1 "equal: verdicts"
assert_grep '^MISSING_RANK: rank 7 is in compile_step < train_step < main, not inside NCCL, .*\(from stacks\).*; launch counts equal \(NCCL RAS\)' "$T/equal.txt"
assert_grep '^  culprits: 7$' "$T/equal.txt"
assert_grep '^    NCCL RAS \(.*/ras\.json\): TRANSPORT_STALL: launch counts equal; RAS cannot see completion' "$T/equal.txt"

note "a report of other processes (other pids) in the same directory: another job's RAS answered (one port per host): not used, and said so"
case_ other "*=$NCCL;7=compile_step<train_step<main" 20000 23,23,23,22,23,23,23,23
assert_eq "$(grep -c '^job ' "$T/other.txt")" 1 "other: jobs"
assert_no_grep '^job ras ' "$T/other.txt"
assert_grep '^MISSING_RANK: rank 7 is in compile_step' "$T/other.txt"
assert_no_grep 'rank 3 never launched' "$T/other.txt"
assert_grep '^    NCCL RAS report .*/ras\.json not used: none of its 8 ranks is a process of this job' "$T/other.txt"

note "the report in another directory: it joins the job of its ranks' processes, the same verdict as beside them"
d=$(dirname "$(ls "$T/disagree"/*/*.snapshot.seg | head -n 1)")
mv "$d/ras.json" "$T/elsewhere.json"
"$NW_CLI" diagnose --verbose "$d" "$T/elsewhere.json" > "$T/apart.txt" 2>&1
sed 's/^/    /' "$T/apart.txt" | grep -v '^      *#'
assert_eq "$(grep -c '^job ' "$T/apart.txt")" 1 "apart: jobs"
assert_no_grep '^job ras ' "$T/apart.txt"
assert_grep '^MISSING_RANK: rank 3 never launched the AllReduce the others launched last on comm 0x0000000000005eed \(RAS: AllReduce launches=22 there, launches=23 on 7 peers\)' "$T/apart.txt"
assert_grep '^  culprits: 3$' "$T/apart.txt"
assert_grep '^    rank 3 \(from stacks\): waits in ncclAllReduce: futex_wait < ncclAllReduce < train_step < main$' "$T/apart.txt"
assert_grep "^    NCCL RAS report $T/elsewhere\\.json: 8 of its ranks are processes of this job \\(same host and pid\\)\$" "$T/apart.txt"
