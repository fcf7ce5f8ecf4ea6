/* hangfuzz: a random NCCL job from a seed, one injected fault, and the
 * answer its construction gives (issue 21; plan.h says what is built).
 * Written against cuda.h and nccl.h only, like tests/corpus/scenario.c,
 * and driven by the same corpus harness (tests/corpus/corpus-lib.sh).
 *
 *   hangfuzz --seed S [--nranks N] [--dir DIR]   run the job (N: the plan's ranks,
 *                                                 forked as N/rpp processes)
 *   hangfuzz --seed S --plan [--ranks N]         the job in words
 *   hangfuzz --seed S --case [--ranks N]         its tests/corpus/cases.txt line
 *
 * Lines the harness reads: "corpus: rank R parked: WHY" (the rank reached
 * its last state), "corpus: check" (a healthy job worth a live look; it
 * ends once DIR/checked exists), "corpus: rank R done", "corpus: pid P
 * ranks A-B" (the ranks a process drives: the attach view's judge names
 * a culprit given by pid as them, tests/corpus/judge.py).
 */
#include "plan.h"
#include "../../examples/trainer.h"

#include <cuda.h>
#include <nccl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct hf {
	const struct hf_plan *p;
	int rank;
	const char *dir;
	CUcontext ctx;
	CUstream s[3];           /* 0, 1: the plan's streams; 2: graphs are captured on it */
	CUdeviceptr buf, buf2;
	ncclComm_t comm[HF_NCOMMS];
	CUgraph graph[2];        /* A, and B (HF_G_OTHER, HF_G_PEER with one capture) */
	CUgraphExec exec[2];
};

/* The ranks one thread drives: one, or (one thread per process) all of
 * its process's, each op issued for all of them in one group. */
struct driver {
	const struct hf_plan *p;
	int n;
	struct hf *r;
};

static void line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void line(const char *fmt, ...)
{
	char b[512];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(b, sizeof b - 1, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	if (k > (int)sizeof b - 2)
		k = (int)sizeof b - 2;
	b[k++] = '\n';
	if (write(STDOUT_FILENO, b, (size_t)k) < 0) {
		/* nowhere to say it */
	}
}

static void parked_rank(int rank, const char *why) { line("corpus: rank %d parked: %s", rank, why); }

static void parked(struct driver *d, const char *why)
{
	for (int i = 0; i < d->n; i++)
		parked_rank(d->r[i].rank, why);
}

/* Before the whole process goes: every rank of it reached its last state. */
static void parked_process(const struct hf_plan *p, int rank, const char *why)
{
	int first = rank - rank % p->rpp;
	for (int r = first; r < first + p->rpp; r++)
		parked_rank(r, why);
}

static void cuda_ok(struct hf *h, CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return;
	const char *name = NULL;
	cuGetErrorName(r, &name);
	line("rank %d: %s failed: %s", h->rank, what, name ? name : "?");
	exit(EXIT_CUDA_ERROR);
}

static void nccl_ok(struct hf *h, ncclResult_t r, const char *what)
{
	if (r == ncclSuccess)
		return;
	line("rank %d: %s failed: %s", h->rank, what, ncclGetErrorString(r));
	exit(EXIT_NCCL_ERROR);
}

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, ms % 1000 * 1000000L };
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

static __attribute__((noreturn)) void idle_forever(struct driver *d, const char *why)
{
	parked(d, why);
	for (;;)
		pause();
}

static void flag_path(struct hf *h, char *p, size_t n) { snprintf(p, n, "%s/flag-dead", h->dir); }

static void use(struct hf *h) { cuda_ok(h, cuCtxSetCurrent(h->ctx), "cuCtxSetCurrent"); }

/* A group around the ranks' calls when one thread drives several. */
static void group_start(struct driver *d)
{
	if (d->n > 1)
		nccl_ok(&d->r[0], ncclGroupStart(), "ncclGroupStart");
}
static void group_end(struct driver *d)
{
	if (d->n > 1)
		nccl_ok(&d->r[0], ncclGroupEnd(), "ncclGroupEnd");
}

/* ---- set-up ------------------------------------------------------------------ */

