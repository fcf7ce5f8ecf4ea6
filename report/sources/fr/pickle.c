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

/* The opcode at `at` needs n more bytes from pos. */
static inline int need(struct pm *m, size_t pos, size_t at, size_t n)
{
	if (__builtin_expect(m->len - pos < n, 0))
		return perr(m, at, "truncated (the opcode needs %zu more bytes, %zu left)", n, m->len - pos);
	return 0;
}

/* LONG1, LONG4: a length of lw bytes, then a little-endian two's
 * complement integer of that many bytes (at most 8); *out the value
 * (NULL: over the limit), *next after it. */
static inline int long_value(struct pm *m, size_t pos, size_t at, int lw, struct nw_pv **out, size_t *next)
{
	const uint8_t *d = m->d;
	if (need(m, pos, at, (size_t)lw))
		return -1;
	uint64_t x = le(d + pos, lw);
	pos += (size_t)lw;
	if (x > 8)
		return perr(m, at, "an integer of %" PRIu64 " bytes (more than 64 bits)", x);
	if (need(m, pos, at, x))
		return -1;
	/* Eight bytes at once where the input has them (LONG1 holds times in ns). */
	uint64_t i = m->len - pos >= 8 ? ((uint64_t)le4(d + pos) | (uint64_t)le4(d + pos + 4) << 32) &
	                                     (x == 8 ? ~0ull : (1ull << (8 * x)) - 1)
	                               : le(d + pos, (int)x);
	if (x && x < 8 && (d[pos + x - 1] & 0x80))
		i |= ~0ull << (8 * x);                  /* two's complement, sign-extended */
	*next = pos + (size_t)x;
	*out = int_value(m, (int64_t)i);
	return 0;
}

/* BINFLOAT: an IEEE double, big-endian; *out the value (NULL: over the
 * limit), *next after it. */
