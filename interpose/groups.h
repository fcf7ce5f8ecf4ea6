/* groups: ncclGroupStart/End nesting per thread. The outermost start takes
 * a process-wide group id and writes GROUP_START; ops inside carry the id
 * and depth; the outermost end writes GROUP_END (the group's launch). A
 * group ended by ncclGroupSimulateEnd launched nothing: its ops become
 * DISCARDED and the sequence numbers they took are given back, so every
 * rank's numbering stays identical. */
#ifndef NCCLWATCH_INTERPOSE_GROUPS_H
#define NCCLWATCH_INTERPOSE_GROUPS_H

#include "comms.h"
#include "thread.h"

#include <stdint.h>
#include <nccl.h>

/* Remember what an op of the open group took, and its stream (no-op
 * outside groups). */
static inline void nw_group_took(struct nw_comm *c, uint32_t kind, int32_t peer, uint64_t ticket1,
                                 uint64_t stream)
{
	struct nw_thread *t = &nw_tls;
	if (__builtin_expect(t->group_depth == 0, 1))
		return;
	if (t->taken_count < NW_GROUP_TAKEN_MAX)
		t->taken[t->taken_count++] = (struct nw_taken){ c, ticket1, stream, peer, kind, 0 };
	else
		t->taken_overflow++;
	if (!c->blocking && !t->group_nb_comm)
		t->group_nb_comm = c;
	for (uint32_t i = 0; i < t->group_stream_count; i++)
		if (t->group_streams[i] == stream)
			return;
	if (t->group_stream_count < NW_GROUP_STREAMS)
		t->group_streams[t->group_stream_count++] = stream;
	else
		t->group_streams_past++;
}

/* Around the real ncclGroupStart: before (returns the record's ticket + 1)
 * and after (with its result). */
uint64_t nw_group_enter(uint64_t caller);
void nw_group_entered(uint64_t ticket1, ncclResult_t r);

/* Around the real ncclGroupEnd / ncclGroupSimulateEnd. */
uint64_t nw_group_leave(uint64_t caller, int simulated);
void nw_group_left(uint64_t ticket1, ncclResult_t r, int simulated);

#endif
