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
 * expects, so the marker (bit 63 set) is "not valid", exactly like 0.
 *
 * Updates in place after the record was published (result, state, times)
 * go through nw_ring_hold(): one CAS that succeeds only while commit still
 * names the op's ticket, and that keeps writers off the slot until
 * nw_ring_release() (they take a new ticket instead, as for an older writer
 * at work). So an update whose op was overwritten writes nothing, and a
 * reused slot never receives the old op's update. Holders count in commit
 * (NW_SEG_COMMIT_UPDATERS): the watchdog and the calling thread may hold
 * one record at once; neither ever waits for the other. */
#ifndef NCCLWATCH_INTERPOSE_RING_H
#define NCCLWATCH_INTERPOSE_RING_H

#include "segment_file.h"
#include "test_hooks.h"

#include <time.h>

#define NW_RING_WRITING NW_SEG_COMMIT_WRITING
#define NW_RING_CLAIM_TRIES 4

/* The marker must be visible before the fields: a release fence after the
 * claim (segment.h). The claim acquires: an updater's stores to the record
 * it released happen before the new writer's (no stale store lands after).
 * ThreadSanitizer does not model fences; there a sequentially consistent
 * CAS stands in (the same instruction on x86). */
#if defined(__SANITIZE_THREAD__)
#define NW_RING_CLAIM_ORDER memory_order_seq_cst
#define NW_RING_CLAIM_FENCE() ((void)0)
#else
#define NW_RING_CLAIM_ORDER memory_order_acquire
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
			if (__builtin_expect((cur & (NW_RING_WRITING | NW_SEG_COMMIT_UPDATERS)) == 0, 1)) {
				/* Empty (0) or published: the owner's ticket is cur - 1. */
				if (cur > t + 1)
					return NULL;       /* a newer lap already owns this slot */
				if (atomic_compare_exchange_weak_explicit(&op->commit, &cur, NW_RING_WRITING | t,
				                                          NW_RING_CLAIM_ORDER, memory_order_relaxed)) {
					NW_RING_CLAIM_FENCE();
					*ticket = t;
					return op;
				}
				continue;
			}
			uint64_t owner = cur & NW_RING_WRITING ? cur & ~NW_RING_WRITING
			                                       : (cur & NW_SEG_COMMIT_TICKET) - 1;
			if (owner > t)
				return NULL;           /* a newer lap already owns this slot */
			break;                     /* an older writer or updater is here: new ticket */
		}
	}
	return NULL;
}

static inline void nw_ring_publish(struct nw_seg_op *op, uint64_t ticket)
{
	atomic_store_explicit(&op->commit, ticket + 1, memory_order_release);
}

/* The record of ticket1 (= ticket + 1) if it still holds that ticket, to
 * read (it may be reused while read: copy, then check again). Never write
 * through it: nw_ring_hold(). */
static inline struct nw_seg_op *nw_ring_find(uint64_t ticket1)
{
	if (!ticket1 || !nw_seg.hdr)
		return NULL;
	struct nw_seg_op *op = &nw_seg.ring[(ticket1 - 1) & nw_seg.ring_mask];
	uint64_t c = atomic_load_explicit(&op->commit, memory_order_acquire);
	return nw_seg_commit_ticket1(c) == ticket1 ? op : NULL;
}

/* Hold the record of ticket1 to update it in place: NULL if the slot holds
 * another ticket now (the update is dropped: its op was overwritten). */
static inline struct nw_seg_op *nw_ring_hold(uint64_t ticket1)
{
	if (!ticket1 || !nw_seg.hdr)
		return NULL;
	struct nw_seg_op *op = &nw_seg.ring[(ticket1 - 1) & nw_seg.ring_mask];
	uint64_t cur = atomic_load_explicit(&op->commit, memory_order_relaxed);
	do {
		if ((cur & ~NW_SEG_COMMIT_UPDATERS) != ticket1 ||
		    (cur & NW_SEG_COMMIT_UPDATERS) == NW_SEG_COMMIT_UPDATERS)
			return NULL;
	} while (!atomic_compare_exchange_weak_explicit(&op->commit, &cur, cur + NW_SEG_COMMIT_UPDATER,
	                                                memory_order_acquire, memory_order_relaxed));
	NW_TEST_RING_DELAY();
	return op;
}

/* The updates are visible before a writer can take the slot. */
static inline void nw_ring_release(struct nw_seg_op *op)
{
	atomic_fetch_sub_explicit(&op->commit, NW_SEG_COMMIT_UPDATER, memory_order_release);
}

/* After the real call returned: its result. */
static inline void nw_ring_set_result(uint64_t ticket1, int32_t result)
{
	struct nw_seg_op *op = nw_ring_hold(ticket1);
	if (op) {
		atomic_store_explicit(&op->result, result, memory_order_relaxed);
		nw_ring_release(op);
	}
}

/* A life-cycle call returned: its result and end time, and a new state
 * when state != 0. */
void nw_ring_finish(uint64_t ticket1, int32_t result, uint32_t state);

/* A new state (CAPTURED, UNTRACKED, DISCARDED: set by the calling thread). */
void nw_ring_set_state(uint64_t ticket1, uint32_t state);

#endif
