#!/bin/sh
# Terminal control characters in anything that came from files or from a
# peer (file and directory names, host names, thread, function, module and
# Python names, environment values, communicator names, Flight Recorder
# and RAS strings, RAS events) never reach the terminal raw: every
# command's stdout and stderr is checked byte by byte
# (tests/cli/no_controls.py: no C0 control but the newline, no DEL, no C1
# control, no byte that is not UTF-8), and each output must show the
# escaped form, so the hostile strings were really printed.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
need_engine

# ESC [31m, BEL, CR, 0x9b (the 8-bit CSI, not UTF-8), U+009B (the C1 CSI), DEL
TA=$(printf '\033[31m\007\r\233\302\233\177')
SHOWN='\x1b[31m\x07\x0d\x9b\xc2\x9b\x7f'   # what text output prints for it
NC="$NW_ROOT/tests/cli/no_controls.py"
NWGEN="$NW_BUILD/tests/progs/nwgen"
MKSEG="$NW_BUILD/tests/progs/mkseg"
FRGEN="$NW_ROOT/tests/gen/frgen.py"

# run NAME ARGS...: `ncclwatch ARGS`, stdout in $T/NAME.out, stderr in
# $T/NAME.err; it must not crash.
run() {
	_n=$1; shift
	"$NW_CLI" "$@" > "$T/$_n.out" 2> "$T/$_n.err"
	_rc=$?
	[ $_rc -le 2 ] || { cat "$T/$_n.err" >&2; fail "ncclwatch $*: exit status $_rc"; }
}
# clean NAME [TEXT]: NAME's stdout and stderr hold no control byte, and
# show TEXT (a fixed string; default the escaped taint).
clean() {
	python3 "$NC" "$T/$1.out" "$T/$1.err" || fail "ncclwatch $1: a control byte reached the terminal"
	cat "$T/$1.out" "$T/$1.err" | grep -qF -- "${2:-$SHOWN}" ||
		{ head -n 30 "$T/$1.out" "$T/$1.err" | cat -v >&2; fail "ncclwatch $1: '${2:-$SHOWN}' not in its output"; }
	echo "ok: $1"
}

note "segments: host names (so file names), a job directory, thread, function and module names,"
note "an environment value, a comm name; an unreadable file named with escapes"
G="$T/gen"
"$NWGEN" --scenario env_diff --ranks 8 --out "$G" --stacks --job "job$TA" --taint "$TA" > /dev/null ||
	fail "nwgen --taint"
printf garbage > "$G/job$TA/bad$TA.seg"
run diag diagnose "$G"; clean diag
assert_grep '^ncclwatch diagnose: unreadable: .*/bad\\x1b\[31m' "$T/diag.err"
assert_grep "^  NCCL_SOCKET_IFNAME:" "$T/diag.out"
assert_grep '^  ranks 0-7 \(8\) thread "train\\x1b\[31m' "$T/diag.out"
run diagv diagnose --verbose "$G"; clean diagv
run diagj diagnose --json "$G"; clean diagj '\u001B[31m\u0007\r'
run status status "$G"; clean status
# a process line keeps its eight fields whatever the host name holds
assert_eq "$(grep -v '^#' "$T/status.out" | awk 'NF != 8' | wc -l)" 0 "status lines of other than 8 fields"
run show show "$G/job$TA"; clean show

note "a segment with Python frames (file, function and thread names) and a stop reason"
mkdir -p "$T/py"
"$MKSEG" --python --stopped "stop$TA" --taint "$TA" "$T/py/seg$TA.seg" || fail "mkseg --taint"
run pyshow show "$T/py/seg$TA.seg"; clean pyshow
assert_grep '^    py#0 train_step\\x1b\[31m' "$T/pyshow.out"
run pydiag diagnose --verbose "$T/py"; clean pydiag

note "attach's snapshots: thread names, native and Python frames"
"$NWGEN" --ranks 4 --out "$T/snap" --job "snap$TA" \
	--snapshot "0-2/th$TA=poll<ncclAllReduce@libnccl.so.2<step$TA (tr$TA.py:3)<main;3/th$TA=idle$TA<main" > /dev/null ||
	fail "nwgen --snapshot"
run snapdiag diagnose --verbose "$T/snap"; clean snapdiag
run snapshow show "$T/snap"; clean snapshow

note "Flight Recorder dumps: file names, process group names, frames"
python3 "$FRGEN" missing-rank "$T/fr" --ranks 4 --entries 4 --prefix "tr$TA" --taint "$TA" > /dev/null || fail frgen
run frdiag diagnose "$T/fr"; clean frdiag '\x1b[31m'
run frshow show "$T/fr"; clean frshow '\x1b[31m'
# JSON is UTF-8: the same without the lone 0x9b
python3 "$FRGEN" missing-rank "$T/frj" --ranks 4 --entries 4 --json --taint "$(printf '\033[31m\007\r\302\233\177')" \
	> /dev/null || fail "frgen --json"
