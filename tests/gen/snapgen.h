/* snapgen: the snapshot files `ncclwatch attach` writes (format 1.4, flag
 * SNAPSHOT: a header with the process's identity and environment, a stack
 * area, no comm or peer table and no ring), built from a small text spec
 * of stacks per rank and thread, so that the engine's verdict from stacks
 * alone can be tested without attach and without real processes.
 *
 * SPEC = GROUP[;GROUP...]
 * GROUP = RANKS[/THREAD]=FRAMES     RANKS: R, R-R, comma-separated, or * (every rank no
 *                                   other group names for that thread)
 * FRAMES = FRAME[<FRAME...]         innermost first, as ncclwatch prints stacks
 * FRAME = SYMBOL | SYMBOL@MODULE | @MODULE
 *   SYMBOL: any text but ';' '<' '@' '=' (e.g. "ncclAllReduce", a mangled C++
 *   name, or a Python frame written "all_reduce (torch/distributed/distributed_c10d.py:2501)":
 *   in a format with Python frames (the py branch's 1.4, NW_PYT_PYTHON) such a frame
 *   with no @MODULE goes to the thread's Python stack, the native frames before
 *   the first one being those under it (py_native); else it is a native symbol);
 *   MODULE: a file name (libnccl.so.2, libcudart.so.12; default: the program,
 *   /opt/job/bin/train); "@MODULE" alone is a frame with no symbol.
 * THREAD: the thread's name (default "train"). Of the groups of one thread
 * name that name a rank, the last one gives it that thread. A rank's first
 * thread (in spec order) is its main thread (tid = pid); the others get
 * pid + 1, ...
 *
 * Test-only code (tests/gen/). */
#ifndef NCCLWATCH_TESTS_GEN_SNAPGEN_H
#define NCCLWATCH_TESTS_GEN_SNAPGEN_H

#include <stddef.h>
#include <stdint.h>
#include "segbuild.h"

#define SNAP_MAX_GROUPS 32
#define SNAP_MAX_FRAMES SB_STACK_FRAMES

struct snap_group {
	uint8_t *ranks;                /* [nranks] flags; NULL: "*" */
	char thread[NW_STACK_NAME_LEN];
	uint32_t nframes;
	char *symbol[SNAP_MAX_FRAMES]; /* NULL: none */
	char *module[SNAP_MAX_FRAMES]; /* NULL: the program */
};

struct snap_spec {
	int32_t nranks;
	size_t ngroups;
	struct snap_group g[SNAP_MAX_GROUPS];
	char *text;                    /* the parsed copy the strings point into */
};

/* Parse; 0, or -1 with a message in err. */
int snap_spec_parse(const char *spec, int32_t nranks, struct snap_spec *s, char *err, size_t errlen);
void snap_spec_free(struct snap_spec *s);
/* Whether some group gives rank r a thread (its snapshot has a stack). */
int snap_spec_has(const struct snap_spec *s, int32_t r);

/* The layout of a snapshot: no tables, no ring, a stack area. */
void snap_layout(struct sb_layout *l);

/* Build rank r's snapshot in buf (l->size bytes): identity and environment
 * copied from `like` (the header nwgen made for the rank's segment), flags
 * SNAPSHOT | DUMP, job `job`, the capture at `capture_ns` (the host's
 * CLOCK_MONOTONIC). `app`/`lib`: load addresses of the program and of the
 * shared libraries. */
void snap_build(struct sb_seg *seg, const struct sb_layout *l, uint8_t *buf, const struct snap_spec *s,
                int32_t r, const struct nw_seg_header *like, const char *job, uint64_t capture_ns,
                uint64_t app, uint64_t lib);

#endif
