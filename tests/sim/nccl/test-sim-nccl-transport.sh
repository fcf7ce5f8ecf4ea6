#!/bin/sh
# Transport selection (tests/sim/README.md): each rank's NCCL_P2P_DISABLE,
# NCCL_P2P_LEVEL and NCCL_SHM_DISABLE, read at its first init, pick P2P, SHM
# or NET; when ranks of a communicator picked differently, the connection
# (set up at the first collective, or the first send/recv with a peer) never
# completes, the op hangs on every rank concerned, with no error.
#  transport-ok    the same transport everywhere: collectives, a send/recv
#                  ring and a split comm all complete
#  transport-hang  the last of 4 ranks differs: an exchange 0<->1 completes,
#                  one 2<->3 hangs, the first all-reduce hangs on all 4, no
#                  async error, ncclCommAbort ends it
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/sim/nccl/sim_nccl_test.sh"
unset NCCL_P2P_DISABLE NCCL_P2P_LEVEL NCCL_SHM_DISABLE

ok() {
	tr_name=$1 tr_odd=$2; shift 2
	TSIM_ODD_ENV=$tr_odd run_ok "ok-$tr_name" 60 env "$@" "$SCEN" transport-ok 4
	assert_eq "$(grep -c 'transports agree, every op completed' "$T/ok-$tr_name.out")" 4 "ok-$tr_name: ranks that completed"
}
hang() {
	tr_name=$1 tr_odd=$2; shift 2
	TSIM_ODD_ENV=$tr_odd run_ok "hang-$tr_name" 60 env "$@" "$SCEN" transport-hang 4
	assert_eq "$(grep -c 'first all-reduce hung until abort' "$T/hang-$tr_name.out")" 4 "hang-$tr_name: ranks that hung"
}

note "consistent settings work"
ok default ''
ok all-p2p-disable '' NCCL_P2P_DISABLE=1
ok all-level-loc '' NCCL_P2P_LEVEL=LOC
ok all-net '' NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
ok p2p-disable-0 NCCL_P2P_DISABLE=0                  # 0 is the default: P2P on
ok level-nvl NCCL_P2P_LEVEL=NVL                      # NVLink path: P2P either way
ok level-sys NCCL_P2P_LEVEL=SYS
ok shm-off-p2p-on NCCL_SHM_DISABLE=1                 # P2P chosen, SHM never used
ok all-shm-level-loc NCCL_P2P_LEVEL=LOC NCCL_P2P_DISABLE=1   # SHM on every rank

note "one rank on another transport hangs"
hang p2p-disable NCCL_P2P_DISABLE=1                  # SHM on rank 3, P2P elsewhere
hang level-loc NCCL_P2P_LEVEL=LOC
hang shm-off NCCL_SHM_DISABLE=1 NCCL_P2P_DISABLE=1  # NET on rank 3, SHM elsewhere
hang p2p-back NCCL_P2P_DISABLE=0 NCCL_P2P_DISABLE=1 # only rank 3 re-enables P2P

note "NCCLSIM_DEBUG=1 says why"
TSIM_ODD_ENV=NCCL_P2P_DISABLE=1 NCCLSIM_DEBUG=1 run_ok debug 60 "$SCEN" transport-hang 4
assert_grep 'collective #1: ranks selected different transports, the connection never completes' "$T/debug.out"
assert_grep 'ring connection 2 -> 3 never completes: P2P there, SHM here' "$T/debug.out"
assert_grep 'rank 2: send #1 to rank 3: P2P here, SHM there: the connection never completes' "$T/debug.out"
