#!/bin/sh
# A Python process that never calls NCCL, under the preload, is untouched:
# it even loads libnccl and libcuda through ctypes, runs threads, and
# prints what it sees of itself (its threads, its signal handlers, its
# mapped files of ours); the same output as without the preload, exit 0,
# no segment, no job directory, no "ncclwatch:" line.
. "$NW_ROOT/tests/lib.sh"
nw_use_sim
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no $PY (Debian: python3)"
[ -f "$NW_LIB" ] || fail "$NW_LIB not built"
cat > "$T/plain.py" <<'PYEOF'
import ctypes, os, signal, threading, time
nccl = ctypes.CDLL("libnccl.so.2")
cuda = ctypes.CDLL("libcuda.so.1")
done = threading.Event()
t = threading.Thread(target=done.wait, name="worker")
t.start()
time.sleep(0.2)
print("threads", sorted(open("/proc/self/task/%s/comm" % x).read().strip() for x in os.listdir("/proc/self/task")))
print("handlers", [s for s in range(1, signal.SIGRTMAX + 1)
                   if s not in (signal.SIGKILL, signal.SIGSTOP) and signal.getsignal(s) not in (signal.SIG_DFL, None)])
print("ncclwatch files", [l.split()[-1] for l in open("/proc/self/maps") if "ncclwatch-" in l or ".seg" in l])
done.set()
t.join()
print("ok")
PYEOF
"$PY" "$T/plain.py" > "$T/without.out" 2>&1 || fail "without the preload: exit $?"
LD_PRELOAD="$(nw_preload)" "$PY" "$T/plain.py" > "$T/with.out" 2>&1 || fail "with the preload: exit $?"
diff "$T/without.out" "$T/with.out" || fail "the output differs under the preload"
assert_grep '^ok$' "$T/with.out"
assert_no_grep 'ncclwatch:' "$T/with.out"
[ -z "$(find "$NCCLWATCH_DIR" -mindepth 1 2>/dev/null)" ] || { find "$NCCLWATCH_DIR" >&2; fail "files under $NCCLWATCH_DIR"; }
echo ok
