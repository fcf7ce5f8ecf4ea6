/* Helpers the renderers share; private to report/render/.
 *
 * Segments hold whatever bytes a process wrote (host names, thread names,
 * variable values, paths). Text output escapes what a terminal would act
 * on (text.c, status.c); JSON output replaces what is not UTF-8
 * (json_util.h). No JSON here: the text renderers, which libncclwatch.so's
 * watchdog links, do not need jansson. */
#ifndef NCCLWATCH_REPORT_RENDER_UTIL_H
#define NCCLWATCH_REPORT_RENDER_UTIL_H

#include <stddef.h>
#include <stdint.h>

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

#endif
