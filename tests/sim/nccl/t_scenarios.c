/* Behaviours of the simulated NCCL seen from real processes, one scenario
 * per run: nccl-scenarios SCENARIO NRANKS [SEED]. Exit 0 when the scenario
 * behaved as promised (hangs are observed through events that stay
 * NOT_READY, then ended with ncclCommAbort or by killing the rank).
 * SEED != 0 makes the world id (and so its key) deterministic; `key`
 * prints the key of that id.
 */
#include "t_lib.h"

#include <dirent.h>
#include <stdint.h>

static const char *scenario;
static unsigned seed;

static float *fbuf(size_t n, float v)
{
	float *p = malloc((n ? n : 1) * sizeof *p);
	CHECK(p, "out of memory");
	for (size_t i = 0; i < n; i++) p[i] = v;
	return p;
}

static ncclComm_t init_world(int rank, int n, ncclUniqueId id)
{
	ncclComm_t c;
	NCCL_OK(ncclCommInitRank(&c, n, id, rank));
	return c;
}

static void allreduce_check(ncclComm_t c, CUstream s, size_t count, float want)
{
	int n, me;
	NCCL_OK(ncclCommCount(c, &n));
	NCCL_OK(ncclCommUserRank(c, &me));
	float *b = fbuf(count, 1);
	NCCL_OK(ncclAllReduce(b, b, count, ncclFloat, ncclSum, c, s));
	CU_OK(cuStreamSynchronize(s));
	for (size_t i = 0; i < count; i++) CHECK(b[i] == want, "allreduce: [%zu] = %g, want %g", i, b[i], want);
	free(b);
}

/* ---- groups and send/recv ---- */
static void sc_group(int rank, int n, ncclUniqueId id, CUstream s)
{
	ncclComm_t c = init_world(rank, n, id);
	size_t count = 50000;  /* several staging chunks per message */
	int next = (rank + 1) % n, prev = (rank + n - 1) % n;
	float *sb = fbuf(count, (float)rank), *rb = fbuf(count, -1);
	/* a ring exchange: every rank sends before it receives; grouped, so fine */
	NCCL_OK(ncclGroupStart());
	NCCL_OK(ncclSend(sb, count, ncclFloat, next, c, s));
	NCCL_OK(ncclRecv(rb, count, ncclFloat, prev, c, s));
	NCCL_OK(ncclGroupEnd());
	CU_OK(cuStreamSynchronize(s));
	for (size_t i = 0; i < count; i++) CHECK(rb[i] == (float)prev, "ring recv [%zu] = %g, want %d", i, rb[i], prev);
	/* all-to-all by send/recv in one (nested) group, including to self */
	float *all_s = fbuf((n + 3) * 10, 0), *all_r = fbuf((n + 3) * 10, -1);
	for (int p = 0; p < n; p++) for (int i = 0; i < 10; i++) all_s[p * 10 + i] = rank * 100 + p;
	NCCL_OK(ncclGroupStart());
	NCCL_OK(ncclGroupStart());
	for (int p = 0; p < n; p++) NCCL_OK(ncclSend(all_s + p * 10, 10, ncclFloat, p, c, s));
	NCCL_OK(ncclGroupEnd());
	for (int p = 0; p < n; p++) NCCL_OK(ncclRecv(all_r + p * 10, 10, ncclFloat, p, c, s));
	NCCL_OK(ncclGroupEnd());
	CU_OK(cuStreamSynchronize(s));
	for (int p = 0; p < n; p++)
		for (int i = 0; i < 10; i++)
			CHECK(all_r[p * 10 + i] == p * 100 + rank, "a2a from %d: %g", p, all_r[p * 10 + i]);
	/* several messages to the same peer keep their order */
	NCCL_OK(ncclGroupStart());
	for (int k = 0; k < 3; k++) {
		for (size_t i = 0; i < 10; i++) all_s[k * 10 + i] = rank * 10 + k;
		NCCL_OK(ncclSend(all_s + k * 10, 10, ncclFloat, next, c, s));
		NCCL_OK(ncclRecv(all_r + k * 10, 10, ncclFloat, prev, c, s));
	}
	NCCL_OK(ncclGroupEnd());
	CU_OK(cuStreamSynchronize(s));
	for (int k = 0; k < 3; k++) CHECK(all_r[k * 10] == prev * 10 + k, "message %d from %d: %g", k, prev, all_r[k * 10]);
	/* nothing is queued before the outermost GroupEnd */
	NCCL_OK(ncclGroupStart());
	NCCL_OK(ncclAllReduce(sb, rb, 4, ncclFloat, ncclSum, c, s));
	CUevent ev;
	CU_OK(cuEventCreate(&ev, 0));
	CU_OK(cuEventRecord(ev, s));
	CU_OK(cuEventSynchronize(ev));  /* completes: the allreduce is not on the stream yet */
	NCCL_OK(ncclGroupEnd());
	CU_OK(cuStreamSynchronize(s));
	CHECK(rb[0] == (float)(n * (n - 1) / 2), "grouped allreduce: %g", rb[0]);
	/* two collectives in one group, then ncclGroupSimulateEnd launches nothing */
	float *x = fbuf(4, 1), *y = fbuf(4, 2);
	NCCL_OK(ncclGroupStart());
	NCCL_OK(ncclAllReduce(x, x, 4, ncclFloat, ncclSum, c, s));
	NCCL_OK(ncclAllReduce(y, y, 4, ncclFloat, ncclMax, c, s));
	NCCL_OK(ncclGroupEnd());
	ncclSimInfo_t si = NCCL_SIM_INFO_INITIALIZER;
	NCCL_OK(ncclGroupStart());
	NCCL_OK(ncclAllReduce(x, x, 4, ncclFloat, ncclSum, c, s));
	NCCL_OK(ncclGroupSimulateEnd(&si));
	CHECK(si.estimatedTime > 0, "simInfo.estimatedTime = %g", si.estimatedTime);
	CU_OK(cuStreamSynchronize(s));
	CHECK(x[0] == n && y[0] == 2, "grouped collectives: %g %g (a simulated group must not run)", x[0], y[0]);
	allreduce_check(c, s, 5, n);  /* and the numbering stayed aligned */
	CHECK(ncclGroupEnd() == ncclInvalidUsage, "GroupEnd without GroupStart must be ncclInvalidUsage");
	NCCL_OK(ncclCommDestroy(c));
}

