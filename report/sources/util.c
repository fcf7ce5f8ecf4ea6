/* util: text buffers, interned strings and frame lists, ages and labels,
 * shared by the engine's files (analysis_int.h). */
#include "sources.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a process of the model, a note of the analysis: freed and added by
 * every source (segments, snapshots, Flight Recorder dumps) ---- */

void nw_proc_free(struct nw_proc *p)
{
	if (!p)
		return;
	free(p->path);
	free(p->comms);
	free(p->peers);
	free(p->ops);
	free(p->threads);   /* frame lists are interned: the analysis frees them */
	free(p->op_site);   /* the array; its strings are interned */
	free(p->launch);
	free(p);
}

int64_t nw_proc_launches(const struct nw_proc *p, uint64_t comm_id, uint16_t kind)
{
	uint16_t k = kind == NW_OP_BCAST ? NW_OP_BROADCAST : kind;
	for (uint32_t i = 0; i < p->nlaunch; i++)
		if (p->launch[i].comm_id == comm_id && p->launch[i].kind == k)
			return (int64_t)p->launch[i].launches;
	return -1;
}

int nw_analysis_note(struct nw_analysis *a, const char *fmt, ...)
{
	char **n = realloc(a->notes, (a->nnotes + 1) * sizeof *n);
	if (!n)
		return -1;
	a->notes = n;
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&n[a->nnotes], fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -1;
	a->nnotes++;
	return 0;
}

/* ---- uthash out-of-memory ---- */

static __thread int hash_oom;

void nw_hash_oom_hit(void)
{
	hash_oom = 1;
}

int nw_hash_oom_taken(void)
{
	int o = hash_oom;
	hash_oom = 0;
	return o;
}

/* ---- text ---- */

static int buf_reserve(struct nw_buf *b, size_t more)
{
	if (b->oom)
		return -1;
	if (b->len + more + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s) {
		b->oom = 1;
		return -1;
	}
	b->s = s;
	b->cap = cap;
	return 0;
}

void nw_buf_vprintf(struct nw_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || buf_reserve(b, (size_t)n))
		return;
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void nw_buf_printf(struct nw_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	nw_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void nw_buf_puts(struct nw_buf *b, const char *s)
{
	size_t n = strlen(s);
	if (buf_reserve(b, n))
		return;
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

void nw_buf_rankset(struct nw_buf *b, const struct nw_rankset *s)
{
	size_t need = nw_rankset_format(s, NULL, 0);
	if (buf_reserve(b, need))
		return;
	nw_rankset_format(s, b->s + b->len, need + 1);
	b->len += need;
}

char *nw_buf_take(struct nw_buf *b)
{
	char *s = NULL;
	if (!b->oom)
		s = b->s ? b->s : strdup("");
	else
		free(b->s);
	memset(b, 0, sizeof *b);
	return s;
}

void nw_buf_free(struct nw_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof *b);
}

/* ---- interning ---- */

struct nw_istr {
	UT_hash_handle hh;
	char s[];
};

struct nw_ilist {
	UT_hash_handle hh;
	uint32_t n;
	char *f[];
};

char *nw_intern_str(struct nw_intern *in, const char *s, size_t len)
{
	struct nw_istr *e;
	HASH_FIND(hh, in->strs, s, len, e);
	if (e)
		return e->s;
	e = malloc(sizeof *e + len + 1);
	if (!e)
		return NULL;
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	HASH_ADD_KEYPTR(hh, in->strs, e->s, len, e);
	if (nw_hash_oom_taken()) {
		free(e);
		return NULL;
	}
	return e->s;
}

char **nw_intern_list(struct nw_intern *in, char *const *f, uint32_t n, int *oom)
{
	if (n == 0)
		return NULL;
	size_t bytes = (size_t)n * sizeof *f;
	struct nw_ilist *e;
	HASH_FIND(hh, in->lists, f, bytes, e);
	if (e)
		return e->f;
	e = malloc(sizeof *e + bytes);
	if (!e) {
		*oom = 1;
		return NULL;
	}
	e->n = n;
	memcpy(e->f, f, bytes);
	HASH_ADD_KEYPTR(hh, in->lists, e->f, bytes, e);
	if (nw_hash_oom_taken()) {
		free(e);
		*oom = 1;
		return NULL;
	}
	return e->f;
}

void nw_intern_free(struct nw_intern *in)
{
	struct nw_istr *s, *st;
	HASH_ITER(hh, in->strs, s, st) {
		HASH_DEL(in->strs, s);
		free(s);
	}
	struct nw_ilist *l, *lt;
	HASH_ITER(hh, in->lists, l, lt) {
		HASH_DEL(in->lists, l);
		free(l);
	}
}

/* ---- helpers ---- */

const char *nw_fmt_age(uint64_t ns, char buf[32])
{
	double s = (double)ns / 1e9;
	if (s < 10)
		snprintf(buf, 32, "%.1f s", s);
	else if (s < 600)
		snprintf(buf, 32, "%.0f s", s);
	else if (s < 7200)
		snprintf(buf, 32, "%.0f min", s / 60);
	else
		snprintf(buf, 32, "%.1f h", s / 3600);
	return buf;
}

const char *nw_proc_label(const struct nw_proc *p, char buf[128])
{
	if (p->rank >= 0)
		snprintf(buf, 128, "rank %d", (int)p->rank);
	else
		snprintf(buf, 128, "pid %" PRId64 " on %s", p->hdr.pid, p->hdr.host);
	return buf;
}

const char *nw_comm_label(uint64_t id, const char *name, char buf[128])
{
	if (name && name[0])
		snprintf(buf, 128, "comm %016" PRIx64 " \"%.40s\"", id, name);
	else
		snprintf(buf, 128, "comm %016" PRIx64, id);
	return buf;
}

uint64_t nw_age(const struct nw_proc *p, uint64_t t)
{
	return t && p->now_ns > t ? p->now_ns - t : 0;
}

const struct nw_thread_stack *nw_main_thread(const struct nw_proc *p)
{
	const struct nw_thread_stack *first = NULL;
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct nw_thread_stack *t = &p->threads[i];
		if ((int64_t)t->tid == p->hdr.pid)
			return t;
		if (!first && !(t->flags & NW_THR_WATCHDOG))
			first = t;
	}
	return first;
}

void nw_buf_frames(struct nw_buf *b, const struct nw_thread_stack *t, uint32_t max)
{
	if (!t->nframes) {
		nw_buf_puts(b, t->flags & NW_THR_NO_REPLY ? "(no reply)" : "(no frames)");
		return;
	}
	for (uint32_t i = 0; i < t->nframes && i < max; i++)
		nw_buf_printf(b, "%s%s", i ? " < " : "", t->frames[i]);
	if (t->nframes > max)
		nw_buf_puts(b, " < ...");
}

int nw_cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

const char *nw_cap_name(uint32_t bit)
{
	switch (bit) {
	case NW_CAP_OPNUMS: return "op_numbers";
	case NW_CAP_COMPLETION: return "completion";
	case NW_CAP_SENDRECV: return "send_recv";
	case NW_CAP_STACKS: return "stacks";
	case NW_CAP_CREATION: return "comm_creation";
	case NW_CAP_WAIT_TIME: return "wait_time";
	case NW_CAP_LAUNCH_ONLY: return "launch_only";
	case NW_CAP_FINGERPRINT: return "fingerprint";
	default: return NULL;
	}
}
