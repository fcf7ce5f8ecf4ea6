#!/bin/sh
# The verdicts on NCCL RAS reports (report/decide/verdicts_ras.c, and the
# ordinary rules on the facts the adapter gives: init, async errors) on
# reports written by hand in NCCL 2.28.9's JSON form, for the cases the
# simulation cannot produce on demand: ranks still in init after the
# rendezvous, a minority ahead of the others, no strict majority, a
# minority that left the comm, a smaller comm's ranks mapped to world ranks
# by pid, and a 2.29-style report (comma present) read the same way.
. "$NW_ROOT/tests/lib.sh"

# report FILE COMM...: a report of the given comm objects (JSON snippets)
report() {
	_f=$1; shift
	{
		printf '{\n  "nccl_version": "2.28.9",\n  "cuda_runtime_version": 12090,\n  "cuda_driver_version": 13000,\n'
		printf '  "timestamp": "2026-11-24 00:00:00",\n  "communicators_count": %d,\n  "communicators": [\n' $#
		_first=1
		for _c in "$@"; do [ $_first = 1 ] || printf ',\n'; printf '%s' "$_c"; _first=0; done
		printf '\n  ],\n  "ras": {\n    "collection_time_sec": 0.002,\n    "timeouts_count": 0\n  }\n}\n'
	} > "$_f"
}
# rank R PID ALLREDUCE [INIT ASYNC FIN DESTROY ABORT BCAST]
rank() {
	printf '{ "rank": %d, "host": "10.0.0.1", "pid": %d, "cuda_dev": 0, "nvml_dev": 0, "status": { "init_state": %d, "async_error": %d, "finalize_called": %s, "destroy_flag": %s, "abort_flag": %s }, "collective_counts": { "Broadcast": %d, "Reduce": 0, "AllGather": 0, "ReduceScatter": 0, "AllReduce": %d } }' \
		"$1" "$2" "${4:-0}" "${5:-0}" "${6:-false}" "${7:-false}" "${8:-false}" "${9:-0}" "$3"
}
# missing R PID UNRESPONSIVE DEAD  (2.28.9's form: no comma after nvml_dev)
missing() {
	printf '{ "rank": %d, "host": "10.0.0.2", "pid": %d, "cuda_dev": 1, "nvml_dev": 1\n "status": { "unresponsive": %s, "considered_dead": %s } }' "$1" "$2" "$3" "$4"
}
# comm HASH SIZE RANKS MISSING
comm() {
	printf '{ "hash": "%s", "secondary_hash": "0x1:0x2", "size": %d, "ranks_count": 0, "missing_ranks_count": 0, "ranks": [ %s ], "missing_ranks": [ %s ] }' "$1" "$2" "$3" "$4"
}
diag() { "$NW_CLI" diagnose "$1" > "$1.out"; _rc=$?; grep -v '^    from NCCL RAS' "$1.out" | sed 's/^/    /'; }

note "ranks 2-3 of 8 still in init (ncclInProgress) after the rendezvous"
r=""; for i in 0 1 2 3 4 5 6 7; do s=0; [ $i = 2 ] || [ $i = 3 ] && s=7; r="$r${r:+, }$(rank $i $((100 + i)) 0 $s)"; done
report "$T/init.json" "$(comm 0xa1 8 "$r" "")"
diag "$T/init.json"
# an init op of each of their processes, judged by verdicts_init.c: the
# majority finished it, the two still inside deviate
assert_grep '^INIT_STALL: ranks 2-3 are still inside ncclCommInit\* or ncclCommSplit of comm 00000000000000a1 \(8 ranks\), which ranks 0-1,4-7 finished: every rank entered it' "$T/init.json.out"
assert_grep '^  culprits: 2-3$' "$T/init.json.out"
# a report of its own is processes the adapter built, one per rank
assert_grep "^job ras $T/init\\.json: 8 processes read, world size 8, ranks missing: none" "$T/init.json.out"
"$NW_CLI" diagnose --json "$T/init.json" > "$T/init.jsonout"
assert_eq "$(grep -o '"sees":\["launch_only"\]' "$T/init.jsonout" | wc -l)" 8 "processes that see launches only"

note "rank 0 of 4: its init failed (ncclSystemError) while 1-3 created the comm"
report "$T/initerr.json" "$(comm 0xa6 4 "$(rank 0 100 0 2), $(rank 1 101 0), $(rank 2 102 0), $(rank 3 103 0)" "")"
diag "$T/initerr.json"
assert_grep '^INIT_STALL: rank 0: ncclCommInit\* or ncclCommSplit of comm 00000000000000a6 failed \(ncclSystemError\): it will never join it; 3 of its 4 ranks created it$' "$T/initerr.json.out"
assert_grep '^  culprits: 0$' "$T/initerr.json.out"

