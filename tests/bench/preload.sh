#!/bin/sh
# Part of `make bench` (tests/bench/run.sh): what merely having
# libncclwatch.so in LD_PRELOAD costs programs that are not NCCL jobs, or
# parts of a job that are not NCCL calls. Figures and ratios, never
# pass/fail.
#   exec: 500 runs of /bin/true from a shell, with LD_PRELOAD set (every
#     one loads the preload and whatever it needs) and without; best of 9
#     each, interleaved; and how many objects the loader maps for one
#     /bin/true (LD_TRACE_LOADED_OBJECTS), a count that does not vary.
#   exceptions: 100,000 throw/catch in a C++ library that a C program
#     dlopens after its first NCCL call and a stack dump (so the preload's
#     watchdog runs and has loaded its unwinder), with and without the
#     preload; best of 3. An unwinder in the global symbol scope would take
#     libstdc++'s _Unwind_RaiseException from libgcc_s.
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$NW_ROOT/tests/lib.sh"
nw_use_sim
probe="$NW_BUILD/tests/progs/throw-probe"
throwlib="$NW_BUILD/tests/compat/libnw-throw.so"
for f in "$probe" "$throwlib" "$NW_LIB" "$NW_CLI"; do
	[ -e "$f" ] || { echo "bench preload: $f is missing (make all)" >&2; exit 2; }
done
export NCCLWATCH_JOB=benchpre

echo
echo "=== what the preload costs outside NCCL calls ==="

# ns CMD...: the wall time of one run of CMD.
ns() {
	_t0=$(date +%s%N)
	"$@" > /dev/null 2>&1
	_t1=$(date +%s%N)
	echo $((_t1 - _t0))
}
min() { if [ -z "$1" ] || [ "$2" -lt "$1" ]; then echo "$2"; else echo "$1"; fi; }

loop='i=0; while [ $i -lt 500 ]; do /bin/true; i=$((i + 1)); done'
plain="" watched=""
for _i in $(seq 9); do     # interleaved, so a busy moment hits both alike
	plain=$(min "$plain" "$(ns env -u LD_PRELOAD sh -c "$loop")")
	watched=$(min "$watched" "$(ns env LD_PRELOAD="$NW_LIB" sh -c "$loop")")
done
echo "command: [LD_PRELOAD=$NW_LIB] sh -c '$loop' (best of 9 each, interleaved)"
# objects ENV-ARG: the objects the loader maps for /bin/true (not the vdso).
objects() { env "$1" LD_TRACE_LOADED_OBJECTS=1 /bin/true 2>/dev/null | grep -c '=>\|^[[:space:]]*/'; }
awk -v p="$plain" -v w="$watched" -v op="$(objects -uLD_PRELOAD)" -v ow="$(objects LD_PRELOAD="$NW_LIB")" 'BEGIN {
	printf "exec: 500 x /bin/true: plain %.1f ms, preloaded %.1f ms, ratio %.2fx (%.0f us more per exec);\n", p / 1e6, w / 1e6, (p > 0 ? w / p : 0), (w - p) / 500 / 1e3
	printf "  objects each exec loads: plain %d, preloaded %d\n", op, ow }'

# throw_ms [ENV=VALUE...]: one throw-probe run after an NCCL call and a
# dump request; its "caught N in MS ms" figure.
throw_ms() {
	rm -rf "$NCCLWATCH_DIR" "$T/go" "$T/probe.out"
	nw_spawn env "$@" "$probe" "$throwlib" 100000 --nccl "$T/go" > "$T/probe.out" 2>&1
	_pid=$NW_PID
	nw_until 60 grep -q '^ready' "$T/probe.out" || { cat "$T/probe.out" >&2; echo 0; return; }
	[ $# -gt 0 ] && "$NW_CLI" dump --wait 10 "$NCCLWATCH_DIR" > /dev/null 2>&1
	touch "$T/go"
	nw_wait "$_pid" 120 > /dev/null 2>&1
	sed -n 's/^caught 100000 in \([0-9.]*\) ms$/\1/p' "$T/probe.out"
}
best_ms() {   # best_ms [ENV=VALUE...]: the lowest of 3 throw_ms
	_b=""
	for _i in 1 2 3; do
		_m=$(throw_ms "$@")
		[ -n "$_m" ] || continue
		if [ -z "$_b" ] || awk -v a="$_m" -v b="$_b" 'BEGIN { exit !(a < b) }'; then _b=$_m; fi
	done
	echo "${_b:-0}"
}
plain=$(best_ms)
watched=$(best_ms LD_PRELOAD="$NW_LIB")
echo "command: [LD_PRELOAD=$NW_LIB] throw-probe libnw-throw.so 100000 --nccl GOFILE (dump requested before GOFILE; best of 3)"
awk -v p="$plain" -v w="$watched" 'BEGIN {
	printf "exceptions: 100000 throw/catch in a dlopened C++ library: plain %.1f ms, preloaded %.1f ms, ratio %.2fx\n",
		p, w, (p > 0 ? w / p : 0) }'
echo "goal: both ratios 1.0x (nothing of the preload in the global symbol scope but its wrappers)"