run frjdiag diagnose "$T/frj"; clean frjdiag '\x1b[31m'

note "a saved RAS report: its file name, host names, NCCL version"
python3 - "$T/ras$TA.json" "$TA" <<'PY' || fail "RAS report"
import json, os, sys
t = os.fsencode(sys.argv[2]).decode("utf-8", "surrogateescape").replace("\udc9b", "")   # JSON is UTF-8
def rank(r, ar, fin=False):
    return {"rank": r, "host": "10.0.0.1" + t, "pid": 100 + r, "cuda_dev": r, "nvml_dev": r,
            "status": {"init_state": 0, "async_error": 0, "finalize_called": fin, "destroy_flag": False,
                       "abort_flag": False},
            "collective_counts": {"Broadcast": 0, "Reduce": 0, "AllGather": 0, "ReduceScatter": 0, "AllReduce": ar}}
comm = {"hash": "0xa5", "secondary_hash": "0x1:0x2", "size": 4, "ranks_count": 4, "missing_ranks_count": 0,
        "ranks": [rank(0, 5, True)] + [rank(r, 5) for r in (1, 2, 3)], "missing_ranks": []}
doc = {"nccl_version": "2.28.9" + t, "cuda_runtime_version": 12090, "cuda_driver_version": 13000,
       "timestamp": "2026-11-24 00:00:00" + t, "communicators_count": 1, "communicators": [comm],
       "ras": {"collection_time_sec": 0.002, "timeouts_count": 0}}
open(sys.argv[1], "w", encoding="utf-8").write(json.dumps(doc, indent=2, ensure_ascii=False))
PY
run rasdiag diagnose "$T/ras$TA.json"; clean rasdiag '10.0.0.1\x1b[31m\x07\x0d\xc2\x9b\x7f'

note "a RAS endpoint that answers with escapes: report (JSON and text) and events"
cat > "$T/server.py" <<'PY'
import os, socket, sys
t = os.fsencode(sys.argv[2])
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
# JSON as NCCL writes it: the C1 control and DEL raw in strings (valid JSON), the others escaped
js = t.replace(b"\x1b", b"\\u001b").replace(b"\x07", b"\\u0007").replace(b"\r", b"\\r").replace(b"\x9b\xc2", b"\xc2")
report = (b'{\n  "nccl_version": "2.28.9' + js + b'",\n  "cuda_runtime_version": 12090,\n'
          b'  "cuda_driver_version": 13000,\n  "timestamp": "2026-11-24 00:00:00",\n  "communicators_count": 1,\n'
          b'  "communicators": [\n    {\n      "hash": "0xa5",\n      "secondary_hash": "0x1:0x2",\n      "size": 2,\n'
          b'      "ranks_count": 1,\n      "missing_ranks_count": 1,\n      "ranks": [\n        {\n          "rank": 0,\n'
          b'          "host": "10.0.0.1' + js + b'",\n          "pid": 100,\n          "cuda_dev": 0,\n          "nvml_dev": 0,\n'
          b'          "status": { "init_state": 0, "async_error": 0, "finalize_called": false, "destroy_flag": false,'
          b' "abort_flag": false },\n          "collective_counts": { "AllReduce": 5 }\n        }\n      ],\n'
          b'      "missing_ranks": [\n        {\n          "rank": 1,\n          "host": "10.0.0.2' + js + b'",\n'
          b'          "pid": 101,\n          "cuda_dev": 1,\n          "nvml_dev": 1,\n'
          b'          "status": { "unresponsive": true, "considered_dead": false }\n        }\n      ]\n    }\n  ],\n'
          b'  "ras": { "collection_time_sec": 0.002, "timeouts_count": 0 }\n}\n')
text = (b"NCCL version 2.27.7 compiled with CUDA 12.9\nCUDA runtime version 12090, driver version 12090\n\n"
        b"Errors\n======\n\n#0-0 (00000000000000a5) INCOMPLETE\n"
        b"  Rank 3 -- GPU 3 managed by process 1003 on node 10.0.0.1" + t + b"\n\n"
        b"Warnings\n========\n\n#0-0 (00000000000000a5) MISMATCH\n"
        b"  Communicator ranks have different AllReduce operation counts\n  3 ranks have launched up to operation 7\n"
        b"  Rank 1 has launched up to operation 6 -- GPU 1 managed by process 1001 on node 10.0.0.1" + t + b"\n\n")
