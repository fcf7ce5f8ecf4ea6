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

struct nw_arena_block {
	struct nw_arena_block *next;
	size_t used, size;
	max_align_t data[];
};

struct nw_arena {
	struct nw_arena_block *head;
	size_t total, limit;
};

struct nw_arena *nw_arena_new(size_t limit)
{
	struct nw_arena *a = calloc(1, sizeof *a);
	if (a)
		a->limit = limit && limit < NW_PICKLE_MEM_MAX ? limit : NW_PICKLE_MEM_MAX;
	return a;
}

void *nw_arena_alloc(struct nw_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	struct nw_arena_block *b = a->head;
	if (!b || b->size - b->used < n) {
		size_t size = n > 65536 ? n : 65536;
		if (a->total + size > a->limit)
			return NULL;
		b = malloc(sizeof *b + size);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = size;
		b->next = a->head;
		a->head = b;
		a->total += size;
	}
	void *p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

void nw_arena_free(struct nw_arena *a)
{
	if (!a)
		return;
	for (struct nw_arena_block *b = a->head, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	free(a);
}

struct nw_pv *nw_pv_new(struct nw_arena *a, int type)
{
	struct nw_pv *v = nw_arena_alloc(a, sizeof *v);
	if (v) {
		memset(v, 0, sizeof *v);
		v->type = (uint8_t)type;
	}
	return v;
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
	struct nw_pv **items = nw_arena_alloc(a, cap * sizeof *items);
	if (!items)
		return -1;
	if (c->n)
		memcpy(items, c->u.items, c->n * sizeof *items);
	c->u.items = items;
	c->cap = (uint32_t)cap;
	return 0;
}

int nw_pv_push(struct nw_arena *a, struct nw_pv *c, struct nw_pv *v)
{
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 4;
		if (cap < c->cap)
			return -1;
		struct nw_pv **items = nw_arena_alloc(a, (size_t)cap * sizeof *items);
		if (!items)
			return -1;
		if (c->n)
			memcpy(items, c->u.items, c->n * sizeof *items);
		c->u.items = items;          /* the old array stays in the arena: at most 2x */
		c->cap = cap;
	}
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
	size_t nmemo;
	size_t nstored;                      /* distinct indices stored (len(memo) in Python) */
	char *err;
	struct nw_pv *small[256];            /* shared ints 0..255 */
};

static int perr(struct pm *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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

static int need(struct pm *m, size_t n)
{
	if (m->len - m->pos < n)
		return perr(m, "truncated (the opcode needs %zu more bytes, %zu left)", n, m->len - m->pos);
	return 0;
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int push(struct pm *m, struct nw_pv *v)
{
	if (!v)
		return perr(m, "the values would take more than the memory limit");
	if (m->sp == m->scap) {
		size_t cap = m->scap ? m->scap * 2 : 64;
		/* The stack grows one entry per opcode at most: the input bounds it. */
		struct nw_pv **s = realloc(m->stack, cap * sizeof *s);
		if (!s)
			return perr(m, "out of memory");
		m->stack = s;
		m->scap = cap;
	}
	m->stack[m->sp++] = v;
	return 0;
}

static struct nw_pv *pop(struct pm *m)
{
	size_t floor = m->nmarks ? m->marks[m->nmarks - 1] : 0;
	if (m->sp <= floor) {
		perr(m, "stack underflow");
		return NULL;
	}
	return m->stack[--m->sp];
}

static struct nw_pv *top(struct pm *m)
{
	size_t floor = m->nmarks ? m->marks[m->nmarks - 1] : 0;
	if (m->sp <= floor) {
		perr(m, "stack underflow");
		return NULL;
	}
	return m->stack[m->sp - 1];
}

/* The items above the topmost mark, and the mark popped. */
static int pop_mark(struct pm *m, size_t *from)
{
	if (!m->nmarks)
		return perr(m, "no mark to pop");
	*from = m->marks[--m->nmarks];
	return 0;
}

static struct nw_pv *scalar(struct pm *m, int type)
{
	return nw_pv_new(m->a, type);
}

static int push_int(struct pm *m, int64_t i)
{
	/* Small ints are shared: values are never changed once built. */
	if (i >= 0 && i < 256) {
		if (!m->small[i] && (m->small[i] = scalar(m, NW_PV_INT)))
			m->small[i]->u.i = i;
		return push(m, m->small[i]);
	}
	struct nw_pv *v = scalar(m, NW_PV_INT);
	if (v)
		v->u.i = i;
	return push(m, v);
}

static int push_str(struct pm *m, int type, const uint8_t *s, uint64_t n)
{
	struct nw_pv *v = scalar(m, type);
	if (v) {
		v->u.str.s = (const char *)s;
		v->u.str.len = (size_t)n;
	}
	return push(m, v);
}

/* Counted bytes: length of `lw` bytes, then the data. */
static int counted(struct pm *m, int lw, int type)
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

static int line_num(struct pm *m, int is_float)
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

static int memo_put(struct pm *m, uint64_t idx)
{
	struct nw_pv *v = top(m);
	if (!v)
		return -1;
	/* Every memo entry costs at least one opcode byte: an index beyond
	 * the input's size is not one a real pickler writes. */
	if (idx > m->len)
		return perr(m, "memo index %" PRIu64 " beyond the input's size", idx);
	if (idx >= m->nmemo) {
		size_t n = m->nmemo ? m->nmemo : 16;
		while (n <= idx)
			n *= 2;
		struct nw_pv **mm = realloc(m->memo, n * sizeof *mm);
		if (!mm)
			return perr(m, "out of memory");
		memset(mm + m->nmemo, 0, (n - m->nmemo) * sizeof *mm);
		m->memo = mm;
		m->nmemo = n;
	}
	if (!m->memo[idx])
		m->nstored++;
	m->memo[idx] = v;
	return 0;
}

static int memo_get(struct pm *m, uint64_t idx)
{
	if (idx >= m->nmemo || !m->memo[idx])
		return perr(m, "memo index %" PRIu64 " was never stored", idx);
	return push(m, m->memo[idx]);
}

static int seq_from_mark(struct pm *m, int type)
{
	size_t from = 0;
	if (pop_mark(m, &from))
		return -1;
	struct nw_pv *c = nw_pv_new(m->a, type);
	if (!c || pv_reserve(m->a, c, m->sp - from))
		return perr(m, "the values would take more than the memory limit");
	for (size_t i = from; i < m->sp; i++)
		if (nw_pv_push(m->a, c, m->stack[i]))
			return perr(m, "the values would take more than the memory limit");
	m->sp = from;
	return push(m, c);
}

static int tuple_n(struct pm *m, int n)
{
	size_t floor = m->nmarks ? m->marks[m->nmarks - 1] : 0;
	if (m->sp - floor < (size_t)n)
		return perr(m, "stack underflow");
	struct nw_pv *c = nw_pv_new(m->a, NW_PV_TUPLE);
	if (!c)
		return perr(m, "the values would take more than the memory limit");
	for (size_t i = m->sp - (size_t)n; i < m->sp; i++)
		if (nw_pv_push(m->a, c, m->stack[i]))
			return perr(m, "the values would take more than the memory limit");
	m->sp -= (size_t)n;
	return push(m, c);
}

/* APPEND(S), SETITEM(S), ADDITEMS: items [from, sp) into the container below. */
static int fill(struct pm *m, size_t from, int dict)
{
	if (from == 0)
		return perr(m, "no container below the items");
	struct nw_pv *c = m->stack[from - 1];
	int want = dict ? NW_PV_DICT : NW_PV_LIST;
	if (c->type != want)
		return perr(m, "items added to a value that is not a %s", dict ? "dict" : "list or set");
	if (dict && (m->sp - from) % 2)
		return perr(m, "a key without a value");
	if (pv_reserve(m->a, c, m->sp - from))
		return perr(m, "the values would take more than the memory limit");
	for (size_t i = from; i < m->sp; i++)
		if (nw_pv_push(m->a, c, m->stack[i]))
			return perr(m, "the values would take more than the memory limit");
	m->sp = from;
	return 0;
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

static int step(struct pm *m, int *stop)
{
	m->op_at = m->pos;
	uint8_t op = m->d[m->pos++];
	const char *bad = refused_name(op);
	if (bad)
		return perr(m, "opcode %s (0x%02x) imports or calls code: refused (a Flight Recorder "
		            "dump holds only data)", bad, op);
	size_t from = 0;
	struct nw_pv *v;
	switch (op) {
	case 0x80:                                      /* PROTO */
		if (need(m, 1))
			return -1;
		if (m->d[m->pos] > 5)
			return perr(m, "pickle protocol %u (this reader knows 0-5)", m->d[m->pos]);
		m->pos++;
		return 0;
	case 0x95:                                      /* FRAME: a length hint */
		if (need(m, 8))
			return -1;
		m->pos += 8;
		return 0;
	case '.':                                       /* STOP */
		*stop = 1;
		return 0;
	case '(':                                       /* MARK */
		if (m->nmarks == NW_PICKLE_MAX_MARKS)
			return perr(m, "marks nested deeper than %d", NW_PICKLE_MAX_MARKS);
		m->marks[m->nmarks++] = m->sp;
		return 0;
	case '0':                                       /* POP */
		return pop(m) ? 0 : -1;
	case '1':                                       /* POP_MARK */
		if (pop_mark(m, &from))
			return -1;
		m->sp = from;
		return 0;
	case '2':                                       /* DUP */
		return (v = top(m)) ? push(m, v) : -1;
	case 'N':
		return push(m, scalar(m, NW_PV_NONE));
	case 0x88:
	case 0x89:
		if ((v = scalar(m, NW_PV_BOOL)))
			v->u.i = op == 0x88;
		return push(m, v);
	case 'I':
		return line_num(m, 0);
	case 'L':
		return line_num(m, 0);
	case 'F':
		return line_num(m, 1);
	case 'J':
		if (need(m, 4))
			return -1;
		m->pos += 4;
		return push_int(m, (int32_t)(uint32_t)le(m->d + m->pos - 4, 4));
	case 'K':
		if (need(m, 1))
			return -1;
		return push_int(m, m->d[m->pos++]);
	case 'M':
		if (need(m, 2))
			return -1;
		m->pos += 2;
		return push_int(m, (int64_t)le(m->d + m->pos - 2, 2));
	case 0x8a:                                      /* LONG1 */
	case 0x8b: {                                    /* LONG4 */
		int lw = op == 0x8a ? 1 : 4;
		if (need(m, (size_t)lw))
			return -1;
		uint64_t n = le(m->d + m->pos, lw);
		m->pos += (size_t)lw;
		if (n > 8)
			return perr(m, "an integer of %" PRIu64 " bytes (more than 64 bits)", n);
		if (need(m, (size_t)n))
			return -1;
		uint64_t x = le(m->d + m->pos, (int)n);
		if (n && n < 8 && (m->d[m->pos + n - 1] & 0x80))
			x |= ~0ull << (8 * n);              /* two's complement, sign-extended */
		m->pos += (size_t)n;
		return push_int(m, (int64_t)x);
	}
	case 'G': {                                     /* BINFLOAT: big-endian */
		if (need(m, 8))
			return -1;
		uint64_t x = 0;
		for (int i = 0; i < 8; i++)
			x = x << 8 | m->d[m->pos + i];
		m->pos += 8;
		double f;
		memcpy(&f, &x, sizeof f);
		if ((v = scalar(m, NW_PV_FLOAT)))
			v->u.f = f;
		return push(m, v);
	}
	case 'S':                                       /* STRING: a quoted repr */
	case 'V': {                                     /* UNICODE: raw-unicode-escape */
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
		return push_str(m, op == 'S' ? NW_PV_BYTES : NW_PV_STR, s, n);
	}
	case 'T':
		return counted(m, 4, NW_PV_BYTES);
	case 'U':
		return counted(m, 1, NW_PV_BYTES);
	case 'X':
		return counted(m, 4, NW_PV_STR);
	case 0x8c:
		return counted(m, 1, NW_PV_STR);
	case 0x8d:
		return counted(m, 8, NW_PV_STR);
	case 'B':
		return counted(m, 4, NW_PV_BYTES);
	case 'C':
		return counted(m, 1, NW_PV_BYTES);
	case 0x8e:
	case 0x96:                                      /* BINBYTES8, BYTEARRAY8 */
		return counted(m, 8, NW_PV_BYTES);
	case 0x97:
	case 0x98:
		return perr(m, "opcode %s (0x%02x): out-of-band buffers are not data of a file: refused",
		            op == 0x97 ? "NEXT_BUFFER" : "READONLY_BUFFER", op);
	case ']':
		return push(m, nw_pv_new(m->a, NW_PV_LIST));
	case ')':
		return push(m, nw_pv_new(m->a, NW_PV_TUPLE));
	case '}':
		return push(m, nw_pv_new(m->a, NW_PV_DICT));
	case 0x8f:                                      /* EMPTY_SET */
		return push(m, nw_pv_new(m->a, NW_PV_LIST));
	case 'l':
		return seq_from_mark(m, NW_PV_LIST);
	case 't':
		return seq_from_mark(m, NW_PV_TUPLE);
	case 0x91:                                      /* FROZENSET */
		return seq_from_mark(m, NW_PV_LIST);
	case 'd':                                       /* DICT */
		if (pop_mark(m, &from))
			return -1;
		if ((m->sp - from) % 2)
			return perr(m, "a key without a value");
		if (!(v = nw_pv_new(m->a, NW_PV_DICT)))
			return perr(m, "the values would take more than the memory limit");
		for (size_t i = from; i < m->sp; i++)
			if (nw_pv_push(m->a, v, m->stack[i]))
				return perr(m, "the values would take more than the memory limit");
		m->sp = from;
		return push(m, v);
	case 0x85:
		return tuple_n(m, 1);
	case 0x86:
		return tuple_n(m, 2);
	case 0x87:
		return tuple_n(m, 3);
	case 'a':                                       /* APPEND */
		if (m->sp < 2 || (m->nmarks && m->sp - 2 < m->marks[m->nmarks - 1]))
			return perr(m, "stack underflow");
		return fill(m, m->sp - 1, 0);
	case 's':                                       /* SETITEM */
		if (m->sp < 3 || (m->nmarks && m->sp - 3 < m->marks[m->nmarks - 1]))
			return perr(m, "stack underflow");
		return fill(m, m->sp - 2, 1);
	case 'e':                                       /* APPENDS */
	case 0x90:                                      /* ADDITEMS */
		if (pop_mark(m, &from))
			return -1;
		return fill(m, from, 0);
	case 'u':                                       /* SETITEMS */
		if (pop_mark(m, &from))
			return -1;
		return fill(m, from, 1);
	case 'g': {                                     /* GET */
		unsigned long long x;
		return line_index(m, &x) ? -1 : memo_get(m, x);
	}
	case 'h':
		if (need(m, 1))
			return -1;
		return memo_get(m, m->d[m->pos++]);
	case 'j':
		if (need(m, 4))
			return -1;
		m->pos += 4;
		return memo_get(m, le(m->d + m->pos - 4, 4));
	case 'p': {                                     /* PUT */
		unsigned long long x;
		return line_index(m, &x) ? -1 : memo_put(m, x);
	}
	case 'q':
		if (need(m, 1))
			return -1;
		return memo_put(m, m->d[m->pos++]);
	case 'r':
		if (need(m, 4))
			return -1;
		m->pos += 4;
		return memo_put(m, le(m->d + m->pos - 4, 4));
	case 0x94:                                      /* MEMOIZE: memo[len(memo)] */
		return memo_put(m, m->nstored);
	default:
		return perr(m, "unknown opcode 0x%02x", op);
	}
}

int nw_pickle_parse(const uint8_t *data, size_t len, struct nw_pickle *out, char err[NW_PICKLE_ERR_LEN])
{
	memset(out, 0, sizeof *out);
	err[0] = '\0';
	size_t limit = len > (NW_PICKLE_MEM_MAX - (1u << 20)) / NW_PICKLE_MEM_FACTOR
	                   ? NW_PICKLE_MEM_MAX : len * NW_PICKLE_MEM_FACTOR + (1u << 20);
	struct pm m = { .d = data, .len = len, .err = err };
	if (!(out->arena = m.a = nw_arena_new(limit))) {
		snprintf(err, NW_PICKLE_ERR_LEN, "out of memory");
		return -1;
	}
	int stop = 0, rc = 0;
	while (!stop && rc == 0) {
		if (m.pos >= len) {
			m.op_at = m.pos;
			rc = perr(&m, "truncated (no STOP opcode)");
			break;
		}
		rc = step(&m, &stop);
	}
	if (rc == 0) {
		if (m.sp != 1 || m.nmarks) {
			rc = perr(&m, "STOP with %zu values and %zu marks left (one value expected)", m.sp, m.nmarks);
		} else {
			out->root = m.stack[0];
		}
	}
	free(m.stack);
	free(m.memo);
	return rc;
}

void nw_pickle_free(struct nw_pickle *p)
{
	nw_arena_free(p->arena);
	memset(p, 0, sizeof *p);
}
