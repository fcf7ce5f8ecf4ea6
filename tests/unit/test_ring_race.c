/* test-unit-ring-race: updates in place against slot reuse (interpose/ring.h).
 *
 * 16 writer threads publish records into a file-backed segment by the
 * interposer's own code (nw_ring_claim, nw_ring_publish) and set each one's
 * result after it (nw_ring_set_result); 2 updater threads play the
 * watchdog, moving recently published records through the states of their
 * lap; and 2 readers check every record they can see: one in process
 * (nw_ring_find, copy, check the ticket again), one through the CLI's
 * reader (nw_segment_read_fd on the file). Every lookup-then-write is
 * delayed by the test build's hook (NW_TEST_HOOKS), so slots are reused
 * while updaters sleep on them. Rings 16, 256 and 4096.
 *
 * A record of ticket t may only hold what t's own writer and updaters
 * wrote: identity seq = t, count = 3t + 1, comm_id = ~t; result 0 or
 * R(t); start_ns 0 or S(t); end_ns 0 or E(t); cuda_error 0 or C(t); state
 * ENQUEUED, or STARTED/COMPLETED for an even lap (t / capacity), FAILED for
 * an odd one (a neighbouring lap's update is then the wrong state). Any
 * other value is another ticket's update: "wrong", which must stay 0.
 *
 *   test-unit-ring-race [--unsafe] [OPS_PER_WRITER [DELAY_NS]]
 *
 * Last, and alone with --unsafe, ring 16 again with updaters that look up,
 * sleep, then store without holding (the protocol before 1.3): there the
 * checker must see wrong records, or it would prove nothing.
 *
 * Prints "ring-race ring=N: key=value ..." per ring; exit 0 pass, 1 fail. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../../interpose/ring.h"
#include "../report/segwriter.h"
#include "ring_race.h"

struct nw_segment nw_seg;             /* what interpose/segment_file.c defines */

#define WRITERS 16
#define UPDATERS 2
#define RECENT 1024                   /* tickets + 1 recently published, for the updaters */

static uint64_t ops_per_writer = 4000;
static int unsafe;
static char path[64];
static atomic_int writers_left;
static atomic_ullong recent[RECENT];
static atomic_ullong wrong, checked, file_checked, snapshots, held, lost, dropped;

static uint32_t R(uint64_t t) { return (uint32_t)(t % 1000000) + 1; }
static uint64_t S(uint64_t t) { return 3 * t + 7; }
static uint64_t E(uint64_t t) { return 5 * t + 11; }
static int32_t C(uint64_t t) { return (int32_t)(t % 900) + 1; }

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* 1 when op (a copy, or the live record) holds nothing but ticket t's. */
static int own(const struct nw_seg_op *op, uint64_t t, uint32_t st, int32_t result, uint64_t start,
               uint64_t end, int32_t cerr)
{
	uint64_t lap = t / (nw_seg.ring_mask + 1);
	int ok = op->seq == t && op->count == 3 * t + 1 && op->comm_id == ~t;
	ok &= result == 0 || (uint32_t)result == R(t);
	ok &= start == 0 || start == S(t);
	ok &= end == 0 || end == E(t);
	ok &= cerr == 0 || cerr == C(t);
	if (st != NW_ST_ENQUEUED)
		ok &= lap % 2 ? st == NW_ST_FAILED : st == NW_ST_STARTED || st == NW_ST_COMPLETED;
	if (!ok && atomic_fetch_add(&wrong, 1) < 5)
		fprintf(stderr, "ticket %llu holds seq=%llu count=%llu state=%u result=%d start=%llu "
		        "end=%llu cuda_error=%d\n", (unsigned long long)t, (unsigned long long)op->seq,
		        (unsigned long long)op->count, st, result, (unsigned long long)start,
		        (unsigned long long)end, cerr);
	return ok;
}

