/* pycall: the per-op Python call site on the hot path (pystack.h).
 *
 * The calling thread reads its own frames: its thread state from the
 * interpreter's thread-specific storage (PyGILState_GetThisThreadState: a
 * pthread_getspecific, no lock, and valid while ctypes or torch released
 * the GIL around the call), then frame -> code object and instruction
 * pointer, innermost first. They are this thread's own frames, alive while
 * it is inside the call: plain loads. The layout was checked against the
 * live interpreter with fault-proof reads before the hook is set.
 *
 * Cost (issue 20: the hot path under 300 instructions with call sites on):
 * everything the hook reads is copied once, before the hook is set, into
 * one block (`hot`); the hook is one of two walks chosen then, so no call
 * tests the version: 3.11's (every frame a line of Python, reached through
 * tstate->cframe, its offsets constants) and the general one (3.12+: C-stack shim frames skipped;
 * 3.13+: the frame in the thread state itself). */
#include "pycall.h"
#include "cpython.h"
#include "../interpose/hooks.h"
#include "../interpose/log.h"

#include <stdlib.h>
#include <string.h>

struct nw_seg_pycall *nw_pycall_base;

/* What the hook reads, set once before it is set (release, then its
 * acquire load in nw_op_hooks_run): never changes after. */
static struct {
	char *base;
	uint64_t mask;                  /* ring capacity - 1 */
	uint64_t stride;                /* bytes per op: depth entries */
	int32_t cstack;                 /* owner of a C-stack shim frame, -1 none */
	uint64_t ts_cframe, cf_frame, fr_code, fr_instr, fr_previous, fr_owner;
	void *(*this_tstate)(void);
} hot;

/* 3.11 (x86-64): its offsets as constants in the walk (cpython.c's
 * table for 3.11 has the same; is_311 holds the layout in use to them). */
enum { PY311_TS_CFRAME = 56, PY311_CF_FRAME = 8, PY311_FR_CODE = 32, PY311_FR_PREVIOUS = 48,
       PY311_FR_INSTR = 56 };

static int is_311(const struct nw_py_layout *L)
{
	return L->owner_cstack < 0 && L->ts_cframe == PY311_TS_CFRAME && L->cf_frame == PY311_CF_FRAME &&
	       L->fr_code == PY311_FR_CODE && L->fr_previous == PY311_FR_PREVIOUS && L->fr_instr == PY311_FR_INSTR;
}

static void record_311(uint64_t ticket);
static void record_311_4(uint64_t ticket);
static void record_any(uint64_t ticket);

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
	const struct nw_py_layout *L = &nw_py.L;
	hot.base = (char *)area + ext->pycall_offset;
	hot.mask = ring_capacity - 1;
	hot.stride = (uint64_t)ext->pycall_depth * sizeof(struct nw_seg_pycall);
	hot.cstack = L->owner_cstack;
	hot.ts_cframe = L->ts_cframe;
	hot.cf_frame = L->cf_frame;
	hot.fr_code = L->fr_code;
	hot.fr_instr = L->fr_instr;
	hot.fr_previous = L->fr_previous;
	hot.fr_owner = L->fr_owner;
	hot.this_tstate = nw_py.this_tstate;
	__atomic_store_n(&nw_pycall_base, (struct nw_seg_pycall *)hot.base, __ATOMIC_RELEASE);
	NW_OP_HOOK_SET(pycall, !is_311(L) ? record_any : ext->pycall_depth == 4 ? record_311_4 : record_311);
}

#define LOAD(addr) (*(const uint64_t *)(uintptr_t)(addr))

/* The op's call sites: `depth` entries from the ticket's slot. */
static inline struct nw_seg_pycall *slot_of(uint64_t ticket)
{
	return (struct nw_seg_pycall *)(hot.base + (ticket & hot.mask) * hot.stride);
}

/* Entries after the last frame found. */
static inline void clear_rest(struct nw_seg_pycall *s, struct nw_seg_pycall *end)
{
	for (; s < end; s++) {
		__atomic_store_n(&s->code, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->instr, 0, __ATOMIC_RELAXED);
	}
}

