/* track: see track.h. */
#include "track.h"

#include "cuda_driver.h"
#include "comms.h"
#include "graphs.h"
#include "ring.h"
#include "thread.h"

int nw_tracking_on;

static _Atomic(struct nw_track *) nw_submitted;

/* The calling thread's last stream and its context: a stream never moves
 * to another context, and most threads use one stream. A failed record
 * drops it (the handle may have been destroyed and reused). */
static __thread struct {
	CUstream stream;
	CUcontext ctx;
} nw_last __attribute__((tls_model("initial-exec")));

struct nw_track *nw_track_begin_ctx(CUstream s)
{
	CUcontext ctx = nw_last.ctx;
	if (s != nw_last.stream || !ctx) {
		/* The legacy and per-thread default streams belong to whatever
		 * context is current: never cached. */
		if (nw_cu.cuStreamGetCtx(s, &ctx) != CUDA_SUCCESS || !ctx)
			return NULL;
		if (s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD && s != NULL) {
			nw_last.stream = s;
			nw_last.ctx = ctx;
		}
	}
	int pushed = nw_cu_ctx_enter(ctx);
	if (pushed < 0)
		return NULL;
	struct nw_evpool *pool = nw_evpool_for(ctx);
	struct nw_track *t = pool ? nw_track_take(pool) : NULL;
	if (t && nw_cu.cuEventRecord(t->start, s) != CUDA_SUCCESS) {
		nw_track_untake(t);
		t = NULL;
		nw_last.stream = NULL;
		nw_last.ctx = NULL;
	}
	nw_cu_ctx_leave(pushed);
	if (t)
		t->stream = s;
	return t;
}

/* A pair begun on stream s; NULL if untracked (*captured set if it is
 * being captured). */
static inline __attribute__((always_inline)) struct nw_track *begin_on(CUstream s, int *captured)
{
	CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
	*captured = 0;
	if (nw_cu.cuStreamIsCapturing(s, &cs) != CUDA_SUCCESS)
		return NULL;
	if (cs != CU_STREAM_CAPTURE_STATUS_NONE) {
		*captured = 1;
		return NULL;
	}
	return nw_track_begin_ctx(s);
}

static void submit(struct nw_track *t)
{
	struct nw_track *old = atomic_load_explicit(&nw_submitted, memory_order_relaxed);
	do
		t->next = old;
	while (!atomic_compare_exchange_weak_explicit(&nw_submitted, &old, t,
	                                              memory_order_release, memory_order_relaxed));
}

/* Record the end event and hand the pair over. A failed record (a sticky
 * CUDA error in the context) is handed over too: the watchdog then knows
 * the op failed instead of reading a stale event. */
static void end_on(struct nw_track *t)
{
	int pushed = nw_cu_ctx_enter(t->pool->ctx);
	CUresult r = pushed < 0 ? CUDA_ERROR_INVALID_CONTEXT : nw_cu.cuEventRecord(t->end, t->stream);
	nw_cu_ctx_leave(pushed);
	t->end_error = r;
	if (nw_seg.hdr)
		atomic_fetch_add_explicit(&nw_seg.hdr->event_records, r == CUDA_SUCCESS ? 2 : 1,
		                          memory_order_relaxed);
	submit(t);
}

/* Wait for ncclCommGetAsyncError on c (lock-free push; taken all at once). */
static void defer(struct nw_track *t, struct nw_comm *c)
{
	struct nw_track *old = atomic_load_explicit(&c->deferred, memory_order_relaxed);
	do
		t->next = old;
	while (!atomic_compare_exchange_weak_explicit(&c->deferred, &old, t,
	                                              memory_order_release, memory_order_relaxed));
}

/* After the real call: hand over, defer, or (the call failed: nothing was
 * launched) take the pair back. */
static void finish(struct nw_track *t, ncclResult_t r, struct nw_comm *c)
{
	if (r == ncclSuccess)
		end_on(t);
	else if (r == ncclInProgress && c)
		defer(t, c);
	else
		nw_track_untake(t);
}

void nw_track_bind(struct nw_track *t, uint64_t ticket1, struct nw_comm *c, uint64_t seq, uint16_t kind,
                   int32_t peer)
{
	if (!ticket1) {          /* not recorded (untracked comm, ring): nobody to tell */
		nw_track_untake(t);
		return;
	}
	t->ticket1 = ticket1;
	t->first_ticket1 = ticket1;
	t->group_id = 0;
	t->op = (struct nw_op_ident){ .seq = seq, .comm_slot = c ? c->slot : UINT32_MAX,
	                              .kind = kind, .peer = peer, .comm_gen = c ? c->gen : 0 };
}

void nw_track_end(struct nw_track *t, ncclResult_t r, struct nw_comm *c)
{
	if (t)
		finish(t, r, c);
}

static int listed_stream(const struct nw_thread *th, uint64_t stream)
{
	for (uint32_t i = 0; i < th->group_stream_count; i++)
		if (th->group_streams[i] == stream)
			return 1;
	return 0;
}

