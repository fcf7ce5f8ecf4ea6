/* See escape.h. */
#include "escape.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The valid UTF-8 sequence at s[0..left) (RFC 3629's table: the second
 * byte's range depends on the first), 0 if none; *cut = 1 when it is a
 * valid start that `left` cuts short. Reads no byte past the first that
 * does not fit (a NUL never does). */
static size_t utf8_seq(const unsigned char *s, size_t left, int *cut)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;
	*cut = 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if (i >= left) {
			*cut = 1;
			return 0;
		}
		if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
			return 0;
	}
	return n;
}

size_t nw_utf8_len(const unsigned char *s)
{
	int cut;
	return utf8_seq(s, 4, &cut);
}

static void put_hex(FILE *out, const char *pre, unsigned char c)
{
	static const char digits[] = "0123456789abcdef";
	fputs(pre, out);
	fputc(digits[c >> 4], out);
	fputc(digits[c & 15], out);
}

/* Escapes s[0..len); with `part`, stops before a sequence the end cut. */
static size_t put(FILE *out, const char *s, size_t len, unsigned flags, int part)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	const unsigned char *run = p;   /* bytes that pass, written at once */
	int lines = (flags & (NW_ESC_LINES | NW_ESC_JSON)) != 0, json = (flags & NW_ESC_JSON) != 0;
	while (p < end) {
		unsigned char c = *p;
		int cut = 0;
		size_t n = utf8_seq(p, (size_t)(end - p), &cut);
		if (!n && cut && part)
			break;
		int pass;
		if (c == '\\' || c == '\n' || c == '\t')
			pass = lines;
		else
			pass = n && !nw_utf8_is_control(p, n) && !(c == '"' && (flags & NW_ESC_QUOTE)) &&
			       !(c == ' ' && (flags & NW_ESC_SPACE));
		if (pass) {
			p += n;
			continue;
		}
		fwrite(run, 1, (size_t)(p - run), out);
		if (c == '\\') {
			fputs("\\\\", out);
		} else if (json && c == '\r') {
			fputc(' ', out);
		} else if (json) {
			if (n)   /* a control character: C0, DEL (1 byte) or C1 (0xc2 0x80..0x9f) */
				put_hex(out, "\\u00", n == 1 ? c : p[1]);
			else
				fputs("\\ufffd", out);
		} else {
			for (size_t i = 0; i < (n ? n : 1); i++)
				put_hex(out, "\\x", p[i]);
		}
		p += n ? n : 1;
		run = p;
	}
	fwrite(run, 1, (size_t)(p - run), out);
	return (size_t)(p - (const unsigned char *)s);
}

void nw_put_escaped_n(FILE *out, const char *s, size_t len, unsigned flags)
{
	put(out, s, len, flags, 0);
}

size_t nw_put_escaped_part(FILE *out, const char *s, size_t len, unsigned flags)
{
	return put(out, s, len, flags, 1);
}

void nw_put_escaped(FILE *out, const char *s, unsigned flags)
{
	put(out, s, strlen(s), flags, 0);
}

int nw_print_line(FILE *out, const char *fmt, ...)
{
	char small[1024], *msg = small;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return EOF;
	if ((size_t)n >= sizeof small) {
		if (!(msg = malloc((size_t)n + 1)))
			return EOF;
		va_start(ap, fmt);
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	/* one write: lines of several processes into one file do not mix */
	char *line = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&line, &len);
	int rc = EOF;
	if (m) {
		put(m, msg, (size_t)n, 0, 0);
		fputc('\n', m);
		if (fclose(m) == 0 && fwrite(line, 1, len, out) == len && fflush(out) == 0)
			rc = 0;
	}
	free(line);
	if (msg != small)
		free(msg);
	return rc;
}
