#!/bin/sh
# Eager sends, as on real NCCL 2.28.9 (measured on an H100): a send no
# larger than the connection's buffer (NCCL_BUFFSIZE, 4 MiB) completes
# before its receive is posted and the receive later gets its data; one
# such message is buffered per pair at a time; a 16 MiB send waits for its
# receive. With NCCL_PROTO=Simple, or a buffer smaller than the message,
# a 4 KiB send waits for its receive too.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/sim/nccl/sim_nccl_test.sh"
run_ok p2p-eager 60 "$SCEN" p2p-eager 2
for line in 'rank 0: 4 KiB send completed without its receive' 'rank 0: the third send waits while the second is buffered' \
	'rank 0: 16 MiB send waits for its receive' 'rank 1: every message arrived whole'; do
	grep -q "$line" "$T/p2p-eager.out" || fail "p2p-eager: no '$line'"
done
run_ok p2p-simple 60 env NCCL_PROTO=Simple "$SCEN" p2p-rendezvous 2
run_ok p2p-smallbuf 60 env NCCL_BUFFSIZE=1024 "$SCEN" p2p-rendezvous 2
run_ok p2p-ll128 60 env NCCL_PROTO=LL128 "$SCEN" p2p-eager 2
for t in p2p-simple p2p-smallbuf; do
	grep -q 'rank 0: 4 KiB send waits for its receive' "$T/$t.out" || fail "$t: the send did not wait"
	grep -q 'rank 1: the message arrived' "$T/$t.out" || fail "$t: the message did not arrive"
done
