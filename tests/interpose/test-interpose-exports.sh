#!/bin/sh
# What libncclwatch.so shows the dynamic loader, checked against the
# sources: it exports exactly the NCCL functions it wraps (the table
# NW_WRAPPED_FUNCTIONS of interpose/real_nccl.h, which the dlsym hook and
# the forwarding use; the NW_EXPORT definitions of interpose/wrap_*.c; the
# version script interpose/libncclwatch.map) plus dlsym and dlvsym, which
# its own code never calls (pystack looks symbols up through libc's dlsym),
# and the CUDA driver functions wrap_cuda.c wraps (its NW_CUDA_WRAPPED
# table and its NW_EXPORT definitions: graph launches),
# and it depends on libc alone: libunwind and the report engine (jansson) are
# loaded at run time with RTLD_LOCAL, never into the global symbol scope
# (test-compat-unwind-scope.sh shows why). The two libraries it loads that
# way: libncclwatch-engine.so exports its one entry point,
# libncclwatch-unwind.so nothing.
. "$NW_ROOT/tests/lib.sh"
[ -f "$NW_LIB" ] || fail "$NW_LIB missing"
dir=$(dirname "$NW_LIB")

# The wrapped-function table, as the compiler sees it.
printf '#include "real_nccl.h"\n#define NW_NAME(n) @nccl##n\nNW_WRAPPED_FUNCTIONS(NW_NAME)\n' |
	${CC:-cc} -E -D_GNU_SOURCE -I"$NW_ROOT/interpose" -I"$NW_ROOT/include" -isystem "$CUDA_HOME/include" -x c - |
	grep -o '@nccl[A-Za-z]*' | tr -d @ | sort -u > "$T/table"
[ "$(wc -l < "$T/table")" -ge 20 ] || fail "could not expand NW_WRAPPED_FUNCTIONS: $(cat "$T/table")"
# The wrappers defined in the sources.
sed -n 's/^NW_EXPORT [a-zA-Z_]* \(nccl[A-Za-z]*\)(.*/\1/p' "$NW_ROOT"/interpose/wrap_*.c | sort -u > "$T/defined"
# The CUDA driver functions wrapped: the table and the definitions.
sed -n 's/^	X([A-Z0-9_]*, \(cu[A-Za-z0-9_]*\), .*/\1/p' "$NW_ROOT/interpose/wrap_cuda.c" | sort -u > "$T/cuda_table"
[ "$(wc -l < "$T/cuda_table")" -ge 10 ] || fail "could not read NW_CUDA_WRAPPED: $(cat "$T/cuda_table")"
sed -n '/);$/d; s/^NW_EXPORT CUresult \(cu[A-Za-z0-9_]*\)(.*/\1/p' "$NW_ROOT/interpose/wrap_cuda.c" |
	sort -u > "$T/cuda_defined"
diff "$T/cuda_table" "$T/cuda_defined" > "$T/d0" || { cat "$T/d0"; fail "the CUDA wrappers defined (>) and NW_CUDA_WRAPPED (<) differ"; }
# The version script's global names.
sed -n '/global:/,/local:/p' "$NW_ROOT/interpose/libncclwatch.map" | grep -v 'global:\|local:' |
	tr ';' '\n' | tr -d ' \t' | grep . | sort -u > "$T/map"
# What the library exports (name without version).
nm -D --defined-only "$NW_LIB" | awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u > "$T/exports"

{ cat "$T/table" "$T/cuda_table"; echo dlsym; echo dlvsym; } | sort -u > "$T/expected"
diff "$T/table" "$T/defined" > "$T/d1" || { cat "$T/d1"; fail "the wrappers defined (<) and the table (>) differ"; }
diff "$T/expected" "$T/map" > "$T/d2" || { cat "$T/d2"; fail "the version script differs from the tables + dlsym, dlvsym"; }
diff "$T/expected" "$T/exports" > "$T/d3" || { cat "$T/d3"; fail "libncclwatch.so's exports differ from the tables + dlsym, dlvsym"; }
echo "exports: $(wc -l < "$T/exports") symbols, the wrapped-function tables (NCCL, CUDA graphs) + dlsym, dlvsym"

# Its dependencies: libc (and, on an older glibc, libdl and libpthread; in
# a sanitizer build, the runtime asked for).
readelf -d "$NW_LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' > "$T/needed"
echo "NEEDED: $(tr '\n' ' ' < "$T/needed")"
san='^$'
[ -n "$NW_SAN" ] && san='^lib(a|t|ub)san\.so\.[0-9]+$'
grep -vE '^(libc\.so\.6|ld-linux-x86-64\.so\.2|libdl\.so\.2|libpthread\.so\.0)$' "$T/needed" | grep -vE "$san" > "$T/extra"
[ -s "$T/extra" ] && fail "libncclwatch.so depends on $(tr '\n' ' ' < "$T/extra")(libunwind and the report engine must be loaded with RTLD_LOCAL at run time)"
# No undefined reference to libunwind or jansson either (it would bind to
# whatever another library brought into the global scope).
nm -D --undefined-only "$NW_LIB" | awk '{ print $2 }' | grep -E '^(_U|unw_|json_)' > "$T/undef"
[ -s "$T/undef" ] && fail "libncclwatch.so refers to $(tr '\n' ' ' < "$T/undef")"

# Its own code never calls its dlsym or dlvsym (they are for the program's
# lookups; pystack's symbol lookups go to libc's, interpose/libc_dl.h): a
# call would be a PLT relocation against the exported name.
readelf -rW "$NW_LIB" | grep -wE 'dlsym|dlvsym' > "$T/selfcalls"
[ -s "$T/selfcalls" ] && { cat "$T/selfcalls"; fail "libncclwatch.so calls its own dlsym/dlvsym hook"; }

# Its siblings.
for f in libncclwatch-engine.so libncclwatch-unwind.so; do
	[ -f "$dir/$f" ] || fail "$dir/$f missing (libncclwatch.so loads it from its own directory)"
done
nm -D --defined-only "$dir/libncclwatch-engine.so" | awk '{ sub(/@.*/, "", $3); print $3 }' > "$T/engine"
assert_eq "$(tr '\n' ' ' < "$T/engine")" "nw_engine_summary_v1 nw_engine_verdict_v2 " "libncclwatch-engine.so's exports"
assert_eq "$(nm -D --defined-only "$dir/libncclwatch-unwind.so" | wc -l)" 0 "libncclwatch-unwind.so's exports"
readelf -d "$dir/libncclwatch-unwind.so" | grep -q 'NEEDED.*\[libunwind-ptrace\.so\.0\]' ||
	fail "libncclwatch-unwind.so does not depend on libunwind-ptrace"
