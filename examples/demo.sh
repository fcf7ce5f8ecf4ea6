#!/bin/sh
# make demo: an 8-rank job of the example trainer on the simulated GPUs in
# which rank 5 skips the all-reduce of step 20, so the job hangs the way
# real jobs do. With ncclwatch built, the job runs under it (a 5 s stall
# timeout) and the demo shows what the watchdog of each rank reported and
# where rank 5 was; the cross-rank verdict comes with the diagnosis issue.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
: "${NW_BUILD:=build}"
case "$NW_BUILD" in /*) ;; *) NW_BUILD="$root/$NW_BUILD" ;; esac
sim="$NW_BUILD/sim"
trainer="$NW_BUILD/bin/trainer"
lib="$NW_BUILD/lib/libncclwatch.so"
cli="$NW_BUILD/bin/ncclwatch"
hang_wait=15

say() { printf '\n==> %s\n' "$*"; }
for f in "$trainer" "$sim/libnccl.so.2" "$sim/libcuda.so.1"; do
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

watched=""
if [ -e "$lib" ] && [ -x "$cli" ]; then
	watched=yes
fi

say "Starting an 8-rank data-parallel training job on 8 simulated GPUs (CPU processes)."
echo "    rank 5 is told to skip the all-reduce of step 20 (--fault skip:rank=5:step=20),"
echo "    as when one rank takes a different code path: the other 7 wait for it forever."
set -- "$trainer" --nranks 8 --steps 40 --count 256 --bcast-every 10 --verbose --fault skip:rank=5:step=20
if [ -n "$watched" ]; then
	echo "    running under ncclwatch: LD_PRELOAD=$lib"
	echo "    \$ LD_PRELOAD=$lib $*"
	LD_LIBRARY_PATH="$sim" LD_PRELOAD="$lib" setsid "$@" > "$work/job.log" 2>&1 &
else
	echo "    \$ $*"
	LD_LIBRARY_PATH="$sim" setsid "$@" > "$work/job.log" 2>&1 &
fi
job_pid=$!

say "Waiting up to $hang_wait s for the job (ncclwatch's stall timeout: NCCLWATCH_TIMEOUT=5)."
reports() { grep -c '^ncclwatch: \(stall\|dump requested\)' "$work/job.log"; }
i=0
while [ $i -lt $((hang_wait * 10)) ] && kill -0 "$job_pid" 2>/dev/null; do
	# 7 stuck ranks report, rank 5 answers their request with a dump
	[ -n "$watched" ] && [ "$(reports)" -ge 8 ] && { sleep 0.5; break; }
	sleep 0.1
	i=$((i + 1))
done
if ! kill -0 "$job_pid" 2>/dev/null; then
	wait "$job_pid"
	echo "    the job ended by itself (status $?), which it should not have:"
	sed 's/^/    | /' "$work/job.log"
	exit 0
fi
last_step() { grep -E "^rank $1 step [0-9]+ done" "$work/job.log" | tail -n 1 | sed 's/.* step \([0-9]*\) done/\1/'; }
echo "    still running, and no rank makes progress. Last step each rank finished:"
for r in 0 1 2 3 4 5 6 7; do
	echo "      rank $r: step $(last_step $r)"
done
echo "    what rank 5 said:"
grep -E '^rank 5 step 20' "$work/job.log" | sed 's/^/      /'
echo "    This is all a user sees of a real hang: the log stops, every GPU sits there."

if [ -n "$watched" ]; then
	say "What the watchdog in each rank printed (one line per finding, stderr):"
	grep '^ncclwatch:' "$work/job.log" | sed "s|$work/|\$WORK/|g; s/^/    /" | cut -c1-230
	dump5=$(ls "$NCCLWATCH_DIR/$NCCLWATCH_JOB"/*.rank5.dump.seg 2>/dev/null | head -n 1)
	if [ -n "$dump5" ]; then
		say "Rank 5 is not stuck, so it reported nothing itself; its dump says where it is:"
		"$cli" show "$dump5" 2>&1 | awk '/^  thread /{n++} n==1 && /^(  thread|    #)/' | head -n 8 | sed 's/^/  /'
	fi
	say "What ncclwatch recorded (ncclwatch show $NCCLWATCH_DIR/$NCCLWATCH_JOB), while the job hangs:"
	"$cli" show $(ls "$NCCLWATCH_DIR/$NCCLWATCH_JOB"/*.seg | grep -v '\.dump\.seg$') > "$work/show.out" 2>&1
	echo "    (exit status $?, $(wc -l < "$work/show.out") lines; per segment: its rank, its"
	echo "    communicators' counters and its last two operations)"
	awk '
		function flush() { if (n > 1) print prev2; if (n > 0) print prev1; n = 0 }
		/^segment /       { flush(); print; next }
		/^  rank /        { print; next }
		/^  comm /        { print; next }
		/^  op /          { prev2 = prev1; prev1 = $0; n++; next }
		END               { flush() }
	' "$work/show.out" | cut -c1-200
	say "Reading it by hand (the automatic cross-rank verdict comes with the diagnosis, issue 5):"
	awk '/^  rank /{r=$2} /^  comm /{for(i=1;i<=NF;i++) if ($i ~ /^coll_enqueued=/) print "      rank " r ": " $i}' \
		"$work/show.out" | sort -n -k2
	echo "    the rank with fewer collectives enqueued on the world communicator is the one the others wait for."
else
	say "No diagnosis yet."
	echo "    ncclwatch itself is not built in this tree yet: the recording interposer"
	echo "    ($lib, issue 3), the watchdog and the cross-rank diagnosis (issues 4-5)"
	echo "    are what will turn this hang into: 'rank 5 never issued all-reduce #21 of"
	echo "    the world communicator; ranks 0-4,6-7 wait in it'. Until then this demo"
	echo "    only shows the hang."
fi

say "Killing the job (process group $job_pid)."
kill -KILL "-$job_pid" 2>/dev/null
wait "$job_pid" 2>/dev/null
job_pid=""
echo "    done."
exit 0
