/* comms: see comms.h. */
#define HASH_NONFATAL_OOM 1
#include "comms.h"

#include "log.h"
#include "real_nccl.h"
#include "ring.h"
#include "state.h"
#include "cuda_driver.h"

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static int nw_hash_oom;
#undef uthash_nonfatal_oom
#define uthash_nonfatal_oom(obj) (nw_hash_oom = 1)

static pthread_mutex_t nw_comms_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nw_comm *nw_comms_by_handle;   /* uthash head: live comms */
/* Every entry ever made. Entries are never freed: a thread's lookup cache
 * may still point to a destroyed one. */
static struct nw_comm *nw_comms_all;
/* Ended comms whose slot a new comm may take, the first ended first. */
static struct nw_comm *nw_ended_head, *nw_ended_tail;
atomic_uint nw_comm_generation = 1;          /* TLS caches start at 0: stale */

/* Tries to claim a slot the watchdog holds (it holds one for a few stores). */
#define NW_CLAIM_TRIES 100000

int nw_comms_init(void)
{
	return 0;
}

void nw_comms_reset_after_fork(void)
{
	/* The parent's comms are unusable in the child; entries are left behind. */
	nw_comms_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	nw_comms_by_handle = NULL;
	nw_ended_head = nw_ended_tail = NULL;
	atomic_fetch_add(&nw_comm_generation, 1);
}

static void bump_generation(void)
{
	atomic_fetch_add_explicit(&nw_comm_generation, 1, memory_order_release);
}

/* c ended: a later comm may take its slot (under nw_comms_lock). */
static void queue_ended(struct nw_comm *c)
{
	if (c->ended)
		return;
	c->ended = 1;
	c->ended_next = NULL;
	if (nw_ended_tail)
		nw_ended_tail->ended_next = c;
	else
		nw_ended_head = c;
	nw_ended_tail = c;
}

/* The slot of the comm that ended first, claimed for its next generation
 * (WRITING set): its index and *gen, or UINT32_MAX when no slot is free
 * (under nw_comms_lock). */
static uint32_t claim_ended(uint32_t *gen)
{
	struct nw_comm *c;
	while ((c = nw_ended_head)) {
		nw_ended_head = c->ended_next;
		if (!nw_ended_head)
			nw_ended_tail = NULL;
		if (c->gen >= NW_COMM_GEN_MASK)
			continue;                  /* its generations are spent: it keeps its last comm */
		struct nw_seg_comm *sc = &nw_seg.comms[c->slot];
		uint32_t want = (c->gen + 1) | NW_COMM_GEN_WRITING;
		uint32_t w = atomic_load_explicit(&sc->gen, memory_order_relaxed);
		if ((w & (NW_COMM_GEN_MASK | NW_COMM_GEN_WRITING)) != c->gen)
			continue;                  /* not its slot's word (cannot happen): leave it alone */
		for (int tries = 0; tries < NW_CLAIM_TRIES; tries++) {
			if (w & NW_COMM_GEN_HOLDERS) {
				sched_yield();
				w = atomic_load_explicit(&sc->gen, memory_order_relaxed);
				continue;
			}
			/* Acquire: the watchdog's last update of the old comm is done. */
			if (atomic_compare_exchange_weak_explicit(&sc->gen, &w, want, memory_order_acquire,
			                                          memory_order_relaxed)) {
				*gen = c->gen + 1;
				return c->slot;
			}
		}
		c->ended = 0;                  /* held all along: back in the queue, for a later try */
		queue_ended(c);
		return UINT32_MAX;
	}
	return UINT32_MAX;
}

