/* test_hooks: see test_hooks.h. Only the test build compiles this file. */
#ifdef NW_TEST_HOOKS
#include "test_hooks.h"

#include "segment_file.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t nw_hook_once = PTHREAD_ONCE_INIT;
static _Atomic int64_t nw_hook_wd_ns, nw_hook_other_ns;

static void read_env(void)
{
	const char *v = getenv("NCCLWATCH_TEST_RING_DELAY_US");
	if (!v || !*v)
		return;
	char *end;
	long long w = strtoll(v, &end, 10), a = 0;
	if (*end == ',')
		a = strtoll(end + 1, NULL, 10);
	if (w > 0)
		nw_hook_wd_ns = w * 1000;
	if (a > 0)
		nw_hook_other_ns = a * 1000;
}

void nw_test_ring_delay_set(int64_t watchdog_ns, int64_t other_ns)
{
	pthread_once(&nw_hook_once, read_env);
	if (watchdog_ns >= 0)
		nw_hook_wd_ns = watchdog_ns;
	if (other_ns >= 0)
		nw_hook_other_ns = other_ns;
}

void nw_test_ring_delay(void)
{
	pthread_once(&nw_hook_once, read_env);
	int64_t ns = nw_hook_other_ns;
	if (nw_seg.hdr && nw_seg.hdr->watchdog_tid && nw_seg.hdr->watchdog_tid == (uint32_t)gettid())
		ns = nw_hook_wd_ns;
	if (ns <= 0)
		return;
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };
	while (nanosleep(&ts, &ts) != 0)
		;
}

int nw_test_graph_alloc_fails(void)
{
	const char *v = getenv("NCCLWATCH_TEST_GRAPH_ALLOC_FAIL");
	return v && v[0] == '1';
}
#endif
