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
	uint64_t header_size, comm_off, peer_off, ring_off, stack_off, size;
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
	l.stack_off = s->stack_size ? end : 0;
	l.size = align_up(end + s->stack_size);
	return l;
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

void segw_publish_op(void *mem, uint64_t t)
{
	struct nw_seg_header *h = mem;
	struct nw_seg_op *op = segw_op_slot(mem, t);
	struct nw_seg_op tmp;
	memset(&tmp, 0, sizeof tmp);
	segw_fill_op(&tmp, t, h->comm_count);
	atomic_store_explicit(&op->commit, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	/* Field by field after commit, as the interposer does. */
	memcpy((char *)op + sizeof op->commit, (char *)&tmp + sizeof tmp.commit,
	       sizeof tmp - sizeof tmp.commit);
	atomic_store_explicit(&op->commit, t + 1, memory_order_release);
}

void segw_build(void *mem, const struct segw_spec *s)
{
	struct layout l = plan(s);
	struct nw_seg_header *h = mem;
	static const char env[] = "NCCL_DEBUG=INFO\0CUDA_VISIBLE_DEVICES=0,1\0";

	memcpy(h->magic, NW_SEG_MAGIC, sizeof h->magic);
	h->endian = NW_SEG_ENDIAN;
	h->version_major = NW_SEG_VERSION_MAJOR;
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
	h->stack_size = s->stack_size;
	h->pid = 4242;
	h->ppid = 4200;
	h->start_realtime_ns = 1700000000123456789ull;
	h->start_monotonic_ns = SEGW_START_MONO_NS;
	h->global_rank = 1;
	h->local_rank = 1;
	h->world_size = 4;
	h->uid = 1000;
	snprintf(h->host, sizeof h->host, "testhost");
	snprintf(h->job, sizeof h->job, "job-7");
	h->heartbeat_ns = SEGW_START_MONO_NS + 2000000000ull;
	h->nccl_version = 22809;
	h->cuda_driver_version = 13000;
	snprintf(h->nccl_lib, sizeof h->nccl_lib, "/opt/nccl/libnccl.so.2");
	snprintf(h->gpu_name, sizeof h->gpu_name, "Simulated GPU");
	memcpy(h->env, env, sizeof env);

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
		snprintf(c->name, sizeof c->name, "comm%u", i);
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