/* Ungrouped: both ranks send first. Blocking sends larger than NCCL's
 * buffer (16 MiB > NCCL_BUFFSIZE's 4 MiB) without receives hang, as in
 * NCCL; ncclCommAbort ends them and the stream goes on. */
static void sc_p2p_deadlock(int rank, int n, ncclUniqueId id, CUstream s)
{
	ncclComm_t c = init_world(rank, n, id);
	int peer = (rank + 1) % n, from = (rank + n - 1) % n;
	size_t count = 4u << 20;
	float *sb = fbuf(count, rank), *rb = fbuf(count, -1);
	NCCL_OK(ncclSend(sb, count, ncclFloat, peer, c, s));
	NCCL_OK(ncclRecv(rb, count, ncclFloat, from, c, s));
	CUevent ev = t_expect_stuck(s, 1500, "ungrouped send/send");
	NCCL_OK(ncclCommAbort(c));
	CU_OK(cuEventSynchronize(ev));  /* abort unblocked the stream */
	CHECK(rb[0] == -1, "the aborted receive must not have data (%g)", rb[0]);
	printf("rank %d: deadlock seen, abort ended it\n", rank);
}

/* The handshake of the eager scenarios: an AllReduce on a stream of its
 * own that the peer enters only after what it did before. */
static void handshake(ncclComm_t c, CUstream s2)
{
	float x = 1;
	NCCL_OK(ncclAllReduce(&x, &x, 1, ncclFloat, ncclSum, c, s2));
	CU_OK(cuStreamSynchronize(s2));
}

/* Eager sends (2 ranks), as on real NCCL: a send no larger than the buffer
 * (NCCL_BUFFSIZE) completes before its receive is posted (rank 1 posts it
 * only after a handshake rank 0 enters once its send completed), and the
 * receive then gets the data; one such message is buffered at a time (a
 * second waits until the first was received); a 16 MiB send waits for its
 * receive. */
static void sc_p2p_eager(int rank, int n, ncclUniqueId id, CUstream s)
{
	CHECK(n == 2, "p2p-eager needs 2 ranks");
	ncclComm_t c = init_world(rank, n, id);
	CUstream s2;
	CU_OK(cuStreamCreate(&s2, 0));
	size_t small = 1024, big = 4u << 20;
	float *a = fbuf(small, 1), *b = fbuf(small, 2), *d = fbuf(small, 3), *e = fbuf(big, 4);
	if (rank == 0) {
		NCCL_OK(ncclSend(a, small, ncclFloat, 1, c, s));
		CU_OK(cuStreamSynchronize(s));  /* eager: no receive posted yet */
		printf("rank 0: 4 KiB send completed without its receive\n");
		handshake(c, s2);                /* 1: rank 1 may receive the first */
		NCCL_OK(ncclSend(b, small, ncclFloat, 1, c, s));
		CUevent e2;
		CU_OK(cuEventCreate(&e2, 0));
		CU_OK(cuEventRecord(e2, s));
		NCCL_OK(ncclSend(d, small, ncclFloat, 1, c, s));
		CU_OK(cuEventSynchronize(e2));  /* the buffer was free again once rank 1 took the first */
		t_expect_stuck(s, 1000, "a second eager send while the buffer holds one");
		printf("rank 0: the third send waits while the second is buffered\n");
		handshake(c, s2);                /* 2: rank 1 receives both */
		CU_OK(cuStreamSynchronize(s));
		NCCL_OK(ncclSend(e, big, ncclFloat, 1, c, s));
		t_expect_stuck(s, 1000, "a 16 MiB send without its receive");
		printf("rank 0: 16 MiB send waits for its receive\n");
		handshake(c, s2);                /* 3: rank 1 receives it */
		CU_OK(cuStreamSynchronize(s));
	} else {
		float *r = fbuf(big, -1);
		handshake(c, s2);
		NCCL_OK(ncclRecv(r, small, ncclFloat, 0, c, s));
		CU_OK(cuStreamSynchronize(s));
		CHECK(r[0] == 1 && r[small - 1] == 1, "first message: %g %g", r[0], r[small - 1]);
		handshake(c, s2);
		NCCL_OK(ncclRecv(r, small, ncclFloat, 0, c, s));
		CU_OK(cuStreamSynchronize(s));
		CHECK(r[0] == 2 && r[small - 1] == 2, "second message: %g %g", r[0], r[small - 1]);
		NCCL_OK(ncclRecv(r, small, ncclFloat, 0, c, s));
		CU_OK(cuStreamSynchronize(s));
		CHECK(r[0] == 3 && r[small - 1] == 3, "third message: %g %g", r[0], r[small - 1]);
		handshake(c, s2);
		NCCL_OK(ncclRecv(r, big, ncclFloat, 0, c, s));
		CU_OK(cuStreamSynchronize(s));
		CHECK(r[0] == 4 && r[big - 1] == 4, "16 MiB message: %g %g", r[0], r[big - 1]);
		free(r);
		printf("rank 1: every message arrived whole\n");
	}
	NCCL_OK(ncclCommDestroy(c));
}

