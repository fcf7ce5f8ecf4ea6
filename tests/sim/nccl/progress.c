/* Execution of the simulated NCCL's operations on a stream's worker: one
 * work item (a "unit": the ops of one group on one stream, or a single op)
 * advances all its ops together, like one fused NCCL kernel, and sleeps on
 * the doorbell whenever none of them can move.
 *
 * Collectives. A communicator's collectives move their data in steps of at
 * most SIM_COLL_SLOT bytes through one staging slot per rank. Steps are
 * numbered across the communicator's life, like the step counters NCCL
 * keeps in each connection from one kernel to the next: a rank's collective
 * of k steps takes its steps n .. n+k-1 of that stream. In step n a rank
 * writes its part into its slot and publishes phase P(n,0); once all ranks
 * published it, every rank computes its output from all slots and publishes
 * P(n,1); once all did, the slots may be reused. The number of steps
 * follows from each rank's own arguments, so after a count mismatch the
 * ranks' streams stay shifted, as NCCL's do: the rank with more data takes
 * its missing steps from its peers' next collectives (wrong data), every
 * later collective pairs mismatched steps, and the ranks ahead in the
 * stream wait, in the end for steps nobody will send: a hang.
 * A different kind of collective or a different root at the same position
 * hangs every rank of it (checked once all arrived). Different redops or
 * datatypes of the same size are not detected: each rank reduces with its
 * own, so results are wrong but the op completes.
 *
 * Send/recv. Each ordered pair (src, dst) has a ring of chunk slots, the
 * receiver's buffer of the connection (NCCL_BUFFSIZE): the sender puts
 * chunks while there is room, the receiver takes them in order. A send no
 * larger than the buffer is eager, as on real NCCL: it completes once all
 * its chunks are buffered, whether the receive was posted or not, and the
 * receive completes when it is posted; but one eager message at a time:
 * the next send waits until the receiver took the buffered one. A larger
 * send completes only once the receiver took its last chunk (so an
 * unmatched large blocking send hangs). Messages are a chunk stream: a
 * size mismatch shifts the chunks of later messages, as a mismatched NCCL
 * send/recv corrupts what follows.
 */
#include "sim_nccl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ST_WRITE, ST_ARRIVED, ST_COMPUTED, ST_HANG };
#define PHASE(op, h) (2 * ((op)->base + (op)->step) + (h) + 1)

static uint64_t coll_bytes(const struct sim_op *op)
{
	size_t e = sim_dtype_size(op->dtype);
	switch (op->kind) {
	case OP_REDUCESCATTER: case OP_ALLTOALL: case OP_SCATTER:
		return (uint64_t)op->comm->nranks * op->count * e;
	default:
		return (uint64_t)op->count * e;
	}
}

static uint64_t nsteps(uint64_t bytes, uint64_t slot) { return bytes ? (bytes + slot - 1) / slot : 1; }

static int all_phases_at_least(const struct sim_shm_view *v, int n, uint64_t phase)
{
	for (int r = 0; r < n; r++)
		if (__atomic_load_n(&v->rank[r].phase, __ATOMIC_ACQUIRE) < phase) return 0;
	return 1;
}

/* Same kind and root on every rank that posted position s? */
static int coll_matches(const struct sim_op *op)
{
	const struct sim_shm_view *v = &op->comm->shm;
	for (int r = 0; r < op->comm->nranks; r++) {
		const struct sim_coll_desc *d = &v->rank[r].desc;
		if (d->seq != op->seq) continue;  /* already on to a later one: cannot tell */
		if (d->kind != (int)op->kind || d->root != op->root) return 0;
	}
	return 1;
}

/* The part [lo, hi) of chunk [off, off+len) that falls in block `b` of
 * `bsize` bytes; 0 if none. */
static int block_overlap(uint64_t off, uint64_t len, uint64_t b, uint64_t bsize, uint64_t *lo, uint64_t *hi)
{
	*lo = off > b * bsize ? off : b * bsize;
	*hi = off + len < (b + 1) * bsize ? off + len : (b + 1) * bsize;
	return *lo < *hi;
}

