/* summary_write: processes -> one summary file (summary.h). Strings and
 * frame lists are written once each (a string table, a list table), the
 * records after them by the field tables of summary_codec.c. */
#include "../sources.h"   /* first: uthash never exits */
#include "summary.h"
#include "summary_codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct strent {
	uint32_t idx;
	UT_hash_handle hh;
	size_t len;
	uint8_t key[];
};

struct listent {
	uint32_t idx;
	UT_hash_handle hh;
	size_t n;
	uint32_t key[];
};

enum { T_PROC, T_HEADER, T_COMM, T_PEER, T_OP, T_THREAD, T_COUNT };

struct writer {
	struct nw_sum_buf strings, lists, body;
	struct strent *sh;
	struct listent *lh;
	uint32_t nstr, nlist;
	struct nw_sum_prev prev[T_COUNT];
	int oom;
};

/* The string table's reference of p[0..len): 0 for none, and for empty
 * unless keep_empty (a frame's text may be empty, and a frame list has no
 * "none" to give it). */
static uint32_t str_ref_of(struct writer *w, const void *p, size_t len, int keep_empty)
{
	if (!p || (!len && !keep_empty) || w->oom)
		return 0;
	struct strent *e;
	HASH_FIND(hh, w->sh, p, len, e);
	if (e)
		return e->idx;
	if (!(e = malloc(sizeof *e + len))) {
		w->oom = 1;
		return 0;
	}
	e->len = len;
	memcpy(e->key, p, len);
	e->idx = ++w->nstr;
	HASH_ADD(hh, w->sh, key, len, e);
	if (nw_hash_oom_taken()) {
		free(e);
		w->oom = 1;
		return 0;
	}
	nw_sum_put_uv(&w->strings, len);
	nw_sum_put_bytes(&w->strings, p, len);
	return e->idx;
}

static uint32_t str_ref(struct writer *w, const void *p, size_t len)
{
	return str_ref_of(w, p, len, 0);
}

static uint32_t cstr_ref(struct writer *w, const char *s)
{
	return s ? str_ref(w, s, strlen(s)) : 0;
}

/* The list table's reference of a frame list: 0 for none. */
static uint32_t list_ref(struct writer *w, char *const *frames, uint32_t n)
{
	if (!frames || !n || w->oom)
		return 0;
	struct listent *e = malloc(sizeof *e + n * sizeof(uint32_t)), *found;
	if (!e) {
		w->oom = 1;
		return 0;
	}
	e->n = n;
	for (uint32_t i = 0; i < n; i++)
		e->key[i] = str_ref_of(w, frames[i] ? frames[i] : "", frames[i] ? strlen(frames[i]) : 0, 1);
	HASH_FIND(hh, w->lh, e->key, n * sizeof(uint32_t), found);
	if (found) {
		free(e);
		return found->idx;
	}
	e->idx = ++w->nlist;
	HASH_ADD(hh, w->lh, key, n * sizeof(uint32_t), e);
	if (nw_hash_oom_taken()) {
		free(e);
		w->oom = 1;
		return 0;
	}
	nw_sum_put_uv(&w->lists, n);
	for (uint32_t i = 0; i < n; i++)
		nw_sum_put_uv(&w->lists, e->key[i]);
	return e->idx;
}

static void put_rec(struct writer *w, int t, const struct nw_sum_table *tab, const void *rec)
{
	uint64_t *prev = w->prev[t].v;
	for (size_t k = 0; k < tab->n; k++) {
		const struct nw_sum_field *f = &tab->f[k];
		uint64_t v;
		if (f->type == NW_SUM_S) {
			const uint8_t *p = (const uint8_t *)rec + f->off;
			v = str_ref(w, p, nw_sum_trimmed(p, f->size));
		} else if (f->type == NW_SUM_P || f->type == NW_SUM_E) {
			const char *s;
			memcpy(&s, (const uint8_t *)rec + f->off, sizeof s);
			size_t len = 0;
			if (s && f->type == NW_SUM_P)
				len = strlen(s);
			else if (s)
				while (s[len])
					len += strlen(s + len) + 1;
			v = str_ref(w, s, len);
		} else {
			v = nw_sum_field_get(f, rec);
		}
		nw_sum_put_uv(&w->body, nw_sum_zigzag((int64_t)(v - prev[k])));
		prev[k] = v;
	}
}

