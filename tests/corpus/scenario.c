/* scenario: the hang programs of ncclwatch's scenario corpus
 * (tests/corpus/cases.txt). Written only against the public cuda.h (driver
 * API) and nccl.h, like examples/trainer.c, so the same binary runs on real
 * GPUs and on the simulation (LD_LIBRARY_PATH=build/sim).
 *
 *   scenario --case NAME [--nranks N] [--count C] [--dir DIR]
 *   scenario --list
 *
 * --nranks N forks N local ranks (examples/launch.c); without it the rank
 * comes from torchrun/mpirun/srun variables. Each case is a short program:
 * a few warm-up steps (so a verdict rests on histories, not on op #1),
 * then the fault, or nothing for the healthy ones.
 *
 * What the corpus harness reads (one write() per line, stdout):
 *   "corpus: rank R parked: WHY"  R reached its last state: it is about to
 *                                 block for ever, idle, die or exit early
 *   "corpus: check"               rank 0 of a case that ends by itself: the
 *                                 job is in the state worth diagnosing live
 *   "corpus: rank R done"         R destroyed its communicators, exits 0
 * Exit codes: 0 ok, 2 usage, 3 a wrong result noticed, 4 NCCL error,
 * 5 CUDA error (examples/trainer.h's).
 */
#include "../../examples/trainer.h"

#include <cuda.h>
#include <nccl.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WARM 4          /* warm-up steps before the fault: the fault is step 5 */
#define MAX_COMMS 4

struct sc {
	struct rank_info who;
	int rank, n;
	const char *dir;        /* rendezvous and flag files of this job */
	long count;
	CUdevice dev;
	CUcontext ctx;
	CUstream s, s2;         /* the main stream, a second one */
	CUdeviceptr buf, buf2;  /* count*4 floats each: room for any mismatch */
	ncclUniqueId id;
	ncclComm_t world;
	ncclComm_t comm[MAX_COMMS]; /* A, B, C... (splits), NULL when unused */
};

/* ---- output -------------------------------------------------------------- */

static void line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void line(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	if (k > (int)sizeof buf - 2)
		k = (int)sizeof buf - 2;
	buf[k++] = '\n';
	if (write(STDOUT_FILENO, buf, (size_t)k) < 0) {
		/* nowhere to say it */
	}
}

static void parked(struct sc *c, const char *why) { line("corpus: rank %d parked: %s", c->rank, why); }

static void cuda_ok(struct sc *c, CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return;
	const char *name = NULL;
	cuGetErrorName(r, &name);
	line("rank %d: %s failed: %s", c->rank, what, name ? name : "?");
	exit(EXIT_CUDA_ERROR);
}

static void nccl_ok(struct sc *c, ncclResult_t r, const char *what)
{
	if (r == ncclSuccess)
		return;
	line("rank %d: %s failed: %s", c->rank, what, ncclGetErrorString(r));
	exit(EXIT_NCCL_ERROR);
}

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, ms % 1000 * 1000000L };
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

/* Alive, costing no CPU, until killed ("stuck somewhere else"). */
static __attribute__((noreturn)) void idle_forever(struct sc *c, const char *why)
{
	parked(c, why);
	for (;;)
		pause();
}

/* ---- flag files: ranks that must act in an order --------------------------- */

static void flag_set(struct sc *c, const char *name)
{
	char p[512];
	snprintf(p, sizeof p, "%s/flag-%s", c->dir, name);
	FILE *f = fopen(p, "w");
	if (f)
		fclose(f);
}

static void flag_wait(struct sc *c, const char *name)
{
	char p[512];
	snprintf(p, sizeof p, "%s/flag-%s", c->dir, name);
	while (access(p, F_OK) != 0)
		nap_ms(10);
}

/* ---- device, communicators, ops -------------------------------------------- */

