/* findings_free: the memory of a verdict's findings (facts.h): its lines
 * and the rank sets they name, held by reference. Apart from findings.c,
 * which builds them through the verdict's builders (verdict_build.c), so
 * that a verdict's free needs nothing of the building. */
#include "decide.h"

#include <stdlib.h>
#include <string.h>

/* A set is held by the findings that made it and by every part naming
 * it (a wrap copies parts into another verdict, which may outlive it). */
static void fset_release(const struct nw_fset *c)
{
	struct nw_fset *s = (struct nw_fset *)c;
	if (s && --s->refs == 0) {
		nw_rankset_free(&s->ranks);
		free(s->host);
		free(s);
	}
}

void nw_line_free(struct nw_line *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->p[i].text);
		fset_release(l->p[i].f.set);
	}
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
	nw_fsets_free(f->sets);
	free(f);
}


void nw_fsets_free(struct nw_fset *s)
{
	while (s) {
		struct nw_fset *n = s->next;
		fset_release(s);
		s = n;
	}
}
