/* threadnames: each Python thread's `threading.Thread.name`, read from
 * the objects, never by running Python (no GIL, no signal):
 *
 *   interp->modules["threading"].__dict__["_active"]   ident -> Thread
 *   Thread.__dict__["_name"], checked by its "_ident" == ident and its
 *   "_native_id" == the thread's tid (a pthread_t is reused at once)
 *
 * `ident` is the thread's pthread_t, which its thread state's thread_id
 * holds too. The instance dict of a Thread is the interpreter's "managed"
 * one: 3.11 keeps a values array (obj - 32) over the keys its type shares
 * (ht_cached_keys) or a real dict (obj - 24); 3.12 keeps one tagged word
 * at obj - 24 (PyDictOrValues: the values array when its low bit is set,
 * else a real dict); 3.13 keeps its values inline after the object (obj +
 * tp_basicsize, with a valid flag) or a real dict (obj - 24). Offsets the
 * debug table does not give are in the tables below and threadnames.h
 * (3.11 and 3.12 from their headers, held against them by
 * tests/python/test-py-layout.sh; 3.13 measured on 3.13.12) and every
 * object is checked by its type before use; anything unexpected leaves
 * the name unset. Every read is fault-proof (memread.h), every loop
 * bounded. */
#include "pythreads.h"
#include "threadnames.h"
#include "cpython.h"
#include "memread.h"

#include <string.h>

#define DICT_ENTRIES_MAX (1u << 16)   /* sys.modules, _active, a Thread's __dict__ */
#define CHUNK 64                      /* entries read at once */
#define TP_BASICSIZE NW_PY_TP_BASICSIZE
#define TP_FLAGS NW_PY_TP_FLAGS
#define MA_KEYS NW_PY_MA_KEYS
#define MA_VALUES NW_PY_MA_VALUES
#define MD_DICT NW_PY_MD_DICT
#define DK_LOG2_INDEX_BYTES NW_PY_DK_LOG2_INDEX_BYTES
#define DK_KIND NW_PY_DK_KIND
#define DK_NENTRIES NW_PY_DK_NENTRIES
#define DK_INDICES NW_PY_DK_INDICES
#define DK_HEADER DK_INDICES          /* read at once: the keys' header */
#define KIND_SPLIT 2

static const struct nw_py_names_layout layout_311 = { .ht_cached_keys = 872, .values_first = 0 };
/* 3.12.3's headers (tests/gpu/py312-layout.txt). */
static const struct nw_py_names_layout layout_312 = { .ht_cached_keys = 880, .values_first = 0,
                                                      .dict_or_values = 1, .long_tag = 1 };
static const struct nw_py_names_layout layout_313 = { .ht_cached_keys = 880, .values_first = 8,
                                                      .inline_values = 1, .long_tag = 1 };

const struct nw_py_names_layout *nw_py_names_table(uint32_t minor)
{
	return minor == 11 ? &layout_311 : minor == 12 ? &layout_312 : minor == 13 ? &layout_313 : NULL;
}

static struct {
	int probed;
	const struct nw_py_names_layout *N;
	uint64_t dict_type, module_type, str_type, long_type;
} tn;

static int probe(void)
{
	if (tn.probed)
		return tn.N != NULL;
	tn.probed = 1;
	uint32_t minor = (nw_py.version >> 16) & 0xff;
	if ((nw_py.version >> 24) != 3 || nw_py.L.interp_modules == NW_PY_NO_OFF)
		return 0;
	tn.dict_type = (uint64_t)(uintptr_t)nw_py_sym("PyDict_Type");
	tn.module_type = (uint64_t)(uintptr_t)nw_py_sym("PyModule_Type");
	tn.str_type = (uint64_t)(uintptr_t)nw_py_sym("PyUnicode_Type");
	tn.long_type = (uint64_t)(uintptr_t)nw_py_sym("PyLong_Type");
	if (!tn.dict_type || !tn.module_type || !tn.str_type || !tn.long_type)
		return 0;
	tn.N = nw_py_names_table(minor);
	return tn.N != NULL;
}

static uint64_t type_of(uint64_t obj)
{
	return obj ? nw_mem_u64(obj + nw_py.L.ob_type) : 0;
}

/* Is `obj` the str `want` (ASCII)? One read: the header and the text. */
static int str_is(uint64_t obj, const char *want)
{
	const struct nw_py_layout *L = &nw_py.L;
	size_t n = strlen(want);
	uint8_t buf[128];
	uint64_t type, len;
	uint32_t state;
	if (!obj || L->str_ascii_size + n > sizeof buf || L->str_state + 4 > L->str_ascii_size ||
	    nw_mem_read(obj, buf, L->str_ascii_size + n) != 0)
		return 0;
	memcpy(&type, buf + L->ob_type, 8);
	memcpy(&len, buf + L->str_length, 8);
	memcpy(&state, buf + L->str_state, 4);
	/* compact ASCII only: the keys we look for are */
	if (type != tn.str_type || len != n || !((state >> 5) & 1) || !((state >> 6) & 1) || ((state >> 2) & 7) != 1)
		return 0;
	return !memcmp(buf + L->str_ascii_size, want, n);
}

