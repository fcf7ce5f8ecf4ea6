/* See pickle.h. The machine is the one pickletools documents: a value
 * stack, a mark stack, a memo; each opcode below pushes, pops or fills a
 * container. What it cannot do by construction is name a callable: the
 * opcodes that would are refused before anything is built. */
#include "pickle.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---- */

#define ARENA_BLOCK 65536
#define ARENA_KEEP (8u << 20)       /* what a reused arena keeps between parses */

struct nw_arena_block {
	struct nw_arena_block *next;
	size_t used, size;
	max_align_t data[];
};

struct nw_arena {
	struct nw_arena_block *head;
	struct nw_arena_block *spare;   /* blocks of ARENA_BLOCK kept by a reset */
	size_t total, limit, kept;
};

static size_t arena_limit(size_t limit)
{
	return limit && limit < NW_PICKLE_MEM_MAX ? limit : NW_PICKLE_MEM_MAX;
}

struct nw_arena *nw_arena_new(size_t limit)
{
	struct nw_arena *a = calloc(1, sizeof *a);
	if (a)
		a->limit = arena_limit(limit);
	return a;
}

/* A new block for n bytes (n rounded): a spare one when it fits. */
static __attribute__((noinline)) void *arena_more(struct nw_arena *a, size_t n)
{
	size_t size = n > ARENA_BLOCK ? n : ARENA_BLOCK;
	if (a->total + size > a->limit)
		return NULL;
	struct nw_arena_block *b = a->spare;
	if (size == ARENA_BLOCK && b) {
		a->spare = b->next;
		a->kept -= ARENA_BLOCK;
	} else {
		if (!(b = malloc(sizeof *b + size)))
			return NULL;
		b->size = size;
	}
	b->used = n;
	b->next = a->head;
	a->head = b;
	a->total += size;
	return b->data;
}

