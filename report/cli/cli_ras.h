/* Saved NCCL RAS reports among diagnose's paths (docs/ras.md): a file that
 * `ncclwatch ras --save` wrote (JSON, or NCCL's text format), or such
 * *.json files lying in a directory given (not below it). */
#ifndef NCCLWATCH_REPORT_CLI_CLI_RAS_H
#define NCCLWATCH_REPORT_CLI_CLI_RAS_H

#include <sys/types.h>
#include "../decide/decide.h"

/* nw_cli_analyze on the paths that are not RAS reports (nw_analyze of no
 * path when only reports were given); a report joins the job of the
 * processes that are its ranks (ras_merge.c), else it is one job of its
 * own, "ras PATH", of the adapter's processes (ras_procs.c; a report
 * without a comm: nw_ras_add_job).
 * Same return and messages as
 * nw_cli_analyze; a report that cannot be read is one line and
 * NW_EXIT_USAGE. argv is reordered. */
int nw_cli_analyze_ras(const char *cmd, int argc, char **argv, const struct nw_analysis_options *opt, int any_owner,
                       struct nw_analysis *a);

/* For attach: ask NCCL's RAS for each job directory dirs[i], for the
 * processes pids[i] (npids[i] of them) whose files it holds (the address
 * most of them serve on, nw_ras_query_pids), and write the report as
 * received into it (ras.json, or ras.txt in the text format), where
 * diagnose reads it next to the snapshots. Every job's RAS on a host
 * listens on one port: a report none of whose ranks is one of the job's
 * processes came from another job; it is asked again (a new connection
 * may reach another listener) and, if no report of the job's own comes,
 * not written. Prints one line per job: "attach: RAS at ADDR: NCCL V, N
 * communicators -> FILE", or why there is none ("attach: RAS off in every
 * process (NCCL_RAS_ENABLE not 1): stacks alone", "attach: no RAS answers
 * at ADDR: ...: stacks alone", "...: another job's (...): not used").
 * Never fails attach. */
void nw_cli_ras_attach(char *const *dirs, pid_t *const *pids, const size_t *npids, int ndirs);

#endif
