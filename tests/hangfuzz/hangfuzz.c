/* hangfuzz: a random NCCL job from a seed, one injected fault, and the
 * answer its construction gives (issue 21; plan.h says what is built).
 * Written against cuda.h and nccl.h only, like tests/corpus/scenario.c,
 * and driven by the same corpus harness (tests/corpus/corpus-lib.sh).
 *
 *   hangfuzz --seed S [--nranks N] [--dir DIR]   run the job (N: the plan's)
 *   hangfuzz --seed S --plan [--ranks N]         the job in words
 *   hangfuzz --seed S --case [--ranks N]         its tests/corpus/cases.txt line
 *
 * Lines the harness reads: "corpus: rank R parked: WHY" (the rank reached
 * its last state), "corpus: check" (a healthy job worth a live look),
 * "corpus: rank R done".
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
	CUstream s[2];
	CUdeviceptr buf, buf2;
	ncclComm_t comm[HF_NCOMMS];
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

static void parked(struct hf *h, const char *why) { line("corpus: rank %d parked: %s", h->rank, why); }

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

static __attribute__((noreturn)) void idle_forever(struct hf *h, const char *why)
{
	parked(h, why);
	for (;;)
		pause();
}

static void flag_path(struct hf *h, char *p, size_t n) { snprintf(p, n, "%s/flag-dead", h->dir); }

/* ---- set-up ------------------------------------------------------------------ */

