/* state: see state.h. */
#include "state.h"

#include "comms.h"
#include "graphs.h"
#include "job.h"
#include "log.h"
#include "real_nccl.h"
#include "segment_file.h"
#include "hooks.h"
#include "thread.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

atomic_int nw_run;

static pthread_mutex_t nw_start_lock = PTHREAD_MUTEX_INITIALIZER;
static char nw_job[NW_SEG_JOB_LEN];   /* kept across fork: the child is in the same job */
static int nw_atfork_registered;

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

/* fork child: never write into the parent's segment; start again lazily. */
static void nw_atfork_child(void)
{
	nw_start_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	nw_segment_forget(&nw_seg);
	nw_comms_reset_after_fork();
	nw_graph_reset_after_fork();
	nw_thread_reset();
	nw_lifecycle.after_fork();
	atomic_store_explicit(&nw_run, NW_RUN_UNSTARTED, memory_order_release);
}

/* Runs from exit() before the destructors: the status is known only here.
 * Registered once; fork children inherit it. */
static void nw_note_exit_status(int status, void *arg)
{
	(void)arg;
	if (atomic_load_explicit(&nw_run, memory_order_acquire) == NW_RUN_RECORDING)
		nw_segment_note_exit_status(&nw_seg, status);
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

__attribute__((destructor)) static void nw_at_exit(void)
{
	if (atomic_load_explicit(&nw_run, memory_order_acquire) == NW_RUN_RECORDING) {
		nw_lifecycle.exit();
		/* the last one out removes what left early, and the job directory */
		nw_lifecycle.job_left(nw_seg.jobdir, !nw_segment_exit(&nw_seg));
	}
}

int nw_start(void)
{
	if (nw_disabled()) {
		atomic_store_explicit(&nw_run, NW_RUN_PASSTHROUGH, memory_order_release);
		return 0;
	}
	int saved = nw_tls.inside;
	nw_tls.inside = 1;                 /* NCCL calls made while we start pass through */
	pthread_mutex_lock(&nw_start_lock);
	int run = atomic_load_explicit(&nw_run, memory_order_acquire);
	if (run == NW_RUN_UNSTARTED) {
		if (!nw_atfork_registered) {
			pthread_atfork(NULL, NULL, nw_atfork_child);
			on_exit(nw_note_exit_status, NULL);
			nw_atfork_registered = 1;
		}
		if (!nw_job[0])
			nw_job_id(nw_job, sizeof(nw_job));
		int version = 0;
		__typeof__(ncclGetVersion) *get_version = NW_REAL_FN(GetVersion);
		if (!get_version || get_version(&version) != ncclSuccess)
			version = 0;
		if (nw_segment_create(&nw_seg, nw_job, version, nw_real_library_path()) == 0 && nw_comms_init() == 0) {
			run = NW_RUN_RECORDING;
			nw_lifecycle.start();      /* decides how ops are tracked: before the first record */
		} else {
			run = NW_RUN_PASSTHROUGH;
		}
		atomic_store_explicit(&nw_run, run, memory_order_release);
	}
	pthread_mutex_unlock(&nw_start_lock);
	nw_tls.inside = saved;
	return run == NW_RUN_RECORDING;
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
