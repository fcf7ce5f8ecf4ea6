/* walk: Python thread stacks from the interpreter's thread and frame
 * states, every read fault-proof (CPython 3.13+, where the layout comes
 * from _Py_DebugOffsets; on 3.11 and 3.12 from the tables of cpython.c, the
 * default). */
#include "pythreads.h"
#include "cpython.h"
#include "memread.h"

#include <stdio.h>
#include <string.h>

#define WALK_FRAMES_MAX 1024     /* a frame chain longer than this is a cycle */

int nw_py_threads_walk(struct nw_py_thread *out, int max, char *err, size_t errsize)
{
	const struct nw_py_layout *L = &nw_py.L;
	int n = nw_py_thread_states(out, max);
	if (n <= 0) {
		snprintf(err, errsize, "no thread state");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		struct nw_py_thread *p = &out[i];
		uint64_t f = nw_py_current_frame(p->tstate);
		uint32_t kept = 0;
		for (int k = 0; f && k < WALK_FRAMES_MAX; k++, f = nw_mem_u64(f + L->fr_previous)) {
			uint64_t code = nw_mem_u64(f + L->fr_code);
			uint64_t instr = nw_mem_u64(f + L->fr_instr);
			if (!code || nw_py_frame_hidden(f, code, instr))
				continue;
			if (kept == NW_PY_THREAD_FRAMES) {
				p->flags |= NW_PYT_TRUNCATED;
				break;
			}
			struct nw_py_frame_text *t = &p->frames[kept++];
			struct nw_py_name nm;
			memset(t, 0, sizeof *t);
			t->code = code;
			t->instr = instr;
			if (nw_py_name_ref(code, instr, &nm) == 0) {
				memcpy(t->file, nm.file, sizeof t->file);
				memcpy(t->function, nm.function, sizeof t->function);
				t->line = nm.line;
			} else {
				t->flags = NW_PYF_UNREAD;
			}
		}
		p->nframes = kept;
		/* Tied again after its frames were read: CPython 3.11 gives a new
		 * thread's state its starter's tid until the thread runs, so a
		 * thread that started while we read has its own tid only now. */
		nw_py_tie(p);
	}
	return n;
}
