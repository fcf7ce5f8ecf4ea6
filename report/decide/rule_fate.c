/* rule_fate: the ranks of one process share its fate; the ranks of one
 * thread stopped inside a group share its stop. */
#include "decide.h"

#include <inttypes.h>
#include <stdlib.h>

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
	nw_verdict_evidence(x, w, "rank %d: gone with rank %d (the same process, pid %" PRId64 ")", (int)q->rank,
	                    (int)p->rank, p->hdr.pid);
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
	w->v.hint = "the thread that drives these ranks stopped between ncclGroupStart and "
	            "ncclGroupEnd: its stack shows where (a lock, a host wait)";
	struct nw_buf t = { 0 };
	char ab[32];
	uint64_t age = nw_where(x, q, &t, 0);
	char *where = t.s && !t.oom ? nw_age_fill(t.s, age, age) : NULL;
	if (where)
		nw_verdict_evidence(x, w, "rank %d: held with rank %d by their one thread (tid %" PRIu32
		                    "), inside a ncclGroupStart it never ended for %s: NCCL launched "
		                    "nothing of the group, and the thread issues nothing more for any of its ranks; "
		                    "%s", (int)q->rank, (int)p->rank, g->tid,
		                    nw_fmt_age(nw_age(p, g->since_ns), ab), where);
	else
		x->oom = 1;
	free(where);
	nw_buf_free(&t);
}

void nw_rules_thread_fate(struct nw_jctx *x)
{
	culprits_take_mates(x, stopped_in_group, held_with);
}
