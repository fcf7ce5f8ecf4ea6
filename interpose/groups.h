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

/* Around the real ncclGroupStart: before (returns the record's ticket + 1)
 * and after (with its result). */
uint64_t nw_group_enter(uint64_t caller);
void nw_group_entered(uint64_t ticket1, ncclResult_t r);

/* Around the real ncclGroupEnd / ncclGroupSimulateEnd. */
uint64_t nw_group_leave(uint64_t caller, int simulated);
void nw_group_left(uint64_t ticket1, ncclResult_t r, int simulated);

#endif
