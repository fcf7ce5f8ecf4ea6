/* See json_util.h. */
#include "json_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../escape.h"

json_t *nw_json_str(const char *s)
{
	if (!s)
		return json_null();
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), bad = 0;
	for (size_t i = 0; i < len;) {
		size_t n = nw_utf8_len(p + i);
		if (!n) {
			bad++;
			n = 1;
		}
		i += n;
	}
	if (!bad)
		return json_stringn(s, len);
	char *fixed = malloc(len + 2 * bad + 1);   /* each bad byte: 1 -> 3 bytes */
	if (!fixed)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t n = nw_utf8_len(p + i);
		if (n) {
			memcpy(fixed + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(fixed + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	json_t *j = json_stringn(fixed, o);
	free(fixed);
	return j;
}

/* jansson's output in pieces; a UTF-8 character cut between two waits. */
struct dump_out {
	FILE *out;
	char carry[4];
	size_t ncarry;
};

static int dump_piece(const char *buf, size_t size, void *data)
{
	struct dump_out *d = data;
	while (d->ncarry && size) {   /* complete the cut character first */
		d->carry[d->ncarry++] = *buf++;
		size--;
		size_t w = nw_put_escaped_part(d->out, d->carry, d->ncarry, NW_ESC_JSON);
		memmove(d->carry, d->carry + w, d->ncarry - w);
		d->ncarry -= w;
	}
	size_t w = nw_put_escaped_part(d->out, buf, size, NW_ESC_JSON);
	memcpy(d->carry + d->ncarry, buf + w, size - w);   /* at most 3 bytes */
	d->ncarry += size - w;
	return ferror(d->out) ? -1 : 0;
}

int nw_json_dumpf(const json_t *j, FILE *out, size_t flags)
{
	struct dump_out d = { .out = out };
	int rc = json_dump_callback(j, dump_piece, &d, flags);
	if (d.ncarry)
		nw_put_escaped_n(out, d.carry, d.ncarry, NW_ESC_JSON);
	return rc || ferror(out) ? -1 : 0;
}

int nw_json_write_doc(json_t *doc, int failed, FILE *out, int precision)
{
	if (failed) {
		json_decref(doc);
		errno = ENOMEM;
		return -1;
	}
	int rc = nw_json_dumpf(doc, out, JSON_COMPACT | JSON_REAL_PRECISION(precision));
	json_decref(doc);
	if (rc != 0 || fputc('\n', out) == EOF || fflush(out) != 0) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
