#!/bin/sh
# Malformed, truncated, foreign and newer-version segments: each gives
# exactly one line on stderr naming the file and the problem, exit status 2,
# nothing on stdout, never a crash.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/report/report-lib.sh"

# bad DEFECT PATTERN: a segment with that defect (mkseg --corrupt).
bad() {
	"$NW_MKSEG" --corrupt "$1" "$T/$1.seg" || fail "mkseg --corrupt $1"
	show_bad "$T/$1.seg" "$2"
}
bad empty                  'empty file'
bad short_magic            'truncated header \(5 bytes'
bad short_header           'truncated header \(100 bytes'
bad header_only            'truncated: the file has 8192 bytes, its header says [0-9]+$'
bad truncated_ring         'truncated: the file has [0-9]+ bytes'
bad segment_size           'truncated: the file has [0-9]+ bytes, its header says [0-9]+$'
bad zero_magic             'not initialized yet'
bad magic                  'not an ncclwatch segment \(bad magic\)$'
bad endian                 'foreign byte order'
bad endian_bad             'bad byte-order mark 0xdeadbeef$'
bad major                  'format 3\.0 is newer than this ncclwatch \(reads 1\.x and 2\.x\)$'
bad major0                 'format 0\.0 is not supported'
bad header_size            'header_size is 4096 bytes, expected 8192$'
bad header_size_big        'header_size is 8256 bytes, expected 8192$'
bad comm_record_size       'comm_record_size is 256 bytes, expected 512$'
bad peer_record_size       'peer_record_size is 72 bytes, expected 64$'
bad op_record_size         'op_record_size is 64 bytes, expected 128$'
bad comm_offset_misaligned 'comm table offset [0-9]+ is not 64-byte aligned$'
bad comm_offset_in_header  'comm table offset 64 overlaps the header'
bad ring_offset_outside    'op ring \(offset [0-9]+, [0-9]+ bytes\) ends beyond the segment'
bad ring_offset_overflow   'op ring \(offset 18446744073709551552, [0-9]+ bytes\) ends beyond the segment'
bad overlap                'comm table overlaps peer table$'
bad ring_not_pow2          'ring_capacity 12 is not a power of two$'
bad ring_zero              'ring_capacity 0 is not a power of two$'
bad ring_over_max          'ring_capacity 33554432 is over the bound 16777216$'
bad comms_over_max         'comm_capacity 65537 is over the bound 65536$'
bad peers_over_max         'peer_capacity 1048577 is over the bound 1048576$'
bad stack_over_max         'stack_size 67108865 is over the bound 67108864$'
bad stack_outside          'stack area \(offset [0-9]+, 4096 bytes\) ends beyond the segment'
bad comm_count             'comm_count 5 is over comm_capacity 4$'
bad peer_count             'peer_count 9 is over peer_capacity 8$'
bad host_unterminated      'header field host is not NUL-terminated$'
bad job_unterminated       'header field job is not NUL-terminated$'
bad error_unterminated     'header field error is not NUL-terminated$'
bad env_unterminated       'header field env does not end with an empty string'
bad comm_name_unterminated 'comm slot 1: name is not NUL-terminated$'

# Every defect mkseg knows is covered above (those of the stack area:
# test-report-stacks.sh).
"$NW_MKSEG" --list-defects | grep -v -e '^random_' -e '^stack_area_' > "$T/defects"
for d in $(cat "$T/defects"); do
	[ -e "$T/$d.seg" ] || fail "defect $d is not tested"
done

# Random bytes after a valid magic and version, several seeds: still one
# line and status 2 (the message depends on what the bytes say).
for seed in 1 2 3 4 5 6 7 8; do
	"$NW_MKSEG" --corrupt random_header --seed $seed "$T/rh$seed.seg" || fail "mkseg"
	show_bad "$T/rh$seed.seg" '.'
	"$NW_MKSEG" --corrupt random_fields --seed $seed "$T/rf$seed.seg" || fail "mkseg"
	show_bad "$T/rf$seed.seg" '.'
done

# Random files of various sizes, and a valid magic followed by random bytes.
for n in 1 7 8 15 16 100 4095 8191 8192 8193 20000 70000; do
	head -c $n /dev/urandom > "$T/random$n.seg"
	show_bad "$T/random$n.seg" '.'
	{ printf 'NCCLWSEG\004\003\002\001\001\000\000\000'; head -c $n /dev/urandom; } > "$T/magic$n.seg"
	show_bad "$T/magic$n.seg" '.'
done

# Not files: a missing path, an empty directory, a directory of other files.
show_bad "$T/missing.seg" 'No such file or directory$'
mkdir -p "$T/nothing" "$T/others/job"
show_bad "$T/nothing" 'no segment files \(\*\.seg\) in this directory$'
echo hello > "$T/others/readme.txt"; echo x > "$T/others/job/host.1.log"
show_bad "$T/others" 'no segment files'
mkfifo "$T/fifo.seg"
show_bad "$T/fifo.seg" 'not a regular file$'

# A bad file among good ones: the good ones are shown, the bad one named
# once, status 1 (a problem found; 2 is for nothing readable).
"$NW_MKSEG" "$T/good.seg" || fail "mkseg"
"$NW_CLI" show "$T/good.seg" "$T/magic.seg" "$T/good.seg" > "$T/mixed" 2> "$T/mixed.err"
assert_eq "$?" 1 "status with a bad file among good ones"
assert_eq "$(grep -c '^segment ' "$T/mixed")" 2 "good segments shown"
assert_eq "$(wc -l < "$T/mixed.err" | tr -d ' ')" 1 "error lines"
assert_grep "$T/magic.seg: not an ncclwatch segment" "$T/mixed.err"
echo "ok"
