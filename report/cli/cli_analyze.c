/* See cli_analyze.h. */
#include "cli_analyze.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "trust.h"
#include "../escape.h"

/* Whether `line` was said on stderr before in this run. `--watch` reads
 * the job again every few seconds in one process: a file that stays
 * unreadable is said once, not once a frame (a new problem with it is a
 * new line). Bounded: past the table's end every line is said. */
static int said_before(const char *line)
{
	static char *said[1024];
	static size_t nsaid;
	for (size_t i = 0; i < nsaid; i++)
		if (strcmp(said[i], line) == 0)
			return 1;
	if (nsaid < sizeof said / sizeof said[0] && (said[nsaid] = strdup(line)) != NULL)
		nsaid++;
	return 0;
}

int nw_cli_analyze(const char *cmd, int argc, char **argv, const struct nw_analysis_options *opt,
                   int any_owner, struct nw_analysis *a)
{
	char def[PATH_MAX];
	const char *one[1];
	const char *const *paths = (const char *const *)argv;
	size_t npaths = (size_t)argc;
	memset(a, 0, sizeof *a);
	if (argc == 0) {
		int rc = nw_cli_default_dir(cmd, def, sizeof def,
		                            " (no job has run here with ncclwatch, or NCCLWATCH_DIR differs)",
		                            &one[0]);
		if (rc != NW_EXIT_OK)
			return rc;
		paths = one;
		npaths = 1;
	}
	char **mine;
	size_t nmine, skipped;
	if (nw_cli_mine(cmd, paths, npaths, any_owner, &mine, &nmine, &skipped) != 0)
		return nw_usage_error(cmd, "out of memory");
	if (nmine == 0) {
		nw_cli_paths_free(mine, nmine);
		return nw_usage_error(cmd, "no segment of yours in %s%s: %zu file%s of other users skipped",
		                      paths[0], npaths > 1 ? " ..." : "", skipped, skipped == 1 ? "" : "s");
	}
	struct nw_read_error err;
	int failed = nw_analyze((const char *const *)mine, nmine, opt, a, &err) != 0;
	nw_cli_paths_free(mine, nmine);
	if (failed)
		return nw_usage_error(cmd, "%s", err.message);
	if (a->njobs == 0) {
		if (opt->job && a->nread > a->nbad)
			nw_usage_error(cmd, "no job named '%s' in %s%s", opt->job, paths[0], npaths > 1 ? " ..." : "");
		else if (a->nbad)
			nw_usage_error(cmd, "no readable segment: %zu file%s could not be read, first %s", a->nbad,
			               a->nbad == 1 ? "" : "s", a->bad[0].err.message);
		else
			nw_usage_error(cmd, "no segment in %s%s", paths[0], npaths > 1 ? " ..." : "");
		nw_analysis_free(a);
		return NW_EXIT_USAGE;
	}
	/* The exit-status rule: a file that could not be read is a problem
	 * found, said on stderr (the report itself lists it too). */
	for (size_t i = 0; i < a->nbad; i++)
		if (!said_before(a->bad[i].err.message))
			nw_print_line(stderr, "ncclwatch %s: unreadable: %s", cmd, a->bad[i].err.message);
	return NW_EXIT_OK;
}
