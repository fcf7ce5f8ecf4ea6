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
	size_t len;
	struct nw_arena *a;
	struct nw_pv **stack;
	size_t scap;
	size_t marks[NW_PICKLE_MAX_MARKS];
	struct nw_pv **memo;
	size_t nmemo;                        /* allocated; [0, memo_hi) may be set, the rest is NULL */
	size_t memo_hi;
	size_t nstored;                      /* distinct indices stored (len(memo) in Python) */
	char *err;
	struct nw_pv *none, *bools[2];       /* shared: values are never changed once built */
	struct nw_pv *small[256];            /* shared ints 0..255 */
	size_t sp, nmarks, at;               /* where run() stopped */
};

static __attribute__((noinline, cold)) int perr(struct pm *m, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int perr(struct pm *m, size_t at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(m->err, NW_PICKLE_ERR_LEN, "pickle offset %zu: ", at);
	if (n > 0 && n < NW_PICKLE_ERR_LEN)
		vsnprintf(m->err + n, NW_PICKLE_ERR_LEN - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static inline uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The fixed widths, in a form the compiler makes one load of. */
static inline uint32_t le4(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint32_t le2(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static __attribute__((noinline)) int grow_stack(struct pm *m, size_t at)
{
	size_t cap = m->scap ? m->scap * 2 : 64;
	/* The stack grows one entry per opcode at most: the input bounds it. */
	struct nw_pv **s = realloc(m->stack, cap * sizeof *s);
	if (!s)
		return perr(m, at, "out of memory");
	m->stack = s;
	m->scap = cap;
	return 0;
}

static __attribute__((noinline)) int grow_memo(struct pm *m, size_t at, uint64_t idx)
{
	size_t n = m->nmemo ? m->nmemo : 16;
	while (n <= idx)
		n *= 2;
	struct nw_pv **mm = realloc(m->memo, n * sizeof *mm);
	if (!mm)
		return perr(m, at, "out of memory");
	memset(mm + m->nmemo, 0, (n - m->nmemo) * sizeof *mm);
	m->memo = mm;
	m->nmemo = n;
	return 0;
}

/* None, True, False, 0..255: one value each per parse. */
static inline struct nw_pv *shared(struct pm *m, struct nw_pv **slot, int type, int64_t i)
{
	if (!*slot && (*slot = pv_new(m->a, type)))
		(*slot)->u.i = i;
	return *slot;
}

static inline struct nw_pv *int_value(struct pm *m, int64_t i)
{
	if (i >= 0 && i < 256)
		return shared(m, &m->small[i], NW_PV_INT, i);
	struct nw_pv *v = pv_new(m->a, NW_PV_INT);
	if (v)
		v->u.i = i;
	return v;
}

static inline struct nw_pv *str_value(struct pm *m, int type, const uint8_t *s, uint64_t n)
{
	struct nw_pv *v = pv_new(m->a, type);
	if (v) {
		v->u.str.s = (const char *)s;
		v->u.str.len = (size_t)n;
	}
	return v;
}

/* A text argument up to '\n' (protocol 0); *next: after it. */
static int line(struct pm *m, size_t pos, size_t at, const uint8_t **s, size_t *n, size_t *next)
{
	const uint8_t *nl = memchr(m->d + pos, '\n', m->len - pos);
	if (!nl)
		return perr(m, at, "truncated (no end of line)");
	*s = m->d + pos;
	*n = (size_t)(nl - *s);
	*next = (size_t)(nl - m->d) + 1;
	return 0;
}

/* A memo index as decimal text up to '\n' (GET, PUT: protocol 0). */
static int line_index(struct pm *m, size_t pos, size_t at, uint64_t *x, size_t *next)
{
	const uint8_t *s = NULL;
	size_t n = 0;
	if (line(m, pos, at, &s, &n, next))
		return -1;
	char b[24], *end;
	if (!n || n >= sizeof b)
		return perr(m, at, "bad memo index");
	memcpy(b, s, n);
	b[n] = '\0';
	*x = strtoull(b, &end, 10);
	return *end ? perr(m, at, "bad memo index") : 0;
}

/* INT, LONG, FLOAT (protocol 0): *out the value (NULL: over the limit). */
static __attribute__((noinline)) int line_num(struct pm *m, size_t pos, size_t at, int is_float,
                                              struct nw_pv **out, size_t *next)
{
	const uint8_t *s = NULL;
	size_t n = 0;
	if (line(m, pos, at, &s, &n, next))
		return -1;
	char b[64], *end;
	if (n == 0 || n >= sizeof b)
		return perr(m, at, "a number of %zu characters", n);
	memcpy(b, s, n);
	b[n] = '\0';
	if (n && b[n - 1] == 'L')          /* LONG's suffix */
		b[n - 1] = '\0';
	errno = 0;
	if (is_float) {
		double f = strtod(b, &end);
		if (end == b || *end)
			return perr(m, at, "not a number: '%s'", b);
		if ((*out = pv_new(m->a, NW_PV_FLOAT)))
			(*out)->u.f = f;
		return 0;
	}
	if (!strcmp(b, "00") || !strcmp(b, "01")) {   /* protocol 0's False/True */
		if ((*out = pv_new(m->a, NW_PV_BOOL)))
			(*out)->u.i = b[1] == '1';
		return 0;
	}
	long long x = strtoll(b, &end, 10);
	if (errno || end == b || *end)
		return perr(m, at, "not a 64-bit integer: '%s'", b);
	*out = int_value(m, x);
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

/* An opcode run has no label for: refused (it imports or calls code, or
 * its data is out of band) or unknown. */
static __attribute__((cold)) int refuse(struct pm *m, size_t at, uint8_t op)
{
	if (op == 0x97 || op == 0x98)
		return perr(m, at, "opcode %s (0x%02x): out-of-band buffers are not data of a file: refused",
		            op == 0x97 ? "NEXT_BUFFER" : "READONLY_BUFFER", op);
	const char *bad = refused_name(op);
	if (bad)
		return perr(m, at, "opcode %s (0x%02x) imports or calls code: refused (a Flight Recorder "
		            "dump holds only data)", bad, op);
	return perr(m, at, "unknown opcode 0x%02x", op);
}

/* STRING (a quoted repr: bytes), UNICODE (raw-unicode-escape: str), up
 * to '\n' (protocol 0); *out the value (NULL: over the limit). */
static int text_value(struct pm *m, size_t pos, size_t at, uint8_t op, struct nw_pv **out, size_t *next)
{
	const uint8_t *s = NULL;
	size_t n = 0;
	if (line(m, pos, at, &s, &n, next))
		return -1;
	if (op == 'S') {
		if (n < 2 || (s[0] != '\'' && s[0] != '"') || s[n - 1] != s[0])
			return perr(m, at, "STRING argument not quoted");
		s++;
		n -= 2;
	}
	*out = str_value(m, op == 'S' ? NW_PV_BYTES : NW_PV_STR, s, n);
	return 0;
}

/* ---- the machine's registers and steps ---- */

/* run's registers: a local of run alone, whose address reaches only the
 * steps below, always inlined into run; nothing else sees it, so the
 * compiler keeps its fields in registers as it would locals (a dump is tens
 * of thousands of opcodes of a few kinds in a few recurring orders). The
 * helpers above take m and the values they need. */
struct vm {
	struct pm *m;
	const uint8_t *d;
	size_t len;
	struct nw_arena *a;
	struct nw_pv **stack, **memo;        /* m's, reloaded when a helper grows them */
	size_t scap, nmemo, memo_hi, nstored;
	size_t pos;                          /* the next byte to read */
	size_t at;                           /* the opcode being run: errors name it */
	size_t sp, nmarks, floor;            /* floor: the last mark's stack top, 0 without one */
};

/* A step of the machine: 0, or -1 with the error in m->err. */
#define VM_STEP static inline __attribute__((always_inline)) int

/* The opcode at r->at needs n more bytes. */
VM_STEP need(struct vm *r, size_t n)
{
	if (__builtin_expect(r->len - r->pos < n, 0))
		return perr(r->m, r->at, "truncated (the opcode needs %zu more bytes, %zu left)", n, r->len - r->pos);
	return 0;
}

/* Push v (NULL: the arena's limit). */
VM_STEP push(struct vm *r, struct nw_pv *v)
{
	if (__builtin_expect(!v, 0))
		return perr(r->m, r->at, "the values would take more than the memory limit");
	if (__builtin_expect(r->sp == r->scap, 0)) {
		if (grow_stack(r->m, r->at))
			return -1;
		r->stack = r->m->stack;
		r->scap = r->m->scap;
	}
	r->stack[r->sp++] = v;
	return 0;
}

VM_STEP underflow(struct vm *r)
{
	return perr(r->m, r->at, "stack underflow");
}

/* The last mark gone: *from, where its items start. */
VM_STEP pop_mark(struct vm *r, size_t *from)
{
	if (!r->nmarks)
		return perr(r->m, r->at, "no mark to pop");
	*from = r->m->marks[--r->nmarks];
	r->floor = r->nmarks ? r->m->marks[r->nmarks - 1] : 0;
	return 0;
}

/* Items [f, sp) moved into container c (NULL: the arena's limit),
 * reserved at once. */
VM_STEP take(struct vm *r, struct nw_pv *c, size_t f)
{
	size_t k = r->sp - f;
	if (!c || ((size_t)c->cap - c->n < k && pv_reserve(r->a, c, k)))
		return perr(r->m, r->at, "the values would take more than the memory limit");
	if (k <= 2) {                        /* APPEND, SETITEM: no call */
		if (k)
			c->u.items[c->n] = r->stack[f];
		if (k == 2)
			c->u.items[c->n + 1] = r->stack[f + 1];
	} else {
		memcpy(c->u.items + c->n, r->stack + f, k * sizeof *r->stack);
	}
	c->n += (uint32_t)k;
	r->sp = f;
	return 0;
}

/* APPEND(S), SETITEM(S), ADDITEMS: items [from, sp) into the container below. */
VM_STEP fill(struct vm *r, size_t from, int dict)
{
	if (from == 0)
		return perr(r->m, r->at, "no container below the items");
	struct nw_pv *c = r->stack[from - 1];
	if (c->type != (dict ? NW_PV_DICT : NW_PV_LIST))
		return perr(r->m, r->at, "items added to a value that is not a %s", dict ? "dict" : "list or set");
	if (dict && (r->sp - from) % 2)
		return perr(r->m, r->at, "a key without a value");
	return take(r, c, from);
}

VM_STEP memo_get(struct vm *r, uint64_t x)
{
	if (__builtin_expect(x >= r->nmemo || !r->memo[x], 0))
		return perr(r->m, r->at, "memo index %" PRIu64 " was never stored", x);
	return push(r, r->memo[x]);
}

/* Every memo entry costs at least one opcode byte: an index beyond the
 * input's size is not one a real pickler writes. */
VM_STEP memo_put(struct vm *r, uint64_t x)
{
	if (r->sp <= r->floor)
		return underflow(r);
	if (__builtin_expect(x > r->len, 0))
		return perr(r->m, r->at, "memo index %" PRIu64 " beyond the input's size", x);
	if (__builtin_expect(x >= r->nmemo, 0)) {
		if (grow_memo(r->m, r->at, x))
			return -1;
		r->memo = r->m->memo;
		r->nmemo = r->m->nmemo;
	}
	r->nstored += !r->memo[x];
	if (x >= r->memo_hi)
		r->memo_hi = x + 1;
	r->memo[x] = r->stack[r->sp - 1];
	return 0;
}

/* ---- the opcodes, one step each (their table is PICKLE_OPCODES) ---- */

VM_STEP proto(struct vm *r)
{
	if (need(r, 1))
		return -1;
	if (r->d[r->pos] > 5)
		return perr(r->m, r->at, "pickle protocol %u (this reader knows 0-5)", r->d[r->pos]);
	r->pos++;
	return 0;
}

VM_STEP frame(struct vm *r)                 /* a length hint */
{
	if (need(r, 8))
		return -1;
	r->pos += 8;
	return 0;
}

VM_STEP mark(struct vm *r)
{
	if (r->nmarks == NW_PICKLE_MAX_MARKS)
		return perr(r->m, r->at, "marks nested deeper than %d", NW_PICKLE_MAX_MARKS);
	r->m->marks[r->nmarks++] = r->sp;
	r->floor = r->sp;
	return 0;
}

VM_STEP pop(struct vm *r)
{
	if (r->sp <= r->floor)
		return underflow(r);
	r->sp--;
	return 0;
}

VM_STEP pop_to_mark(struct vm *r)
{
	size_t from = 0;
	if (pop_mark(r, &from))
		return -1;
	r->sp = from;
	return 0;
}

VM_STEP dup(struct vm *r)
{
	if (r->sp <= r->floor)
		return underflow(r);
	return push(r, r->stack[r->sp - 1]);
}

/* None, True, False: one value each per parse. */
VM_STEP constant(struct vm *r, struct nw_pv **slot, int type, int64_t i)
{
	return push(r, shared(r->m, slot, type, i));
}

/* INT, LONG, FLOAT (protocol 0: text up to '\n'). */
VM_STEP number_line(struct vm *r, int is_float)
{
	struct nw_pv *v = NULL;
	size_t next = 0;
	if (line_num(r->m, r->pos, r->at, is_float, &v, &next))
		return -1;
	r->pos = next;
	return push(r, v);
}

/* BININT (4 bytes, signed), BININT1, BININT2 (unsigned). */
VM_STEP binint(struct vm *r, int w)
{
	if (need(r, (size_t)w))
		return -1;
	const uint8_t *p = r->d + r->pos;
	r->pos += (size_t)w;
	return push(r, int_value(r->m, w == 4 ? (int32_t)le4(p) : w == 2 ? (int64_t)le2(p) : p[0]));
}

/* LONG1, LONG4: a length of lw bytes, then a little-endian two's
 * complement integer of that many bytes (at most 8). */
VM_STEP long_value(struct vm *r, int lw)
{
	const uint8_t *d = r->d;
	if (need(r, (size_t)lw))
		return -1;
	uint64_t x = le(d + r->pos, lw);
	r->pos += (size_t)lw;
	if (x > 8)
		return perr(r->m, r->at, "an integer of %" PRIu64 " bytes (more than 64 bits)", x);
	if (need(r, x))
		return -1;
	size_t pos = r->pos;
	/* Eight bytes at once where the input has them (LONG1 holds times in ns). */
	uint64_t i = r->len - pos >= 8 ? ((uint64_t)le4(d + pos) | (uint64_t)le4(d + pos + 4) << 32) &
	                                     (x == 8 ? ~0ull : (1ull << (8 * x)) - 1)
	                               : le(d + pos, (int)x);
	if (x && x < 8 && (d[pos + x - 1] & 0x80))
		i |= ~0ull << (8 * x);                  /* two's complement, sign-extended */
	r->pos = pos + (size_t)x;
	return push(r, int_value(r->m, (int64_t)i));
}

/* BINFLOAT: an IEEE double, big-endian. */
VM_STEP binfloat(struct vm *r)
{
	if (need(r, 8))
		return -1;
	uint64_t i = 0;
	for (int k = 0; k < 8; k++)
		i = i << 8 | r->d[r->pos + k];
	double f;
	memcpy(&f, &i, sizeof f);
	struct nw_pv *v = pv_new(r->a, NW_PV_FLOAT);
	if (v)
		v->u.f = f;
	r->pos += 8;
	return push(r, v);
}

/* STRING (a quoted repr), UNICODE (raw-unicode-escape): protocol 0. */
VM_STEP text_line(struct vm *r, uint8_t op)
{
	struct nw_pv *v = NULL;
	size_t next = 0;
	if (text_value(r->m, r->pos, r->at, op, &v, &next))
		return -1;
	r->pos = next;
	return push(r, v);
}

/* Counted bytes or text: a length of lw bytes, then the data. */
VM_STEP counted(struct vm *r, int lw, int type)
{
	if (need(r, (size_t)lw))
		return -1;
	uint64_t x = le(r->d + r->pos, lw);
	r->pos += (size_t)lw;
	if (x > r->len - r->pos)
		return perr(r->m, r->at, "a string of %" PRIu64 " bytes runs past the end of the input", x);
	r->pos += (size_t)x;
	return push(r, str_value(r->m, type, r->d + r->pos - x, x));
}

VM_STEP empty(struct vm *r, int type)
{
	return push(r, pv_new(r->a, type));
}

/* LIST, TUPLE, FROZENSET, DICT: the items above the last mark. */
VM_STEP collect(struct vm *r, int type)
{
	size_t from = 0;
	if (pop_mark(r, &from))
		return -1;
	if (type == NW_PV_DICT && (r->sp - from) % 2)
		return perr(r->m, r->at, "a key without a value");
	struct nw_pv *c = pv_new(r->a, type);
	if (take(r, c, from))
		return -1;
	return push(r, c);
}

/* TUPLE1, TUPLE2, TUPLE3. */
VM_STEP tuple_of(struct vm *r, size_t n)
{
	if (r->sp - r->floor < n)
		return underflow(r);
	struct nw_pv *c = pv_new(r->a, NW_PV_TUPLE);
	if (take(r, c, r->sp - n))
		return -1;
	return push(r, c);
}

/* APPEND (n 1: one item), SETITEM (n 2: a key and its value). */
VM_STEP add_one(struct vm *r, size_t n)
{
	if (r->sp < n + 1 || (r->nmarks && r->sp - (n + 1) < r->floor))
		return underflow(r);
	return fill(r, r->sp - n, n == 2);
}

/* APPENDS, ADDITEMS, SETITEMS: the items above the last mark. */
VM_STEP add_marked(struct vm *r, int dict)
{
	size_t from = 0;
	if (pop_mark(r, &from))
		return -1;
	return fill(r, from, dict);
}

/* GET, PUT (protocol 0): a decimal index up to '\n'; *x the index. */
VM_STEP index_line(struct vm *r, uint64_t *x)
{
	size_t next = 0;
	if (line_index(r->m, r->pos, r->at, x, &next))
		return -1;
	r->pos = next;
	return 0;
}

/* BINGET, LONG_BINGET, BINPUT, LONG_BINPUT: an index of w bytes; *x the index. */
VM_STEP index_bin(struct vm *r, int w, uint64_t *x)
{
	if (need(r, (size_t)w))
		return -1;
	r->pos += (size_t)w;
	*x = w == 4 ? le4(r->d + r->pos - 4) : r->d[r->pos - 1];
	return 0;
}

VM_STEP get(struct vm *r)
{
	uint64_t x = 0;
	return index_line(r, &x) ? -1 : memo_get(r, x);
}

VM_STEP binget(struct vm *r)
{
	if (need(r, 1))
		return -1;
	r->pos++;
	/* Keys and values repeat: runs of BINGET are the commonest pair. */
	while (r->len - r->pos >= 2 && r->d[r->pos] == 'h' && r->d[r->pos - 1] < r->nmemo &&
	       r->memo[r->d[r->pos - 1]] && r->sp < r->scap) {
		r->stack[r->sp++] = r->memo[r->d[r->pos - 1]];
		r->at = r->pos;
		r->pos += 2;
	}
	return memo_get(r, r->d[r->pos - 1]);
}

VM_STEP long_binget(struct vm *r)
{
	uint64_t x = 0;
	return index_bin(r, 4, &x) ? -1 : memo_get(r, x);
}

VM_STEP put(struct vm *r)
{
	uint64_t x = 0;
	return index_line(r, &x) ? -1 : memo_put(r, x);
}

VM_STEP binput(struct vm *r, int w)
{
	uint64_t x = 0;
	return index_bin(r, w, &x) ? -1 : memo_put(r, x);
}

/* The opcodes run has a label for, by pickletools' names: (name, byte,
 * step). Bytes seen together are next to each other. STOP is run's own
 * exit; a byte not here is refused or unknown (refuse). */
#define PICKLE_OPCODES(X)                                                           \
	X(PROTO, 0x80, proto(r))                                                        \
	X(FRAME, 0x95, frame(r))                                                        \
	X(MARK, '(', mark(r))                                                           \
	X(POP, '0', pop(r))                                                             \
	X(POP_MARK, '1', pop_to_mark(r))                                                \
	X(DUP, '2', dup(r))                                                             \
	X(NONE, 'N', constant(r, &r->m->none, NW_PV_NONE, 0))                           \
	X(NEWTRUE, 0x88, constant(r, &r->m->bools[1], NW_PV_BOOL, 1))                   \
	X(NEWFALSE, 0x89, constant(r, &r->m->bools[0], NW_PV_BOOL, 0))                  \
	X(INT, 'I', number_line(r, 0))                                                  \
	X(LONG, 'L', number_line(r, 0))                                                 \
	X(FLOAT, 'F', number_line(r, 1))                                                \
	X(BININT, 'J', binint(r, 4))                                                    \
	X(BININT1, 'K', binint(r, 1))                                                   \
	X(BININT2, 'M', binint(r, 2))                                                   \
	X(LONG1, 0x8a, long_value(r, 1))                                                \
	X(LONG4, 0x8b, long_value(r, 4))                                                \
	X(BINFLOAT, 'G', binfloat(r))                                                   \
	X(STRING, 'S', text_line(r, 'S'))                                               \
	X(UNICODE, 'V', text_line(r, 'V'))                                              \
	X(SHORT_BINSTRING, 'U', counted(r, 1, NW_PV_BYTES))                             \
	X(BINSTRING, 'T', counted(r, 4, NW_PV_BYTES))                                   \
	X(SHORT_BINBYTES, 'C', counted(r, 1, NW_PV_BYTES))                              \
	X(BINBYTES, 'B', counted(r, 4, NW_PV_BYTES))                                    \
	X(BINBYTES8, 0x8e, counted(r, 8, NW_PV_BYTES))                                  \
	X(BYTEARRAY8, 0x96, counted(r, 8, NW_PV_BYTES))                                 \
	X(SHORT_BINUNICODE, 0x8c, counted(r, 1, NW_PV_STR))                             \
	X(BINUNICODE, 'X', counted(r, 4, NW_PV_STR))                                    \
	X(BINUNICODE8, 0x8d, counted(r, 8, NW_PV_STR))                                  \
	X(EMPTY_LIST, ']', empty(r, NW_PV_LIST))                                        \
	X(EMPTY_SET, 0x8f, empty(r, NW_PV_LIST))                                        \
	X(EMPTY_TUPLE, ')', empty(r, NW_PV_TUPLE))                                      \
	X(EMPTY_DICT, '}', empty(r, NW_PV_DICT))                                        \
	X(LIST, 'l', collect(r, NW_PV_LIST))                                            \
	X(FROZENSET, 0x91, collect(r, NW_PV_LIST))                                      \
	X(TUPLE, 't', collect(r, NW_PV_TUPLE))                                          \
	X(DICT, 'd', collect(r, NW_PV_DICT))                                            \
	X(TUPLE1, 0x85, tuple_of(r, 1))                                                 \
	X(TUPLE2, 0x86, tuple_of(r, 2))                                                 \
	X(TUPLE3, 0x87, tuple_of(r, 3))                                                 \
	X(APPEND, 'a', add_one(r, 1))                                                   \
	X(SETITEM, 's', add_one(r, 2))                                                  \
	X(APPENDS, 'e', add_marked(r, 0))                                               \
	X(ADDITEMS, 0x90, add_marked(r, 0))                                             \
	X(SETITEMS, 'u', add_marked(r, 1))                                              \
	X(GET, 'g', get(r))                                                             \
	X(BINGET, 'h', binget(r))                                                       \
	X(LONG_BINGET, 'j', long_binget(r))                                             \
	X(PUT, 'p', put(r))                                                             \
	X(BINPUT, 'q', binput(r, 1))                                                    \
	X(LONG_BINPUT, 'r', binput(r, 4))                                               \
	X(MEMOIZE, 0x94, memo_put(r, r->nstored))     /* memo[len(memo)] */

/* The dispatch is threaded (a jump from the end of each opcode straight to
 * the next one's code, GCC's and clang's labels as values) rather than a
 * switch behind a refusal check: one label per opcode, each its step
 * inlined and its own jump. Every error goes through `failed`, which
 * leaves the state in m for the caller. */
static int run(struct pm *m)
{
#define ADDRESS(name, byte, step) [byte] = &&op_##name,
	static const void *const code[256] = { PICKLE_OPCODES(ADDRESS) ['.'] = &&stop };
#undef ADDRESS
	struct vm vm = { .m = m, .d = m->d, .len = m->len, .a = m->a, .stack = m->stack, .memo = m->memo,
	                 .scap = m->scap, .nmemo = m->nmemo, .memo_hi = m->memo_hi, .nstored = m->nstored };
	struct vm *const r = &vm;
	uint8_t op = 0;
	int rc = 0;
#define NEXT()                                                                  \
	do {                                                                        \
		if (__builtin_expect(r->pos >= r->len, 0))                              \
			goto truncated;                                                     \
		r->at = r->pos;                                                         \
		op = r->d[r->pos++];                                                    \
		if (__builtin_expect(!code[op], 0))                                     \
			goto other;                                                         \
		goto *code[op];                                                         \
	} while (0)
#define LABEL(name, byte, step)                                                 \
	op_##name:                                                                  \
		if (__builtin_expect(step, 0))                                          \
			goto failed;                                                        \
		NEXT();

	NEXT();
	PICKLE_OPCODES(LABEL)
#undef LABEL
#undef NEXT
truncated:
	r->at = r->pos;
	perr(m, r->at, "truncated (no STOP opcode)");
	goto failed;
other:
	refuse(m, r->at, op);
failed:
	rc = -1;
stop:
	m->stack = r->stack;
	m->scap = r->scap;
	m->memo = r->memo;
	m->nmemo = r->nmemo;
	m->memo_hi = r->memo_hi;
	m->nstored = r->nstored;
	m->sp = r->sp;
	m->nmarks = r->nmarks;
	m->at = r->at;
	return rc;
}
#undef PICKLE_OPCODES
#undef VM_STEP

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
			rc = perr(&m, m.at, "STOP with %zu values and %zu marks left (one value expected)", m.sp,
			          m.nmarks);
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
