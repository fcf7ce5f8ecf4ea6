/* segbuild: see segbuild.h. */
#include "segbuild.h"

#include "../../interpose/comm_id.h"

#include <stdatomic.h>
#include <string.h>

#define SET(field, value) atomic_store_explicit(&(field), (value), memory_order_relaxed)
#define GET(field) atomic_load_explicit(&(field), memory_order_relaxed)

static uint64_t align_up(uint64_t v)
{
	return (v + NW_SEG_ALIGN - 1) & ~(uint64_t)(NW_SEG_ALIGN - 1);
}

void sb_layout_init(struct sb_layout *l, uint32_t comms, uint32_t peers, uint32_t ring, int stacks)
{
	memset(l, 0, sizeof(*l));
	l->comm_capacity = comms;
	l->peer_capacity = peers;
	l->ring_capacity = ring;
	l->stacks = stacks;
	/* As interpose/segment_file.c computes them. */
	l->comm_offset = align_up(sizeof(struct nw_seg_header));
	l->peer_offset = align_up(l->comm_offset + (uint64_t)comms * sizeof(struct nw_seg_comm));
	l->ring_offset = align_up(l->peer_offset + (uint64_t)peers * sizeof(struct nw_seg_peer));
	uint64_t end = align_up(l->ring_offset + (uint64_t)ring * sizeof(struct nw_seg_op));
	if (stacks) {
		/* As watchdog/stack_area.c orders them: threads, frames, modules,
		 * ip symbols, strings; no per-op stacks. */
		uint64_t at = align_up(sizeof(struct nw_seg_stack_header) + sizeof(struct nw_seg_stack_ext));
		l->thread_off = at;
		at = align_up(at + (uint64_t)SB_STACK_THREADS * sizeof(struct nw_seg_thread));
		l->frame_off = at;
		at = align_up(at + (uint64_t)SB_STACK_THREADS * SB_STACK_FRAMES * sizeof(struct nw_seg_frame));
		l->module_off = at;
		at = align_up(at + (uint64_t)SB_STACK_MODULES * sizeof(struct nw_seg_module));
		l->ipsym_off = at;
		at = align_up(at + (uint64_t)SB_STACK_IPSYMS * sizeof(struct nw_seg_frame));
		l->strtab_off = at;
		at = align_up(at + SB_STACK_STRTAB);
		l->stack_offset = end;
		l->stack_size = at;
		end += at;
	}
	l->size = end;
}

void sb_begin(struct sb_seg *s, const struct sb_layout *l, uint8_t *buf)
{
	memset(s, 0, sizeof(*s));
	memset(buf, 0, l->size);
	s->l = l;
	s->buf = buf;
	s->h = (struct nw_seg_header *)(void *)buf;
	s->comms = (struct nw_seg_comm *)(void *)(buf + l->comm_offset);
	s->peers = (struct nw_seg_peer *)(void *)(buf + l->peer_offset);
	s->ring = (struct nw_seg_op *)(void *)(buf + l->ring_offset);

	struct nw_seg_header *h = s->h;
	h->endian = NW_SEG_ENDIAN;
	h->version_major = NW_SEG_VERSION_MAJOR;
	h->version_minor = NW_SEG_VERSION_MINOR;
	h->header_size = sizeof(*h);
	h->segment_size = l->size;
	h->comm_offset = l->comm_offset;
	h->comm_capacity = l->comm_capacity;
	h->comm_record_size = sizeof(struct nw_seg_comm);
	h->peer_offset = l->peer_offset;
	h->peer_capacity = l->peer_capacity;
	h->peer_record_size = sizeof(struct nw_seg_peer);
	h->ring_offset = l->ring_offset;
	h->ring_capacity = l->ring_capacity;
	h->op_record_size = sizeof(struct nw_seg_op);
	h->stack_offset = l->stack_offset;
	h->stack_size = l->stack_size;

	if (l->stacks) {
		struct nw_seg_stack_header *a = (struct nw_seg_stack_header *)(void *)(buf + l->stack_offset);
		s->stk = a;
		a->magic = NW_STACK_MAGIC;
		((struct nw_seg_stack_ext *)(a + 1))->ext_size = sizeof(struct nw_seg_stack_ext);
		a->thread_capacity = SB_STACK_THREADS;
		a->frame_capacity = SB_STACK_FRAMES;
		a->module_capacity = SB_STACK_MODULES;
		a->strtab_size = SB_STACK_STRTAB;
		a->strtab_used = 1;           /* offset 0 is "" */
		a->thread_offset = l->thread_off;
		a->frame_offset = l->frame_off;
		a->module_offset = l->module_off;
		a->strtab_offset = l->strtab_off;
		a->ipsym_offset = l->ipsym_off;
		a->ipsym_capacity = SB_STACK_IPSYMS;
	}
}

