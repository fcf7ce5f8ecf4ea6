/* rule_fate: the ranks of one process share its fate; the ranks of one
 * thread stopped inside a group share its stop. */
#include "decide.h"
#include "majority.h"

/* For every verdict but a MISMATCH (it blames a rank for the arguments it
 * passed, which are its own) and each culprit its rule named whose process
 * `leads` (a process of several ranks), `take` sees every other rank of
 * that process not yet a culprit: the ranks one fate holds together. */
static void culprits_take_mates(struct nw_jctx *x, int (*leads)(struct nw_jctx *, const struct nw_proc *, size_t),
                                void (*take)(struct nw_jctx *, struct nw_vwork *, const struct nw_proc *,
                                             const struct nw_proc *, size_t))
{
	const struct nw_job *job = x->job;
	for (size_t i = 0; i < x->nvw && !x->oom; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped || w->v.kind == NW_V_MISMATCH)
			continue;
		uint32_t n = w->v.culprits.n;  /* the rule's culprits; added ones follow */
		for (uint32_t k = 0; k < n && !x->oom; k++) {
			size_t at = nw_proc_by_rank(job, w->v.culprits.v[k]);
			if (at >= job->nprocs)
				continue;
			const struct nw_proc *p = job->procs[at];
			if (p->views_in_process < 2 || !leads(x, p, at))
				continue;
			for (size_t j = 0; j < job->nprocs && !x->oom; j++) {
				const struct nw_proc *q = job->procs[j];
				if (q != p && q->rank >= 0 && nw_same_process(p, q) && !nw_rankset_has(&w->v.culprits, q->rank))
					take(x, w, p, q, j);
			}
		}
	}
}

/* Death and exit take the whole process: a verdict that blames a rank of a
 * process that is gone (a sink) blames every rank of it that is gone too,
 * whichever of them the peers happened to wait for first (a job that ended
 * cleanly after a wrong reduction op left every process gone: MISMATCH
 * stays out). */
static int gone(struct nw_jctx *x, const struct nw_proc *p, size_t at)
{
	(void)p;
	return x->sink[at];
}

static void gone_with(struct nw_jctx *x, struct nw_vwork *w, const struct nw_proc *p, const struct nw_proc *q,
                      size_t j)
{
	if (!x->sink[j])
		return;
	nw_verdict_culprit(x, w, q);
	struct nw_fact f = { .kind = NW_F_GONE_WITH, .proc = q, .n = (uint32_t)p->rank };
	nw_verdict_evidence_fact(x, w, &f);
}

void nw_rules_process_fate(struct nw_jctx *x)
{
	culprits_take_mates(x, gone, gone_with);
}

/* Drops `rank` from s (a culprit now is not waiting). */
static void unset(struct nw_rankset *s, int32_t rank)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < s->n; i++)
		if (s->v[i] != rank)
			s->v[k++] = s->v[i];
	s->n = k;
}

/* One thread that drives several ranks and has been inside a group it
 * never ended for longer than the timeout holds all of them: NCCL
 * launched nothing of the group, and the thread issues nothing more for
 * any of its ranks. A verdict that blames one of those ranks blames the
 * others too, whichever of them the peers happened to wait for first (the
 * rank whose ops the thread put into the group before it stopped is
 * stopped there as much as the rank it never reached). */
static int stopped_in_group(struct nw_jctx *x, const struct nw_proc *p, size_t at)
{
	(void)at;
	const struct nw_open_group *g = nw_open_group_of(p);
	return g && nw_age(p, g->since_ns) > x->timeout_ns;
}

static void held_with(struct nw_jctx *x, struct nw_vwork *w, const struct nw_proc *p, const struct nw_proc *q,
                      size_t j)
{
	(void)j;
	const struct nw_open_group *g = nw_open_group_of(p), *h = nw_open_group_of(q);
	if (!h || h->tid != g->tid)
		return;
	nw_verdict_culprit(x, w, q);
	unset(&w->v.waiting, q->rank);
	struct nw_fact hint = { .kind = NW_F_HELD_HINT };
	nw_verdict_hint_fact(x, w, &hint);
	struct nw_fact f[2] = { { .kind = NW_F_HELD_WITH, .proc = q, .n = (uint32_t)p->rank,
	                          .seq = nw_age(p, g->since_ns) } };
	uint64_t age = nw_fact_where(x, q, 0, &f[1]);
	if ((f[0].set = nw_findings_aged(x, w, age, age)))
		nw_verdict_evidence_facts(x, w, f, 2);
}

