/* hooks: see hooks.h. The hot path's hooks live here, with interpose/;
 * the parts above set them. */
#include "hooks.h"

struct nw_op_hooks nw_op_hooks;

#include <pthread.h>

static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;

/* Both hooks set: the caller's native stack, then its Python call site. */
static void run_both(uint64_t ticket)
{
	nw_op_hooks.opstack(ticket);
	nw_op_hooks.pycall(ticket);
}

void nw_op_hook_set(nw_op_hook *field, nw_op_hook fn)
{
	pthread_mutex_lock(&hooks_lock);
	__atomic_store_n(field, fn, __ATOMIC_RELEASE);
	nw_op_hook run = nw_op_hooks.opstack && nw_op_hooks.pycall ? run_both
	                 : nw_op_hooks.opstack ? nw_op_hooks.opstack : nw_op_hooks.pycall;
	__atomic_store_n(&nw_op_hooks.run, run, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&hooks_lock);
}
