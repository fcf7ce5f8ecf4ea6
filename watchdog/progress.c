/* progress: see progress.h. */
#include "progress.h"

#include "exit_wait.h"

#include "../interpose/cuda_driver.h"
#include "../interpose/track.h"
#include "../interpose/graphs.h"
#include "../interpose/ring.h"
#include "../interpose/test_hooks.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

/* Whoever advances pairs holds pairs_lock: the watchdog's poll, or a
 * thread whose event pool ran dry (nw_progress_reap). It guards the
 * pending list, the taking of what the hot path handed over, and the peer
 * index; so a pair is owned by one of them at a time, and the comm
 * positions are moved by one at a time (store_max is no atomic maximum). */
static pthread_mutex_t pairs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nw_track *pending_head, *pending_tail;
static uint64_t pending_count;

/* (comm slot, its generation, peer) -> peer table slot, learnt from the
 * segment: a reused comm slot's new comm has peer entries of its own. */
struct peer_id {
	uint32_t comm_slot, comm_gen;
	int32_t peer;
};
struct peer_key {
	struct peer_id key;
	uint32_t slot;
	UT_hash_handle hh;
};
static struct peer_key *peer_index;
static uint32_t peer_indexed;

static struct nw_seg_peer *find_peer(uint32_t comm_slot, uint32_t comm_gen, int32_t peer)
{
	uint32_t n = atomic_load_explicit(&nw_seg.hdr->peer_count, memory_order_acquire);
	for (; peer_indexed < n; peer_indexed++) {
		struct nw_seg_peer *sp = &nw_seg.peers[peer_indexed];
		if (!atomic_load_explicit(&sp->used, memory_order_acquire))
			break;                     /* not published yet: next poll */
		struct peer_key *k = malloc(sizeof(*k));
		if (!k)
			break;
		memset(&k->key, 0, sizeof(k->key));
		k->key = (struct peer_id){ sp->comm_slot, sp->comm_gen, sp->peer };
		k->slot = peer_indexed;
		HASH_ADD(hh, peer_index, key, sizeof(k->key), k);
	}
	struct peer_id key = { comm_slot, comm_gen, peer };
	struct peer_key *k = NULL;
	HASH_FIND(hh, peer_index, &key, sizeof(key), k);
	return k ? &nw_seg.peers[k->slot] : NULL;
}

static void store_max(NW_ATOMIC(uint64_t) *field, uint64_t v)
{
	if (atomic_load_explicit(field, memory_order_relaxed) < v)
		atomic_store_explicit(field, v, memory_order_relaxed);
}

/* Hold comm slot `slot` while it still holds generation `gen` (its comm
 * has not ended and given the slot away): the slot, or NULL (the update
 * is dropped). Release with comm_release. */
static struct nw_seg_comm *comm_hold(uint32_t slot, uint32_t gen)
{
	if (slot >= nw_seg.comm_capacity)
		return NULL;
	struct nw_seg_comm *sc = &nw_seg.comms[slot];
	uint32_t w = atomic_load_explicit(&sc->gen, memory_order_relaxed);
	for (;;) {
		if ((w & (NW_COMM_GEN_MASK | NW_COMM_GEN_WRITING)) != gen ||
		    (w & NW_COMM_GEN_HOLDERS) == NW_COMM_GEN_HOLDERS)
			return NULL;
		if (atomic_compare_exchange_weak_explicit(&sc->gen, &w, w + NW_COMM_GEN_HOLDER,
		                                          memory_order_acquire, memory_order_relaxed)) {
			NW_TEST_RING_DELAY();   /* test build: a new comm waits to take the slot meanwhile */
			return sc;
		}
	}
}

static void comm_release(struct nw_seg_comm *sc)
{
	atomic_fetch_sub_explicit(&sc->gen, NW_COMM_GEN_HOLDER, memory_order_release);
}

enum transition { TO_STARTED, TO_COMPLETED, TO_FAILED };

#define MOVED_STARTED   0x1   /* the op left ENQUEUED */
#define MOVED_COMPLETED 0x2   /* the op became COMPLETED */

/* Move a held record (if it still waits for this); what moved. One CAS
 * per state change: nothing else sets an op's state while its pair is
 * watched, and a change seen here would keep its own. */
