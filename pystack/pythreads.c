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

#define TIE_ATTEMPTS 3

/* Thread states that are being born or buried are not threads to report,
 * and two states must never share a native thread:
 * - CPython 3.11 makes a new thread's state in the thread that starts it,
 *   with the starter's tid, and puts the new thread's own tid in only once
 *   it runs: until then two states carry the starter's tid. The one with
 *   frames is the starter's; one without is the unborn thread's. Two with
 *   frames are left untied (never guessed).
 * - A state with no frames and no tie is a thread starting or ending (or a
 *   state read as it was freed): it has no stack to lose, so it is dropped
 *   instead of being counted as "not tied".
 * Returns the new count; *unsettled counts the states with frames left
 * without a tie. */
static int settle_ties(struct nw_py_thread *t, int n, int *unsettled)
{
	for (int i = 0; i < n; i++) {
		if (!t[i].tid)
			continue;
		for (int j = i + 1; j < n; j++) {
			if (t[j].tid != t[i].tid)
				continue;
			if (!t[j].nframes)
				t[j].tid = 0;
			else if (!t[i].nframes)
				t[i].tid = 0;
			else
				t[i].tid = t[j].tid = 0;
			if (!t[i].tid)
				break;
		}
	}
	int kept = 0;
	*unsettled = 0;
	for (int i = 0; i < n; i++) {
		if (!t[i].tid && !t[i].nframes)
			continue;
		*unsettled += !t[i].tid;
		if (kept != i)
			memcpy(&t[kept], &t[i], sizeof t[i]);
		kept++;
	}
	return kept;
}

int nw_py_threads(struct nw_py_thread *out, int max, char *err, size_t errsize)
{
	/* Read without the GIL while threads start and end: a thread that
	 * started, ended or reused a freed state's memory as we read can leave
	 * a state with frames and no tie (or two on one tid). That is a torn
	 * read, not a fact, so it is read again; a stuck process reads the same
	 * twice. The last read stands, its untied states counted in the note. */
	int n = -1;
	for (int attempt = 0; attempt < TIE_ATTEMPTS; attempt++) {
		int unsettled = 0;
		nw_py_threads_cut = 0;
		n = nw_py.method == NW_PY_DUMP_TRACEBACK ? nw_py_threads_dump(out, max, err, errsize)
		                                         : nw_py_threads_walk(out, max, err, errsize);
		if (n <= 0)
			break;
		n = settle_ties(out, n, &unsettled);
		if (!unsettled)
			break;
	}
	nw_py_thread_names(out, n);
	return n;
}
