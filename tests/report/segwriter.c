/* Test-only segment writer (see segwriter.h). */
#include "segwriter.h"

#include <stdio.h>
#include <string.h>
#include <nccl.h>

static uint64_t align_up(uint64_t v)
{
	return (v + NW_SEG_ALIGN - 1) / NW_SEG_ALIGN * NW_SEG_ALIGN;
}

struct layout {
	uint64_t header_size, comm_off, peer_off, ring_off, stack_off, stack_size, size;
	uint32_t comm_rec, peer_rec, op_rec;
};

static struct layout plan(const struct segw_spec *s)
{
	struct layout l;
	l.header_size = sizeof(struct nw_seg_header) + s->header_extra;
	l.comm_rec = sizeof(struct nw_seg_comm) + s->record_extra;
	l.peer_rec = sizeof(struct nw_seg_peer) + s->record_extra;
	l.op_rec = sizeof(struct nw_seg_op) + s->record_extra;
	l.comm_off = align_up(l.header_size);
	l.peer_off = align_up(l.comm_off + (uint64_t)s->comm_capacity * l.comm_rec);
	l.ring_off = align_up(l.peer_off + (uint64_t)s->peer_capacity * l.peer_rec);
	uint64_t end = align_up(l.ring_off + (uint64_t)s->ring_capacity * l.op_rec);
	uint64_t stack_size = s->stacks ? segw_stack_plan(s).size : s->stack_size;
	l.stack_off = stack_size ? end : 0;
	l.stack_size = stack_size;
	l.size = align_up(end + stack_size);
	return l;
}

struct segw_stack_layout segw_stack_plan(const struct segw_spec *s)
{
	struct segw_stack_layout l;
	/* 1.4's extension after the area header (an older minor ignores it). */
	l.thread_off = align_up(sizeof(struct nw_seg_stack_header) + sizeof(struct nw_seg_stack_ext));
	l.frame_off = align_up(l.thread_off + SEGW_STACK_THREADS * sizeof(struct nw_seg_thread));
	l.module_off = align_up(l.frame_off + SEGW_STACK_THREADS * SEGW_STACK_FRAMES * sizeof(struct nw_seg_frame));
	l.strtab_off = align_up(l.module_off + SEGW_STACK_MODULES * sizeof(struct nw_seg_module));
	l.ipsym_off = align_up(l.strtab_off + SEGW_STACK_STRTAB);
	uint64_t end = align_up(l.ipsym_off + SEGW_STACK_IPSYMS * sizeof(struct nw_seg_frame));
	l.opstack_off = s->opstacks ? end : 0;
	if (s->opstacks)
		end = align_up(end + (uint64_t)s->ring_capacity * SEGW_OPSTACK_DEPTH * sizeof(uint64_t));
	l.pyframe_off = l.pysite_off = l.pycall_off = 0;
	if (s->python) {
		l.pyframe_off = end;
		l.pysite_off = align_up(end + SEGW_PYFRAMES * sizeof(struct nw_seg_pyframe));
		l.pycall_off = align_up(l.pysite_off + SEGW_PYSITES * sizeof(struct nw_seg_pyframe));
		end = align_up(l.pycall_off + (uint64_t)s->ring_capacity * SEGW_PYCALL_DEPTH *
		                                  sizeof(struct nw_seg_pycall));
	}
	l.size = end;
	return l;
}

struct nw_seg_stack_header *segw_stack_area(void *mem)
{
	struct nw_seg_header *h = mem;
	if (!h->stack_offset || h->stack_size < sizeof(struct nw_seg_stack_header))
		return NULL;
	return (struct nw_seg_stack_header *)((char *)mem + h->stack_offset);
}

/* str with spec->taint appended (into one of a few rotating buffers). */
static const char *taint(const struct segw_spec *s, const char *str)
{
	static char bufs[8][256];
	static unsigned next;
	if (!s->taint || !*s->taint)
		return str;
	char *b = bufs[next++ % 8];
	snprintf(b, sizeof bufs[0], "%s%s", str, s->taint);
	return b;
}

