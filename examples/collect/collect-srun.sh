#!/bin/sh
# Collect what ncclwatch left on every node of a running Slurm job, into
# one directory here, then one verdict over all of them: a job step inside
# the job's allocation (srun --overlap: it shares the job's CPUs instead of
# waiting for free ones), one task per node. Nothing needs a shared file
# system: each node's files come back as text lines on srun's stdout.
#
#   examples/collect/collect-srun.sh [--job NAME] SLURM_JOB_ID OUT
#
# On each node it runs collect-host.sh, which sends `ncclwatch summary`'s
# per-host file (or, with an ncclwatch without that command, the segments
# and dumps); OUT/<node>/ gets each node's files, then `ncclwatch diagnose
# OUT` runs here. ncclwatch names a Slurm job's directories
# <SLURM_JOB_ID>.<step>: by default every step of the job is taken
# (--job 'ID.*'); --job NAME (a shell pattern) picks others.
#
# What to adapt (environment):
#   NCCLWATCH      the CLI on every node and here
#   SRUN_OPTS      more srun options (partition, account, --time)
#   collect-host.sh must be at this path on every node.
# UNTESTED HERE: this machine has no Slurm. The per-node step
# (collect-host.sh) and the gathering (collect-lib.sh) are the ones the
# pdsh and mpirun scripts use, which tests/hosts/ runs on namespaced hosts;
# the srun line follows srun(1) (--overlap needs Slurm 20.11+; --label
# keeps each line whole).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/collect-lib.sh"
usage() { echo "usage: $0 [--job NAME] SLURM_JOB_ID OUT" >&2; exit 2; }
job=
case ${1:-} in
	--job) [ $# -ge 2 ] || usage; job=$2; shift 2 ;;
	--job=*) job=${1#*=}; shift ;;
esac
[ $# -eq 2 ] || usage
jobid=$1 out=$2
[ -n "$job" ] || job="$jobid.*"
lines=$(mktemp "${TMPDIR:-/tmp}/nwcollect-lines.XXXXXX")
trap 'rm -f "$lines"' EXIT
# shellcheck disable=SC2086
srun --jobid="$jobid" --overlap --ntasks-per-node=1 --label ${SRUN_OPTS:-} \
	sh "$COLLECT_HOST" "--job=$job" > "$lines" ||
	echo "$0: some nodes failed (see above); diagnosing what came back" >&2
# the job's nodes, for "no files from"
nodes=$(scontrol show hostnames "$(squeue -h -j "$jobid" -o %N)" 2>/dev/null) || nodes=
# shellcheck disable=SC2086
collect_gather "$out" $nodes < "$lines" || echo "$0: not every node's files came back (see above)" >&2
collect_diagnose "$out"
