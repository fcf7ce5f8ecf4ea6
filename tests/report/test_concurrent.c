/* test-report-concurrent: the reader against live writers. Two threads
 * publish records into a MAP_SHARED segment by the protocol of segment.h,
 * wrapping a small ring many times, while the reader takes snapshots of the
 * same file with pread. Every snapshot must account for every ticket, give
 * records in ticket order from the newest ring_capacity tickets, and hold
 * only records whose every field is what the writer wrote for that ticket:
 * a torn or overwritten record must never be accepted. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "segwriter.h"
#include "../../report/segment_reader.h"

#define SNAPSHOTS 3000
#define WRITERS 2

static void *mem;
static atomic_int stop;

static void *writer(void *arg)
{
	(void)arg;
	struct nw_seg_header *h = mem;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint64_t t = atomic_fetch_add(&h->ring_head, 1);
		segw_publish_op(mem, t);
	}
	return NULL;
}

static int check_snapshot(const struct nw_segment *seg, uint32_t comms, int final)
{
	const struct nw_ring_stats *r = &seg->ring;
	uint64_t cap = seg->header.ring_capacity;
	uint64_t oldest = r->head > cap ? r->head - cap : 0;
	if (r->valid + r->torn + r->overwritten + r->unpublished != r->head) {
		fprintf(stderr, "FAIL: counts %llu+%llu+%llu+%llu != head %llu\n",
		        (unsigned long long)r->valid, (unsigned long long)r->torn,
		        (unsigned long long)r->overwritten, (unsigned long long)r->unpublished,
		        (unsigned long long)r->head);
		return 1;
	}
	if (seg->op_count != r->valid) {
		fprintf(stderr, "FAIL: %zu records returned, %llu counted valid\n", seg->op_count,
		        (unsigned long long)r->valid);
		return 1;
	}
	uint64_t prev = 0;
	for (size_t i = 0; i < seg->op_count; i++) {
		const struct nw_seg_op *op = &seg->ops[i];
		uint64_t t = nw_op_ticket(op);
		if (t < oldest || t >= r->head || (i && t <= prev)) {
			fprintf(stderr, "FAIL: ticket %llu out of order or range [%llu, %llu)\n",
			        (unsigned long long)t, (unsigned long long)oldest, (unsigned long long)r->head);
			return 1;
		}
		prev = t;
		struct nw_seg_op want;
		memset(&want, 0, sizeof want);
		segw_fill_op(&want, t, comms);
		want.commit = t + 1;
		if (memcmp(&want, op, sizeof want) != 0) {
			fprintf(stderr, "FAIL: record of ticket %llu accepted but torn (count %llu, seq %llu)\n",
			        (unsigned long long)t, (unsigned long long)op->count, (unsigned long long)op->seq);
			return 1;
		}
	}
	if (final && r->valid == 0) {
		fprintf(stderr, "FAIL: no valid record after the writers stopped\n");
		return 1;
	}
	return 0;
}

int main(void)
{
	char path[] = "/tmp/nw-concurrent-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	unlink(path); /* the reader uses the descriptor; nothing is left behind */
	struct segw_spec spec = { .comm_capacity = 4, .comms = 2, .peer_capacity = 4, .peers = 1,
	                          .ring_capacity = 64, .records = 0 };
	uint64_t size = segw_size(&spec);
	if (ftruncate(fd, (off_t)size) != 0 ||
	    (mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		perror("map");
		return 1;
	}
	segw_build(mem, &spec);

	pthread_t threads[WRITERS];
	for (int i = 0; i < WRITERS; i++)
		pthread_create(&threads[i], NULL, writer, NULL);

	struct nw_ring_stats total = { 0 };
	int failed = 0;
	for (int i = 0; i < SNAPSHOTS && !failed; i++) {
		struct nw_segment seg;
		struct nw_read_error err;
		if (nw_segment_read_fd(fd, "concurrent.seg", 0, &seg, &err) != NW_READ_OK) {
			fprintf(stderr, "FAIL: %s\n", err.message);
			failed = 1;
			break;
		}
		failed = check_snapshot(&seg, spec.comms, 0);
		total.valid += seg.ring.valid;
		total.torn += seg.ring.torn;
		total.unpublished += seg.ring.unpublished;
		nw_segment_free(&seg);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(threads[i], NULL);

	if (!failed) {
		struct nw_segment seg;
		struct nw_read_error err;
		if (nw_segment_read_fd(fd, "concurrent.seg", 0, &seg, &err) != NW_READ_OK) {
			fprintf(stderr, "FAIL: %s\n", err.message);
			failed = 1;
		} else {
			failed = check_snapshot(&seg, spec.comms, 1);
			printf("final: head %llu, valid %llu\n", (unsigned long long)seg.ring.head,
			       (unsigned long long)seg.ring.valid);
			nw_segment_free(&seg);
		}
	}
	printf("%d snapshots: %llu valid, %llu torn, %llu unpublished records seen\n", SNAPSHOTS,
	       (unsigned long long)total.valid, (unsigned long long)total.torn,
	       (unsigned long long)total.unpublished);
	munmap(mem, size);
	close(fd);
	return failed;
}
