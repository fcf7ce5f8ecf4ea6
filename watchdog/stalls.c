/* stalls: see stalls.h. */
#include "stalls.h"

#include "../interpose/cuda_driver.h"
#include "../interpose/ring.h"
#include "../report/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t *watch;               /* ticket + 1 of each watched record */
static size_t watch_count, watch_cap;
static uint64_t scan_next;            /* next ticket to look at */
static unsigned scan_waits;           /* polls spent waiting on scan_next */
static struct nw_picture previous;

#define NW_SCAN_WAIT_POLLS 20         /* a ticket never published (a writer gave it up) */

static void watch_add(uint64_t ticket1)
{
	if (watch_count == watch_cap) {
		size_t cap = watch_cap ? watch_cap * 2 : 256;
		uint64_t *w = realloc(watch, cap * sizeof(*w));
		if (!w)
			return;                     /* not watched: no finding for it */
		watch = w;
		watch_cap = cap;
	}
	watch[watch_count++] = ticket1;
}

static int worth_watching(const struct nw_seg_op *op)
{
	uint32_t st = atomic_load_explicit(&op->state, memory_order_acquire);
	if (NW_OP_IS_COLL(op->kind) || NW_OP_IS_P2P(op->kind))
		return st == NW_ST_ENQUEUED || st == NW_ST_STARTED || st == NW_ST_FAILED;
	/* a graph launch until it completes; a FAILED one may be a launch
	 * that returned an error (nothing ran): not a finding of its own */
	if (op->kind == NW_OP_GRAPH_LAUNCH)
		return st == NW_ST_ENQUEUED || st == NW_ST_STARTED;
	if (op->kind == NW_OP_ASYNC_ERROR)
		return 1;
	return st == NW_ST_INIT_ENTERED;
}

void nw_stalls_scan(void)
{
	uint64_t head = atomic_load_explicit(&nw_seg.hdr->ring_head, memory_order_acquire);
	uint64_t cap = nw_seg.ring_mask + 1;
	if (head > cap && scan_next < head - cap)
		scan_next = head - cap;         /* we fell a lap behind: those are gone */
	while (scan_next < head) {
		uint64_t t = scan_next;
		struct nw_seg_op *op = &nw_seg.ring[t & nw_seg.ring_mask];
		uint64_t c = atomic_load_explicit(&op->commit, memory_order_acquire);
		uint64_t k = nw_seg_commit_ticket1(c);
		uint64_t owner = c & NW_SEG_COMMIT_WRITING ? c & ~NW_SEG_COMMIT_WRITING : k - 1;
		if (k == t + 1) {
			if (worth_watching(op))
				watch_add(t + 1);
		} else if (c == 0 || owner < t) {
			/* Reserved, not written yet: wait, unless it never will be. */
			if (++scan_waits < NW_SCAN_WAIT_POLLS)
				return;
		} else if (owner == t) {
			return;                     /* being written right now */
		}
		/* else: a newer lap took the slot */
		scan_waits = 0;
		scan_next++;
	}
}

static int is_final(const struct nw_seg_op *op, uint32_t st)
{
	switch (st) {
	case NW_ST_ENQUEUED:
	case NW_ST_STARTED:
		/* a call that returned an error launched nothing */
		if (NW_OP_IS_COLL(op->kind) || NW_OP_IS_P2P(op->kind)) {
			int32_t r = atomic_load_explicit(&op->result, memory_order_relaxed);
			return r != 0 && r != 7 /* ncclInProgress */;
		}
		return 0;
	case NW_ST_INIT_ENTERED:
		return 0;
	case NW_ST_FAILED:
		return 0;                       /* stays a finding while the record lives */
	default:
		return 1;
	}
}

/* Keep the oldest finding per (comm, class). */
static void consider(struct nw_picture *p, const struct nw_finding *f, int per_comm)
{
	if (per_comm) {
		for (uint32_t i = 0; i < p->count; i++) {
			struct nw_finding *g = &p->f[i];
			int same_class = (g->kind == NW_FIND_IN_CALL) == (f->kind == NW_FIND_IN_CALL);
			if (g->cls == f->cls && same_class && g->kind != NW_FIND_IN_CALL) {
				if (f->ticket1 < g->ticket1)
					*g = *f;
				return;
			}
		}
	}
	if (p->count < NW_MAX_FINDINGS)
		p->f[p->count++] = *f;
}

