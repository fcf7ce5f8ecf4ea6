/* opstack: the hot path's per-op call stack (NCCLWATCH_STACKS=1). Raw
 * return addresses only, into the stack area's op-stack array; the
 * watchdog names them later (stacks.c, the ip-symbol table).
 *
 * unw_backtrace (libunwind's frame cache) rather than unw_step: after its
 * first call on a thread (which maps its per-thread cache) it takes no
 * lock and makes no syscall, while unw_step's global cache takes a lock
 * with signals masked (two sigprocmask calls per step). Stores are
 * relaxed atomics: the watchdog reads the array while threads write it,
 * and a slot rewritten under it is only an out-of-date stack.
 *
 * libunwind comes through its table (capture/unw_table.h), loaded at the
 * first NCCL call, before the hot path can take a stack. */
#include "stacks.h"
#include "../capture/unw_table.h"
#include "../interpose/hooks.h"
#include "../interpose/log.h"

#include <link.h>
#include <stdint.h>

#define SELF_FRAMES_MAX 8        /* ncclwatch frames above the caller's, skipped */

uint64_t *nw_opstack_base;
uint32_t nw_opstack_mask;
static uint32_t opstack_depth;
/* ncclwatch's own code, whose frames are skipped; empty when it is linked
 * into the main program (a test), where the caller's code would match too. */
static uint64_t self_lo, self_hi;

struct self_search { uint64_t addr, lo, hi; int index; };

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self_search *s = arg;
	(void)size;
	int index = s->index++;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && s->addr >= lo && s->addr < lo + ph->p_memsz) {
			if (index > 0) {     /* not the main program */
				s->lo = lo;
				s->hi = lo + ph->p_memsz;
			}
			return 1;
		}
	}
	return 0;
}

void nw_opstack_enable(struct nw_seg_stack_header *area, uint32_t ring_capacity)
{
	if (!area || area->magic != NW_STACK_MAGIC || area->opstack_depth == 0 ||
	    area->opstack_offset == 0)
		return;
	if (ring_capacity == 0 || (ring_capacity & (ring_capacity - 1)) ||
	    area->opstack_count < ring_capacity) {
		nw_log("per-op stacks off: the stack area has %u op slots for a ring of %u",
		       area->opstack_count, ring_capacity);
		return;
	}
	if (!nw_unw_load())
		return;                  /* said once by the loader */
	if (!nw_unw.backtrace) {
		nw_log("per-op stacks off: this libunwind has no unw_backtrace");
		return;
	}
	struct self_search s = { (uint64_t)(uintptr_t)&nw_opstack_record_slow, 0, 0, 0 };
	dl_iterate_phdr(find_self, &s);
	self_lo = s.lo;
	self_hi = s.hi;
	opstack_depth = area->opstack_depth < NW_OPSTACK_DEPTH ? area->opstack_depth : NW_OPSTACK_DEPTH;
	nw_opstack_mask = ring_capacity - 1;
	/* Last: the base, then the hot path's hook (interpose/hooks.h). */
	__atomic_store_n(&nw_opstack_base, (uint64_t *)((char *)area + area->opstack_offset),
	                 __ATOMIC_RELEASE);
	NW_OP_HOOK_SET(opstack, nw_opstack_record_slow);
}

void nw_opstack_record_slow(uint64_t ticket)
{
	uint64_t *base = __atomic_load_n(&nw_opstack_base, __ATOMIC_ACQUIRE);
	if (!base)
		return;
	void *ip[NW_OPSTACK_DEPTH + SELF_FRAMES_MAX + 1];
	uint32_t depth = opstack_depth;
	int n = nw_unw.backtrace(ip, (int)(depth + SELF_FRAMES_MAX + 1));
	/* ip[0] is in this function; then ncclwatch's own frames, if any. */
	int first = 1;
	while (first < n && first <= SELF_FRAMES_MAX &&
	       (uint64_t)(uintptr_t)ip[first] >= self_lo && (uint64_t)(uintptr_t)ip[first] < self_hi)
		first++;
	uint64_t *slot = base + (ticket & nw_opstack_mask) * depth;
	for (uint32_t k = 0; k < depth; k++) {
		int i = first + (int)k;
		uint64_t v = i < n ? (uint64_t)(uintptr_t)ip[i] : 0;
		__atomic_store_n(&slot[k], v, __ATOMIC_RELAXED);
	}
}
