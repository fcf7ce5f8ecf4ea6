/* bench_alone: what the watchdog's "am I the last thread?" check
 * (watchdog/alone.c, once per poll) costs, with T threads in the process:
 * ns per nw_alone() call (median of 9 runs of N calls), and that as a
 * share of one core at the default 100 ms poll. With 2 threads or fewer
 * it also reads /proc/self/stat; above, one stat(2).
 *
 * usage: bench-alone THREADS CALLS */
#include "../../watchdog/alone.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t done;

static void *idle(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&done);
	return NULL;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int threads = atoi(argv[1]), calls = atoi(argv[2]);
	if (threads < 1 || threads > 4096 || calls < 1)
		return 2;
	pthread_barrier_init(&done, NULL, (unsigned)threads);
	pthread_t *t = calloc((size_t)threads, sizeof(*t));
	for (int i = 1; i < threads; i++)
		if (pthread_create(&t[i], NULL, idle, NULL) != 0)
			return 1;
	double runs[9];
	int alone = 0;
	for (int r = 0; r < 9; r++) {
		double t0 = now_ns();
		for (int i = 0; i < calls; i++)
			alone += nw_alone();
		runs[r] = (now_ns() - t0) / calls;
	}
	qsort(runs, 9, sizeof(runs[0]), by_value);
	/* the share of one core at one call per 100 ms poll */
	printf("%d %.0f %.5f %d\n", threads, runs[4], runs[4] / 1e8 * 100, alone);
	pthread_barrier_wait(&done);
	for (int i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
