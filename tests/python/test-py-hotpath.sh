#!/bin/sh
# The per-op Python call site makes no syscall: Debian's python3 making N
# and 2N ncclAllReduce calls through ctypes (tests/bench/py_calls.py, the
# null NCCL), preloaded, NCCLWATCH_PY_FRAMES=4, under `strace -f`: the
# calling thread's syscall totals are equal (one per call would add N).
# Counted, never timed. The calls did record their call sites: the kept
# segment's ops have "py" lines (unnamed: no capture was made), as many as
# the program had frames, up to NCCLWATCH_PY_FRAMES (4, 2 and 8).
. "$NW_ROOT/tests/lib.sh"
nw_use_sim
export NCCLSIM_NULL=1 NCCLWATCH_PY_FRAMES=4
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no $PY (Debian: python3)"
[ -z "$NW_SAN" ] || skip "counts under a sanitizer runtime are not the library's"
command -v strace > /dev/null || skip "strace not installed"
calls="$NW_ROOT/tests/bench/py_calls.py"

NCCLWATCH_KEEP=1 NCCLWATCH_JOB=kept LD_PRELOAD="$(nw_preload)" "$PY" "$calls" 100 1 > "$T/kept.out" 2>&1 ||
	{ cat "$T/kept.out"; fail "py_calls.py failed"; }
"$NW_CLI" show --records 4 "$NCCLWATCH_DIR/kept" > "$T/show.txt" || fail "show"
assert_eq "$(grep -c '^  op .* AllReduce ' "$T/show.txt")" 4 "ops shown"
assert_eq "$(grep -c '^    py ' "$T/show.txt")" 16 "call-site lines (4 ops x 4 frames)"

# Depths other than the default (its walk is unrolled, theirs a loop), and
# fewer frames than the depth: a call from the module (1 frame), then one
# 6 frames deep; each op keeps min(frames, depth) of them.
cat > "$T/depths.py" << 'EOF'
import ctypes
nccl = ctypes.CDLL("libnccl.so.2")
comm = (ctypes.c_void_p * 1)()
assert nccl.ncclCommInitAll(comm, 1, None) == 0
buf = (ctypes.c_float * 4)()
c = ctypes.c_void_p(comm[0])
def f5(): nccl.ncclAllReduce(buf, buf, ctypes.c_size_t(4), 7, 0, c, None)
def f4(): f5()
def f3(): f4()
def f2(): f3()
def f1(): f2()
nccl.ncclAllReduce(buf, buf, ctypes.c_size_t(4), 7, 0, c, None)
f1()
EOF
for d in 4 2 8; do
	NCCLWATCH_PY_FRAMES=$d NCCLWATCH_KEEP=1 NCCLWATCH_JOB=depth$d LD_PRELOAD="$(nw_preload)" "$PY" "$T/depths.py" \
		> "$T/depth$d.out" 2>&1 || { cat "$T/depth$d.out"; fail "depths.py failed"; }
	"$NW_CLI" show --records 2 "$NCCLWATCH_DIR/depth$d" > "$T/depth$d.txt" || fail "show"
	# the call-site lines under each of the two ops, oldest first
	got=$(awk '/^  op .* AllReduce / { if (n != "") printf "%s ", k; n = 1; k = 0; next }
	           /^    py / { k++ } END { if (n != "") printf "%s", k }' "$T/depth$d.txt")
	case $d in 4) want="1 4" ;; 2) want="1 2" ;; 8) want="1 6" ;; esac
	assert_eq "$got" "$want" "NCCLWATCH_PY_FRAMES=$d: call-site lines of a call from the module and of one 6 frames deep"
done

for n in 10000 20000; do
	strace -f -qq -o "$T/strace.$n" -E LD_PRELOAD="$(nw_preload)" -E NCCLWATCH_JOB=sys$n \
		"$PY" "$calls" $n 1 > "$T/sys.$n.out" 2>&1 || { cat "$T/sys.$n.out"; fail "strace run failed"; }
done
count_calls() {   # count_calls FILE: syscalls of the first thread (Python's main thread)
	_main=$(awk 'NR == 1 { print $1 }' "$1")
	awk -v m="$_main" '$2 ~ /^[a-z_0-9]+\(/ && $1 == m { n++ } END { print n + 0 }' "$1"
}
a=$(count_calls "$T/strace.10000")
b=$(count_calls "$T/strace.20000")
note "syscalls of the calling thread: $a with 2x10000 calls, $b with 2x20000"
[ "$a" -gt 0 ] || fail "could not count strace's lines"
assert_eq "$b" "$a" "syscalls of the calling thread with twice the calls"
echo ok
