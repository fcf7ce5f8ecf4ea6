#!/bin/sh
# soak mutate: directories of mutated real segments through `ncclwatch
# diagnose`, `status` and `show`, under the ASan+UBSan build when there is
# one (make SAN=address,undefined all: build/san-address-undefined/).
# Real segments: nwgen's scenarios (with and without stack areas, dumps)
# and a run of the trainer on the simulation; then, per round, a job
# directory of copies with header-field, byte, bit, commit-word, count,
# truncation and sparse-extension mutations (tests/soak/mutate.py, seeded
# by the round). A bug is: a sanitizer report, a death by signal, an exit
# status other than 0/1/2, a line on stderr that is not ncclwatch's, no
# end within 120 s. The inputs of a round that found one are kept in
# tests/fuzz/corpus/mutate-found/ (the fuzz target's corpus) and the test
# fails. Bounded by a count: 40 rounds x NW_SOAK_ROUNDS (NW_MUTATE_ROUNDS
# overrides the 40: the short version in make test uses a few).
. "$NW_ROOT/tests/lib.sh"
rounds=$(( ${NW_MUTATE_ROUNDS:-40} * ${NW_SOAK_ROUNDS:-1} ))
NW_GEN="$NW_BUILD/tests/progs/nwgen"
[ -x "$NW_GEN" ] || fail "$NW_GEN is not built"

# The sanitizer build, if this is not one and it exists.
cli=$NW_CLI san=${NW_SAN:-}
if [ -z "$san" ] && [ -x "$NW_ROOT/build/san-address-undefined/bin/ncclwatch" ]; then
	cli=$NW_ROOT/build/san-address-undefined/bin/ncclwatch
	san=address,undefined
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:abort_on_error=0:exitcode=99"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1:exitcode=98"

note "real segments"
mkdir -p "$T/base"
for sc in healthy missing_rank transport_stall p2p_unmatched init_stall gpu_fault stream_blocked; do
	"$NW_GEN" --scenario $sc --ranks 4 --out "$T/gen" --ring 16 > /dev/null || fail "nwgen $sc"
	"$NW_GEN" --scenario $sc --ranks 2 --out "$T/gens" --stacks --dump --job=s-$sc > /dev/null || fail "nwgen $sc --stacks"
done
if [ -x "$NW_TRAINER" ]; then
	nw_use_sim
	nw_bounded 120 env NCCLWATCH_KEEP=1 NCCLWATCH_JOB=trainer NCCLWATCH_STACKS=1 \
		LD_PRELOAD="$(nw_preload)" "$NW_TRAINER" --nranks 2 --steps 3 > "$T/trainer.out" 2>&1 \
		|| { cat "$T/trainer.out"; fail "the trainer failed"; }
fi
n=0
for f in $(find "$T/gen" "$T/gens" "$NCCLWATCH_DIR" -name '*.seg' -type f 2>/dev/null | sort); do
	n=$((n + 1))
	cp "$f" "$T/base/b$n.seg"
done
[ $n -gt 0 ] || fail "no real segment to mutate"
echo "$n real segments"

# run ROUND ARGS...: ncclwatch ARGS on the round's directory; 1 if it found a bug.
runs=0 reports=0 refused=0 statuses=""
run() {
	_r=$1; shift
	runs=$((runs + 1))
	nw_bounded 120 "$cli" "$@" > "$T/out" 2> "$T/err"
	_rc=$?
	statuses="$statuses $_rc"
	refused=$((refused + $(grep -c 'unreadable\|^ncclwatch: ' "$T/err")))
	_why=""
	if grep -Eq 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: ' "$T/err"; then
		_why="sanitizer report"
	elif [ $_rc -eq 124 ]; then
		_why="no end within 120 s"
	elif [ $_rc -gt 2 ]; then
		_why="exit status $_rc"
	elif grep -qv '^ncclwatch' "$T/err"; then
		_why="a line on stderr that is not ncclwatch's"
	fi
	[ -z "$_why" ] && return 0
	reports=$((reports + 1))
	echo "BUG (round $_r): ncclwatch $*: $_why"
	sed 's/^/    /' "$T/err" | head -n 40
	return 1
}

mutations=0 files=0 found=0
keep="$NW_ROOT/tests/fuzz/corpus/mutate-found"
r=0
while [ $r -lt $rounds ]; do
	r=$((r + 1))
	rm -rf "$T/m"
	python3 "$NW_ROOT/tests/soak/mutate.py" "$r" "$T/m" "$T/base"/*.seg > "$T/mlist" || fail "mutate.py $r"
	mutations=$((mutations + $(sed -n 's/^mutations //p' "$T/mlist")))
	files=$((files + $(grep -vc '^mutations ' "$T/mlist")))
	bug=0
	run $r diagnose "$T/m" || bug=1
	run $r diagnose --json --verbose "$T/m" || bug=1
	run $r status "$T/m" || bug=1
	run $r show "$T/m" || bug=1
	if [ $bug = 1 ]; then
		found=$((found + 1))
		mkdir -p "$keep"
		grep -v '^mutations ' "$T/mlist"
		for f in "$T/m"/*/*.seg; do
			# The fuzz target reads the first 16 KiB; a hole stays a claim
			# (segment_size) it turns into a hole again.
			head -c 16384 "$f" > "$keep/round$r-$(basename "$f")"
		done
	fi
done
echo "soak mutate: rounds=$rounds files=$files mutations=$mutations runs=$runs reports=$reports unreadable_lines=$refused san=${san:-none} bases=$n"
[ $found -eq 0 ] || fail "$found rounds found a bug; their inputs are in $keep"
echo "ok"