struct nw_comm *nw_comm_create(const struct nw_comm_spec *spec)
{
	struct nw_seg_header *h = nw_seg.hdr;
	struct nw_comm *c = calloc(1, sizeof(*c));
	struct nw_peer_pos *peers = spec->peer_capacity > 0
		? calloc((size_t)spec->peer_capacity, sizeof(*peers)) : NULL;
	if (!c || (spec->peer_capacity > 0 && !peers)) {
		free(c);
		free(peers);
		nw_stop("out of memory for the comm table");
		return NULL;
	}
	pthread_mutex_lock(&nw_comms_lock);
	uint32_t slot = atomic_load_explicit(&h->comm_count, memory_order_relaxed), gen = 0;
	int reused = slot >= nw_seg.comm_capacity;
	if (reused && (slot = claim_ended(&gen)) == UINT32_MAX) {
		pthread_mutex_unlock(&nw_comms_lock);
		atomic_fetch_add_explicit(&h->comms_dropped, 1, memory_order_relaxed);
		if (!(atomic_fetch_or(&h->flags, NW_SEG_F_COMMS_FULL) & NW_SEG_F_COMMS_FULL))
			nw_log("comm table full: its %u slots all hold live communicators (NCCLWATCH_COMMS=%u); "
			       "communicators made while it is full are not recorded", nw_seg.comm_capacity,
			       nw_seg.comm_capacity);
		free(c);
		free(peers);
		return NULL;
	}
	struct nw_seg_comm *sc = &nw_seg.comms[slot];
	if (reused) {
		/* Claimed (WRITING): nobody reads or holds it. Every field back to
		 * zero but the gen word, so nothing of the old comm shows through. */
		size_t g = offsetof(struct nw_seg_comm, gen), after = g + sizeof(sc->gen);
		memset(sc, 0, g);
		memset((char *)sc + after, 0, sizeof(*sc) - after);
	}
	c->all_next = nw_comms_all;
	nw_comms_all = c;
	c->slot = slot;
	c->gen = gen;
	c->seg = sc;
	c->id = spec->id;
	c->rank = spec->rank;
	c->nranks = spec->nranks;
	c->peer_capacity = peers ? spec->peer_capacity : 0;
	c->peers = peers;
	c->blocking = spec->blocking;
	sc->comm_id = spec->id;
	sc->parent_id = spec->parent_id;
	sc->handle = 0;
	sc->rank = spec->rank;
	sc->nranks = spec->nranks;
	sc->cuda_device = -1;
	sc->origin = spec->origin;
	sc->split_color = spec->color;
	sc->split_key = spec->key;
	sc->blocking = (uint32_t)spec->blocking;
	sc->init_enter_ns = nw_now_ns();
	if (spec->name)
		strncpy(sc->name, spec->name, sizeof(sc->name) - 1);
	if (reused) {
		atomic_store_explicit(&sc->gen, gen, memory_order_release);
		atomic_fetch_add_explicit(&h->comm_reuses, 1, memory_order_relaxed);
	}
	atomic_store_explicit(&sc->state, NW_COMM_INIT_ENTERED, memory_order_release);
	if (!reused)
		atomic_store_explicit(&h->comm_count, slot + 1, memory_order_release);
	pthread_mutex_unlock(&nw_comms_lock);
	return c;
}

/* Comms made inside a group whose identity waits for the group's end:
 * NCCL creates them at the outermost ncclGroupEnd (a split's child has no
 * size or rank before), so asking earlier would record a wrong one. A
 * count, so that the group ends of threads that made none stay one load. */
static atomic_int identity_pending;

/* rank, nranks and device, asked of the real NCCL once (never on the hot path). */
static void learn_identity(struct nw_comm *c)
{
	int v;
	ncclComm_t h = c->handle;
	if (c->nranks < 0 && nw_real.CommCount && NW_GUARDED(nw_real.CommCount(h, &v)) == ncclSuccess && v > 0) {
		__atomic_store_n(&c->nranks, v, __ATOMIC_RELAXED);
		c->seg->nranks = v;
	}
	if (c->rank < 0 && c->nranks > 0 && nw_real.CommUserRank &&
	    NW_GUARDED(nw_real.CommUserRank(h, &v)) == ncclSuccess && v >= 0 && v < c->nranks) {
		__atomic_store_n(&c->rank, v, __ATOMIC_RELAXED);
		c->seg->rank = v;
	}
	if (nw_real.CommCuDevice && NW_GUARDED(nw_real.CommCuDevice(h, &v)) == ncclSuccess) {
		c->seg->cuda_device = v;
		nw_cuda_device_info(v, NULL, 0, c->seg->bus_id, sizeof(c->seg->bus_id), c->seg->uuid);
		if (nw_seg.hdr && !nw_seg.hdr->gpu_name[0])   /* the fingerprint names the first device */
			nw_cuda_device_info(v, nw_seg.hdr->gpu_name, sizeof(nw_seg.hdr->gpu_name), NULL, 0, NULL);
	}
}

void nw_comm_created(struct nw_comm *c, ncclComm_t handle, ncclResult_t r)
{
	struct nw_seg_comm *sc = c->seg;
	sc->init_result = r;
	sc->init_done_ns = nw_now_ns();
	if (handle && (r == ncclSuccess || r == ncclInProgress)) {
		c->handle = handle;
		sc->handle = (uint64_t)(uintptr_t)handle;
		pthread_mutex_lock(&nw_comms_lock);
		struct nw_comm *old = NULL;
		HASH_FIND_PTR(nw_comms_by_handle, &handle, old);
		if (old)
			HASH_DEL(nw_comms_by_handle, old);   /* a stale entry for a reused address */
		nw_hash_oom = 0;
		HASH_ADD_PTR(nw_comms_by_handle, handle, c);
		int oom = nw_hash_oom;
		bump_generation();
		pthread_mutex_unlock(&nw_comms_lock);
		if (oom)
			nw_stop("out of memory for the comm table");
	}
	if (r == ncclSuccess) {
		if (handle && nw_tls.group_depth > 0) {
			pthread_mutex_lock(&nw_comms_lock);
			c->identity_wait = &nw_tls;
			atomic_fetch_add_explicit(&identity_pending, 1, memory_order_release);
			pthread_mutex_unlock(&nw_comms_lock);
		}
		else if (handle)
			learn_identity(c);
		atomic_store_explicit(&sc->state, NW_COMM_INIT_DONE, memory_order_release);
	} else if (r == ncclInProgress && handle) {
		atomic_store_explicit(&sc->state, NW_COMM_INIT_ASYNC, memory_order_release);
	} else {
		atomic_store_explicit(&sc->state, NW_COMM_INIT_FAILED, memory_order_release);
		if (!c->handle) {              /* nothing to destroy: it ended here */
			pthread_mutex_lock(&nw_comms_lock);
			queue_ended(c);
			pthread_mutex_unlock(&nw_comms_lock);
		}
	}
}

