/* See cli_analyze.h. */
#include "cli_analyze.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "commands.h"

int nw_cli_analyze(const char *cmd, int argc, char **argv, const struct nw_analysis_options *opt,
                   struct nw_analysis *a)
{
	char def[PATH_MAX];
	const char *one[1];
	const char *const *paths = (const char *const *)argv;
	size_t npaths = (size_t)argc;
	if (argc == 0) {
		one[0] = nw_default_dir(def, sizeof def);
		struct stat st;
		if (stat(one[0], &st) != 0)
			return nw_usage_error(cmd, "%s: %s (no job has run here with ncclwatch, or NCCLWATCH_DIR differs)",
			                      one[0], strerror(errno));
		paths = one;
		npaths = 1;
	}
	struct nw_read_error err;
	memset(a, 0, sizeof *a);
	if (nw_analyze(paths, npaths, opt, a, &err) != 0)
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
	return NW_EXIT_OK;
}
