/* summary_entry: libncclwatch-engine.so's second entry point (engine.h):
 * the host's summary, which the watchdog that prints the verdict writes
 * next to report.txt, so a collection script finds a host's facts even
 * where nobody runs `ncclwatch summary`. */
#include "engine.h"

#include "../decide/decide.h"
#include "../sources/summary/summary.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((visibility("default"))) nw_engine_summary_fn nw_engine_summary_v1;

int nw_engine_summary_v1(const struct nw_engine_summary_in *in)
{
	struct nw_analysis_options opt = { .job = in->job, .max_threads = 1 };
	struct nw_analysis a;
	struct nw_read_error err;
	struct nw_proc **procs;
	size_t n, kept = 0;
	if (nw_load_processes(in->paths, in->npaths, &opt, &a, &procs, &n, &err) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (in->host && strncmp(procs[i]->hdr.host, in->host, sizeof procs[i]->hdr.host) != 0)
			nw_proc_free(procs[i]);      /* another host's dump in a shared dump directory */
		else
			procs[kept++] = procs[i];
	}
	int rc = -1;
	char tmp[PATH_MAX];
	if (kept && snprintf(tmp, sizeof tmp, "%s.%d.tmp", in->out_path, (int)getpid()) < (int)sizeof tmp) {
		FILE *f = fopen(tmp, "wxe");
		if (f) {
			int failed = nw_summary_write(f, procs, kept, 0) != 0;
			failed |= fclose(f) != 0;
			if (!failed && rename(tmp, in->out_path) == 0)
				rc = 0;
			else
				unlink(tmp);
		}
	}
	for (size_t i = 0; i < kept; i++)
		nw_proc_free(procs[i]);
	free(procs);
	nw_analysis_free(&a);
	return rc;
}