void nw_rules_thread_fate(struct nw_jctx *x)
{
	culprits_take_mates(x, stopped_in_group, held_with);
}

/* ---- gone: processes their source saw gone (nw_proc.gone_how) ----
 * A process that did not answer its source, or that it
 * declared dead (NCCL RAS), while the others of its comms answered: a
 * sink, and the culprit its comms' others wait for. The op they wait in
 * is the largest launch count every one of them agrees on (a launch-only
 * source: the gone process's own counts are not known). When the gone
 * ones are a strict majority of the world (majority.h: the program as
 * written), most of the job ended where the program ends, and the few
 * still there went on past it: they are the culprits, with the doubt the
 * source leaves (an exit and a death look the same). */
/* (a segment RAS saw gone is no sink: its records say where it is; the
 * verdict here is launch_only, the line beside the segments' verdicts) */
static int gone_here(const struct nw_proc *p)
{
	return p->gone_how != NULL;
}

/* p's entry of comm id, NULL none. */
static const struct nw_seg_comm *entry_of(const struct nw_proc *p, uint64_t id)
{
	for (uint32_t s = 0; s < p->ncomms; s++)
		if (p->comms[s].comm_id == id)
			return &p->comms[s];
	return NULL;
}

/* p's largest comm (its first of that size), NULL none. */
static const struct nw_seg_comm *largest_of(const struct nw_proc *p)
{
	const struct nw_seg_comm *best = NULL;
	for (uint32_t s = 0; s < p->ncomms; s++)
		if (!best || p->comms[s].nranks > best->nranks)
			best = &p->comms[s];
	return best;
}

/* A member of comm id that still holds it (answered, did not leave it). */
static int holds(const struct nw_proc *p, uint64_t id)
{
	const struct nw_seg_comm *e = entry_of(p, id);
	return e && !gone_here(p) && e->state != NW_COMM_FINALIZED && e->state != NW_COMM_DESTROYED &&
	       e->state != NW_COMM_ABORTED;
}

/* The op the members still in the world comm wc are in: the largest
 * launch count of a kind they all agree on (ties: the later kind of the
 * source's order); evidence saying so. */
static void gone_op(struct nw_jctx *x, struct nw_vwork *w, const struct nw_seg_comm *wc)
{
	uint64_t world = wc->comm_id;
	const struct nw_job *job = x->job;
	const struct nw_proc *p0 = NULL;
	size_t n = 0;
	for (size_t i = 0; i < job->nprocs; i++)
		if (holds(job->procs[i], world)) {
			p0 = p0 ? p0 : job->procs[i];
			n++;
		}
	if (!p0)
		return;
	const struct nw_launch_pos *best = NULL;
	for (uint32_t k = 0; k < p0->nlaunch; k++) {
		const struct nw_launch_pos *lp = &p0->launch[k];
		if (lp->comm_id != world || !lp->launches)
			continue;
		int agree = 1;
		for (size_t i = 0; i < job->nprocs && agree; i++)
			if (holds(job->procs[i], world))
				agree = nw_proc_launches(job->procs[i], world, lp->kind) == (int64_t)lp->launches;
		if (agree && (!best || lp->launches >= best->launches))
			best = lp;
	}
	if (!best)
		return;
	w->v.op_kind = best->kind;
	w->v.launches = best->launches;
	struct nw_fact f = { .kind = NW_F_GONE_AT, .comm = wc, .n = n, .op_kind = best->kind, .seq = best->launches };
	nw_verdict_evidence_fact(x, w, &f);
}

/* p's evidence line, as its rank of e: gone (unreachable 0), or gone or
 * unreachable (1: RAS cannot tell which). */
static void gone_line(struct nw_jctx *x, struct nw_vwork *w, const struct nw_proc *p, const struct nw_seg_comm *e,
                      int unreachable)
{
	struct nw_fact f = { .kind = NW_F_GONE_PROC, .proc = p, .comm = e, .n = (uint64_t)unreachable };
	nw_verdict_evidence_fact(x, w, &f);
}