static int advance_record(struct nw_seg_op *op, enum transition to, uint64_t now, CUresult err)
{
	uint32_t st = atomic_load_explicit(&op->state, memory_order_acquire);
	if (st != NW_ST_ENQUEUED && st != NW_ST_STARTED)
		return 0;                       /* CAPTURED, DISCARDED, already final */
	if (to == TO_FAILED) {
		atomic_store_explicit(&op->cuda_error, (int32_t)err, memory_order_relaxed);
		atomic_store_explicit(&op->end_ns, now, memory_order_relaxed);
		atomic_compare_exchange_strong_explicit(&op->state, &st, NW_ST_FAILED,
		                                        memory_order_release, memory_order_relaxed);
		return 0;
	}
	if (to == TO_STARTED && st != NW_ST_ENQUEUED)
		return 0;                       /* already STARTED: stays so */
	int moved = 0;
	if (st == NW_ST_ENQUEUED) {
		atomic_store_explicit(&op->start_ns, now, memory_order_relaxed);
		moved |= MOVED_STARTED;
	}
	if (to == TO_COMPLETED) {
		atomic_store_explicit(&op->end_ns, now, memory_order_relaxed);
		moved |= MOVED_COMPLETED;
	}
	uint32_t next = to == TO_STARTED ? NW_ST_STARTED : NW_ST_COMPLETED;
	if (!atomic_compare_exchange_strong_explicit(&op->state, &st, next,
	                                             memory_order_release, memory_order_relaxed))
		return 0;
	return moved;
}

/* The comm's positions after op `id` moved. */
static void advance_comm(const struct nw_op_ident *id, int moved, uint64_t now)
{
	if (!moved)
		return;
	struct nw_seg_comm *sc = comm_hold(id->comm_slot, id->comm_gen);
	if (!sc)
		return;                         /* no comm, or it ended and its slot is another's */
	int coll = NW_OP_IS_COLL(id->kind);
	if (coll && (moved & MOVED_STARTED)) {
		store_max(&sc->coll_started, id->seq);
		atomic_store_explicit(&sc->coll_started_ns, now, memory_order_relaxed);
	}
	if (!(moved & MOVED_COMPLETED)) {
		comm_release(sc);
		return;
	}
	if (coll) {
		store_max(&sc->coll_completed, id->seq);
		atomic_store_explicit(&sc->coll_completed_ns, now, memory_order_relaxed);
	} else if (NW_OP_IS_P2P(id->kind)) {
		atomic_fetch_add_explicit(&sc->p2p_completed, 1, memory_order_relaxed);
		atomic_store_explicit(&sc->p2p_completed_ns, now, memory_order_relaxed);
		struct nw_seg_peer *sp = find_peer(id->comm_slot, id->comm_gen, id->peer);
		if (sp && id->seq) {
			store_max(id->kind == NW_OP_SEND ? &sp->send_completed : &sp->recv_completed, id->seq);
			atomic_store_explicit(&sp->last_ns, now, memory_order_relaxed);
		}
	}
	comm_release(sc);
}

/* Apply a transition to every op the pair measures. */
static void apply(struct nw_track *t, enum transition to, uint64_t now, CUresult err)
{
	if (!t->group_id) {
		/* The comm's positions move with what the pair remembers; a record
		 * already overwritten still moves them (its op did complete). */
		struct nw_seg_op *op = nw_ring_hold(t->ticket1);
		int moved;
		if (op) {
			moved = advance_record(op, to, now, err);
			nw_ring_release(op);
		} else {
			moved = to == TO_STARTED ? MOVED_STARTED
			      : to == TO_COMPLETED ? MOVED_STARTED | MOVED_COMPLETED : 0;
		}
		advance_comm(&t->op, moved, now);
		return;
	}
	/* A group: its ops lie between its GROUP_START and GROUP_END records
	 * (other threads' records may be interleaved). Each is held while it
	 * is read and moved, so what it says is its own ticket's: the group,
	 * stream and identity the interposer wrote when it issued the op. */
	uint64_t last = t->ticket1 ? t->ticket1 : atomic_load(&nw_seg.hdr->ring_head);
	uint64_t cap = nw_seg.ring_mask + 1;
	uint64_t first = t->first_ticket1 ? t->first_ticket1 : 1;
	if (last > cap && first < last - cap)
		first = last - cap;                 /* older records were overwritten */
	for (uint64_t t1 = first; t1 <= last; t1++) {
		struct nw_seg_op *op = nw_ring_hold(t1);
		if (!op)
			continue;
		struct nw_op_ident id = { .seq = op->seq, .comm_slot = op->comm_slot, .kind = op->kind,
		                          .peer = op->root, .comm_gen = op->comm_gen };
		int moved = 0;
		if (op->group_id == t->group_id && op->stream == (uint64_t)(uintptr_t)t->stream &&
		    (NW_OP_IS_COLL(id.kind) || NW_OP_IS_P2P(id.kind)))
			moved = advance_record(op, to, now, err);
		nw_ring_release(op);
		advance_comm(&id, moved, now);
	}
}