static void coll_compute(struct sim_op *op, uint64_t off, uint64_t len)
{
	ncclComm_t c = op->comm;
	int n = c->nranks, me = c->rank;
	size_t e = sim_dtype_size(op->dtype);
	const void *ins[SIM_MAX_RANKS];
	unsigned char *recv = op->recvbuff;
	uint64_t bsize = (uint64_t)op->count * e, lo, hi;
	switch (op->kind) {
	case OP_ALLREDUCE:
	case OP_REDUCE:
		if (op->kind == OP_REDUCE && me != op->root) break;
		for (int r = 0; r < n; r++) ins[r] = SIM_COLL_SLOT_PTR(&c->shm, r);
		sim_reduce(&op->redop, n, op->dtype, recv + off, ins, len / e);
		break;
	case OP_BROADCAST:
		memcpy(recv + off, SIM_COLL_SLOT_PTR(&c->shm, op->root), len);
		break;
	case OP_ALLGATHER:
	case OP_GATHER:
		if (op->kind == OP_GATHER && me != op->root) break;
		for (int r = 0; r < n; r++) memcpy(recv + r * bsize + off, SIM_COLL_SLOT_PTR(&c->shm, r), len);
		break;
	case OP_REDUCESCATTER:
		if (!block_overlap(off, len, me, bsize, &lo, &hi)) break;
		for (int r = 0; r < n; r++) ins[r] = SIM_COLL_SLOT_PTR(&c->shm, r) + (lo - off);
		sim_reduce(&op->redop, n, op->dtype, recv + (lo - me * bsize), ins, (hi - lo) / e);
		break;
	case OP_ALLTOALL:
		if (!block_overlap(off, len, me, bsize, &lo, &hi)) break;
		for (int r = 0; r < n; r++)
			memcpy(recv + r * bsize + (lo - me * bsize), SIM_COLL_SLOT_PTR(&c->shm, r) + (lo - off), hi - lo);
		break;
	case OP_SCATTER:
		if (!block_overlap(off, len, me, bsize, &lo, &hi)) break;
		memcpy(recv + (lo - me * bsize), SIM_COLL_SLOT_PTR(&c->shm, op->root) + (lo - off), hi - lo);
		break;
	default:
		break;
	}
}

enum { BLOCKED = 0, MOVED = 1, GPU_FAULT = 2 };

