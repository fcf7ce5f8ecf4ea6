#!/bin/sh
# A file's header cannot make the reader pay for what the file does not
# hold (issue 16, finding 4: a 104 KB sparse file whose header says
# ring_capacity 2^24 made show and diagnose take 4.1 GB). A real segment
# made sparse, its ring said to hold 2^24 records (the format's bound),
# then 2^22 (under the reader's per-file cap): each refused with one line
# naming the file, by show, diagnose and status, within a peak RSS far
# below what the header claims (a fixed ceiling, machine-independent: the
# claims are 2 GiB and 512 MiB); the real segments next to it still read.
# A stack area (64 MiB, the bound) that is mostly holes is read for what it
# holds: the same stacks, not 64 MiB of copies.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/report/report-lib.sh"
NW_GEN="$NW_BUILD/tests/progs/nwgen"
[ -x /usr/bin/time ] || skip "no /usr/bin/time (GNU time) to measure the peak RSS"
# The ceiling: 64 MiB; a sanitizer's shadow memory and runtime need more.
ceiling=$((64 * 1024))
[ -z "$NW_SAN" ] || ceiling=$((512 * 1024))

"$NW_GEN" --scenario healthy --ranks 2 --out "$T/gen" > /dev/null || fail "nwgen"
d="$T/gen/gen-healthy"
real=$(ls "$d"/*.seg | head -n 1)

# peak OUT ARGS...: run ncclwatch ARGS (stdout OUT, stderr OUT.err), its
# status in RC, its peak RSS (KiB) in RSS; fail over the ceiling.
peak() {
	_o=$1; shift
	/usr/bin/time -f '%M' -o "$_o.rss" "$NW_CLI" "$@" > "$_o" 2> "$_o.err"
	RC=$?
	RSS=$(tail -n 1 "$_o.rss")
	echo "ncclwatch $*: status $RC, peak RSS $RSS KiB"
	[ "$RSS" -le "$ceiling" ] || fail "ncclwatch $*: peak RSS $RSS KiB, over $ceiling KiB"
}

for ring in 16777216 4194304; do
	s="$d/sparse-$ring.seg"
	python3 "$NW_ROOT/tests/report/sparse.py" "$real" "$s" "$ring" || fail "sparse.py"
	blocks=$(stat -c %b "$s")
	[ $((blocks * 512)) -lt 1048576 ] || skip "this filesystem does not keep holes (sparse files)"
	note "show, ring $ring"
	peak "$T/show" show "$s"
	assert_eq "$RC" 2 "show of the sparse file: exit status"
	[ ! -s "$T/show" ] || fail "show wrote to stdout"
	assert_eq "$(wc -l < "$T/show.err" | tr -d ' ')" 1 "show: lines on stderr"
	assert_grep "^ncclwatch: $s: (sparse file: its header says [0-9]+ bytes were written \($ring op records\), the file holds [0-9]+ bytes of data|reading it would take [0-9]+ MiB .*over the reader's per-file cap)" "$T/show.err"
	note "diagnose and status of the directory, ring $ring"
	for cmd in diagnose status; do
		peak "$T/$cmd" $cmd "$d"
		assert_eq "$RC" 1 "$cmd: exit status (an unreadable file among readable ones)"
		assert_eq "$(wc -l < "$T/$cmd.err" | tr -d ' ')" 1 "$cmd: lines on stderr"
		assert_grep "^ncclwatch $cmd: unreadable: $s: " "$T/$cmd.err"
	done
	assert_grep '^job gen-healthy: 2 processes read' "$T/diagnose"
	rm -f "$s"
done
s16=$d/sparse-16777216.seg
note "the 2^24 claim says which bound it broke"
python3 "$NW_ROOT/tests/report/sparse.py" "$real" "$s16" > /dev/null
show_bad "$s16" "over the reader's per-file cap of 1024 MiB"
rm -f "$s16"

note "a stack area mostly unwritten (64 MiB, the bound, with holes) is read for what it holds"
"$NW_GEN" --scenario missing_rank --ranks 2 --stacks --dump --out "$T/st" --job=st > /dev/null || fail "nwgen --stacks"
st=$(ls "$T/st/st/"*.seg | head -n 1)
show_ok "$T/st-before" "$st"
python3 - "$st" "$T/st-sparse.seg" <<'PY' || fail "growing the stack area"
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
stack_offset, stack_size = struct.unpack_from("<QQ", data, 80)
assert stack_offset and stack_offset + stack_size == len(data), (stack_offset, stack_size, len(data))
grown = 64 << 20
struct.pack_into("<Q", data, 88, grown)
struct.pack_into("<Q", data, 24, stack_offset + grown)
with open(sys.argv[2], "wb") as f:
    f.write(data)
    f.truncate(stack_offset + grown)
PY
peak "$T/st-show" show "$T/st-sparse.seg"
assert_eq "$RC" 0 "show of a segment with a sparse 64 MiB stack area"
# The same stacks as before it grew.
grep -E '^  (stacks|module|thread) |^    #' "$T/st-before" > "$T/st-a"
grep -E '^  (stacks|module|thread) |^    #' "$T/st-show" > "$T/st-b"
[ -s "$T/st-a" ] || fail "nwgen --stacks wrote no thread stacks"
cmp -s "$T/st-a" "$T/st-b" || fail "the stacks read differ once the area has holes"

note "a real segment still reads, every record"
show_ok "$T/real" "$real"
assert_grep '^records shown=256 valid=256 torn=0 overwritten=[0-9]+ unpublished=0 head=[0-9]+ capacity=256$' "$T/real"
cli_ok_diag() { "$NW_CLI" diagnose "$d" > "$T/diag" 2> "$T/diag.err"; }
cli_ok_diag
assert_eq "$?" 0 "diagnose of the real segments"
[ ! -s "$T/diag.err" ] || fail "diagnose wrote to stderr: $(cat "$T/diag.err")"
echo "ok"
