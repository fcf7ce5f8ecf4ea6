/* See ras_cut.h. The scanner knows only what it must to find the items:
 * whitespace, strings (with their backslash escapes), brackets, and the
 * keys of the two objects on the way (the report and each communicator).
 * Everything it steps over (other values) is checked by jansson in the
 * skeleton; everything it cuts, by jansson in item(). It never recurses. */
#include "ras_cut.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cutter {
	const char *name, *t;
	size_t n, p;                  /* the text, where the scan is */
	nw_ras_item_fn item;
	void *arg;
	char *out;                    /* the skeleton so far */
	size_t olen, ocap, copied;    /* copied: text bytes before this are in out (or cut) */
	size_t lpos, line;            /* text[lpos] is on line `line` (items come in order) */
	char *err;
	size_t errlen;
	int rc;                       /* what stopped the scan */
};

static size_t line_at(struct cutter *c, size_t p)
{
	if (p < c->lpos) {
		c->lpos = 0;
		c->line = 1;
	}
	for (const char *q = c->t + c->lpos, *end = c->t + p; (q = memchr(q, '\n', (size_t)(end - q))); q++)
		c->line++;
	c->lpos = p;
	return c->line;
}

static int syntax(struct cutter *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int syntax(struct cutter *c, const char *fmt, ...)
{
	char why[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s: not a RAS JSON report: %s (line %zu)", c->name, why, line_at(c, c->p));
	return c->rc = -1;
}

static int put(struct cutter *c, const char *s, size_t n)
{
	if (c->olen + n + 1 > c->ocap) {
		size_t cap = c->ocap ? c->ocap : 4096;
		while (cap < c->olen + n + 1)
			cap *= 2;
		char *o = realloc(c->out, cap);
		if (!o) {
			snprintf(c->err, c->errlen, "%s: out of memory", c->name);
			return c->rc = -1;
		}
		c->out = o;
		c->ocap = cap;
	}
	memcpy(c->out + c->olen, s, n);
	c->olen += n;
	c->out[c->olen] = 0;
	return 0;
}

/* text[from..to) leaves the skeleton: its newlines stay. */
static int cut(struct cutter *c, size_t from, size_t to)
{
	if (put(c, c->t + c->copied, from - c->copied))
		return -1;
	for (const char *q = c->t + from, *end = c->t + to; (q = memchr(q, '\n', (size_t)(end - q))); q++)
		if (put(c, "\n", 1))
			return -1;
	c->copied = to;
	return 0;
}

static void ws(struct cutter *c)
{
	while (c->p < c->n && (c->t[c->p] == ' ' || c->t[c->p] == '\t' || c->t[c->p] == '\n' || c->t[c->p] == '\r'))
		c->p++;
}

/* Past the string that starts at p. */
static int skip_string(struct cutter *c)
{
	size_t start = c->p++;
	while (c->p < c->n) {
		char ch = c->t[c->p++];
		if (ch == '\\')
			c->p++;
		else if (ch == '"')
			return 0;
	}
	c->p = start;
	return syntax(c, "a string without its end");
}

/* Past the value at p: a string, an object or array (brackets counted,
 * strings stepped over), or a scalar (up to the next delimiter). */
static int skip_value(struct cutter *c)
{
	if (c->p >= c->n)
		return syntax(c, "a value missing at the end");
	char ch = c->t[c->p];
	if (ch == '"')
		return skip_string(c);
	if (ch == '{' || ch == '[') {
		size_t start = c->p, depth = 0;
		while (c->p < c->n) {
			ch = c->t[c->p];
			if (ch == '"') {
				if (skip_string(c))
					return -1;
				continue;
			}
			c->p++;
			if (ch == '{' || ch == '[')
				depth++;
			else if ((ch == '}' || ch == ']') && --depth == 0)
				return 0;
		}
		c->p = start;
		return syntax(c, "an object or list without its end");
	}
	size_t start = c->p;
	while (c->p < c->n && !strchr(",:{}[]\" \t\n\r", c->t[c->p]) && c->t[c->p])
		c->p++;
	return c->p > start ? 0 : syntax(c, "'%c' where a value belongs", ch);
}

/* After an item of a list or object at p (whitespace skipped): 1 at ','
 * (stepped over, and another item must follow), 0 at the closing `close`
 * (stepped over), else an error. */
static int next_or_end(struct cutter *c, char close)
{
	ws(c);
	if (c->p < c->n && c->t[c->p] == ',') {
		c->p++;
		ws(c);
		if (c->p < c->n && (c->t[c->p] == ']' || c->t[c->p] == '}'))
			return syntax(c, "a comma before '%c'", c->t[c->p]);
		return 1;
	}
	if (c->p < c->n && c->t[c->p] == close) {
		c->p++;
		return 0;
	}
	return syntax(c, "',' or '%c' expected", close);
}

/* The list of ranks (or missing ranks) of communicator `comm` at p: its
 * items go to item(), the text between the brackets leaves the skeleton. */
static int walk_items(struct cutter *c, size_t comm, int missing)
{
	size_t open = ++c->p;
	ws(c);
	if (c->p < c->n && c->t[c->p] == ']') {
		c->p++;
		return 0;
	}
	for (size_t k = 0;; k++) {
		if (c->p >= c->n || c->t[c->p] != '{')
			return syntax(c, "communicators[%zu], %s[%zu] is not an object", comm, missing ? "missing_ranks" : "ranks",
			              k);
		size_t start = c->p;
		if (skip_value(c))
			return -1;
		int rc = c->item(c->arg, comm, missing, k, c->t + start, c->p - start, line_at(c, start));
		if (rc)
			return c->rc = rc;
		if ((rc = next_or_end(c, ']')) < 0)
			return -1;
		if (!rc)
			break;
	}
	return cut(c, open, c->p - 1);
}

/* The object at p: the report (level 0) or communicators[comm] (level 1). */
static int walk_object(struct cutter *c, int level, size_t comm);

static int walk_comms(struct cutter *c)
{
	c->p++;
	ws(c);
	if (c->p < c->n && c->t[c->p] == ']') {
		c->p++;
		return 0;
	}
	for (size_t i = 0;; i++) {
		if (c->p < c->n && c->t[c->p] == '{' ? walk_object(c, 1, i) : skip_value(c))
			return -1;
		int rc = next_or_end(c, ']');
		if (rc < 0)
			return -1;
		if (!rc)
			return 0;
	}
}

static int key_is(const char *k, size_t n, const char *want)
{
	return n == strlen(want) && !memcmp(k, want, n);
}

static int walk_object(struct cutter *c, int level, size_t comm)
{
	c->p++;
	ws(c);
	if (c->p < c->n && c->t[c->p] == '}') {
		c->p++;
		return 0;
	}
	for (;;) {
		if (c->p >= c->n || c->t[c->p] != '"')
			return syntax(c, "a key expected");
		size_t k = c->p + 1;
		if (skip_string(c))
			return -1;
		size_t klen = c->p - 1 - k;
		ws(c);
		if (c->p >= c->n || c->t[c->p] != ':')
			return syntax(c, "':' expected");
		c->p++;
		ws(c);
		int list = c->p < c->n && c->t[c->p] == '[';
		int rc;
		if (level == 0 && list && key_is(c->t + k, klen, "communicators"))
			rc = walk_comms(c);
		else if (level == 1 && list && key_is(c->t + k, klen, "ranks"))
			rc = walk_items(c, comm, 0);
		else if (level == 1 && list && key_is(c->t + k, klen, "missing_ranks"))
			rc = walk_items(c, comm, 1);
		else
			rc = skip_value(c);
		if (rc)
			return -1;
		if ((rc = next_or_end(c, '}')) < 0)
			return -1;
		if (!rc)
			return 0;
	}
}

int nw_ras_cut(const char *name, const char *text, size_t len, nw_ras_item_fn item, void *arg, char **skeleton,
               size_t *skeleton_len, char *err, size_t errlen)
{
	struct cutter c = { .name = name, .t = text, .n = len, .item = item, .arg = arg, .line = 1, .err = err,
	                    .errlen = errlen };
	*skeleton = NULL;
	*skeleton_len = 0;
	ws(&c);
	if (c.p >= c.n || c.t[c.p] != '{')
		syntax(&c, "not a JSON object");
	else if (walk_object(&c, 0, 0) == 0)
		put(&c, c.t + c.copied, c.n - c.copied);   /* what follows: jansson judges it */
	if (c.rc) {
		free(c.out);
		return c.rc;
	}
	*skeleton = c.out;
	*skeleton_len = c.olen;
	return 0;
}