/* Rank h's device: the process's devices 0..rpp-1 in rank order (one
 * process per host, or per GPU as torchrun's LOCAL_RANK). */
static void setup_device(struct hf *h, int device)
{
	const struct hf_plan *p = h->p;
	CUdevice dev;
	int devices = 0;
	cuda_ok(h, cuDeviceGetCount(&devices), "cuDeviceGetCount");
	if (devices < 1) {
		line("rank %d: no CUDA device", h->rank);
		exit(EXIT_CUDA_ERROR);
	}
	cuda_ok(h, cuDeviceGet(&dev, device % devices), "cuDeviceGet");
	cuda_ok(h, cuDevicePrimaryCtxRetain(&h->ctx, dev), "cuDevicePrimaryCtxRetain");
	use(h);
	for (int i = 0; i < 3; i++)
		cuda_ok(h, cuStreamCreate(&h->s[i], CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	size_t bytes = (size_t)p->count * 2 * sizeof(double); /* room for any mismatch */
	cuda_ok(h, cuMemAlloc(&h->buf, bytes), "cuMemAlloc");
	cuda_ok(h, cuMemAlloc(&h->buf2, bytes), "cuMemAlloc");
	cuda_ok(h, cuMemsetD8(h->buf, 0, bytes), "cuMemsetD8");
	cuda_ok(h, cuMemsetD8(h->buf2, 0, bytes), "cuMemsetD8");
}

/* The split comms of the world (TP, DP), in the ranks' order. The split
 * is collective over the world: a rank of no group of it (tp_nocolor)
 * calls it too, with NCCL_SPLIT_NOCOLOR, and gets no comm. */
static void split_comms(struct driver *d)
{
	const struct hf_plan *p = d->p;
	for (int c = HF_TP; c < HF_NCOMMS; c++) {
		if (!hf_comm_size(p, (enum hf_comm)c, 0))
			continue; /* no such split in this job */
		group_start(d);
		for (int i = 0; i < d->n; i++) {
			struct hf *h = &d->r[i];
			use(h);
			nccl_ok(h, ncclCommSplit(h->comm[HF_WORLD], hf_color(p, (enum hf_comm)c, h->rank), h->rank,
			                         &h->comm[c], NULL),
			        "ncclCommSplit");
		}
		group_end(d);
	}
}

/* The split comms' end (resplit: at each step's end). */
static void destroy_splits(struct driver *d)
{
	for (int c = HF_NCOMMS - 1; c > HF_WORLD; c--) {
		group_start(d);
		for (int i = 0; i < d->n; i++)
			if (d->r[i].comm[c])
				nccl_ok(&d->r[i], ncclCommFinalize(d->r[i].comm[c]), "ncclCommFinalize");
		group_end(d);
		for (int i = 0; i < d->n; i++) {
			if (!d->r[i].comm[c])
				continue;
			nccl_ok(&d->r[i], ncclCommDestroy(d->r[i].comm[c]), "ncclCommDestroy");
			d->r[i].comm[c] = NULL;
		}
	}
}

static void setup_comms(struct driver *d)
{
	const struct hf_plan *p = d->p;
	struct hf *h0 = &d->r[0];
	ncclUniqueId id;
	if (h0->rank == 0) {
		nccl_ok(h0, ncclGetUniqueId(&id), "ncclGetUniqueId");
		if (rendezvous_publish(h0->dir, &id) < 0)
			exit(EXIT_SETUP);
	} else if (rendezvous_fetch(h0->dir, &id) < 0) {
		exit(EXIT_SETUP);
	}
	group_start(d);
	for (int i = 0; i < d->n; i++) {
		use(&d->r[i]);
		nccl_ok(&d->r[i], ncclCommInitRank(&d->r[i].comm[HF_WORLD], p->nranks, id, d->r[i].rank),
		        "ncclCommInitRank");
	}
	group_end(d);
	split_comms(d);
}

/* ---- ops --------------------------------------------------------------------- */

/* Deviations of the faulty rank's op (none for everyone else). */
struct dev {
	long count;
	ncclDataType_t type;
	int root_shift;
	int peer_shift_send, peer_shift_recv;
	ncclRedOp_t op;          /* ncclSum (0) unless HF_REDOP */
	int other_kind;          /* HF_KIND: the next collective kind instead */
	int die_in_group;        /* HF_DIE_GROUP: SIGKILL after the ring's send */
};

static void issue_on(struct hf *h, const struct hf_op *o, const struct dev *d, CUstream s)
{
	ncclComm_t comm = h->comm[o->comm];
	int size = hf_comm_size(h->p, o->comm, h->rank), me = hf_comm_rank(h->p, o->comm, h->rank);
	if (me < 0 || !comm)
		return; /* no member of the comm (its split gave it none, or it made none: HF_NOSPLIT) */
	int root = (o->root + d->root_shift) % size;
	void *a = (void *)h->buf, *b = (void *)h->buf2;
	size_t part = (size_t)d->count / (size_t)size;
	use(h);
	switch (d->other_kind ? (enum hf_op_kind)((o->kind + 1) % HF_RING) : o->kind) {
	case HF_ALLREDUCE:
		nccl_ok(h, ncclAllReduce(a, a, (size_t)d->count, d->type, d->op, comm, s), "ncclAllReduce");
		break;
	case HF_BROADCAST:
		nccl_ok(h, ncclBroadcast(b, b, (size_t)d->count, d->type, root, comm, s), "ncclBroadcast");
		break;
	case HF_REDUCE:
		nccl_ok(h, ncclReduce(a, b, (size_t)d->count, d->type, d->op, root, comm, s), "ncclReduce");
		break;
	case HF_ALLGATHER:
		nccl_ok(h, ncclAllGather(a, b, part, d->type, comm, s), "ncclAllGather");
		break;
	case HF_REDUCESCATTER:
		nccl_ok(h, ncclReduceScatter(a, b, part, d->type, d->op, comm, s), "ncclReduceScatter");
		break;
	case HF_PIPE: /* stage `me`: two micro-batches, receive then send, no group */
		for (int m = 0; m < 2; m++) {
			if (me > 0)
				nccl_ok(h, ncclRecv(a, part, d->type, me - 1, comm, s), "ncclRecv");
			if (me < size - 1)
				nccl_ok(h, ncclSend(b, part, d->type, me + 1, comm, s), "ncclSend");
		}
		break;
	case HF_RING:
		nccl_ok(h, ncclGroupStart(), "ncclGroupStart");
		nccl_ok(h, ncclSend(b, part, d->type, (me + 1 + d->peer_shift_send) % size, comm, s), "ncclSend");
		if (d->die_in_group) { /* its group open, the receive not yet issued */
			parked_process(h->p, h->rank, "die-group");
			raise(SIGKILL);
		}
		nccl_ok(h, ncclRecv(a, part, d->type, (me + 2 * size - 1 - d->peer_shift_recv) % size, comm, s),
		        "ncclRecv");
		nccl_ok(h, ncclGroupEnd(), "ncclGroupEnd");
		break;
	}
}

static void issue(struct hf *h, const struct hf_op *o, const struct dev *d)
{
	issue_on(h, o, d, h->s[o->stream]);
}

static void sync_all(struct driver *d)
{
	for (int r = 0; r < d->n; r++)
		for (int i = 0; i < d->p->nstreams; i++) {
			use(&d->r[r]);
			cuda_ok(&d->r[r], cuStreamSynchronize(d->r[r].s[i]), "cuStreamSynchronize");
		}
}

static void destroy_all(struct driver *d)
{
	for (int c = HF_NCOMMS - 1; c >= 0; c--) {
		group_start(d);
		for (int i = 0; i < d->n; i++)
			if (d->r[i].comm[c])
				nccl_ok(&d->r[i], ncclCommFinalize(d->r[i].comm[c]), "ncclCommFinalize");
		group_end(d);
		for (int i = 0; i < d->n; i++) {
			if (!d->r[i].comm[c])
				continue;
			nccl_ok(&d->r[i], ncclCommDestroy(d->r[i].comm[c]), "ncclCommDestroy");
			d->r[i].comm[c] = NULL;
		}
	}
}

static void CUDA_CB stuck_host_function(void *arg)
{
	(void)arg;
	for (;;)
		pause();
}

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held);
	for (;;)
		pause();
	return NULL;
}

