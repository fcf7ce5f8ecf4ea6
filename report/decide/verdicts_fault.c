/* verdicts_fault: GPU_FAULT. A process whose op FAILED with a CUDA error
 * (cuda_error != 0), or one of whose communicators reports an asynchronous
 * error (async_error not ncclSuccess / ncclInProgress), is the culprit; its
 * device and the error are the evidence. Processes that failed the same
 * way (same op, same errors) share one verdict. The ranks that wait for it
 * come from the collective pass (members still inside the op it failed). */
#include "decide.h"

#include <stdlib.h>
#include <string.h>

/* An asynchronous error a comm reports: not ncclSuccess, not
 * ncclInProgress (7: not an error). */
int nw_async_fault(int32_t e)
{
	return e != 0 && e != 7;
}

/* A collective that every other member with a file completed ran to its
 * end: its FAILED state is the sticky error of a later op. */
static int peers_completed(struct nw_jctx *x, const struct nw_seg_op *op)
{
	if (!NW_OP_IS_COLL(op->kind))
		return 0;
	const struct nw_comm_view *v = nw_view_of(x, op->comm_id);
	int others = 0;
	for (int32_t r = 0; v && r < v->nranks; r++) {
		const struct nw_member *m = &v->members[r];
		if (!m->proc || r == op->rank)
			continue;
		if (m->comm->coll_completed < op->seq)
			return 0;
		others++;
	}
	return others > 0;
}

struct fkey {
	uint64_t comm_id, seq;
	uint32_t kind;
	int32_t cuda_error, async_error;
};

struct fgroup {
	struct fkey k;
	struct nw_vwork *w;
	UT_hash_handle hh;
};

/* A process's failed op (FAILED with a CUDA error): the first the peers
 * did not complete; when the peers completed all of them, the first.
 * *before: the FAILED ops skipped for it (the sticky error's, not the
 * fault's). NULL: none. */
static const struct nw_seg_op *fault_op(struct nw_jctx *x, const struct nw_proc *p, size_t *before)
{
	*before = 0;
	for (size_t k = 0; k < p->nops; k++) {
		if (p->ops[k].state != NW_ST_FAILED || p->ops[k].cuda_error == 0)
			continue;
		if (!peers_completed(x, &p->ops[k]))
			return &p->ops[k];
		(*before)++;
	}
	if (*before)   /* all of them look done elsewhere: the first, then */
		for (size_t k = 0; k < p->nops; k++)
			if (p->ops[k].state == NW_ST_FAILED && p->ops[k].cuda_error != 0) {
				*before = 0;
				return &p->ops[k];
			}
	return NULL;
}

/* A process's first comm that reports an async fault (NULL: none). */
static const struct nw_seg_comm *async_comm(const struct nw_proc *p)
{
	for (uint32_t s = 0; s < p->ncomms; s++)
		if (nw_async_fault(p->comms[s].async_error))
			return &p->comms[s];
	return NULL;
}

/* The GPU_FAULT verdict of key k, made at its first process p and added to
 * groups (NULL: out of memory). */
static struct fgroup *fault_group(struct nw_jctx *x, struct fgroup **groups, const struct fkey *k,
                                  const struct nw_proc *p, const struct nw_seg_op *op, const struct nw_seg_comm *c,
                                  const struct nw_seg_comm *ac)
{
	struct fgroup *g;
	struct nw_comm_view *v;
	HASH_FIND(hh, x->job->comms, &k->comm_id, sizeof k->comm_id, v);
	struct nw_vwork *w = nw_verdict_new(x, NW_V_GPU_FAULT, v, (uint16_t)k->kind, k->seq);
	if (!w || !(g = calloc(1, sizeof *g))) {
		x->oom = 1;
		return NULL;
	}
	g->k = *k;
	g->w = w;
	HASH_ADD(hh, *groups, k, sizeof g->k, g);
	if (nw_hash_oom_taken()) {
		free(g);
		x->oom = 1;
		return NULL;
	}
	/* The summary names the first process; the count follows. */
	struct nw_fact f = { .kind = NW_F_FAULT, .proc = p, .op = op, .comm = c, .acomm = ac, .view = v };
	nw_verdict_summary_fact(x, w, &f);
	struct nw_fact h = { .kind = NW_F_FAULT_HINT, .op = op, .comm = c };
	nw_verdict_hint_fact(x, w, &h);
	return g;
}

void nw_rules_fault(struct nw_jctx *x)
{
	struct fgroup *groups = NULL, *g, *gt;
	for (size_t i = 0; i < x->job->nprocs && !x->oom; i++) {
		struct nw_proc *p = x->job->procs[i];
		size_t before;   /* FAILED ops the peers completed: the sticky error's, not the fault's */
		const struct nw_seg_op *op = fault_op(x, p, &before);
		const struct nw_seg_comm *c = op && op->comm_slot < p->ncomms ? &p->comms[op->comm_slot] : NULL;
		const struct nw_seg_comm *ac = async_comm(p);
		if (!op && !ac)
			continue;
		if (!c)
			c = ac;
		struct fkey k;
		memset(&k, 0, sizeof k);
		k.comm_id = op ? op->comm_id : ac->comm_id;
		k.seq = op ? op->seq : 0;
		k.kind = op ? op->kind : 0;
		k.cuda_error = op ? op->cuda_error : 0;
		k.async_error = c ? c->async_error : 0;
		HASH_FIND(hh, groups, &k, sizeof k, g);
		if (!g && !(g = fault_group(x, &groups, &k, p, op, c, ac)))
			break;
		nw_verdict_culprit(x, g->w, p);
		x->pc[i].fault = 1;
		if (g->w->v.nevidence < 16) {
			struct nw_fact f = { .kind = NW_F_FAULT_LINE, .proc = p, .op = op, .comm = c, .n = before };
			nw_verdict_evidence_fact(x, g->w, &f);
		}
	}
	HASH_ITER(hh, groups, g, gt) {
		if (g->w->v.culprits.n > 1) {
			struct nw_fact f = { .kind = NW_F_FAULT_MORE, .n = g->w->v.culprits.n - 1 };
			nw_verdict_summary_fact(x, g->w, &f);
		}
		HASH_DEL(groups, g);
		free(g);
	}
}
