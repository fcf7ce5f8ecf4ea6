/* verdict_build: what every rule uses to build a verdict, below the rules:
 * creating one, its culprits, waiting ranks and the graph nodes it
 * blames, freeing it. No words: its summary, evidence and hint are
 * findings (findings.c), said by words/; a kind's name and its default
 * hint are words/kind_words.c's. */
#include "decide.h"

#include <stdlib.h>

int nw_analysis_worst(const struct nw_analysis *a)
{
	int w = NW_V_HEALTHY;
	for (size_t j = 0; j < a->njobs; j++)
		for (size_t i = 0; i < a->jobs[j].nverdicts; i++)
			if (a->jobs[j].verdicts[i].kind > w)
				w = a->jobs[j].verdicts[i].kind;
	return w;
}

/* ---- building verdicts ---- */

struct nw_vwork *nw_verdict_new(struct nw_jctx *x, int kind, const struct nw_comm_view *view,
                                uint16_t op_kind, uint64_t seq)
{
	if (x->nvw == x->capvw) {
		size_t cap = x->capvw ? x->capvw * 2 : 8;
		struct nw_vwork **v = realloc(x->vw, cap * sizeof *v);
		if (!v) {
			x->oom = 1;
			return NULL;
		}
		x->vw = v;
		x->capvw = cap;
	}
	struct nw_vwork *w = calloc(1, sizeof *w);
	if (!w) {
		x->oom = 1;
		return NULL;
	}
	w->v.kind = kind;
	w->v.comm_id = view ? view->id : 0;
	w->v.comm_nranks = view ? view->nranks : 0;
	w->v.op_kind = op_kind;
	w->v.seq = seq;
	w->created = x->nvw;
	x->vw[x->nvw++] = w;
	return w;
}

void nw_verdict_blame(struct nw_jctx *x, struct nw_vwork *w, uint32_t node)
{
	if (w->nblame == w->capblame) {
		size_t cap = w->capblame ? w->capblame * 2 : 8;
		uint32_t *b = realloc(w->blame, cap * sizeof *b);
		if (!b) {
			x->oom = 1;
			return;
		}
		w->blame = b;
		w->capblame = cap;
	}
	w->blame[w->nblame++] = node;
}

void nw_set_add(struct nw_jctx *x, struct nw_rankset *s, int32_t rank)
{
	if (rank >= 0 && nw_rankset_add(s, rank))
		x->oom = 1;
}

void nw_verdict_culprit(struct nw_jctx *x, struct nw_vwork *w, const struct nw_proc *p)
{
	nw_set_add(x, &w->v.culprits, p->rank);
	nw_verdict_blame(x, w, p->job_index);
}

void nw_verdict_waiting(struct nw_jctx *x, struct nw_vwork *w, const struct nw_proc *p)
{
	nw_set_add(x, &w->v.waiting, p->rank);
}

void nw_vwork_free(struct nw_vwork *w)
{
	nw_rankset_free(&w->v.culprits);
	nw_rankset_free(&w->v.waiting);
	nw_rankset_free(&w->v.unknown);
	free(w->v.summary);
	for (size_t i = 0; i < w->v.nevidence; i++)
		free(w->v.evidence[i]);
	free(w->v.evidence);
	nw_findings_free(w->v.found);
	free(w->blame);
	free(w);
}