/* 3.11: every frame is a line of Python. No test for its incomplete
 * frames (before _co_firsttraceable): only the newest frame can be one, in
 * its prologue, and the newest frame here is the one whose CALL brought
 * us. */
/* The newest frame of thread state ts (0: none). */
static inline uint64_t first_frame_311(uint64_t ts)
{
	if (!ts)
		return 0;
	uint64_t cf = LOAD(ts + PY311_TS_CFRAME);
	return cf ? LOAD(cf + PY311_CF_FRAME) : 0;
}

static inline void put_311(struct nw_seg_pycall *s, uint64_t f)
{
	__atomic_store_n(&s->code, LOAD(f + PY311_FR_CODE), __ATOMIC_RELAXED);
	__atomic_store_n(&s->instr, LOAD(f + PY311_FR_INSTR), __ATOMIC_RELAXED);
}

/* Any depth (NCCLWATCH_PY_FRAMES). */
static void record_311(uint64_t ticket)
{
	/* The thread state first: only the ticket is kept across the call. */
	uint64_t f = first_frame_311((uint64_t)(uintptr_t)hot.this_tstate());
	struct nw_seg_pycall *s = slot_of(ticket);
	struct nw_seg_pycall *end = (struct nw_seg_pycall *)((char *)s + hot.stride);
	if (f) {                         /* depth >= 1 (nw_pycall_enable) */
		for (;;) {
			put_311(s, f);
			if (++s == end)
				return;
			f = LOAD(f + PY311_FR_PREVIOUS);
			if (!f)
				break;
		}
	}
	clear_rest(s, end);
}

/* The default depth, 4, unrolled: no test of the depth per frame. */
static void record_311_4(uint64_t ticket)
{
	uint64_t f = first_frame_311((uint64_t)(uintptr_t)hot.this_tstate());
	struct nw_seg_pycall *s = slot_of(ticket);
	int k = 0;
	if (!f)
		goto rest;
	put_311(&s[0], f);
	k = 1;
	if (!(f = LOAD(f + PY311_FR_PREVIOUS)))
		goto rest;
	put_311(&s[1], f);
	k = 2;
	if (!(f = LOAD(f + PY311_FR_PREVIOUS)))
		goto rest;
	put_311(&s[2], f);
	k = 3;
	if (!(f = LOAD(f + PY311_FR_PREVIOUS)))
		goto rest;
	put_311(&s[3], f);
	return;
rest:
	clear_rest(s + k, s + 4);
}

/* 3.12+: C-stack shim frames are skipped; 3.13+: no cframe. */
static void record_any(uint64_t ticket)
{
	struct nw_seg_pycall *s = slot_of(ticket);
	struct nw_seg_pycall *end = (struct nw_seg_pycall *)((char *)s + hot.stride);
	uint64_t ts = (uint64_t)(uintptr_t)hot.this_tstate();
	uint64_t f = 0;
	if (ts) {
		if (hot.ts_cframe == NW_PY_NO_OFF) {
			f = LOAD(ts + hot.cf_frame);
		} else {
			uint64_t cf = LOAD(ts + hot.ts_cframe);
			f = cf ? LOAD(cf + hot.cf_frame) : 0;
		}
	}
	const uint64_t code_at = hot.fr_code, instr_at = hot.fr_instr, prev_at = hot.fr_previous,
	               owner_at = hot.fr_owner;
	const int cstack = hot.cstack;
	for (int guard = 0; f && s < end && guard < 256; guard++, f = LOAD(f + prev_at)) {
		if (cstack >= 0 && *(const uint8_t *)(uintptr_t)(f + owner_at) == (uint8_t)cstack)
			continue;
		__atomic_store_n(&s->code, LOAD(f + code_at), __ATOMIC_RELAXED);
		__atomic_store_n(&s->instr, LOAD(f + instr_at), __ATOMIC_RELAXED);
		s++;
	}
	clear_rest(s, end);
}
