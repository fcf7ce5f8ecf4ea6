#!/bin/sh
# The op ring: after wrap-around only the newest records are shown; torn
# and unpublished records are never shown, and every ticket is counted.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/report/report-lib.sh"

tickets() { sed -n 's/^  op \([0-9]*\) .*/\1/p' "$1" | tr '\n' ' '; }

# 40 records in a ring of 16: tickets 24..39.
"$NW_MKSEG" --ring 16 --records 40 "$T/wrap.seg" || fail "mkseg"
show_ok "$T/wrap" "$T/wrap.seg"
assert_grep '^records shown=16 valid=16 torn=0 overwritten=24 unpublished=0 head=40 capacity=16$' "$T/wrap"
assert_eq "$(tickets "$T/wrap")" "24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 " "wrapped tickets"
assert_grep '^  op 24 t=\+0\.025000 tid=5000 Send .* seq=25 count=1024 ' "$T/wrap"
assert_grep '^  op 39 t=\+0\.040000 .* seq=40 count=1039 ' "$T/wrap"

# A torn record (commit names no ticket of its slot) and an unpublished one
# (commit 0: its writer died mid-write) are dropped and counted.
"$NW_MKSEG" --ring 16 --records 40 --tear 30 --unpublish 33 "$T/bad.seg" || fail "mkseg"
show_ok "$T/bad" "$T/bad.seg"
assert_grep '^records shown=14 valid=14 torn=1 overwritten=24 unpublished=1 head=40 capacity=16$' "$T/bad"
assert_eq "$(tickets "$T/bad")" "24 25 26 27 28 29 31 32 34 35 36 37 38 39 " "tickets without 30 and 33"
assert_no_grep 'count=12246957' "$T/bad"   # 0xbadbad: what mkseg scribbled into them

# Not yet wrapped, with the newest record unpublished (the writer is in it).
"$NW_MKSEG" --ring 16 --records 5 --unpublish 4 "$T/young.seg" || fail "mkseg"
show_ok "$T/young" "$T/young.seg"
assert_grep '^records shown=4 valid=4 torn=0 overwritten=0 unpublished=1 head=5 capacity=16$' "$T/young"
assert_eq "$(tickets "$T/young")" "0 1 2 3 " "young tickets"

# A record its writer is writing now (commit = the writing marker of its
# own ticket) is unpublished, not torn.
"$NW_MKSEG" --ring 16 --records 40 --writing 35 "$T/writing.seg" || fail "mkseg"
show_ok "$T/writing" "$T/writing.seg"
assert_grep '^records shown=15 valid=15 torn=0 overwritten=24 unpublished=1 head=40 capacity=16$' "$T/writing"
assert_no_grep '^  op 35 ' "$T/writing"

# Records held by updaters (1.3: updates in place at work, or a process
# killed inside one) are valid, their tickets their own.
"$NW_MKSEG" --ring 16 --records 40 --held 30 --held 39 "$T/held.seg" || fail "mkseg"
show_ok "$T/held" "$T/held.seg"
assert_grep '^records shown=16 valid=16 torn=0 overwritten=24 unpublished=0 head=40 capacity=16$' "$T/held"
assert_eq "$(tickets "$T/held")" "24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 " "held tickets"
assert_grep '^  op 30 .* seq=31 count=1030 ' "$T/held"

# An empty ring.
"$NW_MKSEG" --records 0 "$T/empty.seg" || fail "mkseg"
show_ok "$T/empty" "$T/empty.seg"
assert_grep '^records shown=0 valid=0 torn=0 overwritten=0 unpublished=0 head=0 capacity=16$' "$T/empty"

# A head near 2^64 (a damaged or hostile header): the reader ends, every
# ticket counted once (the chunked reader once looped forever here: the
# end of a chunk, ticket + capacity, passed 2^64).
for head in 18446744073709551615 18446744073709551613 18446744073709551600; do
	"$NW_MKSEG" --ring 16 --records 5 "$T/top.seg" || fail "mkseg"
	python3 -c 'import struct,sys; f=open(sys.argv[1],"r+b"); f.seek(272); f.write(struct.pack("<Q", int(sys.argv[2])))' \
		"$T/top.seg" "$head"
	nw_bounded 60 "$NW_CLI" show "$T/top.seg" > "$T/top" 2> "$T/top.err"
	assert_eq "$?" 0 "show of a segment whose head is $head"
	old=$(python3 -c 'import sys; print(int(sys.argv[1]) - 16)' "$head")
	assert_grep "^records shown=0 valid=0 torn=0 overwritten=$old unpublished=16 head=$head capacity=16\$" "$T/top"
done
echo "ok"
