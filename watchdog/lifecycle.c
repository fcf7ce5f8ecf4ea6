/* lifecycle: the watchdog's side of interpose/hooks.h's nw_lifecycle, the
 * steps the interposer takes at the process's transitions (state.c). */
#include "../interpose/hooks.h"
#include "progress.h"
#include "requests.h"
#include "watchdog.h"

static void start(void)
{
	(void)nw_watchdog_start();   /* without it recording goes on, said once */
}

const struct nw_lifecycle nw_lifecycle = {
	.start = start,
	.settle = nw_watchdog_settle,
	.exit = nw_watchdog_exit,
	.job_left = nw_requests_leave,
	.after_fork = nw_watchdog_reset_after_fork,
	.reap = nw_progress_reap,
};
