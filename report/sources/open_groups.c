/* open_groups: the threads inside a group they never ended. NCCL
 * launches a group's ops at its outermost ncclGroupEnd; a thread stopped
 * before it (a lock, a host wait) handed nothing of the group to NCCL and
 * issues nothing more for any rank it drives. The reader notes such
 * threads per process (a segment's records, or the ops a summary kept);
 * rank views carry the process's notes, and the rank a thread drives is
 * one whose newest op it issued. */
#include "sources.h"

#include <stdlib.h>

static int cmp_u64p(const void *a, const void *b)
{
	return nw_cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

uint64_t *nw_group_ends(const struct nw_seg_op *recs, size_t n, size_t *nends)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += recs[i].kind == NW_OP_GROUP_END;
	uint64_t *ends = malloc((k ? k : 1) * sizeof *ends);
	if (!ends)
		return NULL;
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (recs[i].kind == NW_OP_GROUP_END)
			ends[k++] = recs[i].seq;
	qsort(ends, k, sizeof *ends, cmp_u64p);
	*nends = k;
	return ends;
}

/* Thread `tid` has been inside its open group since `since_ns`. A thread
 * has one open group at most (its outermost): the first note stands. */
static void note_open_group(struct nw_proc *p, uint32_t tid, uint64_t since_ns)
{
	uint32_t k = 0;
	while (k < p->nopen_groups && p->open_groups[k].tid != tid)
		k++;
	if (k == p->nopen_groups && k < NW_OPEN_GROUPS_MAX)   /* more: those threads' ranks are not joined */
		p->open_groups[p->nopen_groups++] = (struct nw_open_group){ tid, since_ns };
}

int nw_note_open_groups(struct nw_proc *p, const struct nw_seg_op *recs, size_t n)
{
	size_t nstarts = 0;
	for (size_t i = 0; i < n; i++)
		nstarts += recs[i].kind == NW_OP_GROUP_START;
	if (nstarts) {
		size_t nends = 0;
		uint64_t *ends = nw_group_ends(recs, n, &nends);
		if (!ends)
			return -1;
		/* GROUP_START's seq is its group id, as GROUP_END's */
		for (size_t i = 0; i < n; i++)
			if (recs[i].kind == NW_OP_GROUP_START && !bsearch(&recs[i].seq, ends, nends, sizeof *ends, cmp_u64p))
				note_open_group(p, recs[i].tid, recs[i].enqueue_ns);
		free(ends);
	}
	/* a group whose start left the ring: its oldest op kept dates it */
	for (size_t i = 0; i < p->nops; i++)
		if (p->ops[i].state == NW_ST_IN_OPEN_GROUP)
			note_open_group(p, p->ops[i].tid, p->ops[i].enqueue_ns);
	return 0;
}

const struct nw_open_group *nw_open_group_of(const struct nw_proc *p)
{
	if (!p->nops)
		return NULL;
	uint32_t tid = p->ops[p->nops - 1].tid;
	for (uint32_t k = 0; k < p->nopen_groups; k++)
		if (p->open_groups[k].tid == tid)
			return &p->open_groups[k];
	return NULL;
}
