#!/bin/sh
# libncclwatch.so on the real NCCL of the toolkit (2.28.9) and on real NCCL
# of other versions (PyPI wheels fetched by `make deps`): ncclGetVersion and
# ncclGetUniqueId unchanged, ncclCommInitRank returns exactly the real error
# (no GPU here), and the segment shows the comm's init entered and failed
# with that code. The probe program is the one the foundations test runs.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
probe="$NW_BUILD/tests/realnccl/nccl-probe"
[ -x "$probe" ] || fail "$probe not built"

# check_lib DIR: the probe on DIR/libnccl.so.2 with and without the preload.
check_lib() {
	libdir=$1; tag=$(echo "$libdir" | tr -c 'A-Za-z0-9\n' _)
	note "real NCCL in $libdir"
	LD_LIBRARY_PATH="$libdir" "$probe" > "$T/$tag.plain" 2>&1
	plain_status=$?
	if grep -q 'error while loading shared libraries' "$T/$tag.plain"; then
		cat "$T/$tag.plain"
		skip "the probe cannot load with $libdir here (this build's libraries)"
	fi
	LD_LIBRARY_PATH="$libdir" LD_PRELOAD="$(nw_preload)" NCCLWATCH_KEEP=1 NCCLWATCH_JOB="$tag" \
		"$probe" > "$T/$tag.watched" 2>&1
	watched_status=$?
	cat "$T/$tag.watched"
	assert_eq "$watched_status" "$plain_status" "exit status under the preload"
	# Without a CUDA driver (no GPU here) the watchdog says once that GPU
	# completion is not tracked; apart from that line the output is the same.
	untracked=$(grep -c 'ncclwatch: .*GPU completion is not tracked' "$T/$tag.watched")
	[ "$untracked" -le 1 ] || fail "'not tracked' said $untracked times"
	grep -v '^ncclwatch: .*GPU completion is not tracked' "$T/$tag.watched" > "$T/$tag.watched.rest"
	diff "$T/$tag.plain" "$T/$tag.watched.rest" || fail "output differs under the preload"
	assert_no_grep 'ncclwatch:' "$T/$tag.watched.rest"
	version=$(sed -n 's/^version //p' "$T/$tag.plain")
	assert_grep '^uniqueid 0 ' "$T/$tag.watched"
	init=$(sed -n 's/^init \([0-9]*\) .*/\1/p' "$T/$tag.plain")
	[ -n "$init" ] && [ "$init" != 0 ] || fail "expected ncclCommInitRank to fail without a GPU"

	seg=$(segments "$NCCLWATCH_DIR/$tag")
	assert_eq "$(echo "$seg" | grep -c .)" 1 "segment files"
	show "$seg" > "$T/$tag.show"
	assert_grep "^  nccl_lib +$libdir/libnccl.so.2" "$T/$tag.show"
	major=$((version / 10000)); minor=$((version / 100 % 100)); patch=$((version % 100))
	assert_grep "^  nccl +$major\\.$minor\\.$patch\$" "$T/$tag.show"
	[ "$untracked" = 0 ] || assert_grep '^  tracking +no-driver$' "$T/$tag.show"
	comm=$(grep '^  comm 0 ' "$T/$tag.show")
	echo "$comm" | grep -Eq 'state=INIT_FAILED .*init_result=ncclUnhandledCudaError' \
		|| fail "comm not INIT_FAILED with the real error: $comm"
	op_lines "$seg" > "$T/$tag.ops"
	assert_eq "$(grep -c . "$T/$tag.ops")" 1 "op records"
	assert_grep '^ CommInit rank=0/1 seq=0 .* state=INIT_FAILED result=ncclUnhandledCudaError ' "$T/$tag.ops"
}

[ -e "$NW_REAL_NCCL/libnccl.so.2" ] || skip "no real NCCL at $NW_REAL_NCCL"
check_lib "$NW_REAL_NCCL"
assert_grep '^version 22809$' "$T/$(echo "$NW_REAL_NCCL" | tr -c 'A-Za-z0-9\n' _).watched"

# Other versions, if `make deps` could fetch them (it needs the network).
others=0
for lib in "$NW_WHEELS"/*/libnccl.so.2; do
	[ -e "$lib" ] || continue
	check_lib "$(dirname "$lib")"
	others=$((others + 1))
done
note "checked $others other NCCL versions from $NW_WHEELS"

# A function the loaded NCCL lacks (ncclCommShrink is newer than 2.18):
# our wrapper says so once and returns ncclSystemError, never crashes.
old=$(ls -d "$NW_WHEELS"/2.18*/ 2>/dev/null | head -n 1)
if [ -n "$old" ] && [ -e "$old/libnccl.so.2" ]; then
	note "a function missing from NCCL $(basename "$old")"
	cat > "$T/missing.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <nccl.h>
int main(void)
{
	if (!dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL)) return 3;
	__typeof__(ncclCommShrink) *shrink = (__typeof__(ncclCommShrink) *)dlsym(RTLD_DEFAULT, "ncclCommShrink");
	if (!shrink) { printf("no symbol\n"); return 0; }
	ncclComm_t out;
	int a = shrink(NULL, NULL, 0, &out, NULL, 0), b = shrink(NULL, NULL, 0, &out, NULL, 0);
	printf("shrink %d %d\n", a, b);
	return 0;
}
C
	${CC:-gcc} -isystem "$CUDA_HOME/include" -o "$T/missing" "$T/missing.c" -ldl || fail "cannot build the probe"
	LD_LIBRARY_PATH="${old%/}" LD_PRELOAD="$(nw_preload)" "$T/missing" > "$T/missing.out" 2>&1
	cat "$T/missing.out"
	assert_grep '^shrink 2 2$' "$T/missing.out"
	assert_eq "$(grep -c 'ncclwatch: ncclCommShrink: not found' "$T/missing.out")" 1 "messages"
fi
