/* track: the hot path's side of completion tracking. Around each NCCL call
 * that launches work, a start event is recorded on the op's stream just
 * before the real call and an end event just after; the pair is then
 * handed to the watchdog (a lock-free list) which watches both.
 *
 * - Ops inside a group launch at the outermost ncclGroupEnd: one pair per
 *   distinct stream of the group around that call, shared by its ops.
 * - A stream being captured into a CUDA graph gets no events: its ops
 *   become CAPTURED.
 * - A non-blocking comm's call may return ncclInProgress: its end event is
 *   recorded when ncclCommGetAsyncError stops saying ncclInProgress.
 * - The event's context is made current only when it is not already
 *   (cuStreamGetCtx, then push/pop). */
#ifndef NCCLWATCH_INTERPOSE_TRACK_H
#define NCCLWATCH_INTERPOSE_TRACK_H

#include "visibility.h"
#include "cuda_driver.h"
#include "evpool.h"

#include <stdint.h>
#include <nccl.h>
#include <ncclwatch/segment.h>

struct nw_comm;

/* 1 once the driver loaded and tracking is on (set before recording starts). */
extern NW_HIDDEN int nw_tracking_on;

/* Single op, outside a group: nw_track_begin before its record is written
 * (a pair begun on `stream`; NULL: untracked, *state then says how the
 * record starts, UNTRACKED or CAPTURED, so it is written once in its final
 * state instead of updated right after), nw_track_bind once the record is
 * written (its ticket + 1, 0 when it was not: the pair is given back; its
 * comm, sequence number, kind and peer), nw_track_end after the real call
 * with its result. */
struct nw_track *nw_track_begin_ctx(CUstream s);

/* Inline: the untracked op's whole cost is the capture question (the rest,
 * out of line in nw_track_begin_ctx, saves registers an untracked op does
 * not need). */
static inline struct nw_track *nw_track_begin(uint64_t stream, uint32_t *state)
{
	if (!nw_tracking_on)
		return NULL;
	CUstream s = (CUstream)(uintptr_t)stream;
	CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
	struct nw_track *t = NULL;
	if (nw_cu.cuStreamIsCapturing(s, &cs) == CUDA_SUCCESS) {
		if (cs != CU_STREAM_CAPTURE_STATUS_NONE) {
			*state = NW_ST_CAPTURED;
			return NULL;
		}
		t = nw_track_begin_ctx(s);
	}
	if (!t)   /* never leave an op ENQUEUED that nobody watches: a false stall */
		*state = NW_ST_UNTRACKED;
	return t;
}
void nw_track_bind(struct nw_track *t, uint64_t ticket1, struct nw_comm *c, uint64_t seq, uint16_t kind,
                   int32_t peer);
void nw_track_end(struct nw_track *t, ncclResult_t r, struct nw_comm *c);

/* Outermost ncclGroupEnd: before (pairs begun for the thread's open group)
 * and after the real call. */
void nw_track_group_begin(void);
void nw_track_group_end(ncclResult_t r);

/* ncclCommGetAsyncError on `c` no longer reports ncclInProgress: record the
 * end events that waited for it. */
void nw_track_async_done(struct nw_comm *c);

/* Watchdog: every pair handed over since the last call, oldest first. */
struct nw_track *nw_track_take_submitted(void);

void nw_track_reset_after_fork(void);

#endif