/* At exit the driver may be shutting down: these errors then say nothing
 * about the op (a GPU fault, say ILLEGAL_ADDRESS, still does). */
static int says_nothing(CUresult r, int at_exit)
{
	if (!at_exit && !nw_exit_begun())   /* a poll back from the driver after the exit began */
		return 0;
	switch (r) {
	case CUDA_ERROR_DEINITIALIZED:
	case CUDA_ERROR_NOT_INITIALIZED:
	case CUDA_ERROR_CONTEXT_IS_DESTROYED:
	case CUDA_ERROR_INVALID_CONTEXT:
	case CUDA_ERROR_INVALID_HANDLE:
		return 1;
	default:
		return 0;
	}
}

/* A graph launch the stream reached: how many of its graph's ops (capture
 * order) it completed, from the ops' events, while it is the newest launch
 * recording them (a newer one re-records them: this one's figure then
 * stays as last seen). An op without an event counts once a later op's
 * event completed. Written into the record's flags when it grows. */
static void graph_ops_progress(struct nw_track *t, int first)
{
	struct nw_graph_opev *ev = t->opev;
	if (atomic_load_explicit(&ev->latest, memory_order_acquire) != t->ticket1)
		return;
	uint32_t done = t->opdone;
	for (uint32_t i = done; i < ev->n; i++) {
		if (!ev->ev[i])
			continue;
		if (nw_cu.cuEventQuery(ev->ev[i]->end) != CUDA_SUCCESS)
			break;
		done = i + 1;
	}
	if (atomic_load_explicit(&ev->latest, memory_order_acquire) != t->ticket1 ||
	    (done == t->opdone && !first))
		return;
	t->opdone = done;
	struct nw_seg_op *op = nw_ring_hold(t->ticket1);
	if (!op)
		return;
	__atomic_store_n(&op->flags, NW_OPF_GRAPH_OPS_KNOWN | done << NW_OPF_GRAPH_OPS_SHIFT, __ATOMIC_RELAXED);
	nw_ring_release(op);
}

/* 1: the pair is finished (give it back). `end_first`: ask the end event
 * first; it is recorded after the start event on the same stream, so once
 * it completed the start had too: a pair that finished costs one query
 * instead of two, one not started yet two instead of one (a reap, which
 * looks at the oldest pairs, mostly finished, asks so; a poll does not). */
static int poll_track(struct nw_track *t, uint64_t now, int at_exit, int end_first)
{
	CUresult end = CUDA_ERROR_NOT_READY;
	int end_asked = 0;
	if (!t->started) {
		if (end_first && t->end_error == CUDA_SUCCESS) {
			end = nw_cu.cuEventQuery(t->end);
			end_asked = 1;
		}
		CUresult r = end == CUDA_SUCCESS ? CUDA_SUCCESS : nw_cu.cuEventQuery(t->start);
		if (r == CUDA_ERROR_NOT_READY || says_nothing(r, at_exit))
			return 0;
		if (r != CUDA_SUCCESS) {
			apply(t, TO_FAILED, now, r);
			return 1;
		}
		t->started = 1;
		apply(t, TO_STARTED, now, CUDA_SUCCESS);
		if (t->opev)
			graph_ops_progress(t, 1);
	}
	if (t->end_error != CUDA_SUCCESS) {
		apply(t, TO_FAILED, now, t->end_error);
		return 1;
	}
	CUresult r = end_asked ? end : nw_cu.cuEventQuery(t->end);
	if (r == CUDA_ERROR_NOT_READY && t->opev)
		graph_ops_progress(t, 0);
	if (r == CUDA_ERROR_NOT_READY || says_nothing(r, at_exit))
		return 0;
	apply(t, r == CUDA_SUCCESS ? TO_COMPLETED : TO_FAILED, now, r);
	return 1;
}

