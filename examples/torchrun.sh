#!/bin/sh
# A torchrun job under ncclwatch: every worker gets libncclwatch.so in
# LD_PRELOAD, and a worker that sees a stall prints who is stuck where and
# the cross-rank verdict ("ncclwatch: MISSING_RANK: rank 5 never called
# AllReduce #23 ...") on its stderr, while the job keeps running.
#
# usage: torchrun.sh [--nproc N] [--timeout S] [--dump-dir D] [TORCHRUN-OPTION...] -- CMD [ARGS...]
#   torchrun.sh --nproc 8 -- train.py --epochs 3          # a Python script: torchrun runs python on it
#   torchrun.sh --nproc 8 -m -- mypkg.train --epochs 3    # a module (torchrun's -m)
#   torchrun.sh --nproc 8 --master_port 29511 -- ./my_nccl_program --steps 100
#   torchrun.sh --nnodes 2 --node_rank 0 --master_addr node0 --master_port 29500 --nproc 8 -- train.py
# Options before "--" that are not the three below go to torchrun as they
# are (use torchrun's spelling: --nproc_per_node, --master_port, --rdzv_id...).
#
# What to adapt (options or the environment):
#   --nproc N / NPROC      workers per node: the GPUs of a node (default
#                          "auto": torchrun counts the GPUs, or the CPUs
#                          when it finds no GPU).
#   --timeout S / NCCLWATCH_TIMEOUT
#                          seconds before an op counts as stalled (default
#                          here 120, the library's own default is 60). Above
#                          the longest an all-reduce may legitimately wait
#                          for a slow rank (checkpoint, evaluation, data
#                          loading on one rank), below the framework's own
#                          timeout (torch's NCCL watchdog: 10-30 min), so
#                          ncclwatch speaks first. It never kills the job.
#   --dump-dir D / NCCLWATCH_DUMP_DIR
#                          where each process writes its dump (stacks + its
#                          op records) and where report.txt (the verdict)
#                          goes. Default: a new directory per run,
#                          ./ncclwatch/<date>-<pid>, on disk, so it survives
#                          a scheduler that wipes /dev/shm. With several
#                          nodes give every node's torchrun.sh the SAME
#                          directory on a shared filesystem: dump requests
#                          then cross nodes, and `ncclwatch diagnose D`
#                          reads all of them.
#   NCCLWATCH_LIB          the library, if not found at ../build/lib (a build
#                          tree beside this script) or /usr/local/lib (make
#                          install).
#   NCCLWATCH_DIR          where the live segments go (default
#                          /dev/shm/ncclwatch-$UID); exported as it is.
# torchrun itself (Python) is preloaded too: harmless, it never calls NCCL,
# and a process that never calls NCCL creates no file and no thread.
#
# Two things this script does for torchrun itself:
#   --no_python            added when CMD is not a *.py file (and neither -m
#                          nor --no_python was given): CMD is a program.
#   --redirects 1 --tee 1  added unless you give -r/--redirects or -t/--tee:
#                          Debian 12's torch 1.13 on Python 3.11 crashes
#                          ("'NoneType' object has no attribute 'get'") when
#                          they are 0. Workers' stdout then goes to a log
#                          under --log_dir and to the console prefixed
#                          "[default<R>]:"; stderr (where ncclwatch writes)
#                          goes through as it is.
#
# While it runs or after it died (SIGTERM to torchrun stops the workers;
# their segments and dumps stay):
#   ncclwatch diagnose                      # the verdict, from the live segments
#   ncclwatch diagnose "$NCCLWATCH_DUMP_DIR" # the same from the dumps
set -eu

nproc=${NPROC:-auto}
timeout=${NCCLWATCH_TIMEOUT:-120}
dump_dir=${NCCLWATCH_DUMP_DIR:-}
usage() { echo "usage: $0 [--nproc N] [--timeout S] [--dump-dir D] [TORCHRUN-OPTION...] -- CMD [ARGS...]" >&2; exit 2; }

# One pass over the arguments: ours are taken out, torchrun's options and
# then CMD ARGS are rotated to the end in order (the POSIX sh way to edit
# "$@"), so at the end "$@" is TORCHRUN-OPTIONS... CMD ARGS...
n=$# nopts=0 have_cmd=0 need_std=1 python_mode=0
while [ $n -gt 0 ]; do
	a=$1; shift; n=$((n - 1))
	if [ $have_cmd = 1 ]; then set -- "$@" "$a"; continue; fi
	case $a in
	--) have_cmd=1; continue ;;
	--nproc|--nproc_per_node|--nproc-per-node)
		[ $n -gt 0 ] || usage; nproc=$1; shift; n=$((n - 1)); continue ;;
	--nproc=*|--nproc_per_node=*|--nproc-per-node=*) nproc=${a#*=}; continue ;;
	--timeout) [ $n -gt 0 ] || usage; timeout=$1; shift; n=$((n - 1)); continue ;;
	--timeout=*) timeout=${a#*=}; continue ;;
	--dump-dir) [ $n -gt 0 ] || usage; dump_dir=$1; shift; n=$((n - 1)); continue ;;
	--dump-dir=*) dump_dir=${a#*=}; continue ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	-r|-t|-r?*|-t?*|--redirects|--tee|--redirects=*|--tee=*) need_std=0 ;;
	-m|--module|--no_python|--no-python) python_mode=1 ;;
	esac
	set -- "$@" "$a"
	nopts=$((nopts + 1))
done
[ $have_cmd = 1 ] && [ $# -gt $nopts ] || usage
eval "cmd=\${$((nopts + 1))}"

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

# Preload it (kept where it is if LD_PRELOAD already names it, e.g. after a
# sanitizer runtime that must stay first).
case ":${LD_PRELOAD:-}:" in
*/libncclwatch.so:*) ;;
*) LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" ;;
esac
[ -n "$dump_dir" ] || dump_dir="$PWD/ncclwatch/$(date +%Y%m%d-%H%M%S)-$$"
NCCLWATCH_TIMEOUT=$timeout
NCCLWATCH_DUMP_DIR=$dump_dir
export LD_PRELOAD NCCLWATCH_TIMEOUT NCCLWATCH_DUMP_DIR
echo "torchrun.sh: NCCLWATCH_TIMEOUT=$NCCLWATCH_TIMEOUT NCCLWATCH_DUMP_DIR=$NCCLWATCH_DUMP_DIR" >&2

extra=""
[ $need_std = 1 ] && extra="--redirects 1 --tee 1"
case $cmd in *.py) ;; *) [ $python_mode = 1 ] || extra="$extra --no_python" ;; esac
# shellcheck disable=SC2086
exec "${TORCHRUN:-torchrun}" --nproc_per_node "$nproc" $extra "$@"