void sb_finish(struct sb_seg *s)
{
	SET(s->h->ring_head, s->head);
	memcpy(s->h->magic, NW_SEG_MAGIC, sizeof(s->h->magic));
}

static void saw(struct sb_seg *s, uint64_t ns)
{
	if (ns > s->newest_ns)
		s->newest_ns = ns;
}

/* Claim the next ticket's slot (a newer ticket replaces an older one, as
 * in the live ring) and fill the fields common to every record. */
static struct nw_seg_op *emit(struct sb_seg *s, uint64_t *ticket)
{
	uint64_t t = s->head++;
	struct nw_seg_op *op = &s->ring[t & (s->l->ring_capacity - 1)];
	memset(op, 0, sizeof(*op));
	op->comm_slot = UINT32_MAX;
	op->redop = -1;
	op->root = -1;
	op->rank = -1;
	op->nranks = -1;
	op->tid = s->tid;
	*ticket = t;
	return op;
}

static void publish(struct nw_seg_op *op, uint64_t t)
{
	SET(op->commit, t + 1);
}

static void fill_comm_fields(struct nw_seg_op *op, const struct nw_seg_comm *c, uint32_t slot)
{
	op->comm_id = c->comm_id;
	op->comm_slot = slot;
	op->rank = c->rank;
	op->nranks = c->nranks;
}

uint32_t sb_comm_enter(struct sb_seg *s, const struct sb_comm_spec *spec, uint64_t enter_ns,
                       uint64_t caller)
{
	uint32_t slot = GET(s->h->comm_count);
	struct nw_seg_comm *c = &s->comms[slot];
	int split = spec->origin == NW_ORIGIN_SPLIT;
	c->comm_id = spec->id;
	c->parent_id = spec->parent_id;
	c->handle = 0;                   /* known when the call returns */
	c->rank = split ? -1 : spec->rank;   /* a split's rank is known at return */
	c->nranks = split ? -1 : spec->nranks;
	c->cuda_device = spec->device;
	c->origin = spec->origin;
	c->split_color = spec->color;
	c->split_key = spec->key;
	c->blocking = 1;
	c->init_enter_ns = enter_ns;
	if (spec->name)
		strncpy(c->name, spec->name, sizeof(c->name) - 1);
	if (spec->bus_id)
		strncpy(c->bus_id, spec->bus_id, sizeof(c->bus_id) - 1);
	if (spec->uuid)
		memcpy(c->uuid, spec->uuid, sizeof(c->uuid));
	SET(c->state, NW_COMM_INIT_ENTERED);
	SET(s->h->comm_count, slot + 1);

	uint64_t t;
	struct nw_seg_op *op = emit(s, &t);
	fill_comm_fields(op, c, slot);
	op->kind = split ? NW_OP_COMM_SPLIT : NW_OP_COMM_INIT;
	op->caller = caller;
	op->enqueue_ns = enter_ns;
	SET(op->state, NW_ST_INIT_ENTERED);
	publish(op, t);
	saw(s, enter_ns);
	return slot;
}

/* The life-cycle record of `slot` still INIT_ENTERED (the newest one). */
static struct nw_seg_op *find_init_record(struct sb_seg *s, uint32_t slot)
{
	uint32_t cap = s->l->ring_capacity;
	for (uint64_t t = s->head; t-- > 0 && s->head - t <= cap;) {
		struct nw_seg_op *op = &s->ring[t & (cap - 1)];
		if (op->comm_slot == slot && (op->kind == NW_OP_COMM_INIT || op->kind == NW_OP_COMM_SPLIT) &&
		    GET(op->state) == NW_ST_INIT_ENTERED)
			return op;
	}
	return NULL;
}

void sb_comm_done(struct sb_seg *s, uint32_t slot, const struct sb_comm_spec *spec, uint64_t done_ns)
{
	struct nw_seg_comm *c = &s->comms[slot];
	c->rank = spec->rank;
	c->nranks = spec->nranks;
	c->handle = spec->handle;
	c->init_done_ns = done_ns;
	c->init_result = 0;
	SET(c->state, NW_COMM_INIT_DONE);
	struct nw_seg_op *op = find_init_record(s, slot);
	if (op) {
		SET(op->result, 0);
		SET(op->end_ns, done_ns);
		SET(op->state, NW_ST_INIT_DONE);
	}
	saw(s, done_ns);
}

