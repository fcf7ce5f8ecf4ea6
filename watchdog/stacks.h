/* stacks: where every thread of this process is, captured on demand into
 * the segment's stack area (include/ncclwatch/segment.h, "The stack area").
 *
 * Capture: the watchdog thread lists /proc/self/task and sends each other
 * thread a real-time signal (never SIGUSR1/SIGUSR2: NCCL's proxy dump uses
 * them; never one the application has a handler for). The handler only
 * unwinds with libunwind (UNW_LOCAL_ONLY) into a preallocated slot of raw
 * addresses and says it is done; the watchdog thread then symbolizes
 * (function, offset, module) and writes the area under its seqlock.
 *
 * Per-op stacks (NCCLWATCH_STACKS=1): the hot path stores up to
 * opstack_depth raw return addresses per op record; the watchdog interns
 * their symbols in the ip-symbol table when it captures. */
#ifndef NCCLWATCH_WATCHDOG_STACKS_H
#define NCCLWATCH_WATCHDOG_STACKS_H

#include <stdint.h>
#include <ncclwatch/segment.h>

#include "../interpose/stack_area.h"

/* Install the capture signal's handler (once per process; called by the
 * watchdog thread when it starts). 0, or -1 after one "ncclwatch:" line
 * (captures then record only the watchdog's own thread). */
int nw_stacks_setup(void);

/* Capture every thread into `area` (watchdog thread only). Waits at most
 * ~100 ms per thread that does not answer, 1 s in all. `request_id` is
 * stored in the area (0: the process's own finding). Returns the number of
 * threads written. Also refreshes the module table and the ip-symbol table
 * of op stacks. */
int nw_stacks_capture(struct nw_seg_stack_header *area, uint64_t request_id);

/* Threads the last capture left out: its thread table had no slot left. */
uint32_t nw_stacks_left_out(void);
/* At each poll: the Python call sites of the ops recorded since the last
 * call (ring tickets below `ring_head`), named into the area when new
 * (pystack/), without a capture: a process that exits or is killed later
 * leaves them named. */
void nw_stacks_name_sites(struct nw_seg_stack_header *area, uint64_t ring_head);

/* Per-op stacks: set once at start (NCCLWATCH_STACKS=1 and an area with
 * opstack_depth > 0); the hot path then calls nw_opstack_record_slow
 * through its hook (interpose/hooks.h). */
extern uint64_t *nw_opstack_base;      /* NULL: off */
extern uint32_t nw_opstack_mask;       /* ring_capacity - 1 */
void nw_opstack_enable(struct nw_seg_stack_header *area, uint32_t ring_capacity);
/* Store the caller's stack for ring ticket `ticket` (no lock, no syscall,
 * no allocation). */
void nw_opstack_record_slow(uint64_t ticket);

#endif
