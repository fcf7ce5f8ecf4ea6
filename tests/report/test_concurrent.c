/* test-report-concurrent: the reader against live writers. Two threads
 * publish records (and their per-op stacks) into a MAP_SHARED segment by
 * the protocol of segment.h, wrapping a small ring many times, while a
 * third rewrites the stack area's capture under its seqlock, and the reader
 * takes snapshots of the same file with pread. Every snapshot must account
 * for every ticket, give records in ticket order from the newest
 * ring_capacity tickets, and hold only records whose every field, and
 * whose per-op stack, is what the writer wrote for that ticket: a torn or
 * overwritten record must never be accepted. A capture it returns must be
 * one whole generation of the capturer, never a mix. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "segwriter.h"
#include "../../report/sources/segment_reader.h"

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

/* Generation g of the capture: g % 4 + 1 threads, each with tid g and
 * g % 9 frames of ip g (no symbol, no module); capture_ns g, request 0. */
static void *capturer(void *arg)
{
	(void)arg;
	struct nw_seg_stack_header *a = segw_stack_area(mem);
	struct nw_seg_thread *th = (struct nw_seg_thread *)((char *)a + a->thread_offset);
	struct nw_seg_frame *fr = (struct nw_seg_frame *)((char *)a + a->frame_offset);
	for (uint32_t g = 1; !atomic_load_explicit(&stop, memory_order_relaxed); g++) {
		uint32_t seq = atomic_load_explicit(&a->seq, memory_order_relaxed);
		atomic_store_explicit(&a->seq, seq + 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_release);
		uint32_t n = g % SEGW_STACK_THREADS + 1;
		for (uint32_t i = 0; i < n; i++) {
			th[i].tid = g;
			th[i].flags = 0;
			th[i].nframes = g % (SEGW_STACK_FRAMES + 1);
			for (uint32_t k = 0; k < th[i].nframes; k++) {
				struct nw_seg_frame *f = &fr[i * SEGW_STACK_FRAMES + k];
				memset(f, 0, sizeof *f);
				f->ip = g;
			}
		}
		a->thread_count = n;
		a->capture_ns = g;
		a->captures = g;
		a->request_id = 0;
		atomic_store_explicit(&a->seq, seq + 2, memory_order_release);
		struct timespec pause = { 0, 20000 };
		nanosleep(&pause, NULL);
	}
	return NULL;
}

static unsigned long captured_seen, being_written_seen;

static int check_stacks(const struct nw_segment *seg)
{
	if (seg->stack_state == NW_STACKS_BEING_WRITTEN) {
		being_written_seen++;
		return 0;
	}
	if (seg->stack_state != NW_STACKS_CAPTURED || !seg->stack) {
		fprintf(stderr, "FAIL: stack state %d\n", seg->stack_state);
		return 1;
	}
	captured_seen++;
	const struct nw_seg_stack_header *a = seg->stack;
	if (a->request_id == 7)
		return 0; /* segw_build's capture, before the capturer's first */
	uint64_t g = a->capture_ns;
	if (a->captures != g || a->thread_count != g % SEGW_STACK_THREADS + 1) {
		fprintf(stderr, "FAIL: capture %llu mixed: captures %llu, %u threads\n",
		        (unsigned long long)g, (unsigned long long)a->captures, a->thread_count);
		return 1;
	}
	for (uint32_t i = 0; i < a->thread_count; i++) {
		const struct nw_seg_thread *t = nw_stack_thread(seg, i);
		uint32_t n;
		const struct nw_seg_frame *f = nw_stack_frames(seg, i, &n);
		if (!t || t->tid != g || n != g % (SEGW_STACK_FRAMES + 1) || (n && !f)) {
			fprintf(stderr, "FAIL: capture %llu mixed: thread %u tid %u, %u frames\n",
			        (unsigned long long)g, i, t ? t->tid : 0, n);
			return 1;
		}
		for (uint32_t k = 0; k < n; k++)
			if (f[k].ip != g) {
				fprintf(stderr, "FAIL: capture %llu mixed: thread %u frame %u ip %llu\n",
				        (unsigned long long)g, i, k, (unsigned long long)f[k].ip);
				return 1;
			}
	}
	return 0;
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
		uint64_t ips[SEGW_OPSTACK_DEPTH];
		uint32_t depth;
		segw_opstack_of(t, ips);
		const uint64_t *got = nw_opstack(seg, t, &depth);
		uint32_t want_depth = ips[0] ? SEGW_OPSTACK_DEPTH : 0;
		if (depth != want_depth || (depth && memcmp(got, ips, sizeof ips) != 0)) {
			fprintf(stderr, "FAIL: the op stack of ticket %llu is not its own (depth %u, ip[3] %#llx)\n",
			        (unsigned long long)t, depth, got ? (unsigned long long)got[3] : 0ull);
			return 1;
		}
	}
	if (check_stacks(seg))
		return 1;
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
	                          .ring_capacity = 64, .records = 0, .version_minor = 1, .v11 = 1,
	                          .stacks = 1, .opstacks = 1 };
	uint64_t size = segw_size(&spec);
	if (ftruncate(fd, (off_t)size) != 0 ||
	    (mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		perror("map");
		return 1;
	}
	segw_build(mem, &spec);

	pthread_t threads[WRITERS], capture_thread;
	for (int i = 0; i < WRITERS; i++)
		pthread_create(&threads[i], NULL, writer, NULL);
	pthread_create(&capture_thread, NULL, capturer, NULL);
	/* The snapshots race with writers at work: wait until they wrapped the
	 * ring a few times (on a loaded machine the reader could otherwise take
	 * all its snapshots before a writer thread first runs). */
	struct nw_seg_header *hdr = mem;
	for (int waited = 0; atomic_load(&hdr->ring_head) < 4 * spec.ring_capacity; waited++) {
		if (waited == 60000) {
			fprintf(stderr, "FAIL: the writers wrote %llu records in 60 s\n",
			        (unsigned long long)atomic_load(&hdr->ring_head));
			return 1;
		}
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}

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
	pthread_join(capture_thread, NULL);

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
	printf("stack area: %lu captures returned, %lu being written\n", captured_seen,
	       being_written_seen);
	if (!failed && captured_seen == 0) {
		fprintf(stderr, "FAIL: no consistent capture in %d snapshots\n", SNAPSHOTS);
		failed = 1;
	}
	munmap(mem, size);
	close(fd);
	return failed;
}
