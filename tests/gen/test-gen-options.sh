#!/bin/sh
# nwgen's options: usage errors, the scenario list against the table in
# nwgen.c, determinism, dumps, ring size, hosts, culprit, exited ranks, a
# stall younger than the timeout.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gen/gen-lib.sh"

note "usage errors: exit status 2, nothing written"
bad() {
	"$NW_GEN" "$@" > "$T/bad.out" 2> "$T/bad.err"
	_rc=$?
	[ $_rc -eq 2 ] || fail "nwgen $*: exit status $_rc, expected 2"
}
bad
bad --scenario nope --ranks 8 --out "$T/x"
assert_grep '^nwgen: unknown scenario nope' "$T/bad.err"
bad --scenario healthy --ranks 8 --out "$T/x" --ring 100
bad --scenario missing_rank --ranks 8 --out "$T/x" --culprit 8
bad --scenario mixed_nccl --ranks 8 --out "$T/x" --hosts 1
bad --scenario missing_rank --ranks 8 --out "$T/x" --drop 3
bad --scenario missing_files --ranks 8 --out "$T/x" --drop 9
bad --scenario missing_rank --ranks 1 --out "$T/x"
bad --scenario healthy --ranks x --out "$T/x"
[ ! -e "$T/x" ] || fail "a usage error wrote files"

note "every listed scenario is in the table of nwgen.c"
"$NW_GEN" --list > "$T/list" || fail "--list"
assert_eq "$(wc -l < "$T/list" | tr -d ' ')" 21 "scenarios"
for sc in $(awk '{print $1}' "$T/list"); do
	grep -Eq "^ \* $sc +[A-Z0-9_]+ " "$NW_ROOT/tests/gen/nwgen.c" || fail "$sc is not in the table of nwgen.c"
done

note "determinism: same seed, same bytes; another seed, other ids"
"$NW_GEN" --scenario p2p_deadlock --ranks 8 --out "$T/a" --stacks > /dev/null || fail "nwgen a"
"$NW_GEN" --scenario p2p_deadlock --ranks 8 --out "$T/b" --stacks > /dev/null || fail "nwgen b"
"$NW_GEN" --scenario p2p_deadlock --ranks 8 --out "$T/c" --stacks --seed 2 > /dev/null || fail "nwgen c"
for f in "$T"/a/gen-p2p_deadlock/*.seg; do
	cmp -s "$f" "$T/b/gen-p2p_deadlock/${f##*/}" || fail "${f##*/} differs between two runs"
done
id_a=$("$NW_CLI" show "$T/a/gen-p2p_deadlock/node0.10000.seg" | sed -n 's/^  comm 0 id=\([0-9a-f]*\) .*/\1/p')
id_c=$("$NW_CLI" show "$T/c/gen-p2p_deadlock/node0.10000.seg" | sed -n 's/^  comm 0 id=\([0-9a-f]*\) .*/\1/p')
[ -n "$id_a" ] && [ "$id_a" != "$id_c" ] || fail "world ids: '$id_a' and '$id_c'"

note "--dump, --job"
gen transport_stall 8 --dump --job=dumpjob
[ -f "$T/gen/dumpjob/node1.10005.rank5.dump.seg" ] || fail "dump file name"
assert_eq "$(ls "$T/gen/dumpjob" | grep -vc '\.rank[0-7]\.dump\.seg$')" 0 "only dumps"
assert_eq "$(grep -c '^  flags        .*dump' "$S")" 8 "dump flags"
assert_eq "$(grep -c '^  job          dumpjob$' "$S")" 8 "job name"

note "--ring 4096 keeps every record, the life-cycle ones first"
gen missing_rank 8 --ring 4096 --history 10
assert_eq "$(grep -c '^records shown=19 valid=19 torn=0 overwritten=0 unpublished=0 head=19 capacity=4096$' "$S")" 7 "others' records"
assert_grep '^records shown=18 valid=18 .* head=18 capacity=4096$' "$(rank 5)"
assert_grep '^  op 0 .* CommInit comm=.* rank=5/8 seq=0 .*state=INIT_DONE ' "$(rank 5)"
assert_grep '^  op 1 .* CommSplit comm=.* rank=-1/-1 seq=0 .*state=INIT_DONE ' "$(rank 5)"
assert_grep '^expect .* seq=11 culprits=5 ' "$E"

note "--hosts 3: blocks of 3 ranks"
gen healthy 8 --hosts 3
assert_eq "$(header 7 host)/$(header 7 local_rank)" node2/1 "rank 7"
assert_eq "$(header 3 host)/$(header 3 local_rank)" node1/0 "rank 3"
assert_eq "$(comm_field 7 0 device)" 1 "rank 7's device"

note "--culprit 2, --exited 2"
gen missing_rank 8 --culprit 2 --exited 2
assert_grep '^expect .* culprits=2 waiting=0-1,3-7 ' "$E"
assert_eq "$(comm_field 2 0 coll_enqueued)" 300 "rank 2 coll_enqueued"
case "$(header 2 flags)" in *exited*) ;; *) fail "rank 2 flags: $(header 2 flags)" ;; esac

note "--timeout 60 --age 30: positions, but no finding"
gen transport_stall 8 --timeout 60
assert_eq "$(grep -c '^  op .* seq=301 .*state=STARTED' "$S")" 8 "#301 STARTED"
assert_no_grep 'stall_seen' "$S"
assert_eq "$(grep -c 'dumps=0 request_served=0$' "$S")" 8 "no dumps"
assert_eq "$(grep -c '^  timeout_ms   60000$' "$S")" 8 "timeout_ms"
assert_eq "$(grep -c '^  env          NCCLWATCH_TIMEOUT=60$' "$S")" 8 "NCCLWATCH_TIMEOUT"
echo "ok"