static inline int float_value(struct pm *m, size_t pos, size_t at, struct nw_pv **out, size_t *next)
{
	if (need(m, pos, at, 8))
		return -1;
	uint64_t i = 0;
	for (int k = 0; k < 8; k++)
		i = i << 8 | m->d[pos + k];
	double f;
	memcpy(&f, &i, sizeof f);
	if ((*out = pv_new(m->a, NW_PV_FLOAT)))
		(*out)->u.f = f;
	*next = pos + 8;
	return 0;
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

/* The machine's steps, over run's registers (its locals) and its exits
 * (`failed`, `truncated`, `other`): defined for run alone, undefined
 * after it. */
#define FAIL(...)                                                               \
	do {                                                                        \
		perr(m, at, __VA_ARGS__);                                               \
		goto failed;                                                            \
	} while (0)
#define NEED(n)                                                                 \
	do {                                                                        \
		if (__builtin_expect(len - pos < (size_t)(n), 0))                       \
			FAIL("truncated (the opcode needs %zu more bytes, %zu left)",       \
			     (size_t)(n), len - pos);                                       \
	} while (0)
#define NEXT()                                                                  \
	do {                                                                        \
		if (__builtin_expect(pos >= len, 0))                                    \
			goto truncated;                                                     \
		at = pos;                                                               \
		op = d[pos++];                                                          \
		if (__builtin_expect(!code[op], 0))                                     \
			goto other;                                                         \
		goto *code[op];                                                         \
	} while (0)
/* Push val (NULL: the arena's limit), then the next opcode. */
#define PUSH_NEXT(val)                                                          \
	do {                                                                        \
		v = (val);                                                              \
		if (__builtin_expect(!v, 0))                                            \
			FAIL("the values would take more than the memory limit");           \
		if (__builtin_expect(sp == scap, 0)) {                                  \
			if (grow_stack(m, at))                                              \
				goto failed;                                                    \
			stack = m->stack;                                                   \
			scap = m->scap;                                                     \
		}                                                                       \
		stack[sp++] = v;                                                        \
		NEXT();                                                                 \
	} while (0)
#define POP_MARK()                                                              \
	do {                                                                        \
		if (!nmarks)                                                            \
			FAIL("no mark to pop");                                             \
		from = m->marks[--nmarks];                                              \
		floor = nmarks ? m->marks[nmarks - 1] : 0;                              \
	} while (0)
/* Items [f, sp) moved into container c (reserved at once). */
#define TAKE(f)                                                                 \
	do {                                                                        \
		size_t k_ = sp - (f);                                                   \
		if (!c || ((size_t)c->cap - c->n < k_ && pv_reserve(a, c, k_)))        \
			FAIL("the values would take more than the memory limit");           \
		if (k_ <= 2) {                  /* APPEND, SETITEM: no call */         \
			if (k_)                                                             \
				c->u.items[c->n] = stack[(f)];                                  \
			if (k_ == 2)                                                        \
				c->u.items[c->n + 1] = stack[(f) + 1];                          \
		} else {                                                                \
			memcpy(c->u.items + c->n, stack + (f), k_ * sizeof *stack);         \
		}                                                                       \
		c->n += (uint32_t)k_;                                                   \
		sp = (f);                                                               \
	} while (0)
/* APPEND(S), SETITEM(S), ADDITEMS: items [f, sp) into the container below. */
#define FILL(f, dict)                                                           \
	do {                                                                        \
		from = (f);                                                             \
		if (from == 0)                                                          \
			FAIL("no container below the items");                               \
		c = stack[from - 1];                                                    \
		if (c->type != ((dict) ? NW_PV_DICT : NW_PV_LIST))                      \
			FAIL("items added to a value that is not a %s",                     \
			     (dict) ? "dict" : "list or set");                              \
		if ((dict) && (sp - from) % 2)                                          \
			FAIL("a key without a value");                                      \
		TAKE(from);                                                             \
		NEXT();                                                                 \
	} while (0)
#define MEMO_GET(idx)                                                           \
	do {                                                                        \
		x = (idx);                                                              \
		if (__builtin_expect(x >= nmemo || !memo[x], 0))                        \
			FAIL("memo index %" PRIu64 " was never stored", x);                 \
		PUSH_NEXT(memo[x]);                                                     \
	} while (0)
/* Every memo entry costs at least one opcode byte: an index beyond the
 * input's size is not one a real pickler writes. */
#define MEMO_PUT(idx)                                                           \
	do {                                                                        \
		x = (idx);                                                              \
		if (sp <= floor)                                                        \
			FAIL("stack underflow");                                            \
		if (__builtin_expect(x > len, 0))                                       \
			FAIL("memo index %" PRIu64 " beyond the input's size", x);          \
		if (__builtin_expect(x >= nmemo, 0)) {                                  \
			if (grow_memo(m, at, x))                                            \
				goto failed;                                                    \
			memo = m->memo;                                                     \
			nmemo = m->nmemo;                                                   \
		}                                                                       \
		nstored += !memo[x];                                                    \
		if (x >= memo_hi)                                                       \
			memo_hi = x + 1;                                                    \
		memo[x] = stack[sp - 1];                                                \
		NEXT();                                                                 \
	} while (0)
/* Counted bytes: a length of lw bytes, then the data. */
#define COUNTED(lw, type)                                                       \
	do {                                                                        \
		NEED(lw);                                                               \
		x = le(d + pos, lw);                                                    \
		pos += (lw);                                                            \
		if (x > len - pos)                                                      \
			FAIL("a string of %" PRIu64 " bytes runs past the end of the input", x); \
		pos += (size_t)x;                                                       \
		PUSH_NEXT(str_value(m, type, d + pos - x, x));                          \
	} while (0)

/* The opcodes, one label each. The dispatch is threaded (a jump from the
 * end of each opcode straight to the next one's code, GCC's and clang's
 * labels as values) rather than a switch behind a refusal check, and the
 * machine's registers (position, stack top, mark floor) are locals: a
 * dump is tens of thousands of opcodes of a few kinds in a few recurring
 * orders. An opcode without a label is refused or unknown. Every error
 * goes through `failed`, which leaves the state in m for the caller. */
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
		[0x8e] = &&op_bytes8, [0x96] = &&op_bytes8,
		[']'] = &&op_empty_list, [')'] = &&op_empty_tuple, ['}'] = &&op_empty_dict,
		[0x8f] = &&op_empty_list, ['l'] = &&op_list, ['t'] = &&op_tuple, [0x91] = &&op_list,
		['d'] = &&op_dict, [0x85] = &&op_tuple1, [0x86] = &&op_tuple2, [0x87] = &&op_tuple3,
		['a'] = &&op_append, ['s'] = &&op_setitem, ['e'] = &&op_appends, [0x90] = &&op_appends,
		['u'] = &&op_setitems, ['g'] = &&op_get, ['h'] = &&op_binget, ['j'] = &&op_long_binget,
		['p'] = &&op_put, ['q'] = &&op_binput, ['r'] = &&op_long_binput, [0x94] = &&op_memoize,
	};
	const uint8_t *const d = m->d;
	const size_t len = m->len;
	struct nw_arena *const a = m->a;
	struct nw_pv **stack = m->stack, **memo = m->memo;
	size_t scap = m->scap, nmemo = m->nmemo, memo_hi = m->memo_hi, nstored = m->nstored;
	size_t pos = 0, at = 0, sp = 0, nmarks = 0, floor = 0, from = 0, next = 0;
	uint8_t op = 0;
	struct nw_pv *v = NULL, *c = NULL;
	uint64_t x = 0;
	int rc = 0;

	NEXT();
