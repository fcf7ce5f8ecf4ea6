/* hang_compute_gaps: a healthy job. 4 ranks all-reduce, then every rank
 * computes for a long time (it waits for the file named by argv[1] to
 * exist: the test creates it once it has looked), then all-reduces again
 * and ends. Nothing is pending during the gap: no hang. */
#include "hang.h"

static const char *gate;

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0);
	for (int step = 1; step <= 2; step++) {
		hang_allreduce(h, w, h->stream);
		hang_sync(h->stream);
		hang_say(h, "step %d done", step);
		if (step == 1) {
			hang_say(h, "computing");
			while (access(gate, F_OK))
				usleep(20000);
		}
	}
	NC(ncclCommDestroy(w));
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: hang-compute-gaps GATEFILE\n");
		return 2;
	}
	gate = argv[1];
	return hang_run(4, 1, body);
}
