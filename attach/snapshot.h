/* snapshot: one process that runs without the preload, captured from
 * outside into a snapshot file (a segment with NW_SEG_F_SNAPSHOT |
 * NW_SEG_F_DUMP: header, environment, a stack area laid out as
 * watchdog/stack_area.c does, no comm table, peer table or ring), written
 * under a temporary name and renamed: never a live segment. */
#ifndef NCCLWATCH_ATTACH_SNAPSHOT_H
#define NCCLWATCH_ATTACH_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>
#include "proc.h"

struct nw_snapshot_result {
	uint32_t threads;          /* threads listed */
	uint32_t stacks;           /* threads with a native stack */
	uint32_t by_ptrace;        /* of those, stopped briefly */
	uint32_t denied;           /* threads we were not permitted to read */
	uint32_t left_running;     /* running, not shown to run user code alone: not stopped, no stack */
	uint64_t stopped_max_ns;   /* longest stop of one thread */
	uint64_t capture_ns;       /* wall time of the capture */
	char path[4096];           /* the file written */
};

struct nw_py_process;  /* pyspy.h */

/* Capture every thread of `p` and write DIR/<host>.<pid>.rank<R>.snap.seg.
 * py: its Python stacks (NULL: none); python_note: what to say about
 * Python stacks (NULL: nothing). 0, or -1
 * with a reason in err. */
int nw_snapshot_take(const struct nw_attach_proc *p, const char *dir, const struct nw_py_process *py,
                     const char *python_note,
                     struct nw_snapshot_result *res, char *err, size_t errlen);

#endif
