/* Saved NCCL RAS reports among diagnose's paths (docs/ras.md): a file that
 * `ncclwatch ras --save` wrote (JSON, or NCCL's text format), or such
 * *.json files lying in a directory given (not below it). */
#ifndef NCCLWATCH_REPORT_CLI_CLI_RAS_H
#define NCCLWATCH_REPORT_CLI_CLI_RAS_H

#include "../analysis/analysis.h"

/* nw_cli_analyze on the paths that are not RAS reports (skipped when only
 * reports were given), then one job per report, its comms lined up with the
 * segments' (nw_ras_add_job, nw_ras_match). Same return and messages as
 * nw_cli_analyze; a report that cannot be read is one line and
 * NW_EXIT_USAGE. argv is reordered. */
int nw_cli_analyze_ras(const char *cmd, int argc, char **argv, const struct nw_analysis_options *opt, int any_owner,
                       struct nw_analysis *a);

#endif
