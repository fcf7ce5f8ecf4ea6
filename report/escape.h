/* Text output of strings that came from files or from the network: host
 * names, file names, environment values, thread, function and Python
 * names, communicator names, RAS and Flight Recorder strings. Any of them
 * may hold bytes a terminal acts on (ESC sequences that move the cursor,
 * retitle the window, clear the screen, BEL, a C1 CSI) or a newline that
 * splits one record into two. Every text renderer and every message of
 * the CLI writes them through these functions, so that one item is always
 * one line and no file can talk to the terminal.
 *
 * Escaped: a backslash as "\\", and as "\xNN" per byte: the C0 controls,
 * DEL, the C1 controls (U+0080..U+009F) and every byte that is not part
 * of valid UTF-8 (RFC 3629); with NW_ESC_QUOTE '"' too, with NW_ESC_SPACE
 * ' ' too. Valid UTF-8 text passes unchanged. JSON output is escaped by
 * jansson instead (report/words/json_util.h). */
#ifndef NCCLWATCH_REPORT_ESCAPE_H
#define NCCLWATCH_REPORT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

#define NW_ESC_QUOTE 0x1u   /* '"' as \x22: the string prints inside double quotes */
#define NW_ESC_SPACE 0x2u   /* ' ' as \x20: the string is one word of a space-separated line */
#define NW_ESC_LINES 0x4u   /* a multi-line text shown as received (NCCL's text report, RAS
                             * events): '\n', '\t' and backslashes pass */
#define NW_ESC_JSON  0x8u   /* JSON shown as received (ras --json, --monitor --json): '\n',
                             * '\t' and backslashes pass, '\r' (JSON's whitespace) prints as a
                             * space, other controls as \u00XX (what they mean inside a JSON
                             * string, the only place a valid document has them), bytes that
                             * are not UTF-8 as \ufffd: the output stays the same JSON */

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlong forms,
 * no surrogates, nothing above U+10FFFF), 0 if there is none. Reads no
 * byte past a NUL. */
size_t nw_utf8_len(const unsigned char *s);

/* 1 if the n-byte sequence at s (valid UTF-8) is a control character a
 * terminal may act on: C0, DEL, or C1 (U+0080..U+009F). */
static inline int nw_utf8_is_control(const unsigned char *s, size_t n)
{
	return (n == 1 && (s[0] < 0x20 || s[0] == 0x7f)) || (n == 2 && s[0] == 0xc2 && s[1] < 0xa0);
}

/* s escaped to out. */
void nw_put_escaped(FILE *out, const char *s, unsigned flags);
/* The n bytes at s (NULs included, escaped) to out. */
void nw_put_escaped_n(FILE *out, const char *s, size_t n, unsigned flags);
/* The same for a text that arrives in pieces: a UTF-8 sequence cut by the
 * end of this piece is not written; returns the bytes written (the caller
 * puts the rest, at most 3, in front of the next piece, or passes it to
 * nw_put_escaped_n at the end). */
size_t nw_put_escaped_part(FILE *out, const char *s, size_t n, unsigned flags);

/* printf into one line: the whole formatted text escaped (flags 0), then
 * a newline, written at once. For messages that carry untrusted strings;
 * fmt itself holds no newline. 0, or EOF if writing failed. */
int nw_print_line(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
