/* process_view: read-only questions about the job's processes and
 * communicators that the rules ask: which comm ranks have no file, a
 * member's ops and its collective #n, a peer table entry, the op a stream
 * is busy with, and where a process is ("in AllReduce #5 on comm X
 * (STARTED for 2.0 s); main thread: ..."). */
#include "decide.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- communicator helpers ---- */

int nw_view_identity(const struct nw_comm_view *v)
{
	int any = 0;
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_proc *p = v->members[r].proc;
		if (!p)
			continue;
		if (p->rank != r)
			return 0;
		any = 1;
	}
	return any;
}

uint32_t nw_member_slot(const struct nw_member *m)
{
	return (uint32_t)(m->comm - m->proc->comms);
}

void nw_member_ops(struct nw_jctx *x, const struct nw_member *m, uint32_t **idx, size_t *n)
{
	const struct nw_pctx *pc = &x->pc[m->proc->job_index];
	uint32_t s = nw_member_slot(m);
	*idx = pc->order + pc->slot_off[s];
	*n = pc->slot_off[s + 1] - pc->slot_off[s];
}

const struct nw_seg_op *nw_member_coll(struct nw_jctx *x, const struct nw_member *m, uint64_t seq)
{
	uint32_t *idx;
	size_t n;
	nw_member_ops(x, m, &idx, &n);
	const struct nw_seg_op *ops = m->proc->ops, *found = NULL;
	/* Collectives come first in a slot's range, sorted by seq. */
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct nw_seg_op *o = &ops[idx[mid]];
		if (nw_op_class(o->kind) == 0 && o->seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n; lo++) {
		const struct nw_seg_op *o = &ops[idx[lo]];
		if (nw_op_class(o->kind) != 0 || o->seq != seq)
			break;
		if (o->state != NW_ST_DISCARDED)
			found = o;   /* the newest ticket of that seq */
	}
	return found;
}

const struct nw_seg_peer *nw_proc_peer(const struct nw_proc *p, uint32_t slot, int32_t peer)
{
	size_t lo = 0, hi = p->npeers;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct nw_seg_peer *e = &p->peers[mid];
		if (e->comm_slot < slot || (e->comm_slot == slot && e->peer < peer))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->npeers && p->peers[lo].comm_slot == slot && p->peers[lo].peer == peer)
		return &p->peers[lo];
	return NULL;
}

/* ---- where a process is ---- */

const struct nw_seg_op *nw_previous_work(const struct nw_proc *p, const struct nw_seg_op *op)
{
	const struct nw_seg_op *found = NULL;
	for (size_t i = 0; i < p->nops; i++) {
		const struct nw_seg_op *o = &p->ops[i];
		if (o == op || o->commit >= op->commit)
			break;
		if (o->stream == op->stream &&
		    (NW_OP_IS_COLL(o->kind) || NW_OP_IS_P2P(o->kind) || o->kind == NW_OP_GRAPH_LAUNCH) &&
		    (nw_op_pending(o->state) || o->state == NW_ST_FAILED) &&
		    !(o->group_id && o->group_id == op->group_id))
			found = o;
	}
	return found;
}

const struct nw_comm_view *nw_view_of(struct nw_jctx *x, uint64_t id)
{
	struct nw_comm_view *v;
	HASH_FIND(hh, x->job->comms, &id, sizeof id, v);
	return v;
}

const char *nw_op_site(const struct nw_proc *p, const struct nw_seg_op *op)
{
	if (!p->op_site || op < p->ops || op >= p->ops + p->nops)
		return NULL;
	return p->op_site[op - p->ops];
}

const struct nw_thread_stack *nw_stack_host_fn(const struct nw_proc *p)
{
	for (uint32_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].host_fn)
			return &p->threads[i];
	return NULL;
}
