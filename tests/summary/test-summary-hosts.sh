#!/bin/sh
# Hosts not heard from (issue 24): summaries of 3 of 4 hosts (4 ranks
# each) gathered in one directory: diagnose names the missing host's ranks
# as a host not heard from, in text, JSON and status; with every host's summary
# there is none, and one host of ranks alone (no layout to go by) names
# none either. The JSON validates against the schema. `summary --by-host`
# writes each host's file from the files of all, byte for byte as on the host.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
NWGEN="$NW_BUILD/tests/progs/nwgen"
[ -x "$NWGEN" ] || skip "$NWGEN is not built (tests/gen)"
need_jsonschema

"$NWGEN" --scenario missing_rank --ranks 16 --hosts 4 --stacks --job j --out "$T/segs" > /dev/null || fail "nwgen"
mkdir "$T/all" "$T/three"
for h in 0 1 2 3; do
	"$NW_CLI" summary -o "$T/all/node$h.nwsum" "$T/segs/j/node$h".*.seg 2> /dev/null || fail "summary of node$h"
	[ $h = 2 ] || cp "$T/all/node$h.nwsum" "$T/three/"
done

hosts() { python3 -c 'import json, sys; h = json.load(open(sys.argv[1]))["jobs"][0]["hosts_not_heard_from"]; print(h["count"], h["ranks_per_host"], ",".join(map(str, h["ranks"])))' "$1"; }

cli "$T/three.txt" diagnose "$T/three"
assert_eq "$CLI_STATUS" 1 "diagnose of three hosts"
assert_grep "^job j: 12 processes read, world size 16, ranks missing: 8-11," "$T/three.txt"
assert_grep "^  hosts not heard from: 1 \(ranks 8-11: no segment, dump or summary of theirs was read; 4 ranks per host" "$T/three.txt"
cli "$T/three.json" diagnose --json "$T/three"
assert_eq "$(hosts "$T/three.json")" "1 4 8,9,10,11" "JSON hosts_not_heard_from"
schema_ok "$T/three.json" > /dev/null
cli "$T/status.txt" status "$T/three"
assert_grep "^# job j: 12 processes, world size 16, ranks missing: 8-11, hosts not heard from: 1 \(ranks 8-11\)" "$T/status.txt"

cli "$T/all.json" diagnose --json "$T/all"
assert_eq "$(hosts "$T/all.json")" "0 None " "every host heard from"
cli "$T/all.txt" diagnose "$T/all"
assert_no_grep "hosts not heard from" "$T/all.txt"

note "--by-host: one summary per host from the files of all, the same bytes as each host's own"
mkdir "$T/byhost"
"$NW_CLI" summary --by-host "$T/byhost" "$T/segs" 2> "$T/byhost.err" || { cat "$T/byhost.err" >&2; fail "summary --by-host"; }
assert_grep "wrote 4 summaries in $T/byhost: 16 processes, [0-9]+ bytes" "$T/byhost.err"
for h in 0 1 2 3; do
	cmp "$T/byhost/node$h.nwsum" "$T/all/node$h.nwsum" || fail "--by-host's node$h.nwsum differs from node$h's own"
done
usage_error "exclude each other" summary -o "$T/x.nwsum" --by-host "$T/byhost" "$T/segs"

note "one host's ranks alone: no layout to go by"
"$NWGEN" --scenario missing_rank --ranks 8 --hosts 2 --stacks --job k --out "$T/segs2" > /dev/null || fail "nwgen"
"$NW_CLI" summary -o "$T/one.nwsum" "$T/segs2/k/node0".*.seg 2> /dev/null || fail "summary of node0"
cli "$T/one.json" diagnose --json "$T/one.nwsum"
assert_eq "$(hosts "$T/one.json")" "0 None " "a single host heard from"
echo ok