/* A compact ASCII str's printable text in one read, cut to `size`; -1 if
 * it is another kind (nw_py_read_str reads those). */
static int ascii_str(uint64_t obj, char *out, size_t size)
{
	const struct nw_py_layout *L = &nw_py.L;
	uint8_t buf[128 + 64];
	uint64_t type, len;
	uint32_t state;
	if (!obj || L->str_ascii_size > 128 || L->str_state + 4 > L->str_ascii_size || size > 64 ||
	    nw_mem_read(obj, buf, L->str_ascii_size + size) != 0)
		return -1;
	memcpy(&type, buf + L->ob_type, 8);
	memcpy(&len, buf + L->str_length, 8);
	memcpy(&state, buf + L->str_state, 4);
	if (type != tn.str_type || !((state >> 5) & 1) || !((state >> 6) & 1) || ((state >> 2) & 7) != 1)
		return -1;
	size_t n = len < size - 1 ? (size_t)len : size - 1;
	for (size_t i = 0; i < n; i++) {
		uint8_t ch = buf[L->str_ascii_size + i];
		if (ch < 0x20 || ch >= 0x7f)
			return -1;                /* escaped by nw_py_read_str */
		out[i] = (char)ch;
	}
	out[n] = 0;
	return 0;
}

/* One entry of a dict: its key, value, hash (0 when not stored). */
struct entry {
	uint64_t hash, key, value;
	int64_t ix;                       /* its index in the entries */
};

/* Call `fn` on every live entry of the keys object `keys` with `values`
 * (a split dict's values array, 0 for a combined one), at most
 * DICT_ENTRIES_MAX; stops when fn returns nonzero. -1 if unreadable. */
static int each_entry(uint64_t keys, uint64_t values, int (*fn)(const struct entry *, void *), void *arg)
{
	uint8_t hdr[DK_HEADER];
	if (!keys || nw_mem_read(keys, hdr, sizeof hdr) != 0)
		return -1;
	uint8_t log2_index_bytes = hdr[DK_LOG2_INDEX_BYTES], kind = hdr[DK_KIND];
	int64_t nentries;
	memcpy(&nentries, hdr + DK_NENTRIES, sizeof nentries);
	if (log2_index_bytes > 40 || kind > KIND_SPLIT || nentries < 0 || nentries > DICT_ENTRIES_MAX ||
	    (values && kind != KIND_SPLIT) || (!values && kind == KIND_SPLIT))
		return -1;
	uint64_t first = keys + DK_INDICES + (1ull << log2_index_bytes);
	uint32_t esize = kind == 0 ? 24 : 16;
	uint64_t buf[CHUNK * 3], vals[CHUNK];
	for (int64_t i = 0; i < nentries; i += CHUNK) {
		int64_t take = nentries - i < CHUNK ? nentries - i : CHUNK;
		if (nw_mem_read(first + (uint64_t)i * esize, buf, (size_t)take * esize) != 0)
			return -1;
		if (values && nw_mem_read(values + tn.N->values_first + (uint64_t)i * 8, vals, (size_t)take * 8) != 0)
			return -1;
		for (int64_t k = 0; k < take; k++) {
			struct entry e;
			if (kind == 0) {
				e.hash = buf[3 * k];
				e.key = buf[3 * k + 1];
				e.value = buf[3 * k + 2];
			} else {
				e.hash = 0;
				e.key = buf[2 * k];
				e.value = values ? vals[k] : buf[2 * k + 1];
			}
			e.ix = i + k;
			if (e.key && e.value && fn(&e, arg))
				return 0;
		}
	}
	return 0;
}

static int dict_each(uint64_t dict, int (*fn)(const struct entry *, void *), void *arg)
{
	if (type_of(dict) != tn.dict_type)
		return -1;
	return each_entry(nw_mem_u64(dict + MA_KEYS), nw_mem_u64(dict + MA_VALUES), fn, arg);
}

struct find {
	const char *key;
	uint64_t value;
	int64_t ix;
};

static int find_fn(const struct entry *e, void *arg)
{
	struct find *f = arg;
	if (!str_is(e->key, f->key))
		return 0;
	f->value = e->value;
	f->ix = e->ix;
	return 1;
}