/* The class of an op's findings: its comm's collectives, its comm's
 * sends/receives (bit 31), or the launches of graphs whose first op is of
 * its comm (bit 30). The comm is its slot and that slot's generation
 * (bits 32-55): the ops of an ended comm whose slot a new comm took are
 * not the new comm's. */
static int watched_kind(uint16_t k)
{
	return NW_OP_IS_COLL(k) || NW_OP_IS_P2P(k) || k == NW_OP_GRAPH_LAUNCH;
}

static uint64_t class_of(const struct nw_seg_op *op)
{
	return (uint64_t)op->comm_gen << 32 | op->comm_slot | (NW_OP_IS_P2P(op->kind) ? 0x80000000u : 0) |
	       (op->kind == NW_OP_GRAPH_LAUNCH ? 0x40000000u : 0);
}

/* The oldest op not final of each class, whatever its age: the ops queued
 * behind it wait for it, so only it may become a finding (a younger op
 * measured from its enqueue would otherwise pass the timeout first, its
 * predecessor being measured from the poll that saw it start). */
#define NW_OLDEST_MAX 64
static struct { uint64_t cls; uint64_t ticket1; } oldest[NW_OLDEST_MAX];
static uint32_t noldest;

static void find_oldest(void)
{
	noldest = 0;
	for (size_t i = 0; i < watch_count; i++) {
		struct nw_seg_op *op = nw_ring_find(watch[i]);
		if (!op || !watched_kind(op->kind))
			continue;
		if (is_final(op, atomic_load_explicit(&op->state, memory_order_acquire)))
			continue;
		uint64_t cls = class_of(op);
		uint32_t k = 0;
		while (k < noldest && oldest[k].cls != cls)
			k++;
		if (k == noldest) {
			if (noldest == NW_OLDEST_MAX)
				continue;               /* more classes than that: no suppression for the rest */
			oldest[noldest].cls = cls;
			oldest[noldest++].ticket1 = watch[i];
		} else if (watch[i] < oldest[k].ticket1) {
			oldest[k].ticket1 = watch[i];
		}
	}
}

static int behind_older(const struct nw_seg_op *op, uint64_t ticket1)
{
	if (!watched_kind(op->kind))
		return 0;
	uint64_t cls = class_of(op);
	for (uint32_t k = 0; k < noldest; k++)
		if (oldest[k].cls == cls)
			return oldest[k].ticket1 != ticket1;
	return 0;
}

int nw_stalls_evaluate(uint64_t now, uint64_t timeout_ns, struct nw_picture *p)
{
	p->count = 0;
	size_t keep = 0;
	find_oldest();
	for (size_t i = 0; i < watch_count; i++) {
		uint64_t t1 = watch[i];
		struct nw_seg_op *op = nw_ring_find(t1);
		if (!op)
			continue;                   /* overwritten */
		uint32_t st = atomic_load_explicit(&op->state, memory_order_acquire);
		if (is_final(op, st))
			continue;
		watch[keep++] = t1;
		if (behind_older(op, t1))
			continue;
		struct nw_finding f = { .ticket1 = t1, .comm_slot = op->comm_slot };
		uint64_t since = op->enqueue_ns;
		if (st == NW_ST_FAILED) {
			f.kind = op->kind == NW_OP_ASYNC_ERROR ? NW_FIND_ASYNC : NW_FIND_FAILED;
		} else if (st == NW_ST_STARTED) {
			since = atomic_load_explicit(&op->start_ns, memory_order_relaxed);
			f.kind = NW_FIND_STARTED;
		} else if (st == NW_ST_INIT_ENTERED) {
			f.kind = NW_FIND_IN_CALL;
		} else {
			f.kind = NW_FIND_ENQUEUED;
		}
		f.age_ns = now > since ? now - since : 0;
		if (f.kind != NW_FIND_FAILED && f.kind != NW_FIND_ASYNC && f.age_ns < timeout_ns)
			continue;
		f.cls = class_of(op);
		consider(p, &f, f.kind != NW_FIND_IN_CALL);
	}
	watch_count = keep;
	for (uint32_t i = 0; i < p->count; i++) {
		p->f[i].new_ = 1;
		for (uint32_t j = 0; j < previous.count; j++)
			if (previous.f[j].ticket1 == p->f[i].ticket1 && previous.f[j].kind == p->f[i].kind)
				p->f[i].new_ = 0;
	}
	int changed = p->count != previous.count;
	for (uint32_t i = 0; i < p->count && !changed; i++)
		changed = p->f[i].new_;
	previous = *p;
	return changed;
}

