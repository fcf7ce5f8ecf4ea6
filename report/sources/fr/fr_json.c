/* fr_json: the JSON form of a dump (FlightRecorder::dump_json, torch's
 * debug server) into the tree pickle.c builds, so one loader reads both.
 * jansson parses (with its own depth limit); the tree is built without
 * recursion deeper than the document's, which jansson bounds, and each
 * value of jansson's tree is freed once converted, so that the two trees
 * are not held whole at once. */
#include "pickle.h"

#include <stdio.h>
#include <string.h>
#include <jansson.h>

int nw_fr_json_parse(const uint8_t *d, size_t n, struct nw_pickle *out, char err[NW_PICKLE_ERR_LEN]);

static struct nw_pv *conv(struct nw_arena *a, json_t *j)
{
	struct nw_pv *v = NULL;
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		v = nw_pv_new(a, NW_PV_DICT);
		const char *k;
		json_t *x;
		json_object_foreach(j, k, x) {
			struct nw_pv *key = nw_pv_new(a, NW_PV_STR), *val = conv(a, x);
			size_t kl = strlen(k);
			char *ks = key ? nw_arena_alloc(a, kl + 1) : NULL;
			if (!v || !ks || !val)
				return NULL;
			memcpy(ks, k, kl + 1);
			key->u.str.s = ks;
			key->u.str.len = kl;
			if (nw_pv_push(a, v, key) || nw_pv_push(a, v, val))
				return NULL;
			json_object_set_new(j, k, json_null());   /* converted: jansson's copy goes */
		}
		return v;
	}
	case JSON_ARRAY: {
		v = nw_pv_new(a, NW_PV_LIST);
		size_t i;
		json_t *x;
		json_array_foreach(j, i, x) {
			struct nw_pv *e = conv(a, x);
			if (!v || !e || nw_pv_push(a, v, e))
				return NULL;
			json_array_set_new(j, i, json_null());   /* converted: jansson's copy goes */
		}
		return v;
	}
	case JSON_STRING: {
		size_t l = json_string_length(j);
		v = nw_pv_new(a, NW_PV_STR);
		char *s = v ? nw_arena_alloc(a, l + 1) : NULL;
		if (!s)
			return NULL;
		memcpy(s, json_string_value(j), l + 1);
		v->u.str.s = s;
		v->u.str.len = l;
		return v;
	}
	case JSON_INTEGER:
		if ((v = nw_pv_new(a, NW_PV_INT)))
			v->u.i = json_integer_value(j);
		return v;
	case JSON_REAL:
		if ((v = nw_pv_new(a, NW_PV_FLOAT)))
			v->u.f = json_real_value(j);
		return v;
	case JSON_TRUE:
	case JSON_FALSE:
		if ((v = nw_pv_new(a, NW_PV_BOOL)))
			v->u.i = json_is_true(j);
		return v;
	default:
		return nw_pv_new(a, NW_PV_NONE);
	}
}

int nw_fr_json_parse(const uint8_t *d, size_t n, struct nw_pickle *out, char err[NW_PICKLE_ERR_LEN])
{
	memset(out, 0, sizeof *out);
	json_error_t je;
	json_t *j = json_loadb((const char *)d, n, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		snprintf(err, NW_PICKLE_ERR_LEN, "JSON line %d column %d: %s", je.line, je.column, je.text);
		return -1;
	}
	size_t limit = n > (NW_PICKLE_MEM_MAX - (1u << 20)) / NW_PICKLE_MEM_FACTOR
	                   ? NW_PICKLE_MEM_MAX : n * NW_PICKLE_MEM_FACTOR + (1u << 20);
	out->arena = nw_arena_new(limit);
	out->root = out->arena ? conv(out->arena, j) : NULL;
	json_decref(j);
	if (!out->root) {
		snprintf(err, NW_PICKLE_ERR_LEN, "the values would take more than the memory limit");
		return -1;
	}
	return 0;
}
