/* The registry of live handles (streams, events, graphs) of the simulated
 * CUDA driver: a handle is accepted only while it is registered, so a
 * destroyed or foreign handle gets CUDA_ERROR_INVALID_HANDLE instead of a
 * use-after-free. One uthash set keyed by address, one mutex. */
#include <stdlib.h>

#include "sim_cuda.h"

struct registry_entry {
	void *obj;
	enum sim_kind kind;
	UT_hash_handle hh;
};

static pthread_mutex_t registry_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct registry_entry *registry;

void sim_registry_lock(void) { pthread_mutex_lock(&registry_mutex); }
void sim_registry_unlock(void) { pthread_mutex_unlock(&registry_mutex); }

void sim_registry_add(enum sim_kind kind, void *obj)
{
	struct registry_entry *e = calloc(1, sizeof *e);
	if (!e)
		return; /* the handle then reads as invalid: no worse than OOM */
	e->obj = obj;
	e->kind = kind;
	HASH_ADD_PTR(registry, obj, e);
}

static struct registry_entry *registry_find(enum sim_kind kind, void *obj)
{
	struct registry_entry *e;
	HASH_FIND_PTR(registry, &obj, e);
	return e && e->kind == kind ? e : NULL;
}

int sim_registry_has(enum sim_kind kind, void *obj)
{
	return registry_find(kind, obj) != NULL;
}

int sim_registry_remove(enum sim_kind kind, void *obj)
{
	struct registry_entry *e = registry_find(kind, obj);
	if (!e)
		return 0;
	HASH_DEL(registry, e);
	free(e);
	return 1;
}

/* After fork() only the forking thread exists: the parent's handles are
 * meaningless in the child. The objects themselves are leaked on purpose
 * (their locks may be held by threads that no longer exist). */
void sim_registry_reset(void)
{
	pthread_mutex_init(&registry_mutex, NULL);
	struct registry_entry *e, *tmp;
	HASH_ITER(hh, registry, e, tmp) {
		HASH_DEL(registry, e);
		free(e);
	}
}
