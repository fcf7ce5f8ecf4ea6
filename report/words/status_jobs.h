/* status_jobs: what `ncclwatch status` says about each job, shared by its
 * text (status.c) and JSON (status_json.c) forms; private to
 * report/words/. A job is
 *   live     some process runs on this host, and no process that may
 *            still run has an op pending as long as the job's timeout;
 *   idle     some process runs on this host, none that may still run has
 *            an op pending, and none made an NCCL call or saw an op end
 *            for at least the timeout (a data loader, a checkpoint, a
 *            rank stuck outside NCCL everywhere: not a stall the watchdog
 *            reports, but no NCCL progress either);
 *   hung     some process that runs (or may: another host's) has an op
 *            pending (enqueued, started, inside a blocking call) at least
 *            the timeout old (measured as the watchdog measures a stall,
 *            on the process's clock), seen from outside;
 *   stale    every process is dead (the files are what is left);
 *   unknown  its processes are on other hosts, none stuck when last seen.
 * Jobs are listed newest first: by the newest start of their processes. */
#ifndef NCCLWATCH_REPORT_RENDER_STATUS_JOBS_H
#define NCCLWATCH_REPORT_RENDER_STATUS_JOBS_H

#include "words.h"

enum nw_job_state { NW_JOB_LIVE, NW_JOB_HUNG, NW_JOB_STALE, NW_JOB_UNKNOWN, NW_JOB_IDLE };
#define NW_JOB_STATES 5

struct nw_status_job {
	const struct nw_job *job;
	enum nw_job_state state;
	size_t alive, dead, remote;       /* views (ranks) by their process's liveness */
	const struct nw_proc *stuck;      /* the process with the oldest pending op, or NULL */
	const struct nw_seg_op *stuck_op; /* that op */
	double stuck_age_s;               /* its age */
	double quiet_s;                   /* the shortest time since any process that may still
	                                   * run made an NCCL call or saw an op end (idle: at
	                                   * least the timeout) */
	uint64_t newest_start_ns;         /* the newest process start (CLOCK_REALTIME) */
};

const char *nw_job_state_name(enum nw_job_state s);   /* "live" "hung" "stale" "unknown" "idle" */

/* The op of p not final that has waited longest (NULL none) and how long,
 * in seconds on p's clock: a started op since its start, any other since
 * it was enqueued, as the watchdog measures a stall. */
const struct nw_seg_op *nw_status_oldest_pending(const struct nw_proc *p, double *age_s);

/* Every job of a, classified, newest first: a malloc'd array of a->njobs
 * (free it), or NULL out of memory (errno ENOMEM). counts[state] += 1 per
 * job. */
struct nw_status_job *nw_status_jobs(const struct nw_analysis *a, size_t counts[NW_JOB_STATES]);

#endif
