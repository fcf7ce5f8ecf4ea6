/* verdict_build: what every rule uses to build a verdict, below the rules:
 * verdict kinds' names and hints, creating a verdict and filling its
 * summary, evidence, culprits and waiting ranks, and evidence lines grouped
 * by text across ranks ("ranks 0-4,6-7: in it (STARTED for 2.0 s)"). */
#include "decide.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Both from the kinds' table (report/verdict_kinds.h). */
#define NW_VK_NAME_(name, severity, hint) [severity] = #name,
#define NW_VK_HINT_(name, severity, hint) [severity] = hint,
static const char *const kind_names[] = { NW_VERDICT_KINDS(NW_VK_NAME_) };
static const char *const kind_hints[] = { NW_VERDICT_KINDS(NW_VK_HINT_) };
/* Severities 0 to NW_VERDICT_NKINDS-1, each once: a gap leaves the array
 * longer than the table, a repeat is an error (-Woverride-init). */
_Static_assert(sizeof kind_names / sizeof kind_names[0] == NW_VERDICT_NKINDS,
               "report/verdict_kinds.h: severities must be 0 to the number of kinds - 1");

const char *nw_verdict_name(int kind)
{
	return kind >= 0 && kind < NW_VERDICT_NKINDS ? kind_names[kind] : "UNKNOWN";
}

/* DESIGN.md's hint column. */
const char *nw_verdict_hint(int kind)
{
	return kind >= 0 && kind < NW_VERDICT_NKINDS ? kind_hints[kind] : "";
}

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
	w->v.hint = nw_verdict_hint(kind);
	w->created = x->nvw;
	x->vw[x->nvw++] = w;
	return w;
}

void nw_verdict_summary(struct nw_jctx *x, struct nw_vwork *w, const char *fmt, ...)
{
	struct nw_buf b = { 0 };
	va_list ap;
	va_start(ap, fmt);
	nw_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	char *s = nw_buf_take(&b);
	if (!s) {
		x->oom = 1;
		return;
	}
	free(w->v.summary);
	w->v.summary = s;
	if (w->v.found)   /* words replace findings */
		nw_line_free(&w->v.found->summary);
}

static void add_evidence(struct nw_jctx *x, struct nw_vwork *w, char *line)
{
	if (!line) {
		x->oom = 1;
		return;
	}
	char **e = realloc(w->v.evidence, (w->v.nevidence + 1) * sizeof *e);
	if (!e) {
		free(line);
		x->oom = 1;
		return;
	}
	w->v.evidence = e;
	e[w->v.nevidence++] = line;
}

void nw_verdict_evidence(struct nw_jctx *x, struct nw_vwork *w, const char *fmt, ...)
{
	struct nw_buf b = { 0 };
	va_list ap;
	va_start(ap, fmt);
	nw_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	add_evidence(x, w, nw_buf_take(&b));
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
