/* hooks: see hooks.h. The hot path's hooks live here, with interpose/;
 * the parts above set them. */
#include "hooks.h"

struct nw_op_hooks nw_op_hooks;

/* Both hooks set: the caller's native stack, then its Python call site. */
static void run_both(uint64_t ticket)
{
	nw_op_hook f = __atomic_load_n(&nw_op_hooks.opstack, __ATOMIC_ACQUIRE);
	if (f)                            /* one may be set off meanwhile */
		f(ticket);
	f = __atomic_load_n(&nw_op_hooks.pycall, __ATOMIC_ACQUIRE);
	if (f)
		f(ticket);
}

/* No lock (a fork child may set its hooks again, whatever a parent's
 * thread held): `run` is computed from both fields and stored, until the
 * fields read again after the store are the ones it was computed from. The
 * last store to `run` is then a setter's that saw the last fields. */
void nw_op_hook_set(nw_op_hook *field, nw_op_hook fn)
{
	__atomic_store_n(field, fn, __ATOMIC_SEQ_CST);
	for (;;) {
		nw_op_hook a = __atomic_load_n(&nw_op_hooks.opstack, __ATOMIC_SEQ_CST);
		nw_op_hook b = __atomic_load_n(&nw_op_hooks.pycall, __ATOMIC_SEQ_CST);
		__atomic_store_n(&nw_op_hooks.run, a && b ? run_both : a ? a : b, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&nw_op_hooks.opstack, __ATOMIC_SEQ_CST) == a &&
		    __atomic_load_n(&nw_op_hooks.pycall, __ATOMIC_SEQ_CST) == b)
			return;
	}
}
