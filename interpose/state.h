/* state: whether this process records, and the transitions: lazy start at
 * the first wrapped call, NCCLWATCH_DISABLE, stop after an internal error,
 * fork (the child starts over) and exit. */
#ifndef NCCLWATCH_INTERPOSE_STATE_H
#define NCCLWATCH_INTERPOSE_STATE_H

#include "visibility.h"
#include <stdatomic.h>

enum nw_run_state {
	NW_RUN_UNSTARTED = 0,    /* no NCCL call seen yet (or a fork child) */
	NW_RUN_RECORDING = 1,
	NW_RUN_PASSTHROUGH = 2,  /* disabled, failed to start, or stopped */
};

extern NW_HIDDEN atomic_int nw_run;

/* Start recording if not done yet (pthread-safe, once per process image).
 * Returns 1 when recording. */
int nw_start(void);

/* Is this process recording? Starts it on first use. */
static inline int nw_recording(void)
{
	int s = atomic_load_explicit(&nw_run, memory_order_acquire);
	if (__builtin_expect(s == NW_RUN_RECORDING, 1))
		return 1;
	return s == NW_RUN_UNSTARTED ? nw_start() : 0;
}

/* NCCLWATCH_DISABLE=1: pure pass-through. */
int nw_disabled(void);

/* An internal error: stop recording (NW_SEG_F_STOPPED, header.error), say
 * so once, pass everything through from now on. */
void nw_stop(const char *why);

/* The CUDA driver is initialised (an event pair was made): from now on
 * the process's exit settles the pending pairs before the driver tears
 * itself down. Once per process; not on the op path's fast branch. */
void nw_exit_settle_arm(void);

/* An op we could not record (untracked comm, recording stopped). */
void nw_count_dropped(void);

#endif
