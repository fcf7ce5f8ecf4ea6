#!/bin/sh
# An Open MPI job under ncclwatch: every rank gets libncclwatch.so in
# LD_PRELOAD (mpirun -x, which also reaches ranks on other nodes), and a
# rank that sees a stall prints who is stuck where and the cross-rank
# verdict ("ncclwatch: MISSING_RANK: rank 5 never called AllReduce #23 ...")
# on its stderr, which mpirun shows; the job keeps running.
#
# usage: mpirun.sh [--np N] [--timeout S] [--dump-dir D] [MPIRUN-OPTION...] -- CMD [ARGS...]
#   mpirun.sh --np 8 -- ./my_mpi_nccl_program --steps 100
#   mpirun.sh --np 16 --hostfile hosts --dump-dir /shared/nw -- python train.py
# Options before "--" that are not the three below go to mpirun as they are.
#
# What to adapt (options or the environment):
#   --np N / NP            ranks in all (default 1).
#   --timeout S / NCCLWATCH_TIMEOUT
#                          seconds before an op counts as stalled (default
#                          here 120, the library's own default is 60): above
#                          the longest an all-reduce may legitimately wait
#                          for a slow rank, below any timeout that kills the
#                          job. ncclwatch never kills it.
#   --dump-dir D / NCCLWATCH_DUMP_DIR
#                          where each rank writes its dump (stacks + its op
#                          records) and report.txt (the verdict). Default: a
#                          new directory per run, ./ncclwatch/<date>-<pid>.
#                          With more than one node it MUST be a directory on
#                          a shared filesystem (the same path everywhere):
#                          dump requests then cross nodes and
#                          `ncclwatch diagnose D` reads every rank's dump.
#   NCCLWATCH_LIB          the library, if not at ../build/lib (a build tree
#                          beside this script) or /usr/local/lib (make
#                          install). The same path must exist on every node.
#   NCCLWATCH_*            every NCCLWATCH_* variable set when this script
#                          runs is passed to the ranks with -x (NCCLWATCH_DIR,
#                          NCCLWATCH_JOB, NCCLWATCH_KEEP...).
# mpirun itself is not preloaded (it would not matter: a process that never
# calls NCCL creates no file and no thread). The job directory is named after
# Open MPI's job id (the first part of OMPI_MCA_orte_hnp_uri), the same on
# every node.
#
# Open MPI only (-x): with MPICH or Intel MPI use `-genv LD_PRELOAD LIB`
# and `-genvlist NCCLWATCH_TIMEOUT,...` instead. As root, Open MPI refuses
# to start without --allow-run-as-root: this script adds it when run as
# root. On fewer cores than ranks add --oversubscribe.
#
# Stopping a hung job: SIGTERM (or Ctrl-C) to mpirun; Open MPI stops every
# rank (with SIGTERM) and mpirun exits with status 1 (Open MPI 4.1.4,
# checked here). The ranks' segments and dumps stay:
#   ncclwatch diagnose                        # from the segments of this host
#   ncclwatch diagnose "$NCCLWATCH_DUMP_DIR"  # from every rank's dump
set -eu

np=${NP:-1}
timeout=${NCCLWATCH_TIMEOUT:-120}
dump_dir=${NCCLWATCH_DUMP_DIR:-}
usage() { echo "usage: $0 [--np N] [--timeout S] [--dump-dir D] [MPIRUN-OPTION...] -- CMD [ARGS...]" >&2; exit 2; }

# One pass over the arguments: ours are taken out, mpirun's options and then
# CMD ARGS are rotated to the end in order, so at the end "$@" is
# MPIRUN-OPTIONS... CMD ARGS...
n=$# nopts=0 have_cmd=0
while [ $n -gt 0 ]; do
	a=$1; shift; n=$((n - 1))
	if [ $have_cmd = 1 ]; then set -- "$@" "$a"; continue; fi
	case $a in
	--) have_cmd=1; continue ;;
	--np|-np|-n|-c) [ $n -gt 0 ] || usage; np=$1; shift; n=$((n - 1)); continue ;;
	--np=*) np=${a#*=}; continue ;;
	--timeout) [ $n -gt 0 ] || usage; timeout=$1; shift; n=$((n - 1)); continue ;;
	--timeout=*) timeout=${a#*=}; continue ;;
	--dump-dir) [ $n -gt 0 ] || usage; dump_dir=$1; shift; n=$((n - 1)); continue ;;
	--dump-dir=*) dump_dir=${a#*=}; continue ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	esac
	set -- "$@" "$a"
	nopts=$((nopts + 1))
done
[ $have_cmd = 1 ] && [ $# -gt $nopts ] || usage

# The library: $NCCLWATCH_LIB, a build tree beside this script, an install.
here=$(cd "$(dirname "$0")" && pwd)
lib=${NCCLWATCH_LIB:-}
if [ -z "$lib" ]; then
	for l in "$here/../build/lib/libncclwatch.so" /usr/local/lib/libncclwatch.so; do
		[ -f "$l" ] && { lib=$l; break; }
	done
fi
[ -n "$lib" ] && [ -f "$lib" ] || { echo "$0: libncclwatch.so not found: set NCCLWATCH_LIB (or run make, or make install)" >&2; exit 2; }
case $lib in /*) ;; *) lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib") ;; esac

# The ranks' LD_PRELOAD: ours first, unless what is set already names it
# (e.g. after a sanitizer runtime that must stay first).
case ":${LD_PRELOAD:-}:" in
*/libncclwatch.so:*) preload=$LD_PRELOAD ;;
*) preload="$lib${LD_PRELOAD:+:$LD_PRELOAD}" ;;
esac
[ -n "$dump_dir" ] || dump_dir="$PWD/ncclwatch/$(date +%Y%m%d-%H%M%S)-$$"
NCCLWATCH_TIMEOUT=$timeout
NCCLWATCH_DUMP_DIR=$dump_dir
export NCCLWATCH_TIMEOUT NCCLWATCH_DUMP_DIR
echo "mpirun.sh: NCCLWATCH_TIMEOUT=$NCCLWATCH_TIMEOUT NCCLWATCH_DUMP_DIR=$NCCLWATCH_DUMP_DIR" >&2

# -x NAME for every NCCLWATCH_* variable now set: mpirun sends its value to
# every rank, on every node.
xs=""
for v in $(env | sed -n 's/^\(NCCLWATCH_[A-Za-z0-9_]*\)=.*/\1/p' | sort -u); do
	xs="$xs -x $v"
done
root=""
[ "$(id -u)" != 0 ] || root=--allow-run-as-root
# shellcheck disable=SC2086
exec "${MPIRUN:-mpirun}" $root -np "$np" -x "LD_PRELOAD=$preload" $xs "$@"
