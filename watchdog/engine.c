/* engine: see engine.h. */
#include "engine.h"

#include "../interpose/libc_dl.h"
#include "../interpose/log.h"
#include "../interpose/sibling.h"

#include <pthread.h>

static pthread_once_t engine_once = PTHREAD_ONCE_INIT;
static nw_engine_verdict_fn *verdict_fn;
static nw_engine_summary_fn *summary_fn;

static void load(void)
{
	char why[512];
	void *h = nw_dlopen_sibling(NW_ENGINE_LIB, why, sizeof(why));
	if (!h) {
		nw_log("no cross-rank verdict: cannot load the report engine: %s", why);
		return;
	}
	nw_libc_dl_init();
	void *fn = nw_libc_dlsym ? nw_libc_dlsym(h, NW_ENGINE_VERDICT_ENTRY) : NULL;
	if (!fn) {
		nw_log("no cross-rank verdict: %s has no %s (another ncclwatch version?)", NW_ENGINE_LIB,
		       NW_ENGINE_VERDICT_ENTRY);
		return;
	}
	/* The handle stays open for the life of the process. */
	verdict_fn = (nw_engine_verdict_fn *)fn;
	/* optional: an engine without it gives verdicts, no summary */
	summary_fn = (nw_engine_summary_fn *)nw_libc_dlsym(h, NW_ENGINE_SUMMARY_ENTRY);
}

nw_engine_verdict_fn *nw_engine_verdict(void)
{
	pthread_once(&engine_once, load);
	return verdict_fn;
}

nw_engine_summary_fn *nw_engine_summary(void)
{
	pthread_once(&engine_once, load);
	return summary_fn;
}
