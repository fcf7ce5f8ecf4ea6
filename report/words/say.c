/* say: a verdict's findings (decide/facts.h) in words. Once decide is
 * done, nw_words_say replaces every line that has findings with what its
 * parts say (a fact through its kind's function, words_int.h; words a
 * verdict came with as they are): the summary, evidence[i], and the hint
 * unless a later pass of decide set one; then a summary that says
 * nothing is "" and a verdict without a hint has its kind's. Renderers
 * (text.c, json.c) and every other reader then read the text. */
#include "words_int.h"

#include <stdlib.h>
#include <string.h>

/* text with NW_AGE replaced by the range lo..hi, "1.9-2.0 s" (a new
 * string, NULL out of memory). */
static char *age_fill(const char *text, uint64_t lo, uint64_t hi)
{
	struct nw_buf b = { 0 };
	char l[32], h[32];
	nw_fmt_age(lo, l);
	nw_fmt_age(hi, h);
	const char *ls = strrchr(l, ' '), *hs = strrchr(h, ' ');
	for (const char *t = text; *t; t++) {
		if (*t != NW_AGE[0]) {
			nw_buf_printf(&b, "%c", *t);
		} else if (lo == NW_NO_AGE) {
			nw_buf_puts(&b, "?");
		} else if (!strcmp(l, h)) {
			nw_buf_puts(&b, l);
		} else if (ls && hs && !strcmp(ls, hs)) {
			nw_buf_printf(&b, "%.*s-%s", (int)(ls - l), l, h);   /* "1.9-2.0 s" */
		} else {
			nw_buf_printf(&b, "%s-%s", l, h);
		}
	}
	return nw_buf_take(&b);
}

typedef void say_fn(struct nw_buf *b, const struct nw_fact *f);
#define NW_SAY_ROW_(name) [NW_F_##name] = nw_say_##name,
static say_fn *const say_of[NW_F_NKINDS] = { NW_FACT_KINDS(NW_SAY_ROW_) };
#undef NW_SAY_ROW_

int nw_words_fact_known(int kind)
{
	return kind > NW_F_NONE && kind < NW_F_NKINDS && say_of[kind] != NULL;
}

/* A line's head: the rest of its line says NW_AGE, its set's range of
 * ages (EG_HEAD, a group's; INIT_GONE; HELD_WITH; PROC_AT). */
static int line_head(int kind)
{
	return kind == NW_F_EG_HEAD || kind == NW_F_INIT_GONE || kind == NW_F_HELD_WITH ||
	       kind == NW_F_PROC_AT;
}

/* Parts said one after another; after a line's head the rest of the line
 * with NW_AGE filled. */
static void say_parts(struct nw_buf *b, const struct nw_part *p, size_t n, int *oom)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i].text) {
			nw_buf_puts(b, p[i].text);
			continue;
		}
		if (!nw_words_fact_known(p[i].f.kind))
			continue;
		say_of[p[i].f.kind](b, &p[i].f);
		if (!line_head(p[i].f.kind))
			continue;
		struct nw_buf rest = { 0 };
		say_parts(&rest, p + i + 1, n - i - 1, oom);
		char *t = rest.oom ? NULL : age_fill(rest.s ? rest.s : "", p[i].f.set->age_lo, p[i].f.set->age_hi);
		if (!t)
			*oom = 1;
		nw_buf_puts(b, t ? t : "");
		free(t);
		nw_buf_free(&rest);
		return;
	}
}

/* The line's words (malloc'd), NULL when it has no parts or out of
 * memory (*oom set). */
static char *say_line(const struct nw_line *l, int *oom)
{
	if (!l->n)
		return NULL;
	struct nw_buf b = { 0 };
	say_parts(&b, l->p, l->n, oom);
	char *s = nw_buf_take(&b);
	if (!s)
		*oom = 1;
	return s;
}

static void say_findings(struct nw_verdict *v, struct nw_findings *f, int *oom)
{
	char *s = say_line(&f->summary, oom);
	if (s) {
		free(v->summary);
		v->summary = s;
	}
	for (size_t i = 0; i < f->nev && i < v->nevidence; i++)
		if ((s = say_line(&f->evidence[i], oom))) {
			free(v->evidence[i]);
			v->evidence[i] = s;
		}
	if (!v->hint && (s = say_line(&f->hint, oom))) {
		free(f->hint_said);
		v->hint = f->hint_said = s;
	}
	f->said = !*oom;
}

/* A verdict's findings in words; a summary that says nothing is "", a
 * verdict without a hint of its own (no hint fact, or out of memory)
 * has its kind's. */
static void say_verdict(struct nw_verdict *v, int *oom)
{
	if (v->found && !v->found->said)
		say_findings(v, v->found, oom);
	if (!v->summary && !(v->summary = strdup("")))
		*oom = 1;
	if (!v->hint)
		v->hint = nw_verdict_hint(v->kind);
}

int nw_words_say(struct nw_analysis *a)
{
	int oom = 0;
	for (size_t j = 0; j < a->njobs; j++)
		for (size_t i = 0; i < a->jobs[j].nverdicts; i++)
			say_verdict(&a->jobs[j].verdicts[i], &oom);
	return oom ? -1 : 0;
}
