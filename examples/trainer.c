/* trainer: a data-parallel training loop, the program ncclwatch's users and
 * tests run. It uses only the CUDA driver API (cuda.h) and NCCL (nccl.h),
 * so the same binary runs on real GPUs and, with LD_LIBRARY_PATH pointing
 * at build/sim, on the CPU simulation.
 *
 * Each step, like a DDP training step:
 *   1. "compute" this rank's gradients (a pattern that depends on rank and
 *      step) and copy them to the device;
 *   2. all-reduce them (sum) on the world communicator, then divide by the
 *      number of ranks, and check every element;
 *   3. every K steps rank 0 broadcasts the weights (checked on every rank);
 *   4. with --pipeline, pass activations around a ring with send/recv
 *      inside ncclGroupStart/End, on a communicator split from the world.
 * `trainer --help` lists the options and the faults it can inject.
 */
#include "trainer.h"

#include <cuda.h>
#include <nccl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct trainer {
	const struct trainer_options *opt;
	const char *rendezvous_dir;
	int remove_rendezvous_dir;      /* ours, not the user's: rank 0 cleans up */
	struct rank_info who;
	long step;                      /* the step running now, -1 outside the loop */

	CUdevice device;
	CUcontext context;
	CUstream stream;
	ncclComm_t world;
	ncclComm_t pipeline;            /* split from world; NULL without --pipeline */
	int pipeline_rank, pipeline_size;

	/* Device buffers and their host copies; count + 1 elements each, so the
	 * count fault may use a larger count without overrunning. */
	CUdeviceptr dev_gradients, dev_weights, dev_activations_out, dev_activations_in;
	float *gradients, *weights, *activations_out, *activations_in;

	long allreduces, broadcasts, sendrecvs;
};

/* ---- output: one write() per line, so ranks sharing a file never mix --- */

