/* ras_input: what both halves of the RAS adapter share (the lining up,
 * ras_lineup.c, and the processes of a report of its own, ras_procs.c):
 * one saved report as the sources read it, its world comm, a lookup of
 * processes by pid, and RAS's words for what it cannot tell. */
#ifndef NCCLWATCH_REPORT_SOURCES_RAS_INPUT_H
#define NCCLWATCH_REPORT_SOURCES_RAS_INPUT_H

#include "../sources.h"
#include "ras_client.h"

/* What NCCL RAS cannot tell, in words: the source note of the processes
 * it lines up (their capability bits say it: NW_CAP_LAUNCH_ONLY, no
 * NW_CAP_COMPLETION, no NW_CAP_SENDRECV), and the last evidence line of a
 * RAS job's verdicts. */
#define NW_RAS_SOURCE_NOTE "from NCCL RAS: launch counts, not completions; no send/receive counts"

/* One saved report to line up. Fill in path and r; nw_ras_lineup sets the
 * rest. A report none of whose ranks is a process read is a job of its
 * own: its processes are the adapter's (ras_procs.c), `own` set and `job`
 * a name of the lining up's that the caller renames "ras PATH" (a
 * segment's job name holds 63 bytes, a path more); a report without a
 * comm names no process, a text report only its outliers: their job
 * stays "" (nw_ras_add_job). */
struct nw_ras_input {
	const char *path;                 /* the report's file */
	struct nw_ras_report r;
	/* set by the lining up */
	char job[NW_SEG_JOB_LEN];         /* the job it joined, "" none (a report without a
	                                   * comm joins the one job of its directory) */
	size_t nmatched;                  /* its world comm's ranks lined up with processes */
	int folded;                       /* its verdicts were folded into the job's (decide/) */
	int foreign;                      /* it lies with processes of a job, none of them among
	                                   * its ranks: another job's report (one RAS port per
	                                   * host), not used; job names the job it lay with */
	int own;                          /* its processes are the adapter's (ras_procs.c) */
	int (*map)[2];                    /* [nmap] (RAS world rank, the process's rank),
	                                   * sorted by RAS rank */
	size_t nmap, capmap;
};
struct nw_ras_merge {
	struct nw_ras_input *in;
	size_t n;
};

/* The first of cand[0..nc) (sorted by pid) with this pid, or nc. */
size_t nw_ras_first_pid(struct nw_proc *const *cand, size_t nc, int64_t pid);

/* The world comm of a report: its largest (ties: more ranks listed, then
 * the smaller hash); NULL when it lists none. */
const struct nw_ras_comm *nw_ras_world(const struct nw_ras_report *r);

#endif
