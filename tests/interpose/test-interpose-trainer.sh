#!/bin/sh
# The example trainer on the simulation, 4 and 8 ranks, with and without
# libncclwatch.so: the job's output and exit status are identical (results
# verified by the trainer itself, return codes including ncclInProgress and
# an injected GPU fault), and the segments line the ranks up: the same comm
# ids (world and split), the same collective sequence (kind, seq, count,
# type, op, root) on every rank, and send #k A->B matched by receive #k on B
# from A.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
export NCCLSIM_GPUS=8

# run_both NAME SECS ARGS...: the trainer plain, then watched (job NAME,
# segments kept); the two outputs, sorted and without pids, must match.
run_both() {
	_name=$1; _secs=$2; shift 2
	trainer_run "$_secs" "$T/$_name.plain" "$@" > /dev/null
	plain_status=$TRAINER_STATUS
	watched_run "$_secs" "$T/$_name.watched" "$_name" "$@"
	watched_status=$TRAINER_STATUS
	sed -E 's/pid [0-9]+/pid P/' "$T/$_name.watched" | sort
	assert_eq "$watched_status" "$plain_status" "$_name: exit status under the preload"
	for v in plain watched; do sed -E 's/pid [0-9]+/pid P/' "$T/$_name.$v" | sort > "$T/$_name.$v.norm"; done
	diff "$T/$_name.plain.norm" "$T/$_name.watched.norm" || fail "$_name: output differs under the preload"
	assert_no_grep 'ncclwatch:' "$T/$_name.watched"
}

# check_job NAME NRANKS COLLS_PER_RANK: the cross-rank identities.
check_job() {
	_dir="$NCCLWATCH_DIR/$1"; _n=$2
	assert_eq "$(segments "$_dir" | grep -c .)" "$_n" "$1: segment files"
	: > "$T/$1.sends"; : > "$T/$1.recvs"; : > "$T/$1.commsets"
	for seg in $(segments "$_dir"); do
		show "$seg" > "$T/seg.show"
		world=$(grep '^  comm 0 ' "$T/seg.show")
		rank=$(echo "$world" | field rank | cut -d/ -f1)
		# comm ids: every rank has the same set (world + split)
		grep '^  comm ' "$T/seg.show" | field id | sort | tr '\n' ' ' >> "$T/$1.commsets"; echo >> "$T/$1.commsets"
		grep '^  comm ' "$T/seg.show" | grep -q 'state=DESTROYED' || fail "$1: comms not destroyed: $seg"
		# the collective sequence of the world comm, per rank
		grep -E '^  op .* (AllReduce|Broadcast|Bcast|Reduce|AllGather|ReduceScatter|AlltoAll|Gather|Scatter) ' "$T/seg.show" \
			| sed -E 's/^  op [0-9]+//; s/ (t|tid|started|ended|caller|stream|result|rank)=[^ ]+//g' > "$T/$1.colls.$rank"
		[ -s "$T/$1.colls.$rank" ] || fail "$1: rank $rank recorded no collective"
		# (started= differs from rank to rank: it is when the watchdog saw the
		# op begin.) The watchdog saw every op of a job that ended well
		# complete on the GPU.
		grep -E '^  op .* (AllReduce|Broadcast|Send|Recv) ' "$T/seg.show" | grep -v ' state=COMPLETED ' > "$T/seg.notdone"
		[ ! -s "$T/seg.notdone" ] || { head -n 3 "$T/seg.notdone"; fail "$1: rank $rank has ops not COMPLETED"; }
		# the seqs of the world comm are 1..N in order, and coll_enqueued = N
		ncoll=$(grep -c . "$T/$1.colls.$rank")
		assert_eq "$(field seq < "$T/$1.colls.$rank" | tr '\n' ' ')" "$(seq 1 "$ncoll" | tr '\n' ' ')" "$1: rank $rank seqs"
		assert_eq "$(echo "$world" | field coll_enqueued)" "$ncoll" "$1: rank $rank coll_enqueued"
		# send/recv as "from to k" on the split comm, in world ranks = split ranks here
		grep -E '^  op .* Send ' "$T/seg.show" | while read -r l; do
			echo "$(echo " $l" | field rank | cut -d/ -f1) $(echo " $l" | field peer) $(echo " $l" | field seq) $(echo " $l" | field count)"
		done >> "$T/$1.sends"
		grep -E '^  op .* Recv ' "$T/seg.show" | while read -r l; do
			echo "$(echo " $l" | field peer) $(echo " $l" | field rank | cut -d/ -f1) $(echo " $l" | field seq) $(echo " $l" | field count)"
		done >> "$T/$1.recvs"
	done
	assert_eq "$(sort -u "$T/$1.commsets" | grep -c .)" 1 "$1: comm ids differ across ranks"
	assert_eq "$(head -n 1 "$T/$1.commsets" | wc -w)" 2 "$1: world + split comm"
	r=1
	while [ $r -lt "$_n" ]; do
		diff "$T/$1.colls.0" "$T/$1.colls.$r" > /dev/null || { diff "$T/$1.colls.0" "$T/$1.colls.$r" | head; fail "$1: rank $r's collectives differ from rank 0's"; }
		r=$((r + 1))
	done
	sort "$T/$1.sends" > "$T/$1.sends.s"; sort "$T/$1.recvs" > "$T/$1.recvs.s"
	[ -s "$T/$1.sends.s" ] || fail "$1: no sends recorded"
	diff "$T/$1.sends.s" "$T/$1.recvs.s" > /dev/null || { diff "$T/$1.sends.s" "$T/$1.recvs.s" | head; fail "$1: sends and receives do not pair up"; }
	note "$1: $(grep -c . "$T/$1.colls.0") collectives per rank, $(grep -c . "$T/$1.sends.s") matched send/recv pairs"
}