truncated:
	at = pos;
	FAIL("truncated (no STOP opcode)");
other:
	refuse(m, at, op);
	goto failed;
op_proto:
	NEED(1);
	if (d[pos] > 5)
		FAIL("pickle protocol %u (this reader knows 0-5)", d[pos]);
	pos++;
	NEXT();
op_frame:                                       /* a length hint */
	NEED(8);
	pos += 8;
	NEXT();
op_mark:
	if (nmarks == NW_PICKLE_MAX_MARKS)
		FAIL("marks nested deeper than %d", NW_PICKLE_MAX_MARKS);
	m->marks[nmarks++] = sp;
	floor = sp;
	NEXT();
op_pop:
	if (sp <= floor)
		FAIL("stack underflow");
	sp--;
	NEXT();
op_pop_mark:
	POP_MARK();
	sp = from;
	NEXT();
op_dup:
	if (sp <= floor)
		FAIL("stack underflow");
	PUSH_NEXT(stack[sp - 1]);
op_none:
	PUSH_NEXT(shared(m, &m->none, NW_PV_NONE, 0));
op_true:
	PUSH_NEXT(shared(m, &m->bools[1], NW_PV_BOOL, 1));
op_false:
	PUSH_NEXT(shared(m, &m->bools[0], NW_PV_BOOL, 0));
op_int_line:
op_float_line:
	if (line_num(m, pos, at, op == 'F', &v, &next))
		goto failed;
	pos = next;
	PUSH_NEXT(v);
op_binint:
	NEED(4);
	pos += 4;
	PUSH_NEXT(int_value(m, (int32_t)le4(d + pos - 4)));
op_binint1:
	NEED(1);
	pos++;
	PUSH_NEXT(int_value(m, d[pos - 1]));
op_binint2:
	NEED(2);
	pos += 2;
	PUSH_NEXT(int_value(m, le2(d + pos - 2)));
op_long1:
op_long4:
	if (long_value(m, pos, at, op == 0x8a ? 1 : 4, &v, &next))
		goto failed;
	pos = next;
	PUSH_NEXT(v);
op_binfloat:
	if (float_value(m, pos, at, &v, &next))
		goto failed;
	pos = next;
	PUSH_NEXT(v);
