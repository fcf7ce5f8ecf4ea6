/* rule_fate: the ranks of one process share its fate. */
#include "decide.h"

#include <inttypes.h>

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
