# Several "hosts" on this one machine (issue 24): sourced after tests/lib.sh.
#
#   hosts_up NAME...        one host per NAME: a holder process in a mount and
#                           UTS namespace of its own, hostname NAME, a fresh
#                           tmpfs on /dev/shm (mode 1777, like a real one)
#   host_pid NAME           the holder's pid (what nsenter enters)
#   host_run NAME CMD...    CMD on host NAME, in the foreground
#   host_spawn NAME CMD...  CMD on host NAME in the background, own process
#                           group, killed when the test ends (NW_PID)
#   HOSTS_ENTER             a script: `sh $HOSTS_ENTER NAME CMD...` runs CMD
#                           on host NAME (for pdsh's exec module: %h)
#
# What the hosts share and what they do not, as real hosts of one job:
# every host sees the same file systems except /dev/shm, so each host's
# ncclwatch segments (default /dev/shm/ncclwatch-$UID) are its own and the
# other hosts cannot see them. The simulated NCCL's rendezvous (the files of
# NCCLSIM_DIR: comm-*, lock, the futex "doorbell") stands in for NCCL's
# network; tests/lib.sh puts it in $T/sim, outside /dev/shm, so it crosses
# the hosts (a futex on a shared file mapping is keyed by the file, which
# every mount namespace sees the same). Processes keep one PID namespace:
# the simulation tells a dead rank by its pid, and a pid names one process
# on every "host" (real hosts may repeat pids: the (host, pid) pair is what
# ncclwatch keys processes by, which these tests do exercise through the
# host names). No network namespace: nothing here needs addresses.
#
# Needs root (unshare --mount --uts, mount): the test skips without it.
HOSTS_DIR="$T/hosts"
export HOSTS_DIR
HOSTS_ENTER="$NW_ROOT/tests/hosts/host-enter.sh"

hosts_up() {
	[ "$(id -u)" = 0 ] || skip "namespaced hosts need root (unshare --mount --uts)"
	command -v unshare > /dev/null && command -v nsenter > /dev/null || skip "unshare/nsenter (util-linux) not installed"
	mkdir -p "$HOSTS_DIR"
	for _h in "$@"; do
		# --propagation private: the tmpfs on /dev/shm stays inside
		nw_spawn unshare --mount --uts --fork --propagation private sh -c '
			hostname "$1" && mount -t tmpfs -o mode=1777,size=512m tmpfs /dev/shm || exit 1
			echo $$ > "$2.tmp" && mv "$2.tmp" "$2" && exec sleep 100000' sh "$_h" "$HOSTS_DIR/$_h.pid"
		nw_until 20 test -s "$HOSTS_DIR/$_h.pid" || skip "cannot make a namespaced host here (unshare --mount --uts failed)"
	done
	# the hosts are what they claim: their own name, their own empty /dev/shm
	for _h in "$@"; do
		[ "$(host_run "$_h" hostname)" = "$_h" ] || fail "host $_h: hostname is $(host_run "$_h" hostname)"
		[ -z "$(host_run "$_h" ls -A /dev/shm)" ] || fail "host $_h: /dev/shm is not a fresh one"
	done
}

host_pid() { cat "$HOSTS_DIR/$1.pid"; }

host_run() {
	_hn=$1; shift
	sh "$HOSTS_ENTER" "$_hn" "$@"
}

host_spawn() {
	_hn=$1; shift
	nw_spawn sh "$HOSTS_ENTER" "$_hn" "$@"
}