op_string:                                      /* STRING: a quoted repr */
op_unicode:                                     /* UNICODE: raw-unicode-escape */
	if (text_value(m, pos, at, op, &v, &next))
		goto failed;
	pos = next;
	PUSH_NEXT(v);
op_bytes1:
	COUNTED(1, NW_PV_BYTES);
op_bytes4:
	COUNTED(4, NW_PV_BYTES);
op_bytes8:
	COUNTED(8, NW_PV_BYTES);
op_str1:
	COUNTED(1, NW_PV_STR);
op_str4:
	COUNTED(4, NW_PV_STR);
op_str8:
	COUNTED(8, NW_PV_STR);
op_empty_list:                                  /* also EMPTY_SET */
	PUSH_NEXT(pv_new(a, NW_PV_LIST));
op_empty_tuple:
	PUSH_NEXT(pv_new(a, NW_PV_TUPLE));
op_empty_dict:
	PUSH_NEXT(pv_new(a, NW_PV_DICT));
op_list:                                        /* also FROZENSET */
op_tuple:
	POP_MARK();
	c = pv_new(a, op == 't' ? NW_PV_TUPLE : NW_PV_LIST);
	TAKE(from);
	PUSH_NEXT(c);
op_dict:
	POP_MARK();
	if ((sp - from) % 2)
		FAIL("a key without a value");
	c = pv_new(a, NW_PV_DICT);
	TAKE(from);
	PUSH_NEXT(c);
op_tuple1:
op_tuple2:
op_tuple3:
	x = (uint64_t)(op - 0x84);
	if (sp - floor < x)
		FAIL("stack underflow");
	c = pv_new(a, NW_PV_TUPLE);
	TAKE(sp - x);
	PUSH_NEXT(c);
op_append:
	if (sp < 2 || (nmarks && sp - 2 < floor))
		FAIL("stack underflow");
	FILL(sp - 1, 0);
op_setitem:
	if (sp < 3 || (nmarks && sp - 3 < floor))
		FAIL("stack underflow");
	FILL(sp - 2, 1);
op_appends:                                     /* also ADDITEMS */
	POP_MARK();
	FILL(from, 0);
op_setitems:
	POP_MARK();
	FILL(from, 1);
op_get:
	if (line_index(m, pos, at, &x, &next))
		goto failed;
	pos = next;
	MEMO_GET(x);
op_binget:
	NEED(1);
	pos++;
	/* Keys and values repeat: runs of BINGET are the commonest pair. */
	while (len - pos >= 2 && d[pos] == 'h' && d[pos - 1] < nmemo && memo[d[pos - 1]] && sp < scap) {
		stack[sp++] = memo[d[pos - 1]];
		at = pos;
		pos += 2;
	}
	MEMO_GET(d[pos - 1]);
op_long_binget:
	NEED(4);
	pos += 4;
	MEMO_GET(le4(d + pos - 4));
op_put:
	if (line_index(m, pos, at, &x, &next))
		goto failed;
	pos = next;
	MEMO_PUT(x);
op_binput:
	NEED(1);
	pos++;
	MEMO_PUT(d[pos - 1]);
op_long_binput:
	NEED(4);
	pos += 4;
	MEMO_PUT(le4(d + pos - 4));
op_memoize:                                     /* memo[len(memo)] */
	MEMO_PUT(nstored);
#undef COUNTED
#undef MEMO_PUT
#undef MEMO_GET
#undef FILL
#undef TAKE
#undef POP_MARK
#undef PUSH_NEXT
#undef NEXT
#undef NEED
#undef FAIL

failed:
	rc = -1;
op_stop:
	m->stack = stack;
	m->scap = scap;
	m->memo = memo;
	m->nmemo = nmemo;
	m->memo_hi = memo_hi;
	m->nstored = nstored;
	m->sp = sp;
	m->nmarks = nmarks;
	m->at = at;
	return rc;
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
