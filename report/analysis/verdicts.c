/* verdicts: the per-job pass. Indexes each process's kept ops, runs the
 * rule files in order (faults, communicator creation, collectives,
 * point-to-point: each adds verdicts and wait-for edges), freezes the
 * wait-for graph, derives the verdicts that need it (deadlock cycles,
 * blocked streams, who waits for whom), falls back to IDLE or HEALTHY, and
 * ranks the verdicts: by kind (highest first), then by the number of ranks
 * concerned.
 *
 * `waiting` of a verdict = the processes from which one of its blamed
 * nodes is reachable in the wait-for graph (they wait for its culprits,
 * directly or through others), plus those the rule itself named, minus
 * its culprits. */
#include "analysis_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pass ---- */

static int cmp_order(const void *a, const void *b, void *arg)
{
	const struct nw_proc *p = arg;
	const struct nw_seg_op *x = &p->ops[*(const uint32_t *)a], *y = &p->ops[*(const uint32_t *)b];
	uint32_t sx = x->comm_slot < p->ncomms ? x->comm_slot : p->ncomms;
	uint32_t sy = y->comm_slot < p->ncomms ? y->comm_slot : p->ncomms;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	int cx = nw_op_class(x->kind), cy = nw_op_class(y->kind);
	if (cx != cy)
		return cx < cy ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return nw_cmp_u64(x->commit, y->commit);
}

static int index_proc(struct nw_pctx *pc, struct nw_proc *p)
{
	pc->p = p;
	pc->order = malloc((p->nops ? p->nops : 1) * sizeof *pc->order);
	pc->slot_off = calloc((size_t)p->ncomms + 2, sizeof *pc->slot_off);
	if (!pc->order || !pc->slot_off)
		return -1;
	for (size_t i = 0; i < p->nops; i++)
		pc->order[i] = (uint32_t)i;
	qsort_r(pc->order, p->nops, sizeof *pc->order, cmp_order, p);
	for (size_t i = 0; i < p->nops; i++) {
		uint32_t s = p->ops[i].comm_slot < p->ncomms ? p->ops[i].comm_slot : p->ncomms;
		pc->slot_off[s + 1]++;
	}
	for (uint32_t s = 0; s <= p->ncomms; s++)
		pc->slot_off[s + 1] += pc->slot_off[s];
	return 0;
}

/* The index of the process with global rank `rank` (procs are sorted by
 * rank), or nprocs. */
static size_t proc_by_rank(const struct nw_job *job, int32_t rank)
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

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

/* Waiting sets from the graph; `explained` marks every process some
 * verdict names (culprit or waiting). */
static int fill_waiting(struct nw_jctx *x, uint8_t *explained)
{
	struct nw_graph *g = &x->g;
	uint32_t *reached = malloc(((size_t)g->nnodes + 1) * sizeof *reached);
	int32_t *ranks = malloc((2 * (size_t)x->job->nprocs + 1) * sizeof *ranks);   /* reached + named */
	if (!reached || !ranks) {
		free(reached);
		free(ranks);
		return -1;
	}
	for (size_t i = 0; i < x->nvw && !x->oom; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped)
			continue;
		size_t n = 0, nr = w->nblame ? nw_graph_reaching(g, w->blame, w->nblame, reached) : 0;
		for (size_t k = 0; k < nr; k++) {
			if (reached[k] >= g->nprocs)
				continue;   /* a junction */
			const struct nw_proc *p = x->job->procs[reached[k]];
			if (p->rank >= 0 && !nw_rankset_has(&w->v.culprits, p->rank))
				ranks[n++] = p->rank;
		}
		/* Merge with the rule's own waiting set, drop culprits. */
		for (uint32_t k = 0; k < w->v.waiting.n; k++)
			if (!nw_rankset_has(&w->v.culprits, w->v.waiting.v[k]))
				ranks[n++] = w->v.waiting.v[k];
		qsort(ranks, n, sizeof *ranks, cmp_i32);
		nw_rankset_clear(&w->v.waiting);
		for (size_t k = 0; k < n; k++)
			if (k == 0 || ranks[k] != ranks[k - 1])
				nw_set_add(x, &w->v.waiting, ranks[k]);
	}
	free(ranks);
	free(reached);
	/* What the verdicts explain: processes they name (by rank; one
	 * without a rank cannot be named). */
	for (size_t i = 0; i < x->nvw; i++) {
		const struct nw_vwork *w = x->vw[i];
		if (w->dropped)
			continue;
		for (int set = 0; set < 2; set++) {
			const struct nw_rankset *rs = set ? &w->v.waiting : &w->v.culprits;
			for (uint32_t k = 0; k < rs->n; k++) {
				size_t at = proc_by_rank(x->job, rs->v[k]);
				if (at < x->job->nprocs)
					explained[at] = 1;
			}
		}
	}
	return x->oom ? -1 : 0;
}

