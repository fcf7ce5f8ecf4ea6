# Shared helpers for test scripts: `. "$NW_ROOT/tests/lib.sh"` (the runner
# exports NW_ROOT and NW_BUILD; a script run by hand finds them itself).
# Every test gets a private temp dir, and every process it started with
# nw_spawn / nw_bounded is killed when it ends, pass or fail.
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")" && git rev-parse --show-toplevel)}"
: "${NW_BUILD:=$NW_ROOT/build}"
: "${NW_SAN:=}"
: "${CUDA_HOME:=/usr/local/cuda}"
export NW_ROOT NW_BUILD
NW_SIM="$NW_BUILD/sim"              # libcuda.so.1 and libnccl.so.2, simulated
NW_LIB="$NW_BUILD/lib/libncclwatch.so"
NW_CLI="$NW_BUILD/bin/ncclwatch"
NW_TRAINER="$NW_BUILD/bin/trainer"
NW_REAL_NCCL="$CUDA_HOME/lib64"                 # the real NCCL of the toolkit
NW_WHEELS="${NW_NCCL_WHEELS:-$NW_ROOT/build/nccl-wheels}"  # <version>/libnccl.so.2: other real NCCLs

T=$(mktemp -d "${TMPDIR:-/tmp}/nwtest.XXXXXX")
export NCCLWATCH_DIR="$T/shm"        # never touch the user's real segments
export NCCLSIM_DIR="$T/sim"          # the simulation's shared files
mkdir -p "$NCCLSIM_DIR"
# NCCL's RAS endpoint (the simulation serves it like NCCL 2.28.9, on by
# default): a port of this test's own, never the default 28028, which every
# test job running at once would bind with SO_REUSEPORT (a query, also
# attach's, could land in another test's job).
NCCL_RAS_ADDR="127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + $$ % 20000)))"
export NCCL_RAS_ADDR
# Every process this test starts inherits NW_TEST_ID: at the end, only
# those are killed. A group id recorded here may name another test's
# process by then (its leader reaped long ago, the pid reused: tests run
# side by side), and killing that made other tests fail under load.
export NW_TEST_ID="$T"
_nw_pgids="" _nw_users="" _nw_public=""
# A process whose main thread has exited (pthread_exit) has no readable
# /proc/PID/environ: its other threads' is the process's.
_nw_ours() {
	for _e in "/proc/$1/environ" /proc/"$1"/task/*/environ; do
		tr '\0' '\n' 2>/dev/null < "$_e" | grep -qxF "NW_TEST_ID=$T" && return 0
	done
	return 1
}
_nw_cleanup() {
	# The group, and the leader itself in case it has not called setsid()
	# yet; a group only while one of its processes is ours (a group id is
	# not reused while any member lives), a pid only if it is ours.
	for g in $_nw_pgids; do
		_ours=0
		for _p in $(ps -eo pid=,pgid= | awk -v g="$g" '$2 == g { print $1 }'); do
			_nw_ours "$_p" && { _ours=1; break; }
		done
		[ $_ours = 1 ] && kill -KILL "-$g" 2>/dev/null
		_nw_ours "$g" && kill -KILL "$g" 2>/dev/null
	done
	# users after the processes (userdel refuses a user with a live one)
	for _u in $_nw_users; do
		_nw_retry userdel "$_u" 2>/dev/null
	done
	[ -n "${NW_KEEP_TMP:-}" ] || rm -rf "$T" ${NW_SHARED:+"$NW_SHARED"} $_nw_public
}
trap _nw_cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "skipped: $*"; exit 77; }
note() { echo "--- $*"; }

# The value of LD_PRELOAD for ncclwatch; a sanitizer build needs its
# runtime loaded before anything else.
nw_preload() {
	case "$NW_SAN" in
		*address*) printf '%s:%s' "$(${CC:-gcc} -print-file-name=libasan.so)" "$NW_LIB" ;;
		*thread*)  printf '%s:%s' "$(${CC:-gcc} -print-file-name=libtsan.so)" "$NW_LIB" ;;
		*)         printf '%s' "$NW_LIB" ;;
	esac
}

# Put the simulated CUDA driver and NCCL first on the library path.
nw_use_sim() { export LD_LIBRARY_PATH="$NW_SIM${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; }

# nw_share_build [PATH...]: for a test that runs our programs as another
# user. The checkout may sit in a private directory (0700) that user cannot
# enter, and $T is this test's alone: the CLI, the preload library, the
# simulation and the PATHs given (below $NW_BUILD) are copied into a new
# directory everyone can enter (mktemp under /tmp, mode 0755: NW_SHARED,
# removed when the test ends), and NW_CLI, NW_LIB and NW_SIM (first on
# LD_LIBRARY_PATH) name the copies; a PATH's copy is $NW_SHARED/PATH.
nw_share_build() {
	NW_SHARED=$(mktemp -d /tmp/nwshared.XXXXXX) || fail "mktemp for the shared build"
	# the preload loads its two siblings from its own directory
	for _p in bin/ncclwatch lib/libncclwatch.so lib/libncclwatch-unwind.so lib/libncclwatch-engine.so sim "$@"; do
		mkdir -p "$NW_SHARED/$(dirname "$_p")" && cp -R "$NW_BUILD/$_p" "$NW_SHARED/$_p" ||
			fail "cannot copy $NW_BUILD/$_p for another user"
	done
	chmod -R go+rX,go-w "$NW_SHARED"
	NW_CLI="$NW_SHARED/bin/ncclwatch" NW_LIB="$NW_SHARED/lib/libncclwatch.so" NW_SIM="$NW_SHARED/sim"
	nw_use_sim
}

# nw_public_dir: NW_PUBLIC, a new directory under /tmp everyone can enter
# (0755), for what another user must reach ($T is this test's alone, and
# the checkout may sit in a private directory); removed when the test ends.
nw_public_dir() {
	NW_PUBLIC=$(mktemp -d /tmp/nwpub.XXXXXX) || fail "mktemp for a public directory"
	_nw_public="$_nw_public $NW_PUBLIC"
	chmod 755 "$NW_PUBLIC"
}

# _nw_retry CMD...: CMD, tried again (up to 30 times, a second apart) while
# it fails: useradd and userdel fail while another holds the lock of
# /etc/passwd (another test, another checkout's `make test`).
_nw_retry() {
	_i=0
	until "$@"; do
		_i=$((_i + 1)); [ $_i -ge 30 ] && return 1
		sleep 1
	done
}

# nw_add_user PREFIX: a new user for this test (root only), with no home,
# group nogroup, no shell; NW_USER is its name: PREFIX, this shell's pid
# and a count, a name no other test running now has (nor one a killed
# test left behind). Removed (userdel) when the test ends. Returns 1 if
# useradd keeps failing.
nw_add_user() {
	_c=0
	while [ $_c -lt 30 ]; do
		NW_USER="$1$$n$_c"
		_c=$((_c + 1))
		id -u "$NW_USER" > /dev/null 2>&1 && continue
		if useradd -M -N -g nogroup -s /usr/sbin/nologin "$NW_USER"; then
			_nw_users="$_nw_users $NW_USER"
			return 0
		fi
		# taken meanwhile, or /etc/passwd locked: try again
		id -u "$NW_USER" > /dev/null 2>&1 || sleep 1
	done
	return 1
}

# nw_spawn CMD...: start CMD in its own process group in the background;
# sets NW_PID. The group is killed when the test ends.
nw_spawn() {
	setsid "$@" &
	NW_PID=$!
	_nw_pgids="$_nw_pgids $NW_PID"
}

# nw_wait PID SECS: wait for PID to exit within SECS; its status is returned,
# or 124 (and the whole group is killed) when it did not end in time. A
# process is done when none of its threads is left but zombies: a main
# thread that called pthread_exit is a zombie while the others go on.
nw_wait() {
	_p=$1; _n=$(( $2 * 10 ))
	while kill -0 "$_p" 2>/dev/null; do
		if ! ps -L -o stat= -p "$_p" 2>/dev/null | grep -qv Z; then break; fi
		_n=$(( _n - 1 ))
		if [ $_n -le 0 ]; then kill -KILL "-$_p" "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; return 124; fi
		sleep 0.1
	done
	wait "$_p"
}

# nw_bounded SECS CMD...: run CMD (own process group) for at most SECS.
nw_bounded() {
	_s=$1; shift
	nw_spawn "$@"
	nw_wait "$NW_PID" "$_s"
}

# nw_until SECS CMD...: poll CMD every 0.1 s until it succeeds; fail after SECS.
nw_until() {
	_n=$(( $1 * 10 )); shift
	until "$@" >/dev/null 2>&1; do
		_n=$(( _n - 1 )); [ $_n -le 0 ] && return 1
		sleep 0.1
	done
}

assert_eq() { [ "$1" = "$2" ] || fail "${3:-values differ}: expected '$2', got '$1'"; }
assert_grep() { grep -Eq -- "$1" "$2" || { sed 's/^/    /' "$2" | tail -n 30 >&2; fail "no line matching /$1/ in $2"; }; }
assert_no_grep() { ! grep -Eq -- "$1" "$2" || { grep -E -- "$1" "$2" | head >&2; fail "unexpected /$1/ in $2"; }; }

# nw_small_tmpfs: MNT, an empty directory of this test where the caller
# mounts a small tmpfs of the size it needs; it is unmounted when the test
# ends. Skips the test without root or without the right to mount.
nw_small_tmpfs() {
	[ "$(id -u)" = 0 ] || skip "mounting a small tmpfs needs root"
	MNT="$T/small"
	mkdir -p "$MNT"
	mount -t tmpfs -o size=4096,mode=0700 tmpfs "$MNT" 2>/dev/null || skip "cannot mount a tmpfs here (no CAP_SYS_ADMIN?)"
	umount "$MNT"
	trap 'umount "$MNT" 2>/dev/null; _nw_cleanup' EXIT
}
