/* What the commands that read a whole job (diagnose, status) share: the
 * paths to read (the arguments, else the default directory) and the
 * analysis over them, with the CLI's error lines and exit status. */
#ifndef NCCLWATCH_REPORT_CLI_CLI_ANALYZE_H
#define NCCLWATCH_REPORT_CLI_CLI_ANALYZE_H

#include "../analysis/analysis.h"

/* Analyze argv[0 .. argc-1] (files or directories), or the default
 * directory when argc is 0. Returns NW_EXIT_OK with *a filled (free it
 * with nw_analysis_free), or NW_EXIT_USAGE after one line on stderr
 * ("ncclwatch CMD: ...") when nothing could be read: a missing directory,
 * no segment, no readable segment, or no job named opt->job. */
int nw_cli_analyze(const char *cmd, int argc, char **argv, const struct nw_analysis_options *opt,
                   struct nw_analysis *a);

#endif
