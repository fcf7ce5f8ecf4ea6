/* hooks: what the parts above interpose/ add to its paths. interpose/ is
 * the bottom of the library and includes none of their headers: they fill
 * these in (rr's preload interface is the model: one narrow header).
 *
 * - nw_lifecycle: the watchdog's steps at the process's transitions, one
 *   table the library's watchdog defines (watchdog/lifecycle.c). Bound
 *   when the library is linked, so it holds from the very first NCCL call
 *   (a constructor could run after another library's constructor made
 *   one).
 * - nw_op_hooks: per-op extras on the hot path, each NULL while off and
 *   set once, before recording reaches them, by its enable function: the
 *   caller's native stack (watchdog/opstack.c, NCCLWATCH_STACKS=1) and its
 *   Python call site (pystack/pycall.c). Called with the op's ring ticket;
 *   no lock, no system call, no allocation. */
#ifndef NCCLWATCH_INTERPOSE_HOOKS_H
#define NCCLWATCH_INTERPOSE_HOOKS_H

#include "visibility.h"
#include <stdint.h>

struct nw_lifecycle {
	void (*start)(void);                   /* recording starts: before the first record */
	void (*settle)(void);                  /* exiting, before the CUDA driver's own teardown */
	void (*exit)(void);                    /* the process exits while recording */
	void (*job_left)(const char *jobdir, int kept);  /* leaving its job (kept: our file stays) */
	void (*after_fork)(void);              /* in a fork child */
	void (*reap)(void);                    /* an event pool ran dry: give finished pairs back (evpool.c) */
};
extern const struct nw_lifecycle nw_lifecycle;

typedef void (*nw_op_hook)(uint64_t ticket);
struct nw_op_hooks {
	nw_op_hook opstack;
	nw_op_hook pycall;
	nw_op_hook run;              /* what the hot path calls: the one set, or both in turn */
};
extern NW_HIDDEN struct nw_op_hooks nw_op_hooks;

/* Set a hook (not the hot path; no lock: hooks.c). `run` is stored after
 * the field, sequentially consistent: what the hooks read was set up
 * before. */
void nw_op_hook_set(nw_op_hook *field, nw_op_hook fn);
#define NW_OP_HOOK_SET(field, fn) nw_op_hook_set(&nw_op_hooks.field, (fn))

/* One load and one test while no hook is set. */
static inline void nw_op_hooks_run(uint64_t ticket)
{
	nw_op_hook f = __atomic_load_n(&nw_op_hooks.run, __ATOMIC_ACQUIRE);
	if (__builtin_expect(f != 0, 0))
		f(ticket);
}

#endif
