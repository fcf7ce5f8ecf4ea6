#!/bin/sh
# ncclwatch on real NCCL libraries: the toolkit's (2.28.9) and, from PyPI
# wheels fetched by `make deps`, an old (2.18.3) and the newest (2.32.3).
# A program that loads the library by path (as JAX does) must see exactly
# the same thing with and without the preload: the same functions (an older
# NCCL lacks some: they stay missing), the same version, the same results,
# ncclCommInitRank failing with the real error (no GPU here). The segment
# must hold the communicator's init as INIT_FAILED with that error.
. "$NW_ROOT/tests/lib.sh"
probe="$NW_BUILD/tests/progs/nccl_probe"
export NCCLWATCH_KEEP=1

check() {   # check LIBRARY EXPECTED-VERSION-CODE
	lib=$1 want=$2
	note "$lib"
	"$probe" "$lib" > "$T/plain.txt" 2>&1 || fail "probe without preload failed: $(cat "$T/plain.txt")"
	rm -rf "$NCCLWATCH_DIR"
	LD_PRELOAD=$(nw_preload) "$probe" "$lib" > "$T/watched.txt" 2>"$T/watched.err" ||
		fail "probe under preload failed: $(cat "$T/watched.err")"
	diff "$T/plain.txt" "$T/watched.txt" || fail "$lib: output differs under the preload"
	[ -s "$T/watched.err" ] && { cat "$T/watched.err"; fail "$lib: the preload wrote to stderr"; }
	assert_grep "^version $want result 0$" "$T/watched.txt"
	assert_grep "^uniqueid result 0$" "$T/watched.txt"
	assert_grep "^initrank result 1 \(unhandled cuda error" "$T/watched.txt"
	"$NW_CLI" show "$NCCLWATCH_DIR" > "$T/show.txt" || fail "ncclwatch show failed"
	nv=$(echo "$want" | awk '{ printf "%d.%d.%d", $1 / 10000, ($1 / 100) % 100, $1 % 100 }')
	assert_grep "^  nccl +$nv$" "$T/show.txt"
	assert_grep "^  comm 0 id=[0-9a-f]{16} origin=InitRank rank=0/1 state=INIT_FAILED .*init_result=ncclUnhandledCudaError" "$T/show.txt"
	assert_grep "^  op 0 .* CommInit .* state=INIT_FAILED result=ncclUnhandledCudaError .* ended=\+[0-9]" "$T/show.txt"
	[ "$(grep -c '^  op ' "$T/show.txt")" = 1 ] || fail "$lib: expected exactly one record"
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