static void fill_op(struct sb_seg *s, struct nw_seg_op *rec, const struct sb_op *op)
{
	rec->count = op->count;
	rec->stream = s->stream;
	rec->caller = op->caller;
	rec->enqueue_ns = op->enqueue_ns;
	SET(rec->start_ns, op->start_ns);
	SET(rec->end_ns, op->end_ns);
	rec->kind = op->kind;
	rec->datatype = op->datatype;
	rec->redop = op->redop;
	rec->root = op->root;
	rec->flags = op->flags;
	if (s->cur_group) {
		rec->group_id = s->cur_group;
		rec->group_depth = 1;
		rec->flags |= NW_OPF_IN_GROUP;
	}
	SET(rec->state, op->state);
	SET(rec->result, op->result);
	SET(rec->cuda_error, op->cuda_error);
	saw(s, op->enqueue_ns);
	saw(s, op->start_ns);
	saw(s, op->end_ns);
	if (!s->cur_group)
		s->launches++;
}

uint64_t sb_coll(struct sb_seg *s, uint32_t slot, const struct sb_op *op)
{
	struct nw_seg_comm *c = &s->comms[slot];
	uint64_t seq = GET(c->coll_enqueued) + 1;
	SET(c->coll_enqueued, seq);
	SET(c->coll_enqueued_ns, op->enqueue_ns);
	if (op->start_ns) {
		SET(c->coll_started, seq);
		SET(c->coll_started_ns, op->start_ns);
	}
	if (op->state == NW_ST_COMPLETED) {
		SET(c->coll_completed, seq);
		SET(c->coll_completed_ns, op->end_ns);
	}
	uint64_t t;
	struct nw_seg_op *rec = emit(s, &t);
	fill_comm_fields(rec, c, slot);
	rec->seq = seq;
	fill_op(s, rec, op);
	publish(rec, t);
	return seq;
}

static struct nw_seg_peer *peer_slot(struct sb_seg *s, uint32_t slot, int32_t peer)
{
	uint32_t n = GET(s->h->peer_count);
	for (uint32_t i = 0; i < n; i++)
		if (s->peers[i].comm_slot == slot && s->peers[i].peer == peer)
			return &s->peers[i];
	if (n == s->l->peer_capacity) {
		atomic_fetch_or_explicit(&s->h->flags, NW_SEG_F_PEERS_FULL, memory_order_relaxed);
		return NULL;
	}
	struct nw_seg_peer *p = &s->peers[n];
	p->comm_slot = slot;
	p->peer = peer;
	SET(p->used, 1);
	SET(s->h->peer_count, n + 1);
	return p;
}

uint64_t sb_p2p(struct sb_seg *s, uint32_t slot, const struct sb_op *op)
{
	struct nw_seg_comm *c = &s->comms[slot];
	int send = op->kind == NW_OP_SEND;
	struct nw_seg_peer *p = peer_slot(s, slot, op->root);
	uint64_t seq = 0;
	if (p) {
		seq = (send ? GET(p->send_enqueued) : GET(p->recv_enqueued)) + 1;
		if (send)
			SET(p->send_enqueued, seq);
		else
			SET(p->recv_enqueued, seq);
		SET(p->last_ns, op->enqueue_ns);
	}
	SET(c->p2p_enqueued, GET(c->p2p_enqueued) + 1);
	SET(c->p2p_enqueued_ns, op->enqueue_ns);
	if (op->state == NW_ST_COMPLETED) {
		if (p) {
			if (send)
				SET(p->send_completed, seq);
			else
				SET(p->recv_completed, seq);
			SET(p->last_ns, op->end_ns);
		}
		SET(c->p2p_completed, GET(c->p2p_completed) + 1);
		SET(c->p2p_completed_ns, op->end_ns);
	}
	uint64_t t;
	struct nw_seg_op *rec = emit(s, &t);
	fill_comm_fields(rec, c, slot);
	rec->seq = seq;
	fill_op(s, rec, op);
	publish(rec, t);
	return seq;
}

void sb_async_error(struct sb_seg *s, uint32_t slot, int32_t error, uint64_t at_ns, uint64_t caller)
{
	struct nw_seg_comm *c = &s->comms[slot];
	SET(c->async_error, error);
	uint64_t t;
	struct nw_seg_op *rec = emit(s, &t);
	fill_comm_fields(rec, c, slot);
	rec->kind = NW_OP_ASYNC_ERROR;
	rec->caller = caller;
	rec->enqueue_ns = at_ns;
	SET(rec->end_ns, at_ns);
	SET(rec->state, NW_ST_FAILED);
	SET(rec->result, error);
	publish(rec, t);
	saw(s, at_ns);
}

static void group_record(struct sb_seg *s, uint16_t kind, uint64_t at_ns, uint64_t end_ns, uint64_t caller)
{
	uint64_t t;
	struct nw_seg_op *rec = emit(s, &t);
	rec->kind = kind;
	rec->seq = s->cur_group;
	rec->group_id = s->cur_group;
	rec->group_depth = 1;
	rec->flags = NW_OPF_IN_GROUP;
	rec->caller = caller;
	rec->enqueue_ns = at_ns;
	SET(rec->end_ns, end_ns);
	SET(rec->state, NW_ST_INIT_DONE);
	publish(rec, t);
	saw(s, end_ns);
}

