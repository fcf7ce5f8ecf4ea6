#!/bin/sh
# Slowness past the timeout, not a hang: the watchdog reports it while it
# lasts (findings at least the timeout old) and clears it after.
#
#  - --fault sleep:rank=4:step=3:ms=4000: rank 4 sleeps on the host before
#    step 3's all-reduce (#4, --bcast-every 0). The other seven have
#    launched #4: their GPUs reached it and wait for rank 4, so they report
#    state=STARTED (age >= timeout). Rank 4 has nothing pending on its GPU:
#    no finding, but it serves the dump request. Then rank 4 wakes, the job
#    ends well, and each of the seven prints "stall cleared" (with
#    NCCLSIM_FAULT=slow:rank=4:ms=300 every later step lasts 300 ms, so they
#    live for several polls after the clearing), and keeps its segment at
#    exit (it saw a stall) while rank 4's is removed.
#
#  - NCCLSIM_FAULT=slow:rank=4:ms=20000 with --pipeline: each work item of
#    rank 4 sleeps before doing its op. The simulation sleeps INSIDE the
#    work item, after the stream reached it, i.e. after the start event
#    completed: to the watchdog (as to CUDA) this is a kernel that started
#    and runs long, so rank 4's all-reduce #1 is STARTED, not ENQUEUED (as
#    are the others', waiting for rank 4). What is ENQUEUED is the work
#    queued behind it on the same stream: the ring's Send/Recv group (on the
#    pipeline comm), which the GPU has not reached: rank 4 (and every rank,
#    their all-reduce waits for rank 4) reports op=Send #1 state=ENQUEUED
#    "enqueued, the GPU has not reached it" with age >= timeout, on the
#    other comm.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"

note "--fault sleep:rank=4:step=3:ms=4000 (timeout ${WD_TIMEOUT}s)"
stuck="0 1 2 3 5 6 7"
NCCLSIM_FAULT=slow:rank=4:ms=300 wd_run 120 "$T/sleep" sleep --nranks 8 --steps 8 --bcast-every 0 \
	--fault sleep:rank=4:step=3:ms=4000
grep -E '^(ncclwatch|trainer|rank 4 step)' "$T/sleep"
assert_eq "$TRAINER_STATUS" 0 "exit status (slowness is not an error)"
assert_grep 'trainer: all 8 ranks ok$' "$T/sleep"
assert_findings "$T/sleep" STARTED AllReduce 4 $stuck
[ -z "$(rank_stalls 4 "$T/sleep")" ] || fail "rank 4 (sleeping on the host, nothing on its GPU) reported"
assert_grep 'ncclwatch: dump requested by rank=[0-9]+ pid=[0-9]+ host=[^ ]+: rank=4 pid=[0-9]+ wrote ' "$T/sleep"
for r in $stuck; do
	n=$(grep -c "ncclwatch: stall cleared: rank=$r pid=[0-9]*: " "$T/sleep")
	assert_eq "$n" 1 "rank $r: 'stall cleared' lines"
	# the line comes after the finding
	sed -n "/^ncclwatch: stall: rank=$r /,\$p" "$T/sleep" | grep -q "ncclwatch: stall cleared: rank=$r " \
		|| fail "rank $r: 'stall cleared' before its finding"
done
assert_no_grep 'ncclwatch: stall cleared: rank=4 ' "$T/sleep"
note "at exit: the seven that saw a stall keep their segment, rank 4 does not"
live=$(segments "$NCCLWATCH_DIR/sleep" | grep -v '\.dump\.seg$')
assert_eq "$(echo "$live" | grep -c .)" 7 "live segments left"
for s in $live; do
	show "$s" > "$T/seg.show"
	assert_grep '^  flags +.*exited' "$T/seg.show"
	assert_grep '^  flags +.*stall_seen' "$T/seg.show"
	assert_no_grep '^  rank +4$' "$T/seg.show"
	grep -E " $WD_GPU_OPS comm=" "$T/seg.show" | grep -v ' state=COMPLETED ' > "$T/bad" || true
	[ ! -s "$T/bad" ] || { head -n 3 "$T/bad"; fail "ops not COMPLETED after the job ended"; }
done

note "NCCLSIM_FAULT=slow:rank=4:ms=20000 --pipeline"
NCCLSIM_FAULT=slow:rank=4:ms=20000 wd_start "$T/slow" slow --nranks 8 --steps 1 --bcast-every 0 --pipeline
wait_for_count $WD_WAIT 16 'ncclwatch: stall: ' "$T/slow"
stall_lines "$T/slow"
world= pipe=
for r in 0 1 2 3 4 5 6 7; do
	rank_stalls $r "$T/slow" > "$T/r"
	assert_eq "$(grep -c . "$T/r")" 2 "rank $r: findings"
	ar=$(grep ' op=AllReduce seq=1 ' "$T/r")
	send=$(grep ' op=Send seq=1 ' "$T/r")
	echo "$ar" | grep -q ' state=STARTED age=[0-9.]*s: started on the GPU, not completed; ' \
		|| fail "rank $r: all-reduce #1 not STARTED: $ar"
	echo "$send" | grep -q " comm_rank=$r/8 peer=$(( (r + 1) % 8 )) state=ENQUEUED age=[0-9.]*s: enqueued, the GPU has not reached it; " \
		|| fail "rank $r: send #1 not ENQUEUED: $send"
	assert_age_at_least "$ar" "$WD_TIMEOUT"
	assert_age_at_least "$send" "$WD_TIMEOUT"
	[ -n "$world" ] || world=$(finding_value comm "$ar")
	[ -n "$pipe" ] || pipe=$(finding_value comm "$send")
	assert_eq "$(finding_value comm "$ar")" "$world" "rank $r: world comm"
	assert_eq "$(finding_value comm "$send")" "$pipe" "rank $r: pipeline comm"
done
[ "$world" != "$pipe" ] || fail "the all-reduce and the send are on one comm"
show "$(dump_of "$(rank_stalls 4 "$T/slow" | grep ' op=Send ')")" > "$T/dump4.show"
assert_grep "^  op .* AllReduce comm=$world rank=4/8 seq=1 .* state=STARTED " "$T/dump4.show"
assert_grep "^  op .* Send comm=$pipe rank=4/8 seq=1 .* state=ENQUEUED .* started=- ended=- " "$T/dump4.show"
assert_grep "^  op .* Recv comm=$pipe rank=4/8 seq=1 .* state=ENQUEUED .* started=- ended=- " "$T/dump4.show"
trainer_kill
wd_check_outputs
