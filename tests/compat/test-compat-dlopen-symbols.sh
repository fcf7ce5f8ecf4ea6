#!/bin/sh
# Real NCCL loaded by path, as JAX's TSL stub does (dlopen + dlsym): the
# toolkit's 2.28.9 and, from PyPI wheels fetched by `make deps`, 2.18.3 and
# 2.32.3. Under the preload the program must find exactly the same functions
# (those an older NCCL lacks stay missing: our dlsym hook never invents
# them), versions and results, and its calls are still recorded. The linked
# path and the segment's contents are checked by tests/interpose.
. "$NW_ROOT/tests/lib.sh"
probe="$NW_BUILD/tests/progs/dlopen_probe"
export NCCLWATCH_KEEP=1

check() {   # check LIBRARY EXPECTED-VERSION-CODE
	lib=$1 want=$2
	note "$lib"
	"$probe" "$lib" > "$T/plain.txt" 2>&1 || fail "probe without preload failed: $(cat "$T/plain.txt")"
	LD_PRELOAD=$(nw_preload) "$probe" "$lib" > "$T/watched.txt" 2>"$T/watched.err" ||
		fail "probe under preload failed: $(cat "$T/watched.err")"
	diff "$T/plain.txt" "$T/watched.txt" || fail "$lib: output differs under the preload"
	# Its only word on stderr: without a CUDA driver (no GPU here) the
	# watchdog says once that GPU completion is not tracked.
	grep -v '^ncclwatch: .*GPU completion is not tracked' "$T/watched.err" > "$T/watched.other"
	[ -s "$T/watched.other" ] && { cat "$T/watched.err"; fail "$lib: the preload wrote to stderr"; }
	[ "$(grep -c . "$T/watched.err")" -le 1 ] || { cat "$T/watched.err"; fail "$lib: 'not tracked' said more than once"; }
	assert_grep "^version $want result 0$" "$T/watched.txt"
	assert_grep "^initrank result 1 \(unhandled cuda error" "$T/watched.txt"
	# Recorded, although the program never linked NCCL.
	"$NW_CLI" show "$NCCLWATCH_DIR" > "$T/show.txt" || fail "ncclwatch show failed"
	assert_grep "^  op 0 .* CommInit .* state=INIT_FAILED result=ncclUnhandledCudaError" "$T/show.txt"
	rm -rf "$NCCLWATCH_DIR"
}

check "$NW_REAL_NCCL/libnccl.so.2" 22809

found=0
for v in 2.18.3 2.32.3; do
	lib="$NW_WHEELS/$v/libnccl.so.2"
	[ -s "$lib" ] || { note "missing $lib (make deps fetches it)"; continue; }
	code=$(echo "$v" | awk -F. '{ print $1 * 10000 + $2 * 100 + $3 }')
	check "$lib" "$code"
	found=$((found + 1))
done
# 2.18 predates these: under the preload they must still be missing.
if [ -s "$NW_WHEELS/2.18.3/libnccl.so.2" ]; then
	LD_PRELOAD=$(nw_preload) "$probe" "$NW_WHEELS/2.18.3/libnccl.so.2" > "$T/old.txt"
	for f in ncclCommShrink ncclCommRevoke ncclCommInitRankScalable ncclGroupSimulateEnd; do
		assert_grep "^symbol $f missing$" "$T/old.txt"
	done
fi
[ $found = 2 ] || skip "real NCCL wheels not fetched ($NW_WHEELS): run make deps; only the toolkit's NCCL was checked"
