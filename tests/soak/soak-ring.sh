#!/bin/sh
# soak-ring: the long version of the ring-race tests (issue 16, item 2).
#   - test-unit-ring-race: 16 writers, 2 updaters, 2 readers at rings
#     16/256/4096 with the delay hook on, 40,000 ops per writer per round
#     (make test: 4,000), then its check that the old protocol is caught;
#   - test-watchdog-ring-race.sh: the MISSING_RANK hang on a 16-record ring
#     with the watchdog delayed, 20 rounds per round (make test: 4).
# NW_SOAK_ROUNDS multiplies both (default 1). Prints
# "soak ring: key=value ..."; exit 0 pass, 1 fail.
. "$NW_ROOT/tests/lib.sh"
: "${NW_SOAK_ROUNDS:=1}"
bin="$NW_BUILD/tests/test-unit-ring-race"
[ -x "$bin" ] || fail "$bin not built"

ops=$((40000 * NW_SOAK_ROUNDS))
"$bin" "$ops" > "$T/unit" 2>&1
unit_rc=$?
cat "$T/unit"
# wrong=: the three rings' (0 to pass); unsafe_caught=: the last ring-16
# run's, with the old protocol (must be > 0: the checker works).
wrong=$(awk '/^ring-race ring=16:/ { n16++ }
	/^ring-race ring=/ { for (i = 1; i <= NF; i++) if ($i ~ /^wrong=/) { sub("wrong=", "", $i); if (n16 < 2) w += $i; else u = $i } }
	END { print w + 0, u + 0 }' "$T/unit")
checked=$(sed -nE 's/.* checked=([0-9]+) file_checked=([0-9]+) .*/\1 \2/p' "$T/unit" | head -n 3 |
	awk '{ c += $1; f += $2 } END { print c + 0, f + 0 }')

rounds=$((20 * NW_SOAK_ROUNDS))
NW_RACE_ROUNDS=$rounds sh "$NW_ROOT/tests/watchdog/test-watchdog-ring-race.sh" > "$T/race" 2>&1
race_rc=$?
tail -n 3 "$T/race"

echo "soak ring: ops_per_writer=$ops records_checked=${checked% *} file_records_checked=${checked#* } wrong=${wrong% *} unsafe_caught=${wrong#* } unit_status=$unit_rc hang_rounds=$rounds hang_status=$race_rc"
[ "$unit_rc" -eq 0 ] && [ "$race_rc" -eq 0 ] || exit 1
exit 0
