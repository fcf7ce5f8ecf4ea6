/* pycall: the hot path's part of pystack/: each wrapped NCCL call made
 * from a thread running Python records its innermost Python frames as raw
 * references (code object, instruction pointer) into the stack area's
 * per-op call sites; no lock, no system call, no allocation; one test when
 * off (the hook interpose/hooks.h calls, set by nw_pycall_enable). The
 * watchdog names them (pystack.h). */
#ifndef NCCLWATCH_PYSTACK_PYCALL_H
#define NCCLWATCH_PYSTACK_PYCALL_H

#include <stdint.h>
#include <ncclwatch/segment.h>

/* The hot path: set by nw_pycall_enable when this process runs a CPython
 * whose frames we know how to read. */
extern struct nw_seg_pycall *nw_pycall_base;   /* NULL: off */
/* Called once on the first NCCL call (any thread, not the hot path):
 * sets nw_pycall_base, then the hot path's hook. */
void nw_pycall_enable(struct nw_seg_stack_header *area, uint32_t ring_capacity);

#endif
