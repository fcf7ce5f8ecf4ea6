#!/bin/sh
# A nearly full NCCLWATCH_DIR must never hurt the job (issue 16, finding 1):
# on a tmpfs with room for the segments and not one page more, the ranks
# died of SIGBUS writing the control file through its mapping (it was only
# ftruncate'd). Now every file the library maps is reserved before it is
# touched; when that fails the feature turns off with one "ncclwatch:" line
# and the job's output and status are those of a run without ncclwatch.
# Also: a filesystem without fallocate (zeros written, never a sparse file)
# and fallocate interrupted by signals (retried), through a preloaded shim.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
nw_small_tmpfs
${CC:-cc} -shared -fPIC -O2 -o "$T/shim.so" "$NW_ROOT/tests/interpose/fallocate_shim.c" -ldl \
	|| fail "cannot build the fallocate shim"
# The shim in front of the library, behind a sanitizer's runtime (which
# must come first in the list).
shim_preload() {
	case "$NW_SAN" in
		*address*|*thread*) _p=$(nw_preload); printf '%s:%s:%s' "${_p%%:*}" "$T/shim.so" "${_p#*:}" ;;
		*) printf '%s:%s' "$T/shim.so" "$(nw_preload)" ;;
	esac
}
PAGE=$(getconf PAGESIZE)
ARGS="--steps 20 --count 256"

# normalized OUT: the trainer's lines without pids, sorted (ranks interleave).
normalized() { grep -v '^ncclwatch:' "$1" | sed -E 's/pid [0-9]+/pid N/' | sort; }

note "the size of one segment (defaults), from a kept one"
env LD_PRELOAD="$(nw_preload)" NCCLWATCH_KEEP=1 NCCLWATCH_DIR="$T/probe" "$NW_TRAINER" --nranks 1 $ARGS > "$T/probe.out" 2>&1 \
	|| { cat "$T/probe.out"; fail "probe run"; }
SEG=$(stat -c %s "$(segments "$T/probe" | head -n 1)")
SEG_PAGES=$(( (SEG + PAGE - 1) / PAGE ))
echo "segment: $SEG bytes, $SEG_PAGES pages"

# job NRANKS PAGES ROUNDS [ENV...]: ROUNDS runs of the trainer on a tmpfs of
# PAGES pages (LD_PRELOAD: $PRELOAD if set); each must end as the run without ncclwatch did. Sets NOSPACE
# (runs that said "No space left") and the last run's output in $T/run.out.
job() {
	_nr=$1; _pages=$2; _rounds=$3; shift 3
	"$NW_TRAINER" --nranks "$_nr" $ARGS > "$T/plain.out" 2>&1 || { cat "$T/plain.out"; fail "run without ncclwatch"; }
	normalized "$T/plain.out" > "$T/plain.norm"
	NOSPACE=0
	_i=0
	while [ $_i -lt "$_rounds" ]; do
		_i=$((_i + 1))
		mount -t tmpfs -o size=$((_pages * PAGE)),mode=0700 tmpfs "$MNT" || fail "mount"
		nw_spawn env "$@" LD_PRELOAD="${PRELOAD:-$(nw_preload)}" NCCLWATCH_DIR="$MNT" "$NW_TRAINER" --nranks "$_nr" $ARGS > "$T/run.out" 2>&1
		nw_wait "$NW_PID" 120
		_rc=$?
		umount "$MNT" || fail "umount"
		[ $_rc = 0 ] || { cat "$T/run.out"; fail "run $_i on $_pages pages: status $_rc (the run without ncclwatch: 0)"; }
		normalized "$T/run.out" > "$T/run.norm"
		cmp -s "$T/plain.norm" "$T/run.norm" || { diff "$T/plain.norm" "$T/run.norm"; fail "run $_i: output differs from the run without ncclwatch"; }
		# Each process says at most one thing, and only that space ran out.
		assert_no_grep 'ncclwatch: (stall|recording stopped)' "$T/run.out"
		[ "$(grep -c 'ncclwatch:' "$T/run.out")" -le "$_nr" ] || { cat "$T/run.out"; fail "more than one ncclwatch line per process"; }
		grep -q '^ncclwatch:.*No space left on device' "$T/run.out" && NOSPACE=$((NOSPACE + 1))
	done
}

note "one rank, room for its segment and not one page more: the control file is refused, the job goes on"
job 1 "$SEG_PAGES" 5
cat "$T/run.out"
assert_eq "$NOSPACE" 5 "runs that said the control file had no room"
assert_grep 'ncclwatch: cannot open .*/control: No space left on device; dump requests .* will not reach this process$' "$T/run.out"
assert_eq "$(grep -c 'ncclwatch:' "$T/run.out")" 1 "ncclwatch lines"

note "two ranks, room for two segments: whichever file comes last is refused"
job 2 $((2 * SEG_PAGES)) 5
cat "$T/run.out"
assert_eq "$NOSPACE" 5 "runs that said a file had no room"

note "no room for a segment: not recording, one line"
job 1 $((SEG_PAGES - 1)) 2
assert_grep 'ncclwatch: cannot reserve or map .*\.seg \([0-9]+ bytes\): No space left on device; not recording$' "$T/run.out"

note "a filesystem without fallocate: the files are written whole, still refused when full"
PRELOAD="$(shim_preload)" job 1 "$SEG_PAGES" 2 NWTEST_FALLOCATE=eopnotsupp
assert_eq "$NOSPACE" 2 "runs without fallocate that said the control file had no room"
env LD_PRELOAD="$(shim_preload)" NWTEST_FALLOCATE=eopnotsupp NCCLWATCH_KEEP=1 NCCLWATCH_DIR="$T/nofalloc" \
	"$NW_TRAINER" --nranks 1 $ARGS > "$T/nofalloc.out" 2>&1 || { cat "$T/nofalloc.out"; fail "run without fallocate"; }
assert_no_grep 'ncclwatch:' "$T/nofalloc.out"
for f in $(segments "$T/nofalloc") "$(find "$T/nofalloc" -name control)"; do
	set -- $(stat -c '%s %b %B' "$f")
	[ $(($2 * $3)) -ge "$1" ] || fail "$f is sparse: $1 bytes, $2 blocks of $3"
done

note "fallocate interrupted by signals 50 times: retried, recording"
env LD_PRELOAD="$(shim_preload)" NWTEST_FALLOCATE=eintr:50 NCCLWATCH_KEEP=1 NCCLWATCH_DIR="$T/eintr" \
	"$NW_TRAINER" --nranks 1 $ARGS > "$T/eintr.out" 2>&1 || { cat "$T/eintr.out"; fail "run with EINTR"; }
assert_no_grep 'ncclwatch:' "$T/eintr.out"
show "$(segments "$T/eintr")" | grep -q ' AllReduce ' || fail "nothing recorded after EINTR"
