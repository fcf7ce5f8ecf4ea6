#!/bin/sh
# A program that loads NCCL by hand, like JAX/XLA's TSL NCCL stub, is
# recorded exactly like one linked to it: nccl-ops-dlopen dlopen()s
# libnccl.so.2 by path (RTLD_LOCAL) and calls only through dlsym(handle, ...);
# nccl-ops-linked runs the same script linked to NCCL. Also checks what that
# script exercises: every collective, groups (nested), send/recv numbering,
# ncclGroupSimulateEnd (ops DISCARDED, numbers given back), split ids, and
# that a name an older NCCL lacks is still "not found" through our dlsym.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
export NCCLSIM_NULL=1 NCCLWATCH_KEEP=1

for v in linked dlopen; do
	LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=$v "$NW_PROGS/nccl-ops-$v" "$NW_SIM/libnccl.so.2" > "$T/$v.out" 2>&1 \
		|| { cat "$T/$v.out"; fail "nccl-ops-$v failed"; }
	assert_grep '^done failures=0$' "$T/$v.out"
	assert_no_grep 'ncclwatch:' "$T/$v.out"
	op_lines "$NCCLWATCH_DIR/$v" > "$T/$v.ops"
done
note "records of the linked program: $(grep -c . "$T/linked.ops")"
assert_eq "$(grep -c . "$T/linked.ops")" 60 "records of the script"
diff "$T/linked.ops" "$T/dlopen.ops" || fail "the dlopen'ing program is recorded differently"
show "$NCCLWATCH_DIR/dlopen" > "$T/dlopen.show"
assert_grep "^  nccl_lib +$NW_SIM/libnccl.so.2\$" "$T/dlopen.show"

note "what the script does, as recorded"
ops="$T/linked.ops"
for k in AllReduce Broadcast Bcast Reduce AllGather ReduceScatter AlltoAll Gather Scatter Send Recv \
         GroupStart GroupEnd CommInit CommSplit CommFinalize CommDestroy; do
	grep -q "^ $k " "$ops" || fail "no $k record"
done
# each collective kind with its arguments (count, type, op, root) on both ranks
assert_eq "$(grep -c '^ Reduce rank=[01]/2 seq=4 count=5 dtype=float16 redop=max root=1 group=3 depth=1 ' "$ops")" 2 "Reduce"
assert_eq "$(grep -c '^ Bcast rank=[01]/2 seq=3 count=3 dtype=float64 redop=- root=0 group=3 depth=2 .*flags=group,inplace' "$ops")" 2 "nested Bcast"
assert_eq "$(grep -c '^ ReduceScatter rank=[01]/2 seq=6 count=7 dtype=int64 redop=min ' "$ops")" 2 "ReduceScatter"
# the simulated group: 4 ops DISCARDED, and the next all-reduce/send reuse the numbers
assert_eq "$(grep -c 'state=DISCARDED' "$ops")" 5 "discarded records (4 ops + GroupEnd)"
# The script runs in null mode on a made-up stream handle: the watchdog can
# put no CUDA event on it, so every launched op is UNTRACKED (never left
# ENQUEUED, which would be a false stall); groups and life-cycle calls are
# INIT_DONE.
assert_eq "$(grep -c '^ AllReduce rank=[01]/2 seq=10 count=14 .*state=UNTRACKED' "$ops")" 2 "all-reduce #10 after the discarded group"
assert_grep '^ Send rank=0/2 seq=3 count=15 dtype=float32 redop=- peer=1 .*state=UNTRACKED' "$ops"
assert_grep '^ Recv rank=1/2 seq=3 count=15 dtype=float32 redop=- peer=0 .*state=UNTRACKED' "$ops"
assert_no_grep 'state=(ENQUEUED|STARTED|INIT_ENTERED)' "$ops"
assert_eq "$(grep -Ec '^ Group(Start|End) .*state=INIT_DONE' "$ops")" 17 "groups (9 starts, 8 ends; the simulated end is DISCARDED)"
grep -E '^  comm [0-9]' "$T/dlopen.show" > "$T/comms"
assert_eq "$(grep -c 'coll_enqueued=10 ' "$T/comms")" 2 "coll_enqueued after give-back"
assert_grep '^  peer 0 comm=0 .* peer=1 send_enqueued=3 ' "$T/dlopen.show"
assert_grep '^  peer 1 comm=1 .* peer=0 send_enqueued=0 send_completed=0 recv_enqueued=3 ' "$T/dlopen.show"
# InitAll: one id for both comms; Split: both children get the same derived id
assert_eq "$(grep 'origin=InitAll' "$T/comms" | field id | sort -u | grep -c .)" 1 "InitAll ids"
assert_eq "$(grep 'origin=Split' "$T/comms" | field id | sort -u | grep -c .)" 1 "Split ids"
assert_eq "$(grep 'origin=Split' "$T/comms" | grep -c 'state=DESTROYED')" 2 "split comms destroyed"
assert_grep '^ AllReduce rank=0/2 seq=1 count=16 ' "$ops"

note "a name the library does not define stays unknown through our dlsym"
cat > "$T/missing.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) return 2;
	void *present = dlsym(h, "ncclAllReduce");
	void *absent = dlsym(h, "ncclNoSuchFunction");
	const char *err = dlerror();
	void *next = dlsym(RTLD_NEXT, "getpid");      /* the caller's "next" is libc */
	void *libc = dlsym(RTLD_DEFAULT, "getpid");
	printf("present %d absent %d error %d next %d\n", present != NULL, absent != NULL, err != NULL, next == libc && next != NULL);
	(void)argc;
	return 0;
}
C
${CC:-gcc} -o "$T/missing" "$T/missing.c" -ldl || fail "cannot build the dlsym probe"
LD_PRELOAD="$(nw_preload)" "$T/missing" "$NW_SIM/libnccl.so.2" > "$T/missing.out" 2>&1
cat "$T/missing.out"
assert_grep '^present 1 absent 0 error 1 next 1$' "$T/missing.out"

note "a comm table of 1 slot: the second comm is untracked, the program unaffected"
NCCLWATCH_COMMS=1 NCCLWATCH_KEEP=1 NCCLWATCH_JOB=small LD_PRELOAD="$(nw_preload)" "$NW_PROGS/nccl-ops-linked" \
	> "$T/small.out" 2>&1 || { cat "$T/small.out"; fail "nccl-ops-linked failed with a small comm table"; }
assert_grep '^done failures=0$' "$T/small.out"
assert_eq "$(grep -c 'ncclwatch: comm table full' "$T/small.out")" 1 "comm table full messages"
show "$NCCLWATCH_DIR/small" > "$T/small.show"
assert_grep '^  flags +recording,exited,comms_full,exit_status$' "$T/small.show"
assert_grep '^comms count=1 capacity=1$' "$T/small.show"
dropped=$(sed -n 's/^  ops_dropped *//p' "$T/small.show")
[ "$dropped" -gt 0 ] || fail "no ops counted as dropped"
# every op record names the one tracked comm (groups name none)
assert_no_grep '^  op .* (AllReduce|Send|Recv|Comm[A-Za-z]*) comm=0000000000000000 ' "$T/small.show"
assert_eq "$(grep -c '^  op .* AllReduce ' "$T/small.show")" 3 "all-reduces of the tracked comm (#1, the discarded #10, #10)"
