/* unw_table: the libunwind entry points ncclwatch calls, through one table.
 *
 * libncclwatch.so must put nothing of libunwind into the process's global
 * symbol scope: libunwind.so.8 defines _Unwind_RaiseException and the rest
 * of the C++ unwinding ABI, and a libstdc++ loaded after it (torch, a
 * pybind11 module) would bind its throws to libunwind's compatibility
 * layer instead of libgcc_s (ten times slower, and a different unwinder).
 * So the preload links no libunwind: unw_table_dl.c loads the libraries
 * with dlopen(RTLD_LOCAL) once, at the first NCCL call (never in a signal
 * handler), and fills this table with libc's own dlsym. The CLI and test
 * programs, which are not preloaded, link libunwind as usual and fill the
 * same table from the linked functions (unw_table_linked.c): one table,
 * one set of callers.
 *
 * Every type comes from the real headers. libunwind.h names its functions
 * by macros (unw_init_local is _ULx86_64_init_local with UNW_LOCAL_ONLY,
 * _Ux86_64_init_local without): this header sees the generic names, whose
 * prototypes the local ones share, and each entry says which symbol and
 * which library it really is. */
#ifndef NCCLWATCH_CAPTURE_UNW_TABLE_H
#define NCCLWATCH_CAPTURE_UNW_TABLE_H

#ifdef UNW_LOCAL_ONLY
#error "unw_table.h declares generic and local entry points: include it without UNW_LOCAL_ONLY"
#endif
#include <libunwind-ptrace.h>

#define NW_UNW_STR_(x) #x
#define NW_UNW_STR(x) NW_UNW_STR_(x)
/* "_ULx86_64_step" (local, libunwind.so.8), "_Ux86_64_step" (generic). */
#define NW_UNW_LOCAL_NAME(fn) "_UL" NW_UNW_STR(UNW_TARGET) "_" #fn
#define NW_UNW_GENERIC_NAME(fn) "_U" NW_UNW_STR(UNW_TARGET) "_" #fn

/* The libraries. LOCAL: libunwind.so.8, this process unwinding itself (the
 * capture signal's handler, the watchdog's own stack, per-op stacks, the
 * symbolizer). GENERIC: libunwind-<arch>.so.8, the remote interface over
 * the capture core's accessors. PTRACE: libunwind-ptrace.so.0, its unwind
 * table lookup (loaded through libncclwatch-unwind.so: libunwind-ptrace
 * calls into libunwind-<arch> without naming it among its dependencies, so
 * alone in a local scope it cannot be loaded). */
enum { NW_UNW_LOCAL, NW_UNW_GENERIC, NW_UNW_PTRACE, NW_UNW_NLIBS };

/* X(field, type, symbol, library, required). Without a required entry
 * there is no table at all; an optional one only turns its feature off
 * (per-op stacks without unw_backtrace, the symbolizer's .symtab lookup
 * without the local accessors). */
#define NW_UNW_ENTRY_POINTS(X) \
	X(getcontext, __typeof__(unw_tdep_getcontext), NW_UNW_GENERIC_NAME(getcontext), NW_UNW_LOCAL, 1) \
	X(init_local, __typeof__(unw_init_local), NW_UNW_LOCAL_NAME(init_local), NW_UNW_LOCAL, 1) \
	X(local_step, __typeof__(unw_step), NW_UNW_LOCAL_NAME(step), NW_UNW_LOCAL, 1) \
	X(local_get_reg, __typeof__(unw_get_reg), NW_UNW_LOCAL_NAME(get_reg), NW_UNW_LOCAL, 1) \
	X(backtrace, __typeof__(unw_backtrace), "unw_backtrace", NW_UNW_LOCAL, 0) \
	X(local_addr_space, __typeof__(unw_local_addr_space), NW_UNW_LOCAL_NAME(local_addr_space), NW_UNW_LOCAL, 0) \
	X(local_get_accessors, __typeof__(unw_get_accessors), NW_UNW_GENERIC_NAME(get_accessors), NW_UNW_LOCAL, 0) \
	X(create_addr_space, __typeof__(unw_create_addr_space), NW_UNW_GENERIC_NAME(create_addr_space), NW_UNW_GENERIC, 1) \
	X(destroy_addr_space, __typeof__(unw_destroy_addr_space), NW_UNW_GENERIC_NAME(destroy_addr_space), NW_UNW_GENERIC, 1) \
	X(set_caching_policy, __typeof__(unw_set_caching_policy), NW_UNW_GENERIC_NAME(set_caching_policy), NW_UNW_GENERIC, 1) \
	X(flush_cache, __typeof__(unw_flush_cache), NW_UNW_GENERIC_NAME(flush_cache), NW_UNW_GENERIC, 1) \
	X(init_remote, __typeof__(unw_init_remote), NW_UNW_GENERIC_NAME(init_remote), NW_UNW_GENERIC, 1) \
	X(step, __typeof__(unw_step), NW_UNW_GENERIC_NAME(step), NW_UNW_GENERIC, 1) \
	X(get_reg, __typeof__(unw_get_reg), NW_UNW_GENERIC_NAME(get_reg), NW_UNW_GENERIC, 1) \
	X(get_proc_info, __typeof__(unw_get_proc_info), NW_UNW_GENERIC_NAME(get_proc_info), NW_UNW_GENERIC, 1) \
	X(upt_create, __typeof__(_UPT_create), "_UPT_create", NW_UNW_PTRACE, 1) \
	X(upt_destroy, __typeof__(_UPT_destroy), "_UPT_destroy", NW_UNW_PTRACE, 1) \
	X(upt_find_proc_info, __typeof__(_UPT_find_proc_info), "_UPT_find_proc_info", NW_UNW_PTRACE, 1) \
	X(upt_put_unwind_info, __typeof__(_UPT_put_unwind_info), "_UPT_put_unwind_info", NW_UNW_PTRACE, 1) \
	X(upt_get_proc_name, __typeof__(_UPT_get_proc_name), "_UPT_get_proc_name", NW_UNW_PTRACE, 1)

struct nw_unw {
#define NW_UNW_FIELD(field, type, symbol, lib, required) type *field;
	NW_UNW_ENTRY_POINTS(NW_UNW_FIELD)
#undef NW_UNW_FIELD
};

/* The table, valid when nw_unw_load() returned 1. */
extern struct nw_unw nw_unw;

/* Whether nw_unw_load() succeeded (no loading): what a signal handler or
 * the hot path may test. */
extern int nw_unw_ok;

/* Fill the table once (thread-safe, never from a signal handler). 1: every
 * required entry is there; 0: none (the preload says once, "ncclwatch:
 * ...", why: its thread stacks are off, recording goes on). */
int nw_unw_load(void);

#endif