/* Append a string to the area's string table; its offset. */
static uint32_t intern(struct nw_seg_stack_header *a, const char *str)
{
	char *tab = (char *)a + a->strtab_offset;
	uint32_t off = a->strtab_used;
	size_t n = strlen(str) + 1;
	memcpy(tab + off, str, n);
	a->strtab_used = off + (uint32_t)n;
	return off;
}

static struct nw_seg_frame frame(uint64_t ip, uint32_t module, uint64_t base, uint32_t symbol,
                                 uint64_t symbol_offset)
{
	struct nw_seg_frame f = { .ip = ip, .module = module, .symbol = symbol,
	                          .module_offset = module ? ip - base : 0,
	                          .symbol_offset = symbol ? symbol_offset : 0 };
	return f;
}

#define SEGW_EXE_BASE 0x400000ull
#define SEGW_NCCL_BASE 0x7f0000000000ull
#define SEGW_NW_BASE 0x7f1000000000ull

static void build_stacks(char *mem, const struct segw_spec *s, const struct layout *seg)
{
	struct segw_stack_layout l = segw_stack_plan(s);
	struct nw_seg_stack_header *a = (struct nw_seg_stack_header *)(mem + seg->stack_off);
	a->magic = NW_STACK_MAGIC;
	((struct nw_seg_stack_ext *)(a + 1))->ext_size = sizeof(struct nw_seg_stack_ext);
	a->thread_capacity = SEGW_STACK_THREADS;
	a->frame_capacity = SEGW_STACK_FRAMES;
	a->module_capacity = SEGW_STACK_MODULES;
	a->strtab_size = SEGW_STACK_STRTAB;
	a->thread_offset = l.thread_off;
	a->frame_offset = l.frame_off;
	a->module_offset = l.module_off;
	a->strtab_offset = l.strtab_off;
	a->ipsym_offset = l.ipsym_off;
	a->ipsym_capacity = SEGW_STACK_IPSYMS;
	if (s->opstacks) {
		a->opstack_offset = l.opstack_off;
		a->opstack_depth = SEGW_OPSTACK_DEPTH;
		a->opstack_count = s->ring_capacity;
	}

	/* The capture. */
	struct nw_seg_module *mods = (struct nw_seg_module *)((char *)a + a->module_offset);
	static const struct { uint64_t base, size; const char *path; } m[] = {
		{ SEGW_EXE_BASE, 0x10000, "/usr/bin/python3.11" },
		{ SEGW_NCCL_BASE, 0x200000, "/usr/lib/x86_64-linux-gnu/libnccl.so.2" },
		{ SEGW_NW_BASE, 0x100000, "/opt/ncclwatch/lib/libncclwatch.so" },
	};
	for (uint32_t i = 0; i < 3; i++) {
		mods[i].base = m[i].base;
		mods[i].size = m[i].size;
		snprintf(mods[i].path, sizeof mods[i].path, "%s", i == 0 ? taint(s, m[i].path) : m[i].path);
	}
	a->module_count = 3;
	a->strtab_used = 0;
	intern(a, "");
	uint32_t s_allreduce = intern(a, "ncclAllReduce"), s_train = intern(a, taint(s, "train_step")),
	         s_main = intern(a, "main"), s_wd = intern(a, "nw_watchdog_main"),
	         s_recurse = intern(a, "recurse");

	struct nw_seg_thread *th = (struct nw_seg_thread *)((char *)a + a->thread_offset);
	struct nw_seg_frame *fr = (struct nw_seg_frame *)((char *)a + a->frame_offset);
	const struct nw_seg_frame nccl = frame(0x7f0000012345, 2, SEGW_NCCL_BASE, s_allreduce, 0x45);
	const struct nw_seg_frame train = frame(0x400123, 1, SEGW_EXE_BASE, s_train, 0x23);
	const struct nw_seg_frame mainf = frame(0x400456, 1, SEGW_EXE_BASE, s_main, 0x56);

	th[0].tid = 4242;
	th[0].flags = NW_THR_IN_NCCL;
	/* with a taint, "py" + taint: the name has 15 bytes */
	snprintf(th[0].name, sizeof th[0].name, "%s", s->taint && *s->taint ? taint(s, "py") : "python3");
	th[0].nframes = 3;
	fr[0] = nccl;
	fr[1] = train;
	fr[2] = mainf;

	th[1].tid = 4243;
	th[1].flags = NW_THR_WATCHDOG;
	snprintf(th[1].name, sizeof th[1].name, "ncclwatch-wd");
	th[1].nframes = 2;
	fr[SEGW_STACK_FRAMES + 0] = frame(SEGW_NW_BASE + 0x1010, 3, SEGW_NW_BASE, s_wd, 0x10);
	fr[SEGW_STACK_FRAMES + 1] = frame(0x7ffff7a00000, 0, 0, 0, 0);

	th[2].tid = 4250;
	th[2].flags = NW_THR_NO_REPLY;
	snprintf(th[2].name, sizeof th[2].name, "pt_data_worker");

	th[3].tid = 4251;
	th[3].flags = NW_THR_TRUNCATED;
	snprintf(th[3].name, sizeof th[3].name, "recurse");
	th[3].nframes = SEGW_STACK_FRAMES;
	for (uint32_t k = 0; k < SEGW_STACK_FRAMES; k++)
		fr[3 * SEGW_STACK_FRAMES + k] = frame(0x400800, 1, SEGW_EXE_BASE, s_recurse, 0x10);
	a->thread_count = 4;

	struct nw_seg_frame *ipsym = (struct nw_seg_frame *)((char *)a + a->ipsym_offset);
	ipsym[0] = train;   /* sorted by ip */
	ipsym[1] = mainf;
	ipsym[2] = nccl;
	a->ipsym_count = 3;

	if (s->python) {
		/* Thread 0 runs Python: train_step (train.py:83) < main
		 * (train.py:120) under its ncclAllReduce frame. Sites of the
		 * per-op references: sync_gradients (train.py:77) < train_step. */
		struct nw_seg_stack_ext *e = (struct nw_seg_stack_ext *)(a + 1);
		e->pyframe_offset = l.pyframe_off;
		e->pyframe_capacity = SEGW_PYFRAMES;
		e->pysite_offset = l.pysite_off;
		e->pysite_capacity = SEGW_PYSITES;
		e->pycall_offset = l.pycall_off;
		e->pycall_depth = SEGW_PYCALL_DEPTH;
		e->pycall_count = s->ring_capacity;
		e->python_version = 0x030b02f0;
		e->python_method = NW_PY_DUMP_TRACEBACK;
		e->python_note = intern(a, "CPython 3.11 via _Py_DumpTracebackThreads");
		uint32_t f_train = intern(a, taint(s, "/work/train.py")), n_step = intern(a, taint(s, "train_step")),
		         n_main = intern(a, "<module>"), n_sync = intern(a, "sync_gradients"),
		         n_thread = intern(a, taint(s, "MainThread"));
		struct nw_seg_pyframe *pf = (struct nw_seg_pyframe *)((char *)a + l.pyframe_off);
		pf[0] = (struct nw_seg_pyframe){ .file = f_train, .function = n_step, .line = 83 };
		pf[1] = (struct nw_seg_pyframe){ .file = f_train, .function = n_main, .line = 120 };
		e->pyframe_count = 2;
		th[0].py_first = 0;
		th[0].py_count = 2;
		th[0].py_name = n_thread;
		th[0].py_flags = NW_PYT_PYTHON | NW_PYT_MAIN | NW_PYT_GIL;
		th[0].py_native = 1;
		struct nw_seg_pyframe *site = (struct nw_seg_pyframe *)((char *)a + l.pysite_off);
		site[0] = (struct nw_seg_pyframe){ .code = 0x7e0000001000, .instr = 0x7e0000001080,
		                                   .file = f_train, .function = n_step, .line = 83 };
		site[1] = (struct nw_seg_pyframe){ .code = 0x7e0000002000, .instr = 0x7e0000002040,
		                                   .file = f_train, .function = n_sync, .line = 77 };
		e->pysite_count = 2;
	}
	a->capture_ns = SEGW_START_MONO_NS + 3000000000ull;
	a->request_id = 7;
	a->captures = 2;
	a->seq = 4;
}

