/* launch_only: what a position that is a launch count (NW_CAP_LAUNCH_ONLY,
 * NCCL RAS) can and cannot say of a rank behind the others (decide.h,
 * nw_launch_hidden_wait; docs/ras.md, "Behind in counts is not always the
 * culprit"). */
#include "decide.h"

int nw_launch_hidden_wait(const struct nw_proc *p, uint64_t comm_id, uint16_t kind, uint64_t launches,
                          const char **entry)
{
	*entry = NULL;
	if (!p || !(p->caps & NW_CAP_LAUNCH_ONLY) || (p->caps & NW_CAP_SENDRECV))
		return 0;
	int64_t n = nw_proc_launches(p, comm_id, kind);
	const struct nw_thread_stack *t = nw_main_thread(p);
	if (n < 0 || (uint64_t)n >= launches || !t || !t->nframes)
		return 0;
	/* a thread that drives several ranks (the main thread of a process of
	 * several ranks kept by each of its views: rank_split.c) launches for
	 * all of them, and a launch does not wait for a peer: a rank of it
	 * behind is one it did not launch for, and where it waits may be
	 * another rank's op */
	if (p->views_in_process > 1 && (int64_t)t->tid == p->hdr.pid)
		return 0;
	/* inside the very call of that collective: it has not launched it yet */
	return nw_stack_waits(t, entry) != NW_FC_OTHER && !nw_entry_calls(*entry, kind);
}
