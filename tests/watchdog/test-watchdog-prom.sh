#!/bin/sh
# NCCLWATCH_PROM_DIR, read back the way an operator does: Debian's
# prometheus-node-exporter with only its textfile collector on a local
# port, scraped over HTTP with curl.
#   1. a healthy 2-rank job: each rank's file is there with the right
#      labels (job, host, pid, rank, comm), the exporter parsed it
#      (node_textfile_scrape_error 0), nothing stalled, and the completed
#      count grows from one scrape to a later one;
#   2. NCCLSIM_FAULT=stall:seq=6 (every rank's Broadcast #6 never
#      completes): ncclwatch_stalled 1 on every rank, exactly 6 collectives
#      enqueued and 5 completed, the oldest pending op at least the timeout
#      old and older at a later scrape; the host's reporting process
#      exports the verdict's kind (TRANSPORT_STALL);
#   3. the stalled job SIGKILLed: its files stay, and their update time
#      stops (what NcclwatchRankDead alerts on); `ncclwatch gc --prom-dir`
#      then removes them (and a temporary file of a pid that does not run),
#      and keeps a file whose pid runs and another host's;
#   4. a job that ends cleanly removes its files.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"

EXPORTER=/usr/bin/prometheus-node-exporter
[ -x "$EXPORTER" ] || skip "no $EXPORTER (Debian: prometheus-node-exporter; make deps installs it)"
command -v curl >/dev/null || skip "no curl (Debian: curl; make deps installs it)"
PROMTOOL=/usr/bin/promtool
[ -x "$PROMTOOL" ] || skip "no $PROMTOOL (Debian: prometheus; make deps installs it)"