/* No eager send (NCCL_PROTO=Simple, or NCCL_BUFFSIZE below 4 KiB): a 4 KiB
 * send waits for its receive, which rank 1 posts after a handshake. */
static void sc_p2p_rendezvous(int rank, int n, ncclUniqueId id, CUstream s)
{
	CHECK(n == 2, "p2p-rendezvous needs 2 ranks");
	ncclComm_t c = init_world(rank, n, id);
	CUstream s2;
	CU_OK(cuStreamCreate(&s2, 0));
	float *a = fbuf(1024, 5);
	if (rank == 0) {
		NCCL_OK(ncclSend(a, 1024, ncclFloat, 1, c, s));
		t_expect_stuck(s, 1000, "a 4 KiB send that may not go eagerly");
		printf("rank 0: 4 KiB send waits for its receive\n");
		handshake(c, s2);
		CU_OK(cuStreamSynchronize(s));
	} else {
		float *r = fbuf(1024, -1);
		handshake(c, s2);
		NCCL_OK(ncclRecv(r, 1024, ncclFloat, 0, c, s));
		CU_OK(cuStreamSynchronize(s));
		CHECK(r[0] == 5 && r[1023] == 5, "message: %g %g", r[0], r[1023]);
		printf("rank 1: the message arrived\n");
	}
	NCCL_OK(ncclCommDestroy(c));
}

/* ---- split and init variants ---- */
static void sc_split(int rank, int n, ncclUniqueId id, CUstream s)
{
	ncclComm_t w = init_world(rank, n, id), c, all, none;
	/* colors by parity, keys reverse the order */
	NCCL_OK(ncclCommSplit(w, rank % 2, -rank, &c, NULL));
	int cn, cr, members = (n + 1 - rank % 2) / 2;
	NCCL_OK(ncclCommCount(c, &cn));
	NCCL_OK(ncclCommUserRank(c, &cr));
	CHECK(cn == members, "split count %d, want %d", cn, members);
	CHECK(cr == members - 1 - rank / 2, "split rank %d, want %d (keys reverse the order)", cr, members - 1 - rank / 2);
	float *b = fbuf(3, (float)rank);
	NCCL_OK(ncclAllReduce(b, b, 3, ncclFloat, ncclSum, c, s));
	CU_OK(cuStreamSynchronize(s));
	float want = 0;
	for (int r = rank % 2; r < n; r += 2) want += r;
	CHECK(b[0] == want, "allreduce on the split comm: %g, want %g", b[0], want);
	/* equal keys: old rank order; rank 0 opts out with NOCOLOR */
	NCCL_OK(ncclCommSplit(w, rank == 0 ? NCCL_SPLIT_NOCOLOR : 7, 0, &all, NULL));
	if (rank == 0) CHECK(all == NULL, "NCCL_SPLIT_NOCOLOR must give NULL");
	else {
		NCCL_OK(ncclCommUserRank(all, &cr));
		NCCL_OK(ncclCommCount(all, &cn));
		CHECK(cr == rank - 1 && cn == n - 1, "split with equal keys: rank %d of %d", cr, cn);
		allreduce_check(all, s, 7, n - 1);
		NCCL_OK(ncclCommDestroy(all));
	}
	NCCL_OK(ncclCommSplit(w, NCCL_SPLIT_NOCOLOR, 0, &none, NULL));
	CHECK(none == NULL, "all NOCOLOR gives NULL");
	CHECK(ncclCommSplit(w, -5, 0, &none, NULL) == ncclInvalidArgument, "a negative color is invalid");
	allreduce_check(w, s, 100000, n);  /* the parent still works */
	NCCL_OK(ncclCommDestroy(c));
	NCCL_OK(ncclCommDestroy(w));
}

static void wait_async(ncclComm_t c, const char *what)
{
	ncclResult_t st;
	int polls = 0;
	do {
		NCCL_OK(ncclCommGetAsyncError(c, &st));
		polls++;
		if (st == ncclInProgress) t_sleep_ms(1);
	} while (st == ncclInProgress);
	CHECK(st == ncclSuccess, "%s: async error %d", what, st);
}