void nw_comms_group_done(void)
{
	if (!atomic_load_explicit(&identity_pending, memory_order_acquire))
		return;
	/* Only this thread's: another thread's group may still be open. */
	pthread_mutex_lock(&nw_comms_lock);
	for (struct nw_comm *c = nw_comms_all; c; c = c->all_next) {
		if (c->identity_wait != &nw_tls)
			continue;
		c->identity_wait = NULL;
		atomic_fetch_sub_explicit(&identity_pending, 1, memory_order_relaxed);
		if (c->handle && !c->ended &&
		    atomic_load_explicit(&c->seg->state, memory_order_acquire) == NW_COMM_INIT_DONE)
			learn_identity(c);
	}
	pthread_mutex_unlock(&nw_comms_lock);
}

void nw_comm_async_result(struct nw_comm *c, ncclResult_t async)
{
	struct nw_seg_comm *sc = c->seg;
	uint32_t expected = NW_COMM_INIT_ASYNC;
	if (async == ncclInProgress)
		return;
	uint32_t next = async == ncclSuccess ? NW_COMM_INIT_DONE : NW_COMM_INIT_FAILED;
	if (!atomic_compare_exchange_strong(&sc->state, &expected, next))
		return;                        /* another thread saw it first */
	sc->init_result = async;
	sc->init_done_ns = nw_now_ns();
	if (async == ncclSuccess)
		learn_identity(c);
	nw_ring_finish(c->init_ticket1, async, async == ncclSuccess ? NW_ST_INIT_DONE : NW_ST_INIT_FAILED);
}

void nw_comm_ended(struct nw_comm *c, uint32_t state, int forget)
{
	c->seg->end_ns = nw_now_ns();
	atomic_store_explicit(&c->seg->state, state, memory_order_release);
	if (!forget)
		return;
	pthread_mutex_lock(&nw_comms_lock);
	struct nw_comm *cur = NULL;
	ncclComm_t handle = c->handle;
	HASH_FIND_PTR(nw_comms_by_handle, &handle, cur);
	if (cur == c) {
		HASH_DEL(nw_comms_by_handle, c);
		bump_generation();
	}
	queue_ended(c);
	pthread_mutex_unlock(&nw_comms_lock);
}

struct nw_comm *nw_comm_lookup_slow(ncclComm_t handle, uint32_t gen)
{
	struct nw_thread *t = &nw_tls;
	if (t->cache_gen != gen) {
		memset(t->cache, 0, sizeof(t->cache));
		t->cache_gen = gen;
	}
	struct nw_comm *c = NULL;
	pthread_mutex_lock(&nw_comms_lock);
	HASH_FIND_PTR(nw_comms_by_handle, &handle, c);
	pthread_mutex_unlock(&nw_comms_lock);
	/* Remember misses too: an untracked comm must not take the lock each call. */
	unsigned i = t->cache_next++ % NW_THREAD_CACHE;
	t->cache[i].handle = handle;
	t->cache[i].comm = c;
	return c;
}

uint32_t nw_peer_assign(struct nw_comm *c, struct nw_peer_pos *pp, int32_t peer)
{
	struct nw_seg_header *h = nw_seg.hdr;
	uint32_t n = atomic_load_explicit(&h->peer_count, memory_order_relaxed);
	uint32_t want;
	for (;;) {
		if (n >= nw_seg.peer_capacity) {
			if (!(atomic_fetch_or(&h->flags, NW_SEG_F_PEERS_FULL) & NW_SEG_F_PEERS_FULL))
				nw_log("peer table full (NCCLWATCH_PEERS=%u): later peers are numbered in the ring only",
				       nw_seg.peer_capacity);
			want = NW_PEER_NONE;
			break;
		}
		if (atomic_compare_exchange_weak_explicit(&h->peer_count, &n, n + 1,
		                                          memory_order_acq_rel, memory_order_relaxed)) {
			struct nw_seg_peer *sp = &nw_seg.peers[n];
			sp->comm_slot = c->slot;
			sp->comm_gen = c->gen;
			sp->peer = peer;
			want = n + 1;
			break;
		}
	}
	uint32_t expected = 0;
	if (atomic_compare_exchange_strong_explicit(&pp->slot, &expected, want,
	                                            memory_order_acq_rel, memory_order_acquire)) {
		if (want != NW_PEER_NONE)
			atomic_store_explicit(&nw_seg.peers[want - 1].used, 1, memory_order_release);
		return want;
	}
	return expected;   /* another thread won; our slot (if any) stays unused */
}