/* What the victim h does instead of (or before) op j; returns 1 when op j
 * is then issued as planned (with *dv's deviations). */
static int deviate(struct driver *d, struct hf *h, const struct hf_op *o, struct dev *dv)
{
	const struct hf_plan *p = h->p;
	char why[128];
	snprintf(why, sizeof why, "%s at op %d", hf_fault_name(p->fault), p->at);
	switch (p->fault) {
	case HF_SKIP: return 0;
	case HF_COUNT: dv->count *= 2; return 1;
	case HF_DTYPE: dv->type = ncclDouble; return 1;
	case HF_ROOT: dv->root_shift = 1; return 1;
	case HF_SEND_PEER: dv->peer_shift_send = 1; return 1;
	case HF_RECV_PEER: dv->peer_shift_recv = 1; return 1;
	case HF_REDOP: dv->op = ncclMax; return 1;
	case HF_KIND: dv->other_kind = 1; return 1;
	case HF_DIE_GROUP: dv->die_in_group = 1; return 1;
	case HF_DIE_BEFORE:
		parked_process(p, h->rank, why);
		raise(SIGKILL);
		return 0;
	case HF_EXIT:
		parked_process(p, h->rank, why);
		exit(0);
	case HF_EXIT_DESTROY:
		sync_all(d);
		destroy_all(d);
		parked_process(p, h->rank, why);
		exit(0);
	case HF_SLEEP: idle_forever(d, why);
	case HF_LOCK: {
		pthread_t t;
		if (pthread_create(&t, NULL, holder, NULL) != 0)
			exit(EXIT_SETUP);
		nap_ms(100);
		parked(d, why);
		pthread_mutex_lock(&held);
		return 0;
	}
	case HF_HOSTFN:
		use(h);
		cuda_ok(h, cuLaunchHostFunc(h->s[o->stream], stuck_host_function, NULL), "cuLaunchHostFunc");
		return 1;
	default: return 1;
	}
}