static void sc_initvariants(int rank, int n, ncclUniqueId id, CUstream s)
{
	/* blocking = 0: ncclInProgress at once, then done via GetAsyncError */
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	cfg.blocking = 0;
	cfg.commName = "nonblocking-world";
	ncclComm_t nb = NULL;
	ncclResult_t r = ncclCommInitRankConfig(&nb, n, id, rank, &cfg);
	CHECK(r == ncclInProgress && nb != NULL, "non-blocking init returned %d (comm %p)", r, (void *)nb);
	wait_async(nb, "non-blocking init");
	float *b = fbuf(1000, 1);
	r = ncclAllReduce(b, b, 1000, ncclFloat, ncclSum, nb, s);
	CHECK(r == ncclSuccess || r == ncclInProgress, "collective on a non-blocking comm returned %d", r);
	wait_async(nb, "non-blocking allreduce");
	CU_OK(cuStreamSynchronize(s));
	CHECK(b[0] == n && b[999] == n, "non-blocking allreduce result %g", b[0]);
	CHECK(ncclCommFinalize(nb) == ncclInProgress, "non-blocking finalize returns ncclInProgress");
	wait_async(nb, "non-blocking finalize");
	NCCL_OK(ncclCommDestroy(nb));

	/* a bad config */
	ncclConfig_t bad = NCCL_CONFIG_INITIALIZER;
	bad.magic = 0;
	ncclComm_t x;
	CHECK(ncclCommInitRankConfig(&x, n, id, rank, &bad) == ncclInvalidArgument, "uninitialized config must fail");

	/* InitRankScalable with two ids (derived from the world id) */
	ncclUniqueId ids[2] = { id, id };
	ids[1].internal[0] ^= 1;
	ncclComm_t sc;
	NCCL_OK(ncclCommInitRankScalable(&sc, n, rank, 2, ids, NULL));
	int dev;
	NCCL_OK(ncclCommCuDevice(sc, &dev));
	CUdevice cur;
	CU_OK(cuCtxGetDevice(&cur));
	CHECK(dev == (int)cur, "CuDevice %d, current device %d", dev, (int)cur);
	allreduce_check(sc, s, 10, n);

	/* Shrink: the last rank leaves; the others shrink without it */
	if (rank == n - 1) {
		NCCL_OK(ncclCommDestroy(sc));
		return;
	}
	int ex = n - 1;
	ncclComm_t sh;
	NCCL_OK(ncclCommShrink(sc, &ex, 1, &sh, NULL, NCCL_SHRINK_DEFAULT));
	int cn, cr;
	NCCL_OK(ncclCommCount(sh, &cn));
	NCCL_OK(ncclCommUserRank(sh, &cr));
	CHECK(cn == n - 1 && cr == rank, "shrunk comm: rank %d of %d", cr, cn);
	allreduce_check(sh, s, 10, n - 1);
	if (n > 2) {  /* excluding a middle rank renumbers the ones above it */
		ex = 0;
		ncclComm_t sh2;
		if (rank != 0) {
			NCCL_OK(ncclCommShrink(sh, &ex, 1, &sh2, NULL, NCCL_SHRINK_DEFAULT));
			NCCL_OK(ncclCommUserRank(sh2, &cr));
			CHECK(cr == rank - 1, "second shrink: rank %d want %d", cr, rank - 1);
			allreduce_check(sh2, s, 10, n - 2);
			NCCL_OK(ncclCommDestroy(sh2));
		}
	}
	NCCL_OK(ncclCommFinalize(sh));
	NCCL_OK(ncclCommDestroy(sh));
	NCCL_OK(ncclCommDestroy(sc));
}

/* One process, n communicators (InitAll, then inits in a group), each rank
 * with its own device and stream; groups drive them all from one thread. */
static void sc_initall(int n)
{
	ncclComm_t comms[16], comms2[16];
	CUstream st[16];
	CUcontext ctx[16];
	float *b[16];
	int devs[16];
	CU_OK(cuInit(0));
	for (int i = 0; i < n; i++) {
		CUdevice d;
		CU_OK(cuDeviceGet(&d, i));
		CU_OK(cuDevicePrimaryCtxRetain(&ctx[i], d));
		CU_OK(cuCtxSetCurrent(ctx[i]));
		CU_OK(cuStreamCreate(&st[i], 0));
		devs[i] = n - 1 - i;
	}
	NCCL_OK(ncclCommInitAll(comms, n, devs));
	for (int i = 0; i < n; i++) {
		int c, r, d;
		NCCL_OK(ncclCommCount(comms[i], &c));
		NCCL_OK(ncclCommUserRank(comms[i], &r));
		NCCL_OK(ncclCommCuDevice(comms[i], &d));
		CHECK(c == n && r == i && d == n - 1 - i, "InitAll comm %d: rank %d of %d dev %d", i, r, c, d);
		b[i] = fbuf(70000, (float)(i + 1));
	}
	for (int rep = 0; rep < 3; rep++) {
		NCCL_OK(ncclGroupStart());
		for (int i = 0; i < n; i++) NCCL_OK(ncclAllReduce(b[i], b[i], 70000, ncclFloat, ncclMax, comms[i], st[i]));
		NCCL_OK(ncclGroupEnd());
	}
	for (int i = 0; i < n; i++) {
		CU_OK(cuStreamSynchronize(st[i]));
		CHECK(b[i][0] == n && b[i][69999] == n, "InitAll allreduce on %d: %g", i, b[i][0]);
	}
	ncclUniqueId id;
	NCCL_OK(ncclGetUniqueId(&id));
	NCCL_OK(ncclGroupStart());
	for (int i = 0; i < n; i++) {
		CU_OK(cuCtxSetCurrent(ctx[i]));
		NCCL_OK(ncclCommInitRank(&comms2[i], n, id, i));
	}
	NCCL_OK(ncclGroupEnd());
	for (int i = 0; i < n; i++) {
		int d;
		NCCL_OK(ncclCommCuDevice(comms2[i], &d));
		CHECK(d == i, "grouped init %d: device %d", i, d);
	}
	NCCL_OK(ncclGroupStart());
	for (int i = 0; i < n; i++) {
		NCCL_OK(ncclSend(b[i], 100, ncclFloat, (i + 1) % n, comms2[i], st[i]));
		NCCL_OK(ncclRecv(b[i] + 100, 100, ncclFloat, (i + n - 1) % n, comms2[i], st[i]));
	}
	NCCL_OK(ncclGroupEnd());
	for (int i = 0; i < n; i++) {
		CU_OK(cuStreamSynchronize(st[i]));
		NCCL_OK(ncclCommDestroy(comms[i]));
		NCCL_OK(ncclCommDestroy(comms2[i]));
		free(b[i]);
	}
	/* Two ranks of one comm on one GPU: NCCL refuses ("Duplicate GPU
	 * detected"), at the group's end. */
	NCCL_OK(ncclGetUniqueId(&id));
	CU_OK(cuCtxSetCurrent(ctx[0]));
	NCCL_OK(ncclGroupStart());
	for (int i = 0; i < 2; i++)
		NCCL_OK(ncclCommInitRank(&comms2[i], 2, id, i));
	ncclResult_t dup = ncclGroupEnd();
	CHECK(dup == ncclInvalidUsage, "two ranks on one GPU: ncclGroupEnd gave %d, not ncclInvalidUsage", (int)dup);
}