/* What the hot path handed over goes to the end of the pending list. */
static void take_submitted(void)
{
	struct nw_track *in = nw_track_take_submitted();
	while (in) {
		struct nw_track *next = in->next;
		in->next = NULL;
		if (pending_tail)
			pending_tail->next = in;
		else
			pending_head = in;
		pending_tail = in;
		pending_count++;
		atomic_fetch_add_explicit(&nw_seg.hdr->ops_tracked, 1, memory_order_relaxed);
		in = next;
	}
}

/* A reap stops once pairs on this many streams were seen still running,
 * or after this many pairs skipped: ops on one stream end in order, so
 * past a stream's first pair still running a reap skips that stream's
 * later pairs unasked, and a stream full of waiting ops does not hide the
 * finished pairs of the others behind it. A stream is its handle in its
 * context (pool); the per-thread default stream's handle, the same in
 * every thread, is skipped for all of them: a delay, the poll asks. */
#define NW_REAP_STREAMS 8
#define NW_REAP_SKIPS 1024

struct running_stream {
	CUstream stream;
	const struct nw_evpool *pool;
};

static int stream_running(const struct running_stream *running, unsigned n, const struct nw_track *t)
{
	for (unsigned i = 0; i < n; i++)
		if (running[i].stream == t->stream && running[i].pool == t->pool)
			return 1;
	return 0;
}

/* Poll the pending pairs, oldest first, giving the finished ones back to
 * their pools: all of them (a poll), or for a reap (`reap`) with the end
 * event asked first, until NW_REAP_STREAMS streams were seen running. */
static void advance_pending(uint64_t now, int at_exit, int reap)
{
	struct nw_track **link = &pending_head, *prev = NULL;
	struct running_stream running[NW_REAP_STREAMS];
	unsigned nrunning = 0, skipped = 0;
	while (*link) {
		struct nw_track *t = *link;
		if (reap && stream_running(running, nrunning, t)) {
			if (++skipped >= NW_REAP_SKIPS)
				return;
		} else if (poll_track(t, now, at_exit, reap)) {
			*link = t->next;
			if (pending_tail == t)
				pending_tail = prev;
			pending_count--;
			nw_graph_opev_unref(t->opev);   /* its ops' events: this launch's reference */
			nw_track_give_back(t);
			continue;
		} else if (reap) {
			running[nrunning++] = (struct running_stream){ t->stream, t->pool };
			if (nrunning == NW_REAP_STREAMS)
				return;
		}
		prev = t;
		link = &t->next;
	}
}

/* This thread is inside a reap (it holds pairs_lock): an exit() from a
 * signal handler that interrupted the reap must not wait for itself. */
static __thread int reaping __attribute__((tls_model("initial-exec")));

int nw_progress_poll(uint64_t now, int at_exit)
{
	if (reaping)
		return -1;
	/* At exit, a reap of another thread may be stuck in a driver call
	 * holding the lock: the exit waits for it only so long. */
	if (at_exit ? nw_exit_lock(&pairs_lock) != 0 : pthread_mutex_lock(&pairs_lock) != 0)
		return -1;
	take_submitted();
	advance_pending(now, at_exit, 0);
	pthread_mutex_unlock(&pairs_lock);
	return 0;
}

void nw_progress_reap(void)
{
	/* The calling thread may be capturing a graph (this runs when a
	 * capture takes an op event, too), or another thread in global mode:
	 * an event query from a thread not in relaxed mode would invalidate
	 * that capture. The watchdog's thread is relaxed for good; here only
	 * for the reap. A driver without capture modes: no reap. */
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	if (!nw_cu.cuThreadExchangeStreamCaptureMode)
		return;
	/* Never wait for the watchdog (only it waits): its poll may be long,
	 * or stuck in a driver call. A poll under way gives back what
	 * finished; meanwhile the pool grows by a batch. */
	if (pthread_mutex_trylock(&pairs_lock) != 0)
		return;
	reaping = 1;
	if (nw_cu.cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS) {
		take_submitted();
		/* at_exit = 1: an error that may only say the driver is going
		 * away judges nothing here; the watchdog's next poll does. */
		advance_pending(nw_now_ns(), 1, 1);
		nw_cu.cuThreadExchangeStreamCaptureMode(&mode);
	}
	reaping = 0;
	pthread_mutex_unlock(&pairs_lock);
}

uint64_t nw_progress_pending(void)
{
	return pending_count;
}

void nw_progress_reset(void)
{
	pairs_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	pending_head = pending_tail = NULL;   /* the parent's pairs: unusable here, left behind */
	pending_count = 0;
	peer_index = NULL;
	peer_indexed = 0;
}
