/* pystack: Python stacks in our own process, without the GIL and without a
 * signal (issue 12; docs/ARCHITECTURE.md, "pystack/").
 *
 * - At every capture the watchdog calls nw_pystack_capture once, after its
 *   native capture: every Python thread's frames (file, function, line),
 *   tied to its native thread by tid, and the names of the per-op call
 *   sites; nw_pystack_write stores them inside the capture's seqlock.
 * - At each poll the watchdog calls nw_pystack_name_new_sites: the call
 *   sites of the ops recorded since, named when new.
 * - The hot path calls nw_pycall_record: the innermost Python frames of the
 *   calling thread as raw references (code object, instruction pointer),
 *   no lock, no system call, no allocation; one test when off.
 *
 * Thread and frame states walked (walk.c) with the layout of
 * _Py_DebugOffsets (CPython >= 3.13) or of a table for 3.11 and 3.12 (cpython.c);
 * every read of the interpreter's memory by the watchdog goes through
 * process_vm_readv (cannot fault). On 3.11 and 3.12, NCCLWATCH_PY_METHOD=dump uses
 * the interpreter's _Py_DumpTracebackThreads into a memory file instead
 * (dump.c): plain loads, seen to crash when threads come and go. Anything else:
 * one note in the stack area's python_note, nothing else. */
#ifndef NCCLWATCH_PYSTACK_PYSTACK_H
#define NCCLWATCH_PYSTACK_PYSTACK_H

#include <stdint.h>
#include <ncclwatch/segment.h>
#include "pycall.h"
#include "../interpose/stack_area.h"   /* NW_PYFRAME_CAPACITY, NW_PYSITE_CAPACITY */

struct nw_strtab;

#define NW_PY_THREAD_FRAMES 64        /* Python frames kept per thread (innermost) */

/* Python stacks of this process into the staged capture: `threads` (n in
 * use, `cap` slots) get their py_* fields, a Python thread the native
 * capture did not list gets a slot of its own; names go into `strtab`.
 * `frames` (frame_capacity per slot) tells where each mixed stack turns
 * into the interpreter. Returns the new thread count. Watchdog only. */
uint32_t nw_pystack_capture(const struct nw_seg_stack_header *area, struct nw_seg_thread *threads,
                            uint32_t n, uint32_t cap, const struct nw_seg_frame *frames,
                            uint32_t frame_capacity, struct nw_strtab *strtab);
/* Between captures, at the watchdog's poll: when ops recorded since the
 * last call (ring tickets up to `ring_head`) have call sites the site
 * table lacks, name every site again into the staged capture (new names
 * appended to `strtab`, which still holds the last capture's) and return 1:
 * the caller stores it with nw_pystack_write. So the names are in the
 * segment before a process exits or is killed, not only once a stall was
 * captured. 0: nothing new (one pass over the new tickets' references). */
int nw_pystack_name_new_sites(const struct nw_seg_stack_header *area, uint64_t ring_head,
                              struct nw_strtab *strtab);
/* Store what nw_pystack_capture staged into `area` (inside its seqlock). */
void nw_pystack_write(struct nw_seg_stack_header *area);

#endif
