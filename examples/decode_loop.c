/* decode_loop: a model server's decode loop served from a CUDA graph, the
 * way vLLM and SGLang run tensor-parallel decoding. It uses only the CUDA
 * driver API (cuda.h) and NCCL (nccl.h), so the same binary runs on real
 * GPUs and, with LD_LIBRARY_PATH pointing at build/sim, on the simulation.
 *
 * Once, at start-up: capture one decode step, here its tensor-parallel
 * AllReduce (sum) of the hidden state on the world communicator, into a
 * CUDA graph on a capturing stream, and instantiate it. Then, per token:
 * write this rank's partial hidden state into the graph's static input
 * buffer, launch (replay) the graph on the serving stream, wait, and check
 * the reduced state. No NCCL call is made after the capture: every token's
 * collective is a replay, which ncclwatch records as a GraphLaunch (its
 * replay number = the token).
 *
 *   decode_loop [--nranks N] [--tokens T] [--hidden H] [--rendezvous DIR]
 *               [--fault stop:rank=R:token=K] [--verbose]
 *
 * --fault stop:rank=R:token=K: rank R stops after K tokens (a request
 * handler stuck elsewhere) and idles; the others launch replay K+1 and wait
 * in it. ncclwatch names it: "rank R launched the graph holding AllReduce
 * #1 on comm X K times; ranks ... wait in replay K+1".
 * Exit codes: examples/trainer.h's.
 */
#include "trainer.h"

#include <cuda.h>
#include <nccl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct options {
	long tokens, hidden;
	int nranks;
	const char *rendezvous;
	int verbose;
	int stop_rank;           /* -1: no fault */
	long stop_token;
};

struct server {
	const struct options *opt;
	const char *rendezvous_dir;
	struct rank_info who;
	CUcontext context;
	CUstream serve, capture;
	CUdeviceptr dev_hidden;  /* the graph's static buffer: input and output */
	float *hidden;
	ncclComm_t world;
	CUgraph graph;
	CUgraphExec exec;
};

static void say(const struct server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct server *s, const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof line, "rank %d: ", s->who.rank);
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	n += k < (int)(sizeof line - (size_t)n - 1) ? k : (int)(sizeof line - (size_t)n - 2);
	line[n++] = '\n';
	if (write(STDOUT_FILENO, line, (size_t)n) < 0) {
		/* nowhere left to say it */
	}
}

static int cuda_failed(const struct server *s, CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return 0;
	const char *name = NULL;
	cuGetErrorName(r, &name);
	say(s, "%s failed: %s", what, name ? name : "unknown CUDA error");
	return 1;
}

static int nccl_failed(const struct server *s, ncclResult_t r, const char *what)
{
	if (r == ncclSuccess)
		return 0;
	say(s, "%s failed: %s", what, ncclGetErrorString(r));
	return 1;
}

/* This rank's share of token t's hidden state; small integers, so the sum
 * is exact in float. */
static float partial(int rank, long token, long i) { return (float)((rank + 1) * ((i + token) % 7 + 1)); }