/* ---- injected faults (NCCLSIM_FAULT set by the calling script) ---- */
static void sc_stall(int rank, int n, ncclUniqueId id, CUstream s)
{
	/* NCCLSIM_FAULT=stall:seq=2: #1 completes, #2 never does on any rank */
	ncclComm_t c = init_world(rank, n, id);
	allreduce_check(c, s, 10, n);
	float *b = fbuf(10, 1);
	NCCL_OK(ncclAllReduce(b, b, 10, ncclFloat, ncclSum, c, s));
	CUevent ev = t_expect_stuck(s, 1500, "stalled collective #2");
	ncclResult_t st;
	NCCL_OK(ncclCommGetAsyncError(c, &st));
	CHECK(st == ncclSuccess, "a stall is no error: async error %d", st);
	NCCL_OK(ncclCommAbort(c));
	CU_OK(cuEventSynchronize(ev));
	printf("rank %d: collective #2 stalled until abort\n", rank);
}

static void sc_nostall(int rank, int n, ncclUniqueId id, CUstream s)
{
	/* a stall aimed at another communicator leaves this one alone */
	ncclComm_t c = init_world(rank, n, id);
	for (int k = 0; k < 3; k++) allreduce_check(c, s, 10, n);
	NCCL_OK(ncclCommDestroy(c));
}

static void sc_gpufault(int rank, int n, ncclUniqueId id, CUstream s)
{
	/* NCCLSIM_FAULT=gpufault:rank=1:seq=2 */
	ncclComm_t c = init_world(rank, n, id);
	allreduce_check(c, s, 10, n);
	float *b = fbuf(10, 1);
	NCCL_OK(ncclAllReduce(b, b, 10, ncclFloat, ncclSum, c, s));
	CUevent ev;
	CU_OK(cuEventCreate(&ev, 0));
	CUresult rec = cuEventRecord(ev, s);
	if (rank == 1) {
		/* the fault may already have happened: then recording reports it */
		CUresult e = rec == CUDA_SUCCESS ? cuEventSynchronize(ev) : rec;
		CHECK(e == CUDA_ERROR_ILLEGAL_ADDRESS, "faulted rank: event %d, want ILLEGAL_ADDRESS", (int)e);
		CHECK(cuStreamQuery(s) == CUDA_ERROR_ILLEGAL_ADDRESS, "the error is sticky");
		ncclResult_t st;
		NCCL_OK(ncclCommGetAsyncError(c, &st));
		CHECK(st == ncclUnhandledCudaError, "async error %d, want ncclUnhandledCudaError", st);
		printf("rank 1: gpufault seen: sticky CUDA error, async error %d\n", st);
		return;  /* exits without destroying: like a crashed job */
	}
	CHECK(rec == CUDA_SUCCESS, "peers have no CUDA error (%d)", (int)rec);
	for (int i = 0; i < 10; i++) {
		t_sleep_ms(150);
		CHECK(cuEventQuery(ev) == CUDA_ERROR_NOT_READY, "peers of the faulted rank must hang");
	}
	ncclResult_t st;
	NCCL_OK(ncclCommGetAsyncError(c, &st));
	CHECK(st == ncclSuccess, "peers have no async error (%d)", st);
	NCCL_OK(ncclCommAbort(c));
	CU_OK(cuEventSynchronize(ev));
	printf("rank %d: hung behind the faulted rank until abort\n", rank);
}

static void sc_slow(int rank, int n, ncclUniqueId id, CUstream s)
{
	/* NCCLSIM_FAULT=slow:rank=0:ms=2000: every rank's op waits for rank 0 */
	ncclComm_t c = init_world(rank, n, id);
	float *b = fbuf(10, 1);
	NCCL_OK(ncclAllReduce(b, b, 10, ncclFloat, ncclSum, c, s));
	CUevent ev;
	CU_OK(cuEventCreate(&ev, 0));
	CU_OK(cuEventRecord(ev, s));
	CHECK(cuEventQuery(ev) == CUDA_ERROR_NOT_READY, "a slowed op is not done at once");
	CU_OK(cuEventSynchronize(ev));  /* but it completes */
	CHECK(b[0] == n, "slow allreduce result %g", b[0]);
	NCCL_OK(ncclCommDestroy(c));
}

static void sc_initstall(int rank, int n, ncclUniqueId id, CUstream s)
{
	/* NCCLSIM_FAULT=initstall:rank=1: rank 1 never arrives, so nobody's
	 * init completes; rank 1's own call never returns. */
	(void)s;
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	ncclComm_t c;
	if (rank == 1) {
		ncclCommInitRank(&c, n, id, rank);
		CHECK(0, "initstall rank returned from init");
	}
	cfg.blocking = 0;
	ncclResult_t r = ncclCommInitRankConfig(&c, n, id, rank, &cfg);
	CHECK(r == ncclInProgress, "init %d", r);
	for (int i = 0; i < 10; i++) {
		ncclResult_t st;
		t_sleep_ms(150);
		NCCL_OK(ncclCommGetAsyncError(c, &st));
		CHECK(st == ncclInProgress, "init must not complete without rank 1 (%d)", st);
	}
	NCCL_OK(ncclCommAbort(c));
	printf("rank %d: init stayed in progress, abort returned\n", rank);
}

