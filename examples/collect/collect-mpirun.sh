#!/bin/sh
# Collect what ncclwatch left on every host of a job through Open MPI's
# mpirun (one process per host), into one directory here, then one verdict
# over all of them. Nothing needs a shared file system: each host's files
# come back as text lines on mpirun's stdout.
#
#   examples/collect/collect-mpirun.sh [--job NAME] [--segments] HOSTS OUT
#   examples/collect/collect-mpirun.sh node01,node02,node03 /tmp/hang
#
# HOSTS: comma-separated host names (mpirun --host; a ':slots' suffix is
# allowed and ignored: one process runs per host, --map-by ppr:1:node).
# On each it runs collect-host.sh, which sends `ncclwatch summary`'s
# per-host file (or, with an ncclwatch without that command, the segments
# and dumps); OUT/<host>/ gets each host's files, then `ncclwatch diagnose
# OUT` runs here. --job NAME (a shell pattern): only those job directories;
# Open MPI jobs are named after the job's id, e.g. --job '3046572033*'.
#
# What to adapt (environment):
#   NCCLWATCH      the CLI on every host and here (default: on PATH, else
#                  the build tree beside this script)
#   MPIRUN         the mpirun to use (default mpirun)
#   MPIRUN_OPTS    more options, e.g. "--hostfile hosts" or
#                  "--mca plm_rsh_agent ..." (the tests' namespaced hosts)
#   collect-host.sh must be at this path on every host.
# As root Open MPI wants --allow-run-as-root: added when run as root.
# TESTED HERE (tests/hosts/test-hosts-mpirun.sh): Open MPI 4.1.4 on
# namespaced hosts of one machine (its rsh launcher entering each host).
# With MPICH or Intel MPI: -ppn 1 -hosts instead of --map-by/--host.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/collect-lib.sh"
usage() { echo "usage: $0 [--job NAME] [--segments] HOSTS OUT" >&2; exit 2; }
collect_options "$@"
shift "$collect_nopts"
[ $# -eq 2 ] || usage
hosts=$1 out=$2
root=
[ "$(id -u)" != 0 ] || root=--allow-run-as-root
lines=$(mktemp "${TMPDIR:-/tmp}/nwcollect-lines.XXXXXX")
trap 'rm -f "$lines"' EXIT
# one process per host
set -f  # the words as they are: no pattern is expanded here
# shellcheck disable=SC2086
"${MPIRUN:-mpirun}" $root --host "$hosts" --map-by ppr:1:node --tag-output ${MPIRUN_OPTS:-} \
	sh "$COLLECT_HOST" $jobargs > "$lines" ||
	echo "$0: some hosts failed (see above); diagnosing what came back" >&2
set +f
# Open MPI forwards each process's output in chunks and tags every chunk
# ("[1,N]<stdout>:"), also one that starts inside a line: a line longer than
# a chunk comes out cut by a tag, and chunks of two hosts may follow each
# other inside one line. The text after each tag is that process's, up to
# the next tag: put each process's text back together, line by line.
untag_ompi() {
	awk '{ line = $0
	       while (match(line, /\[[0-9]+,[0-9]+\]<std(out|err)>:/)) {
	           buf[who] = buf[who] substr(line, 1, RSTART - 1)
	           who = substr(line, RSTART, RLENGTH)
	           line = substr(line, RSTART + RLENGTH)
	       }
	       print buf[who] line; buf[who] = "" }'
}
# shellcheck disable=SC2046
untag_ompi < "$lines" | collect_gather "$out" $(echo "$hosts" | tr ',' '\n' | sed 's/:.*//') ||
	echo "$0: not every host's files came back (see above)" >&2
collect_diagnose "$out"
