#!/bin/sh
# Collect what ncclwatch left on every host of a job through pdsh, into one
# directory here, then one verdict over all of them. Nothing needs a shared
# file system: each host's files come back as text lines on pdsh's stdout.
#
#   examples/collect/collect-pdsh.sh [--job NAME] [--segments] HOSTLIST OUT
#   examples/collect/collect-pdsh.sh --job 4242.0 'node[01-16]' /tmp/hang
#
# On every host of HOSTLIST (pdsh -w syntax) it runs collect-host.sh, which
# sends `ncclwatch summary`'s per-host file (or, with an ncclwatch without
# that command, the job's segments and dumps); OUT/<host>/ gets each host's
# files, then `ncclwatch diagnose OUT` runs here.
#
# What to adapt (environment):
#   NCCLWATCH      the CLI on every host and here (default: on PATH, else
#                  the build tree beside this script)
#   PDSH_OPTS      more pdsh options, e.g. "-R ssh -f 64"
#   COLLECT_VIA    a command put before collect-host.sh on each host; with
#                  pdsh's exec module (-R exec) %h is the host name (the
#                  tests enter a namespaced "host" this way)
#   collect-host.sh must be at this path on every host (a shared home, or
#   the same checkout/install everywhere).
# TESTED HERE (tests/hosts/test-hosts-collect.sh): Debian's pdsh 2.34 with
# its exec module on namespaced hosts of one machine, live and post-mortem.
# pdsh over ssh is the same command with another -R.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/collect-lib.sh"
usage() { echo "usage: $0 [--job NAME] [--segments] HOSTLIST OUT" >&2; exit 2; }
collect_options "$@"
shift "$collect_nopts"
[ $# -eq 2 ] || usage
hosts=$1 out=$2
command -v pdsh > /dev/null || { echo "$0: pdsh is not installed" >&2; exit 2; }
lines=$(mktemp "${TMPDIR:-/tmp}/nwcollect-lines.XXXXXX")
trap 'rm -f "$lines"' EXIT
# The words make one command line per host (over ssh, a remote shell reads
# it: --job=PATTERN stays one word, a pattern that matches no file there
# stays as it is). -S: pdsh's status is the largest of the hosts'.
set -f  # the words as they are: no pattern is expanded here
# shellcheck disable=SC2086
pdsh -S ${PDSH_OPTS:-} -w "$hosts" ${COLLECT_VIA:-} sh "$COLLECT_HOST" $jobargs > "$lines" ||
	echo "$0: some hosts failed (see above); diagnosing what came back" >&2
set +f
# HOSTLIST's names, expanded by pdsh itself (its exec module runs echo
# here, once per name), for "no files from"
expected=$(pdsh -R exec -N -w "$hosts" echo %h 2>/dev/null) || expected=
# shellcheck disable=SC2086
collect_gather "$out" $expected < "$lines" || echo "$0: not every host's files came back (see above)" >&2
collect_diagnose "$out"