/* dict[key] for a str key of a combined dict, 0 if absent or unreadable.
 * `*hint`: where it was found last time (kept across captures: an entry
 * moves only when the dict is resized), tried first; then all entries. */
static uint64_t dict_get(uint64_t dict, const char *key, int64_t *hint)
{
	if (type_of(dict) != tn.dict_type)
		return 0;
	uint64_t keys = nw_mem_u64(dict + MA_KEYS);
	uint8_t hdr[DK_HEADER];
	int64_t nentries;
	if (*hint >= 0 && !nw_mem_u64(dict + MA_VALUES) && keys && nw_mem_read(keys, hdr, sizeof hdr) == 0) {
		memcpy(&nentries, hdr + DK_NENTRIES, sizeof nentries);
		uint8_t kind = hdr[DK_KIND], log2_index_bytes = hdr[DK_LOG2_INDEX_BYTES];
		uint32_t esize = kind == 0 ? 24 : 16;
		uint64_t e[3];
		if (kind < KIND_SPLIT && log2_index_bytes <= 40 && *hint < nentries &&
		    nw_mem_read(keys + DK_INDICES + (1ull << log2_index_bytes) + (uint64_t)*hint * esize, e,
		                esize) == 0) {
			uint64_t k = esize == 24 ? e[1] : e[0], v = esize == 24 ? e[2] : e[1];
			if (v && str_is(k, key))
				return v;
		}
	}
	struct find f = { key, 0, -1 };
	if (dict_each(dict, find_fn, &f) != 0 || !f.value)
		return 0;
	*hint = f.ix;
	return f.value;
}

/* A Thread's attributes `_name`, `_ident` and `_native_id`. */
struct attrs {
	uint64_t name, ident, native_id;
};

static int attrs_fn(const struct entry *e, void *arg)
{
	struct attrs *a = arg;
	if (!a->name && str_is(e->key, "_name"))
		a->name = e->value;
	else if (!a->ident && str_is(e->key, "_ident"))
		a->ident = e->value;
	else if (!a->native_id && str_is(e->key, "_native_id"))
		a->native_id = e->value;
	return a->name && a->ident && a->native_id;
}

/* A Thread class's flags and where `_name`, `_ident`, `_native_id` are
 * in its shared keys: looked up once per capture (a capture names many
 * threads of one class; shared keys only grow, an index does not move). */
#define KEYS_CACHE 8
static struct keys_ix {
	uint64_t type, keys;
	uint64_t flags, basicsize;        /* the type's */
	int32_t ix[3];                    /* -1 absent */
	uint32_t gen;
} kcache[KEYS_CACHE];
static uint32_t kgen;

static const char *const attr_names[3] = { "_name", "_ident", "_native_id" };

/* The type's flags, basic size and where its shared keys hold the three
 * attributes (ix -1: not found, or no shared keys). */
static const struct keys_ix *type_info(uint64_t type)
{
	struct keys_ix *c = &kcache[(type >> 4) % KEYS_CACHE];
	if (c->gen == kgen && c->type == type)
		return c;
	uint64_t t[TP_FLAGS / 8 + 1];
	if (!type || nw_mem_read(type, t, sizeof t) != 0)
		return NULL;
	c->type = type;
	c->gen = kgen;
	c->basicsize = t[TP_BASICSIZE / 8];
	c->flags = t[TP_FLAGS / 8];
	c->keys = nw_mem_u64(type + tn.N->ht_cached_keys);
	for (int k = 0; k < 3; k++)
		c->ix[k] = -1;
	uint8_t hdr[DK_HEADER];
	int64_t nentries;
	if (!c->keys || nw_mem_read(c->keys, hdr, sizeof hdr) != 0)
		return c;
	memcpy(&nentries, hdr + DK_NENTRIES, sizeof nentries);
	if (hdr[DK_KIND] != KIND_SPLIT || hdr[DK_LOG2_INDEX_BYTES] > 40 || nentries < 0 || nentries > 256)
		return c;                     /* not split keys: CPython shares at most 30 */
	uint64_t e[2 * 256];
	if (nentries && nw_mem_read(c->keys + DK_INDICES + (1ull << hdr[DK_LOG2_INDEX_BYTES]), e,
	                            (size_t)nentries * 16) != 0)
		return c;
	for (int k = 0; k < 3; k++)
		for (int64_t i = 0; i < nentries && c->ix[k] < 0; i++)
			if (str_is(e[2 * i], attr_names[k]))
				c->ix[k] = (int32_t)i;
	return c;
}

