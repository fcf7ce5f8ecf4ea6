#!/bin/sh
# The stack area (format 1.1): a capture prints its modules, threads and
# frames, and each op's recorded call stack; --no-stacks leaves the summary
# only; a capture being written is not shown; a malformed area is one line
# on stderr naming the file and "stack area", exit status 2, never a crash.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/report/report-lib.sh"

"$NW_MKSEG" --stacks --records 6 "$T/a.seg" || fail "mkseg"
show_ok "$T/out" "$T/a.seg"
o="$T/out"
assert_grep '^  format +1\.1$' "$o"
assert_grep '^stacks captured t=\+3\.000000 request=7 threads=4 captures=2 seq=4 modules=3 thread_capacity=4 frame_capacity=8 opstack_depth=4$' "$o"
assert_grep '^  module 0 0x400000 /usr/bin/python3\.11$' "$o"
assert_grep '^  module 1 0x7f0000000000 /usr/lib/x86_64-linux-gnu/libnccl\.so\.2$' "$o"
assert_grep '^  module 2 0x7f1000000000 /opt/ncclwatch/lib/libncclwatch\.so$' "$o"
assert_eq "$(grep -c '^  module ' "$o")" 3 "module lines"
assert_grep '^  thread 4242 "python3" in-nccl$' "$o"
assert_grep '^    #0 0x7f0000012345 ncclAllReduce\+0x45 \(libnccl\.so\.2\+0x12345\)$' "$o"
assert_grep '^    #1 0x400123 train_step\+0x23 \(python3\.11\+0x123\)$' "$o"
assert_grep '^    #2 0x400456 main\+0x56 \(python3\.11\+0x456\)$' "$o"
assert_grep '^  thread 4243 "ncclwatch-wd" watchdog$' "$o"
assert_grep '^    #0 0x7f1000001010 nw_watchdog_main\+0x10 \(libncclwatch\.so\+0x1010\)$' "$o"
assert_grep '^    #1 0x7ffff7a00000 \?\? \(\?\?\)$' "$o"
assert_grep '^  thread 4250 "pt_data_worker" no-reply$' "$o"
assert_grep '^  thread 4251 "recurse" truncated$' "$o"
assert_eq "$(grep -c '^  thread ' "$o")" 4 "thread lines"
assert_eq "$(grep -c '^    #[0-9]' "$o")" 13 "frame lines (3 + 2 + 0 + 8)"
# The thread's frames follow its line, innermost first.
assert_eq "$(sed -n '/^  thread 4242 /,/^  thread 4243 /p' "$o" | sed -n 's/^    #\([0-9]*\) .*/\1/p' | tr '\n' ' ')" \
	"0 1 2 " "frames of thread 4242"

# Per-op stacks: after the op line, only for the ops that have one (even tickets).
assert_eq "$(grep -c '^    at ' "$o")" 12 "op-stack lines (3 ops x 4)"
sed -n '/^  op 2 /,/^  op 3 /p' "$o" > "$T/op2"
assert_grep '^    at 0x7f0000012345 ncclAllReduce\+0x45 \(libnccl\.so\.2\+0x12345\)$' "$T/op2"
assert_grep '^    at 0x400123 train_step\+0x23 \(python3\.11\+0x123\)$' "$T/op2"
assert_grep '^    at 0x400456 main\+0x56 \(python3\.11\+0x456\)$' "$T/op2"
assert_grep '^    at 0x401002 \?\? \(python3\.11\+0x1002\)$' "$T/op2"
assert_eq "$(sed -n '/^  op 1 /,/^  op 2 /p' "$o" | grep -c '^    at ')" 0 "no stack for op 1"
# The existing lines are unchanged.
assert_grep '^records shown=6 valid=6 torn=0 overwritten=0 unpublished=0 head=6 capacity=16$' "$o"
assert_grep '^  op 0 t=\+0\.001000 tid=5000 AllReduce comm=abcdef0000000001 rank=1/4 seq=1 count=1000 dtype=float32 redop=sum root=- group=0 depth=0 state=COMPLETED result=ncclSuccess cuda_error=0 flags=- started=\+0\.001100 ended=\+0\.001200 stream=0x1000 caller=0x400000$' "$o"

