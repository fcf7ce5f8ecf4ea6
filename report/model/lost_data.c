/* lost_data: what a job's processes could not record (ops, comms and
 * threads dropped, recording stopped), summed into job->lost; the rule that
 * turns it into evidence is decide/lost.c. */
#include "model.h"

int nw_proc_lost(const struct nw_proc *p)
{
	const struct nw_proc_header *h = &p->hdr;
	return h->ops_dropped || h->comms_dropped || h->threads_dropped ||
	       (h->flags & (NW_SEG_F_STOPPED | NW_SEG_F_COMMS_FULL));
}

int nw_job_lost(struct nw_job *job)
{
	struct nw_lost *l = &job->lost;
	for (size_t i = 0; i < job->nprocs; i++) {
		const struct nw_proc *p = job->procs[i];
		if (!nw_proc_lost(p))
			continue;
		const struct nw_proc_header *h = &p->hdr;
		/* the counters are the process's: once, though it has a view per rank */
		if (p->view_of_process == 0) {
			l->nprocs++;
			l->ops += h->ops_dropped;
			l->comms += h->comms_dropped;
			l->threads += h->threads_dropped;
			l->comms_full += (h->flags & NW_SEG_F_COMMS_FULL) != 0;
			l->stopped += (h->flags & NW_SEG_F_STOPPED) != 0;
		}
		if (p->rank >= 0) {
			if (!nw_rankset_has(&l->ranks, p->rank) && nw_rankset_add(&l->ranks, p->rank))
				return -1;
		} else if (l->nunranked++ < NW_LOST_PIDS) {
			l->unranked_pid[l->nunranked - 1] = p->hdr.pid;
		}
	}
	return 0;
}