static void *writer(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < ops_per_writer; i++) {
		uint64_t t;
		struct nw_seg_op *op = nw_ring_claim(&t);
		if (!op) {
			atomic_fetch_add(&dropped, 1);
			continue;
		}
		op->comm_id = ~t;
		op->seq = t;
		op->count = 3 * t + 1;
		atomic_store_explicit(&op->start_ns, 0, memory_order_relaxed);
		atomic_store_explicit(&op->end_ns, 0, memory_order_relaxed);
		atomic_store_explicit(&op->state, NW_ST_ENQUEUED, memory_order_relaxed);
		atomic_store_explicit(&op->result, 0, memory_order_relaxed);
		atomic_store_explicit(&op->cuda_error, 0, memory_order_relaxed);
		nw_ring_publish(op, t);
		atomic_store_explicit(&recent[t % RECENT], t + 1, memory_order_relaxed);
		nw_ring_set_result(t + 1, (int32_t)R(t));
	}
	atomic_fetch_sub(&writers_left, 1);
	return NULL;
}

/* The watchdog's part: an even lap starts then completes, an odd one fails. */
static void update(struct nw_seg_op *op, uint64_t t)
{
	uint64_t lap = t / (nw_seg.ring_mask + 1);
	if (lap % 2 == 0) {
		atomic_store_explicit(&op->start_ns, S(t), memory_order_relaxed);
		atomic_store_explicit(&op->state, NW_ST_STARTED, memory_order_release);
		atomic_store_explicit(&op->end_ns, E(t), memory_order_relaxed);
		atomic_store_explicit(&op->state, NW_ST_COMPLETED, memory_order_release);
	} else {
		atomic_store_explicit(&op->cuda_error, C(t), memory_order_relaxed);
		atomic_store_explicit(&op->end_ns, E(t), memory_order_relaxed);
		atomic_store_explicit(&op->state, NW_ST_FAILED, memory_order_release);
	}
}

static void *updater(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);
	while (atomic_load(&writers_left) > 0) {
		uint64_t t1 = atomic_load_explicit(&recent[rnd(&seed) % RECENT], memory_order_relaxed);
		if (!t1)
			continue;
		struct nw_seg_op *op;
		if (unsafe) {
			op = nw_ring_find(t1);      /* the old protocol: look up, (sleep), store */
			if (op) {
				NW_TEST_RING_DELAY();
				update(op, t1 - 1);
			}
		} else if ((op = nw_ring_hold(t1))) {
			update(op, t1 - 1);
			nw_ring_release(op);
		}
		atomic_fetch_add(op ? &held : &lost, 1);
	}
	return NULL;
}

static void *reader(void *arg)
{
	uint64_t seed = 0x2545f4914f6cdd1dull + (uintptr_t)arg;
	while (atomic_load(&writers_left) > 0) {
		uint64_t head = atomic_load(&nw_seg.hdr->ring_head);
		uint64_t cap = nw_seg.ring_mask + 1;
		if (!head)
			continue;
		uint64_t t = head - 1 - rnd(&seed) % (head < cap ? head : cap);
		struct nw_seg_op *op = nw_ring_find(t + 1);
		if (!op)
			continue;
		struct nw_seg_op copy;
		memcpy(&copy, op, sizeof copy);  /* racy by design: validated below */
		atomic_thread_fence(memory_order_acquire);
		if (nw_seg_commit_ticket1(atomic_load(&op->commit)) != t + 1)
			continue;                   /* reused while copied */
		own(&copy, t, copy.state, copy.result, copy.start_ns, copy.end_ns, copy.cuda_error);
		atomic_fetch_add(&checked, 1);
	}
	return NULL;
}

static void check_copy(const struct nw_seg_op *op, uint64_t t)
{
	own(op, t, op->state, op->result, op->start_ns, op->end_ns, op->cuda_error);
}

static void *file_reader(void *arg)
{
	(void)arg;
	while (atomic_load(&writers_left) > 0) {
		long n = ring_race_snapshot(path, check_copy);
		if (n < 0) {
			atomic_fetch_add(&wrong, 1);
			return NULL;
		}
		atomic_fetch_add(&file_checked, (uint64_t)n);
		atomic_fetch_add(&snapshots, 1);
	}
	return NULL;
}

