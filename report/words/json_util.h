/* Helpers the JSON renderers (json.c, trace.c) share; private to
 * report/words/. Strings go through jansson, which escapes them but
 * refuses bytes that are not UTF-8: nw_json_str replaces each byte of an
 * invalid sequence by U+FFFD first; nw_json_dumpf writes what jansson
 * leaves raw that a terminal would act on as escapes. */
#ifndef NCCLWATCH_REPORT_RENDER_JSON_UTIL_H
#define NCCLWATCH_REPORT_RENDER_JSON_UTIL_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* A JSON string of `s` (NULL: JSON null), invalid UTF-8 replaced. NULL
 * only when out of memory. */
json_t *nw_json_str(const char *s);

/* json_dumpf, but DEL and the C1 controls (U+0080..U+009F), which
 * jansson writes as they are, written as \u00XX: the same document, and
 * nothing in it a terminal acts on (../escape.h, NW_ESC_JSON). 0 or -1. */
int nw_json_dumpf(const json_t *j, FILE *out, size_t flags);

/* The end of a renderer: doc (taken) written compact with `precision`
 * digits for reals and a newline, then flushed. 0; -1 with errno
 * (ENOMEM when `failed`: a part of doc could not be built, nothing is
 * written). */
int nw_json_write_doc(json_t *doc, int failed, FILE *out, int precision);

/* A JSON integer; NULL when out of memory. */
static inline json_t *nw_json_int(int64_t v)
{
	return json_integer((json_int_t)v);
}

/* object[key] = value (stolen). Counts a failure (a NULL value, or out of
 * memory) in *failed, so that a caller checks once at the end. */
static inline void nw_json_set(json_t *obj, const char *key, json_t *value, int *failed)
{
	if (!obj || !value || json_object_set_new(obj, key, value) != 0) {
		json_decref(value);
		*failed = 1;
	}
}

/* array += value (stolen), same failure rule. */
static inline void nw_json_push(json_t *arr, json_t *value, int *failed)
{
	if (!arr || !value || json_array_append_new(arr, value) != 0) {
		json_decref(value);
		*failed = 1;
	}
}

#endif