/* ---- mismatches ---- */
static void sc_mismatch_kind(int rank, int n, ncclUniqueId id, CUstream s)
{
	/* an AllReduce meets a Broadcast at position 2: every rank hangs */
	ncclComm_t c = init_world(rank, n, id);
	allreduce_check(c, s, 10, n);
	float *b = fbuf(10, 1);
	if (rank == 0) NCCL_OK(ncclBroadcast(b, b, 10, ncclFloat, 0, c, s));
	else NCCL_OK(ncclAllReduce(b, b, 10, ncclFloat, ncclSum, c, s));
	CUevent ev = t_expect_stuck(s, 1500, "allreduce vs broadcast");
	NCCL_OK(ncclCommAbort(c));
	CU_OK(cuEventSynchronize(ev));
}

static void sc_mismatch_count(int rank, int n, ncclUniqueId id, CUstream s)
{
	/* rank 0 reduces 10 floats, the others 100000: rank 0 completes (its
	 * 10 values are right), the others wait for data that never comes */
	ncclComm_t c = init_world(rank, n, id);
	size_t count = rank == 0 ? 10 : 100000;
	float *b = fbuf(count, 1);
	NCCL_OK(ncclAllReduce(b, b, count, ncclFloat, ncclSum, c, s));
	if (rank == 0) {
		CU_OK(cuStreamSynchronize(s));
		CHECK(b[0] == n && b[9] == n, "smaller count: %g", b[0]);
		printf("rank 0: smaller count completed\n");
	} else {
		CUevent ev = t_expect_stuck(s, 1500, "larger count");
		NCCL_OK(ncclCommAbort(c));
		CU_OK(cuEventSynchronize(ev));
		printf("rank %d: larger count hung until abort\n", rank);
		return;
	}
	/* rank 0 waits for the others to give up before leaving */
	t_sleep_ms(2500);
	NCCL_OK(ncclCommAbort(c));
}

static void sc_mismatch_count_shift(int rank, int n, ncclUniqueId id, CUstream s)
{
	/* rank 0's first AllReduce has 10 floats (1 chunk), the others' 100000
	 * (7 chunks); then 3 AllReduces that agree. The streams stay 6 chunks
	 * apart, as NCCL's connections do: rank 0 completes all 4 (the others'
	 * chunks feed it), the others complete 3 (taking rank 0's later chunks:
	 * wrong data) and hang in the 4th, the last, for chunks never sent. */
	ncclComm_t c = init_world(rank, n, id);
	size_t big = 100000;
	float *b = fbuf(big, 1);
	NCCL_OK(ncclAllReduce(b, b, rank == 0 ? 10 : big, ncclFloat, ncclSum, c, s));
	for (int i = 0; i < 2; i++)
		NCCL_OK(ncclAllReduce(b, b, big, ncclFloat, ncclSum, c, s));
	CUevent third;
	CU_OK(cuEventCreate(&third, 0));
	CU_OK(cuEventRecord(third, s));
	NCCL_OK(ncclAllReduce(b, b, big, ncclFloat, ncclSum, c, s));
	if (rank == 0) {
		CU_OK(cuStreamSynchronize(s));
		printf("rank 0: all 4 completed\n");
		t_sleep_ms(2500);     /* the others give up before it leaves */
		NCCL_OK(ncclCommAbort(c));
		return;
	}
	CU_OK(cuEventSynchronize(third));
	CUevent ev = t_expect_stuck(s, 1500, "the last all-reduce");
	NCCL_OK(ncclCommAbort(c));
	CU_OK(cuEventSynchronize(ev));
	printf("rank %d: 3 completed, the 4th hung until abort\n", rank);
}

/* ---- a killed rank: others still make progress elsewhere and can abort ---- */
static void sc_killed(int rank, int n, ncclUniqueId id, CUstream s)
{
	ncclComm_t w = init_world(rank, n, id), pair;
	/* ranks 0 and 1 also share a second comm, made from the world id */
	ncclUniqueId id2 = id;
	id2.internal[1] ^= 0x55;
	if (rank < 2) NCCL_OK(ncclCommInitRank(&pair, 2, id2, rank));
	allreduce_check(w, s, 10, n);
	if (rank == n - 1) raise(SIGKILL);
	float *b = fbuf(10, 1);
	NCCL_OK(ncclAllReduce(b, b, 10, ncclFloat, ncclSum, w, s));
	CUevent ev = t_expect_stuck(s, 1000, "allreduce with a dead rank");
	if (rank < 2) {
		CUstream s2;
		CU_OK(cuStreamCreate(&s2, 0));
		allreduce_check(pair, s2, 100000, 2);  /* unrelated work goes on */
		NCCL_OK(ncclCommDestroy(pair));
	}
	NCCL_OK(ncclCommAbort(w));
	CU_OK(cuEventSynchronize(ev));
	printf("rank %d: survived a dead peer\n", rank);
}

/* The same id again after the killed run left its files: must just work. */
static void sc_reuse(int rank, int n, ncclUniqueId id, CUstream s)
{
	ncclComm_t c = init_world(rank, n, id);
	allreduce_check(c, s, 1000, n);
	NCCL_OK(ncclCommDestroy(c));
}

/* With NCCLSIM_FAULT=stall:seq=1: every rank blocks in cuStreamSynchronize
 * for good; the calling script measures that the job costs no CPU. */
