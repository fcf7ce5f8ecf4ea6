/* ring: reserve and publish op records in the segment's ring
 * (multi-producer, lock-free, read by other processes).
 *
 * Publication follows segment.h: ticket t = fetch_add(ring_head), slot
 * t % capacity, commit marked "being written", release fence, fields,
 * commit = t + 1 with release. One refinement keeps two writers from ever
 * writing one slot at the same time (a writer preempted for a whole lap of
 * a small ring): the slot is claimed with a CAS of commit to
 * NW_RING_WRITING | t, only from a published or empty value of an older
 * ticket. A writer that finds the slot claimed by an older, still running
 * writer takes a new ticket (the skipped ticket is a gap a reader never
 * accepts); one whose slot already holds a newer ticket gives up: its record
 * was overwritten by design. A reader compares commit with the ticket + 1 it
 * expects, so the marker (bit 63 set) is "not valid", exactly like 0. */
#ifndef NCCLWATCH_INTERPOSE_RING_H
#define NCCLWATCH_INTERPOSE_RING_H

#include "segment_file.h"

#include <time.h>

#define NW_RING_WRITING NW_SEG_COMMIT_WRITING
#define NW_RING_CLAIM_TRIES 4

/* The marker must be visible before the fields: a release fence after the
 * claim (segment.h). ThreadSanitizer does not model fences; there a
 * sequentially consistent CAS stands in (the same instruction on x86). */
#if defined(__SANITIZE_THREAD__)
#define NW_RING_CLAIM_ORDER memory_order_seq_cst
#define NW_RING_CLAIM_FENCE() ((void)0)
#else
#define NW_RING_CLAIM_ORDER memory_order_relaxed
#define NW_RING_CLAIM_FENCE() atomic_thread_fence(memory_order_release)
#endif

static inline uint64_t nw_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);   /* vDSO: no syscall */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Claim a slot; returns it with *ticket set, or NULL (record not written). */
static inline struct nw_seg_op *nw_ring_claim(uint64_t *ticket)
{
	struct nw_seg_header *h = nw_seg.hdr;
	for (int tries = 0; tries < NW_RING_CLAIM_TRIES; tries++) {
		uint64_t t = atomic_fetch_add_explicit(&h->ring_head, 1, memory_order_relaxed);
		struct nw_seg_op *op = &nw_seg.ring[t & nw_seg.ring_mask];
		uint64_t cur = atomic_load_explicit(&op->commit, memory_order_relaxed);
		for (;;) {
			uint64_t owner = cur & NW_RING_WRITING ? cur & ~NW_RING_WRITING : cur - 1;
			if (cur != 0 && owner > t)
				return NULL;           /* a newer lap already owns this slot */
			if (cur & NW_RING_WRITING)
				break;                 /* an older writer is still here: new ticket */
			if (atomic_compare_exchange_weak_explicit(&op->commit, &cur, NW_RING_WRITING | t,
			                                          NW_RING_CLAIM_ORDER, memory_order_relaxed)) {
				NW_RING_CLAIM_FENCE();
				*ticket = t;
				return op;
			}
		}
	}
	return NULL;
}

static inline void nw_ring_publish(struct nw_seg_op *op, uint64_t ticket)
{
	atomic_store_explicit(&op->commit, ticket + 1, memory_order_release);
}

/* The record of ticket1 (= ticket + 1) if it still holds that ticket. */
static inline struct nw_seg_op *nw_ring_find(uint64_t ticket1)
{
	if (!ticket1 || !nw_seg.hdr)
		return NULL;
	struct nw_seg_op *op = &nw_seg.ring[(ticket1 - 1) & nw_seg.ring_mask];
	return atomic_load_explicit(&op->commit, memory_order_acquire) == ticket1 ? op : NULL;
}

/* After the real call returned: its result (and end time for life-cycle
 * calls, with a new state when state != 0). */
static inline void nw_ring_set_result(uint64_t ticket1, int32_t result)
{
	struct nw_seg_op *op = nw_ring_find(ticket1);
	if (op)
		atomic_store_explicit(&op->result, result, memory_order_release);
}

void nw_ring_finish(uint64_t ticket1, int32_t result, uint32_t state);

#endif