/* Most of the world gone, the few still in it the culprits. 1 if said. */
static int gone_majority(struct nw_jctx *x, const struct nw_seg_comm *wc, size_t ngone)
{
	const struct nw_job *job = x->job;
	size_t there = 0;
	for (size_t i = 0; i < job->nprocs; i++)
		there += holds(job->procs[i], wc->comm_id);
	uint32_t votes[2] = { (uint32_t)(wc->nranks - (int32_t)ngone), (uint32_t)ngone };
	if (!there || wc->nranks < (int32_t)ngone || nw_majority(votes, 2) != 1)
		return 0;
	struct nw_vwork *w = nw_verdict_new(x, NW_V_MISSING_RANK, NULL, 0, 0);
	if (!w)
		return 1;
	w->v.comm_id = wc->comm_id;
	w->v.comm_nranks = wc->nranks;
	w->launch_only = 1;   /* from a launch-only source: beside segments, a line on theirs (nw_fold_launch_only) */
	struct nw_rankset g = { 0 };
	for (size_t i = 0; i < job->nprocs && !x->oom; i++) {
		const struct nw_proc *p = job->procs[i];
		const struct nw_seg_comm *e = entry_of(p, wc->comm_id);
		if (holds(p, wc->comm_id)) {
			nw_verdict_culprit(x, w, p);
		} else if (e && gone_here(p)) {
			nw_set_add(x, &g, p->rank);
			gone_line(x, w, p, e, 0);
		}
	}
	struct nw_fact still = { .kind = NW_F_GONE_STILL, .comm = wc, .set = nw_findings_set(x, w, &w->v.culprits) };
	struct nw_fact most = { .kind = NW_F_GONE_MOST, .comm = wc, .n = ngone, .seq = w->v.culprits.n,
	                        .set = nw_findings_set(x, w, &g) };
	nw_rankset_free(&g);
	if (!still.set || !most.set)
		return 1;
	nw_verdict_summary_fact(x, w, &still);
	nw_verdict_summary_fact(x, w, &most);
	struct nw_fact hint = { .kind = NW_F_GONE_MOST_HINT };
	nw_verdict_hint_fact(x, w, &hint);
	return 1;
}

void nw_rules_gone(struct nw_jctx *x)
{
	const struct nw_job *job = x->job;
	const struct nw_seg_comm *wc = NULL;   /* the world: the largest comm a gone process is in */
	for (size_t i = 0; i < job->nprocs; i++) {
		const struct nw_seg_comm *e = gone_here(job->procs[i]) ? largest_of(job->procs[i]) : NULL;
		if (e && (!wc || e->nranks > wc->nranks))
			wc = e;
	}
	if (!wc)
		return;
	size_t ngone = 0;
	for (size_t i = 0; i < job->nprocs; i++)
		ngone += gone_here(job->procs[i]) && entry_of(job->procs[i], wc->comm_id);
	if (gone_majority(x, wc, ngone))
		return;
	struct nw_vwork *w = nw_verdict_new(x, NW_V_MISSING_RANK, NULL, 0, 0);
	if (!w)
		return;
	w->v.comm_id = wc->comm_id;
	w->v.comm_nranks = wc->nranks;
	w->launch_only = 1;
	for (size_t i = 0; i < job->nprocs && !x->oom; i++) {
		const struct nw_proc *p = job->procs[i];
		const struct nw_seg_comm *e = gone_here(p) ? largest_of(p) : NULL;
		if (!e)
			continue;
		nw_verdict_culprit(x, w, p);
		int said = 0;   /* one line per process, not per rank of it */
		for (size_t k = 0; k < i && !said; k++)
			said = gone_here(job->procs[k]) && nw_same_process(job->procs[k], p);
		if (!said)
			gone_line(x, w, p, e, 1);
	}
	struct nw_fact f = { .kind = NW_F_GONE, .set = nw_findings_set(x, w, &w->v.culprits) };
	if (f.set)
		nw_verdict_summary_fact(x, w, &f);
	for (size_t i = 0; i < job->nprocs; i++)
		if (holds(job->procs[i], wc->comm_id) && !nw_rankset_has(&w->v.culprits, job->procs[i]->rank))
			nw_verdict_waiting(x, w, job->procs[i]);
	gone_op(x, w, wc);
	struct nw_fact hint = { .kind = NW_F_GONE_HINT };
	nw_verdict_hint_fact(x, w, &hint);
}
