/* engine: what libncclwatch.so asks of libncclwatch-engine.so, the report
 * library (reader, analysis engine, text renderer, and jansson with them)
 * in a shared object of its own. The preload is a tracker: it loads the
 * engine (watchdog/engine.c: dlopen RTLD_LOCAL, from its own directory)
 * only when its watchdog must print a cross-rank verdict, so a process
 * that never stalls never maps it, and nothing of it ever enters the
 * process's global symbol scope.
 *
 * One entry point, named with its ABI version: a libncclwatch.so that
 * finds an engine of another version finds no entry and says so. */
#ifndef NCCLWATCH_REPORT_ENGINE_H
#define NCCLWATCH_REPORT_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#define NW_ENGINE_LIB "libncclwatch-engine.so"
#define NW_ENGINE_VERDICT_ENTRY "nw_engine_verdict_v2"

struct nw_engine_verdict_in {
	const char *const *paths;      /* directories: the job dir, the dump dir */
	size_t npaths;
	const char *job;               /* only this job */
	double timeout_s;
	uint64_t last_signature;       /* of the verdict printed last, 0 none */
};

struct nw_engine_verdict_out {
	uint64_t signature;            /* of this verdict, never 0 */
	char *text;                    /* the text verdict (malloc'd: free() it),
	                                * NULL when the signature is last_signature */
	size_t len;
	/* v2: the worst verdict of the jobs analysed (for the watchdog's
	 * Prometheus file: watchdog/prom.h), set whenever 0 is returned. */
	int worst_kind;                /* its precedence (report/verdict_kinds.h), 0 HEALTHY */
	const char *worst_name;        /* "TRANSPORT_STALL": static in the engine, valid while it is loaded */
};

/* Analyse the segments and dumps under `paths` as `ncclwatch diagnose`
 * would (one thread, no output): 0, or -1 when nothing could be analysed. */
typedef int nw_engine_verdict_fn(const struct nw_engine_verdict_in *in, struct nw_engine_verdict_out *out);

/* The host's summary (report/sources/summary/), written by the watchdog that
 * prints the verdict, next to its report.txt: a second entry point, so
 * an engine without it still gives verdicts. */
#define NW_ENGINE_SUMMARY_ENTRY "nw_engine_summary_v1"

struct nw_engine_summary_in {
	const char *const *paths;      /* as for the verdict */
	size_t npaths;
	const char *job;               /* only this job */
	const char *host;              /* only this host's processes */
	const char *out_path;          /* written aside, then renamed */
};

/* 0 written, -1 not (nothing of the host read, out of memory, or the file
 * could not be written): one thread, no output. */
typedef int nw_engine_summary_fn(const struct nw_engine_summary_in *in);

#endif