uint64_t segw_size(const struct segw_spec *spec)
{
	return plan(spec).size;
}

struct nw_seg_op *segw_op_slot(void *mem, uint64_t ticket)
{
	struct nw_seg_header *h = mem;
	return (struct nw_seg_op *)((char *)mem + h->ring_offset +
	                            (ticket % h->ring_capacity) * h->op_record_size);
}

void segw_fill_op(struct nw_seg_op *op, uint64_t t, uint32_t comms)
{
	uint64_t enq = SEGW_START_MONO_NS + (t + 1) * 1000000u;
	int send = t % 5 == 4;
	uint32_t slot = comms ? (uint32_t)(t % comms) : UINT32_MAX;
	op->comm_id = comms ? SEGW_COMM_ID(slot) : 0;
	op->seq = t + 1;
	op->count = 1000 + t;
	op->stream = 0x1000 + (comms ? slot : 0);
	op->group_id = 0;
	op->caller = 0x400000 + t;
	op->enqueue_ns = enq;
	op->start_ns = enq + 100000;
	op->end_ns = enq + 200000;
	op->comm_slot = slot;
	op->kind = send ? NW_OP_SEND : NW_OP_ALLREDUCE;
	op->datatype = ncclFloat32;
	op->group_depth = 0;
	op->redop = send ? -1 : ncclSum;
	op->root = send ? 1 : -1;
	op->rank = 1;
	op->nranks = 4;
	op->tid = 5000 + (uint32_t)(t % 3);
	op->flags = 0;
	op->state = NW_ST_COMPLETED;
	op->result = ncclSuccess;
	op->cuda_error = 0;
}

