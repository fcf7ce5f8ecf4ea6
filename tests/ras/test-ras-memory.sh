#!/bin/sh
# A RAS report is read in a small multiple of its size: its ranks one at a
# time (report/sources/ras/ras_cut.h), never jansson's tree of the whole report,
# which took six to ten times the text (a 72 MB report: 739 MB). Both ways
# in: `ncclwatch diagnose` of a saved report, and `ncclwatch ras` receiving
# it from an endpoint. A generated report of 60,000 ranks in a world
# communicator and groups of 8 (about 65 MB, tests/ras/rasgen.py) must
# peak below twice its size plus 64 MiB (the program, libraries and the
# engine's model of the job), and the verdict proves all of it was read.
# A bound on memory, not on time: it holds on any machine.
. "$NW_ROOT/tests/lib.sh"

N=60000
python3 "$NW_ROOT/tests/ras/rasgen.py" $N "$T/report.json" || fail "rasgen"
size=$(stat -c %s "$T/report.json")
bound_kb=$(( (2 * size + 64 * 1024 * 1024) / 1024 ))
note "report: $size bytes, $N ranks; bound $bound_kb KB"

# maxrss OUT CMD...: CMD's stdout in OUT; prints its peak resident set (KB)
# and its exit status.
maxrss() {
	python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)' "$@"
}

set -- $(maxrss "$T/diag.out" "$NW_CLI" diagnose "$T/report.json")
kb=$1
echo "diagnose: peak $kb KB (exit status $2)"
head -n 5 "$T/diag.out"
assert_grep "^MISSING_RANK: rank 1 never launched the AllReduce the others launched last on comm 0x0000000000001000 \\(RAS: AllReduce launches=6 there, launches=7 on $((N - 1)) peers\\)" "$T/diag.out"
[ "$kb" -lt "$bound_kb" ] || fail "diagnose of a $size-byte report peaked at $kb KB (bound $bound_kb KB)"

note "the same report from a RAS endpoint"
cat > "$T/server.py" <<'PY'
import os, socket, sys
report = open(sys.argv[2], "rb").read()
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept()
    for line in c.makefile("rb"):
        cmd = line.decode().strip().upper()
        if cmd.startswith("CLIENT PROTOCOL"): c.sendall(b"SERVER PROTOCOL 2\n")
        elif cmd == "SET FORMAT JSON": c.sendall(b"OK\n")
        elif cmd.endswith("STATUS"): c.sendall(report); break
    c.close()
PY
nw_spawn python3 "$T/server.py" "$T/port" "$T/report.json"
nw_until 60 test -s "$T/port" || fail "the stand-in RAS server did not start"
set -- $(maxrss "$T/ras.out" "$NW_CLI" ras --addr "127.0.0.1:$(cat "$T/port")" --timeout 120)
kb=$1
echo "ras: peak $kb KB (exit status $2)"
head -n 3 "$T/ras.out"
assert_grep "^comm 0x0000000000001000: size $N, $N answered, 0 missing$" "$T/ras.out"
assert_grep "^  rank 1: RUNNING AllReduce launches=6$" "$T/ras.out"
[ "$kb" -lt "$bound_kb" ] || fail "ras receiving a $size-byte report peaked at $kb KB (bound $bound_kb KB)"
