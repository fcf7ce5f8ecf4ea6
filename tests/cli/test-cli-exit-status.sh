#!/bin/sh
# One exit-status rule for every command (README, "Exit status";
# report/cli/commands.h): 0 ok; 1 a problem found (a verdict other than
# HEALTHY, a file that could not be read while others could: one line on
# stderr per such file, the others still used; a file gc could not
# remove); 2 usage error, an untrusted default directory, or nothing
# readable (one line on stderr). Issue 16, finding 6: a bad file in a
# directory gave `# unreadable` and exit 0 or 1 with nothing on stderr.
# (dump: tests/cli/test-cli-dump.sh; run passes its command's status on:
# test-cli-run.sh; untrusted directories: test-cli-trust.sh.)
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
NW_GEN="$NW_BUILD/tests/progs/nwgen"
need_engine

"$NW_GEN" --scenario healthy --ranks 4 --out "$T/ok" > /dev/null || fail "nwgen healthy"
"$NW_GEN" --scenario missing_rank --ranks 4 --out "$T/hung" > /dev/null || fail "nwgen missing_rank"
good=$T/ok/gen-healthy
hung=$T/hung/gen-missing_rank
mkdir -p "$T/mixed" "$T/allbad/job"
cp -r "$good" "$T/mixed/"
echo garbage > "$T/mixed/gen-healthy/bad.seg"
echo garbage > "$T/allbad/job/bad.seg"
bad_line="unreadable: $T/mixed/gen-healthy/bad.seg: not an ncclwatch segment \\(bad magic\\)$"

# status_of WANT CMD ARGS...: `ncclwatch CMD ARGS` exits WANT; stdout in
# $T/out, stderr in $T/err.
status_of() {
	_want=$1; shift
	"$NW_CLI" "$@" > "$T/out" 2> "$T/err"
	_rc=$?
	[ "$_rc" = "$_want" ] || { cat "$T/out" "$T/err" | tail -n 20 >&2; fail "ncclwatch $*: exit status $_rc, expected $_want"; }
	echo "ncclwatch $*: $_rc"
}
no_stderr() { [ ! -s "$T/err" ] || { cat "$T/err" >&2; fail "unexpected lines on stderr"; }; }
stderr_lines() { assert_eq "$(wc -l < "$T/err" | tr -d ' ')" "$1" "lines on stderr"; }

for cmd in diagnose status; do
	note "$cmd"
	status_of 0 $cmd "$good"; no_stderr
	if [ $cmd = diagnose ]; then
		status_of 1 $cmd "$hung"; no_stderr
	else
		status_of 0 $cmd "$hung"; no_stderr        # status does not judge jobs
	fi
	status_of 1 $cmd "$T/mixed"
	stderr_lines 1
	assert_grep "^ncclwatch $cmd: $bad_line" "$T/err"
	assert_grep "gen-healthy" "$T/out"                # the readable files are still used
	status_of 1 $cmd "$T/mixed" "$T/missing"
	stderr_lines 2
	assert_grep "^ncclwatch $cmd: unreadable: $T/missing: No such file or directory$" "$T/err"
	status_of 2 $cmd "$T/allbad"; stderr_lines 1
	assert_grep "^ncclwatch $cmd: no readable segment: 1 file could not be read, first $T/allbad/job/bad.seg: not an ncclwatch segment" "$T/err"
	[ ! -s "$T/out" ] || fail "$cmd: output with nothing readable"
	status_of 2 $cmd "$T/missing"; stderr_lines 1
	status_of 2 $cmd --bogus; stderr_lines 1
	status_of 0 $cmd --help; no_stderr
done
status_of 1 diagnose --json "$T/mixed"; stderr_lines 1
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["unreadable"]) == 1, d["unreadable"]' "$T/out" \
	|| fail "the JSON document does not list the unreadable file"

note "show"
status_of 0 show "$good"; no_stderr
status_of 1 show "$T/mixed"; stderr_lines 1
assert_grep "^ncclwatch: $T/mixed/gen-healthy/bad.seg: not an ncclwatch segment \\(bad magic\\)$" "$T/err"
assert_eq "$(grep -c '^segment ' "$T/out")" 4 "segments shown"
status_of 1 show "$good" "$T/missing"; stderr_lines 1
status_of 2 show "$T/allbad"; stderr_lines 1
status_of 2 show "$T/missing"; stderr_lines 1
status_of 2 show; stderr_lines 1

note "gc"
mkdir -p "$T/gcdir"
status_of 0 gc "$T/gcdir"; no_stderr
status_of 2 gc "$T/missing"; stderr_lines 1
status_of 2 gc "$T/a" "$T/b"; stderr_lines 1
# A dead segment gc may not remove: its job directory is read-only for
# the caller (root ignores modes: then gc runs as nobody, on nobody's files).
nw_public_dir
G=$NW_PUBLIC
mkdir -p "$G/job"
"$NW_GEN" --scenario healthy --ranks 1 --out "$T/one" > /dev/null || fail "nwgen"
cp "$T/one/gen-healthy/"*.seg "$G/job/dead.seg"
# This host's name and a pid no process has (over pid_max): dead.
python3 -c '
import socket, struct, sys
f = open(sys.argv[1], "r+b")
f.seek(96); f.write(struct.pack("<q", 2**22 + 12345))
f.seek(144); f.write(socket.gethostname().encode()[:63] + b"\0")' "$G/job/dead.seg" || fail "patching dead.seg"
as_user=""
if [ "$(id -u)" = 0 ]; then
	command -v setpriv > /dev/null || skip "root without setpriv"
	nobody=$(id -u nobody) || skip "no user nobody"
	nw_share_build   # a CLI nobody can run: the checkout may sit in a private directory
	python3 -c 'import struct,sys; f=open(sys.argv[1],"r+b"); f.seek(140); f.write(struct.pack("<I", int(sys.argv[2])))' \
		"$G/job/dead.seg" "$nobody"
	chown -R nobody "$G"
	as_user="setpriv --reuid=nobody --regid=nogroup --clear-groups"
fi
chmod 555 "$G/job"
$as_user "$NW_CLI" gc "$G" > "$T/out" 2> "$T/err"
rc=$?
chmod 755 "$G/job"
cat "$T/out" "$T/err"
rm -rf "$G"
assert_eq "$rc" 1 "gc with a file it could not remove"
stderr_lines 1
assert_grep "^ncclwatch gc: $G/job/dead.seg: Permission denied$" "$T/err"

note "the global options and usage errors"
status_of 0 --help; no_stderr
status_of 0 --version; no_stderr
status_of 2 bogus; stderr_lines 1
status_of 2; stderr_lines 1
echo "ok"
