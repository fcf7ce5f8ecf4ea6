/* engine: the report engine, loaded by the watchdog only when it must
 * print a cross-rank verdict (report/engine/engine.h). */
#ifndef NCCLWATCH_WATCHDOG_ENGINE_H
#define NCCLWATCH_WATCHDOG_ENGINE_H

#include "../report/engine/engine.h"

/* libncclwatch-engine.so's verdict entry, loaded once from the directory
 * of libncclwatch.so (dlopen RTLD_NOW | RTLD_LOCAL, libc's dlsym); NULL if
 * it cannot be, said once: "no cross-rank verdict: ...". Watchdog thread
 * only (it loads a library: never from a signal handler or the hot path). */
nw_engine_verdict_fn *nw_engine_verdict(void);
/* Its summary entry, NULL if it has none (the same loading). */
nw_engine_summary_fn *nw_engine_summary(void);

#endif
