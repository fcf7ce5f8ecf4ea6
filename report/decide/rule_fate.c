/* rule_fate: the ranks of one process share its fate; the ranks of one
 * thread stopped inside a group share its stop. */
#include "decide.h"

#include <inttypes.h>
#include <stdlib.h>

/* Death and exit take the whole process: a verdict that blames a rank of a
 * process that is gone (a sink) blames every rank of it that is gone too,
 * whichever of them the peers happened to wait for first. Not a MISMATCH:
 * it blames a rank for the arguments it passed, not for being gone (a job
 * that ended cleanly after a wrong reduction op left every process gone). */
void nw_rules_process_fate(struct nw_jctx *x)
{
	const struct nw_job *job = x->job;
	for (size_t i = 0; i < x->nvw && !x->oom; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped || w->v.kind == NW_V_MISMATCH)
			continue;
		uint32_t n = w->v.culprits.n;  /* the rule's culprits; added ones follow */
		for (uint32_t k = 0; k < n && !x->oom; k++) {
			size_t at = nw_proc_by_rank(job, w->v.culprits.v[k]);
			if (at >= job->nprocs || !x->sink[at])
				continue;
			const struct nw_proc *p = job->procs[at];
			if (p->views_in_process < 2)
				continue;   /* a process of one rank: nothing else went with it */
			for (size_t j = 0; j < job->nprocs && !x->oom; j++) {
				const struct nw_proc *q = job->procs[j];
				if (q == p || !x->sink[j] || q->rank < 0 || !nw_same_process(p, q) ||
				    nw_rankset_has(&w->v.culprits, q->rank))
					continue;
				nw_verdict_culprit(x, w, q);
				nw_verdict_evidence(x, w, "rank %d: gone with rank %d (the same process, pid %" PRId64 ")",
				                    (int)q->rank, (int)p->rank, p->hdr.pid);
			}
		}
	}
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
 * stopped there as much as the rank it never reached). Not a MISMATCH
 * (the arguments a rank passed are its own). */
void nw_rules_thread_fate(struct nw_jctx *x)
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
			const struct nw_open_group *g = nw_open_group_of(p);
			if (p->views_in_process < 2 || !g || nw_age(p, g->since_ns) <= x->timeout_ns)
				continue;
			for (size_t j = 0; j < job->nprocs && !x->oom; j++) {
				const struct nw_proc *q = job->procs[j];
				const struct nw_open_group *h;
				if (q == p || q->rank < 0 || !nw_same_process(p, q) || nw_rankset_has(&w->v.culprits, q->rank) ||
				    !(h = nw_open_group_of(q)) || h->tid != g->tid)
					continue;
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
		}
	}
}