void sb_group_start(struct sb_seg *s, uint64_t at_ns, uint64_t caller)
{
	s->cur_group = ++s->group_counter;
	group_record(s, NW_OP_GROUP_START, at_ns, at_ns + 2000, caller);
}

void sb_group_end(struct sb_seg *s, uint64_t at_ns, uint64_t end_ns, uint64_t caller)
{
	group_record(s, NW_OP_GROUP_END, at_ns, end_ns, caller);
	s->cur_group = 0;
	s->launches++;
}

/* ---- stack area ---- */

static uint32_t intern(struct sb_seg *s, const char *str)
{
	if (!str || !*str)
		return 0;
	struct nw_seg_stack_header *a = s->stk;
	char *tab = (char *)a + a->strtab_offset;
	size_t len = strlen(str) + 1;
	for (uint32_t off = 1; off < a->strtab_used; off += (uint32_t)strlen(tab + off) + 1)
		if (!strcmp(tab + off, str))
			return off;
	if (a->strtab_used + len > a->strtab_size)
		return 0;                        /* full: unknown, as the watchdog does */
	uint32_t off = a->strtab_used;
	memcpy(tab + off, str, len);
	a->strtab_used += (uint32_t)len;
	return off;
}

uint32_t sb_stack_string(struct sb_seg *s, const char *str)
{
	return s->stk ? intern(s, str) : 0;
}

void sb_stack_begin(struct sb_seg *s, const struct sb_module *mods, uint32_t nmods)
{
	struct nw_seg_stack_header *a = s->stk;
	if (!a)
		return;
	SET(a->seq, 1);                      /* being written (a private buffer: only for form) */
	struct nw_seg_module *m = (struct nw_seg_module *)(void *)((char *)a + a->module_offset);
	if (nmods > a->module_capacity)
		nmods = a->module_capacity;
	for (uint32_t i = 0; i < nmods; i++) {
		m[i].base = mods[i].base;
		m[i].size = mods[i].size;
		strncpy(m[i].path, mods[i].path, sizeof(m[i].path) - 1);
	}
	a->module_count = nmods;
	a->thread_count = 0;
}

void sb_stack_thread(struct sb_seg *s, uint32_t tid, const char *name, uint32_t flags,
                     const struct sb_frame *frames, uint32_t nframes)
{
	struct nw_seg_stack_header *a = s->stk;
	if (!a || a->thread_count == a->thread_capacity)
		return;
	uint32_t i = a->thread_count++;
	struct nw_seg_thread *t = (struct nw_seg_thread *)(void *)((char *)a + a->thread_offset) + i;
	struct nw_seg_frame *f = (struct nw_seg_frame *)(void *)((char *)a + a->frame_offset) +
	                         (size_t)i * a->frame_capacity;
	const struct nw_seg_module *m = (const struct nw_seg_module *)(const void *)((char *)a + a->module_offset);
	if (nframes > a->frame_capacity) {
		nframes = a->frame_capacity;    /* the innermost ones are kept */
		flags |= NW_THR_TRUNCATED;
	}
	t->tid = tid;
	t->flags = flags;
	strncpy(t->name, name, sizeof(t->name) - 1);
	t->nframes = nframes;
	for (uint32_t k = 0; k < nframes; k++) {
		const struct sb_frame *in = &frames[k];
		uint32_t mod = in->module <= a->module_count ? in->module : 0;
		f[k].ip = mod ? m[mod - 1].base + in->module_offset : in->module_offset;
		f[k].module = mod;
		f[k].module_offset = mod ? in->module_offset : 0;
		f[k].symbol = intern(s, in->symbol);
		f[k].symbol_offset = f[k].symbol ? in->symbol_offset : 0;
	}
}

void sb_stack_end(struct sb_seg *s, uint64_t capture_ns, uint64_t request_id)
{
	struct nw_seg_stack_header *a = s->stk;
	if (!a)
		return;
	a->capture_ns = capture_ns;
	a->request_id = request_id;
	a->captures = 1;
	SET(a->seq, 2);
}

/* ---- utilities ---- */

uint64_t sb_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The interposer's own id functions (interpose/comm_id.c, linked in), so
 * generated ids always match what libncclwatch.so computes. */
uint64_t sb_hash64(const void *bytes, size_t len)
{
	return nw_hash64(bytes, len);
}

uint64_t sb_comm_id_split(uint64_t parent, uint64_t nth, int32_t color)
{
	return nw_comm_id_split(parent, nth, color);
}
