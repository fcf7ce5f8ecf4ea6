#!/bin/sh
# Another local user cannot take over a user's ncclwatch directory (issue
# 16, finding 3), with two real users made for the test (removed at its
# end): the attacker A and the victim V. /dev/shm is world-writable, so A
# can create /dev/shm/ncclwatch-<V's uid> first:
#  - V's library refuses it with one ncclwatch: line and records nothing,
#    V's job goes on; the same for a directory of V's that others can write;
#  - V's CLI (diagnose, status, gc, dump) refuses it: exit 2, one line;
#  - files of A in a directory V reads are skipped with one line each (also
#    one whose header A forged to say V's uid), unless --any-owner;
#  - A swaps a job directory for a symbolic link to V's files while V runs
#    gc (a bounded number of runs): nothing outside is ever removed.
# Needs root (useradd, setpriv); skipped otherwise.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to add the two users of the test (useradd) and run as them (setpriv)"
command -v useradd > /dev/null && command -v userdel > /dev/null && command -v setpriv > /dev/null \
	|| skip "no useradd/userdel/setpriv"
nw_use_sim
# What A and V run, where they can reach it (the checkout may sit in a
# private directory): the CLI, the library, the simulation, and these.
nw_share_build tests/interpose/nccl-ops-linked tests/progs/nwgen
NW_PROGS="$NW_SHARED/tests/interpose"
NW_GEN="$NW_SHARED/tests/progs/nwgen"

# Users of this run alone (another checkout's test may run now), removed
# at the end with their default directories.
ATTACK_PID= A= V=
cleanup_users() {
	[ -z "$ATTACK_PID" ] || { kill -KILL "$ATTACK_PID" 2>/dev/null; wait "$ATTACK_PID" 2>/dev/null; }
	for u in $A $V; do
		uid=$(id -u "$u" 2>/dev/null) && rm -rf "/dev/shm/ncclwatch-$uid"
	done
	_nw_cleanup
}
trap cleanup_users EXIT
nw_add_user nwa || fail "useradd failed"
A=$NW_USER
nw_add_user nwv || fail "useradd failed"
V=$NW_USER
AU=$(id -u $A) VU=$(id -u $V)
# A place both can reach ($T is root's alone).
nw_public_dir
B=$NW_PUBLIC
mkdir "$B/a" "$B/v"
chown $A "$B/a"
chown $V "$B/v"
VDEF=/dev/shm/ncclwatch-$VU
rm -rf "$VDEF"

# as USER CMD...: CMD as that user, with the default directory (no
# NCCLWATCH_DIR) and a simulation directory of its own.
as() {
	_u=$1; shift
	setpriv --reuid="$_u" --regid=nogroup --clear-groups \
		env -u NCCLWATCH_DIR NCCLSIM_DIR="$B/${_u%%[0-9]*}sim" "$@"
}
mkdir "$B/asim" "$B/vsim"
chown $A "$B/asim"
chown $V "$B/vsim"
# victim_job OUT: V's process of an NCCL job under the preload; its status in RC.
victim_job() {
	as $V NCCLSIM_NULL=1 NCCLWATCH_KEEP=1 NCCLWATCH_JOB=vjob LD_PRELOAD="$(nw_preload)" \
		"$NW_PROGS/nccl-ops-linked" > "$1" 2>&1
	RC=$?
}
# one_line FILE PATTERN: FILE has exactly one line that starts with
# "ncclwatch", and it matches PATTERN.
one_line() {
	assert_eq "$(grep -c '^ncclwatch' "$1")" 1 "ncclwatch lines in $1"
	assert_grep "$2" "$1"
}
# refused CMD PATTERN: V's `ncclwatch CMD` exits 2 with one line on
# stderr, nothing on stdout, naming the default directory.
refused() {
	as $V "$NW_CLI" "$1" > "$T/ref.out" 2> "$T/ref.err"
	_rc=$?
	cat "$T/ref.err"
	assert_eq "$_rc" 2 "ncclwatch $1: exit status"
	[ ! -s "$T/ref.out" ] || fail "ncclwatch $1: wrote to stdout"
	assert_eq "$(wc -l < "$T/ref.err" | tr -d ' ')" 1 "ncclwatch $1: lines on stderr"
	assert_grep "^ncclwatch $1: $VDEF: $2" "$T/ref.err"
}

