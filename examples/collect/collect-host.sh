#!/bin/sh
# One host's part of a collection (examples/collect/): takes what ncclwatch
# left on THIS host and prints it on stdout as text lines that any launcher
# can carry back (pdsh, srun --label, mpirun --tag-output add their own
# prefixes and interleave hosts line by line; collect-lib.sh's
# collect_gather puts each host's lines back together):
#
#   NWCOLLECT <host> <n> <base64 of a tar.gz, 2048 characters>   n = 1, 2, ...
#   NWCOLLECT <host> END <lines> <sha256 of the base64 text>
#
# usage: collect-host.sh [--job NAME] [--segments] [DIR]
#   DIR     where this host's job directories are: $NCCLWATCH_DIR, else
#           /dev/shm/ncclwatch-$UID (the default of every process)
#   --job   only the job directories whose name matches NAME, a shell
#           pattern (Slurm: '4242.*', every step of job 4242)
#   --segments  send the segments and dumps as they are, not the summary
#           (for `diagnose --native`, `show`, or an older ncclwatch where
#           they are read)
#
# What goes into the tar is collect_host_files' choice: `ncclwatch summary`'s
# compact per-host file when the ncclwatch here has that command, else a
# copy of every segment and dump (*.seg) of the job directories.
# NCCLWATCH: the CLI to run (default: ncclwatch on PATH, else the build
# tree beside this script).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${NCCLWATCH:-}" ]; then
	NCCLWATCH=$(command -v ncclwatch 2>/dev/null || echo "$here/../../build/bin/ncclwatch")
fi
job= segments=
while [ $# -gt 0 ]; do
	case $1 in
	--job) [ $# -ge 2 ] || { echo "collect-host.sh: --job needs a name" >&2; exit 2; }; job=$2; shift 2 ;;
	--job=*) job=${1#*=}; shift ;;
	--segments) segments=1; shift ;;
	-*) echo "usage: collect-host.sh [--job NAME] [--segments] [DIR]" >&2; exit 2 ;;
	*) break ;;
	esac
done
src=${1:-${NCCLWATCH_DIR:-/dev/shm/ncclwatch-$(id -u)}}
host=$(hostname)
case $host in *[!A-Za-z0-9._-]*|'') echo "collect-host.sh: host name '$host' is not a plain name" >&2; exit 2 ;; esac

# collect_host_files OUT: this host's files for the verdict, into the empty
# directory OUT, as OUT/<job>/...: the one place that decides what a host
# sends.
collect_host_files() {
	n=0
	for from in "$src"/${job:-*}; do
		[ -d "$from" ] || continue
		j=$(basename "$from")
		mkdir -p "$1/$j"
		if [ -z "$segments" ] && "$NCCLWATCH" summary --help > /dev/null 2>&1; then
			# one compact file per host and job (issue 24's summaries)
			"$NCCLWATCH" summary -o "$1/$j/$host.nwsum" "$from" || return 1
		else
			# no summary command in this ncclwatch: every segment and dump
			# as it is (a live segment is copied while its process writes:
			# readers keep only the records that were stable, as they do
			# in /dev/shm)
			find "$from" -maxdepth 1 -name '*.seg' -type f -exec cp {} "$1/$j/" \; || return 1
		fi
		n=$((n + 1))
	done
	[ $n -gt 0 ] || { echo "collect-host.sh: $host: no job directory ${job:+'$job' }in $src" >&2; return 1; }
}

work=$(mktemp -d "${TMPDIR:-/tmp}/nwcollect.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/files"
collect_host_files "$work/files"
(cd "$work/files" && tar -czf - .) | base64 -w 2048 > "$work/b64"
sum=$(sha256sum < "$work/b64" | cut -d' ' -f1)
awk -v h="$host" '{ print "NWCOLLECT " h " " NR " " $0 } END { print "NWCOLLECT " h " END " NR " '"$sum"'" }' "$work/b64"