static void setup_device(struct sc *c)
{
	int devices = 0;
	cuda_ok(c, cuInit(0), "cuInit");
	cuda_ok(c, cuDeviceGetCount(&devices), "cuDeviceGetCount");
	if (devices < 1) {
		line("rank %d: no CUDA device", c->rank);
		exit(EXIT_CUDA_ERROR);
	}
	cuda_ok(c, cuDeviceGet(&c->dev, c->who.local_rank % devices), "cuDeviceGet");
	cuda_ok(c, cuDevicePrimaryCtxRetain(&c->ctx, c->dev), "cuDevicePrimaryCtxRetain");
	cuda_ok(c, cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent");
	cuda_ok(c, cuStreamCreate(&c->s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	cuda_ok(c, cuStreamCreate(&c->s2, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	size_t bytes = (size_t)c->count * 4 * sizeof(float);
	cuda_ok(c, cuMemAlloc(&c->buf, bytes), "cuMemAlloc");
	cuda_ok(c, cuMemAlloc(&c->buf2, bytes), "cuMemAlloc");
	cuda_ok(c, cuMemsetD8(c->buf, 0, bytes), "cuMemsetD8");
	cuda_ok(c, cuMemsetD8(c->buf2, 0, bytes), "cuMemsetD8");
}

/* The job's unique id: rank 0 publishes it, the others read it. */
static void get_id(struct sc *c)
{
	if (c->rank == 0) {
		nccl_ok(c, ncclGetUniqueId(&c->id), "ncclGetUniqueId");
		if (rendezvous_publish(c->dir, &c->id) < 0)
			exit(EXIT_SETUP);
	} else if (rendezvous_fetch(c->dir, &c->id) < 0) {
		exit(EXIT_SETUP);
	}
}

static void init_world(struct sc *c)
{
	get_id(c);
	nccl_ok(c, ncclCommInitRank(&c->world, c->n, c->id, c->rank), "ncclCommInitRank");
}

/* comm[i] = a split of the world: every rank with color 0 (all ranks), or
 * the given color; NCCL_SPLIT_NOCOLOR leaves it NULL. */
static void split(struct sc *c, int i, int color)
{
	nccl_ok(c, ncclCommSplit(c->world, color, c->rank, &c->comm[i], NULL), "ncclCommSplit");
}

static void allreduce(struct sc *c, ncclComm_t comm, CUstream s)
{
	nccl_ok(c, ncclAllReduce((void *)c->buf, (void *)c->buf, (size_t)c->count, ncclFloat, ncclSum, comm, s),
	        "ncclAllReduce");
}

static void allreduce_as(struct sc *c, ncclComm_t comm, CUstream s, size_t count, ncclDataType_t type,
                         ncclRedOp_t op)
{
	nccl_ok(c, ncclAllReduce((void *)c->buf, (void *)c->buf, count, type, op, comm, s), "ncclAllReduce");
}

static void broadcast(struct sc *c, ncclComm_t comm, int root, CUstream s)
{
	nccl_ok(c, ncclBroadcast((void *)c->buf2, (void *)c->buf2, (size_t)c->count, ncclFloat, root, comm, s),
	        "ncclBroadcast");
}

static void sync_stream(struct sc *c, CUstream s) { cuda_ok(c, cuStreamSynchronize(s), "cuStreamSynchronize"); }

/* The last thing a rank does in a hanging case: wait for its stream. */
static void hang_on(struct sc *c, CUstream s, const char *why)
{
	parked(c, why);
	sync_stream(c, s);
	line("rank %d: the stream finished after all", c->rank);
}

/* The end of a step of the loops below: the warm-up steps wait for their
 * stream, the faulty one (step 5) hangs there. */
static void end_step(struct sc *c, int step)
{
	if (step == WARM + 1)
		hang_on(c, c->s, "step 5 issued");
	else
		sync_stream(c, c->s);
}

static int rank_of(ncclComm_t comm)
{
	int r = -1;
	ncclCommUserRank(comm, &r);
	return r;
}
static int size_of(ncclComm_t comm)
{
	int n = 0;
	ncclCommCount(comm, &n);
	return n;
}

/* A ring exchange on comm inside a group: send to the next, receive from
 * the previous; what a pipeline's stage does every step. */
static void ring_exchange(struct sc *c, ncclComm_t comm, CUstream s, int do_send, int do_recv)
{
	int n = size_of(comm), me = rank_of(comm);
	nccl_ok(c, ncclGroupStart(), "ncclGroupStart");
	if (do_send)
		nccl_ok(c, ncclSend((void *)c->buf2, (size_t)c->count, ncclFloat, (me + 1) % n, comm, s), "ncclSend");
	if (do_recv)
		nccl_ok(c, ncclRecv((void *)c->buf2, (size_t)c->count, ncclFloat, (me + n - 1) % n, comm, s), "ncclRecv");
	nccl_ok(c, ncclGroupEnd(), "ncclGroupEnd");
}

/* A non-blocking comm answers ncclInProgress until the call is done:
 * NCCL's documented polling loop. */
static void ready(struct sc *c, ncclComm_t comm, ncclResult_t r, const char *what)
{
	while (r == ncclInProgress) {
		nap_ms(1);
		nccl_ok(c, ncclCommGetAsyncError(comm, &r), "ncclCommGetAsyncError");
	}
	nccl_ok(c, r, what);
}

static void finalize_destroy(struct sc *c, ncclComm_t *comm)
{
	if (!*comm)
		return;
	ready(c, *comm, ncclCommFinalize(*comm), "ncclCommFinalize");
	nccl_ok(c, ncclCommDestroy(*comm), "ncclCommDestroy");
	*comm = NULL;
}

static void finish(struct sc *c)
{
	if (c->rank == 0) /* comms alive, nothing pending: worth a live look */
		line("corpus: check");
	for (int i = MAX_COMMS - 1; i >= 0; i--)
		finalize_destroy(c, &c->comm[i]);
	finalize_destroy(c, &c->world);
	line("corpus: rank %d done", c->rank);
}

/* Warm-up: `steps` steps of one AllReduce on each of comms[0..k-1], in that
 * order, on stream s, then a sync. */
static void warm(struct sc *c, ncclComm_t *comms, int k, CUstream s, int steps)
{
	for (int step = 0; step < steps; step++) {
		for (int i = 0; i < k; i++)
			allreduce(c, comms[i], s);
		sync_stream(c, s);
	}
}

/* A pause of every rank with nothing pending, longer than the watchdog's
 * timeout (NCCLWATCH_TIMEOUT, default here 2 s): rank 0 says "check" a
 * second before its end, when a live diagnosis should see a quiet job. */
static void quiet_pause(struct sc *c)
{
	long total = 4000;
	const char *t = getenv("NCCLWATCH_TIMEOUT");
	if (t && atol(t) > 0)
		total = atol(t) * 1000 + 2000;
	nap_ms(total - 1000);
	if (c->rank == 0)
		line("corpus: check");
	nap_ms(1000);
}

/* ---- the cases --------------------------------------------------------------
 * Each returns the rank's exit status (or never returns). The fault is
 * "step 5": op #5 of the comms concerned. */

/* Two (three) comms used in a different order on ONE stream by a minority. */
static int order_on_one_stream(struct sc *c, int ncomms, int deviant(int rank))
{
	init_world(c);
	for (int i = 0; i < ncomms; i++)
		split(c, i, 0);
	warm(c, c->comm, ncomms, c->s, WARM);
	if (deviant(c->rank)) /* the others' order, rotated by one: last comm first */
		for (int i = 0; i < ncomms; i++)
			allreduce(c, c->comm[(i + ncomms - 1) % ncomms], c->s);
	else
		for (int i = 0; i < ncomms; i++)
			allreduce(c, c->comm[i], c->s);
	hang_on(c, c->s, "step 5 issued");
	return 0;
}
static int is_rank2(int r) { return r == 2; }
static int is_rank1(int r) { return r == 1; }
static int is_rank1_or_3(int r) { return r == 1 || r == 3; }
static int case_order2(struct sc *c) { return order_on_one_stream(c, 2, is_rank2); }
static int case_order3(struct sc *c) { return order_on_one_stream(c, 3, is_rank1); }
static int case_order2_of5(struct sc *c) { return order_on_one_stream(c, 2, is_rank1_or_3); }
static int case_order_pair(struct sc *c) { return order_on_one_stream(c, 2, is_rank1); }

/* 2 ranks, A then B on rank 0, B then A on rank 1 from the first step: no
 * order was kept before, the program as written deadlocks. */
static int case_order_pair_first(struct sc *c)
{
	init_world(c);
	split(c, 0, 0);
	split(c, 1, 0);
	allreduce(c, c->comm[c->rank == 1], c->s);
	allreduce(c, c->comm[c->rank != 1], c->s);
	hang_on(c, c->s, "step 1 issued");
	return 0;
}

/* Three pair comms on one stream per rank (3 ranks): comm[0] = P01 (ranks
 * 0,1), comm[1] = P12, comm[2] = P20; each step every rank issues its two
 * pair AllReduces in an order. `progress`: rank 0 P01,P20, rank 1 P12,P01,
 * rank 2 P12,P20 (P12 runs first, then P01, then P20). `cycle`: rank 2
 * goes P20,P12: each rank's first op waits for a peer whose op of that comm
 * is queued behind its own first op (0 -> 1 -> 2 -> 0). */
static void pair_comms(struct sc *c)
{
	init_world(c);
	for (int i = 0; i < 3; i++)
		split(c, i, c->rank == i || c->rank == (i + 1) % 3 ? 0 : NCCL_SPLIT_NOCOLOR);
}

static void pair_step(struct sc *c, int cycle)
{
	static const int order[3][2] = { { 0, 2 }, { 1, 0 }, { 1, 2 } };
	int first = order[c->rank][0], second = order[c->rank][1];
	if (cycle && c->rank == 2) {
		first = 2;
		second = 1;
	}
	allreduce(c, c->comm[first], c->s);
	allreduce(c, c->comm[second], c->s);
}

/* WARM steps in the progress order, then step 5 closes the cycle. */
static int case_order_pairs3(struct sc *c)
{
	pair_comms(c);
	for (int step = 0; step < WARM; step++) {
		pair_step(c, 0);
		sync_stream(c, c->s);
	}
	pair_step(c, 1);
	hang_on(c, c->s, "step 5 issued");
	return 0;
}

/* The cycle from the first step: the program as written deadlocks. */
static int case_order_pairs3_first(struct sc *c)
{
	pair_comms(c);
	pair_step(c, 1);
	hang_on(c, c->s, "step 1 issued");
	return 0;
}

/* Healthy: the progress order, different on each rank, for 8 steps. */
static int case_order_pairs3_ok(struct sc *c)
{
	pair_comms(c);
	for (int step = 0; step < 8; step++) {
		pair_step(c, 0);
		sync_stream(c, c->s);
	}
	finish(c);
	return 0;
}

/* Tensor-parallel groups of 3 (comm A: ranks 0-2 and 3-5) and the world,
 * AllReduce on A then on the world each step, on one stream; rank 4 does
 * the world's first at step 5. */
static int case_order_subgroup(struct sc *c)
{
	init_world(c);
	split(c, 0, c->rank / 3);
	ncclComm_t order[2] = { c->comm[0], c->world };
	warm(c, order, 2, c->s, WARM);
	if (c->rank == 4) {
		allreduce(c, c->world, c->s);
		allreduce(c, c->comm[0], c->s);
	} else {
		allreduce(c, c->comm[0], c->s);
		allreduce(c, c->world, c->s);
	}
	hang_on(c, c->s, "step 5 issued");
	return 0;
}

/* Healthy: the same two comms, each on its own stream, issued in different
 * orders by rank 2: no stream orders them, nothing waits. */
static int case_two_streams_any_order(struct sc *c)
{
	init_world(c);
	split(c, 0, 0);
	split(c, 1, 0);
	for (int step = 0; step < 8; step++) {
		if (c->rank == 2 && step % 2 == 0) {
			allreduce(c, c->comm[1], c->s2);
			allreduce(c, c->comm[0], c->s);
		} else {
			allreduce(c, c->comm[0], c->s);
			allreduce(c, c->comm[1], c->s2);
		}
		sync_stream(c, c->s);
		sync_stream(c, c->s2);
	}
	finish(c);
	return 0;
}

/* Healthy: three comms on one stream, always in the same order. */
static int case_same_order_one_stream(struct sc *c)
{
	init_world(c);
	for (int i = 0; i < 3; i++)
		split(c, i, 0);
	warm(c, c->comm, 3, c->s, 10);
	finish(c);
	return 0;
}

/* A process that dies: before AllReduce #5, or inside it (after it
 * started: its peers arrive only once it is dead). */
static int die_case(struct sc *c, int victim, int inside, int bcast)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	if (c->rank == victim && !inside) {
		parked(c, "killing myself before step 5");
		raise(SIGKILL);
	}
	if (c->rank == victim) {
		if (bcast)
			broadcast(c, c->world, 0, c->s);
		else
			allreduce(c, c->world, c->s);
		/* It has started (waits for the peers): give the watchdog a poll
		 * or two to see it, then die inside it. */
		while (cuStreamQuery(c->s) != CUDA_ERROR_NOT_READY)
			nap_ms(10);
		nap_ms(500);
		parked(c, "killing myself inside step 5");
		flag_set(c, "dead");
		raise(SIGKILL);
	}
	if (inside)
		flag_wait(c, "dead");
	if (bcast)
		broadcast(c, c->world, 0, c->s);
	else
		allreduce(c, c->world, c->s);
	hang_on(c, c->s, "step 5 issued");
	return 0;
}
static int case_die_before(struct sc *c) { return die_case(c, 2, 0, 0); }
static int case_die_inside(struct sc *c) { return die_case(c, 1, 1, 0); }
static int case_die_inside_bcast(struct sc *c) { return die_case(c, 5, 1, 1); }

/* CUDA graph capture: AllReduce #5 captured on a capturing stream. */
static int capture_case(struct sc *c, int skipper)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	CUgraph graph = NULL;
	CUgraphExec exec = NULL;
	cuda_ok(c, cuStreamBeginCapture(c->s2, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
	allreduce(c, c->world, c->s2);
	cuda_ok(c, cuStreamEndCapture(c->s2, &graph), "cuStreamEndCapture");
	if (c->rank == skipper) {
		/* "the graph is launched by the next iteration": it never is */
		cuda_ok(c, cuGraphDestroy(graph), "cuGraphDestroy");
	} else {
		cuda_ok(c, cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate");
		cuda_ok(c, cuGraphLaunch(exec, c->s), "cuGraphLaunch");
		if (skipper >= 0) /* #5 waits for the rank that never launches it */
			hang_on(c, c->s, "the graph of #5 launched");
		else
			sync_stream(c, c->s);
		cuda_ok(c, cuGraphExecDestroy(exec), "cuGraphExecDestroy");
		cuda_ok(c, cuGraphDestroy(graph), "cuGraphDestroy");
	}
	allreduce(c, c->world, c->s); /* #6 */
	if (skipper >= 0) {
		hang_on(c, c->s, "step 6 issued");
		return 0;
	}
	sync_stream(c, c->s);
	warm(c, &c->world, 1, c->s, 2);
	finish(c);
	return 0;
}
static int case_capture_nolaunch(struct sc *c) { return capture_case(c, 1); }
/* A graph launched after a later eager op (healthy): every rank captures
 * AllReduce #5 into a graph, issues #6 eagerly, then launches the graph
 * (NCCL pairs a comm's ops in the order they run: the replay is the
 * third op after the warm-up, on every rank); three such steps. */
static int case_graph_late_launch(struct sc *c)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	for (int step = 0; step < 3; step++) {
		CUgraph graph = NULL;
		CUgraphExec exec = NULL;
		cuda_ok(c, cuStreamBeginCapture(c->s2, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
		allreduce(c, c->world, c->s2);
		cuda_ok(c, cuStreamEndCapture(c->s2, &graph), "cuStreamEndCapture");
		cuda_ok(c, cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate");
		allreduce(c, c->world, c->s);
		cuda_ok(c, cuGraphLaunch(exec, c->s), "cuGraphLaunch");
		sync_stream(c, c->s);
		cuda_ok(c, cuGraphExecDestroy(exec), "cuGraphExecDestroy");
		cuda_ok(c, cuGraphDestroy(graph), "cuGraphDestroy");
	}
	warm(c, &c->world, 1, c->s, 2);
	finish(c);
	return 0;
}
static int case_capture_launch(struct sc *c) { return capture_case(c, -1); }

/* CUDA graph replay: every rank captures AllReduce #5 into a graph (global
 * capture mode) and launches it GRAPH_REPLAYS times (SCENARIO_GRAPH_REPLAYS=N:
 * N times) on its main stream, a sync after each. SCENARIO_GRAPH_SHORT=R:
 * rank R launches it one time fewer and parks; its peers wait in their last
 * replay (the corpus case graph-short: MISSING_RANK of rank R). */
#define GRAPH_REPLAYS 10

static int graph_replays(void)
{
	const char *e = getenv("SCENARIO_GRAPH_REPLAYS");
	int n = e && *e ? atoi(e) : GRAPH_REPLAYS;
	return n > 0 ? n : GRAPH_REPLAYS;
}

/* The graph calls, as a program binds them: SCENARIO_GRAPH_VIA=getproc
 * asks cuGetProcAddress (as libcudart does), =dlsym looks them up in
 * libcuda.so.1 by hand; by default the linker binds them. cuGraphExecUpdate
 * is the 12.0 ABI (update) but for dlsym, which takes the 10.2 one by its
 * exported name (update_v1), as a program built for CUDA 11 binds it. */
struct graph_api {
	__typeof__(cuStreamEndCapture) *end_capture;
	__typeof__(cuGraphInstantiateWithFlags) *instantiate;
	__typeof__(cuGraphLaunch) *launch;
	__typeof__(cuGraphExecDestroy) *exec_destroy;
	__typeof__(cuGraphDestroy) *destroy;
	__typeof__(cuGraphExecUpdate) *update;
	CUresult (*update_v1)(CUgraphExec, CUgraph, CUgraphNode *, CUgraphExecUpdateResult *);
};

static void graph_api(struct sc *c, struct graph_api *api)
{
	*api = (struct graph_api){ cuStreamEndCapture, cuGraphInstantiateWithFlags, cuGraphLaunch, cuGraphExecDestroy,
	                           cuGraphDestroy, cuGraphExecUpdate, NULL };
	const char *via = getenv("SCENARIO_GRAPH_VIA");
	if (!via)
		return;
	void *lib = !strcmp(via, "dlsym") ? dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) : NULL;
	if (lib)
		api->update = NULL;
	void **slots[] = { (void **)&api->end_capture, (void **)&api->instantiate, (void **)&api->launch,
	                   (void **)&api->exec_destroy, (void **)&api->destroy,
	                   lib ? (void **)&api->update_v1 : (void **)&api->update };
	/* cuGetProcAddress hands out cuGraphInstantiateWithFlags for
	 * "cuGraphInstantiate" from CUDA 12 on, as cuda.h maps it */
	const char *names[] = { "cuStreamEndCapture", "cuGraphInstantiate", "cuGraphLaunch", "cuGraphExecDestroy",
	                        "cuGraphDestroy", "cuGraphExecUpdate" };
	for (int i = 0; i < 6; i++) {
		CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		if (lib)
			*slots[i] = dlsym(lib, i == 1 ? "cuGraphInstantiateWithFlags" : names[i]);
		else
			cuda_ok(c, cuGetProcAddress(names[i], slots[i], CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st),
			        "cuGetProcAddress");
		if (!*slots[i]) {
			line("rank %d: %s: %s not found", c->rank, via, names[i]);
			exit(EXIT_CUDA_ERROR);
		}
	}
	if (c->rank == 0)
		line("rank 0: graph calls through %s", lib ? "dlsym" : "cuGetProcAddress");
}

/* cuGraphExecUpdate through whichever ABI api holds: *result says why it
 * failed. */
static CUresult graph_update(const struct graph_api *api, CUgraphExec exec, CUgraph graph,
                             CUgraphExecUpdateResult *result)
{
	if (api->update) {
		CUgraphExecUpdateResultInfo info = { .result = CU_GRAPH_EXEC_UPDATE_ERROR };
		CUresult r = api->update(exec, graph, &info);
		*result = info.result;
		return r;
	}
	CUgraphNode node = NULL;
	return api->update_v1(exec, graph, &node, result);
}

static int case_graph_ops(struct sc *c);

/* SCENARIO_GROUP_STREAMS=N (tests/interpose/test-interpose-group-streams.sh):
 * before graph-replay's capture, one eager group of N AllReduces on the
 * world comm, each on a stream of its own, then every stream synced. */
static void group_on_streams(struct sc *c)
{
	const char *e = getenv("SCENARIO_GROUP_STREAMS");
	int n = e && atoi(e) > 0 ? atoi(e) : 0;
	if (n > 32)
		n = 32;
	CUstream st[32];
	for (int i = 0; i < n; i++)
		cuda_ok(c, cuStreamCreate(&st[i], CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	if (n) {
		nccl_ok(c, ncclGroupStart(), "ncclGroupStart");
		for (int i = 0; i < n; i++)
			allreduce(c, c->world, st[i]);
		nccl_ok(c, ncclGroupEnd(), "ncclGroupEnd");
	}
	for (int i = 0; i < n; i++) {
		sync_stream(c, st[i]);
		cuda_ok(c, cuStreamDestroy(st[i]), "cuStreamDestroy");
	}
}

/* SCENARIO_GRAPH_COMMS=1 (tests/interpose/test-interpose-graph-comms.sh):
 * the same AllReduce captured on the world comm (graph A) and on a split
 * of it (graph B); prints each graph's node count, launches A's exec,
 * updates it from B (as CUDA allows: only an NCCL kernel's parameters
 * differ) and launches it again, a sync after each. Run with
 * NCCLWATCH_COMMS=1 the library follows the world comm only. */
static int graph_comms(struct sc *c)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	split(c, 0, 0);
	CUgraph g[2] = { NULL, NULL };
	for (int i = 0; i < 2; i++) {
		cuda_ok(c, cuStreamBeginCapture(c->s2, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
		allreduce(c, i ? c->comm[0] : c->world, c->s2);
		cuda_ok(c, cuStreamEndCapture(c->s2, &g[i]), "cuStreamEndCapture");
	}
	size_t na = 0, nb = 0;
	cuda_ok(c, cuGraphGetNodes(g[0], NULL, &na), "cuGraphGetNodes");
	cuda_ok(c, cuGraphGetNodes(g[1], NULL, &nb), "cuGraphGetNodes");
	line("rank %d: graph nodes: world %zu, split %zu", c->rank, na, nb);
	CUgraphExec exec = NULL;
	cuda_ok(c, cuGraphInstantiateWithFlags(&exec, g[0], 0), "cuGraphInstantiateWithFlags");
	cuda_ok(c, cuGraphLaunch(exec, c->s), "cuGraphLaunch");
	sync_stream(c, c->s);
	CUgraphExecUpdateResultInfo info = { .result = CU_GRAPH_EXEC_UPDATE_ERROR };
	CUresult r = cuGraphExecUpdate(exec, g[1], &info);
	line("rank %d: update from the split's graph: %d (result %d)", c->rank, (int)r, (int)info.result);
	if (r == CUDA_SUCCESS) {
		cuda_ok(c, cuGraphLaunch(exec, c->s), "cuGraphLaunch");
		sync_stream(c, c->s);
	}
	cuda_ok(c, cuGraphExecDestroy(exec), "cuGraphExecDestroy");
	for (int i = 0; i < 2; i++)
		cuda_ok(c, cuGraphDestroy(g[i]), "cuGraphDestroy");
	warm(c, &c->world, 1, c->s, 2);
	finish(c);
	return 0;
}

static int case_graph_replay(struct sc *c)
{
	if (getenv("SCENARIO_GRAPH_OPS"))   /* tests/interpose/test-interpose-graph-ops.sh */
		return case_graph_ops(c);
	if (getenv("SCENARIO_GRAPH_COMMS"))
		return graph_comms(c);
	const char *s = getenv("SCENARIO_GRAPH_SHORT");
	int short_rank = s && *s ? atoi(s) : -1;
	struct graph_api api;
	graph_api(c, &api);
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	group_on_streams(c);
	CUgraph graph = NULL;
	CUgraphExec exec = NULL;
	cuda_ok(c, cuStreamBeginCapture(c->s2, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
	allreduce(c, c->world, c->s2);
	cuda_ok(c, api.end_capture(c->s2, &graph), "cuStreamEndCapture");
	cuda_ok(c, api.instantiate(&exec, graph, 0), "cuGraphInstantiateWithFlags");
	int launches = c->rank == short_rank ? graph_replays() - 1 : graph_replays();
	for (int i = 0; i < launches; i++) {
		cuda_ok(c, api.launch(exec, c->s), "cuGraphLaunch");
		if (short_rank >= 0 && c->rank != short_rank && i == launches - 1)
			hang_on(c, c->s, "the graph's last replay launched");
		else
			sync_stream(c, c->s);
	}
	if (short_rank >= 0) {
		parked(c, "launched the graph one time fewer");
		for (;;)
			pause();
	}
	cuda_ok(c, api.exec_destroy(exec), "cuGraphExecDestroy");
	cuda_ok(c, api.destroy(graph), "cuGraphDestroy");
	warm(c, &c->world, 1, c->s, 2);
	finish(c);
	return 0;
}

static void CUDA_CB stuck_host_function(void *arg);

/* The graph of AllReduce #5 (count elements on rank `who`, c->count on
 * the others), captured on s2 and instantiated. */
static CUgraphExec graph_of_allreduce(struct sc *c, int who, size_t count, CUgraph *graph)
{
	CUgraphExec exec = NULL;
	cuda_ok(c, cuStreamBeginCapture(c->s2, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
	if (c->rank == who)
		allreduce_as(c, c->world, c->s2, count, ncclFloat, ncclSum);
	else
		allreduce(c, c->world, c->s2);
	cuda_ok(c, cuStreamEndCapture(c->s2, graph), "cuStreamEndCapture");
	cuda_ok(c, cuGraphInstantiateWithFlags(&exec, *graph, 0), "cuGraphInstantiateWithFlags");
	return exec;
}

/* MISMATCH in a replay: rank 1 captured AllReduce #5 with half the count
 * (--count 32768: 2 chunks, rank 1's 1). Replay 1 completes on rank 1 (its
 * one chunk), which notices the wrong result and exits 3; the others wait
 * in replay 1 for the chunk rank 1 never sends. */
static int case_graph_count(struct sc *c)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	CUgraph graph = NULL;
	CUgraphExec exec = graph_of_allreduce(c, 1, (size_t)c->count / 2, &graph);
	cuda_ok(c, cuGraphLaunch(exec, c->s), "cuGraphLaunch");
	if (c->rank == 1) {
		sync_stream(c, c->s);
		parked(c, "a wrong result noticed after replay 1, exiting 3");
		return EXIT_WRONG_RESULT;
	}
	hang_on(c, c->s, "replay 1 launched");
	return 0;
}

static void CUDA_CB empty_host_function(void *arg) { (void)arg; }

/* An update that must fail: the exec holds AllReduce #5 (one node, two
 * with ncclwatch's event-record node after it), this graph three host
 * functions. CUDA refuses it and leaves the exec as it was. */
static void update_topology_changed(struct sc *c, const struct graph_api *api, CUgraphExec exec)
{
	CUgraph other = NULL;
	CUgraphExecUpdateResult result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	cuda_ok(c, cuStreamBeginCapture(c->s2, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
	for (int i = 0; i < 3; i++)
		cuda_ok(c, cuLaunchHostFunc(c->s2, empty_host_function, NULL), "cuLaunchHostFunc");
	cuda_ok(c, api->end_capture(c->s2, &other), "cuStreamEndCapture");
	CUresult r = graph_update(api, exec, other, &result);
	if (r != CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE || result != CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED) {
		line("rank %d: cuGraphExecUpdate with another topology gave %d (result %d)", c->rank, (int)r, (int)result);
		exit(EXIT_CUDA_ERROR);
	}
	cuda_ok(c, api->destroy(other), "cuGraphDestroy");
}

/* MISMATCH after cuGraphExecUpdate: every rank replays the graph of
 * AllReduce #5 twice (uploaded first; between the replays an update from a
 * graph of another topology fails and changes nothing), then captures
 * AllReduce #6, rank 1 with half the count (--count 32768: 2 chunks, rank
 * 1's 1), and updates the exec from it (an NCCL kernel's parameters
 * change: allowed). Replay 1 of the graph holding #6 completes on rank 1
 * (its one chunk), which exits 3 on the wrong result; the others wait in
 * it for the chunk rank 1 never sends. SCENARIO_GRAPH_VIA as for
 * graph-replay. */
static int case_graph_update(struct sc *c)
{
	struct graph_api api;
	graph_api(c, &api);
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	CUgraph graph = NULL, next = NULL;
	CUgraphExec exec = NULL;
	cuda_ok(c, cuStreamBeginCapture(c->s2, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
	allreduce(c, c->world, c->s2);
	cuda_ok(c, api.end_capture(c->s2, &graph), "cuStreamEndCapture");
	cuda_ok(c, api.instantiate(&exec, graph, 0), "cuGraphInstantiateWithFlags");
	cuda_ok(c, cuGraphUpload(exec, c->s), "cuGraphUpload");
	for (int replay = 1; replay <= 2; replay++) {
		cuda_ok(c, api.launch(exec, c->s), "cuGraphLaunch");
		sync_stream(c, c->s);
		if (replay == 1)
			update_topology_changed(c, &api, exec);
	}
	CUgraphExecUpdateResult result;
	cuda_ok(c, cuStreamBeginCapture(c->s2, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
	if (c->rank == 1)
		allreduce_as(c, c->world, c->s2, (size_t)c->count / 2, ncclFloat, ncclSum);
	else
		allreduce(c, c->world, c->s2);
	cuda_ok(c, api.end_capture(c->s2, &next), "cuStreamEndCapture");
	cuda_ok(c, graph_update(&api, exec, next, &result), "cuGraphExecUpdate");
	cuda_ok(c, api.destroy(next), "cuGraphDestroy");   /* the exec keeps what it took */
	cuda_ok(c, api.destroy(graph), "cuGraphDestroy");
	cuda_ok(c, cuGraphUpload(exec, c->s), "cuGraphUpload");
	cuda_ok(c, api.launch(exec, c->s), "cuGraphLaunch");
	if (c->rank == 1) {
		sync_stream(c, c->s);
		parked(c, "a wrong result noticed after the updated graph's replay 1, exiting 3");
		return EXIT_WRONG_RESULT;
	}
	hang_on(c, c->s, "the updated graph launched");
	return 0;
}

/* Healthy, past the library's bound: the graph of AllReduce #5 is
 * launched once, then 255 more graphs of one AllReduce each are captured,
 * each launched once (a collective never launched holds the later ones up)
 * and kept (the library's table holds 256 graphs holding NCCL ops at once:
 * now full), then one more, which the library cannot enter, and the first
 * exec is updated from it and launched: the library cannot know what the
 * exec runs from then on. Every rank does the same; the graphs go at the
 * end. */
#define GRAPH_FILL 255
static int case_graph_update_past(struct sc *c);

static int case_graph_update_lost(struct sc *c)
{
	if (getenv("SCENARIO_GRAPH_PAST"))   /* tests/interpose/test-interpose-graph-past.sh */
		return case_graph_update_past(c);
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	CUgraph graph = NULL, next = NULL, fill[GRAPH_FILL];
	CUgraphExec exec = graph_of_allreduce(c, -1, 0, &graph);
	cuda_ok(c, cuGraphLaunch(exec, c->s), "cuGraphLaunch");
	sync_stream(c, c->s);
	for (int i = 0; i <= GRAPH_FILL; i++) {
		cuda_ok(c, cuStreamBeginCapture(c->s2, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
		allreduce(c, c->world, c->s2);
		cuda_ok(c, cuStreamEndCapture(c->s2, i < GRAPH_FILL ? &fill[i] : &next), "cuStreamEndCapture");
		if (i == GRAPH_FILL)
			break;
		CUgraphExec once = NULL;
		cuda_ok(c, cuGraphInstantiateWithFlags(&once, fill[i], 0), "cuGraphInstantiateWithFlags");
		cuda_ok(c, cuGraphLaunch(once, c->s), "cuGraphLaunch");
		sync_stream(c, c->s);
		cuda_ok(c, cuGraphExecDestroy(once), "cuGraphExecDestroy");
	}
	CUgraphExecUpdateResultInfo info;
	cuda_ok(c, cuGraphExecUpdate(exec, next, &info), "cuGraphExecUpdate");
	cuda_ok(c, cuGraphLaunch(exec, c->s), "cuGraphLaunch");
	sync_stream(c, c->s);
	cuda_ok(c, cuGraphExecDestroy(exec), "cuGraphExecDestroy");
	cuda_ok(c, cuGraphDestroy(next), "cuGraphDestroy");
	cuda_ok(c, cuGraphDestroy(graph), "cuGraphDestroy");
	for (int i = 0; i < GRAPH_FILL; i++)
		cuda_ok(c, cuGraphDestroy(fill[i]), "cuGraphDestroy");
	warm(c, &c->world, 1, c->s, 2);
	finish(c);
	return 0;
}

/* The code every graph of graph-update-past captures on s2: AllReduce, a
 * group of two, then GRAPH_WIDE_TAIL more (69 ops: past the library's 64
 * per-op events of a graph). Its node count. */
#define GRAPH_WIDE_TAIL 66
static CUgraph capture_wide(struct sc *c, const char *which)
{
	CUgraph g = NULL;
	size_t nodes = 0;
	cuda_ok(c, cuStreamBeginCapture(c->s2, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
	allreduce(c, c->world, c->s2);
	nccl_ok(c, ncclGroupStart(), "ncclGroupStart");
	allreduce(c, c->world, c->s2);
	allreduce(c, c->world, c->s2);
	nccl_ok(c, ncclGroupEnd(), "ncclGroupEnd");
	for (int i = 0; i < GRAPH_WIDE_TAIL; i++)
		allreduce(c, c->world, c->s2);
	cuda_ok(c, cuStreamEndCapture(c->s2, &g), "cuStreamEndCapture");
	cuda_ok(c, cuGraphGetNodes(g, NULL, &nodes), "cuGraphGetNodes");
	line("rank %d: graph %s: %zu nodes", c->rank, which, nodes);
	return g;
}

/* Healthy (SCENARIO_GRAPH_PAST=1 scenario graph-update-lost): graphs of one
 * code captured while the library's graph table (256) has room and while it
 * is full must be alike, or cuGraphExecUpdate between them fails. Graph A
 * (in the table) is instantiated and launched; 255 graphs of one AllReduce
 * fill the table (each launched once: a collective never launched holds
 * the later ones up); graph P (past the table) is instantiated and
 * launched; A's exec is updated from another graph past the table, P's
 * (once a fill graph is destroyed) from one in the table; both launched
 * again. Every update must succeed. */
static int case_graph_update_past(struct sc *c)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	CUgraph fill[GRAPH_FILL];
	CUgraph in = capture_wide(c, "in the table");
	CUgraphExec exec_in = NULL, exec_past = NULL;
	cuda_ok(c, cuGraphInstantiateWithFlags(&exec_in, in, 0), "cuGraphInstantiateWithFlags");
	cuda_ok(c, cuGraphLaunch(exec_in, c->s), "cuGraphLaunch");
	sync_stream(c, c->s);
	for (int i = 0; i < GRAPH_FILL; i++) {
		cuda_ok(c, cuStreamBeginCapture(c->s2, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
		allreduce(c, c->world, c->s2);
		cuda_ok(c, cuStreamEndCapture(c->s2, &fill[i]), "cuStreamEndCapture");
		CUgraphExec once = NULL;
		cuda_ok(c, cuGraphInstantiateWithFlags(&once, fill[i], 0), "cuGraphInstantiateWithFlags");
		cuda_ok(c, cuGraphLaunch(once, c->s), "cuGraphLaunch");
		sync_stream(c, c->s);
		cuda_ok(c, cuGraphExecDestroy(once), "cuGraphExecDestroy");
	}
	CUgraph past = capture_wide(c, "past the table");
	cuda_ok(c, cuGraphInstantiateWithFlags(&exec_past, past, 0), "cuGraphInstantiateWithFlags");
	cuda_ok(c, cuGraphLaunch(exec_past, c->s), "cuGraphLaunch");
	sync_stream(c, c->s);
	CUgraph past2 = capture_wide(c, "past the table, for the update");
	CUgraphExecUpdateResultInfo info = { .result = CU_GRAPH_EXEC_UPDATE_ERROR };
	CUresult r = cuGraphExecUpdate(exec_in, past2, &info);
	line("rank %d: update of the exec of a graph in the table from one past it: %d (result %d)", c->rank, (int)r,
	     (int)info.result);
	cuda_ok(c, r, "cuGraphExecUpdate");
	cuda_ok(c, cuGraphLaunch(exec_in, c->s), "cuGraphLaunch");
	sync_stream(c, c->s);
	cuda_ok(c, cuGraphDestroy(fill[0]), "cuGraphDestroy");   /* room for one */
	CUgraph in2 = capture_wide(c, "in the table, for the update");
	r = cuGraphExecUpdate(exec_past, in2, &info);
	line("rank %d: update of the exec of a graph past the table from one in it: %d (result %d)", c->rank, (int)r,
	     (int)info.result);
	cuda_ok(c, r, "cuGraphExecUpdate");
	cuda_ok(c, cuGraphLaunch(exec_past, c->s), "cuGraphLaunch");
	sync_stream(c, c->s);
	cuda_ok(c, cuGraphExecDestroy(exec_in), "cuGraphExecDestroy");
	cuda_ok(c, cuGraphExecDestroy(exec_past), "cuGraphExecDestroy");
	CUgraph all[] = { in, past, past2, in2 };
	for (int i = 0; i < 4; i++)
		cuda_ok(c, cuGraphDestroy(all[i]), "cuGraphDestroy");
	for (int i = 1; i < GRAPH_FILL; i++)
		cuda_ok(c, cuGraphDestroy(fill[i]), "cuGraphDestroy");
	warm(c, &c->world, 1, c->s, 2);
	finish(c);
	return 0;
}

/* STREAM_BLOCKED in a replay: every rank replays the graph of AllReduce #5
 * once per step; before replay 3 rank 2 queues a host function that never
 * returns on the launch stream (a data-loader callback stuck on a lock):
 * its replay 3 never starts, the others wait in theirs. */
static int case_graph_hostfn(struct sc *c)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	CUgraph graph = NULL;
	CUgraphExec exec = graph_of_allreduce(c, -1, 0, &graph);
	for (int replay = 1; replay <= 3; replay++) {
		if (replay == 3 && c->rank == 2)
			cuda_ok(c, cuLaunchHostFunc(c->s, stuck_host_function, NULL), "cuLaunchHostFunc");
		cuda_ok(c, cuGraphLaunch(exec, c->s), "cuGraphLaunch");
		if (replay == 3)
			hang_on(c, c->s, "replay 3 launched");
		else
			sync_stream(c, c->s);
	}
	return 0;
}

/* A replay stuck in its 3rd of 5 NCCL ops: every rank captures AllReduce
 * #5, #6, a host function, AllReduce #7, #8, #9 into one graph and launches
 * it once; rank 1's host function never returns (on the others it returns
 * at once), so rank 1 never reaches #7 and the others wait in it: their
 * replay 1 has ops 1-2 COMPLETED, op 3 STARTED, ops 4-5 ENQUEUED.
 * Reached as graph-replay with SCENARIO_GRAPH_OPS=1 (no corpus row: the
 * verdict, STREAM_BLOCKED of rank 1, needs the engine to see the host
 * function; today it says TRANSPORT_STALL). SCENARIO_GRAPH_OPS=group:
 * #5 and #6 are captured in one group (the same ops, one launch). */
static void CUDA_CB maybe_stuck_host_function(void *arg)
{
	if (arg)
		stuck_host_function(arg);
}

static int case_graph_ops(struct sc *c)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	CUgraph graph = NULL;
	CUgraphExec exec = NULL;
	int grouped = !strcmp(getenv("SCENARIO_GRAPH_OPS"), "group");
	cuda_ok(c, cuStreamBeginCapture(c->s2, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
	if (grouped)
		nccl_ok(c, ncclGroupStart(), "ncclGroupStart");
	allreduce(c, c->world, c->s2);
	allreduce(c, c->world, c->s2);
	if (grouped)
		nccl_ok(c, ncclGroupEnd(), "ncclGroupEnd");
	cuda_ok(c, cuLaunchHostFunc(c->s2, maybe_stuck_host_function, c->rank == 1 ? (void *)c : NULL),
	        "cuLaunchHostFunc");
	for (int i = 0; i < 3; i++)
		allreduce(c, c->world, c->s2);
	cuda_ok(c, cuStreamEndCapture(c->s2, &graph), "cuStreamEndCapture");
	cuda_ok(c, cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
	cuda_ok(c, cuGraphLaunch(exec, c->s), "cuGraphLaunch");
	hang_on(c, c->s, "replay 1 launched");
	return 0;
}

/* P2P_UNMATCHED in a replay: the ring exchange of a pipeline (a group:
 * send to the next, receive from the previous, on comm A) captured into a
 * graph on every rank, but rank 2's graph lacks the receive. Replay 1:
 * rank 1's send to rank 2 is never received (rank 1's replay stays
 * pending); the world AllReduce queued behind it never starts on rank 1,
 * ranks 0,2,3 wait in theirs. */
static int case_graph_pipeline(struct sc *c)
{
	init_world(c);
	split(c, 0, 0);
	for (int step = 1; step <= WARM; step++) {
		ring_exchange(c, c->comm[0], c->s, 1, 1);
		allreduce(c, c->world, c->s);
		sync_stream(c, c->s);
	}
	CUgraph graph = NULL;
	CUgraphExec exec = NULL;
	cuda_ok(c, cuStreamBeginCapture(c->s2, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
	ring_exchange(c, c->comm[0], c->s2, 1, c->rank != 2);
	cuda_ok(c, cuStreamEndCapture(c->s2, &graph), "cuStreamEndCapture");
	cuda_ok(c, cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
	cuda_ok(c, cuGraphLaunch(exec, c->s), "cuGraphLaunch");
	allreduce(c, c->world, c->s);
	hang_on(c, c->s, "replay 1 and AllReduce #5 issued");
	return 0;
}

/* Healthy: a graph captured, launched and destroyed every step (as a
 * program that re-captures per shape does), SCENARIO_GRAPH_STEPS steps
 * (300: more graphs than the library's table holds at once, 256, so its
 * entries must be given back), then eager steps. */
static int case_graph_per_step(struct sc *c)
{
	const char *e = getenv("SCENARIO_GRAPH_STEPS");
	int steps = e && atoi(e) > 0 ? atoi(e) : 300;
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	for (int step = 0; step < steps; step++) {
		CUgraph graph = NULL;
		CUgraphExec exec = graph_of_allreduce(c, -1, 0, &graph);
		cuda_ok(c, cuGraphLaunch(exec, c->s), "cuGraphLaunch");
		sync_stream(c, c->s);
		cuda_ok(c, cuGraphExecDestroy(exec), "cuGraphExecDestroy");
		cuda_ok(c, cuGraphDestroy(graph), "cuGraphDestroy");
	}
	warm(c, &c->world, 1, c->s, 2);
	finish(c);
	return 0;
}


/* Desync across comms on separate streams: a minority issues comm B's #5,
 * the others comm A's #5. */
static int desync_case(struct sc *c, int first_b)
{
	init_world(c);
	split(c, 0, 0);
	split(c, 1, 0);
	for (int step = 0; step < WARM; step++) {
		allreduce(c, c->comm[0], c->s);
		allreduce(c, c->comm[1], c->s2);
		sync_stream(c, c->s);
		sync_stream(c, c->s2);
	}
	if (c->rank >= first_b) {
		allreduce(c, c->comm[1], c->s2);
		hang_on(c, c->s2, "comm B's step 5 issued");
	} else {
		allreduce(c, c->comm[0], c->s);
		hang_on(c, c->s, "comm A's step 5 issued");
	}
	return 0;
}
static int case_desync_sym(struct sc *c) { return desync_case(c, 3); }
static int case_desync_sym8(struct sc *c) { return desync_case(c, 6); }

/* One rank runs one step more than the others, which destroy their comms
 * and exit 0. */
static int case_extra_step(struct sc *c)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM + 1);
	if (c->rank == 2) {
		allreduce(c, c->world, c->s);
		hang_on(c, c->s, "step 6 issued (the others stopped at 5)");
		return 0;
	}
	parked(c, "finished 5 steps");
	finish(c);
	return 0;
}

/* The mirror of extra-step: rank 1 finishes (finalizes, destroys, exits 0)
 * after 4 steps, the others run a 5th: rank 1 left early. */
static int case_leave_early(struct sc *c)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	if (c->rank == 1) {
		parked(c, "finished after 4 steps");
		finish(c);
		return 0;
	}
	allreduce(c, c->world, c->s);
	hang_on(c, c->s, "step 5 issued (rank 1 finished after 4)");
	return 0;
}

/* Send/recv ring on comm A (a split of the world), then an AllReduce on
 * the world, each step. At step 5 `who` leaves out its receive
 * (leave=1) or its send (leave=2). */
static int ring_case(struct sc *c, int who, int leave)
{
	init_world(c);
	split(c, 0, 0);
	for (int step = 1; step <= WARM + 1; step++) {
		int faulty = step == WARM + 1 && c->rank == who;
		ring_exchange(c, c->comm[0], c->s, !(faulty && leave == 2), !(faulty && leave == 1));
		allreduce(c, c->world, c->s);
		end_step(c, step);
	}
	return 0;
}
static int case_ring_missing_recv(struct sc *c) { return ring_case(c, 2, 1); }
static int case_ring_missing_send(struct sc *c) { return ring_case(c, 1, 2); }

/* A pipeline forward pass of M micro-batches: stage s receives from s-1
 * and sends to s+1, one micro-batch at a time (no group), then the world
 * AllReduce. At step 5 rank 2 schedules M-1 micro-batches. */
static int case_pipeline_mismatch(struct sc *c)
{
	init_world(c);
	split(c, 0, 0);
	ncclComm_t p = c->comm[0];
	int me = rank_of(p), n = size_of(p);
	for (int step = 1; step <= WARM + 1; step++) {
		int micro = (step == WARM + 1 && c->rank == 2) ? 3 : 4;
		for (int m = 0; m < micro; m++) {
			if (me > 0)
				nccl_ok(c, ncclRecv((void *)c->buf2, (size_t)c->count, ncclFloat, me - 1, p, c->s), "ncclRecv");
			if (me < n - 1)
				nccl_ok(c, ncclSend((void *)c->buf2, (size_t)c->count, ncclFloat, me + 1, p, c->s), "ncclSend");
		}
		allreduce(c, c->world, c->s);
		end_step(c, step);
	}
	return 0;
}

/* A true cycle: at step 5 every rank sends to the next and then receives
 * from the previous, outside a group, on one stream. */
static int case_p2p_cycle(struct sc *c)
{
	init_world(c);
	for (int step = 1; step <= WARM; step++) {
		ring_exchange(c, c->world, c->s, 1, 1);
		sync_stream(c, c->s);
	}
	int me = c->rank, n = c->n;
	nccl_ok(c, ncclSend((void *)c->buf2, (size_t)c->count, ncclFloat, (me + 1) % n, c->world, c->s), "ncclSend");
	nccl_ok(c, ncclRecv((void *)c->buf, (size_t)c->count, ncclFloat, (me + n - 1) % n, c->world, c->s), "ncclRecv");
	hang_on(c, c->s, "step 5 issued (send before receive, no group)");
	return 0;
}

/* Healthy: groups of send/recv, every rank to every other, 8 steps. */
static int case_p2p_groups(struct sc *c)
{
	init_world(c);
	for (int step = 0; step < 8; step++) {
		nccl_ok(c, ncclGroupStart(), "ncclGroupStart");
		for (int peer = 0; peer < c->n; peer++) {
			if (peer == c->rank)
				continue;
			nccl_ok(c, ncclSend((void *)c->buf2, 256, ncclFloat, peer, c->world, c->s), "ncclSend");
			nccl_ok(c, ncclRecv((void *)c->buf, 256, ncclFloat, peer, c->world, c->s), "ncclRecv");
		}
		nccl_ok(c, ncclGroupEnd(), "ncclGroupEnd");
		allreduce(c, c->world, c->s);
		sync_stream(c, c->s);
	}
	finish(c);
	return 0;
}

/* Init: rank 3 uses its own unique id. */
static int case_init_wrong_id(struct sc *c)
{
	get_id(c);
	if (c->rank == 3)
		nccl_ok(c, ncclGetUniqueId(&c->id), "ncclGetUniqueId");
	parked(c, "entering init");
	nccl_ok(c, ncclCommInitRank(&c->world, c->n, c->id, c->rank), "ncclCommInitRank");
	line("rank %d: init returned after all", c->rank);
	idle_forever(c, "after init");
}

/* Init: rank 3 believes the job has one rank more. */
static int case_init_wrong_nranks(struct sc *c)
{
	get_id(c);
	parked(c, "entering init");
	nccl_ok(c, ncclCommInitRank(&c->world, c->rank == 3 ? c->n + 1 : c->n, c->id, c->rank), "ncclCommInitRank");
	line("rank %d: init returned after all", c->rank);
	idle_forever(c, "after init");
}

/* Init: the lower half of the ranks pass nranks n/2, the upper half n, on
 * one unique id: a tie of sizes; n counts the ranks that entered. */
static int case_init_half_nranks(struct sc *c)
{
	get_id(c);
	parked(c, "entering init");
	nccl_ok(c, ncclCommInitRank(&c->world, c->rank < c->n / 2 ? c->n / 2 : c->n, c->id, c->rank), "ncclCommInitRank");
	line("rank %d: init returned after all", c->rank);
	idle_forever(c, "after init");
}

/* Init: the lower half pass nranks n+1, the upper half n+2: a tie of
 * sizes, and neither counts the ranks that entered. */
static int case_init_tie_nranks(struct sc *c)
{
	get_id(c);
	parked(c, "entering init");
	nccl_ok(c, ncclCommInitRank(&c->world, c->rank < c->n / 2 ? c->n + 1 : c->n + 2, c->id, c->rank), "ncclCommInitRank");
	line("rank %d: init returned after all", c->rank);
	idle_forever(c, "after init");
}

/* Init: rank 2 skips the split its peers make after step 4 and goes on
 * with the world's step 5. */
static int case_split_skip(struct sc *c)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	if (c->rank != 2) {
		parked(c, "entering ncclCommSplit");
		split(c, 0, 0);
		line("rank %d: split returned after all", c->rank);
		idle_forever(c, "after split");
	}
	allreduce(c, c->world, c->s);
	hang_on(c, c->s, "step 5 issued without the split");
	return 0;
}

/* Init: rank 1 builds its config by hand (no NCCL_CONFIG_INITIALIZER): its
 * init returns an error and it exits 4. */
static int case_init_error(struct sc *c)
{
	get_id(c);
	if (c->rank == 1) {
		ncclConfig_t config;
		memset(&config, 0, sizeof config);
		config.blocking = 1;
		parked(c, "entering init with a zeroed config");
		nccl_ok(c, ncclCommInitRankConfig(&c->world, c->n, c->id, c->rank, &config), "ncclCommInitRankConfig");
		return 0;
	}
	parked(c, "entering init");
	nccl_ok(c, ncclCommInitRank(&c->world, c->n, c->id, c->rank), "ncclCommInitRank");
	idle_forever(c, "after init");
}

/* Init: rank `who` never calls NCCL at all: it idles (exits=0) or exits 0. */
static int noinit_case(struct sc *c, int who, int exits)
{
	if (c->rank == who) {
		if (exits) {
			parked(c, "leaving before init");
			return 0;
		}
		idle_forever(c, "never initializing");
	}
	get_id(c);
	parked(c, "entering init");
	nccl_ok(c, ncclCommInitRank(&c->world, c->n, c->id, c->rank), "ncclCommInitRank");
	idle_forever(c, "after init");
}
static int case_noinit(struct sc *c) { return noinit_case(c, 3, 0); }
static int case_noinit_exit(struct sc *c) { return noinit_case(c, 2, 1); }

/* A rank returns early with status `status`, its comms alive. */
static int early_case(struct sc *c, int who, int status)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	if (c->rank == who) {
		parked(c, "returning early, communicators alive");
		return status;
	}
	allreduce(c, c->world, c->s);
	hang_on(c, c->s, "step 5 issued");
	return 0;
}
static int case_early_exit(struct sc *c) { return early_case(c, 3, 0); }
static int case_exit_nonzero(struct sc *c) { return early_case(c, 1, 3); }

/* Early exit in a job of two comms (data parallel over all, tensor
 * parallel in pairs): rank 6 returns after step 4. */
static int case_early_exit_split(struct sc *c)
{
	init_world(c);
	split(c, 0, c->rank / 2);
	ncclComm_t order[2] = { c->comm[0], c->world };
	warm(c, order, 2, c->s, WARM);
	if (c->rank == 6) {
		parked(c, "returning early, communicators alive");
		return 0;
	}
	allreduce(c, c->comm[0], c->s);
	allreduce(c, c->world, c->s);
	hang_on(c, c->s, "step 5 issued");
	return 0;
}

/* MISMATCH at AllReduce #5 on rank `who`. kind: 1 count (x2, the minority
 * waits for chunks never sent... see cases.txt), 2 datatype, 3 Broadcast
 * instead of AllReduce, 4 redop, 5 same-size datatype. A rank whose op
 * completes with a wrong result notices it (exit 3) where that is what a
 * training loop would do (a loss check). */
static int mismatch_case(struct sc *c, int who, int kind)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	int me = c->rank == who;
	size_t count = (size_t)c->count;
	if (me && kind == 1)
		allreduce_as(c, c->world, c->s, count / 2, ncclFloat, ncclSum);
	else if (me && kind == 2)
		allreduce_as(c, c->world, c->s, count, ncclFloat16, ncclSum);
	else if (me && kind == 3)
		broadcast(c, c->world, 0, c->s);
	else if (me && kind == 4)
		allreduce_as(c, c->world, c->s, count, ncclFloat, ncclMax);
	else if (me && kind == 5)
		allreduce_as(c, c->world, c->s, count, ncclInt32, ncclSum);
	else
		allreduce(c, c->world, c->s);
	if (kind == 4 || kind == 5) { /* completes everywhere, wrong results unnoticed */
		sync_stream(c, c->s);
		warm(c, &c->world, 1, c->s, 2);
		quiet_pause(c);
		finish(c);
		return 0;
	}
	if (me && (kind == 1 || kind == 2)) { /* fewer bytes: it completes */
		sync_stream(c, c->s);
		parked(c, "a wrong result noticed, exiting 3");
		return EXIT_WRONG_RESULT;
	}
	hang_on(c, c->s, "step 5 issued");
	return 0;
}
static int case_mm_count(struct sc *c) { return mismatch_case(c, 1, 1); }
static int case_mm_dtype(struct sc *c) { return mismatch_case(c, 2, 2); }
static int case_mm_opkind(struct sc *c) { return mismatch_case(c, 3, 3); }
static int case_mm_redop(struct sc *c) { return mismatch_case(c, 1, 4); }
static int case_mm_dtype_size(struct sc *c) { return mismatch_case(c, 2, 5); }

/* MISMATCH of the root: Broadcast #5, rank 0 says root 1. */
static int case_mm_root(struct sc *c)
{
	init_world(c);
	for (int step = 0; step < WARM; step++) {
		broadcast(c, c->world, 0, c->s);
		sync_stream(c, c->s);
	}
	broadcast(c, c->world, c->rank == 0 ? 1 : 0, c->s);
	hang_on(c, c->s, "step 5 issued");
	return 0;
}

/* MISMATCH of count inside a tensor-parallel group of 4 (ranks 4-7), then
 * the world AllReduce. */
static int case_mm_count_split(struct sc *c)
{
	init_world(c);
	split(c, 0, c->rank / 4);
	ncclComm_t order[2] = { c->comm[0], c->world };
	warm(c, order, 2, c->s, WARM);
	if (c->rank == 6) {
		allreduce_as(c, c->comm[0], c->s, (size_t)c->count / 2, ncclFloat, ncclSum);
		sync_stream(c, c->s);
		parked(c, "a wrong result noticed, exiting 3");
		return EXIT_WRONG_RESULT;
	}
	allreduce(c, c->comm[0], c->s);
	allreduce(c, c->world, c->s);
	hang_on(c, c->s, "step 5 issued");
	return 0;
}

/* Plain steps on the world, for the simulation's own faults (NCCLSIM_FAULT:
 * stall, gpufault, slow, initstall): 12 AllReduces. Any step's wait may be
 * the last one, so every rank says "parked" before each. */
static int case_steps(struct sc *c)
{
	parked(c, "entering init");
	init_world(c);
	for (int step = 1; step <= 12; step++) {
		allreduce(c, c->world, c->s);
		parked(c, "waiting for a step");
		sync_stream(c, c->s);
	}
	finish(c);
	return 0;
}

/* STREAM_BLOCKED: rank `who` puts a host function that never returns on its
 * stream before AllReduce #5 (a data-loader callback stuck on a lock). */
static void CUDA_CB stuck_host_function(void *arg)
{
	(void)arg;
	for (;;)
		pause();
}
static int hostfn_case(struct sc *c, int who)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	if (c->rank == who)
		cuda_ok(c, cuLaunchHostFunc(c->s, stuck_host_function, NULL), "cuLaunchHostFunc");
	allreduce(c, c->world, c->s);
	hang_on(c, c->s, "step 5 issued");
	return 0;
}
static int case_hostfn_block(struct sc *c) { return hostfn_case(c, 2); }
static int case_hostfn_block8(struct sc *c) { return hostfn_case(c, 5); }

/* Rank 1's world AllReduce #5 waits on its stream behind comm B's #3 (B:
 * ranks 0-1), which rank 0 never issues. */
static int case_blocked_behind_missing(struct sc *c)
{
	init_world(c);
	split(c, 0, c->rank < 2 ? 0 : NCCL_SPLIT_NOCOLOR);
	for (int step = 1; step <= WARM; step++) {
		if (c->comm[0] && step <= 2)
			allreduce(c, c->comm[0], c->s);
		allreduce(c, c->world, c->s);
		sync_stream(c, c->s);
	}
	if (c->rank == 1)
		allreduce(c, c->comm[0], c->s); /* B #3: rank 0 skips it */
	allreduce(c, c->world, c->s);
	hang_on(c, c->s, "step 5 issued");
	return 0;
}

/* IDLE: every rank stuck before its first collective (all comms made). */
static int case_idle_all(struct sc *c)
{
	init_world(c);
	split(c, 0, 0);
	idle_forever(c, "compiling the first step for ever");
}

/* Rank 4 skips AllGather #5 (its data loader took another path) and
 * idles; the others wait in it. */
static int case_skip_allgather(struct sc *c)
{
	init_world(c);
	size_t part = (size_t)c->count / (size_t)c->n;
	for (int step = 1; step <= WARM + 1; step++) {
		if (step == WARM + 1 && c->rank == 4)
			idle_forever(c, "skipping AllGather #5");
		nccl_ok(c, ncclAllGather((void *)c->buf2, (void *)c->buf, part, ncclFloat, c->world, c->s), "ncclAllGather");
		end_step(c, step);
	}
	return 0;
}

/* Rank 1's world AllReduce #5 on stream s waits (cuStreamWaitEvent) for
 * an event recorded on stream s2 behind comm B's #3 (B: ranks 0-1), which
 * rank 0 never issues. */
static int case_blocked_cross_stream(struct sc *c)
{
	init_world(c);
	split(c, 0, c->rank < 2 ? 0 : NCCL_SPLIT_NOCOLOR);
	CUevent ev;
	cuda_ok(c, cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
	for (int step = 1; step <= WARM; step++) {
		if (c->comm[0] && step <= 2)
			allreduce(c, c->comm[0], c->s2);
		sync_stream(c, c->s2);
		allreduce(c, c->world, c->s);
		sync_stream(c, c->s);
	}
	if (c->rank == 1) {
		allreduce(c, c->comm[0], c->s2); /* B #3: rank 0 skips it */
		cuda_ok(c, cuEventRecord(ev, c->s2), "cuEventRecord");
		cuda_ok(c, cuStreamWaitEvent(c->s, ev, 0), "cuStreamWaitEvent");
	}
	allreduce(c, c->world, c->s);
	hang_on(c, c->s, "step 5 issued");
	return 0;
}

/* Rank 2 is killed (SIGKILL, as by the OOM killer) while it is inside its
 * init; run with NCCLSIM_FAULT=initstall:rank=2 so that it is still
 * there, before joining, when it dies. */
static void *killer(void *arg)
{
	struct sc *c = arg;
	nap_ms(500);
	parked(c, "killed inside init");
	raise(SIGKILL);
	return NULL;
}

static int case_die_in_init(struct sc *c)
{
	get_id(c);
	if (c->rank == 2) {
		pthread_t t;
		if (pthread_create(&t, NULL, killer, c) != 0)
			return EXIT_SETUP;
	} else {
		parked(c, "entering init");
	}
	nccl_ok(c, ncclCommInitRank(&c->world, c->n, c->id, c->rank), "ncclCommInitRank");
	idle_forever(c, "after init");
}

/* ---- healthy cases ----------------------------------------------------------- */

static int case_pause_long(struct sc *c)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, WARM);
	quiet_pause(c); /* a checkpoint save: nothing pending */
	warm(c, &c->world, 1, c->s, WARM);
	finish(c);
	return 0;
}

static int case_slow_progress(struct sc *c)
{
	init_world(c);
	for (int step = 0; step < 10; step++) {
		if (c->rank == 1)
			nap_ms(400); /* a slow data loader: far below the timeout */
		allreduce(c, c->world, c->s);
		sync_stream(c, c->s);
	}
	finish(c);
	return 0;
}

static int case_late_init(struct sc *c)
{
	nap_ms(c->rank == 3 ? 3500 : 2500); /* loading a model, longer than the timeout */
	init_world(c);
	warm(c, &c->world, 1, c->s, 6);
	finish(c);
	return 0;
}

static int case_nonblocking(struct sc *c)
{
	get_id(c);
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
	config.blocking = 0;
	ready(c, c->world, ncclCommInitRankConfig(&c->world, c->n, c->id, c->rank, &config),
	      "ncclCommInitRankConfig");
	for (int step = 0; step < 8; step++) {
		ready(c, c->world,
		      ncclAllReduce((void *)c->buf, (void *)c->buf, (size_t)c->count, ncclFloat, ncclSum, c->world, c->s),
		      "ncclAllReduce");
		CUresult q;
		while ((q = cuStreamQuery(c->s)) == CUDA_ERROR_NOT_READY)
			nap_ms(1);
		cuda_ok(c, q, "cuStreamQuery");
	}
	finish(c);
	return 0;
}

static int case_unused_split(struct sc *c)
{
	init_world(c);
	split(c, 0, c->rank % 2);  /* made for evaluation, never used */
	warm(c, &c->world, 1, c->s, WARM);
	quiet_pause(c);
	warm(c, &c->world, 1, c->s, 2);
	finish(c);
	return 0;
}

static int case_clean_end(struct sc *c)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, 6);
	finish(c);
	return 0;
}

static int case_idle_before_destroy(struct sc *c)
{
	init_world(c);
	split(c, 0, 0);
	ncclComm_t order[2] = { c->world, c->comm[0] };
	warm(c, order, 2, c->s, WARM);
	quiet_pause(c); /* evaluation on the host, comms alive, nothing pending */
	finish(c);
	return 0;
}

static int case_dp_tp_healthy(struct sc *c)
{
	init_world(c);
	split(c, 0, c->rank / 2);   /* tensor parallel pairs */
	split(c, 1, c->rank % 2);   /* data parallel over the pairs */
	for (int step = 0; step < 6; step++) {
		allreduce(c, c->comm[0], c->s);
		allreduce(c, c->comm[1], c->s);
		broadcast(c, c->world, 0, c->s);
		sync_stream(c, c->s);
	}
	finish(c);
	return 0;
}

/* Healthy: 3 steps, every rank aborts the comm (as after a recoverable
 * error), makes a new one from a new unique id, 3 more steps, clean end. */
static int case_abort_reinit(struct sc *c)
{
	init_world(c);
	warm(c, &c->world, 1, c->s, 3);
	nccl_ok(c, ncclCommAbort(c->world), "ncclCommAbort");
	c->world = NULL;
	char again[512];
	snprintf(again, sizeof again, "%s/again", c->dir);
	mkdir(again, 0700);
	const char *first = c->dir;
	c->dir = again;
	init_world(c);
	c->dir = first;
	warm(c, &c->world, 1, c->s, 3);
	finish(c);
	return 0;
}

static int case_ring_healthy(struct sc *c)
{
	init_world(c);
	split(c, 0, 0);
	for (int step = 0; step < 8; step++) {
		ring_exchange(c, c->comm[0], c->s, 1, 1);
		allreduce(c, c->world, c->s);
		sync_stream(c, c->s);
	}
	finish(c);
	return 0;
}

/* ---- the table ------------------------------------------------------------------ */

struct scenario_case {
	const char *name;
	int (*run)(struct sc *c);
	int min_ranks;
	const char *what;
};

static const struct scenario_case cases[] = {
	{ "order2", case_order2, 3, "rank 2 issues comm B's AllReduce #5 before comm A's, one stream" },
	{ "order3", case_order3, 2, "rank 1 issues C, A, B where the others issue A, B, C, one stream" },
	{ "order2-of5", case_order2_of5, 5, "ranks 1 and 3 issue B before A, one stream" },
	{ "order-pair", case_order_pair, 2, "2 ranks: rank 1 issues B before A, one stream" },
	{ "order-pair-first", case_order_pair_first, 2, "2 ranks: rank 1 issues B before A from step 1, one stream" },
	{ "order-pairs3", case_order_pairs3, 3, "pair comms P01,P12,P20 on one stream: rank 2 swaps its two at step 5, closing a cycle" },
	{ "order-pairs3-first", case_order_pairs3_first, 3, "pair comms P01,P12,P20 on one stream in a cycling order from step 1" },
	{ "order-pairs3-ok", case_order_pairs3_ok, 3, "healthy: pair comms on one stream, different non-cycling orders" },
	{ "order-subgroup", case_order_subgroup, 6, "rank 4 issues the world's #5 before its group's" },
	{ "two-streams-any-order", case_two_streams_any_order, 3, "healthy: comms on separate streams, any order" },
	{ "same-order-one-stream", case_same_order_one_stream, 2, "healthy: three comms, one stream, one order" },
	{ "die-before", case_die_before, 3, "rank 2 SIGKILLs itself before AllReduce #5" },
	{ "die-inside", case_die_inside, 2, "rank 1 SIGKILLs itself inside AllReduce #5" },
	{ "die-inside-bcast", case_die_inside_bcast, 6, "rank 5 SIGKILLs itself inside Broadcast #5" },
	{ "capture-nolaunch", case_capture_nolaunch, 2, "rank 1 captures AllReduce #5, never launches it" },
	{ "capture-launch", case_capture_launch, 2, "healthy: every rank captures #5 and launches it" },
	{ "graph-late-launch", case_graph_late_launch, 2, "healthy: every rank captures #5, issues #6, then launches the graph (3 steps)" },
	{ "graph-count", case_graph_count, 2, "rank 1's graph holds AllReduce #5 with half the count (replay 1)" },
	{ "graph-update", case_graph_update, 2, "every rank updates its graph's exec to AllReduce #6, rank 1's with half the count (replay 1)" },
	{ "graph-update-lost", case_graph_update_lost, 2, "healthy: an exec updated from a graph past the library's table (256 graphs)" },
	{ "graph-hostfn", case_graph_hostfn, 3, "rank 2's replay 3 of the graph waits behind a host function that never returns" },
	{ "graph-pipeline", case_graph_pipeline, 3, "rank 2's graph of the ring exchange lacks the receive (replay 1)" },
	{ "graph-per-step", case_graph_per_step, 2, "healthy: a graph captured, launched and destroyed every step (SCENARIO_GRAPH_STEPS, 300)" },
	{ "graph-replay", case_graph_replay, 2, "healthy: every rank captures #5 and launches the graph 10 times (SCENARIO_GRAPH_SHORT=R: R 9 times)" },
	{ "desync-sym", case_desync_sym, 4, "ranks 0-2 in comm A's #5, rank 3 in comm B's #5" },
	{ "desync-sym8", case_desync_sym8, 7, "ranks 0-5 in comm A's #5, ranks 6-7 in comm B's #5" },
	{ "extra-step", case_extra_step, 3, "rank 2 runs a 6th step; the others finish and exit 0" },
	{ "leave-early", case_leave_early, 2, "rank 1 finishes after 4 steps; the others run a 5th" },
	{ "ring-missing-recv", case_ring_missing_recv, 3, "rank 2 leaves out its receive in ring step 5" },
	{ "ring-missing-send", case_ring_missing_send, 3, "rank 1 leaves out its send in ring step 5" },
	{ "pipeline-mismatch", case_pipeline_mismatch, 4, "rank 2 schedules 3 micro-batches, the others 4" },
	{ "p2p-cycle", case_p2p_cycle, 2, "every rank sends before it receives, no group" },
	{ "p2p-groups", case_p2p_groups, 2, "healthy: all-to-all send/recv in groups" },
	{ "init-wrong-id", case_init_wrong_id, 4, "rank 3 inits with its own unique id" },
	{ "init-wrong-nranks", case_init_wrong_nranks, 4, "rank 3 inits with nranks + 1" },
	{ "init-half-nranks", case_init_half_nranks, 4, "ranks below n/2 init with nranks n/2, the others with n" },
	{ "init-tie-nranks", case_init_tie_nranks, 4, "ranks below n/2 init with nranks n+1, the others with n+2" },
	{ "split-skip", case_split_skip, 3, "rank 2 skips the ncclCommSplit its peers make" },
	{ "init-error", case_init_error, 2, "rank 1's init returns an error, it exits 4" },
	{ "noinit", case_noinit, 4, "rank 3 never calls NCCL (no file)" },
	{ "noinit-exit", case_noinit_exit, 3, "rank 2 exits 0 before any NCCL call (no file)" },
	{ "early-exit", case_early_exit, 4, "rank 3 returns after step 4 with its comm alive, exit 0" },
	{ "exit-nonzero", case_exit_nonzero, 2, "rank 1 exits 3 after step 4 with its comm alive" },
	{ "early-exit-split", case_early_exit_split, 8, "rank 6 of 8 returns, comms alive (world + pairs)" },
	{ "mm-count", case_mm_count, 2, "rank 1's AllReduce #5 has half the count" },
	{ "mm-dtype", case_mm_dtype, 3, "rank 2's AllReduce #5 is float16" },
	{ "mm-opkind", case_mm_opkind, 4, "rank 3's #5 is a Broadcast" },
	{ "mm-root", case_mm_root, 2, "rank 0's Broadcast #5 has root 1" },
	{ "mm-redop", case_mm_redop, 2, "rank 1's AllReduce #5 reduces with max; completes" },
	{ "mm-dtype-size", case_mm_dtype_size, 3, "rank 2's AllReduce #5 is int32 (same size); completes" },
	{ "mm-count-split", case_mm_count_split, 8, "rank 6's group AllReduce #5 has half the count" },
	{ "steps", case_steps, 2, "12 AllReduces; NCCLSIM_FAULT decides the fault" },
	{ "hostfn-block", case_hostfn_block, 3, "rank 2's stream holds a host function that never returns" },
	{ "hostfn-block8", case_hostfn_block8, 6, "rank 5's stream holds a host function that never returns" },
	{ "blocked-behind-missing", case_blocked_behind_missing, 3, "rank 1's world #5 behind comm B #3 rank 0 skipped" },
	{ "idle-all", case_idle_all, 2, "every rank idles before its first collective" },
	{ "skip-allgather", case_skip_allgather, 5, "rank 4 skips AllGather #5 and idles" },
	{ "blocked-cross-stream", case_blocked_cross_stream, 3, "rank 1's world #5 waits on an event behind comm B #3 rank 0 skipped" },
	{ "die-in-init", case_die_in_init, 3, "rank 2 is SIGKILLed inside its (non-blocking) init" },
	{ "pause-long", case_pause_long, 2, "healthy: a pause longer than the timeout, nothing pending" },
	{ "slow-progress", case_slow_progress, 2, "healthy: rank 1 is 400 ms late every step" },
	{ "late-init", case_late_init, 4, "healthy: init after 2.5-3.5 s of setup" },
	{ "nonblocking", case_nonblocking, 2, "healthy: non-blocking comm, polled" },
	{ "unused-split", case_unused_split, 2, "healthy: a split never used, a long pause" },
	{ "clean-end", case_clean_end, 2, "healthy: 6 steps, destroy, exit 0" },
	{ "idle-before-destroy", case_idle_before_destroy, 2, "healthy: a long pause before destroy" },
	{ "dp-tp", case_dp_tp_healthy, 4, "healthy: tensor and data parallel comms, one stream" },
	{ "ring-healthy", case_ring_healthy, 2, "healthy: grouped ring exchange + AllReduce" },
	{ "abort-reinit", case_abort_reinit, 2, "healthy: abort the comm, a new one from a new id" },
};
#define NCASES (sizeof cases / sizeof cases[0])

struct job {
	const struct scenario_case *sc;
	const char *dir;
	long count;
	int env_rank;           /* --rank-env R:NAME=VALUE: R's environment, or -1 */
	char *env_setting;
};

static int run_rank(const struct rank_info *who, void *arg)
{
	const struct job *job = arg;
	if (job->env_rank == who->rank && putenv(job->env_setting) != 0)
		return EXIT_SETUP;
	/* Real NCCL refuses two ranks on one GPU of one host ("Duplicate GPU
	 * detected"): with a host id of its own each rank is a host (the GPU
	 * check runs the corpus on one GPU this way, over sockets). */
	if (getenv("SCENARIO_HOSTID_PER_RANK")) {
		char id[64];
		snprintf(id, sizeof id, "scenario-%d-rank%d", (int)getppid(), who->rank);
		setenv("NCCL_HOSTID", id, 1);
	}
	struct sc c = { .who = *who, .rank = who->rank, .n = who->world_size, .dir = job->dir, .count = job->count };
	setup_device(&c);
	return job->sc->run(&c);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: scenario --case NAME [--nranks N] [--count C] [--dir DIR]\n"
	           "       scenario --list\n"
	           "A hang (or healthy) program of ncclwatch's scenario corpus; see tests/corpus/cases.txt.\n"
	           "  --nranks N  fork N local ranks (else torchrun/mpirun/srun variables)\n"
	           "  --count C   float elements per AllReduce (default 1024)\n"
	           "  --dir DIR   rendezvous directory (default a private one per job)\n"
	           "  --rank-env R:NAME=VALUE  rank R alone runs with NAME=VALUE (set before its init)\n"
	           "Environment: SCENARIO_HOSTID_PER_RANK=1 gives each rank an NCCL_HOSTID of its own\n"
	           "(real NCCL, several ranks on one GPU).\n");
}

int main(int argc, char **argv)
{
	const char *name = NULL, *dir = NULL;
	int nranks = 0, env_rank = -1;
	long count = 1024;
	char *env_setting = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--list")) {
			for (size_t k = 0; k < NCASES; k++)
				printf("%-24s %d+ ranks  %s\n", cases[k].name, cases[k].min_ranks, cases[k].what);
			return 0;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--case") && v) {
			name = v, i++;
		} else if (!strcmp(a, "--nranks") && v) {
			nranks = atoi(v), i++;
		} else if (!strcmp(a, "--count") && v) {
			count = atol(v), i++;
		} else if (!strcmp(a, "--dir") && v) {
			dir = v, i++;
		} else if (!strcmp(a, "--rank-env") && v && strchr(v, ':') && strchr(strchr(v, ':'), '=')) {
			env_rank = atoi(v);
			env_setting = strchr(v, ':') + 1;
			i++;
		} else {
			fprintf(stderr, "scenario: unknown or incomplete argument '%s'\n", a);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	const struct scenario_case *sc = NULL;
	for (size_t k = 0; name && k < NCASES; k++)
		if (!strcmp(cases[k].name, name))
			sc = &cases[k];
	if (!sc) {
		fprintf(stderr, "scenario: %s (--list shows the cases)\n", name ? "no such case" : "--case is required");
		return EXIT_USAGE;
	}
	if (count < 2) {
		fprintf(stderr, "scenario: --count must be at least 2\n");
		return EXIT_USAGE;
	}
	struct rank_info who = { 0, 0, 0, "none" };
	if (nranks <= 0 && rank_from_environment(&who) < 0)
		return EXIT_USAGE;
	int world = nranks > 0 ? nranks : who.world_size;
	if (world < sc->min_ranks || world > 8) {
		fprintf(stderr, "scenario: case %s needs %d to 8 ranks, not %d\n", sc->name, sc->min_ranks, world);
		return EXIT_USAGE;
	}
	char *own = NULL;
	if (!dir) {
		char key[48];
		snprintf(key, sizeof key, "scenario-%d", nranks > 0 ? (int)getpid() : (int)getppid());
		if (nranks <= 0)
			snprintf(key, sizeof key, "scenario-%s", launcher_job_key());
		dir = own = default_rendezvous_dir(key);
		if (!own)
			return EXIT_SETUP;
	}
	mkdir(dir, 0700);
	struct job job = { sc, dir, count, env_rank, env_setting };
	int status = nranks > 0 ? launch_local_ranks(nranks, run_rank, &job) : run_rank(&who, &job);
	if (own && nranks > 0) { /* ours alone: every rank is gone */
		char p[600];
		snprintf(p, sizeof p, "%s/again", own);
		rendezvous_remove(p);
		rmdir(p);
		snprintf(p, sizeof p, "%s/flag-dead", own);
		unlink(p);
		rendezvous_remove(own);
		rmdir(own);
	}
	free(own);
	return status;
}