static int run(uint32_t cap)
{
	struct segw_spec spec = { .comm_capacity = 4, .comms = 1, .peer_capacity = 4, .peers = 0,
	                          .ring_capacity = cap, .records = 0 };
	uint64_t len = segw_size(&spec);
	snprintf(path, sizeof path, "/tmp/nw-ring-race.%d.seg", (int)getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)len) != 0) {
		perror(path);
		return 1;
	}
	void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	segw_build(mem, &spec);
	nw_seg.hdr = mem;
	nw_seg.ring = (struct nw_seg_op *)((char *)mem + nw_seg.hdr->ring_offset);
	nw_seg.ring_mask = cap - 1;
	atomic_store(&wrong, 0); atomic_store(&checked, 0); atomic_store(&file_checked, 0);
	atomic_store(&snapshots, 0); atomic_store(&held, 0); atomic_store(&lost, 0);
	atomic_store(&dropped, 0);
	for (int i = 0; i < RECENT; i++)
		atomic_store(&recent[i], 0);
	atomic_store(&writers_left, WRITERS);

	pthread_t w[WRITERS], u[UPDATERS], r[2];
	for (uintptr_t i = 0; i < WRITERS; i++)
		pthread_create(&w[i], NULL, writer, (void *)i);
	for (uintptr_t i = 0; i < UPDATERS; i++)
		pthread_create(&u[i], NULL, updater, (void *)i);
	pthread_create(&r[0], NULL, reader, NULL);
	pthread_create(&r[1], NULL, file_reader, NULL);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < UPDATERS; i++)
		pthread_join(u[i], NULL);
	pthread_join(r[0], NULL);
	pthread_join(r[1], NULL);

	/* Quiet now: every record left must be its own ticket's, none held. */
	uint64_t head = nw_seg.hdr->ring_head, still_held = 0;
	for (uint64_t t = head > cap ? head - cap : 0; t < head; t++) {
		struct nw_seg_op *op = &nw_seg.ring[t & nw_seg.ring_mask];
		uint64_t c = atomic_load(&op->commit);
		still_held += (c & NW_SEG_COMMIT_UPDATERS) != 0;
		if (nw_seg_commit_ticket1(c) == t + 1) {
			own(op, t, op->state, op->result, op->start_ns, op->end_ns, op->cuda_error);
			checked++;
		}
	}
	printf("ring-race ring=%u: tickets=%llu dropped=%llu updates=%llu lost=%llu checked=%llu "
	       "file_checked=%llu snapshots=%llu still_held=%llu wrong=%llu\n", cap,
	       (unsigned long long)head, (unsigned long long)dropped, (unsigned long long)held,
	       (unsigned long long)lost, (unsigned long long)checked, (unsigned long long)file_checked,
	       (unsigned long long)snapshots, (unsigned long long)still_held,
	       (unsigned long long)wrong);
	munmap(mem, len);
	unlink(path);
	int rc = 0;
	if (unsafe)
		return wrong == 0;              /* the checker must catch the old protocol */
	if (wrong || still_held) {
		fprintf(stderr, "FAIL: ring %u: %llu wrong records, %llu still held\n", cap,
		        (unsigned long long)wrong, (unsigned long long)still_held);
		rc = 1;
	}
	if (!checked || !file_checked || !held) {
		fprintf(stderr, "FAIL: ring %u: nothing was checked or updated\n", cap);
		rc = 1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	int64_t delay_ns = 20000;
	int a = 1;
	if (a < argc && strcmp(argv[a], "--unsafe") == 0) {
		unsafe = 1;
		a++;
	}
	if (a < argc)
		ops_per_writer = strtoull(argv[a++], NULL, 10);
	if (a < argc)
		delay_ns = strtoll(argv[a++], NULL, 10);
	nw_test_ring_delay_set(0, delay_ns);
	int rc = 0;
	if (!unsafe) {
		static const uint32_t rings[] = { 16, 256, 4096 };
		for (size_t i = 0; i < sizeof rings / sizeof rings[0]; i++)
			rc |= run(rings[i]);
	}
	/* The checker against the old protocol, on the small ring where its
	 * stale stores land: it must see them, or it proves nothing above. */
	unsafe = 1;
	if (run(16)) {
		fprintf(stderr, "FAIL: unsafe updates: the checker saw no wrong record\n");
		rc = 1;
	} else {
		printf("unsafe updates (the protocol before 1.3): caught\n");
	}
	if (!rc)
		printf("ok\n");
	return rc;
}