uint64_t nw_stalls_oldest_pending_ns(uint32_t slot, uint32_t gen)
{
	uint64_t oldest_ns = 0;
	for (uint32_t k = 0; k < noldest; k++) {
		if ((uint32_t)(oldest[k].cls >> 32) != gen || (oldest[k].cls & 0x3fffffffu) != slot)
			continue;
		const struct nw_seg_op *op = nw_ring_find(oldest[k].ticket1);
		if (op && op->enqueue_ns && (!oldest_ns || op->enqueue_ns < oldest_ns))
			oldest_ns = op->enqueue_ns;
	}
	return oldest_ns;
}

void nw_finding_describe(const struct nw_finding *f, char *buf, size_t len)
{
	const struct nw_seg_op *op = nw_ring_find(f->ticket1);
	if (!op) {
		snprintf(buf, len, "record %llu (overwritten)", (unsigned long long)(f->ticket1 - 1));
		return;
	}
	char kind_buf[NW_NAME_BUF], kind_buf2[NW_NAME_BUF], res[NW_NAME_BUF];
	const char *kind = nw_op_kind_name(op->kind, kind_buf);
	const struct nw_seg_header *h = nw_seg.hdr;
	int n = snprintf(buf, len, "rank=%d pid=%lld op=%s seq=%llu comm=%016llx comm_rank=%d/%d",
	                 h->global_rank, (long long)h->pid, kind, (unsigned long long)op->seq,
	                 (unsigned long long)op->comm_id, op->rank, op->nranks);
	if (NW_OP_IS_P2P(op->kind))
		n += snprintf(buf + n, len > (size_t)n ? len - (size_t)n : 0, " peer=%d", op->root);
	if (op->kind == NW_OP_GRAPH_LAUNCH)   /* seq is the replay number */
	{
		n += snprintf(buf + n, len > (size_t)n ? len - (size_t)n : 0, " graph=#%d first=%s", op->root,
		              nw_op_kind_name((uint16_t)op->redop, kind_buf2));
		uint32_t at = nw_graph_replay_at(op, NULL);   /* the op the replay stands in (per-op events) */
		if (at)
			n += snprintf(buf + n, len > (size_t)n ? len - (size_t)n : 0, " in_op=%u/%llu", at,
			              (unsigned long long)op->count);
	}
	double age = (double)f->age_ns / 1e9;
	const char *what = "";
	char detail[160] = "";
	switch (f->kind) {
	case NW_FIND_STARTED:
		what = "STARTED";
		snprintf(detail, sizeof(detail), "age=%.1fs: started on the GPU, not completed", age);
		break;
	case NW_FIND_ENQUEUED:
		what = "ENQUEUED";
		snprintf(detail, sizeof(detail), "age=%.1fs: enqueued, the GPU has not reached it", age);
		break;
	case NW_FIND_IN_CALL:
		what = "INIT_ENTERED";
		snprintf(detail, sizeof(detail), "age=%.1fs: thread %u is inside the call", age, op->tid);
		break;
	case NW_FIND_FAILED: {
		int32_t e = atomic_load(&op->cuda_error);
		what = "FAILED";
		/* A GPU fault is sticky: every event of the context fails from then
		 * on, so ops that completed before the next poll fail too. */
		snprintf(detail, sizeof(detail),
		         "cuda_error=%d (%s): the GPU reported an error in this op's context "
		         "(the faulting op is this one or a later one)", e, nw_cuda_error_name((CUresult)e));
		break;
	}
	case NW_FIND_ASYNC:
		what = "FAILED";
		snprintf(detail, sizeof(detail), "async_error=%s: ncclCommGetAsyncError reported it",
		         nw_nccl_result_name(atomic_load(&op->result), res));
		break;
	}
	snprintf(buf + n, len > (size_t)n ? len - (size_t)n : 0, " state=%s %s", what, detail);
}

void nw_stalls_reset(void)
{
	watch = NULL;                          /* the parent's: left behind */
	watch_count = watch_cap = 0;
	scan_next = 0;
	scan_waits = 0;
	previous.count = 0;
	noldest = 0;
}
