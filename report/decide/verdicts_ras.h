/* verdicts_ras: verdicts from an NCCL RAS report (report/sources/ras/): launch
 * counts per communicator and collective, init states, async errors, and
 * the ranks whose process did not answer. The rules and their limits are
 * in docs/ras.md and docs/diagnosis.md ("Verdicts from RAS counts").
 *
 * RAS counts launches, not completions, and no send/receive: what it
 * cannot see is said in the verdict, never guessed. */
#ifndef NCCLWATCH_REPORT_ANALYSIS_VERDICTS_RAS_H
#define NCCLWATCH_REPORT_ANALYSIS_VERDICTS_RAS_H

#include "decide.h"
#include "../sources/ras/ras_client.h"

/* What NCCL RAS cannot tell, in words: the source note of the processes
 * it lines up (their capability bits say it: NW_CAP_LAUNCH_ONLY, no
 * NW_CAP_COMPLETION, no NW_CAP_SENDRECV), and the last evidence line of a
 * RAS job's verdicts. */
#define NW_RAS_SOURCE_NOTE "from NCCL RAS: launch counts, not completions; no send/receive counts"

/* Append to a->jobs one job named `name` whose verdicts come from the
 * report r (ranks are those of its largest communicator; a rank of a
 * smaller one is mapped there by pid): a report none of whose ranks is a
 * process read (ras_merge.c lines the others up with their job). 0, or -1
 * out of memory. */
int nw_ras_add_job(struct nw_analysis *a, const struct nw_ras_report *r, const char *name);

/* The same verdicts into a fresh array (for callers that merge them
 * elsewhere, e.g. attach): 0, or -1 out of memory. Free each verdict's
 * members and the array as analyze.c does (nw_ras_verdicts_free). */
int nw_ras_verdicts(const struct nw_ras_report *r, struct nw_verdict **out, size_t *n, int32_t *world_size);
void nw_ras_verdicts_free(struct nw_verdict *v, size_t n);

/* ras_merge.c: reports that join the snapshots (or segments) of the same
 * processes as ONE job (docs/ras.md, "One job, one verdict"). Fill in[]
 * (path and r), hand the hook to nw_analyze (nw_analysis_options.hook);
 * afterwards, an input whose job is "" joined none (its own job, as
 * nw_ras_add_job). */
struct nw_ras_input {
	const char *path;                 /* the report's file */
	struct nw_ras_report r;
	/* set by the analysis */
	char job[NW_SEG_JOB_LEN];         /* the job it joined, "" none (a report without a
	                                   * comm joins the one job of its directory) */
	size_t nmatched;                  /* its world comm's ranks lined up with processes */
	int folded;                       /* its verdicts were folded into the job's */
	int foreign;                      /* it lies with processes of a job, none of them among
	                                   * its ranks: another job's report (one RAS port per
	                                   * host), not used; job names the job it lay with */
	int (*map)[2];                    /* [nmap] (RAS world rank, the process's rank) */
	size_t nmap, capmap;
};
struct nw_ras_merge {
	struct nw_ras_input *in;
	size_t n;
};
void nw_ras_hook(struct nw_ras_merge *m, struct nw_source_hook *h);

#endif
