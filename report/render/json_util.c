/* See json_util.h. */
#include "json_util.h"

#include <stdlib.h>
#include <string.h>
#include "render_util.h"

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