static int coll_step(struct sim_op *op)
{
	ncclComm_t c = op->comm;
	struct sim_shm_view *v = &c->shm;
	struct sim_rank_shared *me = &v->rank[c->rank];
	uint64_t bytes = coll_bytes(op);
	uint64_t off = op->step * SIM_COLL_SLOT;
	uint64_t len = bytes - off < SIM_COLL_SLOT ? bytes - off : SIM_COLL_SLOT;
	switch (op->state) {
	case ST_WRITE:
		if (op->step == 0) {
			if (__atomic_load_n(&me->coll_done_seq, __ATOMIC_ACQUIRE) != op->seq - 1) return BLOCKED;
			op->steps = nsteps(bytes, SIM_COLL_SLOT);
			op->base = __atomic_load_n(&c->coll_steps, __ATOMIC_ACQUIRE);
			if (sim_fault_find(FAULT_GPUFAULT, c->key, c->rank, op->seq)) {
				sim_debug("comm %s rank %d: injected gpufault at collective #%llu", c->keyhex, c->rank,
				          (unsigned long long)op->seq);
				return GPU_FAULT;
			}
			me->desc = (struct sim_coll_desc){ .seq = op->seq, .kind = op->kind, .dtype = op->dtype,
			                                   .redop = op->redop_handle, .root = op->root, .count = op->count };
		}
		if (len && (!((op->kind == OP_BROADCAST || op->kind == OP_SCATTER) && c->rank != op->root)))
			memcpy(SIM_COLL_SLOT_PTR(v, c->rank), (const unsigned char *)op->sendbuff + off, len);
		__atomic_store_n(&me->phase, PHASE(op, 0), __ATOMIC_RELEASE);
		sim_bell_ring();
		op->state = ST_ARRIVED;
		return MOVED;
	case ST_ARRIVED:
		if (!all_phases_at_least(v, c->nranks, PHASE(op, 0))) return BLOCKED;
		if (op->step == 0) {
			if (!coll_matches(op)) {
				sim_debug("comm %s rank %d: collective #%llu does not match its peers': hanging", c->keyhex,
				          c->rank, (unsigned long long)op->seq);
				op->state = ST_HANG;
				return MOVED;
			}
			if (!sim_transport_connects(c, -1)) {
				sim_debug("comm %s rank %d: collective #%llu: ranks selected different transports, "
				          "the connection never completes: hanging", c->keyhex, c->rank,
				          (unsigned long long)op->seq);
				op->state = ST_HANG;
				return MOVED;
			}
			if (sim_fault_find(FAULT_STALL, c->key, c->rank, op->seq)) {
				sim_debug("comm %s rank %d: injected stall at collective #%llu", c->keyhex, c->rank,
				          (unsigned long long)op->seq);
				op->state = ST_HANG;
				return MOVED;
			}
		}
		if (len) coll_compute(op, off, len);
		__atomic_store_n(&me->phase, PHASE(op, 1), __ATOMIC_RELEASE);
		sim_bell_ring();
		op->state = ST_COMPUTED;
		return MOVED;
	case ST_COMPUTED:
		if (!all_phases_at_least(v, c->nranks, PHASE(op, 1))) return BLOCKED;
		op->state = ST_WRITE;
		if (++op->step == op->steps) {
			__atomic_store_n(&c->coll_steps, op->base + op->steps, __ATOMIC_RELEASE);
			__atomic_store_n(&me->coll_done_seq, op->seq, __ATOMIC_RELEASE);
			sim_bell_ring();
			op->done = 1;
		}
		return MOVED;
	default:  /* ST_HANG: only an abort ends it */
		return BLOCKED;
	}
}

/* The connection of a send or receive with its peer: if the two ends
 * selected different transports it never completes (ST_HANG). */
static int p2p_connects(struct sim_op *op)
{
	ncclComm_t c = op->comm;
	if (sim_transport_connects(c, op->root)) return 1;
	sim_debug("comm %s rank %d: %s #%llu %s rank %d: %s here, %s there: the connection never completes: hanging",
	          c->keyhex, c->rank, op->kind == OP_SEND ? "send" : "receive", (unsigned long long)op->seq,
	          op->kind == OP_SEND ? "to" : "from", op->root,
	          sim_transport_name(c->shm.rank[c->rank].transport.transport),
	          sim_transport_name(c->shm.rank[op->root].transport.transport));
	op->state = ST_HANG;
	return 0;
}

/* Does a send of `bytes` go eagerly: complete once its data is in the
 * peer's buffer, receive posted or not? On an H100 with NCCL 2.28.9 sends
 * of 4 KiB to 4 MiB completed without a receive, 16 MiB did not (its
 * buffer is NCCL_BUFFSIZE, 4 MiB by default); with NCCL_PROTO=Simple a
 * 4 KiB send did not (one measurement). */
static int send_is_eager(const struct sim_op *op, uint64_t bytes)
{
	return sim_env.p2p_eager && bytes <= op->comm->shm.hdr->p2p_buffsize;
}