note "rank 6 of 8 launched one AllReduce more than the others (ahead)"
r=""; for i in 0 1 2 3 4 5 6 7; do n=9; [ $i = 6 ] && n=10; r="$r${r:+, }$(rank $i $((100 + i)) $n)"; done
report "$T/ahead.json" "$(comm 0xa2 8 "$r" "")"
diag "$T/ahead.json"
assert_grep '^MISSING_RANK: rank 6 launched the AllReduce the other 7 ranks never launched on comm 0x00000000000000a2 \(RAS: AllReduce launches=10 there, launches=9 on the others\): it went past where the others are$' "$T/ahead.json.out"
assert_grep '^  op: AllReduce launches=10 on comm 00000000000000a2 \(8 ranks\)$' "$T/ahead.json.out"
# --job picks among the jobs of the processes read; a report of its own stays
"$NW_CLI" diagnose --job nosuchjob "$T/ahead.json" > "$T/ahead.job.out"
assert_grep "^job ras $T/ahead\\.json: 8 processes read" "$T/ahead.job.out"
assert_grep '^MISSING_RANK: rank 6 launched the AllReduce the other 7 ranks never launched' "$T/ahead.job.out"

note "2 against 2: no strict majority, nobody named"
report "$T/tie.json" "$(comm 0xa3 4 "$(rank 0 100 5), $(rank 1 101 5), $(rank 2 102 4), $(rank 3 103 4)" "")"
diag "$T/tie.json"
assert_grep '^MISSING_RANK: ranks of comm 0x00000000000000a3 launched AllReduce different numbers of times and no count is shared by a strict majority: counts alone cannot say who deviates$' "$T/tie.json.out"
assert_no_grep '^  culprits: [0-9]' "$T/tie.json.out"

note "rank 3 answered but no longer holds the comm (NOCOMM) while 0-2 run it"
report "$T/left.json" "$(comm 0xa4 4 "$(rank 0 100 5), $(rank 1 101 5), $(rank 2 102 5)" "$(missing 3 103 false false)")"
diag "$T/left.json"
assert_grep '^MISSING_RANK: rank 3 left comm 0x00000000000000a4 early \(finalized, destroyed or aborted it\): 3 of its 4 ranks still run it$' "$T/left.json.out"

note "rank 0 of 4 finalized the comm while 1-3 run it"
report "$T/fin.json" "$(comm 0xa5 4 "$(rank 0 100 5 0 0 true false false), $(rank 1 101 5), $(rank 2 102 5), $(rank 3 103 5)" "")"
diag "$T/fin.json"
assert_grep '^MISSING_RANK: rank 0 left comm 0x00000000000000a5 early \(finalized, destroyed or aborted it\): 3 of its 4 ranks still run it$' "$T/fin.json.out"
assert_grep 'rank 0 \(pid 100 on 10\.0\.0\.1\) finalized the comm' "$T/fin.json.out"

note "a 3-rank comm whose rank 2 (pid 103: world rank 3) answered but no longer holds it: its comm state, by pid"
report "$T/leftsub.json" "$(comm 0xb1 4 "$(rank 0 100 7), $(rank 1 101 7), $(rank 2 102 7), $(rank 3 103 7)" "")" \
	"$(comm 0xb3 3 "$(rank 0 101 3), $(rank 1 102 3)" "$(missing 2 103 false false)")"
diag "$T/leftsub.json"
assert_grep '^MISSING_RANK: rank 3 left comm 0x00000000000000b3 early \(finalized, destroyed or aborted it\): 2 of its 3 ranks still run it$' "$T/leftsub.json.out"
assert_grep '^  culprits: 3$' "$T/leftsub.json.out"
assert_grep '^  waiting: 1-2$' "$T/leftsub.json.out"
assert_grep '^TRANSPORT_STALL: launch counts equal; RAS cannot see completion: every rank of comm 0x00000000000000b1 \(4\)' "$T/leftsub.json.out"

note "world of 4 and a 2-rank comm (world ranks 2,3): its culprit is named as world rank 3"
report "$T/two.json" "$(comm 0xb1 4 "$(rank 0 100 7), $(rank 1 101 7), $(rank 2 102 7), $(rank 3 103 7)" "")" \
	"$(comm 0xb2 2 "$(rank 0 102 0 0 0 false false false 3), $(rank 1 103 0 0 0 false false false 2)" "")"
