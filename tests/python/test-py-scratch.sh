#!/bin/sh
# The watchdog's large Python-stack buffers are mapped on the first capture,
# not carried in .bss by every process that loads the preload (issue 20):
# - libncclwatch.so's .bss stays under 64 KiB (`size -A`: a count of the
#   build, not of the machine; it was 19.8 MB of static pystack tables,
#   then 305,600 bytes with the CUDA graph tables (184 KB, now allocated
#   at the first capture into a graph) and the stack capture's fixed buffers
#   (69 KB, nearly all of it the module map; now allocated at the first
#   stack capture); 47,680 after);
# - a capture whose mapping fails keeps the capture: examples/train.py, one
#   rank, under the test build of the library, which fails every such
#   mapping when NCCLWATCH_TEST_SCRATCH_FAIL=1 (the path a full address
#   space takes). `ncclwatch dump` still gets its dump with the native
#   stacks, the Python note says why Python's are missing, the process says
#   so once ("ncclwatch: could not map ...") and goes on recording;
# - the same run without the failure has the Python frames (the buffers
#   really are mapped and used).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
. "$NW_ROOT/tests/python/py-lib.sh"
[ -z "$NW_SAN" ] || skip "the test build of the library is not built with sanitizers"

bss=$(size -A "$NW_LIB" | awk '$1 == ".bss" { print $2 }')
[ -n "$bss" ] || fail "no .bss in size -A $NW_LIB"
note ".bss of libncclwatch.so: $bss bytes"
[ "$bss" -lt 65536 ] || fail ".bss of libncclwatch.so is $bss bytes (>= 64 KiB): large buffers (the CUDA graph and exec tables, the stack capture's module map, the pystack tables) belong in memory allocated on first use"

HOOKED="$NW_BUILD/tests/hooks/lib/libncclwatch.so"
[ -f "$HOOKED" ] || fail "$HOOKED not built"

# run NAME [ENV...]: one rank of train.py under the test library, a dump
# asked for while it runs; its segment's stacks into $T/NAME.show.
run() {
	case_=$1; shift
	rm -rf "$NCCLWATCH_DIR" "$NCCLWATCH_DUMP_DIR"
	nw_spawn env LD_PRELOAD="$HOOKED" NCCLWATCH_JOB="$case_" RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 "$@" \
		"$PY" "$TRAIN" --steps 1000000 --count 64 --bcast-every 0 --rendezvous "$T/rdv.$case_" > "$T/$case_.out" 2>&1
	pid_=$NW_PID
	nw_until 60 sh -c "ls '$NCCLWATCH_DIR/$case_/'*.seg" > /dev/null 2>&1 || { cat "$T/$case_.out" >&2; fail "$case_: no segment"; }
	"$NW_CLI" dump --wait 20 "$NCCLWATCH_DIR" > "$T/$case_.dump" 2>&1 || { cat "$T/$case_.dump" "$T/$case_.out" >&2; fail "$case_: dump not answered"; }
	"$NW_CLI" show --records 0 "$NCCLWATCH_DIR/$case_/"*.seg > "$T/$case_.show" 2>&1 || { cat "$T/$case_.show" >&2; fail "$case_: show"; }
	kill -0 "$pid_" 2>/dev/null || { cat "$T/$case_.out" >&2; fail "$case_: the process ended"; }
	kill -TERM "$pid_"
	nw_wait "$pid_" 30 > /dev/null
}

note "the mapping fails: the capture keeps its native stacks"
run fail NCCLWATCH_TEST_SCRATCH_FAIL=1
cat "$T/fail.show"
assert_grep 'captures=[1-9]' "$T/fail.show"
assert_grep '^    #[0-9]+ 0x[0-9a-f]+ _PyEval_EvalFrameDefault' "$T/fail.show"
assert_grep 'no memory for the Python frame tables' "$T/fail.show"
assert_no_grep '^ +py#[0-9]+ ' "$T/fail.show"
[ "$(grep -c 'ncclwatch: could not map' "$T/fail.out")" = 1 ] || { cat "$T/fail.out" >&2; fail "not said exactly once"; }

note "the same run, mapping allowed: Python frames"
run ok
assert_grep 'captures=[1-9]' "$T/ok.show"
assert_grep '^ +py#[0-9]+ .*train\.py:[0-9]+\)' "$T/ok.show"
assert_no_grep 'ncclwatch: could not map' "$T/ok.out"
echo ok