/* ---- graphs (graph jobs: plan.h, HF_GRAPH_SEEDS) ------------------------------ */

/* Op j of a capture; deviant: the victim's graph of HF_G_OTHER / HF_G_PEER. */
static struct dev graph_dev(const struct hf_plan *p, int j, int deviant)
{
	struct dev dv = { .count = p->count, .type = ncclFloat, .op = ncclSum };
	if (!deviant || j != p->gop)
		return dv;
	if (p->fault == HF_G_OTHER && p->gdev == HF_GD_COUNT)
		dv.count *= 2;
	else if (p->fault == HF_G_OTHER && p->gdev == HF_GD_DTYPE)
		dv.type = ncclDouble;
	else if (p->fault == HF_G_OTHER && p->gdev == HF_GD_REDOP)
		dv.op = ncclMax;
	else if (p->fault == HF_G_PEER && p->gdev == HF_GD_SEND)
		dv.peer_shift_send = 1;
	else if (p->fault == HF_G_PEER)
		dv.peer_shift_recv = 1;
	return dv;
}

/* Captures ops g0..g1 into graph i of each rank r of d with takes[r] (on
 * its capture stream, this thread's captures only) and instantiates them;
 * deviant[r]: with the fault's deviation (HF_GD_ORDER: the first and last
 * op swapped). A thread that drives several ranks captures them together,
 * as it issues eager ops: every rank's capture begun, each op issued for
 * all of them in one group (NCCL wants one thread's ops of several ranks
 * in a group: alone, one rank's op may wait for its peers), then the
 * captures ended. */
