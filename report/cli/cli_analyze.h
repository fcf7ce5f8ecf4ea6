/* What the commands that read a whole job (diagnose, status) share: the
 * paths to read (the arguments, else the default directory) and the
 * analysis over them, with the CLI's error lines and exit status. */
#ifndef NCCLWATCH_REPORT_CLI_CLI_ANALYZE_H
#define NCCLWATCH_REPORT_CLI_CLI_ANALYZE_H

#include "../decide/decide.h"

/* Analyze argv[0 .. argc-1] (files or directories), or the default
 * directory when argc is 0 (checked: nw_cli_default_dir), without the
 * files of other users unless any_owner (trust.h). Returns NW_EXIT_OK with
 * *a filled (free it with nw_analysis_free) and one line on stderr per
 * file that could not be read ("ncclwatch CMD: unreadable: PATH:
 * problem", once per run: `--watch` frames repeat it no more; the
 * caller then exits 1 at least); or NW_EXIT_USAGE after one
 * line on stderr ("ncclwatch CMD: ...") when nothing could be read: a
 * missing or untrusted default directory, no segment, none of the
 * caller's, no readable segment, or no job named opt->job. */
int nw_cli_analyze(const char *cmd, int argc, char **argv, const struct nw_analysis_options *opt,
                   int any_owner, struct nw_analysis *a);

#endif