note "A creates V's default directory first (mode 777)"
as $A mkdir -m 777 "$VDEF"
as $A chmod 777 "$VDEF"
victim_job "$T/job1"
cat "$T/job1"
assert_eq "$RC" 0 "V's job under the preload"
assert_grep '^done failures=0$' "$T/job1"
one_line "$T/job1" "^ncclwatch: $VDEF belongs to uid $AU, not to us$"
[ -z "$(find "$VDEF" -mindepth 1)" ] || fail "V's library wrote into A's directory"
note "V's CLI refuses A's directory"
for cmd in diagnose status gc dump; do
	refused $cmd "owned by uid $AU, not by you \\(uid $VU\\): not reading it"
done
note "A's fake hung job in there: V's status would show it, were the directory trusted"
as $A "$NW_GEN" --scenario missing_rank --ranks 4 --job=vjob --out "$VDEF" > /dev/null || fail "nwgen as A"
refused status "owned by uid $AU"
refused diagnose "owned by uid $AU"
as $A rm -rf "$VDEF"

note "V's own default directory, but writable by others (777)"
as $V mkdir -m 700 "$VDEF"
as $V chmod 777 "$VDEF"
victim_job "$T/job2"
cat "$T/job2"
assert_eq "$RC" 0 "V's job (directory 777)"
one_line "$T/job2" "^ncclwatch: $VDEF is writable by other users \\(mode 777\\): not recording there$"
[ -z "$(find "$VDEF" -mindepth 1)" ] || fail "V's library wrote into a world-writable directory"
refused status "writable by other users \\(mode 777\\): not reading it"
note "a job directory writable by its group is refused too"
as $V chmod 700 "$VDEF"
as $V mkdir -m 770 "$VDEF/vjob"
as $V chmod 770 "$VDEF/vjob"
victim_job "$T/job3"
assert_eq "$RC" 0 "V's job (job directory 770)"
one_line "$T/job3" "^ncclwatch: $VDEF/vjob is writable by its group \\(mode 770\\): not recording there$"
as $V rmdir "$VDEF/vjob"
note "and a good directory is used"
victim_job "$T/job4"
assert_eq "$RC" 0 "V's job"
assert_no_grep '^ncclwatch' "$T/job4"
vseg=$(find "$VDEF/vjob" -name '*.seg' | head -n 1)
[ -n "$vseg" ] || fail "no segment of V's job in $VDEF/vjob"
cp "$vseg" "$T/vseg"

note "A's segments in a directory V reads (V's default one, made 777 by mistake): skipped"
as $V chmod 777 "$VDEF"
as $A "$NW_GEN" --scenario missing_rank --ranks 4 --job=fake --out "$VDEF" > /dev/null || fail "nwgen as A"
as $A chmod -R go+rX "$VDEF/fake"      # for V to read them
# One of them forged: its header says V's uid (the owner still says A).
forged=$(find "$VDEF/fake" -user $A -name '*.seg' | sort | head -n 1)
python3 -c 'import struct,sys; f=open(sys.argv[1],"r+b"); f.seek(140); f.write(struct.pack("<I", int(sys.argv[2])))' \
	"$forged" "$VU" || fail "forging $forged"
refused diagnose "writable by other users"
for cmd in status diagnose; do
	as $V "$NW_CLI" $cmd "$VDEF" > "$T/$cmd.out" 2> "$T/$cmd.err"
	rc=$?
	cat "$T/$cmd.err"
	assert_eq "$rc" 0 "V's $cmd of $VDEF: exit status (A's files skipped, V's job healthy)"
	assert_eq "$(grep -c "^ncclwatch $cmd: skipped $VDEF/fake/node0\\.1000[0-3]\\.seg: it belongs to uid $AU, not to you (uid $VU; --any-owner reads it)$" "$T/$cmd.err")" 4 \
		"$cmd: skipped lines"
	assert_eq "$(wc -l < "$T/$cmd.err" | tr -d ' ')" 4 "$cmd: lines on stderr"