static void capture(struct driver *d, const int *takes, int i, const int *deviant)
{
	static pthread_mutex_t one_at_a_time = PTHREAD_MUTEX_INITIALIZER;
	const struct hf_plan *p = d->p;
	if (p->serial_capture)
		pthread_mutex_lock(&one_at_a_time);
	for (int r = 0; r < d->n; r++)
		if (takes[r]) {
			use(&d->r[r]);
			cuda_ok(&d->r[r], cuStreamBeginCapture(d->r[r].s[2], CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
			        "cuStreamBeginCapture");
		}
	/* op by op (a group each), or rank by rank (rank_major: one group) */
	int nj = p->g1 - p->g0 + 1, outer = p->rank_major ? d->n : nj, inner = p->rank_major ? nj : d->n;
	if (p->rank_major)
		group_start(d);
	for (int a = 0; a < outer; a++) {
		if (!p->rank_major)
			group_start(d);
		for (int b = 0; b < inner; b++) {
			int r = p->rank_major ? a : b, j = p->g0 + (p->rank_major ? b : a);
			if (!takes[r])
				continue;
			int swap = deviant[r] && p->fault == HF_G_OTHER && p->gdev == HF_GD_ORDER;
			int k = swap && j == p->g0 ? p->g1 : swap && j == p->g1 ? p->g0 : j;
			struct dev dv = graph_dev(p, k, deviant[r]);
			issue_on(&d->r[r], &p->ops[k], &dv, d->r[r].s[2]);
		}
		if (!p->rank_major)
			group_end(d);
	}
	if (p->rank_major)
		group_end(d);
	for (int r = 0; r < d->n; r++)
		if (takes[r]) {
			struct hf *h = &d->r[r];
			use(h);
			cuda_ok(h, cuStreamEndCapture(h->s[2], &h->graph[i]), "cuStreamEndCapture");
		}
	for (int r = 0; r < d->n; r++)
		if (takes[r]) {
			struct hf *h = &d->r[r];
			use(h);
			cuda_ok(h, cuGraphInstantiateWithFlags(&h->exec[i], h->graph[i], 0), "cuGraphInstantiateWithFlags");
		}
	if (p->serial_capture)
		pthread_mutex_unlock(&one_at_a_time);
}

static void uncapture(struct hf *h, int i)
{
	use(h);
	if (h->exec[i])
		cuda_ok(h, cuGraphExecDestroy(h->exec[i]), "cuGraphExecDestroy");
	if (h->graph[i])
		cuda_ok(h, cuGraphDestroy(h->graph[i]), "cuGraphDestroy");
	h->exec[i] = NULL, h->graph[i] = NULL;
}

/* One capture for the whole job: graph A on every rank. With
 * serial_capture the threads of a process capture in rank order, and none
 * launches before all have captured: every rank's capture but the last
 * lies before another rank's capture of the same comm id. */
static void graphs_before(struct driver *d)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static pthread_cond_t moved = PTHREAD_COND_INITIALIZER;
	static int turn;
	static const int all[HF_MAX_RANKS] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, none[HF_MAX_RANKS];
	const struct hf_plan *p = d->p;
	if (p->graph != HF_GRAPH_REPLAY)
		return;
	if (!p->serial_capture) {
		capture(d, all, 0, none);
		return;
	}
	int me = d->r[0].rank % p->rpp;
	pthread_mutex_lock(&lock);
	while (turn != me)
		pthread_cond_wait(&moved, &lock);
	capture(d, all, 0, none);
	turn++;
	pthread_cond_broadcast(&moved);
	while (turn < p->rpp)
		pthread_cond_wait(&moved, &lock);
	pthread_mutex_unlock(&lock);
}

/* Rank h's launch of the step's graph on stream 0 (at the fault step, the
 * victim's deviation); hold: the peers of a victim that dies inside its
 * replay wait for that before they launch (not those of its own thread). */