PROM="$T/prom"
mkdir -p "$PROM"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The exporter on a free port (another process may take it first: then
# the exporter exits and another port is tried).
URL=
for _try in 1 2 3 4 5; do
	port=$(free_port)
	nw_spawn "$EXPORTER" --collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$PROM" --web.listen-address="127.0.0.1:$port" > "$T/exporter.out" 2>&1
	EXP_PID=$NW_PID
	if nw_until 30 curl -fsS -o /dev/null "http://127.0.0.1:$port/metrics"; then
		URL="http://127.0.0.1:$port/metrics"
		break
	fi
	kill "$EXP_PID" 2>/dev/null
done
[ -n "$URL" ] || { cat "$T/exporter.out" >&2; fail "node_exporter did not serve /metrics"; }

n=0
# scrape: /metrics into $T/scrape.N (SCRAPE names it).
scrape() {
	n=$((n + 1)); SCRAPE="$T/scrape.$n"
	curl -fsS "$URL" > "$SCRAPE" || fail "curl $URL failed"
}
# sample METRIC LABELS...: the samples of METRIC in $SCRAPE whose labels
# include every LABELS (key="value"; the exporter sorts the labels, so
# each is matched on its own, whole).
sample() {
	_m=$1; shift
	_lines=$(grep -E "^$_m(\{|\$| )" "$SCRAPE")
	for _l in "$@"; do
		_lines=$(printf '%s\n' "$_lines" | grep -F -e "{$_l," -e ",$_l," -e ",$_l}" -e "{$_l}")
	done
	printf '%s\n' "$_lines" | grep .
}
# value METRIC LABELS...: the value of the one sample that matches; fails
# unless exactly one does.
value() {
	_s=$(sample "$@")
	[ "$(printf '%s\n' "$_s" | grep -c .)" = 1 ] || { printf '%s\n' "$_s" >&2; fail "not one sample of $*"; }
	printf '%s\n' "$_s" | awk '{ print $NF }'
}
# label KEY LINE: the value of label KEY in a sample line.
label() { printf '%s\n' "$2" | sed -nE "s/.*[{,]$1=\"([^\"]*)\"[,}].*/\\1/p"; }
# ge A B: A >= B as numbers.
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
# scraped_grows METRIC LABELS...: a new scrape shows METRIC above $BEFORE.
scraped_grows() {
	scrape
	ge "$(value "$@")" "$BEFORE" && [ "$(value "$@")" != "$BEFORE" ]
}
host=$(hostname)

note "1. a healthy job: files, labels, growing counts"
NCCLWATCH_PROM_DIR="$PROM" wd_start "$T/ok.out" promok --nranks 2 --steps 100000000 --count 1
OK_PID=$TRAINER_PID
# above_zero METRIC LABELS...: $SCRAPE has a sample above 0.
above_zero() { _v=$(sample "$@" | awk '{ print $NF }'); [ -n "$_v" ] && [ "$_v" != 0 ]; }
# both_completed: a new scrape shows completed collectives of both ranks.
both_completed() {
	scrape
	above_zero ncclwatch_ops_completed_total 'job="promok"' 'rank="0"' 'kind="collective"' &&
		above_zero ncclwatch_ops_completed_total 'job="promok"' 'rank="1"' 'kind="collective"'
}
nw_until $WD_WAIT both_completed \
	|| { cat "$T/ok.out" >&2; ls -la "$PROM" >&2; fail "no completed collectives of both ranks in $URL"; }
cp "$SCRAPE" "$T/healthy.metrics"
assert_eq "$(value node_textfile_scrape_error)" 0 "node_exporter's parse error gauge"
assert_eq "$(ls "$PROM" | grep -c '^ncclwatch_.*\.prom$')" 2 "files in NCCLWATCH_PROM_DIR (one per rank)"
for m in ncclwatch_last_update_timestamp_seconds ncclwatch_timeout_seconds ncclwatch_stalled \
	ncclwatch_stall_findings ncclwatch_ops_enqueued_total ncclwatch_ops_completed_total ncclwatch_oldest_pending_seconds; do
	assert_grep "^# HELP $m " "$SCRAPE"
done
assert_grep '^# TYPE ncclwatch_ops_completed_total counter$' "$SCRAPE"
assert_grep '^# TYPE ncclwatch_stalled gauge$' "$SCRAPE"
for r in 0 1; do
	line=$(sample ncclwatch_stalled 'job="promok"' "rank=\"$r\"")
	pid=$(label pid "$line")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || fail "rank $r: pid label '$pid' is not a live process: $line"
	assert_eq "$(label host "$line")" "$host" "rank $r: host label"
	[ -f "$PROM/ncclwatch_${host}_$pid.prom" ] || fail "rank $r: no $PROM/ncclwatch_${host}_$pid.prom"
	assert_eq "$(value ncclwatch_stalled 'job="promok"' "rank=\"$r\"")" 0 "rank $r: ncclwatch_stalled"
	to=$(value ncclwatch_timeout_seconds 'job="promok"' "rank=\"$r\"")
	ge "$to" "$WD_TIMEOUT" && ge "$WD_TIMEOUT" "$to" || fail "rank $r: ncclwatch_timeout_seconds $to, not $WD_TIMEOUT"
	enq=$(value ncclwatch_ops_enqueued_total 'job="promok"' "rank=\"$r\"" 'kind="collective"' 'comm_size="2"' "comm_rank=\"$r\"")
	done_=$(value ncclwatch_ops_completed_total 'job="promok"' "rank=\"$r\"" 'kind="collective"' 'comm_size="2"' "comm_rank=\"$r\"")
	ge "$enq" "$done_" || fail "rank $r: completed $done_ > enqueued $enq"
	assert_eq "$(value ncclwatch_ops_enqueued_total 'job="promok"' "rank=\"$r\"" 'kind="p2p"')" 0 "rank $r: p2p ops"
done
[ -z "$(sample ncclwatch_last_verdict 'job="promok"')" ] || fail "a verdict for a healthy job"
# both ranks name the same communicator
c0=$(label comm "$(sample ncclwatch_ops_completed_total 'job="promok"' 'rank="0"' 'kind="collective"')")
c1=$(label comm "$(sample ncclwatch_ops_completed_total 'job="promok"' 'rank="1"' 'kind="collective"')")
[ -n "$c0" ] || fail "no comm label"
assert_eq "$c1" "$c0" "the comm label of ranks 0 and 1"
BEFORE=$(value ncclwatch_ops_completed_total 'job="promok"' 'rank="0"' 'kind="collective"')
nw_until $WD_WAIT scraped_grows ncclwatch_ops_completed_total 'job="promok"' 'rank="0"' 'kind="collective"' \
	|| fail "rank 0's completed collectives stayed at $BEFORE"
