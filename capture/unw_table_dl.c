/* unw_table_dl: see unw_table.h. libncclwatch.so's filler: libunwind
 * loaded with dlopen(RTLD_NOW | RTLD_LOCAL), looked up with libc's own
 * dlsym (ours, dlsym_hook.c, is for the application's lookups).
 *
 * The local and generic libraries are loaded by soname. libunwind-ptrace
 * is reached through libncclwatch-unwind.so, next to libncclwatch.so: an
 * object with no code that names the three libraries as its
 * dependencies, so they share one local scope in which libunwind-ptrace's
 * calls into libunwind-<arch> resolve (RTLD_NOW checks that at load). */
#include "unw_table.h"

#include "../interpose/libc_dl.h"
#include "../interpose/log.h"
#include "../interpose/sibling.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define NW_UNW_SCOPE_LIB "libncclwatch-unwind.so"

struct nw_unw nw_unw;
int nw_unw_ok;

static pthread_once_t nw_unw_once = PTHREAD_ONCE_INIT;

struct entry {
	const char *name;
	void **slot;
	int lib;
	int required;
};

static const char *const lib_names[NW_UNW_NLIBS] = {
	[NW_UNW_LOCAL] = "libunwind.so.8",
	[NW_UNW_GENERIC] = "libunwind-" NW_UNW_STR(UNW_TARGET) ".so.8",
	[NW_UNW_PTRACE] = NW_UNW_SCOPE_LIB,
};

static void load(void)
{
	char why[512];
	void *h[NW_UNW_NLIBS];
	nw_libc_dl_init();
	if (!nw_libc_dlsym) {
		nw_log("thread stacks off: libc's dlsym not found, libunwind cannot be loaded (recording goes on)");
		return;
	}
	/* The scope object first: it loads the other two with it. */
	h[NW_UNW_PTRACE] = nw_dlopen_sibling(NW_UNW_SCOPE_LIB, why, sizeof(why));
	for (int i = 0; i < NW_UNW_NLIBS && h[NW_UNW_PTRACE]; i++) {
		if (i == NW_UNW_PTRACE)
			continue;
		h[i] = nw_libc_dlopen(lib_names[i], RTLD_NOW | RTLD_LOCAL);
		if (!h[i]) {
			const char *e = dlerror();
			snprintf(why, sizeof(why), "%s", e ? e : lib_names[i]);
			h[NW_UNW_PTRACE] = NULL;
		}
	}
	if (!h[NW_UNW_PTRACE]) {
		nw_log("thread stacks off: cannot load libunwind: %s (recording goes on)", why);
		return;
	}
	struct entry entries[] = {
#define NW_UNW_ENTRY(field, type, symbol, lib, req) { symbol, (void **)&nw_unw.field, lib, req },
		NW_UNW_ENTRY_POINTS(NW_UNW_ENTRY)
#undef NW_UNW_ENTRY
	};
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		void *fn = nw_libc_dlsym(h[entries[i].lib], entries[i].name);
		*entries[i].slot = fn;
		if (!fn && entries[i].required) {
			nw_log("thread stacks off: %s lacks %s (recording goes on)", lib_names[entries[i].lib],
			       entries[i].name);
			memset(&nw_unw, 0, sizeof(nw_unw));
			return;
		}
	}
	/* The handles stay open for the life of the process. */
	__atomic_store_n(&nw_unw_ok, 1, __ATOMIC_RELEASE);
}

int nw_unw_load(void)
{
	pthread_once(&nw_unw_once, load);
	return nw_unw_ok;
}