note "4 ranks, pipeline"
run_both p4 120 --nranks 4 --steps 12 --pipeline --bcast-every 5
assert_eq "$plain_status" 0 "trainer status"
check_job p4 4
assert_eq "$(grep -c ' AllReduce ' "$T/p4.colls.0")" 12 "all-reduces of rank 0"
assert_eq "$(grep -c ' Broadcast ' "$T/p4.colls.0")" 3 "broadcasts of rank 0"

note "8 ranks, pipeline, non-blocking communicators (ncclInProgress)"
run_both nb8 180 --nranks 8 --steps 5 --pipeline --nonblocking --device-per-rank
assert_eq "$plain_status" 0 "trainer status"
check_job nb8 8
show "$NCCLWATCH_DIR/nb8" > "$T/nb8.show"
assert_grep 'op .* AllReduce .* result=ncclInProgress .*flags=inplace,nonblocking' "$T/nb8.show"
assert_eq "$(grep '^  comm ' "$T/nb8.show" | grep -c 'blocking=0')" 16 "non-blocking comms"
assert_no_grep '^  comm .*state=INIT_ASYNC' "$T/nb8.show"

note "4 ranks, an injected GPU fault: the same failure with and without the preload"
# Rank 2 fails; the others then wait for it forever, so each run is ended
# once rank 2 reported its error.
for v in plain watched; do
	export NCCLSIM_FAULT=gpufault:rank=2:seq=3
	if [ $v = watched ]; then
		watched_start "$T/gf.$v" gf --nranks 4 --steps 6
	else
		trainer_start "$T/gf.$v" --nranks 4 --steps 6
	fi
	unset NCCLSIM_FAULT
	wait_for_line 60 'rank 2 step [0-9]+: .*failed' "$T/gf.$v"
	trainer_kill
	grep 'rank 2 step' "$T/gf.$v" > "$T/gf.$v.err"
done
cat "$T/gf.watched.err"
diff "$T/gf.plain.err" "$T/gf.watched.err" || fail "the failure differs under the preload"
assert_grep 'CUDA_ERROR_ILLEGAL_ADDRESS' "$T/gf.watched.err"

note "4 ranks, rank 1 stuck inside ncclCommInitRank: the init is visible as entered, not returned"
# (the other ranks wait for rank 1 in the rendezvous, so all four are inside)
NCCLSIM_FAULT=initstall:rank=1 watched_start "$T/initstall.out" initstall --nranks 4 --steps 3
nw_until 30 sh -c "[ \$('$NW_CLI' show '$NCCLWATCH_DIR/initstall' | grep -c 'comm 0 .*state=INIT_ENTERED') -eq 4 ]" \
	|| { "$NW_CLI" show "$NCCLWATCH_DIR/initstall" | grep 'comm 0'; fail "4 ranks not in INIT_ENTERED"; }
show "$NCCLWATCH_DIR/initstall" > "$T/initstall.show"
assert_eq "$(grep -c 'op .* CommInit .*state=INIT_ENTERED' "$T/initstall.show")" 4 "CommInit records entered"
assert_no_grep 'op .* (AllReduce|INIT_DONE)' "$T/initstall.show"
kill -0 "$TRAINER_PID" || fail "the job ended instead of hanging in init"
trainer_kill