static void graph_launch(struct hf *h, int fault_step, int hold)
{
	const struct hf_plan *p = h->p;
	int victim = fault_step && h->rank == p->victim;
	int deviant = victim && (p->fault == HF_G_OTHER || p->fault == HF_G_PEER);
	char flag[600];
	flag_path(h, flag, sizeof flag);
	if (victim && p->fault == HF_G_SKIP)
		return;
	if (victim && p->fault == HF_G_NOLAUNCH) { /* "launched by the next iteration": never */
		uncapture(h, 0);
		return;
	}
	use(h);
	if (victim && p->fault == HF_G_HOSTFN)
		cuda_ok(h, cuLaunchHostFunc(h->s[0], stuck_host_function, NULL), "cuLaunchHostFunc");
	if (fault_step && p->fault == HF_G_DIE && hold)
		while (access(flag, F_OK) != 0)
			nap_ms(10);
	cuda_ok(h, cuGraphLaunch(h->exec[deviant && p->graph == HF_GRAPH_REPLAY], h->s[0]), "cuGraphLaunch");
	if (victim && p->fault == HF_G_DIE) {
		nap_ms(500); /* started, waiting for the held-back peers */
		parked_process(p, p->victim, "graph-die");
		FILE *f = fopen(flag, "w");
		if (f)
			fclose(f);
		raise(SIGKILL);
	}
}

/* The step's ops g0..g1 on d's ranks: per step, each rank's graph captured
 * (together) and launched, destroyed at the step's end; captured once,
 * launched; at the fault step, the victim's deviation (HF_G_OTHER,
 * HF_G_PEER with one capture: its graph B, captured now, its shape
 * changed). One thread of several ranks launches them in rank order, or
 * (launch_reversed) last rank first. */
static void graph_step(struct driver *d, int fault_step)
{
	const struct hf_plan *p = d->p;
	int takes[HF_MAX_RANKS], deviant[HF_MAX_RANKS], any = 0, holds_victim = 0;
	for (int r = 0; r < d->n; r++) {
		int victim = fault_step && d->r[r].rank == p->victim;
		holds_victim |= d->r[r].rank == p->victim;
		deviant[r] = victim && (p->fault == HF_G_OTHER || p->fault == HF_G_PEER);
		takes[r] = !(victim && p->fault == HF_G_SKIP) && (p->graph == HF_GRAPH_PER_STEP || deviant[r]);
		any |= takes[r];
	}
	if (any)
		capture(d, takes, p->graph == HF_GRAPH_PER_STEP ? 0 : 1, deviant);
	for (int k = 0; k < d->n; k++)
		graph_launch(&d->r[p->launch_reversed ? d->n - 1 - k : k], fault_step, !holds_victim);
}

/* Is op i of the step one of the graph's (launched as one, at g0)? */
static int in_graph(const struct hf_plan *p, int i) { return p->graph != HF_EAGER && i >= p->g0 && i <= p->g1; }

/* The fault step: the victim's deviation, the others held back before op
 * j while the victim dies inside it. */
static void fault_step(struct driver *d)
{
	const struct hf_plan *p = d->p;
	int v = -1; /* the victim among d's ranks */
	for (int r = 0; r < d->n; r++)
		if (d->r[r].rank == p->victim)
			v = r;
	char flag[600];
	flag_path(&d->r[0], flag, sizeof flag);
	for (int i = 0; i < p->nops; i++) {
		const struct hf_op *o = &p->ops[i];
		if (in_graph(p, i)) {
			if (i == p->g0)
				graph_step(d, 1);
			continue;
		}
		if (i == p->at && p->fault == HF_DIE_INSIDE && v < 0)
			while (access(flag, F_OK) != 0)
				nap_ms(10);
		group_start(d);
		for (int r = 0; r < d->n; r++) {
			struct dev dv = { .count = p->count, .type = ncclFloat, .op = ncclSum };
			if (r == v && p->fault == HF_ORDER && i == p->at)
				issue(&d->r[r], &p->ops[p->nops - 1], &dv); /* the closing op first */
			if (r == v && p->fault == HF_ORDER && i == p->nops - 1)
				continue;
			if (r == v && i == p->at && !deviate(d, &d->r[r], o, &dv))
				continue;
			issue(&d->r[r], o, &dv);
		}
		group_end(d);
		if (v >= 0 && i == p->at && p->fault == HF_DIE_INSIDE) {
			nap_ms(500); /* started, waiting for the held-back peers */
			parked_process(p, p->victim, "die-inside");
			FILE *f = fopen(flag, "w");
			if (f)
				fclose(f);
			raise(SIGKILL);
		}
	}
	if (v >= 0 && p->fault == HF_EXTRA) {
		struct dev dv = { .count = p->count, .type = ncclFloat, .op = ncclSum };
		issue(&d->r[v], &p->ops[p->nops - 1], &dv);
	}
	if (p->fault == HF_REDOP || (p->fault == HF_G_OTHER && p->gdev == HF_GD_REDOP)) {
		/* nothing hangs: the job goes on to its end */
		sync_all(d);
		return;
	}
	parked(d, "fault step issued");
	sync_all(d);
	for (;;) /* the step ended here after all: idle, as the job is stuck */
		pause();
}

