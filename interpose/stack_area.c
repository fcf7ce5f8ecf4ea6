/* stack_area: the layout of the segment's stack area (segment.h, "The
 * stack area"): header, thread table, frames, modules, ip-symbol table,
 * string table, then the optional per-op stacks, each NW_SEG_ALIGN
 * aligned. The size and the offsets come from one function so they cannot
 * disagree. */
#include "stack_area.h"

#include <string.h>

struct layout {
	uint64_t thread, frame, module, ipsym, strtab, opstack, size;
	uint64_t pyframe, pysite, pycall;   /* 1.4: Python tables (pystack/) */
	uint32_t pycall_depth;
};

/* A module table entry's path: a path longer than the field keeps its tail
 * (the file name) after "...". */
void nw_stack_module_set_path(struct nw_seg_module *m, const char *path)
{
	size_t n = strlen(path);
	if (n < sizeof(m->path)) {
		memcpy(m->path, path, n + 1);
		return;
	}
	size_t keep = sizeof(m->path) - 4;
	memcpy(m->path, "...", 3);
	memcpy(m->path + 3, path + n - keep, keep + 1);
}

static uint64_t align_up(uint64_t n)
{
	return (n + NW_SEG_ALIGN - 1) & ~(uint64_t)(NW_SEG_ALIGN - 1);
}

static struct layout layout_of(uint32_t threads, uint32_t ring_capacity, int opstacks, int python,
                               uint32_t pycall_depth)
{
	struct layout l;
	/* 1.4: the extension follows the area header. */
	uint64_t at = align_up(sizeof(struct nw_seg_stack_header) + sizeof(struct nw_seg_stack_ext));
	l.thread = at;
	at = align_up(at + (uint64_t)threads * sizeof(struct nw_seg_thread));
	l.frame = at;
	at = align_up(at + (uint64_t)threads * NW_STACK_FRAMES * sizeof(struct nw_seg_frame));
	l.module = at;
	at = align_up(at + (uint64_t)NW_STACK_MODULES * sizeof(struct nw_seg_module));
	l.ipsym = at;
	at = align_up(at + (uint64_t)NW_STACK_IPSYMS * sizeof(struct nw_seg_frame));
	l.strtab = at;
	at = align_up(at + NW_STACK_STRTAB);
	l.opstack = 0;
	if (opstacks && ring_capacity) {
		l.opstack = at;
		at = align_up(at + (uint64_t)ring_capacity * NW_OPSTACK_DEPTH * sizeof(uint64_t));
	}
	/* 1.4: Python tables, for a process that runs CPython. */
	l.pyframe = l.pysite = l.pycall = 0;
	l.pycall_depth = 0;
	if (python) {
		l.pyframe = at;
		at = align_up(at + (uint64_t)NW_PYFRAME_CAPACITY * sizeof(struct nw_seg_pyframe));
		l.pysite = at;
		at = align_up(at + (uint64_t)NW_PYSITE_CAPACITY * sizeof(struct nw_seg_pyframe));
		l.pycall_depth = ring_capacity ? pycall_depth : 0;
	}
	if (l.pycall_depth) {
		l.pycall = at;
		at = align_up(at + (uint64_t)ring_capacity * l.pycall_depth * sizeof(struct nw_seg_pycall));
	}
	l.size = at;
	return l;
}

uint64_t nw_stack_area_size(uint32_t threads, uint32_t ring_capacity, int opstacks, int python,
                            uint32_t pycall_depth)
{
	return layout_of(threads, ring_capacity, opstacks, python, pycall_depth).size;
}

void nw_stack_area_init(struct nw_seg_stack_header *area, uint32_t threads, uint32_t ring_capacity,
                        int opstacks, int python, uint32_t pycall_depth)
{
	struct layout l = layout_of(threads, ring_capacity, opstacks, python, pycall_depth);
	area->magic = NW_STACK_MAGIC;
	atomic_store_explicit(&area->seq, 0, memory_order_relaxed);
	area->thread_capacity = threads;
	area->frame_capacity = NW_STACK_FRAMES;
	area->module_capacity = NW_STACK_MODULES;
	area->strtab_size = NW_STACK_STRTAB;
	area->thread_count = 0;
	area->module_count = 0;
	area->strtab_used = 1;          /* offset 0 is "" (the memory is zeroed) */
	area->opstack_depth = l.opstack ? NW_OPSTACK_DEPTH : 0;
	area->opstack_count = l.opstack ? ring_capacity : 0;
	area->thread_offset = l.thread;
	area->frame_offset = l.frame;
	area->module_offset = l.module;
	area->strtab_offset = l.strtab;
	area->opstack_offset = l.opstack;
	area->capture_ns = 0;
	area->request_id = 0;
	area->captures = 0;
	area->ipsym_offset = l.ipsym;
	area->ipsym_capacity = NW_STACK_IPSYMS;
	area->ipsym_count = 0;
	struct nw_seg_stack_ext *ext = (struct nw_seg_stack_ext *)(area + 1);
	ext->ext_size = sizeof *ext;
	ext->native_note = 0;
	ext->python_note = 0;
	ext->pyframe_offset = l.pyframe;
	ext->pyframe_capacity = l.pyframe ? NW_PYFRAME_CAPACITY : 0;
	ext->pysite_offset = l.pysite;
	ext->pysite_capacity = l.pysite ? NW_PYSITE_CAPACITY : 0;
	ext->pycall_offset = l.pycall;
	ext->pycall_depth = l.pycall ? l.pycall_depth : 0;
	ext->pycall_count = l.pycall ? ring_capacity : 0;
}
