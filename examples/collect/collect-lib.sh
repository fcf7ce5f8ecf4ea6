# Shared by examples/collect/collect-{pdsh,srun,mpirun}.sh (sourced).
#
#   collect_gather OUT [HOST...]   reads a launcher's output on stdin (the
#       lines collect-host.sh printed on every host, with whatever prefix
#       the launcher added, hosts interleaved), checks each host's lines
#       (all there, in order, checksum) and unpacks that host's files into
#       OUT/<host>/. Prints one line per host and a last line naming the
#       HOSTs given that sent nothing. Returns 1 if any host's data was
#       broken or missing, 0 else.
#   collect_diagnose OUT           ncclwatch diagnose OUT, with its status
#   collect_options ARGS...        the options every collection script
#       takes before its two operands (--job NAME, --segments): sets
#       jobargs (the words for collect-host.sh) and collect_nopts (how many
#       arguments they were: the caller shifts them); calls the caller's
#       usage on anything else
set -u
collect_here=$(cd "$(dirname "$0")" && pwd)
COLLECT_HOST="$collect_here/collect-host.sh"
if [ -z "${NCCLWATCH:-}" ]; then
	NCCLWATCH=$(command -v ncclwatch 2>/dev/null || echo "$collect_here/../../build/bin/ncclwatch")
fi

collect_options() {
	jobargs= collect_nopts=0
	while [ $# -gt 2 ]; do
		case $1 in
		--job) jobargs="$jobargs --job=$2"; shift 2; collect_nopts=$((collect_nopts + 2)) ;;
		--job=*) jobargs="$jobargs --job=${1#*=}"; shift; collect_nopts=$((collect_nopts + 1)) ;;
		--segments) jobargs="$jobargs --segments"; shift; collect_nopts=$((collect_nopts + 1)) ;;
		*) usage ;;
		esac
	done
}

collect_gather() {
	_out=$1; shift
	mkdir -p "$_out" || return 1
	_raw=$(mktemp -d "${TMPDIR:-/tmp}/nwgather.XXXXXX") || return 1
	# "host n data" lines, whatever came before NWCOLLECT; a host name must
	# be a plain name (it becomes a directory). Sorted by host then n, and
	# split into one file per host, one open at a time (thousands of hosts).
	awk '{ i = index($0, "NWCOLLECT "); if (!i) next
	       split(substr($0, i + 10), f, " ")
	       if (f[1] ~ /^[A-Za-z0-9._-]+$/ && f[1] !~ /^[.]+$/) print f[1], f[2], f[3], f[4] }' |
		LC_ALL=C sort -k1,1 -k2,2n |
		awk -v dir="$_raw" '$1 != h { if (h != "") close(dir "/" h ".lines"); h = $1 }
		                   { print $2, $3, $4 > (dir "/" h ".lines") }' || { rm -rf "$_raw"; return 1; }
	_bad=0 _got=
	for _f in "$_raw"/*.lines; do
		[ -e "$_f" ] || break
		_h=$(basename "$_f" .lines)
		# the END line: how many lines and their checksum
		_end=$(awk '$1 == "END" { print $2, $3 }' "$_f" | tail -n 1)
		_n=${_end% *} _sum=${_end#* }
		awk '$1 != "END" { print $2 }' "$_f" > "$_raw/$_h.b64"
		if [ -z "$_end" ]; then
			echo "collect: $_h: incomplete (no end line: the host's command failed or was cut off)"; _bad=1; continue
		fi
		if [ "$(wc -l < "$_raw/$_h.b64")" != "$_n" ] || [ "$(sha256sum < "$_raw/$_h.b64" | cut -d' ' -f1)" != "$_sum" ]; then
			echo "collect: $_h: damaged ($(wc -l < "$_raw/$_h.b64") of $_n lines, or a checksum mismatch)"; _bad=1; continue
		fi
		mkdir -p "$_out/$_h"
		if ! base64 -d < "$_raw/$_h.b64" | tar -xzf - -C "$_out/$_h"; then
			echo "collect: $_h: cannot unpack its files"; _bad=1; continue
		fi
		echo "collect: $_h: $(find "$_out/$_h" -type f | wc -l) files in $_out/$_h"
		_got="$_got $_h"
	done
	rm -rf "$_raw"
	_missing=
	for _h in "$@"; do
		case " $_got " in *" $_h "*|*" $_h."*) ;; *) _missing="$_missing $_h" ;; esac
	done
	if [ -n "$_missing" ]; then echo "collect: no files from:$_missing"; _bad=1; fi
	[ -n "$_got" ] || { echo "collect: no host sent anything"; return 1; }
	return $_bad
}

collect_diagnose() {
	echo "collect: ncclwatch diagnose $1"
	"$NCCLWATCH" diagnose "$1"
}
