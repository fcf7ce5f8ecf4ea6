#!/bin/sh
# The event pool with one stream full of waiting ops (watchdog/progress.c:
# a reap skips a stream's pairs past its first one still running): 10
# all-reduces wait on stream A behind a host function while stream B runs
# 1,000 and then 3,000 all-reduces with a sync after each
# (tests/interpose/nccl_blocked_stream.c). The watchdog does not poll
# before exit (NCCLWATCH_POLL_MS=60000): only the reaps of B's thread give
# pairs back. Events created: the same after 3,000 ops on B as after 1,000
# (before, a reap stopped at A's waiting pairs, oldest in the list, and B
# made a new pair for every op); B's ops all tracked, one pair each.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
prog="$NW_BUILD/tests/interpose/nccl-blocked-stream"
[ -x "$prog" ] || fail "$prog not built"

# run OPS: the job blocked-OPS, checked; "created tracked" in $T/counts-OPS
run() {
	_job=blocked-$1
	nw_bounded 120 env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=$_job NCCLWATCH_KEEP=1 NCCLWATCH_POLL_MS=60000 \
		"$prog" "$1" 10 > "$T/$_job.out" 2>&1
	_rc=$?
	[ $_rc = 0 ] || cat "$T/$_job.out"
	assert_eq "$_rc" 0 "$_job: exit status"
	assert_no_grep 'ncclwatch:' "$T/$_job.out"
	_seg=$(segments "$NCCLWATCH_DIR/$_job")
	[ -n "$_seg" ] || fail "$_job: no segment"
	show "$_seg" | awk '
		function val(key,    i, kv) {
			for (i = 1; i <= NF; i++) if (index($i, key "=") == 1) { split($i, kv, "="); return kv[2] }
			return "?" }
		$1 == "counters" { print val("events_created"), val("ops_tracked") }' > "$T/counts-$1"
	assert_grep '^[0-9]+ [0-9]+$' "$T/counts-$1"
}

run 1000
run 3000
read -r c1 p1 < "$T/counts-1000"
read -r c2 p2 < "$T/counts-3000"
echo "events created, ops tracked: $c1 $p1 after 1,000 ops on B; $c2 $p2 after 3,000"
assert_eq "$((p2 - p1))" 2000 "ops tracked for 2,000 more ops on B"
assert_eq "$((c2 - c1))" 0 "events created for 2,000 more ops on B ($c1 after 1,000, $c2 after 3,000)"
echo "ok"