static void sc_hang(int rank, int n, ncclUniqueId id, CUstream s)
{
	ncclComm_t c = init_world(rank, n, id);
	float *b = fbuf(10, 1);
	NCCL_OK(ncclAllReduce(b, b, 10, ncclFloat, ncclSum, c, s));
	printf("rank %d: hanging\n", rank);
	fflush(stdout);
	cuStreamSynchronize(s);
	CHECK(0, "the stalled collective completed");
}

/* ---- null mode, argument checks ---- */
static void sc_null(int rank, int n, ncclUniqueId id, CUstream s)
{
	(void)s;
	ncclComm_t c;
	NCCL_OK(ncclCommInitRank(&c, n, id, rank));  /* alone: no peer runs */
	int cn, cr;
	NCCL_OK(ncclCommCount(c, &cn));
	NCCL_OK(ncclCommUserRank(c, &cr));
	CHECK(c && cn == n && cr == rank, "null comm: %d of %d", cr, cn);
	float *b = fbuf(4, 1), *r = fbuf(4, -1);
	for (int k = 0; k < 1000; k++) NCCL_OK(ncclAllReduce(b, r, 4, ncclFloat, ncclSum, c, (CUstream)0x1234));
	NCCL_OK(ncclGroupStart());
	NCCL_OK(ncclSend(b, 4, ncclFloat, 0, c, (CUstream)0x1234));
	NCCL_OK(ncclGroupEnd());
	CHECK(r[0] == -1, "null mode must not touch buffers");
	NCCL_OK(ncclCommDestroy(c));
	const char *dir = getenv("NCCLSIM_DIR");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d))) CHECK(e->d_name[0] == '.', "null mode created %s/%s", dir, e->d_name);
	if (d) closedir(d);
}

static void sc_args(int rank, int n, ncclUniqueId id, CUstream s)
{
	int v;
	NCCL_OK(ncclGetVersion(&v));
	CHECK(v == 22809, "version %d", v);
	CHECK(!strcmp(ncclGetErrorString(ncclRemoteError), "remote process exited or there was a network error"), "strings");
	CHECK(!strcmp(ncclGetErrorString(ncclInProgress), "NCCL operation in progress"), "strings");
	ncclComm_t c = init_world(rank, n, id);
	float *b = fbuf(4, 1);
	CHECK(ncclAllReduce(b, b, 4, ncclFloat, ncclSum, NULL, s) == ncclInvalidArgument, "NULL comm");
	CHECK(ncclAllReduce(b, b, 4, (ncclDataType_t)42, ncclSum, c, s) == ncclInvalidArgument, "bad datatype");
	CHECK(ncclAllReduce(b, b, 4, ncclFloat, (ncclRedOp_t)77, c, s) == ncclInvalidArgument, "bad redop");
	CHECK(ncclBroadcast(b, b, 4, ncclFloat, n, c, s) == ncclInvalidArgument, "bad root");
	CHECK(ncclSend(b, 4, ncclFloat, -1, c, s) == ncclInvalidArgument, "bad peer");
	CHECK(ncclAllReduce(NULL, b, 4, ncclFloat, ncclSum, c, s) == ncclInvalidArgument, "NULL buffer");
	CHECK(strlen(ncclGetLastError(c)) > 0, "GetLastError has a message");
	/* a failed call inside a group fails the group; nothing ran */
	NCCL_OK(ncclGroupStart());
	NCCL_OK(ncclAllReduce(b, b, 4, ncclFloat, ncclSum, c, s));
	CHECK(ncclAllReduce(b, b, 4, ncclFloat, (ncclRedOp_t)77, c, s) == ncclInvalidArgument, "bad redop in group");
	CHECK(ncclGroupEnd() == ncclInvalidArgument, "the group reports the error");
	allreduce_check(c, s, 4, n);  /* still aligned: the failed group launched nothing */
	void *mem, *h;
	NCCL_OK(ncclMemAlloc(&mem, 4096));
	NCCL_OK(ncclCommRegister(c, mem, 4096, &h));
	NCCL_OK(ncclCommDeregister(c, h));
	ncclWindow_t win;
	NCCL_OK(ncclCommWindowRegister(c, mem, 4096, &win, NCCL_WIN_DEFAULT));
	NCCL_OK(ncclCommWindowDeregister(c, win));
	NCCL_OK(ncclMemFree(mem));
	NCCL_OK(ncclCommFinalize(c));
	NCCL_OK(ncclCommDestroy(c));
}

/* ---- transport selection (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL, NCCL_SHM_DISABLE) ---- */
/* The last rank adds TSIM_ODD_ENV ("NAME=value,NAME=value") to its own
 * environment before its first init; the others keep the script's. */
static void odd_rank_env(int rank, int n)
{
	const char *spec = getenv("TSIM_ODD_ENV");
	if (rank != n - 1 || !spec || !*spec) return;
	char *copy = strdup(spec), *save = NULL;
	CHECK(copy, "out of memory");
	for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		CHECK(eq, "TSIM_ODD_ENV: '%s' is not NAME=value", kv);
		*eq = 0;
		CHECK(setenv(kv, eq + 1, 1) == 0, "setenv");
	}
	free(copy);
}

/* A grouped exchange with one peer (send to it, receive from it). */
static void exchange(ncclComm_t c, CUstream s, int me, int peer, float *sb, float *rb, size_t count)
{
	for (size_t i = 0; i < count; i++) { sb[i] = me; rb[i] = -1; }
	NCCL_OK(ncclGroupStart());
	NCCL_OK(ncclSend(sb, count, ncclFloat, peer, c, s));
	NCCL_OK(ncclRecv(rb, count, ncclFloat, peer, c, s));
	NCCL_OK(ncclGroupEnd());
}

