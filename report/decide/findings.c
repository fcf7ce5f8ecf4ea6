/* findings: a verdict's summary, evidence lines and hint as facts
 * (facts.h), for words/ to say; and the legacy passes' ways to wrap
 * another verdict's summary without reading its words. */
#include "decide.h"

#include <stdlib.h>
#include <string.h>

void nw_line_free(struct nw_line *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->p[i].text);
	free(l->p);
	memset(l, 0, sizeof *l);
}

void nw_findings_free(struct nw_findings *f)
{
	if (!f)
		return;
	nw_line_free(&f->summary);
	nw_line_free(&f->hint);
	for (size_t i = 0; i < f->nev; i++)
		nw_line_free(&f->evidence[i]);
	free(f->evidence);
	free(f->hint_said);
	free(f);
}

static struct nw_findings *found_of(struct nw_jctx *x, struct nw_vwork *w)
{
	if (!w->v.found && !(w->v.found = calloc(1, sizeof *w->v.found)))
		x->oom = 1;
	return w->v.found;
}

/* Appends a part (a copy of p: its text duplicated); -1 out of memory. */
static int line_add(struct nw_line *l, const struct nw_part *p)
{
	struct nw_part *n = realloc(l->p, (l->n + 1) * sizeof *n);
	if (!n)
		return -1;
	l->p = n;
	n[l->n] = *p;
	if (p->text && !(n[l->n].text = strdup(p->text)))
		return -1;
	l->n++;
	return 0;
}

static int line_add_text(struct nw_line *l, const char *text)
{
	struct nw_part p = { .text = (char *)text };
	return line_add(l, &p);
}

static int line_add_fact(struct nw_line *l, const struct nw_fact *f)
{
	struct nw_part p = { .f = *f };
	return line_add(l, &p);
}

/* A new evidence line of w with no words yet (evidence[i] NULL): its
 * findings' line, NULL out of memory. */
static struct nw_line *evidence_line(struct nw_jctx *x, struct nw_vwork *w)
{
	struct nw_findings *fd = found_of(x, w);
	if (!fd)
		return NULL;
	size_t i = w->v.nevidence;
	char **e = realloc(w->v.evidence, (i + 1) * sizeof *e);
	if (!e) {
		x->oom = 1;
		return NULL;
	}
	w->v.evidence = e;
	struct nw_line *l = realloc(fd->evidence, (i + 1) * sizeof *l);
	if (!l) {
		x->oom = 1;
		return NULL;
	}
	fd->evidence = l;
	memset(l + fd->nev, 0, (i + 1 - fd->nev) * sizeof *l);   /* lines of legacy text between */
	fd->nev = i + 1;
	e[i] = NULL;
	w->v.nevidence++;
	return &l[i];
}

void nw_verdict_summary_fact(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *f)
{
	struct nw_findings *fd = found_of(x, w);
	if (!fd)
		return;
	/* a summary that was words so far stays, as the first part */
	if (!fd->summary.n && w->v.summary && w->v.summary[0] && line_add_text(&fd->summary, w->v.summary))
		x->oom = 1;
	if (line_add_fact(&fd->summary, f))
		x->oom = 1;
}

void nw_verdict_evidence_fact(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *f)
{
	struct nw_line *l = evidence_line(x, w);
	if (l && line_add_fact(l, f))
		x->oom = 1;
}

void nw_verdict_hint_fact(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *f)
{
	struct nw_findings *fd = found_of(x, w);
	if (!fd)
		return;
	nw_line_free(&fd->hint);
	if (line_add_fact(&fd->hint, f))
		x->oom = 1;
	w->v.hint = NULL;   /* words/ says it, unless a later pass sets another */
}

/* Whether from's summary is findings. */
static const struct nw_line *summary_parts(const struct nw_vwork *from)
{
	return from->v.found && from->v.found->summary.n ? &from->v.found->summary : NULL;
}

void nw_verdict_evidence_wrap(struct nw_jctx *x, struct nw_vwork *w, const char *prefix, const struct nw_vwork *from)
{
	const struct nw_line *s = summary_parts(from);
	if (!s) {
		nw_verdict_evidence(x, w, "%s%s", prefix, from->v.summary ? from->v.summary : "");
		return;
	}
	struct nw_line *l = evidence_line(x, w);
	if (!l)
		return;
	if (line_add_text(l, prefix))
		x->oom = 1;
	for (size_t i = 0; i < s->n && !x->oom; i++)
		if (line_add(l, &s->p[i]))
			x->oom = 1;
}

void nw_verdict_summary_prefix(struct nw_jctx *x, struct nw_vwork *w, const char *prefix)
{
	struct nw_line *s = w->v.found && w->v.found->summary.n ? &w->v.found->summary : NULL;
	if (!s) {
		nw_verdict_summary(x, w, "%s%s", prefix, w->v.summary ? w->v.summary : "");
		return;
	}
	struct nw_line n = { 0 };
	if (line_add_text(&n, prefix)) {
		nw_line_free(&n);
		x->oom = 1;
		return;
	}
	for (size_t i = 0; i < s->n; i++)
		if (line_add(&n, &s->p[i])) {
			nw_line_free(&n);
			x->oom = 1;
			return;
		}
	nw_line_free(s);
	*s = n;
}

void nw_verdict_summary_wrap(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *open,
                             const struct nw_fact *close)
{
	struct nw_findings *fd = found_of(x, w);
	if (!fd)
		return;
	struct nw_line n = { 0 };
	int oom = line_add_fact(&n, open);
	if (fd->summary.n)
		for (size_t i = 0; i < fd->summary.n && !oom; i++)
			oom = line_add(&n, &fd->summary.p[i]);
	else if (!oom && w->v.summary && w->v.summary[0])
		oom = line_add_text(&n, w->v.summary);
	if (oom || line_add_fact(&n, close)) {
		nw_line_free(&n);
		x->oom = 1;
		return;
	}
	nw_line_free(&fd->summary);
	fd->summary = n;
}