diag "$T/two.json"
assert_grep '^MISSING_RANK: ranks of comm 0x00000000000000b2 launched Broadcast different numbers of times and no count is shared by a strict majority' "$T/two.json.out"
report "$T/three.json" "$(comm 0xb1 4 "$(rank 0 100 7), $(rank 1 101 7), $(rank 2 102 7), $(rank 3 103 7)" "")" \
	"$(comm 0xb3 3 "$(rank 0 101 0 0 0 false false false 3), $(rank 1 102 0 0 0 false false false 3), $(rank 2 103 0 0 0 false false false 2)" "")"
diag "$T/three.json"
assert_grep '^MISSING_RANK: rank 3 never launched the Broadcast the others launched last on comm 0x00000000000000b3 \(RAS: Broadcast launches=2 there, launches=3 on 2 peers\)' "$T/three.json.out"
assert_grep '^  culprits: 3$' "$T/three.json.out"
assert_grep '^  waiting: 1-2$' "$T/three.json.out"
assert_grep '^  world size 4|world size 4' "$T/three.json.out"

note "world ranks 4-5 behind a strict majority of the world, 2 of 3 in their tp comm: their count casts no vote there"
# (seed 9262's shape: the tp comm's majority is the pair the world waits
# for; rank 3, ahead of them in the tp comm, only waits)
r=""; for i in 0 1 2 3 4 5; do n=3; [ $i -ge 4 ] && n=2; r="$r${r:+, }$(rank $i $((100 + i)) $n)"; done
report "$T/waited.json" "$(comm 0xd1 6 "$r" "")" \
	"$(comm 0xd2 3 "$(rank 0 103 0 0 0 false false false 3), $(rank 1 104 0 0 0 false false false 2), $(rank 2 105 0 0 0 false false false 2)" "")"
diag "$T/waited.json"
assert_grep '^MISSING_RANK: ranks 4-5 never launched the AllReduce the others launched last on comm 0x00000000000000d1' "$T/waited.json.out"
assert_grep '^MISSING_RANK: ranks 4-5 never launched the Broadcast the others launched last on comm 0x00000000000000d2 \(RAS: Broadcast launches=2 there, launches=3 on 1 peer\)' "$T/waited.json.out"
assert_grep 'the Broadcast counts of ranks 4-5 cast no vote on comm 0x00000000000000d2' "$T/waited.json.out"
assert_no_grep '^  culprits: .*3' "$T/waited.json.out"
assert_no_grep 'rank 3 launched the Broadcast' "$T/waited.json.out"

note "the same report with the comma NCCL 2.29.2+ writes reads the same"
report "$T/dead.json" "$(comm 0xc1 3 "$(rank 0 100 5), $(rank 1 101 5)" "$(missing 2 102 true true)")"
sed 's/"nvml_dev": 1$/"nvml_dev": 1,/' "$T/dead.json" > "$T/dead229.json"
cmp -s "$T/dead.json" "$T/dead229.json" && fail "the 2.29 form should differ"
diag "$T/dead.json"; diag "$T/dead229.json"
sed 1d "$T/dead.json.out" > "$T/a"; sed 1d "$T/dead229.json.out" > "$T/b"
cmp -s "$T/a" "$T/b" || fail "2.28.9 and 2.29 forms give different verdicts"
assert_grep '^MISSING_RANK: rank 2: process gone or unreachable' "$T/dead.json.out"
assert_grep 'pid 102 on 10\.0\.0\.2, considered dead by RAS' "$T/dead.json.out"
# the gone rank is a fact of its process (gone: alive false), judged by the
# ordinary rule (rule_fate.c), not a verdict RAS builds on its own
"$NW_CLI" diagnose --json "$T/dead.json" | python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
print(" ".join("%s:%s" % (p["rank"], p["alive"]) for p in j["processes"]))' > "$T/dead.alive"
assert_eq "$(cat "$T/dead.alive")" "0:None 1:None 2:False" "dead.json: the gone rank's process is gone, the others unknown"

note "a directory with Flight Recorder dumps (JSON form) and a RAS report: both read, each its own job"
mkdir -p "$T/mixed"
python3 "$NW_ROOT/tests/gen/frgen.py" size-mismatch "$T/mixed" --json > /dev/null || fail "frgen failed"
cp "$T/three.json" "$T/mixed/ras.json"
"$NW_CLI" diagnose "$T/mixed" > "$T/mixed.out"; rc=$?
grep -E '^(job|[A-Z_]+:) ' "$T/mixed.out" | sed 's/^/    /'
assert_eq "$rc" 1 "diagnose exit status"
assert_grep '^job fr:' "$T/mixed.out"
assert_grep '^MISMATCH: rank 1 called AllReduce' "$T/mixed.out"
assert_grep "^job ras $T/mixed/ras\\.json: " "$T/mixed.out"
assert_grep '^MISSING_RANK: rank 3 never launched the Broadcast the others launched last on comm 0x00000000000000b3' "$T/mixed.out"
