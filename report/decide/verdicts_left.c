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
		struct nw_fact f = { .kind = NW_F_LEFT_RANK, .proc = m->proc, .comm = m->comm };
		nw_verdict_evidence_fact(x, w, &f);
	}
	struct nw_fact f = { .kind = NW_F_LEFT, .view = v, .set = nw_findings_set(x, w, &w->v.culprits),
		             .n = (uint64_t)(v->nranks - left) };
	if (f.set)
		nw_verdict_summary_fact(x, w, &f);   /* words/left_words.c */
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
