/* verdicts_left: a communicator that a minority of its ranks ended
 * (finalized, destroyed or aborted it, or no longer hold it) while the
 * others still hold it: MISSING_RANK at its destroy, those that left its
 * culprits, the others waiting.
 *
 * For positions without op numbers only (NW_CAP_OPNUMS on no member: a
 * launch-only source, NCCL RAS, whose adapter gives each rank's comm
 * state as a fact, sources/ras/ras_procs.c): with op numbers the
 * collective frontier places the end against the op the others wait in
 * (verdicts_coll.c: M_FINISHED, past_end). */
#include "decide.h"

#include <inttypes.h>

static int ended(const struct nw_seg_comm *c)
{
	return c->state == NW_COMM_FINALIZED || c->state == NW_COMM_DESTROYED || c->state == NW_COMM_ABORTED;
}

static void comm_left(struct nw_jctx *x, const struct nw_comm_view *v)
{
	int32_t left = 0;
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_member *m = &v->members[r];
		if (m->proc && (m->proc->caps & NW_CAP_OPNUMS))
			return;
		left += m->proc && ended(m->comm);
	}
	if (!left || 2 * left >= v->nranks)
		return;
	struct nw_vwork *w = nw_verdict_new(x, NW_V_MISSING_RANK, v, NW_OP_COMM_DESTROY, 0);
	if (!w)
		return;
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_member *m = &v->members[r];
		if (!m->proc)
			continue;
		if (!ended(m->comm)) {
			nw_verdict_waiting(x, w, m->proc);
			continue;
		}
		nw_verdict_culprit(x, w, m->proc);
		const char *how = m->comm->state == NW_COMM_ABORTED     ? "aborted the comm"
		                  : m->comm->state == NW_COMM_FINALIZED ? "finalized the comm"
		                                                       : "destroyed the comm or no longer holds it";
		nw_verdict_evidence(x, w, "rank %d (pid %" PRId64 " on %s) %s", (int)m->comm->rank, m->proc->hdr.pid,
		                    m->proc->hdr.host, how);
	}
	char set[256];
	nw_rankset_format(&w->v.culprits, set, sizeof set);
	nw_verdict_summary(x, w, "rank%s %s left comm 0x%016" PRIx64 " early (finalized, destroyed or aborted it): %d of its "
	                   "%d ranks still run it", w->v.culprits.n == 1 ? "" : "s", set, v->id, (int)(v->nranks - left),
	                   (int)v->nranks);
}

void nw_rules_left(struct nw_jctx *x)
{
	struct nw_comm_view *v, *vt;
	HASH_ITER(hh, x->job->comms, v, vt) {
		if (x->oom)
			return;
		if (v->nranks > 0)
			comm_left(x, v);
	}
}
