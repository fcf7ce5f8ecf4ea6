#!/bin/sh
# nwgen, stall scenarios with 8 ranks (culprit 5, frontier #301, 2 hosts of
# 4): transport stalls (and their environment differences), a blocked
# stream, a GPU fault, init stalls, an idle job. Every file reads back with
# `ncclwatch show`; each scenario's facts are in what it prints.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gen/gen-lib.sh"

note "transport_stall"
gen transport_stall 8
assert_grep '^expect verdict=TRANSPORT_STALL comm=[0-9a-f]{16} nranks=8 op=AllReduce seq=301 culprits=- waiting=0-7 ' "$E"
for r in 0 1 2 3 4 5 6 7; do
	assert_eq "$(comm_field $r 0 coll_started)/$(comm_field $r 0 coll_completed)" 301/300 "rank $r positions"
	case "$(last_op $r)" in *" AllReduce comm="*" seq=301 "*"state=STARTED"*) ;; *) fail "rank $r: $(last_op $r)" ;; esac
done
assert_eq "$(grep -c '^  flags        recording,stall_seen$' "$S")" 8 "stall_seen"
assert_eq "$(grep -c '^  nccl         2.28.9$' "$S")" 8 "one NCCL version"

note "mixed_nccl"
gen mixed_nccl 8
assert_grep '^expect verdict=TRANSPORT_STALL ' "$E"
for r in 4 5 6 7; do
	assert_eq "$(header $r host)" node1 "rank $r host"
	assert_eq "$(header $r nccl)" 2.27.3 "rank $r NCCL"
	assert_eq "$(header $r cuda_driver)" 12.4 "rank $r driver"
	grep -q '^  env          NCCL_P2P_DISABLE=1$' "$(rank $r)" || fail "rank $r has no NCCL_P2P_DISABLE=1"
done
for r in 0 1 2 3; do
	assert_eq "$(header $r nccl)/$(header $r cuda_driver)" 2.28.9/13.0 "rank $r versions"
	! grep -q NCCL_P2P_DISABLE "$(rank $r)" || fail "rank $r has NCCL_P2P_DISABLE"
done
assert_eq "$(grep -c '^  op .* seq=301 .*state=STARTED' "$S")" 8 "#301 STARTED everywhere"

note "env_diff"
gen env_diff 8
assert_eq "$(grep -c '^  env          NCCL_P2P_LEVEL=NVL$' "$S")" 4 "ranks with NCCL_P2P_LEVEL"
for r in 0 1 2 3; do grep -q 'NCCL_P2P_LEVEL=NVL' "$(rank $r)" || fail "rank $r lacks NCCL_P2P_LEVEL"; done
assert_eq "$(grep -c '^  op .* seq=301 .*state=STARTED' "$S")" 8 "#301 STARTED everywhere"

note "stream_blocked"
gen stream_blocked 8 --stacks
assert_grep '^expect verdict=STREAM_BLOCKED .* op=AllReduce seq=301 culprits=5 waiting=0-4,6-7 ' "$E"
grep '^  op ' "$(rank 5)" | tail -n 2 > "$T/k"
assert_grep ' AllGather comm=.* seq=151 .*state=STARTED .*ended=- ' "$T/k"
assert_grep ' AllReduce comm=.* seq=301 .*state=ENQUEUED .*started=- ended=- ' "$T/k"
s1=$(sed -n '1s/.* stream=\(0x[0-9a-f]*\) .*/\1/p' "$T/k")
s2=$(sed -n '2s/.* stream=\(0x[0-9a-f]*\) .*/\1/p' "$T/k")
assert_eq "$s1" "$s2" "one stream for both"
assert_eq "$(comm_field 5 0 coll_enqueued)/$(comm_field 5 0 coll_started)" 301/300 "rank 5 world positions"
assert_eq "$(comm_field 5 1 coll_started)/$(comm_field 5 1 coll_completed)" 151/150 "rank 5 comm-1 positions"
grep -q 'findings=2 ' "$(rank 5)" || fail "rank 5: two findings"
for r in 4 6 7; do
	assert_eq "$(comm_field $r 1 coll_completed)" 151 "rank $r completed the AllGather"
done
for r in $(ranks_except 5 8); do
	case "$(last_op $r)" in *" AllReduce comm="*" seq=301 "*"state=STARTED"*) ;; *) fail "rank $r: $(last_op $r)" ;; esac
done

note "gpu_fault"
gen gpu_fault 8
assert_grep '^expect verdict=GPU_FAULT .* op=AllReduce seq=301 culprits=5 waiting=0-4,6-7 ' "$E"
assert_grep '^  op .* AllReduce comm=.* seq=301 .*state=FAILED result=ncclSuccess cuda_error=700 ' "$(rank 5)"
case "$(last_op 5)" in *" AsyncError comm="*"state=FAILED result=ncclUnhandledCudaError"*) ;; *) fail "rank 5: $(last_op 5)" ;; esac
assert_eq "$(comm_field 5 0 async_error)" ncclUnhandledCudaError "rank 5 async_error"
assert_eq "$(grep -c 'cuda_error=700' "$S")" 1 "one failed op in the job"
for r in $(ranks_except 5 8); do
	case "$(last_op $r)" in *" AllReduce comm="*" seq=301 "*"state=STARTED"*) ;; *) fail "rank $r: $(last_op $r)" ;; esac
	assert_eq "$(comm_field $r 0 async_error)" ncclSuccess "rank $r async_error"
done

note "init_stall"
gen init_stall 8 --stacks
assert_grep '^expect verdict=INIT_STALL .* op=CommInit seq=0 culprits=5 waiting=0-4,6-7 ' "$E"
assert_grep '^comms count=0 capacity=4$' "$(rank 5)"
assert_grep '^records shown=0 valid=0 torn=0 overwritten=0 unpublished=0 head=0 ' "$(rank 5)"
grep -q 'load_checkpoint+0x41' "$(rank 5)" || fail "rank 5 is not in load_checkpoint"
for r in $(ranks_except 5 8); do
	assert_eq "$(comm_field $r 0 state)" INIT_ENTERED "rank $r comm state"
	case "$(last_op $r)" in *" CommInit comm="*"state=INIT_ENTERED"*"ended=-"*) ;; *) fail "rank $r: $(last_op $r)" ;; esac
	grep -q '^  thread [0-9]* "train" in-nccl$' "$(rank $r)" || fail "rank $r's main thread is not in NCCL"
done

gen init_stall_all 8
assert_grep '^expect verdict=INIT_STALL .* culprits=- waiting=0-7 ' "$E"
assert_eq "$(grep -c '^  comm 0 .* state=INIT_ENTERED ' "$S")" 8 "every rank inside init"
assert_eq "$(grep -c '^comms count=1 ' "$S")" 8 "one comm each"

note "idle"
gen idle 8
assert_grep '^expect verdict=IDLE .* culprits=0-7 ' "$E"
assert_eq "$(grep -c '^  comm [01] .*state=INIT_DONE .*coll_enqueued=0 ' "$S")" 16 "two comms each, no collective"
assert_no_grep '^  op .* (AllReduce|Broadcast|AllGather) ' "$S"
assert_no_grep 'stall_seen' "$S"
echo "ok"
