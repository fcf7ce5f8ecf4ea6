/* job_ranks: questions about a job's ranks and the processes that drive
 * them (a process of several ranks is several views in job->procs,
 * sources/rank_split.c). */
#include "model.h"

#include <stdint.h>

/* procs are sorted by rank: a binary search. */
size_t nw_proc_by_rank(const struct nw_job *job, int32_t rank)
{
	size_t lo = 0, hi = job->nprocs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((uint32_t)job->procs[mid]->rank < (uint32_t)rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < job->nprocs && job->procs[lo]->rank == rank ? lo : job->nprocs;
}

static int has_pending(const struct nw_proc *p, uint32_t tid)
{
	for (size_t i = 0; i < p->nops; i++)
		if (nw_op_pending(p->ops[i].state) && (!tid || p->ops[i].tid == tid))
			return 1;
	return 0;
}

int nw_sibling_pending(const struct nw_job *job, const struct nw_proc *p, uint32_t tid)
{
	if (p->views_in_process < 2 || has_pending(p, 0))
		return 0;
	for (size_t i = 0; i < job->nprocs; i++) {
		const struct nw_proc *q = job->procs[i];
		if (q != p && nw_same_process(p, q) && has_pending(q, tid))
			return 1;
	}
	return 0;
}

size_t nw_job_process_count(const struct nw_job *job)
{
	size_t n = 0;
	for (size_t i = 0; i < job->nprocs; i++)
		n += job->procs[i]->view_of_process == 0;
	return n;
}
