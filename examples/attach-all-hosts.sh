#!/bin/sh
# Attach to a hung job on every host, then one verdict over all of them:
#
#   examples/attach-all-hosts.sh --srun JOBID      SHARED_DIR   # Slurm: a step inside the job's allocation
#   examples/attach-all-hosts.sh --mpirun HOSTLIST SHARED_DIR   # Open MPI: one attach per node
#   examples/attach-all-hosts.sh --pdsh HOSTLIST   SHARED_DIR   # pdsh over ssh
#   examples/attach-all-hosts.sh --local           SHARED_DIR   # this host only
#
# On each host `ncclwatch attach --no-verdict -o SHARED_DIR` takes every
# process of yours with libnccl mapped (a process with the preload is read
# from its own segment instead, and asked for a dump), one snapshot file per
# process (<host>.<pid>.rank<R>.snap.seg: host names keep them apart); then
# `ncclwatch diagnose SHARED_DIR` here merges them into one job by its id.
# SHARED_DIR must be a directory every host mounts (NFS, Lustre, GPFS).
#
# Tested here: --local and --mpirun on one node (tests/capture/
# test-capture-attach-hosts.sh). UNTESTED HERE: --srun (no Slurm on this
# machine) and --pdsh (not installed); their lines follow the tools' manuals.
# What to adapt: NCCLWATCH (the CLI's path on every host), ATTACH_OPTS
# (e.g. --no-python when py-spy is not installed there).
set -eu
NCCLWATCH=${NCCLWATCH:-$(cd "$(dirname "$0")/.." && pwd)/build/bin/ncclwatch}
ATTACH_OPTS=${ATTACH_OPTS:-}
usage() { echo "usage: $0 --srun JOBID | --mpirun HOSTLIST | --pdsh HOSTLIST | --local  SHARED_DIR" >&2; exit 2; }
[ $# -ge 2 ] || usage
mode=$1
case "$mode" in
	--local) dir=$2; who= ;;
	--srun|--mpirun|--pdsh) [ $# -eq 3 ] || usage; who=$2; dir=$3 ;;
	*) usage ;;
esac
mkdir -p "$dir"
attach="$NCCLWATCH attach --no-verdict $ATTACH_OPTS -o $dir"
case "$mode" in
	# --overlap: the step shares the job's CPUs instead of waiting for free ones.
	--srun) srun --jobid="$who" --overlap --ntasks-per-node=1 $attach ;;
	# one process per node of the list; as root Open MPI wants --allow-run-as-root
	--mpirun) mpirun --host "$who" --map-by ppr:1:node $( [ "$(id -u)" = 0 ] && echo --allow-run-as-root ) $attach ;;
	--pdsh) pdsh -w "$who" "$attach" ;;
	--local) $attach ;;
esac || echo "$0: some host could not attach to everything (see above); diagnosing what was written" >&2
exec "$NCCLWATCH" diagnose "$dir"
