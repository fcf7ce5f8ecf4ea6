#!/bin/sh
# The README's Python quick start runs as written: its block between
# "<!-- quickstart: python" and "<!-- quickstart: end -->" is taken from
# README.md and every command line in it is run in order in the checkout,
# in one shell (its exports hold for the lines after). The line that
# starts the hanging job (examples/torchrun.sh) runs until the verdict the
# README promises is on its output, then gets what Ctrl-C sends (SIGINT to
# its process group). Checked: the healthy torchrun run exits 0 with every
# rank "ok"; the hung job's watchdog prints the verdict with the op number
# the README's comment names; `ncclwatch diagnose` afterwards gives it too.
# Only the environment a test keeps to itself differs from a user's:
# NCCLWATCH_DIR, the dump directory, torchrun's port (PET_MASTER_PORT), the
# RAS port.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
need_torchrun
[ -z "$NW_SAN" ] || skip "the quick start uses the plain build (build/), not a sanitizer build"
unset LD_PRELOAD LD_LIBRARY_PATH NCCLWATCH_TIMEOUT NCCLWATCH_JOB NCCLWATCH_KEEP NCCLWATCH_LIB
export NCCLWATCH_DUMP_DIR="$T/dumps" PET_MASTER_PORT="$(free_port)"

readme="$NW_ROOT/README.md"
awk '/^<!-- quickstart: python/ { on = 1; next } /^<!-- quickstart: end/ { on = 0 }
	on && /^```sh$/ { code = 1; next } on && /^```$/ { code = 0 } on && code' "$readme" > "$T/block"
[ -s "$T/block" ] || fail "README.md has no Python quick-start block (<!-- quickstart: python -->)"
grep -v '^[[:space:]]*#' "$T/block" | grep . > "$T/lines"
cat "$T/lines"
op=$(grep -o 'rank 2 never called AllReduce #[0-9]*' "$T/block" | head -n 1)
[ -n "$op" ] || fail "the quick start's comments name no verdict to expect"

cd "$NW_ROOT" || fail "cd $NW_ROOT"
n=0
while IFS= read -r line; do
	n=$((n + 1))
	note "line $n: $line"
	case $line in
	*examples/torchrun.sh*)
		# the hanging job: in the foreground for a user, who presses Ctrl-C
		setsid sh -c "$line" > "$T/hang.out" 2>&1 &
		pg=$!; _nw_pgids="$_nw_pgids $pg"
		nw_until 180 grep -q "^ncclwatch: MISSING_RANK: $op " "$T/hang.out" ||
			{ tail -n 40 "$T/hang.out"; fail "line $n: no verdict '$op' from the watchdog"; }
		grep 'ncclwatch: MISSING_RANK' "$T/hang.out" | head -n 1
		kill -0 "$pg" 2>/dev/null || fail "line $n: the job ended before Ctrl-C"
		kill -INT "-$pg"
		nw_wait "$pg" 120 || true
		kill -0 "-$pg" 2>/dev/null && fail "line $n: the job outlived Ctrl-C (and 120 s)"
		;;
	*)
		eval "$line" > "$T/line$n.out" 2>&1
		echo "$?" > "$T/line$n.rc"
		tail -n 8 "$T/line$n.out"
		;;
	esac
done < "$T/lines"

# what each line must have done
n=0
while IFS= read -r line; do
	n=$((n + 1))
	case $line in
	make*) assert_eq "$(cat "$T/line$n.rc")" 0 "line $n ($line)" ;;
	*torchrun\ --nproc_per_node*)
		assert_eq "$(cat "$T/line$n.rc")" 0 "line $n ($line)"
		for r in 0 1 2 3; do assert_grep "rank $r ok steps=20" "$T/line$n.out"; done ;;
	*examples/torchrun.sh*) ;;
	ncclwatch\ diagnose*)
		assert_eq "$(cat "$T/line$n.rc")" 1 "line $n ($line): a problem found"
		assert_grep "^MISSING_RANK: $op " "$T/line$n.out" ;;
	export*) assert_eq "$(cat "$T/line$n.rc")" 0 "line $n ($line)" ;;
	*) fail "line $n: the test does not know what '$line' must do (add it here)" ;;
	esac
done < "$T/lines"
assert_eq "$n" 5 "command lines in the quick start"
