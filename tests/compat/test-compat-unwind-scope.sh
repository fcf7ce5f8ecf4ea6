#!/bin/sh
# The preload puts no unwinder in the process's global symbol scope: a C++
# library loaded later by dlopen (torch, a pybind11 module, a JAX plugin)
# throws through libgcc_s, exactly as without the preload. A C program
# (throw-probe) makes a 1-rank communicator (the watchdog starts), a dump
# request makes the watchdog capture every thread's stack (so the preload
# has loaded libunwind by then), and only then it dlopens a C++ library
# that throws and catches. The dynamic loader's own account
# (LD_DEBUG=bindings) says where libstdc++'s _Unwind_RaiseException went.
# The preload is named by a relative path (LD_PRELOAD=./libncclwatch.so,
# run from its directory): it still finds libunwind's scope beside it.
. "$NW_ROOT/tests/lib.sh"
# A sanitizer runtime intercepts __cxa_throw itself (and cannot, in a
# program whose libstdc++ comes later by dlopen): the plain build answers.
[ -z "$NW_SAN" ] || skip "C++ throws under a sanitizer runtime are the runtime's"
nw_use_sim
probe="$NW_BUILD/tests/progs/throw-probe"
lib="$NW_BUILD/tests/compat/libnw-throw.so"
[ -x "$probe" ] && [ -f "$lib" ] || fail "build first: $probe, $lib"
export NCCLWATCH_JOB=unwind

# run NAME [ENV=VALUE...]: throw-probe with the loader's bindings logged to
# $T/NAME.ld.PID; its output in $T/NAME.out.
run() {
	name=$1; shift
	rm -f "$T/go"
	nw_spawn env LD_DEBUG=bindings LD_DEBUG_OUTPUT="$T/$name.ld" "$@" \
		"$probe" "$lib" 1000 --nccl "$T/go" > "$T/$name.out" 2>&1
	pid=$NW_PID
	nw_until 60 grep -q '^ready' "$T/$name.out" || { cat "$T/$name.out"; fail "$name: throw-probe never got ready"; }
	if [ "$name" = preload ]; then
		"$NW_CLI" dump --wait 10 "$NCCLWATCH_DIR" > "$T/dump.txt" 2>&1
		assert_grep ': 1 of 1 process answered' "$T/dump.txt"
	fi
	touch "$T/go"
	nw_wait "$pid" 60 || { cat "$T/$name.out"; fail "$name: throw-probe failed"; }
	assert_grep '^caught 1000 in ' "$T/$name.out"
}

# bound NAME: the object libstdc++'s _Unwind_RaiseException was bound to.
bound() {
	cat "$T/$1".ld.* | sed -n "s/.*binding file [^ ]*libstdc++\.so\.6 \[0\] to \([^ ]*\) \[0\]: normal symbol \`_Unwind_RaiseException'.*/\1/p" | sort -u
}

run plain
libdir=$(dirname "$NW_LIB")
cd "$libdir" || fail "cannot cd to $libdir"
run preload LD_PRELOAD="$(nw_preload | sed "s|$NW_LIB|./$(basename "$NW_LIB")|")"
cd "$NW_ROOT" || fail "cannot cd back"

# The preload was really there and really captured stacks (with its
# unwinder loaded) before the C++ library came in.
assert_grep '^libunwind mapped: no$' "$T/plain.out"
assert_grep '^libunwind mapped: yes$' "$T/preload.out"
"$NW_CLI" show "$NCCLWATCH_DIR"/unwind/*.dump.seg > "$T/show.txt" 2>&1 || { cat "$T/show.txt"; fail "no dump to show"; }
assert_grep '^stacks captured ' "$T/show.txt"
assert_grep '^ +#[0-9]+ 0x[0-9a-f]+ main\+0x.*\(throw-probe\+' "$T/show.txt"

plain=$(bound plain)
watched=$(bound preload)
echo "libstdc++'s _Unwind_RaiseException: without the preload $plain, with it $watched"
case "$plain" in
	*/libgcc_s.so.1) ;;
	*) fail "without the preload, _Unwind_RaiseException was bound to '$plain', not libgcc_s" ;;
esac
assert_eq "$watched" "$plain" "the object libstdc++'s _Unwind_RaiseException is bound to under the preload"
