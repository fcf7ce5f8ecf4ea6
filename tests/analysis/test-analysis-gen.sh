#!/bin/sh
# Every scenario of tests/gen/nwgen.c, generated and analyzed: the verdicts
# are exactly the "expect" and "also" lines nwgen prints (kind, comm, op,
# seq, culprits, waiting, unknown) and no other, at 8 ranks (with stacks),
# at a size whose groups do not divide it (13 ranks, groups of 3), as
# dumps, and with other options. Then the parts beyond the verdict lines:
# summaries, evidence, environment differences and merged stacks.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/analysis/analysis-lib.sh"
[ -x "$NW_GEN" ] || fail "$NW_GEN is not built"

SCENARIOS=$("$NW_GEN" --list | awk '{print $1}')
[ "$(echo "$SCENARIOS" | grep -c .)" -ge 21 ] || fail "nwgen --list: $SCENARIOS"

# run SCENARIO NRANKS [ANALYZE OPTIONS --] [NWGEN OPTIONS...]: generate into a
# fresh $T/g, analyze it into $T/out, compare with the expect lines.
run() {
	_s=$1 _n=$2; shift 2
	_aopt=
	case " $* " in *" -- "*)
		while [ "$1" != -- ]; do _aopt="$_aopt $1"; shift; done; shift ;;
	esac
	rm -rf "$T/g"
	"$NW_GEN" --scenario "$_s" --ranks "$_n" --out "$T/g" "$@" > "$T/exp" 2> "$T/exp.err" ||
		{ cat "$T/exp.err" >&2; fail "nwgen $_s $_n $*"; }
	# shellcheck disable=SC2086
	analyze "$T/out" $_aopt "$T/g"
	expect_verdicts "$T/exp" "$T/out" || fail "$_s, $_n ranks, $*"
	case "$_s" in healthy*) assert_eq "$AN_STATUS" 0 "$_s: status" ;; *) assert_eq "$AN_STATUS" 1 "$_s: status" ;; esac
}

note "every scenario, 8 ranks, stacks"
for s in $SCENARIOS; do run "$s" 8 --stacks; done
note "every scenario, 13 ranks, groups of 3, 2 hosts, dumps"
for s in $SCENARIOS; do run "$s" 13 --group 3 --hosts 2 --dump; done
note "every scenario, 6 ranks, culprit 0, a short history (the ring not wrapped), 16-record rings"
for s in $SCENARIOS; do run "$s" 6 --culprit 0 --history 3; run "$s" 6 --ring 16; done
note "stalls younger than the watchdog's timeout: HEALTHY, unless the timeout is lowered"
for s in missing_rank p2p_deadlock init_stall stream_blocked; do
	rm -rf "$T/g"
	"$NW_GEN" --scenario "$s" --ranks 8 --out "$T/g" --age 2 > "$T/exp"
	analyze "$T/out" "$T/g"
	assert_grep '^verdict HEALTHY ' "$T/out"
	run "$s" 8 --timeout 1 -- --age 2
done
note "missing files: more than one, and the culprit's too"
run missing_files 16 --drop 3,13
assert_grep '^job gen-missing_files procs=14 world=16 missing=3,13 ' "$T/out"
run missing_files 16 --drop 2-4 --culprit 9
note "ranks that exited"
for s in missing_rank init_stall idle; do run "$s" 12 --exited 1,2; done
assert_grep '^evidence ranks 1-2: .*; exited' "$T/out"

