/* pycall: the hot path's part of pystack/ (the one header interpose/
 * includes): each wrapped NCCL call made from a thread running Python
 * records its innermost Python frames as raw references (code object,
 * instruction pointer) into the stack area's per-op call sites; no lock,
 * no system call, no allocation; one test when off. The watchdog names
 * them (pystack.h). */
#ifndef NCCLWATCH_PYSTACK_PYCALL_H
#define NCCLWATCH_PYSTACK_PYCALL_H

#include <stdint.h>
#include <ncclwatch/segment.h>

#define NW_PY_FRAMES_DEFAULT 4        /* NCCLWATCH_PY_FRAMES: per-op references */
#define NW_PY_FRAMES_MAX 16

/* NCCLWATCH_PY_FRAMES as parsed (0 = per-op call sites off). */
uint32_t nw_pycall_depth_config(void);
/* A CPython is linked into this process (its API is among the global
 * symbols): the stack area gets Python tables only then, so that other
 * programs pay nothing for them. */
int nw_py_linked(void);

/* The hot path: set by nw_pycall_enable when this process runs a CPython
 * whose frames we know how to read. */
extern struct nw_seg_pycall *nw_pycall_base;   /* NULL: off */
/* Called once on the first NCCL call (any thread, not the hot path). */
void nw_pycall_enable(struct nw_seg_stack_header *area, uint32_t ring_capacity);
void nw_pycall_record_slow(uint64_t ticket);
static inline void nw_pycall_record(uint64_t ticket)
{
	if (__builtin_expect(nw_pycall_base != 0, 0))
		nw_pycall_record_slow(ticket);
}

#endif