/* Settings that select the same transport on every rank: everything works
 * (collectives, a send/recv ring, a split communicator). */
static void sc_transport_ok(int rank, int n, ncclUniqueId id, CUstream s)
{
	odd_rank_env(rank, n);
	ncclComm_t c = init_world(rank, n, id);
	allreduce_check(c, s, 10, n);
	allreduce_check(c, s, 20000, n);
	int next = (rank + 1) % n, prev = (rank + n - 1) % n;
	float *sb = fbuf(100, rank), *rb = fbuf(100, -1);
	NCCL_OK(ncclGroupStart());
	NCCL_OK(ncclSend(sb, 100, ncclFloat, next, c, s));
	NCCL_OK(ncclRecv(rb, 100, ncclFloat, prev, c, s));
	NCCL_OK(ncclGroupEnd());
	CU_OK(cuStreamSynchronize(s));
	CHECK(rb[0] == prev && rb[99] == prev, "ring receive: %g, want %d", rb[0], prev);
	ncclComm_t half;
	NCCL_OK(ncclCommSplit(c, rank % 2, rank, &half, NULL));
	int hn;
	NCCL_OK(ncclCommCount(half, &hn));
	allreduce_check(half, s, 10, hn);
	NCCL_OK(ncclCommDestroy(half));
	NCCL_OK(ncclCommDestroy(c));
	printf("rank %d: transports agree, every op completed\n", rank);
}

/* The last rank selects another transport (n >= 4): an exchange between
 * ranks 0 and 1 (both on the default) completes; one between ranks n-2
 * and n-1 (on a second stream) never does; the first all-reduce starts on
 * every rank and never completes; no error; ncclCommAbort ends it all. */
static void sc_transport_hang(int rank, int n, ncclUniqueId id, CUstream s)
{
	CHECK(n >= 4, "transport-hang needs 4 ranks or more");
	odd_rank_env(rank, n);
	ncclComm_t c = init_world(rank, n, id);
	float *sb = fbuf(100, 0), *rb = fbuf(100, -1);
	CUevent pair = NULL;
	if (rank < 2) {
		exchange(c, s, rank, 1 - rank, sb, rb, 100);
		CU_OK(cuStreamSynchronize(s));
		CHECK(rb[0] == 1 - rank, "exchange 0<->1: %g", rb[0]);
	} else if (rank >= n - 2) {
		CUstream s2;
		CU_OK(cuStreamCreate(&s2, 0));
		exchange(c, s2, rank, rank == n - 1 ? n - 2 : n - 1, sb, rb, 100);
		pair = t_expect_stuck(s2, 1000, "exchange between ranks of different transports");
	}
	float *b = fbuf(10, 1);
	NCCL_OK(ncclAllReduce(b, b, 10, ncclFloat, ncclSum, c, s));
	CUevent ev = t_expect_stuck(s, 1500, "first all-reduce across different transports");
	ncclResult_t st;
	NCCL_OK(ncclCommGetAsyncError(c, &st));
	CHECK(st == ncclSuccess, "a transport hang is no error: async error %d", st);
	NCCL_OK(ncclCommAbort(c));
	CU_OK(cuEventSynchronize(ev));
	if (pair) CU_OK(cuEventSynchronize(pair));
	CHECK(b[0] == 1, "the hung all-reduce must not have a result (%g)", b[0]);
	printf("rank %d: first all-reduce hung until abort\n", rank);
}

static const struct { const char *name; t_rank_fn fn; int hang_rank; } scenarios[] = {
	{ "group", sc_group, -1 }, { "p2p-deadlock", sc_p2p_deadlock, -1 }, { "split", sc_split, -1 },
	{ "p2p-eager", sc_p2p_eager, -1 }, { "p2p-rendezvous", sc_p2p_rendezvous, -1 },
	{ "initvariants", sc_initvariants, -1 }, { "stall", sc_stall, -1 }, { "nostall", sc_nostall, -1 },
	{ "gpufault", sc_gpufault, -1 }, { "slow", sc_slow, -1 }, { "initstall", sc_initstall, 1 },
	{ "mismatch-kind", sc_mismatch_kind, -1 }, { "mismatch-count", sc_mismatch_count, -1 },
	{ "mismatch-count-shift", sc_mismatch_count_shift, -1 },
	{ "killed", sc_killed, -2 }, { "reuse", sc_reuse, -1 }, { "null", sc_null, -1 }, { "hang", sc_hang, -1 }, { "args", sc_args, -1 },
	{ "transport-ok", sc_transport_ok, -1 }, { "transport-hang", sc_transport_hang, -1 },
};

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s SCENARIO NRANKS [SEED]\n", argv[0]);
		return 2;
	}
	scenario = argv[1];
	int n = atoi(argv[2]);
	seed = argc > 3 ? (unsigned)atoi(argv[3]) : 0;
	ncclUniqueId id = t_make_id(seed);
	if (!strcmp(scenario, "key")) {
		printf("%016llx\n", t_key_of(&id));
		return 0;
	}
	if (!strcmp(scenario, "initall")) {
		t_rank = 0;
		sc_initall(n);
		printf("PASS\n");
		return 0;
	}
	for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
		if (strcmp(scenarios[i].name, scenario)) continue;
		int hang = scenarios[i].hang_rank;
		int bad;
		if (hang == -2) {  /* the last rank kills itself */
			t_killed_rank = n - 1;
			hang = -1;
		}
		bad = t_run_ranks(n, id, scenarios[i].fn, hang);
		printf(bad ? "FAILED\n" : "PASS\n");
		return bad;
	}
	fprintf(stderr, "unknown scenario %s\n", scenario);
	return 2;
}