note "summaries and evidence"
run missing_rank 8 --stacks
assert_grep '^summary rank 5 never called AllReduce #301 on comm [0-9a-f]{16} \(8 ranks\); ranks 0-4,6-7 wait in it$' "$T/out"
assert_grep '^evidence rank 5: never called it \(coll_enqueued 300\); last NCCL call AllGather #151 on comm [0-9a-f]{16} "tp" \(COMPLETED\); idle: no NCCL call for [0-9]+ s; main thread: clock_nanosleep < nanosleep < load_batch < train_step ' "$T/out"
assert_grep '^evidence ranks 0-4,6-7: in it \(STARTED for [0-9]+ s\)$' "$T/out"
assert_grep '^hint the code path differs on those ranks$' "$T/out"
run mismatch_root 8
assert_grep '^summary rank 5 called Broadcast #301 on comm [0-9a-f]{16} \(8 ranks\) with root 1 where ranks 0-4,6-7 used root 0; they wait in it$' "$T/out"
run mismatch_dtype 8
assert_grep '^evidence rank 5: AllReduce count 4194304 float16 sum \(differs in datatype\), STARTED$' "$T/out"
run stream_blocked 8
assert_grep "^summary rank 5's AllReduce #301 on comm [0-9a-f]{16} \\(8 ranks\\) has not started in [0-9]+ s: its stream is busy with AllGather #151 on comm [0-9a-f]{16} \"tp\" \\(STARTED for [0-9]+ s\\)" "$T/out"
run gpu_fault 8
assert_grep '^summary rank 5.s AllReduce #301 on comm [0-9a-f]{16} failed on the GPU \(cuda_error 700 CUDA_ERROR_ILLEGAL_ADDRESS\), then async error ncclUnhandledCudaError on device 1 ' "$T/out"
assert_grep '^hint Xid / ECC .*CUDA_ERROR_ILLEGAL_ADDRESS' "$T/out"
run init_stall 8 --stacks
assert_grep '^summary ranks 0-4,6-7 are inside ncclCommInitRank of comm [0-9a-f]{16} \(8 ranks\) for [0-9]+ s; rank 5 never entered it$' "$T/out"
assert_grep '^evidence rank 5: never entered it; no NCCL op recorded; main thread: read < load_checkpoint ' "$T/out"
run p2p_deadlock 8
# A cycle (rank 4 waits in its Send for rank 5, rank 5 in the world #302
# for rank 4) in which rank 5 deviates: it sent #301 on but received only
# #300 from rank 4. The unmatched pair, the cycle said in its evidence, the
# world #302 folded in as a consequence.
assert_grep '^summary rank 4.s Send #301 to rank 5 on comm [0-9a-f]{16} "pp" is pending for [0-9]+ s, which rank 5 never received \(it posted receives from rank 4 up to #300\)$' "$T/out"
assert_grep '^evidence rank 5 deviates in a cycle of waits \(ranks 4-5\): its send/receive counts with its peers do not add up' "$T/out"
assert_grep '^evidence consequence: MISSING_RANK: rank 4 never called AllReduce #302 ' "$T/out"
run p2p_unexpected_peer 8
assert_grep "^summary rank 4's Send #301 to rank 5 .* never received .*; instead rank 5's Recv #1 from rank 6 .* never sent" "$T/out"
assert_grep '^evidence misdirected: ' "$T/out"
run transport_stall 8
assert_grep '^hint P2P or NVLink trouble: try NCCL_P2P_DISABLE=1 to confirm' "$T/out"
assert_grep '^evidence ranks 0-3: NCCL 2\.28\.9, CUDA driver 13\.0, host node0$' "$T/out"
assert_grep '^evidence ranks 4-7: NCCL 2\.28\.9, CUDA driver 13\.0, host node1$' "$T/out"

note "environment differences"
run transport_stall 8
assert_no_grep '^envdiff ' "$T/out"
run mixed_nccl 8
assert_grep '^envdiff "NCCL version" "2\.27\.3"=4-7 "2\.28\.9"=0-3$' "$T/out"
assert_grep '^envdiff "CUDA driver" "12\.4"=4-7 "13\.0"=0-3$' "$T/out"
assert_grep '^envdiff "NCCL library" ' "$T/out"
assert_grep '^envdiff "NCCL_P2P_DISABLE" ""=0-3 "1"=4-7$' "$T/out"
assert_eq "$(grep -c '^envdiff ' "$T/out")" 4 "mixed_nccl: differences"
run env_diff 12
assert_grep '^envdiff "NCCL_P2P_LEVEL" ""=4-11 "NVL"=0-3$' "$T/out"
assert_eq "$(grep -c '^envdiff ' "$T/out")" 1 "env_diff: differences"
assert_no_grep '^envdiff "(RANK|LOCAL_RANK)"' "$T/out"

note "merged stacks: one line per distinct main-thread stack, largest group first"
run missing_rank 8 --stacks
assert_eq "$(grep -c '^stack ' "$T/out")" 2 "stack groups"
assert_grep '^stack 0-4,6-7 train libcuda\.so\.1\+0x[0-9a-f]+ cuStreamSynchronize wait_for_step train_step run_rank main ' "$T/out"
assert_grep '^stack 5 train clock_nanosleep nanosleep load_batch train_step run_rank main ' "$T/out"
[ "$(grep '^stack ' "$T/out" | head -n 1 | cut -d' ' -f2)" = 0-4,6-7 ] || fail "the largest group is not first"
run init_stall 8 --stacks
assert_grep '^stack 0-4,6-7 train poll (libnccl\.so\.2\+0x[0-9a-f]+ )+ncclCommInitRank ncclCommInitRank setup_communicators ' "$T/out"
run healthy 8 --stacks
assert_no_grep '^stack ' "$T/out"

note "live files and dumps of the same processes are one process each"
rm -rf "$T/g"
"$NW_GEN" --scenario missing_rank --ranks 8 --out "$T/g" > "$T/exp"
"$NW_GEN" --scenario missing_rank --ranks 8 --out "$T/g" --dump > /dev/null
assert_eq "$(find "$T/g" -name '*.seg' | wc -l)" 16 "files"
analyze "$T/out" "$T/g"
expect_verdicts "$T/exp" "$T/out"
assert_grep '^job gen-missing_rank procs=8 world=8 missing=- ' "$T/out"

note "a file that is not a segment is listed and the others are analyzed"
echo "garbage" > "$T/g/gen-missing_rank/zz.bogus.seg"
analyze "$T/out" "$T/g"
expect_verdicts "$T/exp" "$T/out"
assert_grep '^bad .*zz\.bogus\.seg: ' "$T/out"
