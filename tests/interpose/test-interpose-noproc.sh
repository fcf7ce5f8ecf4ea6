#!/bin/sh
# Recording needs no /proc: where /proc cannot name an unnamed file (not
# mounted: here an empty tmpfs over it in a mount namespace of the test's
# own), the segment and the control file are made under a temporary name
# (.<what>.<host>.<pid>.tmp, created exclusively) and linked once
# complete, so still nobody maps a half-made file (before: no segment,
# and "cannot create ...: No such file or directory"). nccl-ops-linked
# records the same ops as with /proc, and leaves no temporary file.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
export NCCLSIM_NULL=1
[ "$(id -u)" = 0 ] || skip "hiding /proc needs root"
command -v unshare > /dev/null || skip "no unshare (util-linux)"
unshare --mount --propagation private sh -c 'mount -t tmpfs -o size=4k tmpfs /proc && [ ! -e /proc/self ]' 2>/dev/null \
	|| skip "cannot mount over /proc in a mount namespace here"
# ASan reads its options from /proc/self/environ and LeakSanitizer the
# threads from /proc/PID/task: without /proc the runtime itself fails
case "$NW_SAN" in *address*) skip "the sanitizer runtime needs /proc (LeakSanitizer fails without it)";; esac

NCCLWATCH_KEEP=1 NCCLWATCH_JOB=proc LD_PRELOAD="$(nw_preload)" "$NW_PROGS/nccl-ops-linked" > "$T/proc.out" 2>&1 \
	|| { cat "$T/proc.out"; fail "nccl-ops-linked failed"; }
# The preload only for the program: unshare, mount and sh run without it.
unshare --mount --propagation private sh -c 'mount -t tmpfs -o size=4k tmpfs /proc && exec "$@"' sh \
	env NCCLWATCH_KEEP=1 NCCLWATCH_JOB=noproc LD_PRELOAD="$(nw_preload)" "$NW_PROGS/nccl-ops-linked" \
	> "$T/noproc.out" 2>&1 || { cat "$T/noproc.out"; fail "nccl-ops-linked failed without /proc"; }
cat "$T/noproc.out"
assert_no_grep 'ncclwatch:' "$T/noproc.out"
diff "$T/proc.out" "$T/noproc.out" || fail "the program's output differs without /proc"
assert_eq "$(segments "$NCCLWATCH_DIR/noproc" | wc -l)" 1 "segments made without /proc"
[ -f "$NCCLWATCH_DIR/noproc/control" ] || fail "no control file made without /proc"
assert_eq "$(find "$NCCLWATCH_DIR/noproc" -name '.*' | wc -l)" 0 "temporary files left"
op_lines "$(segments "$NCCLWATCH_DIR/proc")" > "$T/proc.ops"
op_lines "$(segments "$NCCLWATCH_DIR/noproc")" > "$T/noproc.ops"
[ -s "$T/proc.ops" ] || fail "no records with /proc"
diff "$T/proc.ops" "$T/noproc.ops" || fail "records differ without /proc"
echo ok