static size_t concerned(const struct nw_verdict *v)
{
	return (size_t)v->culprits.n + v->waiting.n + v->unknown.n;
}

static int cmp_verdict(const void *a, const void *b)
{
	const struct nw_verdict *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind > y->kind ? -1 : 1;
	size_t cx = concerned(x), cy = concerned(y);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	if (x->comm_id != y->comm_id)
		return x->comm_id < y->comm_id ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	uint32_t fx = x->culprits.n ? (uint32_t)x->culprits.v[0] : UINT32_MAX;
	uint32_t fy = y->culprits.n ? (uint32_t)y->culprits.v[0] : UINT32_MAX;
	return fx < fy ? -1 : fx > fy;
}

static void ctx_free(struct nw_jctx *x)
{
	for (size_t i = 0; i < x->nvw; i++)
		nw_vwork_free(x->vw[i]);
	free(x->vw);
	for (size_t i = 0; i < x->job->nprocs && x->pc; i++) {
		free(x->pc[i].order);
		free(x->pc[i].slot_off);
	}
	free(x->pc);
	for (size_t i = 0; i < x->nsets; i++) {
		nw_rankset_free(x->sets[i]);
		free(x->sets[i]);
	}
	free(x->sets);
	free(x->sblocks);
	free(x->pairs);
	nw_graph_free(&x->g);
}

int nw_job_verdicts(struct nw_analysis *a, struct nw_job *job, struct nw_intern *in)
{
	struct nw_jctx x = { .a = a, .job = job, .in = in };
	x.timeout_ns = (uint64_t)(job->timeout_s * 1e9);
	x.g.nprocs = x.g.nnodes = (uint32_t)job->nprocs;
	x.pc = calloc(job->nprocs ? job->nprocs : 1, sizeof *x.pc);
	if (!x.pc)
		goto fail;
	for (size_t i = 0; i < job->nprocs; i++)
		if (index_proc(&x.pc[i], job->procs[i]))
			goto fail;

	nw_rules_fault(&x);
	nw_rules_init(&x);
	nw_rules_coll(&x);
	nw_rules_p2p(&x);
	if (x.oom || nw_graph_freeze(&x.g))
		goto fail;
	nw_rules_p2p_verdicts(&x);
	nw_rules_stream(&x);
	if (x.oom)
		goto fail;
	uint8_t *explained = calloc(job->nprocs + 1, 1);
	if (!explained || fill_waiting(&x, explained)) {
		free(explained);
		goto fail;
	}
	nw_rules_unexplained(&x, explained);
	free(explained);
	nw_rules_idle(&x);
	if (x.oom)
		goto fail;

	/* The public array, ranked. */
	size_t n = 0;
	for (size_t i = 0; i < x.nvw; i++)
		n += !x.vw[i]->dropped;
	job->verdicts = calloc(n ? n : 1, sizeof *job->verdicts);
	if (!job->verdicts)
		goto fail;
	for (size_t i = 0; i < x.nvw; i++) {
		struct nw_vwork *w = x.vw[i];
		if (w->dropped)
			continue;
		if (!w->v.summary)
			w->v.summary = strdup("");
		job->verdicts[job->nverdicts++] = w->v;
		memset(&w->v, 0, sizeof w->v);   /* moved */
	}
	qsort(job->verdicts, job->nverdicts, sizeof *job->verdicts, cmp_verdict);
	ctx_free(&x);
	return 0;
fail:
	ctx_free(&x);
	return -1;
}