# --no-stacks: the summary line only.
show_ok "$T/ns" --no-stacks "$T/a.seg"
assert_grep '^stacks captured t=\+3\.000000 request=7 threads=4 ' "$T/ns"
assert_no_grep '^  (module|thread) |^    (#|at )' "$T/ns"
assert_eq "$(grep -c '^  op ' "$T/ns")" 6 "op lines with --no-stacks"

# Without per-op stacks; after wrap-around the op stacks follow the tickets.
"$NW_MKSEG" --stacks --no-opstacks "$T/noop.seg" || fail "mkseg"
show_ok "$T/noop" "$T/noop.seg"
assert_grep '^stacks captured .* opstack_depth=0$' "$T/noop"
assert_no_grep '^    at ' "$T/noop"
"$NW_MKSEG" --stacks --ring 16 --records 40 "$T/wrap.seg" || fail "mkseg"
show_ok "$T/wrap" "$T/wrap.seg"
assert_eq "$(grep -c '^    at ' "$T/wrap")" 32 "op-stack lines after wrap (8 even tickets x 4)"
assert_grep '^    at 0x401026 \?\? \(python3\.11\+0x1026\)$' "$T/wrap"   # ticket 38
assert_no_grep '^    at 0x401016 ' "$T/wrap"                              # ticket 22: overwritten

# States that are not errors.
"$NW_MKSEG" --corrupt stack_area_seq_odd "$T/stack_area_seq_odd.seg" || fail "mkseg"
show_ok "$T/odd" "$T/stack_area_seq_odd.seg"
assert_grep '^stacks being-written t=- request=- threads=- captures=- seq=5 modules=- thread_capacity=4 frame_capacity=8 opstack_depth=4$' "$T/odd"
assert_no_grep '^  (module|thread) |^    #' "$T/odd"
# Per-op stacks are not under the capture's seqlock: shown, unresolved.
assert_grep '^    at 0x7f0000012345 \?\? \(\?\?\)$' "$T/odd"
"$NW_MKSEG" --corrupt stack_area_never "$T/stack_area_never.seg" || fail "mkseg"
show_ok "$T/never" "$T/stack_area_never.seg"
assert_grep '^stacks never t=- request=- threads=- captures=- seq=4 ' "$T/never"
assert_no_grep '^  (module|thread) ' "$T/never"
"$NW_MKSEG" --corrupt stack_area_uninitialized "$T/stack_area_uninitialized.seg" || fail "mkseg"
show_ok "$T/uninit" "$T/stack_area_uninitialized.seg"
assert_grep '^stacks uninitialized$' "$T/uninit"
assert_no_grep '^    at ' "$T/uninit"

# A newer minor reads the stack area as 1.1 does.
"$NW_MKSEG" --newer-minor --stacks "$T/minor.seg" || fail "mkseg"
show_ok "$T/minor" "$T/minor.seg"
seg_minor=$(sed -n 's/^#define NW_SEG_VERSION_MINOR \([0-9]*\).*/\1/p' "$NW_ROOT/include/ncclwatch/segment.h")
assert_grep "^  format +2\\.$((seg_minor + 1))\$" "$T/minor"
assert_grep '^  thread 4242 "python3" in-nccl$' "$T/minor"

