/* bench-pickle FILE [BATCHES] [PER_BATCH]: the pickle reader alone
 * (report/sources/fr/pickle.c) on one dump, parsed again and again with
 * nw_pickle_reparse as the loader does (its workspace reused). Prints the
 * microseconds of CPU time per parse: the least, the median and the most
 * over the batches. CPU time of this thread, not wall time: on a loaded
 * machine the figure then moves by a few percent, not by 2x. */
#include "../../report/sources/fr/pickle.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench-pickle FILE [BATCHES] [PER_BATCH]\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	static uint8_t buf[1 << 24];
	size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
	if (f)
		fclose(f);
	if (!n) {
		fprintf(stderr, "bench-pickle: %s: cannot read\n", argv[1]);
		return 2;
	}
	int batches = argc > 2 ? atoi(argv[2]) : 41, per = argc > 3 ? atoi(argv[3]) : 200;
	if (batches < 1 || per < 1) {
		fprintf(stderr, "bench-pickle: BATCHES and PER_BATCH are counts\n");
		return 2;
	}
	struct nw_pickle p = { 0 };
	char err[NW_PICKLE_ERR_LEN];
	for (int i = 0; i < 200; i++)              /* warm: caches, the arena's blocks */
		if (nw_pickle_reparse(buf, n, &p, err)) {
			fprintf(stderr, "bench-pickle: %s: %s\n", argv[1], err);
			return 1;
		}
	double *us = malloc((size_t)batches * sizeof *us);
	if (!us)
		return 1;
	for (int b = 0; b < batches; b++) {
		double t0 = cpu_s();
		for (int i = 0; i < per; i++)
			nw_pickle_reparse(buf, n, &p, err);
		us[b] = (cpu_s() - t0) / per * 1e6;
	}
	qsort(us, (size_t)batches, sizeof *us, by_value);
	printf("%.1f %.1f %.1f\n", us[0], us[batches / 2], us[batches - 1]);
	free(us);
	nw_pickle_free(&p);
	return 0;
}
