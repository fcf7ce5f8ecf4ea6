#!/bin/sh
# The engine at scale: 4,096 ranks (1,024 hosts, 1,024 comm-1 groups, rings
# of 256 records, stack areas, dumps) in three scenarios; the verdicts are
# exactly nwgen's expectations. Times and peak memory go to the log (no
# threshold: the machine decides them; `make bench` and the report of
# issue 5 hold the measured figures).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/analysis/analysis-lib.sh"
[ -x "$NW_GEN" ] || fail "$NW_GEN is not built"

for s in missing_rank p2p_deadlock mixed_nccl; do
	rm -rf "$T/g"
	"$NW_GEN" --scenario "$s" --ranks 4096 --out "$T/g" --stacks --dump > "$T/exp" || fail "nwgen $s"
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -q -f '%e s, %M KiB peak' -o "$T/time" "$NW_ANALYZE" "$T/g" > "$T/out" 2> "$T/out.err"
	else
		"$NW_ANALYZE" "$T/g" > "$T/out" 2> "$T/out.err"
		echo "(no /usr/bin/time)" > "$T/time"
	fi
	note "$s, 4096 ranks: $(cat "$T/time")"
	expect_verdicts "$T/exp" "$T/out"
	assert_grep "^job gen-$s procs=4096 world=4096 missing=- " "$T/out"
done
# mixed_nccl's differences, by host block (1024 hosts; node1 = ranks 4-7).
assert_grep '^envdiff "NCCL version" "2\.28\.9"=0-3,8-4095 "2\.27\.3"=4-7$' "$T/out"
note "the same from one reading thread as from several"
analyze "$T/one" --threads 1 "$T/g"
cmp "$T/out" "$T/one" || { diff "$T/out" "$T/one" | head >&2; fail "--threads 1 differs"; }
