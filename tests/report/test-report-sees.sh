#!/bin/sh
# What each source can see is a capability bit per process (analysis.h,
# NW_CAP_*), printed by `diagnose --json` as "sees": a segment sees op
# numbers, completion, sends/receives, stacks, comm creation, wait times
# and the fingerprint; attach's snapshot its stacks alone; a Flight
# Recorder dump op numbers, completion, sends/receives and its NCCL
# version, no stacks and no wait time. A per-host summary keeps the bits:
# a summary of Flight Recorder dumps still has no timeout of its own (it
# read "timeout 60s (ncclwatch's default...)" before the bits).
. "$NW_ROOT/tests/lib.sh"
NW_GEN="$NW_BUILD/tests/progs/nwgen"
[ -x "$NW_GEN" ] || fail "$NW_GEN is not built"

# sees DIR: "RANK snapshot|file: bit,bit,..." per process
sees() {
	"$NW_CLI" diagnose --json "$1" > "$T/sees.json"
	python3 - "$T/sees.json" <<'EOF'
import json, sys
for j in json.load(open(sys.argv[1]))["jobs"]:
    for p in j["processes"]:
        print("%s %s: %s" % (p["rank"], "snapshot" if p["snapshot"] else "file", ",".join(p["sees"])))
EOF
}

SEG='op_numbers,completion,send_recv,stacks,comm_creation,wait_time,fingerprint'
note "segments and a snapshot of the rank without one (nwgen)"
"$NW_GEN" --scenario missing_files --ranks 4 --drop 1 --out "$T/mixed" --snapshot '*=futex_wait<main' > "$T/gen.out" 2>&1 ||
	{ cat "$T/gen.out" >&2; fail "nwgen"; }
sees "$T/mixed" | tee "$T/mixed.sees" | sed 's/^/    /'
assert_grep "^0 file: $SEG\$" "$T/mixed.sees"
assert_grep "^1 snapshot: stacks\$" "$T/mixed.sees"
assert_eq "$(grep -c ": $SEG\$" "$T/mixed.sees")" 3 "processes with a segment"

note "Flight Recorder dumps, and a summary of them"
python3 "$NW_ROOT/tests/gen/frgen.py" size-mismatch "$T/fr" --ranks 4 --json > /dev/null || fail "frgen failed"
sees "$T/fr" > "$T/fr.sees"
sed 's/^/    /' "$T/fr.sees"
assert_eq "$(grep -c '^[0-3] file: op_numbers,completion,send_recv,fingerprint$' "$T/fr.sees")" 4 "dumps"
mkdir -p "$T/sum"
"$NW_CLI" summary -o "$T/sum/host.nwsum" "$T/fr" > /dev/null 2>&1 || fail "summary failed"
sees "$T/sum" > "$T/sum.sees"
cmp -s "$T/fr.sees" "$T/sum.sees" || { cat "$T/sum.sees" >&2; fail "the summary changed what the dumps see"; }
"$NW_CLI" diagnose "$T/sum" > "$T/sum.txt"
assert_grep '^job [^ ]+: 4 processes read, .*no timeout \(Flight Recorder dumps: a pending op counts as stuck\)' "$T/sum.txt"
