/* evpool: see evpool.h. */
#include "evpool.h"

#include "cuda_driver.h"
#include "hooks.h"
#include "segment_file.h"
#include "state.h"

#include <pthread.h>
#include <stdlib.h>

#define NW_EVPOOL_MAX 64          /* contexts per process */
#define NW_EVPOOL_GROW 16         /* tracks made at once when a pool runs dry */
/* A reap that leaves fewer tracks than this to hand also grows the pool:
 * a pool that only just covers what is in flight would be reaped at
 * nearly every op; one batch more keeps reaps rare. */
#define NW_EVPOOL_REAP_MIN (NW_EVPOOL_GROW / 2)

static struct nw_evpool nw_pools[NW_EVPOOL_MAX];
static atomic_uint nw_pool_count;
static pthread_mutex_t nw_pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* The calling thread's private tracks, all of one pool. */
static __thread struct {
	struct nw_evpool *pool;
	struct nw_track *list;
} nw_cache __attribute__((tls_model("initial-exec")));

struct nw_evpool *nw_evpool_for(CUcontext ctx)
{
	unsigned n = atomic_load_explicit(&nw_pool_count, memory_order_acquire);
	for (unsigned i = 0; i < n; i++)
		if (nw_pools[i].ctx == ctx)
			return &nw_pools[i];
	pthread_mutex_lock(&nw_pool_lock);
	n = atomic_load_explicit(&nw_pool_count, memory_order_relaxed);
	struct nw_evpool *p = NULL;
	for (unsigned i = 0; i < n && !p; i++)
		if (nw_pools[i].ctx == ctx)
			p = &nw_pools[i];
	if (!p && n < NW_EVPOOL_MAX) {
		p = &nw_pools[n];
		p->ctx = ctx;
		atomic_store_explicit(&p->free, NULL, memory_order_relaxed);
		atomic_store_explicit(&p->sink, NULL, memory_order_relaxed);
		atomic_store_explicit(&nw_pool_count, n + 1, memory_order_release);
	}
	pthread_mutex_unlock(&nw_pool_lock);
	return p;
}

