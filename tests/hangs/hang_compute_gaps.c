/* hang_compute_gaps: a healthy job. 4 ranks all-reduce, then every rank
 * computes for a long time (it waits for the file named by argv[1] to
 * exist: the test creates it once it has looked), then all-reduces again
 * and ends. Nothing is pending during the gap: no hang. With argv[2] = R
 * only rank R computes that long (a straggler): the others wait in
 * AllReduce #2 until it comes, then everybody ends normally. */
#include "hang.h"

static const char *gate;
static int slow_rank = -1;

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0);
	for (int step = 1; step <= 2; step++) {
		hang_allreduce(h, w, h->stream);
		hang_sync(h->stream);
		hang_say(h, "step %d done", step);
		if (step == 1 && (slow_rank < 0 || slow_rank == h->rank)) {
			hang_say(h, "computing");
			while (access(gate, F_OK))
				usleep(20000);
		}
	}
	NC(ncclCommDestroy(w));
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: hang-compute-gaps GATEFILE [SLOWRANK]\n");
		return 2;
	}
	gate = argv[1];
	if (argc == 3)
		slow_rank = atoi(argv[2]);
	return hang_run(4, 1, body);
}
