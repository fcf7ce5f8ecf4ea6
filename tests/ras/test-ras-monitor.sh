#!/bin/sh
# MONITOR (NCCL 2.29.2+). Against a stand-in 2.30 server (a few lines of
# Python answering as client_support.cc does: OK, then event objects, the
# connection left open): `ncclwatch ras --monitor all --json` prints the
# events as they come and ends when its --timeout passes. Against the
# simulated 2.28.9, which does not know MONITOR: one line, exit 2.
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

note "the simulated NCCL 2.28.9 knows no MONITOR"
trainer_start "$T/out" --nranks 2 --steps 1000000 --count 64 --bcast-every 0 --verbose
wait_for_ranks 120 "$T/out" ' step 3 done$' 0 1
assert_eq "$(raw lines:1 'MONITOR\n')" "ERROR: Unknown command MONITOR" "MONITOR on 2.28.9"
"$NW_CLI" ras --monitor lifecycle > "$T/m.out" 2> "$T/m.err"; rc=$?
cat "$T/m.err"
assert_eq "$rc:$(wc -l < "$T/m.err"):$(wc -c < "$T/m.out")" "2:1:0" "exit status, stderr lines, stdout bytes"
assert_grep "^ncclwatch ras: RAS at 127\\.0\\.0\\.1:$RAS_PORT: MONITOR refused \\(it needs NCCL 2\\.29\\.2 or later\\): answered 'ERROR: Unknown command MONITOR lifecycle'$" "$T/m.err"
trainer_kill
