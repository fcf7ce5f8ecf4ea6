#!/bin/sh
# nwgen, point-to-point scenarios with 8 ranks: comm 1 ("pp") splits the
# world into groups 0-3 and 4-7, each step is world collective #s then a
# ring exchange in a group (Send #s to comm rank p+1, Recv #s from p-1).
# Culprit K = 5 (comm rank 1 of the second group), A = 4 its predecessor,
# C = 6 its successor; the exchange of step 301 is the frontier.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gen/gen-lib.sh"

note "healthy_p2p"
gen healthy_p2p 8
assert_grep '^expect verdict=HEALTHY ' "$E"
for r in 0 1 2 3 4 5 6 7; do
	p=$((r % 4))
	next=$(((p + 1) % 4)) prev=$(((p + 3) % 4))
	assert_eq "$(peer_field $r $next send_enqueued)/$(peer_field $r $next send_completed)" 301/301 "rank $r sends"
	assert_eq "$(peer_field $r $prev recv_enqueued)/$(peer_field $r $prev recv_completed)" 301/301 "rank $r receives"
	assert_eq "$(comm_field $r 1 p2p_enqueued)/$(comm_field $r 1 p2p_completed)" 602/602 "rank $r p2p totals"
	assert_eq "$(comm_field $r 1 name)" pp "rank $r comm 1 name"
done
assert_no_grep '^  op .*state=(STARTED|ENQUEUED)' "$S"
assert_grep '^  op .* GroupEnd .* seq=301 .*state=INIT_DONE ' "$S"

note "p2p_unmatched"
gen p2p_unmatched 8 --stacks
assert_grep '^expect verdict=P2P_UNMATCHED comm=[0-9a-f]{16} nranks=4 op=Send seq=301 culprits=5 waiting=0-4,6-7 ' "$E"
assert_no_grep '^also ' "$E"   # the world #302 that A and K never issued is a consequence
pp=$(sed -n 's/^expect .* comm=\([0-9a-f]*\) .*/\1/p' "$E")
assert_eq "$(comm_field 4 1 id)" "$pp" "rank 4's comm 1 is the verdict's"
assert_eq "$(peer_field 4 1 send_enqueued)/$(peer_field 4 1 send_completed)" 301/300 "A's sends to K"
assert_grep '^  op .* Send comm=.* seq=301 .* peer=1 .*state=STARTED ' "$(rank 4)"
assert_eq "$(peer_field 5 0 recv_enqueued)" 300 "K's receives from A"
assert_eq "$(peer_field 5 2 send_enqueued)/$(peer_field 5 2 send_completed)" 301/301 "K's sends to C"
assert_eq "$(comm_field 5 0 coll_enqueued)/$(comm_field 4 0 coll_enqueued)" 301/301 "K and A never issued #302"
grep -q 'load_batch+0x63' "$(rank 5)" || fail "K is not idle in load_batch"
assert_eq "$(header 5 flags)" recording "K saw no stall"
for r in 0 1 2 3 6 7; do
	case "$(last_op $r)" in *" AllReduce comm="*" seq=302 "*"state=STARTED"*) ;; *) fail "rank $r: $(last_op $r)" ;; esac
done

note "p2p_unexpected_peer"
gen p2p_unexpected_peer 8
assert_grep '^expect verdict=P2P_UNMATCHED .* op=Send seq=301 culprits=5 ' "$E"
assert_eq "$(peer_field 4 1 send_enqueued)/$(peer_field 4 1 send_completed)" 301/300 "A's sends to K"
assert_eq "$(peer_field 5 0 recv_enqueued)" 300 "K's receives from A"
assert_grep '^  op .* Recv comm=.* seq=1 .* peer=2 .*state=STARTED ' "$(rank 5)"
assert_eq "$(peer_field 5 2 recv_enqueued)/$(peer_field 5 2 recv_completed)" 1/0 "K's receives from C"
assert_eq "$(peer_field 6 1 send_enqueued)" 0 "C's sends to K"
assert_eq "$(peer_field 6 1 recv_completed)" 301 "C received K's #301"
case "$(last_op 6)" in *" AllReduce comm="*" seq=302 "*"state=STARTED"*) ;; *) fail "rank 6: $(last_op 6)" ;; esac

note "p2p_deadlock"
gen p2p_deadlock 8
# K (5) deviates: it sent #301 to C but received only 300 from A; A only waits.
assert_grep '^expect verdict=P2P_UNMATCHED .* op=Send seq=301 culprits=5 waiting=0-4,6-7 ' "$E"
assert_no_grep '^also ' "$E"
assert_grep '^  op .* Send comm=.* seq=301 .* peer=1 .*state=STARTED ' "$(rank 4)"
assert_eq "$(comm_field 4 0 coll_enqueued)" 301 "A never issued #302"
assert_eq "$(peer_field 5 0 recv_enqueued)" 300 "K's receives from A"
case "$(last_op 5)" in *" AllReduce comm="*" seq=302 "*"state=STARTED"*) ;; *) fail "rank 5: $(last_op 5)" ;; esac
assert_eq "$(grep -c '^  op .* AllReduce .* seq=302 .*state=STARTED' "$S")" 7 "everyone but A in #302"

note "p2p_unexpected_peer needs groups of 3"
"$NW_GEN" --scenario p2p_unexpected_peer --ranks 8 --group 2 --out "$T/x" > "$T/o" 2> "$T/e"
assert_eq "$?" 2 "exit status with groups of 2"
assert_grep "^nwgen: p2p_unexpected_peer: rank 5's group of comm 1 has 2 ranks" "$T/e"
echo "ok"
