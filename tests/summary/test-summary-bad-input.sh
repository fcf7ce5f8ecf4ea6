#!/bin/sh
# Summaries that are not what they claim (issue 24): cut short in transfer,
# a flipped byte, a future format, and mutants whose checksum was made to
# match so that the reader's own checks meet them. Alone, each is one line
# on stderr naming the file and exit 2; beside a good summary, one
# "unreadable" line, exit 1, and the verdict from the good one. No mutant
# may crash the CLI. Bad arguments of `summary` are usage errors.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
NWGEN="$NW_BUILD/tests/progs/nwgen"
[ -x "$NWGEN" ] || skip "$NWGEN is not built (tests/gen)"

"$NWGEN" --scenario missing_rank --ranks 8 --hosts 2 --stacks --job j --out "$T/segs" > /dev/null || fail "nwgen"
for h in node0 node1; do
	"$NW_CLI" summary -o "$T/$h.nwsum" "$T/segs/j/$h".*.seg 2> "$T/$h.err" || { cat "$T/$h.err" >&2; fail "summary of $h"; }
	assert_grep "wrote $T/$h.nwsum: 4 processes of 1 job, [0-9]+ bytes" "$T/$h.err"
done
size=$(stat -c %s "$T/node0.nwsum")
note "a summary of 4 ranks: $size bytes"

note "the same bytes to stdout with -o -"
"$NW_CLI" summary -o - "$T/segs/j/node0".*.seg > "$T/stdout.nwsum" 2> /dev/null || fail "summary -o -"
cmp "$T/stdout.nwsum" "$T/node0.nwsum" || fail "-o - wrote other bytes than -o FILE"

mkdir "$T/bad"
head -c $((size / 2)) "$T/node0.nwsum" > "$T/bad/cut.nwsum"
head -c 12 "$T/node0.nwsum" > "$T/bad/stub.nwsum"
python3 - "$T/node0.nwsum" "$T/bad" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
flip = bytearray(d); flip[len(d) // 2] ^= 0x40
open(sys.argv[2] + "/flip.nwsum", "wb").write(flip)
future = bytearray(d); future[8:10] = (9).to_bytes(2, "little")
open(sys.argv[2] + "/future.nwsum", "wb").write(future)
PY

note "alone: one line, exit 2"
usage_error "cut\\.nwsum: a summary cut short" diagnose "$T/bad/cut.nwsum"
usage_error "stub\\.nwsum: a summary cut short" diagnose "$T/bad/stub.nwsum"
usage_error "flip\\.nwsum: a corrupt summary \\(its checksum does not match\\)" diagnose "$T/bad/flip.nwsum"
usage_error "future\\.nwsum: summary format 9\\.0, this reader knows 1\\.x" diagnose "$T/bad/future.nwsum"
usage_error "cut\\.nwsum: a summary cut short" status "$T/bad/cut.nwsum"
usage_error "cut\\.nwsum: a summary cut short" summary -o "$T/again.nwsum" "$T/bad/cut.nwsum"
[ ! -e "$T/again.nwsum" ] || fail "summary wrote a file from nothing readable"

note "beside a good summary: exit 1, one unreadable line, the good one's verdict"
cp "$T/node1.nwsum" "$T/bad/"
cli "$T/mixed.json" diagnose --json "$T/bad"
assert_eq "$CLI_STATUS" 1 "diagnose of good and bad summaries"
assert_eq "$(grep -c 'unreadable: ' "$T/mixed.json.err")" 4 "unreadable lines"
assert_grep "unreadable: $T/bad/flip.nwsum: a corrupt summary" "$T/mixed.json.err"
python3 - "$T/mixed.json" <<'PY' || fail "the good summary's job is not in the JSON"
import json, sys
d = json.load(open(sys.argv[1]))
job = d["jobs"][0]
assert job["process_count"] == 4, job["process_count"]
assert sorted(p["rank"] for p in job["processes"]) == [4, 5, 6, 7]
assert len(d["unreadable"]) == 4, d["unreadable"]
PY

note "mutants with a matching checksum: never a crash"
python3 - "$T/node0.nwsum" "$T/mut" <<'PY'
import os, random, sys
d = open(sys.argv[1], "rb").read()
os.makedirs(sys.argv[2])
rnd = random.Random(24)
def fnv(b):
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return h
for i in range(200):
    m = bytearray(d)
    for _ in range(rnd.randint(1, 4)):
        at = rnd.randrange(32, len(m))
        m[at] = rnd.choice([0, 0x7f, 0x80, 0xff, rnd.randrange(256)])
    if i % 10 == 0:              # cut inside the payload, header fixed up
        m = m[:rnd.randrange(33, len(m))]
    m[16:24] = (len(m) - 32).to_bytes(8, "little")
    m[24:32] = fnv(m[32:]).to_bytes(8, "little")
    open("%s/m%03d.nwsum" % (sys.argv[2], i), "wb").write(m)
PY
crashed=0 lines_bad=0
for f in "$T"/mut/*.nwsum; do
	"$NW_CLI" diagnose --json "$f" > "$T/m.out" 2> "$T/m.err"
	rc=$?
	[ $rc -le 2 ] || { crashed=$((crashed + 1)); echo "exit $rc on $f" >&2; }
	if [ $rc = 2 ]; then [ "$(wc -l < "$T/m.err")" = 1 ] || lines_bad=$((lines_bad + 1)); fi
done
assert_eq "$crashed" 0 "mutants that crashed the CLI"
assert_eq "$lines_bad" 0 "mutants refused with other than one line"

note "summary's own usage errors"
mkdir "$T/empty"
usage_error "no segment files" summary -o "$T/x.nwsum" "$T/empty"
usage_error "$T/none/x\\.nwsum" summary -o "$T/none/x.nwsum" "$T/segs"
usage_error "unknown option '--bogus'" summary --bogus
usage_error "no job named 'nope'" summary --job nope -o "$T/x.nwsum" "$T/segs"
echo "ok"
