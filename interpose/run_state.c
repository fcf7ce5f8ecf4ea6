/* run_state: whether this process records (state.h): the state, the
 * stop after an internal error, the ops not recorded, and the exit
 * handler that settles pending pairs before the driver goes. Below
 * everything that records (comms, event pools): they call up into none of
 * the transitions (state.c). */
#include "state.h"

#include "hooks.h"
#include "log.h"
#include "segment_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

atomic_int nw_run;

int nw_disabled(void)
{
	static atomic_int cached = -1;
	int v = atomic_load_explicit(&cached, memory_order_relaxed);
	if (v < 0) {
		const char *s = getenv("NCCLWATCH_DISABLE");
		v = s && *s && strcmp(s, "0") != 0;
		atomic_store_explicit(&cached, v, memory_order_relaxed);
	}
	return v;
}

/* The CUDA driver tears itself down at exit from a handler it registers
 * in cuInit; every event query after it answers CUDA_ERROR_DEINITIALIZED,
 * and our destructor (nw_at_exit) runs after every exit handler. A handler
 * registered once the driver is initialised runs before the driver's:
 * there the pending event pairs still say whether their ops completed (an
 * op synchronized just before exit, under a poll ago, must not stay
 * STARTED). Registered once; fork children inherit it, after the driver's. */
static atomic_int nw_settle_registered;

static void nw_settle_at_exit(void)
{
	if (atomic_load_explicit(&nw_run, memory_order_acquire) == NW_RUN_RECORDING)
		nw_lifecycle.settle();
}

void nw_exit_settle_arm(void)
{
	int expected = 0;
	if (atomic_load_explicit(&nw_settle_registered, memory_order_relaxed))
		return;
	if (atomic_compare_exchange_strong(&nw_settle_registered, &expected, 1) && atexit(nw_settle_at_exit) != 0)
		nw_log("cannot register the exit handler: ops completed just before exit may show as pending");
}

void nw_stop(const char *why)
{
	int expected = NW_RUN_RECORDING;
	if (!atomic_compare_exchange_strong(&nw_run, &expected, NW_RUN_PASSTHROUGH))
		return;
	if (nw_seg.hdr) {
		snprintf(nw_seg.hdr->error, sizeof(nw_seg.hdr->error), "%s", why);
		atomic_fetch_or(&nw_seg.hdr->flags, NW_SEG_F_STOPPED);
	}
	nw_log("recording stopped: %s (NCCL calls go on unrecorded)", why);
}

void nw_count_dropped(void)
{
	if (nw_seg.hdr)
		atomic_fetch_add_explicit(&nw_seg.hdr->ops_dropped, 1, memory_order_relaxed);
}
