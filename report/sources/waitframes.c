/* waitframes: what the verdict from stacks judges of a Python thread
 * (nw_thread_stack.wait_frames): the native frames under its innermost
 * Python frame, then its Python frames with their full file names. The
 * stacks a reader prints of a Python thread are its Python frames alone
 * (the file's base name), which hide that `loss.item()` waits in
 * cudaStreamSynchronize, or `work.wait()` in c10d's WorkNCCL::wait.
 *
 * Compiled in a format with Python stacks (the py branch's 1.4: thread
 * py_* fields, nw_stack_pyframes); before it, a thread has no Python
 * frames and is judged on its frames. */
#include "sources.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NW_PYT_PYTHON
static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int nw_keep_wait_frames(struct nw_proc *p, const struct nw_segment *seg, struct nw_intern *in)
{
	if (seg->stack_state != NW_STACKS_CAPTURED || !seg->stack)
		return 0;
	int oom = 0;
	for (uint32_t i = 0; i < seg->stack->thread_count && !oom; i++) {
		const struct nw_seg_thread *t = nw_stack_thread(seg, i);
		uint32_t nf = 0, npy = 0;
		const struct nw_seg_pyframe *py = t ? nw_stack_pyframes(seg, i, &npy) : NULL;
		if (!t || !py || !npy || !(t->py_flags & NW_PYT_PYTHON))
			continue;
		struct nw_thread_stack *ts = NULL;
		for (uint32_t k = 0; k < p->nthreads && !ts; k++)
			if (p->threads[k].tid == t->tid)
				ts = &p->threads[k];
		if (!ts)
			continue;
		const struct nw_seg_frame *fr = nw_stack_frames(seg, i, &nf);
		uint32_t under = fr && t->py_native <= nf ? t->py_native : 0, n = under + npy;
		char **tmp = calloc(n, sizeof *tmp);
		if (!tmp)
			return -1;
		for (uint32_t k = 0; k < n && !oom; k++) {
			char text[NW_STACK_MODULE_PATH_LEN + 600];
			if (k < under) {
				const char *sym = fr[k].symbol ? nw_stack_string(seg, fr[k].symbol) : NULL;
				const struct nw_seg_module *m = nw_stack_module(seg, fr[k].module);
				if (sym && sym[0])
					snprintf(text, sizeof text, "%s", sym);
				else if (m)
					snprintf(text, sizeof text, "%s+0x%" PRIx64, m->path[0] ? base_name(m->path) : "<main>",
					         fr[k].module_offset);
				else
					snprintf(text, sizeof text, "??");
			} else {
				const struct nw_seg_pyframe *f = &py[k - under];
				const char *fn = nw_stack_string(seg, f->function), *file = nw_stack_string(seg, f->file);
				snprintf(text, sizeof text, "%s (%s:%d)", fn && *fn ? fn : "??", file && *file ? file : "??",
				         (int)f->line);
			}
			if (!(tmp[k] = nw_intern_str(in, text, strlen(text))))
				oom = 1;
		}
		if (!oom) {
			ts->wait_frames = nw_intern_list(in, tmp, n, &oom);
			ts->nwait_frames = ts->wait_frames ? n : 0;
		}
		free(tmp);
	}
	return oom ? -1 : 0;
}
#endif