static int send_step(struct sim_op *op)
{
	ncclComm_t c = op->comm;
	struct sim_shm_view *v = &c->shm;
	struct sim_p2p_shared *ch = SIM_P2P(v, c->nranks, c->rank, op->root);
	uint64_t bytes = (uint64_t)op->count * sim_dtype_size(op->dtype);
	if (op->state == ST_HANG) return BLOCKED;
	if (op->step == 0 && op->state == ST_WRITE) {
		if (__atomic_load_n(&ch->send_msgs_done, __ATOMIC_ACQUIRE) != op->seq - 1) return BLOCKED;
		if (!p2p_connects(op)) return MOVED;
		op->steps = nsteps(bytes, SIM_P2P_SLOT);
		op->eager = send_is_eager(op, bytes);
		op->state = ST_ARRIVED;
	}
	uint64_t sent = __atomic_load_n(&ch->sent_chunks, __ATOMIC_ACQUIRE);
	uint64_t acked = __atomic_load_n(&ch->acked_chunks, __ATOMIC_ACQUIRE);
	/* One eager message in the buffer at a time: the next waits until the
	 * receiver took it (a FIFO that is full makes the sender wait). */
	if (op->step == 0 && op->eager && acked != sent) return BLOCKED;
	if (op->step == op->steps) {
		/* eager: all of it is buffered; else the receiver took the last chunk */
		if (!op->eager && acked != sent) return BLOCKED;
		__atomic_store_n(&ch->send_msgs_done, op->seq, __ATOMIC_RELEASE);
		sim_bell_ring();
		op->done = 1;
		return MOVED;
	}
	if (sent - acked >= (uint64_t)v->p2p_ring) return BLOCKED;  /* the buffer is full */
	uint64_t off = op->step * SIM_P2P_SLOT;
	uint64_t len = bytes - off < SIM_P2P_SLOT ? bytes - off : SIM_P2P_SLOT;
	if (len) memcpy(SIM_P2P_SLOT_PTR(v, c->nranks, c->rank, op->root, sent), (const unsigned char *)op->sendbuff + off, len);
	SIM_P2P_LEN(v, c->nranks, c->rank, op->root, sent) = (uint32_t)len;
	__atomic_store_n(&ch->sent_chunks, sent + 1, __ATOMIC_RELEASE);
	sim_bell_ring();
	op->step++;
	return MOVED;
}

static int recv_step(struct sim_op *op)
{
	ncclComm_t c = op->comm;
	struct sim_shm_view *v = &c->shm;
	struct sim_p2p_shared *ch = SIM_P2P(v, c->nranks, op->root, c->rank);
	uint64_t bytes = (uint64_t)op->count * sim_dtype_size(op->dtype);
	if (op->state == ST_HANG) return BLOCKED;
	if (op->step == 0 && op->state == ST_WRITE) {
		if (__atomic_load_n(&ch->recv_msgs_done, __ATOMIC_ACQUIRE) != op->seq - 1) return BLOCKED;
		if (!p2p_connects(op)) return MOVED;
		op->steps = nsteps(bytes, SIM_P2P_SLOT);
		op->state = ST_ARRIVED;
	}
	uint64_t acked = __atomic_load_n(&ch->acked_chunks, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&ch->sent_chunks, __ATOMIC_ACQUIRE) == acked) return BLOCKED;  /* nothing there */
	uint64_t off = op->step * SIM_P2P_SLOT;
	uint64_t len = off < bytes ? bytes - off : 0;
	uint32_t chunk = SIM_P2P_LEN(v, c->nranks, op->root, c->rank, acked);
	if (len > chunk) len = chunk;
	if (len) memcpy((unsigned char *)op->recvbuff + off, SIM_P2P_SLOT_PTR(v, c->nranks, op->root, c->rank, acked), len);
	__atomic_store_n(&ch->acked_chunks, acked + 1, __ATOMIC_RELEASE);
	if (++op->step == op->steps) {
		__atomic_store_n(&ch->recv_msgs_done, op->seq, __ATOMIC_RELEASE);
		op->done = 1;
	}
	sim_bell_ring();
	return MOVED;
}

/* An op may move only when no earlier unfinished op of the same unit uses
 * the same ordered channel (the comm's collectives, or sends/receives to
 * the same peer). */
static int eligible(const struct sim_unit *u, int i)
{
	const struct sim_op *op = &u->ops[i];
	for (int j = 0; j < i; j++) {
		const struct sim_op *o = &u->ops[j];
		if (o->done || o->comm != op->comm) continue;
		int coll_a = op->kind != OP_SEND && op->kind != OP_RECV;
		int coll_b = o->kind != OP_SEND && o->kind != OP_RECV;
		if (coll_a && coll_b) return 0;
		if (!coll_a && o->kind == op->kind && o->root == op->root) return 0;
	}
	return 1;
}