static void put_proc(struct writer *w, const struct nw_proc *p)
{
	struct nw_sum_proc sp = {
		.path = cstr_ref(w, p->path), .source_note = cstr_ref(w, p->source_note),
		.is_dump = p->is_dump != 0, .snapshot = p->snapshot != 0, .attached = p->attached != 0, .caps = p->caps,
		.alive = p->alive, .now_ns = p->now_ns, .last_activity_ns = p->last_activity_ns,
		.stacks_ns = p->stacks_ns, .ncomms = p->ncomms, .npeers = p->npeers, .nthreads = p->nthreads,
		.nops = p->nops, .sites = p->op_site != NULL,
	};
	put_rec(w, T_PROC, &nw_sum_t_proc, &sp);
	put_rec(w, T_HEADER, &nw_sum_t_header, &p->hdr);
	for (uint32_t i = 0; i < p->ncomms; i++)
		put_rec(w, T_COMM, &nw_sum_t_comm, &p->comms[i]);
	for (uint32_t i = 0; i < p->npeers; i++)
		put_rec(w, T_PEER, &nw_sum_t_peer, &p->peers[i]);
	for (size_t i = 0; i < p->nops; i++) {
		put_rec(w, T_OP, &nw_sum_t_op, &p->ops[i]);
		if (p->op_site)
			nw_sum_put_uv(&w->body, cstr_ref(w, p->op_site[i]));
	}
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct nw_thread_stack *t = &p->threads[i];
		struct nw_sum_thread st = {
			.tid = t->tid, .flags = t->flags, .py_name = cstr_ref(w, t->py_name),
			.frames = list_ref(w, t->frames, t->nframes),
			.wait_frames = list_ref(w, t->wait_frames, t->nwait_frames),
			.py_flags = t->py_flags, .npy = t->npy, .py_at = t->py_at, .py_app = t->py_app,
		};
		memcpy(st.name, t->name, sizeof st.name);
		put_rec(w, T_THREAD, &nw_sum_t_thread, &st);
	}
}

static void put_le(uint8_t *d, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		d[i] = (uint8_t)(v >> (8 * i));
}

int nw_summary_write(FILE *out, struct nw_proc *const *procs, size_t n, int native)
{
	struct writer w = { 0 };
	struct nw_sum_buf all = { 0 };
	for (size_t i = 0; i < n; i++)
		put_proc(&w, procs[i]);
	uint8_t hdr[NW_SUM_HEADER_SIZE] = { 0 };
	nw_sum_put_bytes(&all, hdr, sizeof hdr);
	nw_sum_put_uv(&all, NW_SUM_TABLES);
	for (int t = 0; t < NW_SUM_TABLES; t++)
		nw_sum_put_uv(&all, nw_sum_tables[t]->n);
	nw_sum_put_uv(&all, w.nstr);
	nw_sum_put_bytes(&all, w.strings.d, w.strings.len);
	nw_sum_put_uv(&all, w.nlist);
	nw_sum_put_bytes(&all, w.lists.d, w.lists.len);
	nw_sum_put_uv(&all, n);
	nw_sum_put_bytes(&all, w.body.d, w.body.len);
	int oom = w.oom || w.strings.oom || w.lists.oom || w.body.oom || all.oom;
	struct strent *s, *st;
	HASH_ITER(hh, w.sh, s, st) {
		HASH_DEL(w.sh, s);
		free(s);
	}
	struct listent *l, *lt;
	HASH_ITER(hh, w.lh, l, lt) {
		HASH_DEL(w.lh, l);
		free(l);
	}
	free(w.strings.d);
	free(w.lists.d);
	free(w.body.d);
	if (oom) {
		free(all.d);
		errno = ENOMEM;
		return -1;
	}
	memcpy(all.d, NW_SUM_MAGIC, 8);
	put_le(all.d + 8, NW_SUM_VERSION_MAJOR, 2);
	put_le(all.d + 10, NW_SUM_VERSION_MINOR, 2);
	put_le(all.d + 12, native ? NW_SUM_F_NATIVE : 0, 4);
	size_t payload = all.len - NW_SUM_HEADER_SIZE;
	put_le(all.d + 16, payload, 8);
	put_le(all.d + 24, nw_sum_hash(all.d + NW_SUM_HEADER_SIZE, payload), 8);
	size_t wrote = fwrite(all.d, 1, all.len, out);
	free(all.d);
	if (wrote != all.len || fflush(out) != 0) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