/* A job that ends by itself stays until the harness has looked at it
 * running: every process waits (at most 60 s) for DIR/checked, which the
 * harness makes after its live diagnosis. A fixed pause raced the job's
 * clean end under load: its files went away while diagnose read them
 * (exit 2, an unreadable live view: seed 100510). */
static void await_checked(const struct driver *d)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/checked", d->r[0].dir);
	for (int i = 0; i < 6000 && access(p, F_OK) != 0; i++)
		nap_ms(10);
}

static void *run_driver(void *arg)
{
	struct driver *d = arg;
	const struct hf_plan *p = d->p;
	setup_comms(d);
	graphs_before(d);
	int steps = p->fault == HF_NONE ? p->warm + 2 : p->warm;
	for (int step = 0; step < steps; step++) {
		if (p->resplit && step > 0) /* step 0's were made with the world */
			split_comms(d);
		for (int i = 0; i < p->nops; i++) {
			struct dev dv = { .count = p->count, .type = ncclFloat, .op = ncclSum };
			if (in_graph(p, i)) {
				if (i == p->g0)
					graph_step(d, 0);
				continue;
			}
			group_start(d);
			for (int r = 0; r < d->n; r++)
				issue(&d->r[r], &p->ops[i], &dv);
			group_end(d);
		}
		sync_all(d);
		for (int r = 0; p->graph == HF_GRAPH_PER_STEP && r < d->n; r++)
			uncapture(&d->r[r], 0);
		if (p->resplit)
			destroy_splits(d);
	}
	int skips = 0; /* HF_NOSPLIT: this thread drives the victim */
	for (int r = 0; r < d->n; r++)
		skips |= p->fault == HF_NOSPLIT && d->r[r].rank == p->victim;
	if (p->fault == HF_NOSPLIT && !skips)
		parked(d, "in the fault step's split");
	if (p->resplit && !skips)
		split_comms(d); /* the fault step's, or (healthy) the comms the job ends with */
	if (p->fault != HF_NONE)
		fault_step(d);
	if (d->r[0].rank == 0)
		line("corpus: check");
	await_checked(d);
	for (int r = 0; r < d->n; r++)
		for (int g = 0; g < 2; g++)
			uncapture(&d->r[r], g);
	destroy_all(d);
	for (int r = 0; r < d->n; r++)
		line("corpus: rank %d done", d->r[r].rank);
	return NULL;
}

/* One process: its ranks on its devices, driven by one thread, or by a
 * thread each while main waits for them. */
static int run_process(const struct rank_info *who, void *arg)
{
	const struct hf_plan *p = arg;
	static struct hf ranks[HF_MAX_RANKS];
	static struct driver drivers[HF_MAX_RANKS];
	const char *dir = getenv("HANGFUZZ_DIR");
	int first = who->rank * p->rpp;
	line("corpus: pid %d ranks %d-%d", (int)getpid(), first, first + p->rpp - 1);
	cuda_ok(&(struct hf){ .rank = first }, cuInit(0), "cuInit");
	for (int i = 0; i < p->rpp; i++) {
		ranks[i] = (struct hf){ .p = p, .rank = first + i, .dir = dir };
		setup_device(&ranks[i], p->rpp > 1 ? i : who->local_rank);
	}
	if (!p->threaded) {
		drivers[0] = (struct driver){ p, p->rpp, ranks };
		run_driver(&drivers[0]);
		return 0;
	}
	pthread_t t[HF_MAX_RANKS];
	for (int i = 0; i < p->rpp; i++) {
		drivers[i] = (struct driver){ p, 1, &ranks[i] };
		if (pthread_create(&t[i], NULL, run_driver, &drivers[i]) != 0)
			exit(EXIT_SETUP);
	}
	for (int i = 0; i < p->rpp; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: hangfuzz --seed S [--nranks N] [--dir DIR]\n"
	           "       hangfuzz --seed S --plan|--case [--ranks N]\n"
	           "A random NCCL job with one injected fault (tests/hangfuzz/plan.h).\n"
	           "  --nranks N  fork N local ranks (must be the plan's count; else launcher variables)\n"
	           "  --ranks N   the job's size (default: the seed chooses 2-8)\n"
	           "  --plan      print the job in words\n"
	           "  --case      print its tests/corpus/cases.txt line (the oracle)\n");
}