static void unit_finish(struct sim_unit *u)
{
	for (int i = 0; i < u->nops; i++) {
		ncclComm_t c = u->ops[i].comm;
		pthread_mutex_lock(&c->mu);
		c->inflight--;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		sim_comm_unref(c);
	}
	free(u);
}

void sim_op_number(struct sim_op *op)
{
	ncclComm_t c = op->comm;
	pthread_mutex_lock(&c->mu);
	if (op->kind == OP_SEND) op->seq = ++c->next_send[op->root];
	else if (op->kind == OP_RECV) op->seq = ++c->next_recv[op->root];
	else op->seq = ++c->next_coll_seq;
	c->inflight++;
	pthread_mutex_unlock(&c->mu);
}

void sim_unit_drop(void *unit)
{
	struct sim_unit *u = unit;
	if (!u->is_template && !u->captured) {
		unit_finish(u);
		return;
	}
	/* A template, or captured work never launched: its runs took the op
	 * counts (none were taken for it); it only held its comms alive. */
	for (int i = 0; i < u->nops; i++) sim_comm_unref(u->ops[i].comm);
	free(u);
}

void *sim_unit_replay(void *arg)
{
	struct sim_unit *t = arg;
	size_t size = sizeof *t + (size_t)t->nops * sizeof t->ops[0];
	struct sim_unit *u = malloc(size);
	if (!u) return NULL;
	memcpy(u, t, size);
	u->is_template = 0;
	u->replays = 0;
	u->captured = 0;
	t->replays++;
	t->is_template = 1;
	/* numbered here, at the launch (in the order the host launches), not
	 * at capture: a graph launched long after its capture runs where it
	 * is launched among the comm's ops */
	for (int i = 0; i < u->nops; i++) {
		sim_comm_ref(u->ops[i].comm);
		sim_op_number(&u->ops[i]);
	}
	return u;
}

CUresult sim_unit_run(void *arg)
{
	struct sim_unit *u = arg;
	long slow_ms = 0;
	if (u->captured) {
		/* captured work run by a graph launched once, without copies (one
		 * holding work that cannot be replayed): numbered when it runs */
		for (int i = 0; i < u->nops; i++) sim_op_number(&u->ops[i]);
		u->captured = 0;
	}
	for (int i = 0; i < u->nops; i++) {
		const struct sim_fault *f = sim_fault_find(FAULT_SLOW, u->ops[i].comm->key, u->ops[i].comm->rank, 0);
		if (f) slow_ms += f->ms;
	}
	if (slow_ms > 0) {
		struct timespec ts = { slow_ms / 1000, (slow_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts)) {}
	}
	for (;;) {
		uint32_t seen = sim_bell_read();
		int pending = 0, moved = 0;
		for (int i = 0; i < u->nops; i++) {
			struct sim_op *op = &u->ops[i];
			if (op->done) continue;
			if (__atomic_load_n(&op->comm->aborted, __ATOMIC_ACQUIRE)) {
				/* Like kernels of an aborted comm: they exit, the stream goes on. */
				op->done = op->failed = 1;
				moved = 1;
				continue;
			}
			if (!eligible(u, i)) { pending = 1; continue; }
			int r = op->kind == OP_SEND ? send_step(op) : op->kind == OP_RECV ? recv_step(op) : coll_step(op);
			if (r == GPU_FAULT) {
				__atomic_store_n(&op->comm->async_error, ncclUnhandledCudaError, __ATOMIC_RELEASE);
				sim_ras_async_error(op->comm, ncclUnhandledCudaError);
				unit_finish(u);
				return CUDA_ERROR_ILLEGAL_ADDRESS;
			}
			moved |= r == MOVED;
			if (!op->done) pending = 1;
		}
		if (!pending) break;
		if (!moved) sim_bell_wait(seen, 0);
	}
	unit_finish(u);
	return CUDA_SUCCESS;
}
