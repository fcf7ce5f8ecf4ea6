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

#define NW_STACK_THREADS_DEFAULT 256   /* NCCLWATCH_STACK_THREADS */
#define NW_STACK_FRAMES 32
#define NW_STACK_MODULES 256
#define NW_STACK_STRTAB (128u << 10)
#define NW_OPSTACK_DEPTH 16
#define NW_STACK_IPSYMS 4096

/* Layout of a stack area for `threads` thread slots, per-op stacks for
 * `ring_capacity` ops when `opstacks` is nonzero, and 1.4's Python tables
 * when `python` is nonzero (a process running CPython: nw_py_linked()),
 * with `pycall_depth` Python frames per op (nw_pycall_depth_config(); 0
 * none): its size in bytes (a multiple of NW_SEG_ALIGN). The caller
 * decides, so that a writer without pystack/ (attach) can lay one out. */
uint64_t nw_stack_area_size(uint32_t threads, uint32_t ring_capacity, int opstacks, int python,
                            uint32_t pycall_depth);
/* Set a module table entry's path (a long one keeps its tail after "..."). */
void nw_stack_module_set_path(struct nw_seg_module *m, const char *path);
/* Write the area's header (magic, capacities, offsets) into zeroed memory
 * of nw_stack_area_size(...) bytes, called with the same arguments. */
void nw_stack_area_init(struct nw_seg_stack_header *area, uint32_t threads, uint32_t ring_capacity,
                        int opstacks, int python, uint32_t pycall_depth);

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
 * opstack_depth > 0); the hot path then calls nw_opstack_record. */
extern uint64_t *nw_opstack_base;      /* NULL: off */
extern uint32_t nw_opstack_mask;       /* ring_capacity - 1 */
void nw_opstack_enable(struct nw_seg_stack_header *area, uint32_t ring_capacity);
/* Store the caller's stack for ring ticket `ticket` (no lock, no syscall,
 * no allocation). */
void nw_opstack_record_slow(uint64_t ticket);
static inline void nw_opstack_record(uint64_t ticket)
{
	if (__builtin_expect(nw_opstack_base != 0, 0))
		nw_opstack_record_slow(ticket);
}

#endif