/* Make up to NW_EVPOOL_GROW tracks in the current context; a list or NULL. */
static struct nw_track *grow(struct nw_evpool *pool)
{
	struct nw_track *list = NULL;
	unsigned made = 0;
	for (int i = 0; i < NW_EVPOOL_GROW; i++) {
		struct nw_track *t = calloc(1, sizeof(*t));
		if (!t)
			break;
		if (nw_cu.cuEventCreate(&t->start, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
			free(t);
			break;
		}
		if (nw_cu.cuEventCreate(&t->end, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
			nw_cu.cuEventDestroy(t->start);
			free(t);
			break;
		}
		made += 2;
		t->pool = pool;
		t->next = list;
		list = t;
	}
	if (made && nw_seg.hdr)
		atomic_fetch_add_explicit(&nw_seg.hdr->events_created, made, memory_order_relaxed);
	if (made)   /* the driver is initialised: its exit teardown is registered */
		nw_exit_settle_arm();
	return list;
}

/* Push a list (head .. tail) onto a pool: CAS on the head only (ABA-safe). */
static void push_list(struct nw_evpool *pool, struct nw_track *head, struct nw_track *tail)
{
	struct nw_track *old = atomic_load_explicit(&pool->free, memory_order_relaxed);
	do
		tail->next = old;
	while (!atomic_compare_exchange_weak_explicit(&pool->free, &old, head,
	                                              memory_order_release, memory_order_relaxed));
}

/* The pool ran dry: first the pairs in flight that finished (a reap,
 * which does nothing while a watchdog poll is under way: that poll gives
 * them back), new ones only when that left too few. Without it, events were
 * created for as long as ops outran the watchdog's poll (100 ms), ever
 * more of them as the op rate rose; now a pool stops growing at what is
 * in flight plus a batch, and no event is created in steady state. */
static struct nw_track *refill(struct nw_evpool *pool)
{
	if (nw_lifecycle.reap)
		nw_lifecycle.reap();
	struct nw_track *list = atomic_exchange_explicit(&pool->free, NULL, memory_order_acquire);
	unsigned n = 0;
	struct nw_track *tail = NULL;
	for (struct nw_track *t = list; t && n < NW_EVPOOL_REAP_MIN; t = t->next, n++)
		tail = t;
	if (n >= NW_EVPOOL_REAP_MIN)
		return list;
	struct nw_track *made = grow(pool);
	if (!made)
		return list;
	if (tail)
		tail->next = made;
	return list ? list : made;
}

struct nw_track *nw_track_take(struct nw_evpool *pool)
{
	if (__builtin_expect(nw_cache.pool != pool, 0)) {
		/* This thread moved to another context: its cache goes back whole. */
		if (nw_cache.list) {
			struct nw_track *tail = nw_cache.list;
			while (tail->next)
				tail = tail->next;
			push_list(nw_cache.pool, nw_cache.list, tail);
		}
		nw_cache.pool = pool;
		nw_cache.list = NULL;
	}
	if (__builtin_expect(nw_cache.list == NULL, 0)) {
		nw_cache.list = atomic_exchange_explicit(&pool->free, NULL, memory_order_acquire);
		if (!nw_cache.list)
			nw_cache.list = refill(pool);
		if (!nw_cache.list)
			return NULL;
	}
	struct nw_track *t = nw_cache.list;
	nw_cache.list = t->next;
	t->next = NULL;
	return t;
}

void nw_track_untake(struct nw_track *t)
{
	if (nw_cache.pool == t->pool) {
		t->next = nw_cache.list;
		nw_cache.list = t;
	} else {
		nw_track_give_back(t);
	}
}

void nw_track_give_back(struct nw_track *t)
{
	t->started = 0;
	t->group_id = 0;
	t->end_error = CUDA_SUCCESS;
	t->opev = NULL;
	t->opdone = 0;
	push_list(t->pool, t, t);
}

CUevent nw_evpool_sink(struct nw_evpool *pool)
{
	CUevent e = atomic_load_explicit(&pool->sink, memory_order_acquire);
	if (e)
		return e;
	pthread_mutex_lock(&nw_pool_lock);
	e = atomic_load_explicit(&pool->sink, memory_order_relaxed);
	CUevent made = NULL;
	if (!e && nw_cu.cuEventCreate(&made, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS && made) {
		e = made;
		atomic_store_explicit(&pool->sink, e, memory_order_release);
		if (nw_seg.hdr)
			atomic_fetch_add_explicit(&nw_seg.hdr->events_created, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&nw_pool_lock);
	return e;
}

void nw_evpool_reset_after_fork(void)
{
	nw_pool_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	atomic_store(&nw_pool_count, 0);
	nw_cache.pool = NULL;
	nw_cache.list = NULL;
}

struct nw_track *nw_track_external(CUstream s)
{
	CUcontext ctx = NULL;
	if (!nw_cu.cuEventRecordWithFlags || nw_cu.cuStreamGetCtx(s, &ctx) != CUDA_SUCCESS || !ctx)
		return NULL;
	int pushed = nw_cu_ctx_enter(ctx);
	if (pushed < 0)
		return NULL;
	struct nw_evpool *pool = nw_evpool_for(ctx);
	struct nw_track *t = pool ? nw_track_take(pool) : NULL;
	if (t && nw_cu.cuEventRecordWithFlags(t->end, s, CU_EVENT_RECORD_EXTERNAL) != CUDA_SUCCESS) {
		nw_track_untake(t);
		t = NULL;
	}
	nw_cu_ctx_leave(pushed);
	return t;
}

int nw_track_sink(CUstream s)
{
	CUcontext ctx = NULL;
	if (!nw_cu.cuEventRecordWithFlags || nw_cu.cuStreamGetCtx(s, &ctx) != CUDA_SUCCESS || !ctx)
		return 0;
	int pushed = nw_cu_ctx_enter(ctx);
	if (pushed < 0)
		return 0;
	struct nw_evpool *pool = nw_evpool_for(ctx);
	CUevent sink = pool ? nw_evpool_sink(pool) : NULL;
	int ok = sink && nw_cu.cuEventRecordWithFlags(sink, s, CU_EVENT_RECORD_EXTERNAL) == CUDA_SUCCESS;
	nw_cu_ctx_leave(pushed);
	return ok;
}