# Malformed stack areas.
bad() {
	"$NW_MKSEG" --corrupt "$1" "$T/$1.seg" || fail "mkseg --corrupt $1"
	show_bad "$T/$1.seg" "stack area: $2"
}
bad stack_area_magic               'bad magic 0x12345678 \(expected 0x4b54534e\)$'
bad stack_area_zero_magic          'bad magic 0x00000000 '
bad stack_area_too_small           '64 bytes, smaller than its 128-byte header$'
bad stack_area_offset              'string table \(offset [0-9]+, 256 bytes\) ends beyond the area \([0-9]+ bytes\)$'
bad stack_area_offset_overflow     'frame table \(offset 18446744073709551552, 1024 bytes\) ends beyond the area'
bad stack_area_misaligned          'module table offset [0-9]+ is not 64-byte aligned$'
bad stack_area_overlap             'thread table overlaps frame table$'
bad stack_area_capacity            'frame_capacity 1048576 is over the bound 1024$'
bad stack_area_strtab_used         'strtab_used 257 is over strtab_size 256$'
bad stack_area_thread_count        'thread_count 5 is over thread_capacity 4$'
bad stack_area_module_count        'module_count 5 is over module_capacity 4$'
bad stack_area_ipsym_count         'ipsym_count 9 is over ipsym_capacity 8$'
bad stack_area_string_unterminated "the string table's last string is not NUL-terminated within strtab_used [0-9]+$"
bad stack_area_frames              'thread 0 \(tid 4242\) has 9 frames, over frame_capacity 8$'
bad stack_area_frame_symbol        'thread 0 \(tid 4242\) frame 1: symbol offset [0-9]+ is beyond strtab_used [0-9]+$'
bad stack_area_frame_module        'thread 0 \(tid 4242\) frame 1: module 4 is beyond module_count 3$'
bad stack_area_thread_name         'thread 2 \(tid 4250\): name is not NUL-terminated$'
bad stack_area_module_path         'module 1: path is not NUL-terminated$'
bad stack_area_ipsym_unsorted      'ip-symbol table is not sorted by ip \(entry 1\)$'
bad stack_area_opstack_count       'opstack_count 8 is neither 0 nor ring_capacity 16$'
bad stack_area_opstack_depth       'opstack_depth 65 is over the bound 64$'
bad stack_area_py_count            'pyframe_count 9 is over pyframe_capacity 8$'
bad stack_area_py_thread           'thread 0 \(tid 4242\): Python frames 0\.\.0\+7 are beyond pyframe_count 2$'
bad stack_area_py_native           'thread 0 \(tid 4242\): py_native 4 is over its 3 frames$'
bad stack_area_py_string           'Python frame 1: file [0-9]+ or function [0-9]+ is beyond strtab_used [0-9]+$'
bad stack_area_py_site_unsorted    'Python site table is not sorted by \(code, instr\) \(entry 1\)$'
bad stack_area_py_call_depth       'pycall_depth 65 is over the bound 64$'
bad stack_area_py_call_count       'pycall_count 8 is neither 0 nor ring_capacity 16$'
bad stack_area_py_overlap          'Python frame table overlaps Python site table$'

# 1.4's Python frames: a thread's Python line and frames after its native
# ones; each op with a call site (even tickets) its "py" lines, named by
# the site table; the note.
"$NW_MKSEG" --python --records 6 "$T/py.seg" || fail "mkseg --python"
show_ok "$T/py" "$T/py.seg"
assert_grep '^  format +1\.4$' "$T/py"
assert_grep '^  note python CPython 3\.11 via _Py_DumpTracebackThreads$' "$T/py"
sed -n '/^  thread 4242 /,/^  thread 4243 /p' "$T/py" > "$T/py.t0"
assert_grep '^    python "MainThread" frames=2 native_above=1 main gil$' "$T/py.t0"
assert_eq "$(grep '^    py#' "$T/py.t0" | tr '\n' '|')" \
	'    py#0 train_step (/work/train.py:83)|    py#1 <module> (/work/train.py:120)|' "thread 4242's Python frames"
assert_eq "$(grep -c '^    python ' "$T/py")" 1 "Python threads"
sed -n '/^  op 2 /,/^  op 3 /p' "$T/py" > "$T/py.op2"
assert_eq "$(grep '^    py ' "$T/py.op2" | tr '\n' '|')" \
	'    py sync_gradients (/work/train.py:77)|    py train_step (/work/train.py:83)|' "op 2's call site"
