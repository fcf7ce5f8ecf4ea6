/* ras_lineup: the RAS adapter's half that joins a saved NCCL RAS report to
 * the processes read (snapshots or segments) of the same job (docs/ras.md,
 * "One job, one verdict"): which processes are its ranks (host and pid),
 * the rank, world size and job each lined-up process takes from it, and
 * what RAS can see of them (NW_CAP_LAUNCH_ONLY, the source note), and
 * their launch counts as positions (nw_proc.launch: per comm of the
 * report they are a rank of, one per collective kind). Facts
 * only: the verdicts from the report are decide/'s (verdicts_ras.c,
 * ras_merge.c). */
#ifndef NCCLWATCH_REPORT_SOURCES_RAS_LINEUP_H
#define NCCLWATCH_REPORT_SOURCES_RAS_LINEUP_H

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

/* Line every report of m (a struct nw_ras_merge *) up with the processes
 * read, then add the processes of each report none of whose ranks is one
 * of them (nw_ras_own_procs): nw_source_hook.procs. 0, or -1 out of memory. */
int nw_ras_lineup(void *m, struct nw_proc ***procs, size_t *nprocs);

/* ras_procs.c: append to *procs one process per rank of report in's world
 * comm (answered or missing), of job `job`, with what RAS knows of it as
 * ordinary facts: comm table entries, launch positions. None when the
 * report lists no comm. 0, or -1 out of memory. */
int nw_ras_own_procs(const struct nw_ras_input *in, const char *job, struct nw_proc ***procs, size_t *nprocs);

/* ras_procs.c: a process of the adapter: rank `rank` of world comm w (its
 * size the world size), pid and host as RAS names them, of job `job`,
 * launch-only, no comm, no stack; NULL out of memory. */
struct nw_proc *nw_ras_proc_new(const struct nw_ras_input *in, const struct nw_ras_comm *w, const char *job,
                                int rank, int pid, const char *host);

/* ras_procs.c: comm c as rank rk sees it, one entry of p's comm table (RAS's
 * hash as its id; its async error), unless p has it already. For the
 * adapter's processes and the snapshots lined up (a segment has its own
 * comm table, under its own ids). 0, or -1 out of memory. */
int nw_ras_comm_fact(struct nw_proc *p, const struct nw_ras_comm *c, const struct nw_ras_rank *rk);

/* ras_procs.c: comm c as a rank that answered RAS but no longer holds it
 * sees it (missing rank m, neither unresponsive nor dead): an entry of
 * p's comm table in state DESTROYED, unless p has it already. 0, or -1
 * out of memory. */
int nw_ras_left_fact(struct nw_proc *p, const struct nw_ras_comm *c, const struct nw_ras_missing *m);

/* ras_procs.c: comm c as a rank whose process RAS saw gone (missing rank
 * m, unresponsive or considered dead) sees it: p->gone_how (a sink, judged
 * by nw_rules_gone), p->alive 0, and an entry of p's comm table in state
 * INIT_DONE (a member), unless p has it already. 0, or -1 out of memory. */
#define NW_RAS_GONE_UNRESPONSIVE "did not answer RAS"
#define NW_RAS_GONE_DEAD "considered dead by RAS (no answer for the peer-dead timeout)"
int nw_ras_gone_fact(struct nw_proc *p, const struct nw_ras_comm *c, const struct nw_ras_missing *m);

/* The process's rank of a RAS world rank (in->map), the RAS rank itself
 * when it is no process read. */
int32_t nw_ras_our_rank(const struct nw_ras_input *in, int32_t ras_rank);

#endif
