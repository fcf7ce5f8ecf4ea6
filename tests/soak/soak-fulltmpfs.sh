#!/bin/sh
# soak fulltmpfs: the trainer (2 ranks) under the preload on a tmpfs of
# every size from no room at all to room for both segments, the control
# file and a few pages more, in steps of a few pages (one page apart around
# each boundary: one segment, two segments, two segments + control). Every
# run must exit 0 with the output of the run without ncclwatch, no process
# may say more than one "ncclwatch:" line, and a run either records or says
# why not. NW_SOAK_ROUNDS (default 1) repeats the sweep.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
nw_small_tmpfs
ROUNDS=${NW_SOAK_ROUNDS:-1}
PAGE=$(getconf PAGESIZE)
ARGS="--nranks 2 --steps 20 --count 256"
normalized() { grep -v '^ncclwatch:' "$1" | sed -E 's/pid [0-9]+/pid N/' | sort; }

env LD_PRELOAD="$(nw_preload)" NCCLWATCH_KEEP=1 NCCLWATCH_DIR="$T/probe" "$NW_TRAINER" --nranks 1 --steps 1 > "$T/probe.out" 2>&1 \
	|| { cat "$T/probe.out"; fail "probe run"; }
SEG=$(( ($(stat -c %s "$(find "$T/probe" -name '*.seg' | head -n 1)") + PAGE - 1) / PAGE ))
"$NW_TRAINER" $ARGS > "$T/plain.out" 2>&1 || { cat "$T/plain.out"; fail "run without ncclwatch"; }
normalized "$T/plain.out" > "$T/plain.norm"

# The sizes: every 7th page up to 2 segments + 8, plus +-2 pages around
# each boundary.
sizes() {
	p=0
	while [ $p -le $((2 * SEG + 8)) ]; do echo $p; p=$((p + 7)); done
	for b in $SEG $((2 * SEG)) $((2 * SEG + 1)); do
		for d in -2 -1 0 1 2; do echo $((b + d)); done
	done
}
runs=0 recorded=0 seg_off=0 control_off=0 sigbus=0
r=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	for pages in $(sizes | sort -n -u); do
		[ "$pages" -ge 1 ] || pages=1
		mount -t tmpfs -o size=$((pages * PAGE)),mode=0700 tmpfs "$MNT" || fail "mount"
		nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_DIR="$MNT" NCCLWATCH_KEEP=1 "$NW_TRAINER" $ARGS > "$T/run.out" 2>&1
		nw_wait "$NW_PID" 120
		rc=$?
		segs=$(find "$MNT" -name '*.seg' | wc -l)
		umount "$MNT" || fail "umount"
		runs=$((runs + 1))
		[ $rc = 135 ] && sigbus=$((sigbus + 1))
		[ $rc = 0 ] || { cat "$T/run.out"; fail "$pages pages: status $rc"; }
		normalized "$T/run.out" > "$T/run.norm"
		cmp -s "$T/plain.norm" "$T/run.norm" || { diff "$T/plain.norm" "$T/run.norm"; fail "$pages pages: output differs"; }
		[ "$(grep -c 'ncclwatch:' "$T/run.out")" -le 2 ] || { cat "$T/run.out"; fail "$pages pages: more than one line per process"; }
		assert_no_grep 'ncclwatch: (stall|recording stopped)' "$T/run.out"
		recorded=$((recorded + segs))
		seg_off=$((seg_off + $(grep -c 'ncclwatch: cannot reserve or map .*\.seg' "$T/run.out")))
		control_off=$((control_off + $(grep -c 'ncclwatch: cannot open .*/control: No space' "$T/run.out")))
		# every process either recorded or said why not
		[ $((segs + $(grep -c 'ncclwatch: cannot reserve or map' "$T/run.out"))) -eq 2 ] \
			|| { cat "$T/run.out"; fail "$pages pages: $segs segments and no reason for the rest"; }
	done
done
echo "soak fulltmpfs: runs=$runs segment_pages=$SEG processes_recording=$recorded segments_refused=$seg_off control_refused=$control_off sigbus=$sigbus"
