/* pythreads: see pythreads.h. */
#include "pythreads.h"
#include "cpython.h"
#include "memread.h"

#include <string.h>
#include <unistd.h>

int nw_py_thread_states(struct nw_py_thread *out, int max)
{
	const struct nw_py_layout *L = &nw_py.L;
	uint64_t interp = nw_py_interp();
	uint64_t ts = nw_py_first_tstate(interp);
	uint64_t holder = 0;
	if (L->gil_holder != NW_PY_NO_OFF && L->gil_indirect) {
		int32_t locked = 0;      /* -1: not made yet */
		if (nw_mem_read(interp + L->gil_locked, &locked, sizeof locked) == 0 && locked > 0)
			holder = nw_mem_u64(interp + L->gil_holder);
	} else if (L->gil_holder != NW_PY_NO_OFF && nw_py.runtime) {
		holder = nw_mem_u64(nw_py.runtime + L->gil_holder);
	}
	int n = 0;
	/* The list is changed under us without a lock: bounded, and a cycle stops at max. */
	for (; ts; ts = nw_mem_u64(ts + L->ts_next)) {
		if (n == max) {
			nw_py_threads_cut = 1;
			break;
		}
		struct nw_py_thread *p = &out[n++];
		memset(p, 0, offsetof(struct nw_py_thread, frames));
		p->tstate = ts;
		p->thread_id = nw_mem_u64(ts + L->ts_thread_id);
		nw_py_tie(p);
		if (ts == holder)
			p->flags |= NW_PYT_GIL;
	}
	return n;
}

void nw_py_tie(struct nw_py_thread *p)
{
	uint64_t tid = nw_mem_u64(p->tstate + nw_py.L.ts_native_thread_id);
	/* Verified, never guessed: the tid must be a thread of ours. */
	p->tid = nw_py_tid_listed(tid) ? (uint32_t)tid : 0;
	p->flags &= ~(uint32_t)NW_PYT_MAIN;
	if (p->tid && p->tid == (uint32_t)getpid())
		p->flags |= NW_PYT_MAIN;
}

int nw_py_threads_cut;