/* The group's ops on streams past its first NW_GROUP_STREAMS get no pair:
 * UNTRACKED (never left ENQUEUED with nobody watching), or CAPTURED and
 * entered in their graph like any captured op (their nodes: below). Ops
 * past taken[] are not known here (NW_GROUP_TAKEN_MAX). */
static void streams_past_begin(struct nw_thread *th)
{
	for (uint32_t k = 0; k < th->taken_count; k++) {
		struct nw_taken *tk = &th->taken[k];
		if (listed_stream(th, tk->stream))
			continue;
		CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
		int captured = nw_cu.cuStreamIsCapturing((CUstream)(uintptr_t)tk->stream, &cs) == CUDA_SUCCESS &&
		               cs != CU_STREAM_CAPTURE_STATUS_NONE;
		nw_ring_set_state(tk->ticket1, captured ? NW_ST_CAPTURED : NW_ST_UNTRACKED);
		if (captured)
			tk->past_graph_op1 = (tk->ticket1 ? nw_graph_captured(tk->stream, tk->ticket1) : 0) + 1;
	}
}

/* After the group launched: one node per captured stream past the first
 * NW_GROUP_STREAMS, for its last op there, as for the others. */
static void streams_past_end(struct nw_thread *th)
{
	for (uint32_t k = 0; k < th->taken_count; k++) {
		if (!th->taken[k].past_graph_op1)
			continue;
		int last = 1;
		for (uint32_t j = k + 1; j < th->taken_count && last; j++)
			if (th->taken[j].stream == th->taken[k].stream)
				last = 0;
		if (last)
			nw_graph_op_issued(th->taken[k].stream, th->taken[k].past_graph_op1 - 1);
	}
}

void nw_track_group_begin(void)
{
	struct nw_thread *th = &nw_tls;
	th->group_track_count = 0;
	if (!nw_tracking_on)
		return;
	for (uint32_t i = 0; i < th->group_stream_count; i++) {
		CUstream s = (CUstream)(uintptr_t)th->group_streams[i];
		int captured;
		struct nw_track *t = begin_on(s, &captured);
		th->group_capturing[i] = (uint8_t)captured;
		th->group_graph_op1[i] = 0;
		if (!t) {
			for (uint32_t k = 0; k < th->taken_count; k++)
				if (th->taken[k].stream == th->group_streams[i]) {
					nw_ring_set_state(th->taken[k].ticket1, captured ? NW_ST_CAPTURED : NW_ST_UNTRACKED);
					if (captured && th->taken[k].ticket1)
						th->group_graph_op1[i] = nw_graph_captured(th->taken[k].stream,
						                                           th->taken[k].ticket1);
				}
			continue;
		}
		t->group_id = th->group_id;
		t->first_ticket1 = th->group_ticket1;
		t->ticket1 = 0;                 /* the GROUP_END record: set by nw_track_group_end */
		th->group_tracks[th->group_track_count++] = t;
	}
	if (th->group_streams_past)
		streams_past_begin(th);
}

void nw_track_group_end(ncclResult_t r)
{
	struct nw_thread *th = &nw_tls;
	if (r != ncclSuccess && r != ncclInProgress) {
		/* Nothing was launched: the ops carry the group's error, which
		 * makes them final for the watchdog. */
		for (uint32_t k = 0; k < th->taken_count; k++)
			nw_ring_set_result(th->taken[k].ticket1, r);
	}
	for (uint32_t i = 0; i < th->group_track_count; i++) {
		struct nw_track *t = th->group_tracks[i];
		t->ticket1 = th->group_end_ticket1;
		finish(t, r, th->group_nb_comm);
	}
	th->group_track_count = 0;
	/* The group's ops were launched together: one node per captured
	 * stream, after them (none when the call failed or returned
	 * ncclInProgress: its kernels may not be in the graph yet). */
	if (r == ncclSuccess && nw_tracking_on) {
		for (uint32_t i = 0; i < th->group_stream_count; i++)
			if (th->group_capturing[i])
				nw_graph_op_issued(th->group_streams[i], th->group_graph_op1[i]);
		if (th->group_streams_past)
			streams_past_end(th);
	}
}

void nw_track_async_done(struct nw_comm *c)
{
	struct nw_track *t = atomic_exchange_explicit(&c->deferred, NULL, memory_order_acquire);
	while (t) {
		struct nw_track *next = t->next;
		end_on(t);
		t = next;
	}
}

struct nw_track *nw_track_take_submitted(void)
{
	struct nw_track *t = atomic_exchange_explicit(&nw_submitted, NULL, memory_order_acquire);
	struct nw_track *fifo = NULL;
	while (t) {                         /* pushed newest first: reverse */
		struct nw_track *next = t->next;
		t->next = fifo;
		fifo = t;
		t = next;
	}
	return fifo;
}

void nw_track_reset_after_fork(void)
{
	atomic_store(&nw_submitted, NULL);
	nw_last.stream = NULL;               /* the parent's contexts are gone */
	nw_last.ctx = NULL;
	nw_evpool_reset_after_fork();
}
