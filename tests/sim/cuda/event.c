/* Events of the simulated CUDA driver. cuEventRecord puts a marker at the
 * end of a stream; the event is complete once the stream ran its latest
 * marker. Each record is a small refcounted object, so re-recording moves
 * the event to a new point while cuStreamWaitEvent items and sleeping
 * cuEventSynchronize calls keep waiting for the record they saw. An event
 * never recorded is complete, as in the driver. Timing is not simulated
 * (no cuEventElapsedTime); every event flag is accepted.
 *
 * During capture, cuEventRecord adds no node and leaves the event alone;
 * cuEventRecordWithFlags(CU_EVENT_RECORD_EXTERNAL) adds an event-record
 * node instead: every launch of the graph re-records the event at that
 * point of the graph (a fresh record, so cuEventQuery/cuEventSynchronize
 * see the newest launch). The external flag outside capture is refused
 * (CUDA_ERROR_INVALID_VALUE: "invalid when used outside of capture"). */
#include <stdlib.h>

#include "sim_cuda.h"

struct sim_record {      /* one cuEventRecord; fields under ctx->lock */
	int done;
	int refs;            /* the event's latest pointer, markers, waiters */
};

struct sim_event {
	struct sim_ctx *ctx;
	unsigned flags;
	struct sim_record *latest; /* NULL: never recorded */
};

struct record_ref {      /* the argument of a cuStreamWaitEvent item */
	struct sim_ctx *ctx;
	struct sim_record *rec;
};

static void record_unref_locked(struct sim_record *rec)
{
	if (--rec->refs == 0)
		free(rec);
}

/* The marker of one record reached the head of its stream (ran), or was
 * dropped by a faulted context (!ran). Called with the context locked. */
static void marker_reached_locked(void *arg, int ran)
{
	struct sim_record *rec = arg;
	if (ran)
		rec->done = 1;
	record_unref_locked(rec);
}

static void record_ref_drop(void *arg)
{
	struct record_ref *m = arg;
	pthread_mutex_lock(&m->ctx->lock);
	record_unref_locked(m->rec);
	pthread_mutex_unlock(&m->ctx->lock);
	free(m);
}

/* cuStreamWaitEvent's item: blocks its stream until the record is reached.
 * If the event's context faults instead, the wait ends (successfully: the
 * fault belongs to the other context). */
static CUresult wait_run(void *arg)
{
	struct record_ref *w = arg;
	pthread_mutex_lock(&w->ctx->lock);
	while (!w->rec->done && w->ctx->sticky == CUDA_SUCCESS)
		pthread_cond_wait(&w->ctx->progress, &w->ctx->lock);
	record_unref_locked(w->rec);
	pthread_mutex_unlock(&w->ctx->lock);
	free(w);
	return CUDA_SUCCESS;
}

/* Validates an event handle and locks its context (registry lock held). */
static CUresult event_lock_registry_held(CUevent hEvent, struct sim_event **out)
{
	if (!hEvent || !sim_registry_has(SIM_KIND_EVENT, hEvent))
		return CUDA_ERROR_INVALID_HANDLE;
	struct sim_event *e = (struct sim_event *)hEvent;
	pthread_mutex_lock(&e->ctx->lock);
	*out = e;
	return CUDA_SUCCESS;
}

static CUresult event_lock(CUevent hEvent, struct sim_event **out)
{
	sim_registry_lock();
	CUresult r = event_lock_registry_held(hEvent, out);
	sim_registry_unlock();
	return r;
}

