#!/bin/sh
# A thread blocked in a call gives only pc and sp (/proc/PID/task/TID/
# syscall); code built with frame pointers finds its callers through rbp.
# The capture recovers the frame record of the function it stopped in
# (validated: the instruction before its return address calls that
# function), so both threads of capture-framepointer show the whole chain
# fp_level3 < fp_level2 < fp_level1 < thread_main / main. (attach here;
# the watchdog's capture of its own process is the same core: the SAN
# runs of the watchdog and analysis tests, whose trainer is built with
# frame pointers, check it there.)
. "$NW_ROOT/tests/lib.sh"
FP="$NW_BUILD/tests/capture/capture-framepointer"

nw_spawn "$FP" > "$T/fp.out"
PID=$NW_PID
nw_until 30 grep -q '^ready' "$T/fp.out" || fail "capture-framepointer did not start"
# Both threads blocked in pause(): their syscall files no longer say "running".
blocked() {
	[ "$(ls /proc/$PID/task | wc -l)" = 2 ] || return 1
	for f in /proc/$PID/task/*/syscall; do
		case "$(cat "$f")" in 34\ *) ;; *) return 1 ;; esac
	done
}
nw_until 30 blocked || fail "the threads of capture-framepointer never blocked in pause"

"$NW_CLI" attach --no-verdict --no-ras --no-python -o "$T/out" "$PID" > "$T/attach.out" 2>&1 ||
	{ cat "$T/attach.out"; fail "attach"; }
"$NW_CLI" show "$T/out"/*.snap.seg > "$T/show" 2>&1 || { cat "$T/show"; fail "show"; }
cat "$T/show"
# Each thread: its frames in order, one line each ("#N 0xIP SYMBOL+0xOFF").
frames() { awk '/^  thread /{t++} t && /^    #/{print t, $3}' "$T/show" | sed 's/+0x[0-9a-f]*$//'; }
frames > "$T/frames"
for th in 1 2; do
	chain=$(awk -v t=$th '$1 == t {print $2}' "$T/frames" | tr '\n' ' ')
	case "$chain" in
	*"fp_level3 fp_level2 fp_level1 "*) ;;
	*) fail "thread $th: no fp_level3 < fp_level2 < fp_level1 chain: $chain" ;;
	esac
done
assert_grep ' thread_main\+0x' "$T/show"
assert_grep ' main\+0x' "$T/show"
assert_grep 'regs-syscall' "$T/show"
kill "$PID"