done
assert_grep '^job vjob: 1 process read' "$T/diagnose.out"
assert_no_grep 'MISSING_RANK' "$T/diagnose.out"
# V's one process drives two ranks (nccl-ops-linked): a line for each, its pid on both
assert_eq "$(grep -vc '^#' "$T/status.out")" 2 "status: rank lines (V's only)"
assert_eq "$(grep -v '^#' "$T/status.out" | cut -d' ' -f2 | sort -u | wc -l)" 1 "status: pids of the rank lines"
note "--any-owner reads them all (root reading another user's job on purpose)"
as $V "$NW_CLI" diagnose --any-owner "$VDEF" > "$T/any.out" 2> "$T/any.err"
assert_eq "$?" 1 "diagnose --any-owner: A's hung job is a problem found"
[ ! -s "$T/any.err" ] || fail "diagnose --any-owner wrote to stderr: $(cat "$T/any.err")"
assert_grep 'MISSING_RANK' "$T/any.out"
note "gc keeps A's files"
as $V "$NW_CLI" gc "$VDEF" > "$T/gc.out" 2> "$T/gc.err"
cat "$T/gc.out" "$T/gc.err"
assert_grep ' 4 other users\)$' "$T/gc.out"
[ "$(find "$VDEF/fake" -user $A -name '*.seg' | wc -l)" = 4 ] || fail "gc removed A's files"

note "A swaps a job directory for a link to V's files while V runs gc"
# V's files outside: $B/v/work/control (and a dead segment of V's, as gc
# would remove one). A's directory $B/a/shared holds job directory j,
# swapped back and forth with a symbolic link to $B/v/work.
as $V mkdir -p "$B/v/work"
as $V sh -c "echo precious > '$B/v/work/control'"
cp "$T/vseg" "$B/v/work/dead.seg"
chown $V "$B/v/work/dead.seg"
python3 -c 'import struct,sys; f=open(sys.argv[1],"r+b"); f.seek(96); f.write(struct.pack("<q", 2**22 + 12345))' \
	"$B/v/work/dead.seg"
as $A mkdir -m 755 "$B/a/shared"
cat > "$T/swap.py" <<'PY'
# swap.py SHARED TARGET ROUNDS: SHARED/j is, in turn, a job directory (with
# a control file) and a symbolic link to TARGET, swapped atomically
# (renameat2 RENAME_EXCHANGE) so that j always exists; until SHARED/stop.
import ctypes, os, sys
shared, target, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
j, other = os.path.join(shared, "j"), os.path.join(shared, "j.other")
os.mkdir(j, 0o777); os.chmod(j, 0o777)
os.symlink(target, other)
for i in range(rounds):
    if i % 64 == 0 and os.path.exists(os.path.join(shared, "stop")):
        break
    real = other if os.path.islink(j) else j
    if not os.path.exists(os.path.join(real, "control")):
        open(os.path.join(real, "control"), "w").close()
    libc.renameat2(AT_FDCWD, j.encode(), AT_FDCWD, other.encode(), RENAME_EXCHANGE)
PY
cp "$T/swap.py" "$B/swap.py"
setpriv --reuid=$A --regid=nogroup --clear-groups /usr/bin/python3 "$B/swap.py" "$B/a/shared" "$B/v/work" 2000000 &
ATTACK_PID=$!
runs=0 removed_outside=0
while [ $runs -lt 300 ]; do
	as $V "$NW_CLI" gc "$B/a/shared" > "$T/gcr.out" 2>&1
	runs=$((runs + 1))
	[ -f "$B/v/work/control" ] && [ -f "$B/v/work/dead.seg" ] || { removed_outside=1; break; }
done
as $A touch "$B/a/shared/stop"
wait "$ATTACK_PID"
ATTACK_PID=
echo "gc runs: $runs"
assert_eq "$removed_outside" 0 "a file outside the directory gc was given was removed (after $runs runs)"
assert_eq "$(cat "$B/v/work/control")" precious "V's control file"
echo "ok"
