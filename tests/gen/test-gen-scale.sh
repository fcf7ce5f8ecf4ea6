#!/bin/sh
# nwgen at scale: 1,024 ranks (256 hosts, 256 comm-1 groups) with stack
# areas, every file read back by `ncclwatch show` with no torn or
# unpublished record. Generation and reading times go to the log (no
# threshold: the machine decides them).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gen/gen-lib.sh"

now_ms() { date +%s%3N; }

t0=$(now_ms)
gen p2p_deadlock 1024 --stacks
t1=$(now_ms)
note "nwgen + show of 1024 ranks: $((t1 - t0)) ms in all"
sed -n 1p "$E"
assert_grep '^nwgen: p2p_deadlock: 1024 segments of [0-9]+ bytes' "$E"
note "files: $(du -sk --apparent-size "$G" | cut -f1) KiB in $(ls "$G" | wc -l) files"
assert_eq "$(grep -c '^stacks captured ' "$S")" 1024 "captures"
assert_eq "$(grep -c '^  host         node255$' "$S")" 4 "ranks on the last host"
# The culprit pair: K = 1021 (comm rank 1 of group 1020-1023), A = 1020.
assert_grep '^expect verdict=P2P_UNMATCHED .* culprits=1021 waiting=0-1020,1022-1023 ' "$E"
assert_eq "$(grep -c '^  op .* AllReduce .* seq=302 .*state=STARTED' "$S")" 1023 "ranks in #302"

t0=$(now_ms)
"$NW_GEN" --scenario missing_rank --ranks 1024 --out "$T/m" > "$T/m.out" || fail "nwgen missing_rank"
t1=$(now_ms)
"$NW_CLI" show --no-stacks "$T/m" > "$T/m.show" 2> "$T/m.err" || fail "show of 1024 segments"
t2=$(now_ms)
note "missing_rank, 1024 ranks: nwgen $((t1 - t0)) ms, show $((t2 - t1)) ms"
sed -n 1p "$T/m.out"
assert_eq "$(grep -c '^records .* torn=0 .*unpublished=0 ' "$T/m.show")" 1024 "clean records"
assert_eq "$(grep -c '^  comm 0 .* coll_enqueued=300 ' "$T/m.show")" 1 "one rank short of #301"
echo "ok"