void segw_opstack_of(uint64_t t, uint64_t ips[SEGW_OPSTACK_DEPTH])
{
	memset(ips, 0, SEGW_OPSTACK_DEPTH * sizeof *ips);
	if (t % 2)
		return;
	ips[0] = 0x7f0000012345;
	ips[1] = 0x400123;
	ips[2] = 0x400456;
	ips[3] = 0x401000 + t;
}

int segw_publish_op(void *mem, uint64_t t)
{
	struct nw_seg_header *h = mem;
	struct nw_seg_op *op = segw_op_slot(mem, t);
	struct nw_seg_op tmp;
	memset(&tmp, 0, sizeof tmp);
	segw_fill_op(&tmp, t, h->comm_count);
	/* Claim the slot as the interposer does (interpose/ring.h): only from
	 * zero or an older published ticket, never from a writer or an
	 * updater (1.3) at work. */
	uint64_t cur = atomic_load_explicit(&op->commit, memory_order_relaxed);
	for (;;) {
		uint64_t owner = cur & NW_SEG_COMMIT_WRITING ? cur & ~NW_SEG_COMMIT_WRITING
		                                             : (cur & NW_SEG_COMMIT_TICKET) - 1;
		if ((cur != 0 && owner >= t) || (cur & (NW_SEG_COMMIT_WRITING | NW_SEG_COMMIT_UPDATERS)))
			return -1;
		if (atomic_compare_exchange_weak_explicit(&op->commit, &cur, NW_SEG_COMMIT_WRITING | t,
		                                          memory_order_acquire, memory_order_relaxed))
			break;
	}
	atomic_thread_fence(memory_order_release);
	/* Field by field after commit, as the interposer does. */
	memcpy((char *)op + sizeof op->commit, (char *)&tmp + sizeof tmp.commit,
	       sizeof tmp - sizeof tmp.commit);
	/* The op's stack while the slot is claimed (docs/FORMAT.md). */
	struct nw_seg_stack_header *a = segw_stack_area(mem);
	if (a && a->magic == NW_STACK_MAGIC && a->opstack_depth == SEGW_OPSTACK_DEPTH &&
	    a->opstack_count == h->ring_capacity && a->opstack_offset) {
		uint64_t ips[SEGW_OPSTACK_DEPTH];
		uint64_t *slot = (uint64_t *)((char *)a + a->opstack_offset) +
		                 (t % h->ring_capacity) * SEGW_OPSTACK_DEPTH;
		segw_opstack_of(t, ips);
		/* Single stores, as the hot path makes them (a writer a lap behind
		 * may still be writing the slot in the concurrent test). */
		for (int k = 0; k < SEGW_OPSTACK_DEPTH; k++)
			__atomic_store_n(&slot[k], ips[k], __ATOMIC_RELAXED);
	}
	/* 1.4: its Python call site, the same way. */
	const struct nw_seg_stack_ext *e = a && (h->version_major >= 2 || h->version_minor >= 4) ? (const void *)(a + 1)
	                                                                                        : NULL;
	if (e && a->magic == NW_STACK_MAGIC && e->pycall_depth == SEGW_PYCALL_DEPTH &&
	    e->pycall_count == h->ring_capacity && e->pycall_offset) {
		struct nw_seg_pycall c[SEGW_PYCALL_DEPTH], *slot =
			(struct nw_seg_pycall *)((char *)a + e->pycall_offset) + (t % h->ring_capacity) * SEGW_PYCALL_DEPTH;
		segw_pycall_of(t, c);
		for (int k = 0; k < SEGW_PYCALL_DEPTH; k++) {
			__atomic_store_n(&slot[k].code, c[k].code, __ATOMIC_RELAXED);
			__atomic_store_n(&slot[k].instr, c[k].instr, __ATOMIC_RELAXED);
		}
	}
	atomic_store_explicit(&op->commit, t + 1, memory_order_release);
	return 0;
}