static inline void *arena_alloc(struct nw_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	struct nw_arena_block *b = a->head;
	if (__builtin_expect(!b || b->size - b->used < n, 0))
		return arena_more(a, n);
	void *p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

void *nw_arena_alloc(struct nw_arena *a, size_t n)
{
	return arena_alloc(a, n);
}

/* Empty again, with a new limit; up to ARENA_KEEP of its blocks stay
 * allocated for the next parse (the next file of a reading). */
static void arena_reset(struct nw_arena *a, size_t limit)
{
	for (struct nw_arena_block *b = a->head, *n; b; b = n) {
		n = b->next;
		if (b->size == ARENA_BLOCK && a->kept < ARENA_KEEP) {
			b->next = a->spare;
			a->spare = b;
			a->kept += ARENA_BLOCK;
		} else {
			free(b);
		}
	}
	a->head = NULL;
	a->total = 0;
	a->limit = arena_limit(limit);
}

void nw_arena_free(struct nw_arena *a)
{
	if (!a)
		return;
	for (struct nw_arena_block *b = a->head, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	for (struct nw_arena_block *b = a->spare, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	free(a);
}

static inline struct nw_pv *pv_new(struct nw_arena *a, int type)
{
	struct nw_pv *v = arena_alloc(a, sizeof *v);
	if (v) {
		memset(v, 0, sizeof *v);
		v->type = (uint8_t)type;
	}
	return v;
}

struct nw_pv *nw_pv_new(struct nw_arena *a, int type)
{
	return pv_new(a, type);
}

/* Room for `extra` more items at once (fill knows how many come). */
static int pv_reserve(struct nw_arena *a, struct nw_pv *c, size_t extra)
{
	if ((size_t)c->cap - c->n >= extra)
		return 0;
	size_t want = (size_t)c->n + extra;
	if (want > UINT32_MAX / 2)
		return -1;
	size_t cap = c->cap ? (size_t)c->cap * 2 : 4;
	if (cap < want)
		cap = want;
	struct nw_pv **items = arena_alloc(a, cap * sizeof *items);
	if (!items)
		return -1;
	if (c->n)
		memcpy(items, c->u.items, c->n * sizeof *items);
	c->u.items = items;          /* the old array stays in the arena: at most 2x */
	c->cap = (uint32_t)cap;
	return 0;
}

int nw_pv_push(struct nw_arena *a, struct nw_pv *c, struct nw_pv *v)
{
	if (c->n == c->cap && pv_reserve(a, c, 1))
		return -1;
	c->u.items[c->n++] = v;
	return 0;
}

/* ---- lookups ---- */

int nw_pv_is_str(const struct nw_pv *v, const char *s)
{
	size_t n = strlen(s);
	return v && v->type == NW_PV_STR && v->u.str.len == n && memcmp(v->u.str.s, s, n) == 0;
}

struct nw_pv *nw_pv_get(const struct nw_pv *d, const char *key)
{
	if (!d || d->type != NW_PV_DICT)
		return NULL;
	for (uint32_t k = 0; k + 1 < d->n; k += 2)
		if (nw_pv_is_str(d->u.items[k], key))
			return d->u.items[k + 1];
	return NULL;
}

const char *nw_pv_cstr(const struct nw_pv *v, char *buf, size_t len)
{
	if (!len)
		return buf;
	buf[0] = '\0';
	if (!v || v->type != NW_PV_STR)
		return buf;
	size_t n = v->u.str.len < len - 1 ? v->u.str.len : len - 1;
	memcpy(buf, v->u.str.s, n);
	buf[n] = '\0';
	return buf;
}

int64_t nw_pv_int(const struct nw_pv *v, int64_t dflt)
{
	if (!v)
		return dflt;
	if (v->type == NW_PV_INT || v->type == NW_PV_BOOL)
		return v->u.i;
	if (v->type == NW_PV_FLOAT && isfinite(v->u.f) && fabs(v->u.f) < 9.2e18)
		return (int64_t)v->u.f;
	if (v->type == NW_PV_STR && v->u.str.len && v->u.str.len < 24) {
		char b[24], *end;
		nw_pv_cstr(v, b, sizeof b);
		errno = 0;
		long long x = strtoll(b, &end, 10);
		if (!errno && *end == '\0' && end != b)
			return x;
	}
	return dflt;
}

/* ---- the machine ---- */

struct pm {
	const uint8_t *d;
	size_t len, pos, op_at;
	struct nw_arena *a;
	struct nw_pv **stack;
	size_t sp, scap;
	size_t marks[NW_PICKLE_MAX_MARKS];
	size_t nmarks;
	struct nw_pv **memo;
	size_t nmemo;                        /* allocated; [0, memo_hi) may be set, the rest is NULL */
	size_t memo_hi;
	size_t nstored;                      /* distinct indices stored (len(memo) in Python) */
	char *err;
	struct nw_pv *none, *bools[2];       /* shared: values are never changed once built */
	struct nw_pv *small[256];            /* shared ints 0..255 */
};

static __attribute__((noinline, cold)) int perr(struct pm *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int perr(struct pm *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(m->err, NW_PICKLE_ERR_LEN, "pickle offset %zu: ", m->op_at);
	if (n > 0 && n < NW_PICKLE_ERR_LEN)
		vsnprintf(m->err + n, NW_PICKLE_ERR_LEN - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static inline int need(struct pm *m, size_t n)
{
	if (__builtin_expect(m->len - m->pos < n, 0))
		return perr(m, "truncated (the opcode needs %zu more bytes, %zu left)", n, m->len - m->pos);
	return 0;
}

static inline uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static __attribute__((noinline)) int grow_stack(struct pm *m)
{
	size_t cap = m->scap ? m->scap * 2 : 64;
	/* The stack grows one entry per opcode at most: the input bounds it. */
	struct nw_pv **s = realloc(m->stack, cap * sizeof *s);
	if (!s)
		return perr(m, "out of memory");
	m->stack = s;
	m->scap = cap;
	return 0;
}

static inline int push(struct pm *m, struct nw_pv *v)
{
	if (__builtin_expect(!v, 0))
		return perr(m, "the values would take more than the memory limit");
	if (__builtin_expect(m->sp == m->scap, 0) && grow_stack(m))
		return -1;
	m->stack[m->sp++] = v;
	return 0;
}

static inline size_t floor_of(const struct pm *m)
{
	return m->nmarks ? m->marks[m->nmarks - 1] : 0;
}

static inline struct nw_pv *pop(struct pm *m)
{
	if (m->sp <= floor_of(m)) {
		perr(m, "stack underflow");
		return NULL;
	}
	return m->stack[--m->sp];
}

static inline struct nw_pv *top(struct pm *m)
{
	if (m->sp <= floor_of(m)) {
		perr(m, "stack underflow");
		return NULL;
	}
	return m->stack[m->sp - 1];
}

/* The items above the topmost mark, and the mark popped. */
static inline int pop_mark(struct pm *m, size_t *from)
{
	if (!m->nmarks)
		return perr(m, "no mark to pop");
	*from = m->marks[--m->nmarks];
	return 0;
}

static inline struct nw_pv *scalar(struct pm *m, int type)
{
	return pv_new(m->a, type);
}

/* None, True, False: one value each per parse. */
static inline struct nw_pv *shared(struct pm *m, struct nw_pv **slot, int type, int64_t i)
{
	if (!*slot && (*slot = scalar(m, type)))
		(*slot)->u.i = i;
	return *slot;
}

static inline int push_int(struct pm *m, int64_t i)
{
	/* Small ints are shared: values are never changed once built. */
	if (i >= 0 && i < 256)
		return push(m, shared(m, &m->small[i], NW_PV_INT, i));
	struct nw_pv *v = scalar(m, NW_PV_INT);
	if (v)
		v->u.i = i;
	return push(m, v);
}

static inline int push_str(struct pm *m, int type, const uint8_t *s, uint64_t n)
{
	struct nw_pv *v = scalar(m, type);
	if (v) {
		v->u.str.s = (const char *)s;
		v->u.str.len = (size_t)n;
	}
	return push(m, v);
}

/* Counted bytes: length of `lw` bytes, then the data. */
static inline int counted(struct pm *m, int lw, int type)
{
	if (need(m, (size_t)lw))
		return -1;
	uint64_t n = le(m->d + m->pos, lw);
	m->pos += (size_t)lw;
	if (n > m->len - m->pos)
		return perr(m, "a string of %" PRIu64 " bytes runs past the end of the input", n);
	const uint8_t *s = m->d + m->pos;
	m->pos += (size_t)n;
	return push_str(m, type, s, n);
}

/* A text argument up to '\n' (protocol 0). */
static int line(struct pm *m, const uint8_t **s, size_t *n)
{
	const uint8_t *nl = memchr(m->d + m->pos, '\n', m->len - m->pos);
	if (!nl)
		return perr(m, "truncated (no end of line)");
	*s = m->d + m->pos;
	*n = (size_t)(nl - *s);
	m->pos = (size_t)(nl - m->d) + 1;
	return 0;
}

/* A memo index as decimal text up to '\n' (GET, PUT: protocol 0). */
static int line_index(struct pm *m, unsigned long long *x)
{
	const uint8_t *s;
	size_t n;
	if (line(m, &s, &n))
		return -1;
	char b[24], *end;
	if (!n || n >= sizeof b)
		return perr(m, "bad memo index");
	memcpy(b, s, n);
	b[n] = '\0';
	*x = strtoull(b, &end, 10);
	return *end ? perr(m, "bad memo index") : 0;
}

static __attribute__((noinline)) int line_num(struct pm *m, int is_float)
{
	const uint8_t *s;
	size_t n;
	if (line(m, &s, &n))
		return -1;
	char b[64], *end;
	if (n == 0 || n >= sizeof b)
		return perr(m, "a number of %zu characters", n);
	memcpy(b, s, n);
	b[n] = '\0';
	if (n && b[n - 1] == 'L')          /* LONG's suffix */
		b[n - 1] = '\0';
	errno = 0;
	if (is_float) {
		double f = strtod(b, &end);
		if (end == b || *end)
			return perr(m, "not a number: '%s'", b);
		struct nw_pv *v = scalar(m, NW_PV_FLOAT);
		if (v)
			v->u.f = f;
		return push(m, v);
	}
	if (!strcmp(b, "00") || !strcmp(b, "01")) {   /* protocol 0's False/True */
		struct nw_pv *v = scalar(m, NW_PV_BOOL);
		if (v)
			v->u.i = b[1] == '1';
		return push(m, v);
	}
	long long x = strtoll(b, &end, 10);
	if (errno || end == b || *end)
		return perr(m, "not a 64-bit integer: '%s'", b);
	return push_int(m, x);
}

static __attribute__((noinline)) int grow_memo(struct pm *m, uint64_t idx)
{
	size_t n = m->nmemo ? m->nmemo : 16;
	while (n <= idx)
		n *= 2;
	struct nw_pv **mm = realloc(m->memo, n * sizeof *mm);
	if (!mm)
		return perr(m, "out of memory");
	memset(mm + m->nmemo, 0, (n - m->nmemo) * sizeof *mm);
	m->memo = mm;
	m->nmemo = n;
	return 0;
}

static inline int memo_put(struct pm *m, uint64_t idx)
{
	struct nw_pv *v = top(m);
	if (!v)
		return -1;
	/* Every memo entry costs at least one opcode byte: an index beyond
	 * the input's size is not one a real pickler writes. */
	if (__builtin_expect(idx > m->len, 0))
		return perr(m, "memo index %" PRIu64 " beyond the input's size", idx);
	if (__builtin_expect(idx >= m->nmemo, 0) && grow_memo(m, idx))
		return -1;
	if (!m->memo[idx])
		m->nstored++;
	if (idx >= m->memo_hi)
		m->memo_hi = idx + 1;
	m->memo[idx] = v;
	return 0;
}

static inline int memo_get(struct pm *m, uint64_t idx)
{
	if (__builtin_expect(idx >= m->nmemo || !m->memo[idx], 0))
		return perr(m, "memo index %" PRIu64 " was never stored", idx);
	return push(m, m->memo[idx]);
}

/* Items [from, sp) moved into c (reserved at once). */
static inline int take_items(struct pm *m, struct nw_pv *c, size_t from)
{
	size_t k = m->sp - from;
	if (!c || pv_reserve(m->a, c, k))
		return perr(m, "the values would take more than the memory limit");
	if (k)
		memcpy(c->u.items + c->n, m->stack + from, k * sizeof *m->stack);
	c->n += (uint32_t)k;
	m->sp = from;
	return 0;
}

static int seq_from_mark(struct pm *m, int type)
{
	size_t from = 0;
	if (pop_mark(m, &from))
		return -1;
	struct nw_pv *c = pv_new(m->a, type);
	if (take_items(m, c, from))
		return -1;
	return push(m, c);
}

static inline int tuple_n(struct pm *m, int n)
{
	if (m->sp - floor_of(m) < (size_t)n)
		return perr(m, "stack underflow");
	struct nw_pv *c = pv_new(m->a, NW_PV_TUPLE);
	if (take_items(m, c, m->sp - (size_t)n))
		return -1;
	return push(m, c);
}

/* APPEND(S), SETITEM(S), ADDITEMS: items [from, sp) into the container below. */
static inline int fill(struct pm *m, size_t from, int dict)
{
	if (from == 0)
		return perr(m, "no container below the items");
	struct nw_pv *c = m->stack[from - 1];
	int want = dict ? NW_PV_DICT : NW_PV_LIST;
	if (c->type != want)
		return perr(m, "items added to a value that is not a %s", dict ? "dict" : "list or set");
	if (dict && (m->sp - from) % 2)
		return perr(m, "a key without a value");
	return take_items(m, c, from);
}

static const char *refused_name(uint8_t op)
{
	switch (op) {
	case 'c': return "GLOBAL";
	case 0x93: return "STACK_GLOBAL";
	case 'R': return "REDUCE";
	case 'b': return "BUILD";
	case 'i': return "INST";
	case 'o': return "OBJ";
	case 0x81: return "NEWOBJ";
	case 0x92: return "NEWOBJ_EX";
	case 0x82: return "EXT1";
	case 0x83: return "EXT2";
	case 0x84: return "EXT4";
	case 'P': return "PERSID";
	case 'Q': return "BINPERSID";
	default: return NULL;
	}
}

/* The opcodes, one label each. The dispatch is threaded (a jump from the
 * end of each opcode straight to the next one's code, GCC's and clang's
 * labels as values) rather than a switch: a dump is tens of thousands of
 * opcodes of a few kinds in a few recurring orders, and one jump per
 * opcode site is what lets the CPU predict them (2-3x faster than one
 * shared jump). An opcode without a label is refused or unknown. */
static int run(struct pm *m)
{
	static const void *const code[256] = {
		[0x80] = &&op_proto, [0x95] = &&op_frame, ['.'] = &&op_stop, ['('] = &&op_mark,
		['0'] = &&op_pop, ['1'] = &&op_pop_mark, ['2'] = &&op_dup, ['N'] = &&op_none,
		[0x88] = &&op_true, [0x89] = &&op_false, ['I'] = &&op_int_line, ['L'] = &&op_int_line,
		['F'] = &&op_float_line, ['J'] = &&op_binint, ['K'] = &&op_binint1, ['M'] = &&op_binint2,
		[0x8a] = &&op_long1, [0x8b] = &&op_long4, ['G'] = &&op_binfloat, ['S'] = &&op_string,
		['V'] = &&op_unicode, ['T'] = &&op_bytes4, ['U'] = &&op_bytes1, ['X'] = &&op_str4,
		[0x8c] = &&op_str1, [0x8d] = &&op_str8, ['B'] = &&op_bytes4, ['C'] = &&op_bytes1,
		[0x8e] = &&op_bytes8, [0x96] = &&op_bytes8, [0x97] = &&op_buffer, [0x98] = &&op_buffer,
		[']'] = &&op_empty_list, [')'] = &&op_empty_tuple, ['}'] = &&op_empty_dict,
		[0x8f] = &&op_empty_list, ['l'] = &&op_list, ['t'] = &&op_tuple, [0x91] = &&op_list,
		['d'] = &&op_dict, [0x85] = &&op_tuple1, [0x86] = &&op_tuple2, [0x87] = &&op_tuple3,
		['a'] = &&op_append, ['s'] = &&op_setitem, ['e'] = &&op_appends, [0x90] = &&op_appends,
		['u'] = &&op_setitems, ['g'] = &&op_get, ['h'] = &&op_binget, ['j'] = &&op_long_binget,
		['p'] = &&op_put, ['q'] = &&op_binput, ['r'] = &&op_long_binput, [0x94] = &&op_memoize,
	};
	const uint8_t *d = m->d;
	uint8_t op;
	size_t from = 0;
	struct nw_pv *v;
	unsigned long long x;
	/* Each opcode ends with NEXT (or returns -1 on error). */
#define NEXT()                                                                  \
	do {                                                                        \
		if (__builtin_expect(m->pos >= m->len, 0))                              \
			goto truncated;                                                     \
		m->op_at = m->pos;                                                      \
		op = d[m->pos++];                                                       \
		if (__builtin_expect(!code[op], 0))                                     \
			goto other;                                                         \
		goto *code[op];                                                         \
	} while (0)
#define DO(expr)                                                                \
	do {                                                                        \
		if (__builtin_expect((expr) != 0, 0))                                   \
			return -1;                                                          \
		NEXT();                                                                 \
	} while (0)

	NEXT();
truncated:
	m->op_at = m->pos;
	return perr(m, "truncated (no STOP opcode)");
other: {
	const char *bad = refused_name(op);
	if (bad)
		return perr(m, "opcode %s (0x%02x) imports or calls code: refused (a Flight Recorder "
		            "dump holds only data)", bad, op);
	return perr(m, "unknown opcode 0x%02x", op);
}
op_proto:
	if (need(m, 1))
		return -1;
	if (d[m->pos] > 5)
		return perr(m, "pickle protocol %u (this reader knows 0-5)", d[m->pos]);
	m->pos++;
	NEXT();
op_frame:                                       /* a length hint */
	if (need(m, 8))
		return -1;
	m->pos += 8;
	NEXT();
op_stop:
	return 0;
op_mark:
	if (m->nmarks == NW_PICKLE_MAX_MARKS)
		return perr(m, "marks nested deeper than %d", NW_PICKLE_MAX_MARKS);
	m->marks[m->nmarks++] = m->sp;
	NEXT();
op_pop:
	DO(pop(m) ? 0 : -1);
op_pop_mark:
	if (pop_mark(m, &from))
		return -1;
	m->sp = from;
	NEXT();
op_dup:
	DO((v = top(m)) ? push(m, v) : -1);
op_none:
	DO(push(m, shared(m, &m->none, NW_PV_NONE, 0)));
op_true:
	DO(push(m, shared(m, &m->bools[1], NW_PV_BOOL, 1)));
op_false:
	DO(push(m, shared(m, &m->bools[0], NW_PV_BOOL, 0)));
op_int_line:
	DO(line_num(m, 0));
op_float_line:
	DO(line_num(m, 1));
op_binint:
	if (need(m, 4))
		return -1;
	m->pos += 4;
	DO(push_int(m, (int32_t)(uint32_t)le(d + m->pos - 4, 4)));
op_binint1:
	if (need(m, 1))
		return -1;
	DO(push_int(m, d[m->pos++]));
op_binint2:
	if (need(m, 2))
		return -1;
	m->pos += 2;
	DO(push_int(m, (int64_t)le(d + m->pos - 2, 2)));
op_long1:
op_long4: {
	int lw = op == 0x8a ? 1 : 4;
	if (need(m, (size_t)lw))
		return -1;
	uint64_t n = le(d + m->pos, lw);
	m->pos += (size_t)lw;
	if (n > 8)
		return perr(m, "an integer of %" PRIu64 " bytes (more than 64 bits)", n);
	if (need(m, (size_t)n))
		return -1;
	uint64_t i = le(d + m->pos, (int)n);
	if (n && n < 8 && (d[m->pos + n - 1] & 0x80))
		i |= ~0ull << (8 * n);                  /* two's complement, sign-extended */
	m->pos += (size_t)n;
	DO(push_int(m, (int64_t)i));
}
op_binfloat: {                                  /* big-endian */
	if (need(m, 8))
		return -1;
	uint64_t i = 0;
	for (int k = 0; k < 8; k++)
		i = i << 8 | d[m->pos + k];
	m->pos += 8;
	double f;
	memcpy(&f, &i, sizeof f);
	if ((v = scalar(m, NW_PV_FLOAT)))
		v->u.f = f;
	DO(push(m, v));
}
op_string:                                      /* STRING: a quoted repr */
op_unicode: {                                   /* UNICODE: raw-unicode-escape */
	const uint8_t *s;
	size_t n;
	if (line(m, &s, &n))
		return -1;
	if (op == 'S') {
		if (n < 2 || (s[0] != '\'' && s[0] != '"') || s[n - 1] != s[0])
			return perr(m, "STRING argument not quoted");
		s++;
		n -= 2;
	}
	DO(push_str(m, op == 'S' ? NW_PV_BYTES : NW_PV_STR, s, n));
}
op_bytes1:
	DO(counted(m, 1, NW_PV_BYTES));
op_bytes4:
	DO(counted(m, 4, NW_PV_BYTES));
op_bytes8:
	DO(counted(m, 8, NW_PV_BYTES));
op_str1:
	DO(counted(m, 1, NW_PV_STR));
op_str4:
	DO(counted(m, 4, NW_PV_STR));
op_str8:
	DO(counted(m, 8, NW_PV_STR));
op_buffer:
	return perr(m, "opcode %s (0x%02x): out-of-band buffers are not data of a file: refused",
	            op == 0x97 ? "NEXT_BUFFER" : "READONLY_BUFFER", op);
op_empty_list:                                  /* also EMPTY_SET */
	DO(push(m, pv_new(m->a, NW_PV_LIST)));
op_empty_tuple:
	DO(push(m, pv_new(m->a, NW_PV_TUPLE)));
op_empty_dict:
	DO(push(m, pv_new(m->a, NW_PV_DICT)));
op_list:                                        /* also FROZENSET */
	DO(seq_from_mark(m, NW_PV_LIST));
op_tuple:
	DO(seq_from_mark(m, NW_PV_TUPLE));
op_dict:
	if (pop_mark(m, &from))
		return -1;
	if ((m->sp - from) % 2)
		return perr(m, "a key without a value");
	v = pv_new(m->a, NW_PV_DICT);
	if (take_items(m, v, from))
		return -1;
	DO(push(m, v));
op_tuple1:
	DO(tuple_n(m, 1));
op_tuple2:
	DO(tuple_n(m, 2));
op_tuple3:
	DO(tuple_n(m, 3));
op_append:
	if (m->sp < 2 || (m->nmarks && m->sp - 2 < m->marks[m->nmarks - 1]))
		return perr(m, "stack underflow");
	DO(fill(m, m->sp - 1, 0));
op_setitem:
	if (m->sp < 3 || (m->nmarks && m->sp - 3 < m->marks[m->nmarks - 1]))
		return perr(m, "stack underflow");
	DO(fill(m, m->sp - 2, 1));
op_appends:                                     /* also ADDITEMS */
	if (pop_mark(m, &from))
		return -1;
	DO(fill(m, from, 0));
op_setitems:
	if (pop_mark(m, &from))
		return -1;
	DO(fill(m, from, 1));
op_get:
	DO(line_index(m, &x) ? -1 : memo_get(m, x));
op_binget:
	if (need(m, 1))
		return -1;
	DO(memo_get(m, d[m->pos++]));
op_long_binget:
	if (need(m, 4))
		return -1;
	m->pos += 4;
	DO(memo_get(m, le(d + m->pos - 4, 4)));
op_put:
	DO(line_index(m, &x) ? -1 : memo_put(m, x));
op_binput:
	if (need(m, 1))
		return -1;
	DO(memo_put(m, d[m->pos++]));
op_long_binput:
	if (need(m, 4))
		return -1;
	m->pos += 4;
	DO(memo_put(m, le(d + m->pos - 4, 4)));
op_memoize:                                     /* memo[len(memo)] */
	DO(memo_put(m, m->nstored));
#undef DO
#undef NEXT
}

static size_t mem_limit(size_t len)
{
	return len > (NW_PICKLE_MEM_MAX - (1u << 20)) / NW_PICKLE_MEM_FACTOR
	           ? NW_PICKLE_MEM_MAX : len * NW_PICKLE_MEM_FACTOR + (1u << 20);
}

/* The machine's own arrays kept between parses, at most this large each. */
#define KEEP_ARRAY (1u << 20)

int nw_pickle_reparse(const uint8_t *data, size_t len, struct nw_pickle *out, char err[NW_PICKLE_ERR_LEN])
{
	err[0] = '\0';
	out->root = NULL;
	if (out->arena) {
		arena_reset(out->arena, mem_limit(len));
	} else if (!(out->arena = nw_arena_new(mem_limit(len)))) {
		snprintf(err, NW_PICKLE_ERR_LEN, "out of memory");
		return -1;
	}
	struct pm m = { .d = data, .len = len, .err = err, .a = out->arena,
	                .stack = out->stack, .scap = out->scap, .memo = out->memo, .nmemo = out->nmemo };
	int rc = run(&m);
	if (rc == 0) {
		if (m.sp != 1 || m.nmarks) {
			rc = perr(&m, "STOP with %zu values and %zu marks left (one value expected)", m.sp, m.nmarks);
		} else {
			out->root = m.stack[0];
		}
	}
	/* What the next parse may reuse: a memo all NULL again. */
	if (m.scap * sizeof *m.stack > KEEP_ARRAY) {
		free(m.stack);
		m.stack = NULL;
		m.scap = 0;
	}
	if (m.nmemo * sizeof *m.memo > KEEP_ARRAY) {
		free(m.memo);
		m.memo = NULL;
		m.nmemo = 0;
	} else if (m.memo_hi) {
		memset(m.memo, 0, m.memo_hi * sizeof *m.memo);
	}
	out->stack = m.stack;
	out->scap = m.scap;
	out->memo = m.memo;
	out->nmemo = m.nmemo;
	return rc;
}

int nw_pickle_parse(const uint8_t *data, size_t len, struct nw_pickle *out, char err[NW_PICKLE_ERR_LEN])
{
	memset(out, 0, sizeof *out);
	return nw_pickle_reparse(data, len, out, err);
}

void nw_pickle_free(struct nw_pickle *p)
{
	nw_arena_free(p->arena);
	free(p->stack);
	free(p->memo);
	memset(p, 0, sizeof *p);
}
