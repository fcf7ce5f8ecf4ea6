#!/bin/sh
# The hot path (a wrapped ncclAllReduce in steady state) makes no syscall
# and no heap allocation. Counted, never timed, so the result does not
# depend on the machine:
# - allocations: nccl-hot-loop defines malloc & co. itself (the executable
#   precedes every preloaded library in symbol lookup) and prints how many
#   happened during N wrapped calls after a warm-up: must be 0, while the
#   setup before (our lazy start) shows the counter works;
# - syscalls: the whole process under `strace -f -c` with N and with 2N
#   calls: the totals must be equal (any per-call syscall would add N).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
export NCCLSIM_NULL=1
[ -z "$NW_SAN" ] || skip "counts under a sanitizer runtime are not the library's"

note "heap allocations during 20000 wrapped calls"
LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=alloc "$NW_PROGS/nccl-hot-loop" 20000 > "$T/alloc.out" 2>&1 \
	|| { cat "$T/alloc.out"; fail "nccl-hot-loop failed"; }
cat "$T/alloc.out"
assert_grep '^issued 20100 allocations 0 setup_allocations [1-9][0-9]*$' "$T/alloc.out"
"$NW_PROGS/nccl-hot-loop" 20000 > "$T/alloc-plain.out" 2>&1 || fail "nccl-hot-loop failed without the preload"
cat "$T/alloc-plain.out"
plain_setup=$(sed -n 's/.*setup_allocations //p' "$T/alloc-plain.out")
watched_setup=$(sed -n 's/.*setup_allocations //p' "$T/alloc.out")
[ "$watched_setup" -gt "$plain_setup" ] || fail "the preload's start allocated nothing: is the counter working?"

command -v strace > /dev/null || skip "strace not installed (the allocation part passed)"
note "syscalls of the whole process with N and 2N wrapped calls"
for n in 10000 20000; do
	strace -f -qq -c -o "$T/strace.$n" -E LD_PRELOAD="$(nw_preload)" -E NCCLWATCH_JOB=sys$n \
		"$NW_PROGS/nccl-hot-loop" $n > "$T/sys.$n.out" 2>&1 || { cat "$T/sys.$n.out"; fail "strace run failed"; }
	grep -q "^issued $((n + 100)) " "$T/sys.$n.out" || fail "the traced program did not run the calls"
done
# strace -c's last line: "% time, seconds, usecs/call, calls, [errors,] total"
calls_n=$(awk '$NF == "total" { print $4 }' "$T/strace.10000")
calls_2n=$(awk '$NF == "total" { print $4 }' "$T/strace.20000")
note "syscalls: $calls_n with 10000 calls, $calls_2n with 20000"
[ -n "$calls_n" ] && [ "$calls_n" -gt 0 ] || { cat "$T/strace.10000"; fail "could not read strace's total"; }
assert_eq "$calls_2n" "$calls_n" "syscalls with twice the calls"
