#!/bin/sh
# Reading a dump never runs its code: a pickle whose REDUCE would call
# os.system is refused with one line naming the opcode and offset, exit 2,
# and the command never runs. Truncated, deep, huge and random files: one
# line, exit 2, no crash.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
. "$NW_ROOT/tests/fr/fr-lib.sh"

mkdir -p "$T/evil"
"$PY" - "$T/evil/comm_lib_trace_rank_0" "$T/MARKER" <<'PY'
import os, pickle, sys
class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + sys.argv[2],))
# a dump's keys first (as the sniffer expects), then the payload
d = {"version": "2.10", "pg_config": {}, "entries": [Evil()]}
open(sys.argv[1], "wb").write(pickle.dumps(d, protocol=2))
PY
usage_error 'opcode (GLOBAL|STACK_GLOBAL|REDUCE) \(0x[0-9a-f]+\) imports or calls code: refused' diagnose "$T/evil"
assert_grep 'comm_lib_trace_rank_0' "$T/usage.err"
[ ! -e "$T/MARKER" ] || fail "the pickle's code ran"
usage_error 'refused' diagnose "$T/evil/comm_lib_trace_rank_0"
[ ! -e "$T/MARKER" ] || fail "the pickle's code ran"

note "protocol 4 and 5 payloads (STACK_GLOBAL, NEWOBJ)"
"$PY" - "$T/evil4/comm_lib_trace_rank_0" "$T/MARKER" <<'PY'
import os, pickle, sys
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + sys.argv[2],))
open(sys.argv[1], "wb").write(pickle.dumps({"version": "2.10", "entries": [Evil()]}, protocol=4))
PY
usage_error 'STACK_GLOBAL \(0x93\) imports or calls code: refused' diagnose "$T/evil4"
[ ! -e "$T/MARKER" ] || fail "the pickle's code ran"

note "truncated"
"$PY" "$FRGEN" missing-rank "$T/good" --ranks 2 > /dev/null
mkdir -p "$T/trunc"
head -c 300 "$T/good/comm_lib_trace_rank_0" > "$T/trunc/comm_lib_trace_rank_0"
usage_error 'truncated' diagnose "$T/trunc"

note "deep: 100,000 nested lists inside the dict, and 100,000 marks"
mkdir -p "$T/deep"
"$PY" - "$T/deep/comm_lib_trace_rank_0" "$T/deep/comm_lib_trace_rank_1" <<'PY'
import sys
head = b"\x80\x02}q\x00(X\x07\x00\x00\x00versionq\x01X\x04\x00\x00\x002.10q\x02X\x07\x00\x00\x00entries"
open(sys.argv[1], "wb").write(head + b"]" * 100000 + b"a" * 99999 + b"u.")
open(sys.argv[2], "wb").write(head + b"(" * 100000 + b".")
PY
usage_error 'no readable segment: 2 files could not be read' diagnose "$T/deep"
usage_error 'marks nested deeper than' diagnose "$T/deep/comm_lib_trace_rank_1"

note "huge: a string length past the end, a file over the limit"
mkdir -p "$T/huge"
"$PY" - "$T/huge/comm_lib_trace_rank_0" <<'PY'
import sys
open(sys.argv[1], "wb").write(b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00}\x8c\x07version\x8d" + b"\xff" * 8 + b"x")
PY
usage_error 'runs past the end of the input' diagnose "$T/huge"
mkdir -p "$T/big"
printf '\200\002}X\007\000\000\000version' > "$T/big/comm_lib_trace_rank_0"
truncate -s 1100M "$T/big/comm_lib_trace_rank_0"
usage_error 'larger than a Flight Recorder dump can be' diagnose "$T/big"
rm -rf "$T/big"

note "random bytes after a pickle's first bytes, 200 files"
mkdir -p "$T/rand"
"$PY" - "$T/rand" <<'PY'
import os, random, sys
random.seed(7)
for i in range(200):
    body = bytes(random.getrandbits(8) for _ in range(random.randint(0, 400)))
    open(os.path.join(sys.argv[1], "comm_lib_trace_rank_%d" % i), "wb").write(b"\x80\x02}X\x07\x00\x00\x00version" + body)
PY
usage_error 'no readable segment: 200 files could not be read' diagnose "$T/rand"
echo ok