while True:
    c, _ = s.accept()
    json_fmt = False
    for line in c.makefile("rb"):
        cmd = line.decode("latin-1").strip().upper()
        if cmd.startswith("CLIENT PROTOCOL"): c.sendall(b"SERVER PROTOCOL 2\n")
        elif cmd.startswith("TIMEOUT"): c.sendall(b"OK\n")
        elif cmd == "SET FORMAT JSON": json_fmt = True; c.sendall(b"OK\n")
        elif cmd.endswith("STATUS"): c.sendall(report if json_fmt else text); break
        elif cmd.startswith("MONITOR"):
            c.sendall(b"OK\n")
            if json_fmt:
                c.sendall(b'{\n  "event": "PEER_DEAD",\n  "details": "' + js + b'"\n}\n')
            else:
                c.sendall(b"PEER_DEAD 10.0.0.2" + t + b"\n")
            break
    c.close()
PY
nw_spawn python3 "$T/server.py" "$T/port" "$TA"
nw_until 30 test -s "$T/port" || fail "the stand-in RAS server did not start"
A="127.0.0.1:$(cat "$T/port")"
run ras ras --addr "$A"; clean ras '10.0.0.2\x1b[31m\x07\x0d\xc2\x9b\x7f'
assert_grep '^RAS at 127\.0\.0\.1:[0-9]+: NCCL 2\.28\.9\\x1b\[31m' "$T/ras.out"
run rasjson ras --addr "$A" --json; clean rasjson '"10.0.0.2\u001b[31m\u0007\r\u009b\u007f"'
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/rasjson.out" || fail "ras --json: not the same JSON"
run rastext ras --addr "$A" --text; clean rastext '10.0.0.1\x1b[31m\x07\x0d\x9b\xc2\x9b\x7f'
run rastextjson ras --addr "$A" --text --json; clean rastextjson 'node 10.0.0.1\x1b[31m\x07\x0d\x9b\xc2\x9b\x7f'
run rassave ras --addr "$A" --save "$T/saved$TA.json"; clean rassave '\x1b[31m'
run mon ras --addr "$A" --monitor all --timeout 20; clean mon 'PEER_DEAD 10.0.0.2\x1b[31m\x07\x0d\x9b\xc2\x9b\x7f'
run monjson ras --addr "$A" --monitor all --json --timeout 20; clean monjson '"\u001b[31m\u0007\r\u009b\u007f"'

note "a hung job under the preload, its program named with escapes (its threads' names)"
cp "$NW_TRAINER" "$T/tr$TA" || fail "copy the trainer"
export NCCLWATCH_TIMEOUT=600   # no dump of its own: `ncclwatch dump` asks
nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=live NCCLWATCH_KEEP=1 \
	"$T/tr$TA" --nranks 2 --steps 100 --bcast-every 0 --verbose --fault skip:rank=1:step=3 > "$T/live.log" 2>&1
TRAINER_PID=$NW_PID
wait_for_ranks 120 "$T/live.log" ' step 2 done$' 0 1
nw_until 30 test -f "$NCCLWATCH_DIR/live/control" || fail "no control file"
run dump dump --wait 30 "$NCCLWATCH_DIR/live"; clean dump 'dump: job live: 2 of 2 processes answered'
run live diagnose --timeout 0.5 "$NCCLWATCH_DIR/live"; clean live 'thread "tr\x1b[31m'
run livestatus status "$NCCLWATCH_DIR/live"; clean livestatus 'live: 2 processes'
# a job directory named with escapes (the preload makes names safe, a
# directory can still be renamed), its control file not one
mkdir "$NCCLWATCH_DIR/fake$TA"
printf junk > "$NCCLWATCH_DIR/fake$TA/control"
run dumpfake dump --wait 1 "$NCCLWATCH_DIR/fake$TA"; clean dumpfake
assert_grep '^dump: job fake\\x1b\[31m.* is not a control file; nothing asked$' "$T/dumpfake.out"
trainer_kill
mv "$NCCLWATCH_DIR/live" "$NCCLWATCH_DIR/live$TA"
run gcdry gc --dry-run "$NCCLWATCH_DIR"; clean gcdry
run gc gc "$NCCLWATCH_DIR"; clean gc
assert_grep '^removed .*/live\\x1b\[31m.*\.seg$' "$T/gc.out"

note "attach to a job started without the preload, same program, snapshots into a directory named with escapes"
nw_spawn env NCCLWATCH_JOB=att "$T/tr$TA" --nranks 2 --steps 100 --bcast-every 0 --verbose \
	--fault skip:rank=1:step=3 > "$T/att.log" 2>&1
TRAINER_PID=$NW_PID
wait_for_ranks 120 "$T/att.log" ' step 2 done$' 0 1
run attach attach --no-python --tree "$TRAINER_PID" -o "$T/att$TA"; clean attach
assert_grep '^attach: pid [0-9]+ rank - \(tr\\x1b\[31m.* -> .*/att\\x1b\[31m.*\.snap\.seg$' "$T/attach.out"
trainer_kill