int main(int argc, char **argv)
{
	const char *dir = NULL;
	int nranks = 0, ranks = 0, mode = 0, have_seed = 0;
	unsigned long long seed = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--seed") && v) {
			errno = 0;
			seed = strtoull(v, &end, 10);
			if (errno || !*v || *end) {
				fprintf(stderr, "hangfuzz: bad seed '%s'\n", v);
				return EXIT_USAGE;
			}
			have_seed = 1, i++;
		} else if (!strcmp(a, "--nranks") && v) {
			nranks = atoi(v), i++;
		} else if (!strcmp(a, "--ranks") && v) {
			ranks = atoi(v), i++;
		} else if (!strcmp(a, "--dir") && v) {
			dir = v, i++;
		} else if (!strcmp(a, "--plan")) {
			mode = 1;
		} else if (!strcmp(a, "--case")) {
			mode = 2;
		} else {
			fprintf(stderr, "hangfuzz: unknown or incomplete argument '%s'\n", a);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!have_seed) {
		fprintf(stderr, "hangfuzz: --seed is required\n");
		return EXIT_USAGE;
	}
	if (ranks && (ranks < 2 || ranks > HF_MAX_RANKS)) {
		fprintf(stderr, "hangfuzz: --ranks must be 2 to %d\n", HF_MAX_RANKS);
		return EXIT_USAGE;
	}
	static struct hf_plan plan;
	hf_plan_build(&plan, seed, ranks ? ranks : nranks);
	if (mode == 1) {
		hf_plan_describe(&plan, stdout);
		return 0;
	}
	if (mode == 2) {
		struct hf_answer a;
		hf_plan_answer(&plan, &a);
		/* NCCLWATCH_KEEP=0: files are kept or not as for a user, never because the
		 * harness asks; a job that ends cleanly with a fault in its records is
		 * kept (the user who looks afterwards) */
		printf("fuzz | fuzz-%llu | %d | %s | %s | %s | * | - | NCCLWATCH_KEEP=%d hangfuzz --seed %llu | %s%s%s of rank %d at op %d\n",
		       seed, plan.nranks, !a.hangs ? "0" : a.may_complete ? "either" : "hang", a.kinds, a.culprits, a.keep, seed,
		       hf_fault_name(plan.fault), plan.fault == HF_G_OTHER || plan.fault == HF_G_PEER ? " " : "",
		       plan.fault == HF_G_OTHER || plan.fault == HF_G_PEER ? hf_gdev_name(&plan) : "",
		       plan.victim, plan.at);
		return 0;
	}
	struct rank_info who = { 0, 0, 0, "none" };
	if (nranks <= 0 && rank_from_environment(&who) < 0)
		return EXIT_USAGE;
	/* a launcher starts processes: nranks/rpp of them */
	int world = (nranks > 0 ? nranks : who.world_size * plan.rpp);
	if (world != plan.nranks) {
		fprintf(stderr, "hangfuzz: seed %llu plans %d ranks, not %d (give --ranks %d)\n", seed, plan.nranks,
		        world, world);
		return EXIT_USAGE;
	}
	if (!dir) {
		fprintf(stderr, "hangfuzz: --dir is required (rendezvous and flag files)\n");
		return EXIT_USAGE;
	}
	mkdir(dir, 0700);
	setenv("HANGFUZZ_DIR", dir, 1);
	return nranks > 0 ? launch_local_ranks(nranks / plan.rpp, run_process, &plan) : run_process(&who, &plan);
}