void segw_pycall_of(uint64_t t, struct nw_seg_pycall c[SEGW_PYCALL_DEPTH])
{
	memset(c, 0, SEGW_PYCALL_DEPTH * sizeof *c);
	if (t % 2)
		return;
	c[0] = (struct nw_seg_pycall){ 0x7e0000002000, 0x7e0000002040 };   /* sync_gradients */
	c[1] = (struct nw_seg_pycall){ 0x7e0000001000, 0x7e0000001080 };   /* train_step */
}

void segw_build(void *mem, const struct segw_spec *s)
{
	struct layout l = plan(s);
	struct nw_seg_header *h = mem;
	static const char env[] = "NCCL_DEBUG=INFO\0CUDA_VISIBLE_DEVICES=0,1\0";

	memcpy(h->magic, NW_SEG_MAGIC, sizeof h->magic);
	h->endian = NW_SEG_ENDIAN;
	h->version_major = s->version_major ? s->version_major : 1;
	h->version_minor = s->version_minor;
	h->header_size = (uint32_t)l.header_size;
	h->flags = NW_SEG_F_RECORDING;
	h->segment_size = l.size;
	h->comm_offset = l.comm_off;
	h->comm_capacity = s->comm_capacity;
	h->comm_record_size = l.comm_rec;
	h->peer_offset = l.peer_off;
	h->peer_capacity = s->peer_capacity;
	h->peer_record_size = l.peer_rec;
	h->ring_offset = l.ring_off;
	h->ring_capacity = s->ring_capacity;
	h->op_record_size = l.op_rec;
	h->stack_offset = l.stack_off;
	h->stack_size = l.stack_size;
	h->pid = 4242;
	h->ppid = 4200;
	h->start_realtime_ns = 1700000000123456789ull;
	h->start_monotonic_ns = SEGW_START_MONO_NS;
	h->global_rank = 1;
	h->local_rank = 1;
	h->world_size = 4;
	h->uid = 1000;
	snprintf(h->host, sizeof h->host, "%s", taint(s, "testhost"));
	snprintf(h->job, sizeof h->job, "%s", taint(s, "job-7"));
	h->heartbeat_ns = SEGW_START_MONO_NS + 2000000000ull;
	h->nccl_version = 22809;
	h->cuda_driver_version = 13000;
	snprintf(h->nccl_lib, sizeof h->nccl_lib, "/opt/nccl/libnccl.so.2");
	snprintf(h->gpu_name, sizeof h->gpu_name, "%s", taint(s, "Simulated GPU"));
	memcpy(h->env, env, sizeof env);
	if (s->taint && *s->taint) {   /* NCCL_DEBUG's value, the only variable */
		memset(h->env, 0, sizeof h->env);
		snprintf(h->env, sizeof h->env, "NCCL_DEBUG=%s", taint(s, "INFO"));
	}
	if (s->v11) {
		h->tracking = NW_TRACK_EVENTS;
		h->watchdog_tid = 4243;
		h->poll_ms = 100;
		h->timeout_ms = 600000;
		h->events_created = 64;
		h->event_records = 20;
		h->ops_tracked = 10;
		h->findings = 1;
		h->dumps = 1;
		h->request_served = 7;
		h->last_finding_ns = SEGW_START_MONO_NS + 3000000000ull;
	}
	if (s->stacks)
		build_stacks((char *)mem, s, &l);

	for (uint32_t i = 0; i < s->comms; i++) {
		struct nw_seg_comm *c = (struct nw_seg_comm *)((char *)mem + l.comm_off + (uint64_t)i * l.comm_rec);
		c->comm_id = SEGW_COMM_ID(i);
		c->parent_id = i ? SEGW_COMM_ID(0) : 0;
		c->handle = 0x7f0000001000ull + i;
		c->rank = 1;
		c->nranks = 4;
		c->cuda_device = (int32_t)i;
		c->origin = i ? NW_ORIGIN_SPLIT : NW_ORIGIN_INIT_RANK;
		c->state = NW_COMM_INIT_DONE;
		c->split_color = i ? (int32_t)i : 0;
		c->split_key = i ? 1 : 0;
		c->blocking = 1;
		c->init_enter_ns = SEGW_START_MONO_NS + 10;
		c->init_done_ns = SEGW_START_MONO_NS + 20;
		snprintf(c->name, sizeof c->name, "%s%u", taint(s, "comm"), i);
		snprintf(c->bus_id, sizeof c->bus_id, "0000:1%u:00.0", i % 10);
		c->coll_enqueued = 10 + i;
		c->coll_started = 9 + i;
		c->coll_completed = 8 + i;
		c->p2p_enqueued = 3;
		c->p2p_completed = 2;
	}
	h->comm_count = s->comms;
	for (uint32_t j = 0; j < s->peers; j++) {
		struct nw_seg_peer *p = (struct nw_seg_peer *)((char *)mem + l.peer_off + (uint64_t)j * l.peer_rec);
		p->comm_slot = s->comms ? j % s->comms : 0;
		p->peer = (int32_t)j + 2;
		p->send_enqueued = 5 + j;
		p->send_completed = 4 + j;
		p->recv_enqueued = 3 + j;
		p->recv_completed = 2 + j;
		p->used = 1;
	}
	h->peer_count = s->peers;
	for (uint64_t t = 0; t < s->records; t++)
		segw_publish_op(mem, t);
	h->ring_head = s->records;
}
