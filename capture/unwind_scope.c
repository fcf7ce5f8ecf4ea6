/* unwind_scope: libncclwatch-unwind.so, a shared object with no code of its
 * own (capture/part.mk links it against libunwind-ptrace, libunwind-<arch>
 * and libunwind). libncclwatch.so dlopens it with RTLD_LOCAL
 * (unw_table_dl.c): its dependencies then form one local scope, in which
 * libunwind-ptrace's calls into libunwind-<arch>, a library it does not
 * name as a dependency, resolve, and none of them enters the process's
 * global symbol scope. */
const char nw_unwind_scope[] __attribute__((visibility("hidden"))) = "ncclwatch: libunwind's local scope";