static int instance_attrs(uint64_t obj, struct attrs *a)
{
	const struct keys_ix *c = type_info(type_of(obj));
	memset(a, 0, sizeof *a);
	if (!c || !(c->flags & NW_PY_TPFLAGS_MANAGED_DICT))
		return -1;
	uint64_t values;
	if (tn.N->dict_or_values) {
		/* 3.12: PyDictOrValues; values stored as (char *)values - 1. */
		uint64_t dv = nw_mem_u64(obj - NW_PY_MANAGED_DICT_AT);
		if (!(dv & 1))
			return dv ? dict_each(dv, attrs_fn, a) : -1;
		values = dv + 1;
	} else {
		uint64_t dict = nw_mem_u64(obj - NW_PY_MANAGED_DICT_AT);   /* 3.11, 3.13 */
		if (dict)
			return dict_each(dict, attrs_fn, a);
		if (tn.N->inline_values) {
			if (!(c->flags & NW_PY_TPFLAGS_INLINE_VALUES))
				return -1;
			values = obj + c->basicsize;
		} else {
			values = nw_mem_u64(obj - NW_PY_MANAGED_VALUES_AT_311);
		}
	}
	if (!values || c->ix[0] < 0 || c->ix[1] < 0 || c->ix[2] < 0)
		return -1;
	int32_t top = c->ix[0] > c->ix[1] ? c->ix[0] : c->ix[1];
	top = top > c->ix[2] ? top : c->ix[2];
	uint64_t v[1 + 256];              /* 3.13: the header word, then the values */
	size_t first = tn.N->values_first;
	if (nw_mem_read(values, v, first + (size_t)(top + 1) * 8) != 0)
		return -1;
	if (first) {                      /* 3.13: capacity, size, embedded, valid */
		uint8_t h[8];
		memcpy(h, v, 8);
		if (h[3] != 1 || top >= h[0])
			return -1;
	}
	const uint64_t *vals = v + first / 8;
	a->name = vals[c->ix[0]];
	a->ident = vals[c->ix[1]];
	a->native_id = vals[c->ix[2]];
	return 0;
}

/* A non-negative int object's value, if it fits in 64 bits; -1 if not. */
static int long_value(uint64_t obj, uint64_t *out)
{
	uint64_t w[5];                    /* refcnt, type, size or tag, 3 digits */
	if (!obj || nw_mem_read(obj, w, sizeof w - 4) != 0 || w[1] != tn.long_type)
		return -1;
	uint64_t head = w[2];
	int64_t ndigits;
	if (tn.N->long_tag) {
		if ((head & 3) == 2)
			return -1;                /* negative */
		ndigits = (int64_t)(head >> 3);
	} else {
		ndigits = (int64_t)head;
	}
	if (ndigits < 0 || ndigits > 3)
		return -1;
	uint32_t d[3] = { 0, 0, 0 };
	memcpy(d, &w[3], (size_t)ndigits * 4);
	unsigned __int128 v = (unsigned __int128)d[0] | (unsigned __int128)d[1] << 30 | (unsigned __int128)d[2] << 60;
	if (v >> 64)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

struct active {
	struct nw_py_thread *t;
	int n;
};

static int active_fn(const struct entry *e, void *arg)
{
	struct active *a = arg;
	/* An int's hash is its value (mod 2^61 - 1): a pthread_t is below. */
	for (int i = 0; i < a->n; i++) {
		struct nw_py_thread *p = &a->t[i];
		if (!p->thread_id || e->hash != p->thread_id || p->name[0] || type_of(e->key) != tn.long_type)
			continue;
		struct attrs at;
		uint64_t ident, native;
		/* Named only when the Thread says it is this thread. */
		if (instance_attrs(e->value, &at) != 0 || !at.name || !at.ident || !at.native_id ||
		    long_value(at.ident, &ident) != 0 || ident != p->thread_id ||
		    long_value(at.native_id, &native) != 0 || !p->tid || native != p->tid ||
		    type_of(at.name) != tn.str_type)
			continue;
		char name[sizeof p->name];
		if (ascii_str(at.name, name, sizeof name) == 0 || nw_py_read_str(at.name, name, sizeof name) == 0)
			memcpy(p->name, name, sizeof name);
	}
	return 0;
}

void nw_py_thread_names(struct nw_py_thread *t, int n)
{
	if (n <= 0 || !probe())
		return;
	if (++kgen == 0)
		kgen = 1;
	uint64_t interp = nw_py_interp();
	uint64_t modules = interp ? nw_mem_u64(interp + nw_py.L.interp_modules) : 0;
	static int64_t threading_ix = -1, active_ix = -1;
	uint64_t threading = modules ? dict_get(modules, "threading", &threading_ix) : 0;
	if (type_of(threading) != tn.module_type)
		return;                       /* not imported: no names to read */
	uint64_t active = dict_get(nw_mem_u64(threading + MD_DICT), "_active", &active_ix);
	struct active a = { t, n };
	dict_each(active, active_fn, &a);
}