static void print_line(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void print_line(int fd, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	if (write(fd, line, (size_t)n) < 0) {
		/* nowhere left to say it */
	}
}

/* "rank R: msg" before and after the loop, "rank R step S: msg" inside. */
#define say(t, fd, fmt, ...)                                                        \
	((t)->step >= 0                                                             \
	 ? print_line(fd, "rank %d step %ld: " fmt, (t)->who.rank, (t)->step, ##__VA_ARGS__) \
	 : print_line(fd, "rank %d: " fmt, (t)->who.rank, ##__VA_ARGS__))

/* ---- error checks ------------------------------------------------------- */

static int cuda_failed(struct trainer *t, CUresult res, const char *what)
{
	if (res == CUDA_SUCCESS)
		return 0;
	const char *name = NULL, *text = NULL;
	cuGetErrorName(res, &name);
	cuGetErrorString(res, &text);
	say(t, STDERR_FILENO, "%s failed: %s (%s)", what, name ? name : "unknown CUDA error",
	    text ? text : "no description");
	return 1;
}

/* Sleep a little longer each time: waiting on a non-blocking communicator
 * is polling, and 8 ranks share 2 cores. */
static void backoff(long *ns)
{
	struct timespec pause_for = { 0, *ns };
	nanosleep(&pause_for, NULL);
	if (*ns < 10 * 1000 * 1000)
		*ns *= 2;
}

/* A non-blocking communicator says ncclInProgress until its last call has
 * finished on the host side; this is NCCL's documented waiting loop. */
static ncclResult_t wait_until_ready(ncclComm_t comm)
{
	ncclResult_t state = ncclInProgress;
	for (long ns = 50 * 1000;; backoff(&ns)) {
		ncclResult_t res = ncclCommGetAsyncError(comm, &state);
		if (res != ncclSuccess)
			return res;
		if (state != ncclInProgress)
			return state;
	}
}

static int nccl_failed(struct trainer *t, ncclComm_t comm, ncclResult_t res, const char *what)
{
	const char *how = "failed";
	if (res == ncclInProgress && t->opt->nonblocking && comm) {
		res = wait_until_ready(comm);
		how = "failed asynchronously";
	}
	if (res == ncclSuccess)
		return 0;
	const char *detail = ncclGetLastError(comm);
	say(t, STDERR_FILENO, "%s %s: %s (%d)%s%s", what, how, ncclGetErrorString(res), (int)res,
	    detail && *detail ? ": " : "", detail && *detail ? detail : "");
	return 1;
}

/* ---- the application faults --------------------------------------------- */

/* A rank "stuck somewhere else": alive, costing no CPU, until killed. */
static void idle_forever(struct trainer *t)
{
	say(t, STDOUT_FILENO, "idling until killed");
	for (;;)
		pause();
}

static int fault_here(const struct trainer *t, enum fault_kind kind)
{
	const struct fault *f = &t->opt->fault;
	return f->kind == kind && (f->rank == t->who.rank || f->rank == FAULT_RANK_ALL) &&
	       (kind == FAULT_NOINIT || kind == FAULT_COMPILE || f->step == t->step);
}

/* The compile fault: like jax.jit compiling the first step for ever (or
 * for ms), after the communicators exist and before any collective. Its
 * own function, kept out of line, so that thread stacks name it. */
static __attribute__((noinline)) void compile_step(struct trainer *t)
{
	const struct fault *f = &t->opt->fault;
	if (f->ms < 0)
		say(t, STDOUT_FILENO, "fault compile: compiling the first step, never finishing");
	else
		say(t, STDOUT_FILENO, "fault compile: compiling the first step for %ld ms", f->ms);
	struct timespec nap = { f->ms < 0 ? 3600 : f->ms / 1000, f->ms < 0 ? 0 : f->ms % 1000 * 1000000 };
	do {
		struct timespec left = nap;
		while (nanosleep(&left, &left) < 0)
			;
	} while (f->ms < 0);
	say(t, STDOUT_FILENO, "fault compile: compiled, starting the first step");
	__asm__ volatile("" ::: "memory"); /* not a tail call: stay on the stack */
}

/* The faults that act before the step's collectives are issued. */
static void inject_fault_before_step(struct trainer *t)
{
	const struct fault *f = &t->opt->fault;
	if (fault_here(t, FAULT_CRASH)) {
		say(t, STDOUT_FILENO, "fault crash: killing myself with SIGKILL");
		raise(SIGKILL);
	}
	if (fault_here(t, FAULT_EXIT)) {
		say(t, STDOUT_FILENO, "fault exit: leaving early with exit code 0");
		exit(EXIT_OK);
	}
	if (fault_here(t, FAULT_SKIP)) {
		say(t, STDOUT_FILENO, "fault skip: not issuing the all-reduce");
		idle_forever(t);
	}
	if (fault_here(t, FAULT_SLEEP)) {
		say(t, STDOUT_FILENO, "fault sleep: sleeping %ld ms before the all-reduce", f->ms);
		struct timespec nap = { f->ms / 1000, f->ms % 1000 * 1000000 };
		while (nanosleep(&nap, &nap) < 0)
			;
		say(t, STDOUT_FILENO, "fault sleep: awake, issuing the all-reduce");
	}
}

/* ---- values every rank can predict --------------------------------------- */

/* Small integers, so every sum is exact in float whatever the order. */
static float gradient_value(int rank, long step, long i) { return (float)((rank + 1) * ((i + step) % 13 + 1)); }
static float weight_value(long step, long i) { return (float)(step % 1000 * 3 + i % 11); }
static float activation_value(int rank, long step, long i) { return (float)(rank % 4096 * 1000 + (step + i) % 1000); }

static int is_broadcast_step(const struct trainer *t, long step)
{
	const struct trainer_options *opt = t->opt;
	if (opt->fault.kind == FAULT_ORDER && opt->fault.step == step)
		return 1; /* every rank broadcasts there; only the faulty one too early */
	return opt->bcast_every > 0 && step % opt->bcast_every == 0;
}

static int check_values(struct trainer *t, const char *what, const float *got, long count,
                        float (*expected_at)(struct trainer *, long))
{
	for (long i = 0; i < count; i++) {
		float expected = expected_at(t, i);
		if (got[i] != expected) {
			say(t, STDERR_FILENO, "wrong %s result at element %ld: got %g, expected %g",
			    what, i, (double)got[i], (double)expected);
			return 1;
		}
	}
	return 0;
}

static float expected_mean_gradient(struct trainer *t, long i)
{
	int n = t->who.world_size;
	float sum = 0;
	for (int r = 0; r < n; r++)
		sum += gradient_value(r, t->step, i);
	return sum / (float)n; /* same operations as the trainer's own division */
}
static float expected_weight(struct trainer *t, long i) { return weight_value(t->step, i); }
static float expected_activation(struct trainer *t, long i)
{
	int from = (t->pipeline_rank + t->pipeline_size - 1) % t->pipeline_size;
	return activation_value(from, t->step, i);
}

/* ---- setup and teardown -------------------------------------------------- */

static int setup_device(struct trainer *t)
{
	int devices = 0;
	char name[128] = "";
	size_t bytes = (size_t)(t->opt->count + 1) * sizeof(float);
	if (cuda_failed(t, cuInit(0), "cuInit") ||
	    cuda_failed(t, cuDeviceGetCount(&devices), "cuDeviceGetCount"))
		return EXIT_CUDA_ERROR;
	if (devices < 1) {
		say(t, STDERR_FILENO, "no CUDA device");
		return EXIT_CUDA_ERROR;
	}
	int ordinal = t->opt->device_per_rank ? t->who.local_rank % devices : 0;
	if (cuda_failed(t, cuDeviceGet(&t->device, ordinal), "cuDeviceGet") ||
	    cuda_failed(t, cuDeviceGetName(name, sizeof name, t->device), "cuDeviceGetName") ||
	    cuda_failed(t, cuDevicePrimaryCtxRetain(&t->context, t->device), "cuDevicePrimaryCtxRetain") ||
	    cuda_failed(t, cuCtxSetCurrent(t->context), "cuCtxSetCurrent") ||
	    /* A blocking stream: ordered after the synchronous copies below. */
	    cuda_failed(t, cuStreamCreate(&t->stream, CU_STREAM_DEFAULT), "cuStreamCreate") ||
	    cuda_failed(t, cuMemAlloc(&t->dev_gradients, bytes), "cuMemAlloc") ||
	    cuda_failed(t, cuMemAlloc(&t->dev_weights, bytes), "cuMemAlloc") ||
	    cuda_failed(t, cuMemAlloc(&t->dev_activations_out, bytes), "cuMemAlloc") ||
	    cuda_failed(t, cuMemAlloc(&t->dev_activations_in, bytes), "cuMemAlloc"))
		return EXIT_CUDA_ERROR;
	t->gradients = calloc(1, bytes);
	t->weights = calloc(1, bytes);
	t->activations_out = calloc(1, bytes);
	t->activations_in = calloc(1, bytes);
	if (!t->gradients || !t->weights || !t->activations_out || !t->activations_in) {
		say(t, STDERR_FILENO, "out of memory");
		return EXIT_SETUP;
	}
	say(t, STDOUT_FILENO, "world size %d (launcher %s), pid %d, device %d (%s)",
	    t->who.world_size, t->who.launcher, (int)getpid(), ordinal, name);
	return EXIT_OK;
}

static int setup_communicators(struct trainer *t)
{
	ncclUniqueId id;
	if (t->who.rank == 0) {
		if (nccl_failed(t, NULL, ncclGetUniqueId(&id), "ncclGetUniqueId"))
			return EXIT_NCCL_ERROR;
		if (rendezvous_publish(t->rendezvous_dir, &id) < 0)
			return EXIT_SETUP;
	} else if (rendezvous_fetch(t->rendezvous_dir, &id) < 0) {
		return EXIT_SETUP;
	}
	if (fault_here(t, FAULT_NOINIT)) {
		say(t, STDOUT_FILENO, "fault noinit: never creating the communicator");
		idle_forever(t);
	}

	say(t, STDOUT_FILENO, "joining the world communicator");
	ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
	ncclResult_t res;
	if (t->opt->nonblocking) {
		config.blocking = 0;
		res = ncclCommInitRankConfig(&t->world, t->who.world_size, id, t->who.rank, &config);
	} else {
		res = ncclCommInitRank(&t->world, t->who.world_size, id, t->who.rank);
	}
	if (nccl_failed(t, t->world, res, "ncclCommInitRank"))
		return EXIT_NCCL_ERROR;
	say(t, STDOUT_FILENO, "world communicator ready");
	if (t->who.rank == 0) { /* everyone joined, so everyone has read it */
		rendezvous_remove(t->rendezvous_dir);
		if (t->remove_rendezvous_dir)
			rmdir(t->rendezvous_dir);
	}

	if (t->opt->pipeline) {
		/* One pipeline over all ranks, in world order (color 0, key = rank). */
		res = ncclCommSplit(t->world, 0, t->who.rank, &t->pipeline,
		                    t->opt->nonblocking ? &config : NULL);
		if (nccl_failed(t, t->pipeline, res, "ncclCommSplit") ||
		    nccl_failed(t, t->pipeline, ncclCommUserRank(t->pipeline, &t->pipeline_rank), "ncclCommUserRank") ||
		    nccl_failed(t, t->pipeline, ncclCommCount(t->pipeline, &t->pipeline_size), "ncclCommCount"))
			return EXIT_NCCL_ERROR;
		say(t, STDOUT_FILENO, "pipeline communicator ready (rank %d of %d)", t->pipeline_rank,
		    t->pipeline_size);
	}
	return EXIT_OK;
}

/* After an error NCCL wants the communicators aborted, not destroyed. */
static void abort_communicators(struct trainer *t)
{
	if (t->pipeline)
		ncclCommAbort(t->pipeline);
	if (t->world)
		ncclCommAbort(t->world);
	t->pipeline = t->world = NULL;
}

static int finalize_and_destroy(struct trainer *t, ncclComm_t *comm, const char *name)
{
	if (!*comm)
		return 0;
	char what[64];
	snprintf(what, sizeof what, "ncclCommFinalize(%s)", name);
	if (nccl_failed(t, *comm, ncclCommFinalize(*comm), what))
		return 1;
	snprintf(what, sizeof what, "ncclCommDestroy(%s)", name);
	ncclResult_t res = ncclCommDestroy(*comm);
	*comm = NULL;
	return nccl_failed(t, NULL, res, what);
}

static void free_buffers(struct trainer *t)
{
	CUdeviceptr *device_buffers[] = { &t->dev_gradients, &t->dev_weights,
	                                  &t->dev_activations_out, &t->dev_activations_in };
	for (size_t i = 0; i < sizeof device_buffers / sizeof device_buffers[0]; i++)
		if (*device_buffers[i]) {
			cuMemFree(*device_buffers[i]);
			*device_buffers[i] = 0;
		}
	free(t->gradients);
	free(t->weights);
	free(t->activations_out);
	free(t->activations_in);
	t->gradients = t->weights = t->activations_out = t->activations_in = NULL;
}

static void release_device(struct trainer *t)
{
	free_buffers(t);
	if (t->stream)
		cuStreamDestroy(t->stream);
	if (t->context)
		cuDevicePrimaryCtxRelease(t->device);
	t->stream = NULL;
	t->context = NULL;
}

/* ---- one training step ---------------------------------------------------- */

static int copy_to_device(struct trainer *t, CUdeviceptr dst, const float *src, long count)
{
	return cuda_failed(t, cuMemcpyHtoD(dst, src, (size_t)count * sizeof(float)), "cuMemcpyHtoD");
}

static int copy_from_device(struct trainer *t, float *dst, CUdeviceptr src, long count)
{
	return cuda_failed(t, cuMemcpyDtoH(dst, src, (size_t)count * sizeof(float)), "cuMemcpyDtoH");
}

static int issue_allreduce(struct trainer *t)
{
	size_t count = (size_t)t->opt->count;
	ncclDataType_t type = ncclFloat;
	if (fault_here(t, FAULT_COUNT)) {
		count = count > 1 ? count / 2 : count + 1;
		say(t, STDOUT_FILENO, "fault count: all-reduce of %zu elements instead of %ld", count, t->opt->count);
	}
	if (fault_here(t, FAULT_DTYPE)) {
		type = ncclFloat16;
		say(t, STDOUT_FILENO, "fault dtype: all-reduce of float16 instead of float");
	}
	t->allreduces++;
	/* In place, like DDP's gradient buckets. */
	return nccl_failed(t, t->world, ncclAllReduce((void *)t->dev_gradients, (void *)t->dev_gradients,
	                                              count, type, ncclSum, t->world, t->stream),
	                   "ncclAllReduce");
}

static int issue_broadcast(struct trainer *t)
{
	t->broadcasts++;
	return nccl_failed(t, t->world, ncclBroadcast((void *)t->dev_weights, (void *)t->dev_weights,
	                                              (size_t)t->opt->count, ncclFloat, 0, t->world, t->stream),
	                   "ncclBroadcast");
}

/* Send my activations to the next stage, receive the previous stage's. The
 * group makes the pair one operation, so the ring cannot deadlock. */
static int issue_ring_exchange(struct trainer *t)
{
	int n = t->pipeline_size, me = t->pipeline_rank;
	int next = (me + 1) % n, previous = (me + n - 1) % n;
	if (fault_here(t, FAULT_P2P)) {
		next = (me + 2) % n;
		say(t, STDOUT_FILENO, "fault p2p: sending to rank %d instead of %d", next, (me + 1) % n);
	}
	size_t count = (size_t)t->opt->count;
	t->sendrecvs++;
	ncclGroupStart();
	ncclResult_t send = ncclSend((void *)t->dev_activations_out, count, ncclFloat, next, t->pipeline, t->stream);
	ncclResult_t recv = ncclRecv((void *)t->dev_activations_in, count, ncclFloat, previous, t->pipeline, t->stream);
	ncclResult_t end = ncclGroupEnd();
	return nccl_failed(t, t->pipeline, send, "ncclSend") || nccl_failed(t, t->pipeline, recv, "ncclRecv") ||
	       nccl_failed(t, t->pipeline, end, "ncclGroupEnd");
}

/* Wait for the step's work on the GPU. A blocking communicator simply
 * synchronizes the stream; a non-blocking one polls the stream and the
 * communicators' async errors, as frameworks' watchdogs do. */
static int wait_for_step(struct trainer *t)
{
	if (!t->opt->nonblocking)
		return cuda_failed(t, cuStreamSynchronize(t->stream), "cuStreamSynchronize") ? EXIT_CUDA_ERROR : EXIT_OK;
	for (long ns = 50 * 1000;; backoff(&ns)) {
		CUresult query = cuStreamQuery(t->stream);
		if (query == CUDA_SUCCESS)
			return EXIT_OK;
		if (query != CUDA_ERROR_NOT_READY)
			return cuda_failed(t, query, "cuStreamQuery") ? EXIT_CUDA_ERROR : EXIT_OK;
		ncclComm_t comms[] = { t->world, t->pipeline };
		for (int i = 0; i < 2; i++) {
			ncclResult_t async = ncclSuccess;
			if (!comms[i] || ncclCommGetAsyncError(comms[i], &async) != ncclSuccess)
				continue;
			if (async != ncclSuccess && async != ncclInProgress) {
				say(t, STDERR_FILENO, "async error on the %s communicator: %s (%d)",
				    i ? "pipeline" : "world", ncclGetErrorString(async), (int)async);
				return EXIT_NCCL_ERROR;
			}
		}
	}
}

static int train_step(struct trainer *t)
{
	long count = t->opt->count;
	int broadcast = is_broadcast_step(t, t->step);
	inject_fault_before_step(t);

	for (long i = 0; i < count; i++)
		t->gradients[i] = gradient_value(t->who.rank, t->step, i);
	if (copy_to_device(t, t->dev_gradients, t->gradients, count))
		return EXIT_CUDA_ERROR;
	if (broadcast) {
		for (long i = 0; i < count; i++)
			t->weights[i] = t->who.rank == 0 ? weight_value(t->step, i) : -1.0f;
		if (copy_to_device(t, t->dev_weights, t->weights, count))
			return EXIT_CUDA_ERROR;
	}
	if (t->pipeline) {
		for (long i = 0; i < count; i++) {
			t->activations_out[i] = activation_value(t->pipeline_rank, t->step, i);
			t->activations_in[i] = -1.0f;
		}
		if (copy_to_device(t, t->dev_activations_out, t->activations_out, count) ||
		    copy_to_device(t, t->dev_activations_in, t->activations_in, count))
			return EXIT_CUDA_ERROR;
	}

	if (fault_here(t, FAULT_ORDER)) {
		say(t, STDOUT_FILENO, "fault order: broadcasting before the all-reduce");
		if (issue_broadcast(t) || issue_allreduce(t))
			return EXIT_NCCL_ERROR;
	} else {
		if (issue_allreduce(t) || (broadcast && issue_broadcast(t)))
			return EXIT_NCCL_ERROR;
	}
	if (t->pipeline && issue_ring_exchange(t))
		return EXIT_NCCL_ERROR;

	int status = wait_for_step(t);
	if (status != EXIT_OK)
		return status;

	if (copy_from_device(t, t->gradients, t->dev_gradients, count))
		return EXIT_CUDA_ERROR;
	for (long i = 0; i < count; i++)
		t->gradients[i] /= (float)t->who.world_size;
	if (check_values(t, "all-reduce", t->gradients, count, expected_mean_gradient))
		return EXIT_WRONG_RESULT;
	if (broadcast) {
		if (copy_from_device(t, t->weights, t->dev_weights, count))
			return EXIT_CUDA_ERROR;
		if (check_values(t, "broadcast", t->weights, count, expected_weight))
			return EXIT_WRONG_RESULT;
	}
	if (t->pipeline) {
		if (copy_from_device(t, t->activations_in, t->dev_activations_in, count))
			return EXIT_CUDA_ERROR;
		if (check_values(t, "pipeline receive", t->activations_in, count, expected_activation))
			return EXIT_WRONG_RESULT;
	}
	if (t->opt->verbose)
		print_line(STDOUT_FILENO, "rank %d step %ld done", t->who.rank, t->step);
	return EXIT_OK;
}

/* ---- one rank, start to end ------------------------------------------------ */

struct job {
	const struct trainer_options *opt;
	const char *rendezvous_dir;
	int remove_rendezvous_dir;
};

static int run_rank(const struct rank_info *who, void *arg)
{
	const struct job *job = arg;
	struct trainer t = { .opt = job->opt, .rendezvous_dir = job->rendezvous_dir,
	                     .remove_rendezvous_dir = job->remove_rendezvous_dir, .who = *who, .step = -1 };

	int status = setup_device(&t);
	if (status == EXIT_OK)
		status = setup_communicators(&t);
	if (status == EXIT_OK && fault_here(&t, FAULT_COMPILE))
		compile_step(&t);
	for (t.step = 0; status == EXIT_OK && t.step < t.opt->steps; t.step++)
		status = train_step(&t);
	t.step = -1;
	if (status == EXIT_OK) {
		if (finalize_and_destroy(&t, &t.pipeline, "pipeline") ||
		    finalize_and_destroy(&t, &t.world, "world"))
			status = EXIT_NCCL_ERROR;
	}
	if (status != EXIT_OK)
		abort_communicators(&t);
	release_device(&t);
	if (status == EXIT_OK)
		print_line(STDOUT_FILENO, "rank %d ok steps=%ld allreduce=%ld broadcast=%ld sendrecv=%ld",
		           t.who.rank, t.opt->steps, t.allreduces, t.broadcasts, t.sendrecvs);
	return status;
}

int main(int argc, char **argv)
{
	struct trainer_options opt;
	parse_options(argc, argv, &opt);
	struct job job = { .opt = &opt, .rendezvous_dir = opt.rendezvous };
	char *own_dir = NULL;

	if (opt.nranks > 0) {
		if (opt.fault.kind != FAULT_NONE && opt.fault.rank >= opt.nranks) {
			fprintf(stderr, "trainer: --fault rank %d is not one of the %d ranks\n", opt.fault.rank, opt.nranks);
			return EXIT_USAGE;
		}
		if (!job.rendezvous_dir) {
			char key[32];
			snprintf(key, sizeof key, "local-%d", (int)getpid());
			job.rendezvous_dir = own_dir = default_rendezvous_dir(key);
			if (!own_dir) {
				fprintf(stderr, "trainer: out of memory\n");
				return EXIT_SETUP;
			}
		}
		int status = launch_local_ranks(opt.nranks, run_rank, &job);
		if (own_dir) {
			rendezvous_remove(own_dir);
			rmdir(own_dir);
		}
		free(own_dir);
		return status;
	}

	struct rank_info who;
	if (rank_from_environment(&who) < 0)
		return EXIT_USAGE;
	if (opt.fault.kind != FAULT_NONE && opt.fault.rank >= who.world_size) {
		fprintf(stderr, "trainer: --fault rank %d is not one of the %d ranks\n", opt.fault.rank, who.world_size);
		return EXIT_USAGE;
	}
	if (!job.rendezvous_dir) {
		job.rendezvous_dir = own_dir = default_rendezvous_dir(launcher_job_key());
		job.remove_rendezvous_dir = 1;
	}
	if (!job.rendezvous_dir) {
		fprintf(stderr, "trainer: out of memory\n");
		return EXIT_SETUP;
	}
	int status = run_rank(&who, &job);
	free(own_dir);
	return status;
}
