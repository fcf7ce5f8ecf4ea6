#!/bin/sh
# Field case: a hang in the first collective right after init when one rank
# runs with a different NCCL_P2P_* setting (DESIGN.md: Lumina-T2X fixed by
# NCCL_P2P_LEVEL=NVL, EasyR1 by NCCL_P2P_DISABLE=1: the transport decides).
# Under torchrun, 4 ranks of the trainer; a wrapper shell gives rank 2
# alone NCCL_P2P_DISABLE=1 (exec keeps torchrun the parent). No fault is
# injected: the simulated NCCL selects transports from each rank's own
# variables (tests/sim/README.md, "Transport selection"), so rank 2 picks
# SHM while the others pick P2P, and the ring's connections, set up at the
# first all-reduce, never complete: every rank starts AllReduce #1 and none
# completes it.
#
# Expected, from the watchdog and from `ncclwatch diagnose` alike:
# TRANSPORT_STALL on AllReduce #1, culprits "-" (the communicator or its
# link), waiting 0-3, the P2P hint, and an "environment differences"
# section showing NCCL_P2P_DISABLE=1 on rank 2 only.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
. "$NW_ROOT/tests/field/field-lib.sh"
need_torchrun
unset NCCL_P2P_DISABLE NCCL_P2P_LEVEL NCCL_SHM_DISABLE

# shellcheck disable=SC2016
field_torchrun "$T/job.out" sh -c 'if [ "$RANK" = 2 ]; then export NCCL_P2P_DISABLE=1; fi; exec "$0" "$@"' \
	"$NW_TRAINER" --steps 5 --count 64 --bcast-every 0
field_job
nw_until $FIELD_WAIT wd_verdict p2p-env TRANSPORT_STALL 0-3 || {
	tail -n 40 "$T/job.out" >&2; fail "the watchdog did not report TRANSPORT_STALL with ranks 0-3 waiting"
}
note "the watchdog's verdict after $(field_elapsed) s"
sleep 1
field_diagnose p2p-env
check_first p2p-env TRANSPORT_STALL 'AllReduce #1' "$COMM_CULPRIT" 0-3 -
assert_grep '^TRANSPORT_STALL: every rank of comm [0-9a-f]{16} \(4 ranks\) started AllReduce #1 and none completed it in ' "$T/p2p-env.diag"
assert_grep '^    ranks 0-3: STARTED for .*, not completed$' "$T/p2p-env.diag"
assert_grep '^  hint: P2P or NVLink trouble: try NCCL_P2P_DISABLE=1 to confirm, ' "$T/p2p-env.diag"
# the section, exactly: one variable, set on rank 2, unset on the others
sed -n '/^environment differences:/,/^[a-z]/p' "$T/p2p-env.diag" | sed '$d' > "$T/envdiff"
printf '%s\n' 'environment differences:' '  NCCL_P2P_DISABLE:' '    (unset)  ranks 0-1,3 (host HOST)' '    1  rank 2 (host HOST)' |
	sed "s/HOST/$(hostname)/" > "$T/envdiff.want"
cmp -s "$T/envdiff" "$T/envdiff.want" || { diff "$T/envdiff.want" "$T/envdiff" >&2; fail "environment differences"; }
check_watchdog p2p-env "$T/job.out"
# nobody failed or printed an NCCL error: a hang, not an error
assert_no_grep 'failed|error' "$T/job.out"
field_keep p2p-env
t0=$(date +%s)
field_stop TERM "$T/job.out"
note "torchrun ended $(( $(date +%s) - t0 )) s after SIGTERM, status $LAUNCH_STATUS; test took $(field_elapsed) s"
