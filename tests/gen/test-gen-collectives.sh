#!/bin/sh
# nwgen, collective scenarios with 8 ranks (culprit 5, frontier #301): every
# file reads back with `ncclwatch show` (no torn or unpublished record), and
# each scenario's facts (tests/gen/nwgen.c's table) are in what show prints.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gen/gen-lib.sh"

note "healthy"
gen healthy 8 --stacks
assert_grep '^expect verdict=HEALTHY ' "$E"
for r in 0 1 2 3 4 5 6 7; do
	assert_eq "$(comm_field $r 0 coll_enqueued)/$(comm_field $r 0 coll_completed)" 301/301 "rank $r world positions"
	assert_eq "$(comm_field $r 1 coll_completed)" 151 "rank $r comm 1 completed"
done
assert_no_grep '^  op .*state=(STARTED|ENQUEUED|FAILED)' "$S"
assert_no_grep 'stall_seen' "$S"
assert_eq "$(grep -c '^stacks never ' "$S")" 8 "no capture without a stall"
# A wrapped ring: 256 records kept, the older ones overwritten.
assert_eq "$(grep -c '^records shown=256 valid=256 torn=0 overwritten=198 unpublished=0 head=454 capacity=256$' "$S")" 8 "ring"

note "missing_rank"
gen missing_rank 8 --stacks
assert_grep '^expect verdict=MISSING_RANK comm=[0-9a-f]{16} nranks=8 op=AllReduce seq=301 culprits=5 waiting=0-4,6-7 unknown=- ' "$E"
assert_eq "$(comm_field 5 0 coll_enqueued)" 300 "rank 5 coll_enqueued"
case "$(last_op 5)" in *" AllGather comm="*" seq=151 "*"state=COMPLETED"*) ;; *) fail "rank 5's last op: $(last_op 5)" ;; esac
grep -q 'load_batch+0x63' "$(rank 5)" || fail "rank 5's stack is not in load_batch"
assert_eq "$(header 5 flags)" recording "rank 5 flags"
grep -q 'request_served=1$' "$(rank 5)" || fail "rank 5 did not serve the dump request"
for r in $(ranks_except 5 8); do
	assert_eq "$(comm_field $r 0 coll_enqueued)" 301 "rank $r coll_enqueued"
	case "$(last_op $r)" in *" AllReduce comm="*" seq=301 "*"state=STARTED"*) ;; *) fail "rank $r's last op: $(last_op $r)" ;; esac
	assert_eq "$(header $r flags)" recording,stall_seen "rank $r flags"
	grep -q 'cuStreamSynchronize+0x6a' "$(rank $r)" || fail "rank $r's stack is not in cuStreamSynchronize"
done

note "alltoall"
gen alltoall 8
assert_grep '^expect verdict=MISSING_RANK .* op=AlltoAll seq=301 culprits=5 ' "$E"
assert_eq "$(comm_field 5 0 coll_enqueued)" 300 "rank 5 coll_enqueued"
assert_eq "$(grep -c '^  op .* AlltoAll .* seq=301 .*state=STARTED' "$S")" 7 "AlltoAll #301 STARTED"

note "missing_files (default: the culprit's file)"
NW_GEN_FILES=7 gen missing_files 8
assert_grep '^expect verdict=MISSING_RANK .* culprits=- waiting=0-4,6-7 unknown=5 ' "$E"
[ ! -e "$G/node1.10005.seg" ] || fail "rank 5's file was written"
assert_eq "$(grep -c '^  world_size   8$' "$S")" 7 "world_size"
note "missing_files --drop 1,6-7"
NW_GEN_FILES=5 gen missing_files 8 --drop 1,6-7
assert_grep '^expect verdict=MISSING_RANK .* culprits=5 waiting=0,2-4 unknown=1,6-7 ' "$E"
assert_eq "$(comm_field 5 0 coll_enqueued)" 300 "rank 5 coll_enqueued"

note "mismatches"
gen mismatch_op 8
assert_grep '^expect verdict=MISMATCH .* op=AllReduce seq=301 culprits=5 waiting=0-4,6-7 ' "$E"
case "$(last_op 5)" in *" Broadcast comm="*" seq=301 "*"state=STARTED"*) ;; *) fail "rank 5: $(last_op 5)" ;; esac
assert_eq "$(grep -c '^  op .* AllReduce .* seq=301 .*state=STARTED' "$S")" 7 "AllReduce #301 elsewhere"

gen mismatch_count 8
assert_eq "$(op_field "$(last_op 5)" count)" 2097152 "rank 5's count"
assert_eq "$(grep -c '^  op .* AllReduce .* seq=301 count=4194304 .*state=STARTED' "$S")" 7 "others' count"

gen mismatch_dtype 8
assert_eq "$(op_field "$(last_op 5)" dtype)" float16 "rank 5's dtype"
assert_eq "$(grep -c '^  op .* seq=301 .*dtype=bfloat16 .*state=STARTED' "$S")" 7 "others' dtype"

gen mismatch_root 8
assert_grep '^expect verdict=MISMATCH .* op=Broadcast seq=301 culprits=5 ' "$E"
assert_eq "$(op_field "$(last_op 5)" root)" 1 "rank 5's root"
assert_eq "$(grep -c '^  op .* Broadcast .* seq=301 .* root=0 .*state=STARTED' "$S")" 7 "others' root"

gen mismatch_redop 8
assert_eq "$(op_field "$(last_op 5)" redop)" max "rank 5's redop"
assert_eq "$(grep -c '^  op .* seq=301 .* redop=sum .*state=STARTED' "$S")" 7 "others' redop"
echo "ok"
