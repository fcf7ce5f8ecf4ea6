/* ras_procs: the RAS adapter's processes: one per rank of a report of its
 * own, and the ordinary facts (comm table entries, a comm left, a process
 * gone) it gives the processes of a report, its own or lined up. */
#ifndef NCCLWATCH_REPORT_SOURCES_RAS_PROCS_H
#define NCCLWATCH_REPORT_SOURCES_RAS_PROCS_H

#include "ras_input.h"

/* Append to *procs one process per rank of report in's world
 * comm (answered or missing), of job `job`, with what RAS knows of it as
 * ordinary facts: comm table entries, launch positions. None when the
 * report lists no comm. 0, or -1 out of memory. */
int nw_ras_own_procs(const struct nw_ras_input *in, const char *job, struct nw_proc ***procs, size_t *nprocs);

/* A process of the adapter: rank `rank` of world comm w (its
 * size the world size), pid and host as RAS names them, of job `job`,
 * launch-only, no comm, no stack; NULL out of memory. */
struct nw_proc *nw_ras_proc_new(const struct nw_ras_input *in, const struct nw_ras_comm *w, const char *job,
                                int rank, int pid, const char *host);

/* Comm c as rank rk sees it, one entry of p's comm table (RAS's
 * hash as its id; its async error), unless p has it already. For the
 * adapter's processes and the snapshots lined up (a segment has its own
 * comm table, under its own ids). 0, or -1 out of memory. */
int nw_ras_comm_fact(struct nw_proc *p, const struct nw_ras_comm *c, const struct nw_ras_rank *rk);

/* Comm c as a rank that answered RAS but no longer holds it
 * sees it (missing rank m, neither unresponsive nor dead): an entry of
 * p's comm table in state DESTROYED, unless p has it already. 0, or -1
 * out of memory. */
int nw_ras_left_fact(struct nw_proc *p, const struct nw_ras_comm *c, const struct nw_ras_missing *m);

/* Comm c as a rank whose process RAS saw gone (missing rank
 * m, unresponsive or considered dead) sees it: p->gone_how (a sink, judged
 * by nw_rules_gone), p->alive 0, and an entry of p's comm table in state
 * INIT_DONE (a member), unless p has it already. 0, or -1 out of memory. */
#define NW_RAS_GONE_UNRESPONSIVE "did not answer RAS"
#define NW_RAS_GONE_DEAD "considered dead by RAS (no answer for the peer-dead timeout)"
int nw_ras_gone_fact(struct nw_proc *p, const struct nw_ras_comm *c, const struct nw_ras_missing *m);

#endif
