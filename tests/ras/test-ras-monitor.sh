#!/bin/sh
# MONITOR (NCCL 2.29.2+). Against a stand-in 2.30 server (a few lines of
# Python answering as client_support.cc does: OK, then event objects, the
# connection left open): `ncclwatch ras --monitor all --json` prints the
# events as they come and ends when its --timeout passes. Against the
# simulated 2.28.9, which does not know MONITOR: one line, exit 2. A
# server that sends more than the 256 MiB limit: the watch stops there
# with one line saying so, exit 1 (it ended silently with 0).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/ras/ras-lib.sh"

cat > "$T/server.py" <<'PY'
import os, socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
ev = ('{\n  "timestamp": "2026-11-24 00:00:0%d",\n  "group": "LIFECYCLE",\n  "event": "%s",\n  "peer": {\n'
      '    "host": "10.0.0.2",\n    "pid": 4242,\n    "cuda_devs": [1],\n    "nvml_devs": [1]\n  },\n  "details": "%s"\n}\n')
while True:
    c, _ = s.accept()
    f = c.makefile("rb")
    for line in f:
        cmd = line.decode().strip()
        if cmd.upper().startswith("CLIENT PROTOCOL "): c.sendall(b"SERVER PROTOCOL 2\n")
        elif cmd.upper() == "SET FORMAT JSON": c.sendall(b"OK\n")
        elif cmd.upper().startswith("MONITOR"):
            c.sendall(b"OK\n")
            c.sendall((ev % (1, "PEER_DEAD", "")).encode())
            time.sleep(0.2)
            c.sendall((ev % (2, "PEER_NEW", "")).encode())
            time.sleep(30)
            break
    c.close()
PY
nw_spawn python3 "$T/server.py" "$T/port"
nw_until 30 test -s "$T/port" || fail "stand-in server did not start"
nw_bounded 20 "$NW_CLI" ras --monitor all --json --addr "127.0.0.1:$(cat "$T/port")" --timeout 2 > "$T/ev.out" 2> "$T/ev.err"
rc=$?
cat "$T/ev.out" "$T/ev.err"
assert_eq "$rc" 0 "exit status after watching 2 s"
assert_grep '^  "event": "PEER_DEAD",$' "$T/ev.out"
assert_grep '^  "event": "PEER_NEW",$' "$T/ev.out"
python3 -c '
import json, sys
t = open(sys.argv[1]).read()
objs = [json.loads("{" + p) for p in t.split("\n{")[1:]] + [json.loads(t.split("\n{")[0])]
assert len(objs) == 2, objs
' "$T/ev.out" || fail "events are not two JSON objects"

note "a server that sends more than the limit (256 MiB of events): the watch stops there, says so, exit 1"
cat > "$T/flood.py" <<'PY'
import os, socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
block = b"PEER_NEW 10.0.0.2 pid 4242 cuda_devs 1 nvml_devs 1 ....................\n" * 16384   # 1 MiB
c, _ = s.accept()
f = c.makefile("rb")
for line in f:
    cmd = line.decode().strip().upper()
    if cmd.startswith("CLIENT PROTOCOL "): c.sendall(b"SERVER PROTOCOL 2\n")
    elif cmd.startswith("MONITOR"):
        c.sendall(b"OK\n")
        try:
            for _ in range(300): c.sendall(block)
        except OSError:
            pass
        time.sleep(60)
PY
nw_spawn python3 "$T/flood.py" "$T/fport"
nw_until 30 test -s "$T/fport" || fail "the flooding server did not start"
# the events go through a pipe and are counted: 256 MiB need no file
python3 -c '
import subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=open(sys.argv[1], "w"))
n = 0
while True:
    b = p.stdout.read(1 << 20)
    if not b: break
    n += len(b)
print(n, p.wait())' "$T/flood.err" "$NW_CLI" ras --monitor all --addr "127.0.0.1:$(cat "$T/fport")" --timeout 120 > "$T/flood.out"
cat "$T/flood.out" "$T/flood.err"
assert_eq "$(cat "$T/flood.out")" "268435456 1" "bytes shown, exit status"
assert_eq "$(wc -l < "$T/flood.err")" 1 "lines on stderr"
assert_grep "^ncclwatch ras: RAS at 127\\.0\\.0\\.1:[0-9]+: --monitor stopped after 268435456 bytes of events, its limit, before its timeout$" "$T/flood.err"
"$NW_CLI" ras --help | grep -q 'exit 1' || fail "ras --help does not document the exit status"

note "the simulated NCCL 2.28.9 knows no MONITOR"
trainer_start "$T/out" --nranks 2 --steps 1000000 --count 64 --bcast-every 0 --verbose
wait_for_ranks 120 "$T/out" ' step 3 done$' 0 1
assert_eq "$(raw lines:1 'MONITOR\n')" "ERROR: Unknown command MONITOR" "MONITOR on 2.28.9"
"$NW_CLI" ras --monitor lifecycle > "$T/m.out" 2> "$T/m.err"; rc=$?
cat "$T/m.err"
assert_eq "$rc:$(wc -l < "$T/m.err"):$(wc -c < "$T/m.out")" "2:1:0" "exit status, stderr lines, stdout bytes"
assert_grep "^ncclwatch ras: RAS at 127\\.0\\.0\\.1:$RAS_PORT: MONITOR refused \\(it needs NCCL 2\\.29\\.2 or later\\): answered 'ERROR: Unknown command MONITOR lifecycle'$" "$T/m.err"
trainer_kill
