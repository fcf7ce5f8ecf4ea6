#!/bin/sh
# examples/prometheus/: the alert rules load (`promtool check rules`),
# fire on the series they are for and only then (`promtool test rules`
# with ncclwatch.rules.test.yml), and name only metrics the watchdog
# writes (watchdog/prom.c), so a renamed metric cannot leave a rule that
# never fires.
. "$NW_ROOT/tests/lib.sh"

PROMTOOL=/usr/bin/promtool
[ -x "$PROMTOOL" ] || skip "no $PROMTOOL (Debian: prometheus; make deps installs it)"
EX="$NW_ROOT/examples/prometheus"

note "promtool check rules"
"$PROMTOOL" check rules "$EX/ncclwatch.rules.yml" > "$T/check.out" 2>&1 || { cat "$T/check.out" >&2; fail "promtool check rules"; }
cat "$T/check.out"
assert_grep 'SUCCESS: 4 rules found' "$T/check.out"

note "promtool test rules"
(cd "$EX" && "$PROMTOOL" test rules ncclwatch.rules.test.yml) > "$T/test.out" 2>&1 || { cat "$T/test.out" >&2; fail "promtool test rules"; }
cat "$T/test.out"

note "every metric the rules name is one the watchdog writes"
grep -oE 'ncclwatch_[a-z_]+' "$EX/ncclwatch.rules.yml" | sort -u > "$T/named"
[ -s "$T/named" ] || fail "no ncclwatch_ metric in the rules"
while read -r m; do
	grep -q "\"$m\"\\|\"$m{" "$NW_ROOT/watchdog/prom.c" || fail "the rules name $m, which watchdog/prom.c does not write"
done < "$T/named"
