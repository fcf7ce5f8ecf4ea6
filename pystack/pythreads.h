/* pythreads: every Python thread of the main interpreter with its frames,
 * innermost first, tied to its native thread (tid 0: could not be tied).
 * By the method nw_py.method names: the interpreter's dumper (dump.c) or a
 * walk of its states (walk.c). Watchdog only. */
#ifndef NCCLWATCH_PYSTACK_PYTHREADS_H
#define NCCLWATCH_PYSTACK_PYTHREADS_H

#include <stddef.h>
#include <stdint.h>
#include "names.h"
#include "pystack.h"

#define NW_PY_THREADS_MAX 256

struct nw_py_frame_text {
	uint64_t code, instr;    /* 0 when the method gives none */
	int32_t line;
	uint32_t flags;          /* NW_PYF_* */
	char file[NW_PY_STR_LEN];
	char function[NW_PY_STR_LEN];
};

struct nw_py_thread {
	uint64_t tstate;         /* its thread state's address */
	uint64_t thread_id;      /* its pthread_t */
	uint32_t tid;            /* its native thread, 0 unknown */
	uint32_t flags;          /* NW_PYT_GIL, NW_PYT_MAIN */
	char name[64];           /* its Python name, "" unknown */
	uint32_t nframes;        /* frames[] in use (at most NW_PY_THREAD_FRAMES kept) */
	struct nw_py_frame_text frames[NW_PY_THREAD_FRAMES];
};

/* Fill out[0 .. max-1]; the count, or -1 with `err` saying why. */
int nw_py_threads(struct nw_py_thread *out, int max, char *err, size_t errsize);

/* The thread states (address, pthread_t, tid, flags) without frames, as
 * tstate-walk fills them: used by both methods. Count, or -1. */
int nw_py_thread_states(struct nw_py_thread *out, int max);

/* Set p->tid (and NW_PYT_MAIN) from the native thread id in its thread
 * state, 0 when that is not a thread of this process now. */
void nw_py_tie(struct nw_py_thread *p);

/* Set by the last nw_py_threads when it could not list every thread (the
 * dumper lists at most 100; NW_PY_THREADS_MAX). */
extern int nw_py_threads_cut;

/* threadnames.c: fill each thread's `name` with its threading.Thread
 * name (tied by thread_id), left "" when in doubt. */
void nw_py_thread_names(struct nw_py_thread *t, int n);

/* dump.c and walk.c */
int nw_py_threads_dump(struct nw_py_thread *out, int max, char *err, size_t errsize);
int nw_py_threads_walk(struct nw_py_thread *out, int max, char *err, size_t errsize);

#endif
