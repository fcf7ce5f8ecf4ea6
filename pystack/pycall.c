/* pycall: the per-op Python call site on the hot path (pystack.h).
 *
 * The calling thread reads its own frames: its thread state from the
 * interpreter's thread-specific storage (PyGILState_GetThisThreadState: a
 * pthread_getspecific, no lock, and valid while ctypes or torch released
 * the GIL around the call), then frame -> code object and instruction
 * pointer, innermost first. They are this thread's own frames, alive while
 * it is inside the call: plain loads. The layout was checked against the
 * live interpreter with fault-proof reads before nw_pycall_base is set. */
#include "pycall.h"
#include "cpython.h"
#include "../interpose/hooks.h"
#include "../interpose/log.h"

#include <stdlib.h>
#include <string.h>

struct nw_seg_pycall *nw_pycall_base;
static uint32_t depth, mask;
static struct nw_py_layout hot;    /* nw_py.L when enabled */

void nw_pycall_enable(struct nw_seg_stack_header *area, uint32_t ring_capacity)
{
	if (!area || area->magic != NW_STACK_MAGIC)
		return;
	const struct nw_seg_stack_ext *ext = (const void *)(area + 1);
	if (!ext->pycall_depth || !ext->pycall_offset || ext->pycall_count != ring_capacity ||
	    ring_capacity == 0 || (ring_capacity & (ring_capacity - 1)))
		return;
	if (nw_py_probe() != NW_PYRT_READY || !nw_py_check_layout())
		return;
	depth = ext->pycall_depth;
	mask = ring_capacity - 1;
	hot = nw_py.L;
	__atomic_store_n(&nw_pycall_base, (struct nw_seg_pycall *)((char *)area + ext->pycall_offset),
	                 __ATOMIC_RELEASE);
	NW_OP_HOOK_SET(pycall, nw_pycall_record_slow);
}

#define LOAD(addr) (*(const uint64_t *)(uintptr_t)(addr))

void nw_pycall_record_slow(uint64_t ticket)
{
	struct nw_seg_pycall *slot = __atomic_load_n(&nw_pycall_base, __ATOMIC_ACQUIRE);
	if (!slot)
		return;
	const uint32_t n = depth;
	slot += (ticket & mask) * n;
	uint64_t ts = (uint64_t)(uintptr_t)nw_py.this_tstate();
	uint32_t k = 0;
	if (ts) {
		/* The layout in locals: the stores below must not make the
		 * compiler reload it. No test for the incomplete frames of 3.11
		 * and 3.12 (before _co_firsttraceable): only the newest frame
		 * can be one, in its prologue, and the newest frame here is the
		 * one whose CALL brought us. */
		const uint64_t cframe = hot.ts_cframe, cf_frame = hot.cf_frame, code_at = hot.fr_code,
		               instr_at = hot.fr_instr, prev_at = hot.fr_previous, owner_at = hot.fr_owner;
		const int cstack = hot.owner_cstack;
		uint64_t f;
		if (cframe == NW_PY_NO_OFF) {
			f = LOAD(ts + cf_frame);
		} else {
			uint64_t cf = LOAD(ts + cframe);
			f = cf ? LOAD(cf + cf_frame) : 0;
		}
		if (cstack < 0) {            /* 3.11: every frame is a line of Python */
			for (; f && k < n; k++, f = LOAD(f + prev_at)) {
				__atomic_store_n(&slot[k].code, LOAD(f + code_at), __ATOMIC_RELAXED);
				__atomic_store_n(&slot[k].instr, LOAD(f + instr_at), __ATOMIC_RELAXED);
			}
		} else {                     /* 3.12+: C-stack shim frames are skipped */
			for (int guard = 0; f && k < n && guard < 256; guard++, f = LOAD(f + prev_at)) {
				if (*(const uint8_t *)(uintptr_t)(f + owner_at) == (uint8_t)cstack)
					continue;
				__atomic_store_n(&slot[k].code, LOAD(f + code_at), __ATOMIC_RELAXED);
				__atomic_store_n(&slot[k].instr, LOAD(f + instr_at), __ATOMIC_RELAXED);
				k++;
			}
		}
	}
	for (; k < n; k++) {
		__atomic_store_n(&slot[k].code, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&slot[k].instr, 0, __ATOMIC_RELAXED);
	}
}
