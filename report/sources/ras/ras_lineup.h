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

#include "ras_input.h"
#include "ras_procs.h"




/* Line every report of m (a struct nw_ras_merge *) up with the processes
 * read, then add the processes of each report none of whose ranks is one
 * of them (nw_ras_own_procs): nw_source_hook.procs. 0, or -1 out of memory. */
int nw_ras_lineup(void *m, struct nw_proc ***procs, size_t *nprocs);


/* The process's rank of a RAS world rank (in->map), the RAS rank itself
 * when it is no process read. */
int32_t nw_ras_our_rank(const struct nw_ras_input *in, int32_t ras_rank);

#endif
