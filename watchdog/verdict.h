/* verdict: the cross-rank verdict, printed by the watchdog itself. When a
 * process found a stall it runs the analysis engine (report/{sources,model,decide}/,
 * loaded as libncclwatch-engine.so: engine.h; without it, one line says
 * why there is no verdict) over every segment and dump of its job it can
 * see: the job directory and the dump directory. One process per host does it: the one holding the
 * lock on <job dir>/report.lock (held until it exits, so another takes
 * over if it dies). The verdict goes to stderr, each line prefixed
 * "ncclwatch: ", and to <dump dir>/report.txt; it is computed again while
 * the stall lasts and printed again only when it changed (verdicts, rank
 * sets, stack groups; not the ages); each time it is printed, the host's
 * summary (report/sources/summary/) goes to <dump dir>/<host>.nwsum. Watchdog thread
 * only. */
#ifndef NCCLWATCH_WATCHDOG_VERDICT_H
#define NCCLWATCH_WATCHDOG_VERDICT_H

#include <stdint.h>

/* A stall is being reported (or still lasts) at `now`: analyse if this
 * process reports for its host and the last analysis is old enough. */
void nw_verdict_tick(uint64_t now, const char *job, const char *jobdir, const char *dumpdir,
                     double timeout_s, int force);

/* The worst kind of the last verdict this process computed (its
 * precedence, 0 HEALTHY) and *name its name, or -1 (*name NULL) when it
 * computed none: the Prometheus file exports it (prom.h). */
int nw_verdict_last_kind(const char **name);

/* Fork child: forget the lock and the last verdict. */
void nw_verdict_reset(void);

#endif