static void setup(struct hf *h, const struct rank_info *who)
{
	const struct hf_plan *p = h->p;
	CUdevice dev;
	CUcontext ctx;
	int devices = 0;
	cuda_ok(h, cuInit(0), "cuInit");
	cuda_ok(h, cuDeviceGetCount(&devices), "cuDeviceGetCount");
	if (devices < 1) {
		line("rank %d: no CUDA device", h->rank);
		exit(EXIT_CUDA_ERROR);
	}
	cuda_ok(h, cuDeviceGet(&dev, who->local_rank % devices), "cuDeviceGet");
	cuda_ok(h, cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	cuda_ok(h, cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	for (int i = 0; i < 2; i++)
		cuda_ok(h, cuStreamCreate(&h->s[i], CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	size_t bytes = (size_t)p->count * 2 * sizeof(double); /* room for any mismatch */
	cuda_ok(h, cuMemAlloc(&h->buf, bytes), "cuMemAlloc");
	cuda_ok(h, cuMemAlloc(&h->buf2, bytes), "cuMemAlloc");
	cuda_ok(h, cuMemsetD8(h->buf, 0, bytes), "cuMemsetD8");
	cuda_ok(h, cuMemsetD8(h->buf2, 0, bytes), "cuMemsetD8");

	ncclUniqueId id;
	if (h->rank == 0) {
		nccl_ok(h, ncclGetUniqueId(&id), "ncclGetUniqueId");
		if (rendezvous_publish(h->dir, &id) < 0)
			exit(EXIT_SETUP);
	} else if (rendezvous_fetch(h->dir, &id) < 0) {
		exit(EXIT_SETUP);
	}
	nccl_ok(h, ncclCommInitRank(&h->comm[HF_WORLD], p->nranks, id, h->rank), "ncclCommInitRank");
	for (int c = HF_TP; c < HF_NCOMMS; c++) {
		int color = hf_color(p, (enum hf_comm)c, h->rank);
		if (color != NCCL_SPLIT_NOCOLOR)
			nccl_ok(h, ncclCommSplit(h->comm[HF_WORLD], color, h->rank, &h->comm[c], NULL), "ncclCommSplit");
	}
}

/* ---- ops --------------------------------------------------------------------- */

/* Deviations of the faulty rank's op (none for everyone else). */
struct dev {
	long count;
	ncclDataType_t type;
	int root_shift;
	int peer_shift_send, peer_shift_recv;
};

static void issue(struct hf *h, const struct hf_op *o, const struct dev *d)
{
	ncclComm_t comm = h->comm[o->comm];
	CUstream s = h->s[o->stream];
	int size = hf_comm_size(h->p, o->comm, h->rank), me = hf_comm_rank(h->p, o->comm, h->rank);
	int root = (o->root + d->root_shift) % size;
	void *a = (void *)h->buf, *b = (void *)h->buf2;
	size_t part = (size_t)d->count / (size_t)size;
	switch (o->kind) {
	case HF_ALLREDUCE:
		nccl_ok(h, ncclAllReduce(a, a, (size_t)d->count, d->type, ncclSum, comm, s), "ncclAllReduce");
		break;
	case HF_BROADCAST:
		nccl_ok(h, ncclBroadcast(b, b, (size_t)d->count, d->type, root, comm, s), "ncclBroadcast");
		break;
	case HF_REDUCE:
		nccl_ok(h, ncclReduce(a, b, (size_t)d->count, d->type, ncclSum, root, comm, s), "ncclReduce");
		break;
	case HF_ALLGATHER:
		nccl_ok(h, ncclAllGather(a, b, part, d->type, comm, s), "ncclAllGather");
		break;
	case HF_REDUCESCATTER:
		nccl_ok(h, ncclReduceScatter(a, b, part, d->type, ncclSum, comm, s), "ncclReduceScatter");
		break;
	case HF_RING:
		nccl_ok(h, ncclGroupStart(), "ncclGroupStart");
		nccl_ok(h, ncclSend(b, part, d->type, (me + 1 + d->peer_shift_send) % size, comm, s), "ncclSend");
		nccl_ok(h, ncclRecv(a, part, d->type, (me + 2 * size - 1 - d->peer_shift_recv) % size, comm, s),
		        "ncclRecv");
		nccl_ok(h, ncclGroupEnd(), "ncclGroupEnd");
		break;
	}
}

static void sync_all(struct hf *h)
{
	for (int i = 0; i < h->p->nstreams; i++)
		cuda_ok(h, cuStreamSynchronize(h->s[i]), "cuStreamSynchronize");
}

static void destroy_all(struct hf *h)
{
	for (int c = HF_NCOMMS - 1; c >= 0; c--) {
		if (!h->comm[c])
			continue;
		nccl_ok(h, ncclCommFinalize(h->comm[c]), "ncclCommFinalize");
		nccl_ok(h, ncclCommDestroy(h->comm[c]), "ncclCommDestroy");
		h->comm[c] = NULL;
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

/* What the victim does instead of (or before) op j; returns 1 when op j is
 * then issued as planned (with *d's deviations). */
static int deviate(struct hf *h, const struct hf_op *o, struct dev *d)
{
	const struct hf_plan *p = h->p;
	char why[128];
	snprintf(why, sizeof why, "%s at op %d", hf_fault_name(p->fault), p->at);
	switch (p->fault) {
	case HF_SKIP: return 0;
	case HF_COUNT: d->count *= 2; return 1;
	case HF_DTYPE: d->type = ncclDouble; return 1;
	case HF_ROOT: d->root_shift = 1; return 1;
	case HF_SEND_PEER: d->peer_shift_send = 1; return 1;
	case HF_RECV_PEER: d->peer_shift_recv = 1; return 1;
	case HF_DIE_BEFORE:
		parked(h, why);
		raise(SIGKILL);
		return 0;
	case HF_EXIT:
		parked(h, why);
		exit(0);
	case HF_EXIT_DESTROY:
		sync_all(h);
		destroy_all(h);
		parked(h, why);
		exit(0);
	case HF_SLEEP: idle_forever(h, why);
	case HF_LOCK: {
		pthread_t t;
		if (pthread_create(&t, NULL, holder, NULL) != 0)
			exit(EXIT_SETUP);
		nap_ms(100);
		parked(h, why);
		pthread_mutex_lock(&held);
		return 0;
	}
	case HF_HOSTFN:
		cuda_ok(h, cuLaunchHostFunc(h->s[o->stream], stuck_host_function, NULL), "cuLaunchHostFunc");
		return 1;
	default: return 1;
	}
}

/* The fault step: the victim's deviation, the others held back before op
 * j while the victim dies inside it. */
static void fault_step(struct hf *h)
{
	const struct hf_plan *p = h->p;
	int victim = h->rank == p->victim;
	char flag[600];
	flag_path(h, flag, sizeof flag);
	for (int i = 0; i < p->nops; i++) {
		const struct hf_op *o = &p->ops[i];
		struct dev d = { p->count, ncclFloat, 0, 0, 0 };
		if (i == p->at && p->fault == HF_DIE_INSIDE && !victim)
			while (access(flag, F_OK) != 0)
				nap_ms(10);
		if (victim && p->fault == HF_ORDER && i == p->at)
			issue(h, &p->ops[p->nops - 1], &d); /* the closing op first */
		if (victim && p->fault == HF_ORDER && i == p->nops - 1)
			continue;
		if (victim && i == p->at && !deviate(h, o, &d))
			continue;
		issue(h, o, &d);
		if (victim && i == p->at && p->fault == HF_DIE_INSIDE) {
			nap_ms(500); /* started, waiting for the held-back peers */
			parked(h, "die-inside");
			FILE *f = fopen(flag, "w");
			if (f)
				fclose(f);
			raise(SIGKILL);
		}
	}
	if (victim && p->fault == HF_EXTRA) {
		struct dev d = { p->count, ncclFloat, 0, 0, 0 };
		issue(h, &p->ops[p->nops - 1], &d);
	}
	parked(h, "fault step issued");
	sync_all(h);
	for (;;) /* the step ended here after all: idle, as the job is stuck */
		pause();
}

static int run_rank(const struct rank_info *who, void *arg)
{
	struct hf h = { .p = arg, .rank = who->rank };
	const char *dir = getenv("HANGFUZZ_DIR");
	h.dir = dir;
	setup(&h, who);
	const struct hf_plan *p = h.p;
	int steps = p->fault == HF_NONE ? p->warm + 2 : p->warm;
	for (int step = 0; step < steps; step++) {
		for (int i = 0; i < p->nops; i++) {
			struct dev d = { p->count, ncclFloat, 0, 0, 0 };
			issue(&h, &p->ops[i], &d);
		}
		sync_all(&h);
	}
	if (p->fault != HF_NONE)
		fault_step(&h);
	if (h.rank == 0)
		line("corpus: check");
	nap_ms(300);
	destroy_all(&h);
	line("corpus: rank %d done", h.rank);
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
		/* NCCLWATCH_KEEP=0: files are kept or not as for a user, never because the harness asks */
		printf("fuzz | fuzz-%llu | %d | %s | %s | %s | * | - | NCCLWATCH_KEEP=0 hangfuzz --seed %llu | %s of rank %d at op %d\n",
		       seed, plan.nranks, !a.hangs ? "0" : a.may_complete ? "either" : "hang", a.kinds, a.culprits, seed, hf_fault_name(plan.fault),
		       plan.victim, plan.at);
		return 0;
	}
	struct rank_info who = { 0, 0, 0, "none" };
	if (nranks <= 0 && rank_from_environment(&who) < 0)
		return EXIT_USAGE;
	int world = nranks > 0 ? nranks : who.world_size;
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
	return nranks > 0 ? launch_local_ranks(nranks, run_rank, &plan) : run_rank(&who, &plan);
}
