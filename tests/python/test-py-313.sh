#!/bin/sh
# The CPython 3.13+ path on a real CPython 3.13 (Debian 13's, in the
# debootstrapped trixie `make deps` keeps in /opt/ncclwatch-trixie, or
# NW_PY313_ROOT): its own loader and libraries, our library and the
# simulation built here on Debian 12. 4 ranks of examples/train.py started
# with the launcher variables (RANK, WORLD_SIZE, LOCAL_RANK), rank 2
# holding the GIL forever at step 5 (bcast every 2 steps: AllReduce #9):
# - show: "note python CPython 3.13 via _Py_DebugOffsets"; rank 2's main
#   thread is a Python thread marked main and gil; every AllReduce's call
#   site is sync_gradients < train_step at their lines, every Broadcast's
#   broadcast_weights;
# - the watchdog's verdict and diagnose name rank 2 in hold_gil_forever
#   (train.py:L) and where its last op was issued; the merged stacks hold
#   the data-loader thread's Python frames, under its threading name
#   (given at run time), and the checkpoint thread's; show names them too.
. "$NW_ROOT/tests/lib.sh"
nw_use_sim
root=${NW_PY313_ROOT:-/opt/ncclwatch-trixie}
py="$root/usr/bin/python3.13"
ld="$root/lib64/ld-linux-x86-64.so.2"
[ -x "$py" ] && [ -x "$ld" ] || skip "no CPython 3.13 in $root (make deps installs it: tests/python/fetch-py313.sh)"
[ -e "$root/usr/lib/x86_64-linux-gnu/libunwind.so.8" ] || skip "no libunwind8 in $root"
[ -z "$NW_SAN" ] || skip "a sanitizer's runtime built here does not load into another system's libc"
[ -f "$NW_LIB" ] || fail "$NW_LIB not built"
TRAIN="$NW_ROOT/examples/train.py"
. "$NW_ROOT/tests/python/py-lib.sh"      # line_of, line_in
libs="$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu:$NW_SIM"
export NCCLWATCH_TIMEOUT=2 NCCLWATCH_DUMP_DIR="$T/dumps" NCCLWATCH_JOB=py313 WORLD_SIZE=4
"$ld" --library-path "$libs" "$py" -c 'import sys; print(sys.version_info[:2])' > "$T/version" 2>&1 ||
	{ cat "$T/version" >&2; fail "CPython 3.13 does not run through its loader"; }
assert_eq "$(cat "$T/version")" "(3, 13)" "the version"

gil_line=$(line_in hold_gil_forever 'libc.sleep(3600)')
gil_call=$(line_of 'self.hold_gil_forever()')
ar_line=$(line_of 'check_nccl(self.nccl.ncclAllReduce(')
bc_line=$(line_of 'check_nccl(self.nccl.ncclBroadcast(')
ar_call=$(line_of '        self.sync_gradients(count, dtype)')
for v in "$gil_line" "$gil_call" "$ar_line" "$bc_line" "$ar_call"; do
	[ -n "$v" ] || fail "train.py: a line the test looks for is not there (or not once)"
done
for r in 0 1 2 3; do
	RANK=$r LOCAL_RANK=$r nw_spawn "$ld" --library-path "$libs" --preload "$NW_LIB" "$py" "$TRAIN" \
		--steps 30 --count 16 --bcast-every 2 --rendezvous "$NCCLSIM_DIR/rdv" --fault gil:rank=2:step=5 \
		> "$T/rank$r.out" 2>&1
done
ev="rank 2: never called it .*Broadcast #8 on comm [0-9a-f]{16} \\(COMPLETED\\), issued at train.py:$bc_line in broadcast_weights.*; main thread in hold_gil_forever \\(train.py:$gil_line\\) < train_step \\(train.py:$gil_call\\) < main "
nw_until 120 sh -c "cat '$T'/rank*.out | grep -Eq 'ncclwatch:     $ev'" ||
	{ tail -n 30 "$T"/rank*.out >&2; fail "no verdict naming rank 2 in hold_gil_forever"; }
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/diag.txt"
assert_grep "^MISSING_RANK: rank 2 never called AllReduce #9 " "$T/diag.txt"
assert_grep "^    $ev" "$T/diag.txt"
awk '/^  ranks? .* thread "data-loader":$/{ on = 1; next } /^  rank/{ on = 0 } on' "$T/diag.txt" > "$T/loader"
assert_grep '^    #[0-9] data_loader \(train.py:' "$T/loader"
assert_grep '^  ranks? .* thread "checkpoint":$' "$T/diag.txt"
for s in "$NCCLWATCH_DIR"/py313/*.seg; do
	"$NW_CLI" show "$s" > "$T/show.txt" || fail "show $s"
	grep -q 'frames=4 .* main gil$' "$T/show.txt" && break
done
assert_grep '^  note python CPython 3\.13 via _Py_DebugOffsets$' "$T/show.txt"
assert_grep '^    python "MainThread" frames=4 native_above=[0-9]+ main gil$' "$T/show.txt"
assert_grep '^    python "data-loader" frames=[1-9]' "$T/show.txt"
assert_grep '^    py#0 hold_gil_forever \(' "$T/show.txt"
awk '/^  op .* AllReduce /{ getline; print }' "$T/show.txt" | sort -u > "$T/ar.sites"
awk '/^  op .* Broadcast /{ getline; print }' "$T/show.txt" | sort -u > "$T/bc.sites"
assert_eq "$(cat "$T/ar.sites")" "    py sync_gradients ($TRAIN:$ar_line)" "AllReduce call sites"
assert_eq "$(cat "$T/bc.sites")" "    py broadcast_weights ($TRAIN:$bc_line)" "Broadcast call sites"
assert_grep "^    py train_step \\($TRAIN:$ar_call\\)" "$T/show.txt"
echo ok
