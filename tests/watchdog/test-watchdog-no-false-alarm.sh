#!/bin/sh
# No false alarm: 50 healthy 8-rank jobs of the trainer under the preload
# with a short timeout (NCCLWATCH_TIMEOUT=2, NCCLWATCH_KEEP=1), each in a
# fresh job dir, blocking and non-blocking (--nonblocking) communicators in
# turn, all with the pipeline's send/recv groups and the broadcasts. Most
# are short (--steps 20: many starts and exits, where a half-written record
# or an unset time would show up as a huge age); every fifth outlives the
# timeout (ops completing while the watchdog polls, for longer than it).
# For every job: exit 0 and 8 "ok" lines, not one "ncclwatch:" line (no
# stall, no verdict, nothing else), no report.txt and no dump in its dir,
# and `ncclwatch diagnose` on the files left says HEALTHY and exits 0.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
NCCLWATCH_TIMEOUT=2
export NCCLWATCH_TIMEOUT
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
export NCCLWATCH_KEEP=1
RUNS=50
SHORT=20
# ~2 s each without a sanitizer on this machine (a blocking step costs
# about a third of a non-blocking one, which polls)
LONG_BLOCKING=4500
LONG_NONBLOCKING=1800

t0=$(date +%s)
long_ms_min=
long_ms=
i=1
while [ $i -le $RUNS ]; do
	job=run$i
	mode=
	[ $((i % 2)) = 0 ] && mode=--nonblocking
	steps=$SHORT
	if [ $((i % 5)) = 0 ]; then
		[ -n "$mode" ] && steps=$LONG_NONBLOCKING || steps=$LONG_BLOCKING
	fi
	s=$(date +%s%N)
	wd_run 120 "$T/$job.out" "$job" --nranks 8 --steps $steps --pipeline $mode
	ms=$(( ($(date +%s%N) - s) / 1000000 ))
	what="$job: --steps $steps${mode:+ $mode}"
	[ "$TRAINER_STATUS" = 0 ] || { tail -n 30 "$T/$job.out" >&2; fail "$what: exit status $TRAINER_STATUS"; }
	assert_ranks "$T/$job.out" " ok steps=$steps " 0 1 2 3 4 5 6 7
	grep -q 'ncclwatch:' "$T/$job.out" && { grep 'ncclwatch:' "$T/$job.out" | head -n 30 >&2; fail "$what (${ms} ms): the watchdog spoke"; }
	[ ! -e "$NCCLWATCH_DIR/$job/report.txt" ] || { cat "$NCCLWATCH_DIR/$job/report.txt" >&2; fail "$what: report.txt written"; }
	dumps=$(find "$NCCLWATCH_DIR/$job" -name '*.dump.seg')
	[ -z "$dumps" ] || { echo "$dumps" >&2; fail "$what: dumps written"; }
	cli_ok 0 "$T/$job.diag" diagnose "$NCCLWATCH_DIR/$job"
	assert_eq "$(sed -n 1p "$T/$job.diag")" \
		"job $job: 8 processes read, world size 8, ranks missing: none, timeout 2s" "$what: diagnose's first line"
	sed -n 2p "$T/$job.diag" | grep -q '^HEALTHY: no stall: 8 processes (0 running or on other hosts), 0 ops in flight' \
		|| { cat "$T/$job.diag" >&2; fail "$what: not HEALTHY"; }
	assert_eq "$(grep -Ec '^[A-Z][A-Z_/]+: ' "$T/$job.diag")" 1 "$what: verdicts"
	if [ "$steps" != $SHORT ]; then
		{ [ -z "$long_ms_min" ] || [ $ms -lt $long_ms_min ]; } && long_ms_min=$ms
		long_ms="$long_ms ${ms}${mode:+nb}"
	fi
	rm -rf "${NCCLWATCH_DIR:?}/$job"       # keep the disk use flat; kept on a failure
	i=$((i + 1))
done
note "$RUNS jobs healthy and silent in $(( $(date +%s) - t0 )) s; the long ones took (ms, nb: non-blocking):$long_ms"
[ "$long_ms_min" -gt 2500 ] || note "warning: a long job ended within 2.5 s: this machine is faster than the step counts assume"
wd_check_outputs