SIM_API CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	SIM_REQUIRE_INIT();
	const unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
	if (!phEvent || (Flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_VALUE; /* as documented */
	struct sim_ctx *ctx = sim_ctx_current();
	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	struct sim_event *e = calloc(1, sizeof *e);
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->ctx = ctx;
	e->flags = Flags;
	sim_registry_lock();
	sim_registry_add(SIM_KIND_EVENT, e);
	sim_registry_unlock();
	*phEvent = (CUevent)e;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuEventDestroy(CUevent hEvent)
{
	SIM_REQUIRE_INIT();
	sim_registry_lock();
	if (!hEvent || !sim_registry_remove(SIM_KIND_EVENT, hEvent)) {
		sim_registry_unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	struct sim_event *e = (struct sim_event *)hEvent;
	pthread_mutex_lock(&e->ctx->lock);
	sim_registry_unlock();
	if (e->latest) /* a pending marker keeps its record alive */
		record_unref_locked(e->latest);
	pthread_mutex_unlock(&e->ctx->lock);
	free(e);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
	SIM_REQUIRE_INIT();
	sim_registry_lock();
	if (!hEvent || !sim_registry_has(SIM_KIND_EVENT, hEvent)) {
		sim_registry_unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	struct sim_event *e = (struct sim_event *)hEvent;
	struct sim_stream *s;
	CUresult r = sim_stream_lock_registry_held(hStream, &s);
	sim_registry_unlock();
	if (r != CUDA_SUCCESS)
		return r;
	struct sim_ctx *ctx = s->ctx;
	if (e->ctx != ctx) {
		r = CUDA_ERROR_INVALID_HANDLE; /* event and stream of different contexts */
	} else if (ctx->sticky != CUDA_SUCCESS) {
		r = ctx->sticky;
	} else if (s->capturing) {
		r = CUDA_SUCCESS; /* becomes a graph node; the event is not touched */
	} else {
		struct sim_record *rec = calloc(1, sizeof *rec);
		if (!rec) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
		} else {
			rec->refs = 2; /* the event and the marker */
			r = sim_stream_enqueue_marker_locked(s, marker_reached_locked, rec);
			if (r != CUDA_SUCCESS) {
				free(rec);
			} else {
				if (e->latest)
					record_unref_locked(e->latest);
				e->latest = rec;
			}
		}
	}
	sim_stream_unlock(s);
	return r;
}

/* An event-record node: the template holds the event; each launch's copy
 * holds the record it made (replay, under the registry lock). */
struct record_node {
	struct sim_event *event;
	struct sim_record *rec;    /* a launch's copy: its record; template: NULL */
};

static void *record_node_replay(void *arg)
{
	struct record_node *tmpl = arg, *n = calloc(1, sizeof *n);
	if (!n)
		return NULL;
	n->event = tmpl->event;
	if (!sim_registry_has(SIM_KIND_EVENT, tmpl->event)) {
		sim_warn("cuGraphLaunch: an event-record node's event was destroyed");
		return n;                  /* records nothing */
	}
	struct sim_record *rec = calloc(1, sizeof *rec);
	if (!rec)
		return n;
	struct sim_ctx *ctx = tmpl->event->ctx;
	pthread_mutex_lock(&ctx->lock);
	rec->refs = 2;                 /* the event and this node */
	if (tmpl->event->latest)
		record_unref_locked(tmpl->event->latest);
	tmpl->event->latest = rec;
	pthread_mutex_unlock(&ctx->lock);
	n->rec = rec;
	return n;
}

static void record_node_reached_locked(void *arg, int ran)
{
	struct record_node *n = arg;
	if (n->rec)
		marker_reached_locked(n->rec, ran);
	free(n);
}

/* A template (graph destroyed) or a launch's copy never queued. */
static void record_node_drop(void *arg)
{
	struct record_node *n = arg;
	if (n->rec) {
		pthread_mutex_lock(&n->event->ctx->lock);
		record_unref_locked(n->rec);
		pthread_mutex_unlock(&n->event->ctx->lock);
	}
	free(n);
}

SIM_API CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
	SIM_REQUIRE_INIT();
	if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(flags & CU_EVENT_RECORD_EXTERNAL))
		return cuEventRecord(hEvent, hStream);
	sim_registry_lock();
	if (!hEvent || !sim_registry_has(SIM_KIND_EVENT, hEvent)) {
		sim_registry_unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	struct sim_event *e = (struct sim_event *)hEvent;
	struct sim_stream *s;
	CUresult r = sim_stream_lock_registry_held(hStream, &s);
	sim_registry_unlock();
	if (r != CUDA_SUCCESS)
		return r;
	if (e->ctx != s->ctx) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else if (s->ctx->sticky != CUDA_SUCCESS) {
		r = s->ctx->sticky;
	} else if (!s->capturing) {
		r = CUDA_ERROR_INVALID_VALUE;  /* external: only during capture */
	} else {
		struct record_node *n = calloc(1, sizeof *n);
		if (!n) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
		} else {
			n->event = e;
			r = sim_stream_enqueue_node_locked(s, record_node_reached_locked, record_node_drop,
			                                   record_node_replay, n);
			if (r != CUDA_SUCCESS)
				free(n);
		}
	}
	sim_stream_unlock(s);
	return r;
}

SIM_API CUresult cuEventQuery(CUevent hEvent)
{
	SIM_REQUIRE_INIT();
	struct sim_event *e;
	CUresult r = event_lock(hEvent, &e);
	if (r != CUDA_SUCCESS)
		return r;
	if (e->ctx->sticky != CUDA_SUCCESS)
		r = e->ctx->sticky;
	else
		r = !e->latest || e->latest->done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
	pthread_mutex_unlock(&e->ctx->lock);
	return r;
}

SIM_API CUresult cuEventSynchronize(CUevent hEvent)
{
	SIM_REQUIRE_INIT();
	struct sim_event *e;
	CUresult r = event_lock(hEvent, &e);
	if (r != CUDA_SUCCESS)
		return r;
	struct sim_ctx *ctx = e->ctx;
	struct sim_record *rec = e->latest; /* e may be destroyed while we sleep */
	if (rec) {
		rec->refs++;
		while (!rec->done && ctx->sticky == CUDA_SUCCESS)
			pthread_cond_wait(&ctx->progress, &ctx->lock);
		record_unref_locked(rec);
	}
	r = ctx->sticky;
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

SIM_API CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	SIM_REQUIRE_INIT();
	if (Flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	/* Take the event's current record first (its context may differ from
	 * the stream's; one context lock at a time). */
	struct sim_event *e;
	CUresult r = event_lock(hEvent, &e);
	if (r != CUDA_SUCCESS)
		return r;
	struct sim_ctx *ectx = e->ctx;
	struct sim_record *rec = e->latest;
	if (rec)
		rec->refs++;
	pthread_mutex_unlock(&ectx->lock);
	if (!rec) /* never recorded: nothing to wait for */
		return CUDA_SUCCESS;

	struct record_ref *w = calloc(1, sizeof *w);
	struct sim_stream *s = NULL;
	if (!w)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else if ((r = sim_stream_lock(hStream, &s)) == CUDA_SUCCESS) {
		w->ctx = ectx;
		w->rec = rec;
		r = sim_stream_enqueue_locked(s, wait_run, record_ref_drop, NULL, w);
		sim_stream_unlock(s);
	}
	if (r != CUDA_SUCCESS) {
		free(w);
		pthread_mutex_lock(&ectx->lock);
		record_unref_locked(rec);
		pthread_mutex_unlock(&ectx->lock);
	}
	return r;
}
