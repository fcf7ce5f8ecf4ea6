/* hang_compute_gaps: a healthy job. 4 ranks all-reduce, then every rank
 * computes for a long time (it waits for the file named by argv[1] to
 * exist: the test creates it once it has looked), then all-reduces again
 * and ends. Nothing is pending during the gap: no hang. With argv[2] = R
 * only rank R computes that long (a straggler): the others wait in
 * AllReduce #2 until it comes, then everybody ends normally; argv[2] may
 * list several ranks ("012"). With argv[3] = "busy" they compute on the
 * CPU (a spin) instead of polling with sleeps. */
#include "hang.h"

static const char *gate;
static const char *slow_ranks;   /* NULL: every rank */
static int spin;

static int slow(int rank)
{
	return !slow_ranks || strchr(slow_ranks, '0' + rank);
}

/* Work on the CPU until the gate opens: its thread runs, it does not block. */
static __attribute__((noinline)) void compute(void)
{
	volatile unsigned long x = 0;
	while (access(gate, F_OK)) {
		if (!spin) {
			usleep(20000);
			continue;
		}
		for (unsigned long i = 0; i < 20000000ul; i++)
			x += i;
	}
}

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0);
	for (int step = 1; step <= 2; step++) {
		hang_allreduce(h, w, h->stream);
		hang_sync(h->stream);
		hang_say(h, "step %d done", step);
		if (step == 1 && slow(h->rank)) {
			hang_say(h, "computing");
			compute();
		}
	}
	NC(ncclCommDestroy(w));
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4 || (argc == 4 && strcmp(argv[3], "busy"))) {
		fprintf(stderr, "usage: hang-compute-gaps GATEFILE [SLOWRANKS [busy]]\n");
		return 2;
	}
	gate = argv[1];
	if (argc >= 3)
		slow_ranks = argv[2];
	spin = argc == 4;
	return hang_run(4, 1, body);
}
