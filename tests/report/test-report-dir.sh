#!/bin/sh
# ncclwatch show DIR: every *.seg file in DIR and two levels below
# (DIR/<job>/<host>.<pid>.seg), sorted, other files and deeper levels ignored.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/report/report-lib.sh"

d="$T/shm"
mkdir -p "$d/job-a" "$d/job-b/dumps/deeper"
"$NW_MKSEG" "$d/job-a/host.2.seg" && "$NW_MKSEG" "$d/job-a/host.1.seg" &&
	"$NW_MKSEG" "$d/job-b/host.3.seg" && "$NW_MKSEG" "$d/top.seg" &&
	"$NW_MKSEG" "$d/job-b/dumps/host.4.seg" && "$NW_MKSEG" "$d/job-b/dumps/deeper/host.5.seg" ||
	fail "mkseg"
echo notes > "$d/job-a/README"
echo x > "$d/job-a/host.9.seg.tmp"
ln -s "$d/job-a/host.1.seg" "$d/job-b/link.seg"

show_ok "$T/out" "$d"
grep '^segment ' "$T/out" > "$T/list"
cat > "$T/want" <<END
segment $d/job-a/host.1.seg
segment $d/job-a/host.2.seg
segment $d/job-b/dumps/host.4.seg
segment $d/job-b/host.3.seg
segment $d/top.seg
END
diff "$T/want" "$T/list" >&2 || fail "segments found under DIR"

# A trailing slash prints the same paths; a job directory alone works too.
show_ok "$T/out2" "$d/"
grep '^segment ' "$T/out2" | diff "$T/want" - >&2 || fail "DIR/ lists differently"
show_ok "$T/out3" "$d/job-a"
assert_eq "$(grep -c '^segment ' "$T/out3")" 2 "segments of job-a"
# Blocks are separated by one empty line.
assert_eq "$(grep -c '^$' "$T/out3")" 1 "empty lines between two segments"

# A bad segment in the directory: named, the others still shown, status 1.
"$NW_MKSEG" --corrupt major "$d/job-a/host.3.seg" || fail "mkseg"
"$NW_CLI" show "$d" > "$T/out4" 2> "$T/err4"
assert_eq "$?" 1 "status with a bad segment in DIR"
assert_eq "$(grep -c '^segment ' "$T/out4")" 5 "good segments shown"
assert_eq "$(wc -l < "$T/err4" | tr -d ' ')" 1 "error lines"
assert_grep "^ncclwatch: $d/job-a/host.3.seg: format 3\.0 is newer" "$T/err4"
echo "ok"