echo "rank 0 completed: $BEFORE, later $(value ncclwatch_ops_completed_total 'job="promok"' 'rank="0"' 'kind="collective"')"
kill -KILL "-$OK_PID" 2>/dev/null
nw_wait "$OK_PID" 30
rm -f "$PROM"/*

note "2. a stalled job: stalled 1, counts exact, the oldest pending op ages"
NCCLSIM_FAULT=stall:seq=6 NCCLWATCH_PROM_DIR="$PROM" wd_start "$T/stall.out" promstall --nranks 4 --steps 8 --bcast-every 3
STALL_PID=$TRAINER_PID
wait_for_count $WD_WAIT 4 'ncclwatch: stall: ' "$T/stall.out"
wait_for_line $WD_WAIT 'ncclwatch: TRANSPORT_STALL' "$T/stall.out"
stalled_all() {
	scrape
	for _r in 0 1 2 3; do
		[ "$(sample ncclwatch_stalled 'job="promstall"' "rank=\"$_r\"" | awk '{ print $NF }')" = 1 ] || return 1
	done
	sample ncclwatch_last_verdict 'job="promstall"' 'kind="TRANSPORT_STALL"' > /dev/null
}
nw_until $WD_WAIT stalled_all || { cat "$SCRAPE" >&2; fail "not every rank says ncclwatch_stalled 1 with the verdict"; }
cp "$SCRAPE" "$T/stalled.metrics"
assert_eq "$(value node_textfile_scrape_error)" 0 "node_exporter's parse error gauge"
assert_eq "$(sample ncclwatch_last_verdict 'job="promstall"' | grep -c .)" 1 "verdict samples (one process reports for the host)"
for r in 0 1 2 3; do
	assert_eq "$(value ncclwatch_stall_findings 'job="promstall"' "rank=\"$r\"")" 1 "rank $r: findings"
	assert_eq "$(value ncclwatch_ops_enqueued_total 'job="promstall"' "rank=\"$r\"" 'kind="collective"')" 6 "rank $r: collectives enqueued"
	assert_eq "$(value ncclwatch_ops_completed_total 'job="promstall"' "rank=\"$r\"" 'kind="collective"')" 5 "rank $r: collectives completed"
	age=$(value ncclwatch_oldest_pending_seconds 'job="promstall"' "rank=\"$r\"")
	ge "$age" "$WD_TIMEOUT" || fail "rank $r: oldest pending ${age}s, below the timeout ${WD_TIMEOUT}s with a stall reported"
done
note "each file passes promtool's exposition-format lint"
for f in "$PROM"/ncclwatch_*.prom; do
	"$PROMTOOL" check metrics < "$f" > "$T/lint.out" 2>&1 || { cat "$T/lint.out" "$f" >&2; fail "promtool check metrics: $f"; }
done
BEFORE=$(value ncclwatch_oldest_pending_seconds 'job="promstall"' 'rank="2"')
nw_until $WD_WAIT scraped_grows ncclwatch_oldest_pending_seconds 'job="promstall"' 'rank="2"' \
	|| fail "rank 2's oldest pending age stayed at $BEFORE"

note "3. the stalled job killed: files stay, their update time stops"
kill -KILL "-$STALL_PID" 2>/dev/null
nw_wait "$STALL_PID" 30
ls "$PROM" > "$T/left"
assert_eq "$(grep -c '^ncclwatch_.*\.prom$' "$T/left")" 4 "files left by the killed job"
scrape
t1=$(value ncclwatch_last_update_timestamp_seconds 'job="promstall"' 'rank="0"')
sleep 2
scrape
assert_eq "$(value ncclwatch_last_update_timestamp_seconds 'job="promstall"' 'rank="0"')" "$t1" "a dead rank's update time"

note "3b. gc --prom-dir removes the dead processes' files, keeps a live writer's and other hosts'"
# The ranks got SIGKILL with their launcher, but on a loaded machine one
# may still be exiting (not yet a zombie): gc rightly keeps a live
# process's file, so wait until every killed rank is gone or a zombie.
gone() { ! ps -o stat= -p "$1" 2>/dev/null | grep -qv '^Z'; }
for f in $(sed -n 's/^ncclwatch_.*_\([0-9][0-9]*\)\.prom$/\1/p' "$T/left"); do
	nw_until 60 gone "$f" || fail "killed rank pid $f still runs"
done
h=$(hostname | sed 's/[^A-Za-z0-9.-]/_/g')
printf '# live\n' > "$PROM/ncclwatch_${h}_$$.prom"             # this shell runs: kept
printf '# other\n' > "$PROM/ncclwatch_otherhost_1.prom"        # another host's: never judged
nopid=4194303                                                   # above any pid_max: no such process
printf '# gone\n' > "$PROM/.ncclwatch_${h}_$nopid.prom.tmp"    # a temporary file a kill left
mkdir "$T/nosegs"
"$NW_CLI" gc --dry-run --prom-dir "$PROM" "$T/nosegs" > "$T/gc.dry" 2>&1 || { cat "$T/gc.dry" >&2; fail "gc --dry-run"; }
assert_eq "$(grep -c '^would remove ' "$T/gc.dry")" 5 "files gc would remove (4 killed ranks, 1 temporary)"
assert_eq "$(ls -A "$PROM" | grep -c .)" 7 "files after --dry-run (nothing removed)"
NCCLWATCH_PROM_DIR="$PROM" "$NW_CLI" gc "$T/nosegs" > "$T/gc.out" 2>&1 || { cat "$T/gc.out" >&2; fail "gc"; }
assert_grep "gc: 5 removed \(0 segments, 5 other files, 0 directories\), 1 kept \(1 live" "$T/gc.out"
ls -a "$PROM" > "$T/left"
assert_grep "^ncclwatch_${h}_$$\.prom\$" "$T/left"
assert_grep '^ncclwatch_otherhost_1\.prom$' "$T/left"
assert_eq "$(grep -c 'prom' "$T/left")" 2 "files left after gc"
rm -f "$PROM"/*

note "4. a job that ends cleanly removes its files"
# rank 0 sleeps 4 s before step 3 (below the 60 s timeout of this job):
# the files are there meanwhile, and gone once the job has ended.
NCCLWATCH_TIMEOUT=60 NCCLWATCH_PROM_DIR="$PROM" wd_start "$T/clean.out" promclean --nranks 2 --steps 5 \
	--fault sleep:rank=0:step=3:ms=4000
CLEAN_PID=$TRAINER_PID
scraped_any() { scrape; sample "$@" > /dev/null; }
nw_until 30 scraped_any ncclwatch_stalled 'job="promclean"' 'rank="1"' \
	|| { cat "$T/clean.out" >&2; fail "the clean job's metrics never showed up"; }
nw_wait "$CLEAN_PID" $WD_WAIT
assert_eq $? 0 "the clean job's exit status"
assert_eq "$(ls "$PROM" | grep -c .)" 0 "files left in NCCLWATCH_PROM_DIR after a clean end"
scrape
assert_no_grep '^ncclwatch_' "$SCRAPE"

note "5. label escaping: a host named we\"ird\\host (its own UTS namespace)"
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	note "skipped: needs root and unshare for a host name of its own"
else
	weird='we"ird\host'
	NCCLSIM_FAULT=stall:seq=3 NCCLWATCH_PROM_DIR="$PROM" nw_spawn unshare --uts sh -c \
		'printf %s "$0" > /proc/sys/kernel/hostname && exec "$@"' "$weird" \
		env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=promhost "$NW_TRAINER" --nranks 2 --steps 8 > "$T/host.out" 2>&1
	HOST_PID=$NW_PID
	# the exporter sorts labels: host comes before job
	nw_until $WD_WAIT scraped_any ncclwatch_stalled 'host="we\"ird\\host"' 'job="promhost"' 'rank="1"' \
		|| { cat "$T/host.out" "$SCRAPE" >&2; ls -la "$PROM" >&2; fail "no sample with the escaped host label"; }
	assert_eq "$(value node_textfile_scrape_error)" 0 "node_exporter's parse error gauge"
	ls "$PROM" > "$T/hostfiles"
	assert_eq "$(grep -c '^ncclwatch_we_ird_host_[0-9]*\.prom$' "$T/hostfiles")" 2 "file names with the host made safe"
	for f in "$PROM"/ncclwatch_*.prom; do
		"$PROMTOOL" check metrics < "$f" > "$T/lint.out" 2>&1 || { cat "$T/lint.out" "$f" >&2; fail "promtool check metrics: $f"; }
	done
	kill -KILL "-$HOST_PID" 2>/dev/null
fi
wd_check_outputs