assert_eq "$(sed -n '/^  op 1 /,/^  op 2 /p' "$T/py" | grep -c '^    py ')" 0 "no call site for op 1"
assert_eq "$(grep -c '^    py ' "$T/py")" 6 "call-site lines (3 ops x 2)"
# The analysis: the thread's Python frames are its stack, and the op's site.
"$NW_CLI" diagnose --any-owner "$T/py.seg" > "$T/py.diag"
# A Python thread is named by its threading name (py_name), not its native one.
assert_grep '^  rank [0-9]+ \(1\) thread "MainThread":$' "$T/py.diag"
assert_grep '^    #0 train_step \(train.py:83\)$' "$T/py.diag"
assert_grep '^    #1 <module> \(train.py:120\)$' "$T/py.diag"
"$NW_CLI" diagnose --any-owner --native "$T/py.seg" > "$T/py.native"
assert_eq "$(sed -n '/^  rank.*thread "MainThread"/,/^  rank/p' "$T/py.native" | grep '^    #' | head -4 | tr '\n' '|')" \
	'    #0 ncclAllReduce|    #1 train_step (train.py:83)|    #2 <module> (train.py:120)|    #3 train_step|' "the mixed stack"

# 1.4, before any capture: the call site names the watchdog wrote (no
# threads, modules or capture count) name each op's site. The same area
# still holding a capture's threads, modules and count with capture_ns 0
# is no writer's: read as "never", its threads and names not believed,
# its ops read (the fuzz run found the reader returning those threads).
show_ok "$T/names" "$NW_ROOT/tests/fuzz/corpus/v14-names-never.seg"
assert_grep '^stacks never t=- request=0 threads=0 captures=0 seq=4 modules=0 ' "$T/names"
assert_no_grep '^  (module|thread|note) ' "$T/names"
assert_eq "$(grep -c '^    py ' "$T/names")" 8 "call-site lines before any capture (4 of 8 ops x 2)"
show_ok "$T/claims" "$NW_ROOT/tests/fuzz/corpus/v14-never-threads.seg"
assert_grep '^stacks never t=- request=- threads=- captures=- seq=4 ' "$T/claims"
assert_no_grep '^  (module|thread|note) ' "$T/claims"
# Its ops' call sites are references written by the hot path, shown unnamed.
assert_eq "$(grep -c '^    py ?? (??)$' "$T/claims")" 8 "unnamed call-site lines"
assert_no_grep '^    py [^?]' "$T/claims"
assert_eq "$(grep -c '^  op ' "$T/claims")" "$(grep -c '^  op ' "$T/names")" "ops of the area that claims a capture"

# Every stack-area defect mkseg knows is covered above.
for d in $("$NW_MKSEG" --list-defects | grep '^stack_area_'); do
	[ -e "$T/$d.seg" ] || fail "defect $d is not tested"
done

# Random bytes in the area: an error naming the stack area, or (when the
# bytes fell where nothing is read) a good read; never anything else.
for seed in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
	"$NW_MKSEG" --corrupt random_stack_area --seed $seed "$T/ra$seed.seg" || fail "mkseg"
	show_bad "$T/ra$seed.seg" 'stack area: '
	"$NW_MKSEG" --corrupt random_stack_bytes --seed $seed "$T/rb$seed.seg" || fail "mkseg"
	"$NW_CLI" show "$T/rb$seed.seg" > "$T/rb.out" 2> "$T/rb.err"
	rc=$?
	case $rc in
	0) [ ! -s "$T/rb.err" ] || fail "rb$seed: status 0 with stderr: $(cat "$T/rb.err")" ;;
	2) show_bad "$T/rb$seed.seg" 'stack area: ' ;;
	*) fail "rb$seed: status $rc" ;;
	esac
done
echo "ok"
