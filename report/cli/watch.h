/* watch: `--watch [SECONDS]` for status and diagnose: the command's
 * output again every SECONDS until SIGINT or SIGTERM. On a terminal each
 * frame replaces the last in place (cursor home, each line cleared to its
 * end, the rest of the screen cleared below), under a title line with the
 * time; elsewhere (a pipe, a file) frames are appended, each after a line
 * "# ---- ncclwatch CMD --watch: TIME ----" (UTC, ISO 8601). */
#ifndef NCCLWATCH_REPORT_CLI_WATCH_H
#define NCCLWATCH_REPORT_CLI_WATCH_H

#include <stdio.h>

#define NW_WATCH_DEFAULT_S 2.0

/* Parse the optional SECONDS after --watch: `optarg` (--watch=S) if set,
 * else argv[*optind] when it is a number (then *optind moves past it).
 * 0, or -1 when a value was given that is not a number of seconds > 0. */
int nw_watch_seconds(const char *optarg, int argc, char **argv, int *optind, double *out);

/* One frame: the command's output into `out`. Returns the exit status a
 * single run would have (shown in the title when not 0), never stops the
 * loop. */
typedef int nw_watch_frame_fn(void *arg, FILE *out);

/* Loop until SIGINT/SIGTERM: NW_EXIT_OK, or NW_EXIT_USAGE after one line
 * on stderr if stdout cannot be written. */
int nw_watch(const char *cmd, double seconds, nw_watch_frame_fn *frame, void *arg);

#endif
