/* state: the transitions (state.h): the lazy start at the first wrapped
 * call, a fork child starting over, the exit; the run state itself and
 * the stop after an internal error are run_state.c's. */
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

static pthread_mutex_t nw_start_lock = PTHREAD_MUTEX_INITIALIZER;
static char nw_job[NW_SEG_JOB_LEN];   /* kept across fork: the child is in the same job */
static int nw_atfork_registered;

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