static int setup(struct server *s)
{
	CUdevice dev;
	size_t bytes = (size_t)s->opt->hidden * sizeof(float);
	if (cuda_failed(s, cuInit(0), "cuInit") || cuda_failed(s, cuDeviceGet(&dev, 0), "cuDeviceGet") ||
	    cuda_failed(s, cuDevicePrimaryCtxRetain(&s->context, dev), "cuDevicePrimaryCtxRetain") ||
	    cuda_failed(s, cuCtxSetCurrent(s->context), "cuCtxSetCurrent") ||
	    cuda_failed(s, cuStreamCreate(&s->serve, CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
	    cuda_failed(s, cuStreamCreate(&s->capture, CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
	    cuda_failed(s, cuMemAlloc(&s->dev_hidden, bytes), "cuMemAlloc"))
		return EXIT_CUDA_ERROR;
	if (!(s->hidden = calloc(1, bytes))) {
		say(s, "out of memory");
		return EXIT_SETUP;
	}
	ncclUniqueId id;
	if (s->who.rank == 0) {
		if (nccl_failed(s, ncclGetUniqueId(&id), "ncclGetUniqueId"))
			return EXIT_NCCL_ERROR;
		if (rendezvous_publish(s->rendezvous_dir, &id) < 0)
			return EXIT_SETUP;
	} else if (rendezvous_fetch(s->rendezvous_dir, &id) < 0) {
		return EXIT_SETUP;
	}
	if (nccl_failed(s, ncclCommInitRank(&s->world, s->who.world_size, id, s->who.rank), "ncclCommInitRank"))
		return EXIT_NCCL_ERROR;
	if (s->who.rank == 0)
		rendezvous_remove(s->rendezvous_dir);
	return EXIT_OK;
}

/* The decode step, captured once: the AllReduce of the hidden state. */
static int capture_decode_step(struct server *s)
{
	if (cuda_failed(s, cuStreamBeginCapture(s->capture, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture"))
		return EXIT_CUDA_ERROR;
	ncclResult_t r = ncclAllReduce((void *)s->dev_hidden, (void *)s->dev_hidden, (size_t)s->opt->hidden, ncclFloat,
	                               ncclSum, s->world, s->capture);
	CUresult end = cuStreamEndCapture(s->capture, &s->graph);
	if (nccl_failed(s, r, "ncclAllReduce (captured)"))
		return EXIT_NCCL_ERROR;
	if (cuda_failed(s, end, "cuStreamEndCapture") ||
	    cuda_failed(s, cuGraphInstantiateWithFlags(&s->exec, s->graph, 0), "cuGraphInstantiateWithFlags"))
		return EXIT_CUDA_ERROR;
	say(s, "decode step captured into a graph");
	return EXIT_OK;
}

static int decode_token(struct server *s, long token)
{
	long h = s->opt->hidden;
	for (long i = 0; i < h; i++)
		s->hidden[i] = partial(s->who.rank, token, i);
	if (cuda_failed(s, cuMemcpyHtoD(s->dev_hidden, s->hidden, (size_t)h * sizeof(float)), "cuMemcpyHtoD") ||
	    cuda_failed(s, cuGraphLaunch(s->exec, s->serve), "cuGraphLaunch") ||
	    cuda_failed(s, cuStreamSynchronize(s->serve), "cuStreamSynchronize") ||
	    cuda_failed(s, cuMemcpyDtoH(s->hidden, s->dev_hidden, (size_t)h * sizeof(float)), "cuMemcpyDtoH"))
		return EXIT_CUDA_ERROR;
	int n = s->who.world_size;
	for (long i = 0; i < h; i++) {
		float want = (float)(n * (n + 1) / 2 * ((i + token) % 7 + 1));
		if (s->hidden[i] != want) {
			say(s, "token %ld: hidden[%ld] = %g, expected %g", token, i, (double)s->hidden[i], (double)want);
			return EXIT_WRONG_RESULT;
		}
	}
	if (s->opt->verbose)
		say(s, "token %ld decoded", token);
	return EXIT_OK;
}

static int serve(const struct rank_info *who, void *arg)
{
	struct options *opt = arg;
	struct server s = { .opt = opt, .rendezvous_dir = opt->rendezvous, .who = *who };
	int status = setup(&s);
	if (status == EXIT_OK)
		status = capture_decode_step(&s);
	for (long token = 1; status == EXIT_OK && token <= opt->tokens; token++) {
		if (who->rank == opt->stop_rank && token == opt->stop_token + 1) {
			say(&s, "fault stop: stopped after %ld tokens, idling until killed", opt->stop_token);
			for (;;)
				pause();
		}
		status = decode_token(&s, token);
	}
	if (status == EXIT_OK) {
		if (cuda_failed(&s, cuGraphExecDestroy(s.exec), "cuGraphExecDestroy") ||
		    cuda_failed(&s, cuGraphDestroy(s.graph), "cuGraphDestroy"))
			status = EXIT_CUDA_ERROR;
		else if (nccl_failed(&s, ncclCommFinalize(s.world), "ncclCommFinalize") ||
		         nccl_failed(&s, ncclCommDestroy(s.world), "ncclCommDestroy"))
			status = EXIT_NCCL_ERROR;
		else
			say(&s, "ok tokens=%ld", opt->tokens);
	} else if (s.world) {
		ncclCommAbort(s.world);
	}
	free(s.hidden);
	return status;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: decode_loop [--nranks N] [--tokens T] [--hidden H] [--rendezvous DIR]\n"
	           "                   [--fault stop:rank=R:token=K] [--verbose]\n"
	           "  a decode loop served from a CUDA graph: one AllReduce captured once, replayed per token\n"
	           "  --nranks N   fork N local ranks (default: the rank from torchrun/mpirun/srun variables)\n"
	           "  --tokens T   tokens to decode (default 200)\n"
	           "  --hidden H   floats in the hidden state (default 1024)\n"
	           "  --fault stop:rank=R:token=K   rank R stops after K tokens and idles\n");
}

static long number(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < 0) {
		fprintf(stderr, "decode_loop: bad %s: %s\n", what, s);
		exit(EXIT_USAGE);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct options opt = { .tokens = 200, .hidden = 1024, .stop_rank = -1 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help")) {
			usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "--verbose")) {
			opt.verbose = 1;
		} else if (v && !strcmp(a, "--nranks")) {
			opt.nranks = (int)number(v, "--nranks"), i++;
		} else if (v && !strcmp(a, "--tokens")) {
			opt.tokens = number(v, "--tokens"), i++;
		} else if (v && !strcmp(a, "--hidden")) {
			opt.hidden = number(v, "--hidden"), i++;
		} else if (v && !strcmp(a, "--rendezvous")) {
			opt.rendezvous = v, i++;
		} else if (v && !strcmp(a, "--fault")) {
			int r;
			long k;
			char tail;
			if (sscanf(v, "stop:rank=%d:token=%ld%c", &r, &k, &tail) != 2 || r < 0 || k < 0) {
				fprintf(stderr, "decode_loop: bad --fault %s (stop:rank=R:token=K)\n", v);
				return EXIT_USAGE;
			}
			opt.stop_rank = r, opt.stop_token = k, i++;
		} else {
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (opt.hidden < 1) {
		fprintf(stderr, "decode_loop: --hidden must be at least 1\n");
		return EXIT_USAGE;
	}
	char *own_dir = NULL;
	if (!opt.rendezvous) {
		char key[32];
		snprintf(key, sizeof key, "decode-%d", (int)getpid());
		opt.rendezvous = own_dir = default_rendezvous_dir(opt.nranks > 0 ? key : launcher_job_key());
		if (!own_dir) {
			fprintf(stderr, "decode_loop: out of memory\n");
			return EXIT_SETUP;
		}
	}
	int status;
	if (opt.nranks > 0) {
		status = launch_local_ranks(opt.nranks, serve, &opt);
	} else {
		struct rank_info who;
		if (rank_from_environment(&who) < 0)
			return EXIT_USAGE;
		status = serve(&who, &opt);
	}
	if (own_dir && (opt.nranks > 0 || status == EXIT_OK))
		rmdir(own_dir);
	free(own_dir);
	return status;
}
