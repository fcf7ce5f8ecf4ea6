/* stack_area: the layout of the segment's stack area (include/ncclwatch/
 * segment.h, "The stack area"): its capacities, its size and header. The
 * interposer lays it out when it creates the segment, the watchdog and
 * pystack fill it, attach writes one into a snapshot. */
#ifndef NCCLWATCH_INTERPOSE_STACK_AREA_H
#define NCCLWATCH_INTERPOSE_STACK_AREA_H

#include <stdint.h>
#include <ncclwatch/segment.h>

#define NW_STACK_THREADS_DEFAULT 256   /* NCCLWATCH_STACK_THREADS */
#define NW_STACK_FRAMES 32
#define NW_STACK_MODULES 256
#define NW_STACK_STRTAB (128u << 10)
#define NW_OPSTACK_DEPTH 16
#define NW_STACK_IPSYMS 4096
#define NW_PYFRAME_CAPACITY 4096       /* Python frame table slots */
#define NW_PYSITE_CAPACITY 4096        /* site table slots */
#define NW_PY_FRAMES_DEFAULT 4         /* NCCLWATCH_PY_FRAMES: per-op Python references */
#define NW_PY_FRAMES_MAX 16

/* Layout of a stack area for `threads` thread slots, per-op stacks for
 * `ring_capacity` ops when `opstacks` is nonzero, and 1.4's Python tables
 * when `python` is nonzero (a process running CPython), with
 * `pycall_depth` Python frames per op (NCCLWATCH_PY_FRAMES; 0 none): its size in bytes (a multiple of NW_SEG_ALIGN). The caller
 * decides, so that a writer without pystack/ (attach) can lay one out. */
uint64_t nw_stack_area_size(uint32_t threads, uint32_t ring_capacity, int opstacks, int python,
                            uint32_t pycall_depth);
/* Set a module table entry's path (a long one keeps its tail after "..."). */
void nw_stack_module_set_path(struct nw_seg_module *m, const char *path);
/* Write the area's header (magic, capacities, offsets) into zeroed memory
 * of nw_stack_area_size(...) bytes, called with the same arguments. */
void nw_stack_area_init(struct nw_seg_stack_header *area, uint32_t threads, uint32_t ring_capacity,
                        int opstacks, int python, uint32_t pycall_depth);

#endif
