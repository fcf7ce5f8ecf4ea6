#!/bin/sh
# make demo: an 8-rank job of the example trainer on the simulated GPUs in
# which rank 5 skips the all-reduce of step 20, so the job hangs the way
# most real jobs hang (one rank took another code path). It runs under
# ncclwatch with a 5 s stall timeout; the demo shows what the watchdog
# printed by itself (its stall lines and the cross-rank verdict naming
# rank 5), then kills the job as a scheduler would and runs
# `ncclwatch diagnose` on the files the processes left behind.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
: "${NW_BUILD:=build}"
case "$NW_BUILD" in /*) ;; *) NW_BUILD="$root/$NW_BUILD" ;; esac
sim="$NW_BUILD/sim"
trainer="$NW_BUILD/bin/trainer"
lib="$NW_BUILD/lib/libncclwatch.so"
cli="$NW_BUILD/bin/ncclwatch"
hang_wait=25

say() { printf '\n==> %s\n' "$*"; }
for f in "$trainer" "$sim/libnccl.so.2" "$sim/libcuda.so.1" "$lib" "$cli"; do
	[ -e "$f" ] || { echo "demo: $f is missing; run 'make' first" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/ncclwatch-demo.XXXXXX")
job_pid=""
cleanup() {
	[ -n "$job_pid" ] && kill -KILL "-$job_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP PIPE
export NCCLSIM_DIR="$work/sim" NCCLWATCH_DIR="$work/ncclwatch" NCCLWATCH_JOB=demo NCCLWATCH_TIMEOUT=5
mkdir -p "$NCCLSIM_DIR"
jobdir="$NCCLWATCH_DIR/$NCCLWATCH_JOB"
log="$work/job.log"

say "Starting an 8-rank data-parallel training job on 8 simulated GPUs (CPU processes)."
echo "    rank 5 is told to skip the all-reduce of step 20 (--fault skip:rank=5:step=20),"
echo "    as when one rank takes a different code path: the other 7 wait for it forever."
set -- "$trainer" --nranks 8 --steps 40 --count 256 --bcast-every 10 --verbose --fault skip:rank=5:step=20
echo "    \$ NCCLWATCH_TIMEOUT=5 LD_PRELOAD=$lib \\"
echo "          $*"
LD_LIBRARY_PATH="$sim" LD_PRELOAD="$lib" setsid "$@" > "$log" 2>&1 &
job_pid=$!

say "Waiting for the hang and for ncclwatch's verdict (at most $hang_wait s)."
# The verdict is complete once the stacks of both groups of ranks are in.
verdict_done() { grep -q '^ncclwatch:   rank 5 (1) thread' "$log"; }
i=0
while [ $i -lt $((hang_wait * 10)) ] && kill -0 "$job_pid" 2>/dev/null && ! verdict_done; do
	sleep 0.1
	i=$((i + 1))
done
if ! kill -0 "$job_pid" 2>/dev/null; then
	wait "$job_pid"
	echo "    the job ended by itself (status $?), which it should not have:"
	sed 's/^/    | /' "$log"
	exit 1
fi
sleep 0.3
last_step() { grep -E "^rank $1 step [0-9]+ done" "$log" | tail -n 1 | sed 's/.* step \([0-9]*\) done/\1/'; }
printf '    after %s s the job is still running and no rank makes progress; last step done:' "$((i / 10))"
for r in 0 1 2 3 4 5 6 7; do printf ' r%s=%s' $r "$(last_step $r)"; done
echo
echo "    (without ncclwatch that is all a user sees: the log stops, every GPU sits there.)"

say "What each rank's watchdog printed on stderr (one line per finding):"
grep -E '^ncclwatch: (stall|dump requested)' "$log" | sed "s|$work/|\$WORK/|g" | cut -c1-160 | head -n 3 | sed 's/^/    /'
echo "    ... ($(grep -Ec '^ncclwatch: stall' "$log") stall lines from the 7 waiting ranks; rank 5, not stuck, dumped its stacks on request)"

say "The cross-rank verdict the watchdog printed by itself (one rank per host prints it):"
sed -n '/^ncclwatch: job /,$p' "$log" | grep '^ncclwatch:' | sed -n '/^ncclwatch: stacks/q; p' \
	| sed "s|$work/|\$WORK/|g" | cut -c1-200 | sed 's/^/    /'
echo "    ncclwatch: stacks (...: every rank's threads, merged into groups, as below)"

say "Killing the job (SIGKILL, as a scheduler's timeout would); the files stay:"
kill -KILL "-$job_pid" 2>/dev/null
wait "$job_pid" 2>/dev/null
job_pid=""
ls "$jobdir" | sed 's/^/    /' | head -n 20

say "Post-mortem, from those files: ncclwatch diagnose \$WORK/ncclwatch"
"$cli" diagnose "$NCCLWATCH_DIR" > "$work/diagnose.out" 2>&1
status=$?
sed "s|$work/|\$WORK/|g" "$work/diagnose.out" | cut -c1-200 | sed 's/^/    /'
echo "    (exit status $status: 1 means a problem was found)"
grep -q '^MISSING_RANK: rank 5 never called' "$work/diagnose.out" || { echo "demo: the diagnosis did not name rank 5" >&2; exit 1; }
exit 0
