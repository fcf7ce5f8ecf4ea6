#!/bin/sh
# The test runner: runs every tests/**/test-*.sh script and every
# $NW_BUILD/tests/test-* binary, each with its own log and a hard time limit,
# NW_TEST_JOBS at once. A test's exit status: 0 pass, 77 skip, else fail.
# Arguments, if any, keep only the tests whose path contains one of them
# (the path below the checkout, so a checkout's own name never matches).
# The last line is "N passed, N failed, N skipped". Logs go to
# $NW_TEST_LOGS (default $NW_BUILD/test-logs), wiped at the start: two runs
# at once on one build need different NW_TEST_LOGS.
# `run.sh --soak [FILTER...]` (make soak) runs the tests/soak/soak-*.sh chaos
# tests instead, sized by NW_SOAK_ROUNDS (a count multiplier, default 1),
# with a limit of 1800 s per round multiple, logs in $NW_BUILD/soak-logs,
# and prints every soak's figure lines ("soak NAME: key=value ...") before
# the last line.
root=$(cd "$(dirname "$0")/.." && pwd)
: "${NW_BUILD:=build}"
case "$NW_BUILD" in /*) ;; *) NW_BUILD="$root/$NW_BUILD" ;; esac
kind=test
if [ "${1:-}" = --soak ]; then
	kind=soak; shift
	: "${NW_SOAK_ROUNDS:=1}" "${NW_TEST_LIMIT:=$((1800 * NW_SOAK_ROUNDS))}"
	export NW_SOAK_ROUNDS
fi
: "${NW_TEST_JOBS:=2}" "${NW_TEST_LIMIT:=300}"
: "${NW_TEST_LOGS:=$NW_BUILD/$kind-logs}"
export NW_BUILD NW_ROOT="$root" NW_TEST_LIMIT NW_TEST_LOGS
logdir="$NW_TEST_LOGS"

if [ "${1:-}" = --one ]; then
	t=$2
	name=${t#"$root/"}; name=${name#"$NW_BUILD/"}
	log="$logdir/$(echo "$name" | tr / _).log"
	start=$(date +%s)
	case "$t" in
		*.sh) timeout -k 5 "$NW_TEST_LIMIT" sh "$t" > "$log" 2>&1 ;;
		*)    timeout -k 5 "$NW_TEST_LIMIT" "$t" > "$log" 2>&1 ;;
	esac
	rc=$?
	secs=$(( $(date +%s) - start ))
	# One printf per result so parallel results never interleave.
	case $rc in
		0)  printf 'PASS %s (%ss)\n' "$name" "$secs" ;;
		77) printf 'SKIP %s: %s\n' "$name" "$(tail -n 1 "$log")" ;;
		*)  printf 'FAIL %s (exit %s, %ss), last lines of %s:\n%s\n' "$name" "$rc" "$secs" "$log" \
		        "$(tail -n 20 "$log" | sed 's/^/    | /')" ;;
	esac
	exit 0
fi

rm -rf "$logdir"; mkdir -p "$logdir"
list="$logdir/list"
if [ $kind = soak ]; then
	find "$root/tests/soak" -name 'soak-*.sh' -type f | sort
else
	find "$root/tests" -name 'test-*.sh' -type f | sort
	[ -d "$NW_BUILD/tests" ] && find "$NW_BUILD/tests" -maxdepth 1 -name 'test-*' -type f -perm -u+x | sort
fi > "$list.all"
if [ $# -gt 0 ]; then
	for f in "$@"; do
		awk -v r="$root/" -v f="$f" '{ p = $0; if (index(p, r) == 1) p = substr(p, length(r) + 1); if (index(p, f)) print }' "$list.all"
	done | sort -u > "$list"
	if [ ! -s "$list" ]; then
		echo "run.sh: no ${kind} path contains any of: $*" >&2
		echo "0 0 0" > "$logdir/counts"
		exit 2
	fi
else
	cp "$list.all" "$list"
fi
echo "running $(wc -l < "$list") ${kind}s, $NW_TEST_JOBS at a time${NW_SOAK_ROUNDS:+, NW_SOAK_ROUNDS=$NW_SOAK_ROUNDS} (logs in $logdir)"
xargs -P "$NW_TEST_JOBS" -n 1 sh "$0" --one < "$list" | tee "$logdir/results"
if [ $kind = soak ]; then
	echo "figures:"
	for log in "$logdir"/*.log; do [ -f "$log" ] && grep -h '^soak [^ ]*: ' "$log"; done
fi

passed=$(grep -c '^PASS ' "$logdir/results")
failed=$(grep -c '^FAIL ' "$logdir/results")
skipped=$(grep -c '^SKIP ' "$logdir/results")
echo "$passed $failed $skipped" > "$logdir/counts"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
