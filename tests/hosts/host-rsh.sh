#!/bin/sh
# host-rsh.sh NAME COMMAND-WORDS...: an ssh stand-in for the namespaced
# hosts of tests/hosts/hosts-lib.sh: runs the words as one shell command
# line on host NAME, as `ssh NAME words...` does, and like ssh with a fresh
# environment (PATH; HOSTS_DIR to find the host; NW_TEST_ID, which the
# test's cleanup finds its processes by): what a rank needs must come
# through the launcher (mpirun -x), as on real hosts. Open MPI's rsh
# launcher takes it as its agent (mpirun --mca plm_rsh_agent .../host-rsh.sh)
# and starts its orted on each "host" through it.
[ $# -ge 2 ] || { echo "usage: $0 NAME COMMAND..." >&2; exit 2; }
name=$1; shift
exec env -i PATH="$PATH" HOSTS_DIR="${HOSTS_DIR:-}" NW_TEST_ID="${NW_TEST_ID:-}" \
	sh "$(dirname "$0")/host-enter.sh" "$name" sh -c "$*"
