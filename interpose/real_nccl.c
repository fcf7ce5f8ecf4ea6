/* real_nccl: fills the table of real NCCL entry points (see real_nccl.h). */
#include "real_nccl.h"

#include "libc_dl.h"
#include "log.h"
#include "thread.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nw_real_table nw_real;
atomic_int nw_real_ready;

static const char *const nw_real_names[NW_REAL_COUNT] = {
#define NW_REAL_NAME(n) #n,
	NW_WRAPPED_FUNCTIONS(NW_REAL_NAME)
	NW_HELPER_FUNCTIONS(NW_REAL_NAME)
};

static pthread_once_t nw_real_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t nw_real_lock = PTHREAD_MUTEX_INITIALIZER;
static void *nw_adopted_handle;       /* a libnccl handle from the dlsym hook */
static char nw_real_path[512];

static void **nw_real_slot(int i)
{
	return (void **)&nw_real + i;     /* the table is an array of pointers */
}
_Static_assert(sizeof(struct nw_real_table) == NW_REAL_COUNT * sizeof(void *), "table layout");

static void *lookup_in(void *handle, const char *suffix)
{
	char name[64];
	snprintf(name, sizeof(name), "pnccl%s", suffix);
	void *f = nw_libc_dlsym(handle, name);
	if (!f) {
		snprintf(name, sizeof(name), "nccl%s", suffix);
		f = nw_libc_dlsym(handle, name);
	}
	return f;
}

static void *lookup_default(const char *suffix)
{
	char name[64];
	void *adopted = __atomic_load_n(&nw_adopted_handle, __ATOMIC_ACQUIRE);
	void *f = adopted ? lookup_in(adopted, suffix) : NULL;
	if (f)
		return f;
	snprintf(name, sizeof(name), "pnccl%s", suffix);
	if ((f = nw_libc_dlsym(RTLD_DEFAULT, name)))
		return f;
	snprintf(name, sizeof(name), "nccl%s", suffix);
	if ((f = nw_libc_dlsym(RTLD_NEXT, name)))
		return f;
	const char *lib = getenv("NCCLWATCH_NCCL_LIB");
	void *h = dlopen(lib && *lib ? lib : "libnccl.so.2", RTLD_NOLOAD | RTLD_LAZY);
	if (!h)
		return NULL;
	f = lookup_in(h, suffix);
	dlclose(h);                        /* NOLOAD took a reference; the library stays */
	return f;
}

/* Fill every missing entry; called with nw_real_lock held. */
static void fill_missing(void)
{
	nw_libc_dl_init();
	if (!nw_libc_dlsym) {
		NW_LOG_ONCE("cannot find libc's dlsym; NCCL calls will fail");
		return;
	}
	for (int i = 0; i < NW_REAL_COUNT; i++)
		if (!*nw_real_slot(i))
			__atomic_store_n(nw_real_slot(i), lookup_default(nw_real_names[i]), __ATOMIC_RELEASE);
	if (!nw_real_path[0]) {
		Dl_info info;
		void *any = nw_real.AllReduce ? (void *)nw_real.AllReduce : (void *)nw_real.GetVersion;
		if (any && dladdr(any, &info) && info.dli_fname)
			snprintf(nw_real_path, sizeof(nw_real_path), "%s", info.dli_fname);
	}
}

static void resolve_once(void)
{
	int saved = nw_tls.inside;
	nw_tls.inside = 1;                 /* dlopen may run constructors that call NCCL */
	pthread_mutex_lock(&nw_real_lock);
	fill_missing();
	pthread_mutex_unlock(&nw_real_lock);
	nw_tls.inside = saved;
	atomic_store_explicit(&nw_real_ready, 1, memory_order_release);
}

void nw_real_resolve(void)
{
	pthread_once(&nw_real_once, resolve_once);
}

void nw_real_adopt_handle(void *handle)
{
	void *none = NULL;
	if (!__atomic_compare_exchange_n(&nw_adopted_handle, &none, handle, 0,
	                                 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;                        /* one adopted library is enough */
	if (atomic_load_explicit(&nw_real_ready, memory_order_acquire)) {
		pthread_mutex_lock(&nw_real_lock);
		fill_missing();
		pthread_mutex_unlock(&nw_real_lock);
	}
	nw_real_resolve();
}

ncclResult_t nw_real_missing(enum nw_real_index which, const char *name)
{
	static atomic_uchar said[NW_REAL_COUNT];
	if (which < NW_REAL_COUNT && !atomic_exchange(&said[which], 1))
		nw_log("%s: not found in the real NCCL library (%s); returning ncclSystemError",
		       name, nw_real_path[0] ? nw_real_path : "no libnccl loaded");
	return ncclSystemError;
}

const char *nw_real_library_path(void)
{
	return nw_real_path;
}
