/* exit_wait: see exit_wait.h. */
#include "exit_wait.h"

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

/* What this process's exit waits have taken so far. */
static _Atomic uint64_t waited_ns;
static atomic_int begun;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int nw_exit_lock(pthread_mutex_t *m)
{
	if (pthread_mutex_trylock(m) == 0)
		return 0;
	uint64_t start = now_ns(), spent = atomic_load(&waited_ns);
	uint64_t left = spent < NW_EXIT_WAIT_NS ? NW_EXIT_WAIT_NS - spent : 0;
	/* A try every millisecond, not a timed lock: CLOCK_REALTIME (what
	 * pthread_mutex_timedlock waits on) may be set back meanwhile. */
	const struct timespec ms = { 0, 1000000L };
	int got = -1;
	while (now_ns() - start < left) {
		nanosleep(&ms, NULL);
		if (pthread_mutex_trylock(m) == 0) {
			got = 0;
			break;
		}
	}
	atomic_fetch_add(&waited_ns, now_ns() - start);
	return got;
}

void nw_exit_begin(void)
{
	atomic_store(&begun, 1);
}

int nw_exit_begun(void)
{
	return atomic_load(&begun);
}

void nw_exit_wait_reset(void)
{
	atomic_store(&waited_ns, 0);
	atomic_store(&begun, 0);
}
