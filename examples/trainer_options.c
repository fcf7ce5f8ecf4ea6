/* The trainer's command line: getopt_long options, --help, and the
 * --fault KIND:rank=R:step=S[:ms=M] specification. */
#include "trainer.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trainer [options]\n"
"A data-parallel training loop on NCCL and the CUDA driver API. Per step it\n"
"all-reduces float \"gradients\" (sum, then divide by the number of ranks) on\n"
"the world communicator and checks the result; every K steps rank 0\n"
"broadcasts the weights; with --pipeline each rank also passes activations\n"
"around a ring of send/recv on a communicator split from the world.\n"
"\n"
"Ranks come from torchrun (RANK, WORLD_SIZE, LOCAL_RANK), mpirun\n"
"(OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK), srun (SLURM_PROCID, SLURM_NTASKS,\n"
"SLURM_LOCALID), or --nranks N, which forks N local ranks itself.\n"
"\n"
"  --steps N           training steps (default 100)\n"
"  --count N           float elements per gradient (default 1024)\n"
"  --bcast-every K     broadcast from rank 0 after steps 0, K, 2K... (default 10; 0: never)\n"
"  --pipeline          send/recv ring on a communicator split from the world\n"
"  --nranks N          fork N local ranks (rank i uses LOCAL_RANK i)\n"
"  --rendezvous DIR    directory where rank 0 publishes the ncclUniqueId (shared\n"
"                      by all hosts; default: a directory under $NCCLSIM_DIR or\n"
"                      /tmp keyed by the launcher's job)\n"
"  --device-per-rank   use device LOCAL_RANK mod the device count (default: device 0)\n"
"  --nonblocking       communicators with config.blocking = 0; waits by polling\n"
"                      ncclCommGetAsyncError and cuStreamQuery\n"
"  --verbose           print \"rank R step S done\" after every step\n"
"  --fault SPEC        inject an application fault, SPEC = KIND:rank=R:step=S[:ms=M]\n"
"      skip    R does not issue step S's all-reduce and idles (others hang)\n"
"      count   R's all-reduce at step S has a different count\n"
"      dtype   R's all-reduce at step S is float16 instead of float\n"
"      order   at step S (a broadcast step on every rank) R broadcasts before\n"
"              it all-reduces, the others after\n"
"      sleep   R sleeps ms=M milliseconds before step S's all-reduce\n"
"      p2p     R sends to the wrong peer in step S's ring (implies --pipeline)\n"
"      noinit  R never creates the communicator and idles (no step=)\n"
"      crash   R kills itself with SIGKILL at step S\n"
"      exit    R leaves with exit code 0 at step S, skipping the rest\n"
"      compile R (rank=all: every rank) stalls in compile_step() after creating\n"
"              the communicators, before the first collective, like a JIT\n"
"              compile that never ends; forever, or ms=M milliseconds (no step=)\n"
"  -h, --help          this text\n"
"\n"
"Output: \"rank R ok steps=N ...\" per rank on success. Exit codes: 0 ok,\n"
"1 setup, 2 usage, 3 wrong result, 4 NCCL error, 5 CUDA error; the --nranks\n"
"parent exits with the first failing rank's code (128+signal if killed).\n";

static const struct {
	const char *name;
	enum fault_kind kind;
} fault_names[] = {
	{ "skip", FAULT_SKIP },   { "count", FAULT_COUNT },   { "dtype", FAULT_DTYPE },
	{ "order", FAULT_ORDER }, { "sleep", FAULT_SLEEP },   { "p2p", FAULT_P2P },
	{ "noinit", FAULT_NOINIT }, { "crash", FAULT_CRASH }, { "exit", FAULT_EXIT },
	{ "compile", FAULT_COMPILE },
};

const char *fault_kind_name(enum fault_kind kind)
{
	for (size_t i = 0; i < sizeof fault_names / sizeof fault_names[0]; i++)
		if (fault_names[i].kind == kind)
			return fault_names[i].name;
	return "none";
}

static void usage_error(const char *fmt, const char *what)
{
	fprintf(stderr, "trainer: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, " (try --help)\n");
	exit(EXIT_USAGE);
}

/* A whole-string non-negative decimal number, else a usage error. */
static long parse_count(const char *text, const char *what)
{
	char *end;
	errno = 0;
	long value = strtol(text, &end, 10);
	if (errno || end == text || *end || value < 0)
		usage_error("%s wants a non-negative number", what);
	return value;
}

static void parse_fault(const char *spec, struct fault *fault)
{
	char *copy = strdup(spec), *save = NULL;
	if (!copy)
		usage_error("out of memory parsing %s", spec);
	char *kind = strtok_r(copy, ":", &save);
	fault->kind = FAULT_NONE;
	for (size_t i = 0; kind && i < sizeof fault_names / sizeof fault_names[0]; i++)
		if (!strcmp(kind, fault_names[i].name))
			fault->kind = fault_names[i].kind;
	if (fault->kind == FAULT_NONE)
		usage_error("unknown fault kind in '%s'", spec);
	fault->rank = fault->step = fault->ms = -1;
	for (char *field; (field = strtok_r(NULL, ":", &save));) {
		if (!strcmp(field, "rank=all") && fault->kind == FAULT_COMPILE)
			fault->rank = FAULT_RANK_ALL;
		else if (!strncmp(field, "rank=", 5))
			fault->rank = (int)parse_count(field + 5, "--fault rank=");
		else if (!strncmp(field, "step=", 5))
			fault->step = parse_count(field + 5, "--fault step=");
		else if (!strncmp(field, "ms=", 3))
			fault->ms = parse_count(field + 3, "--fault ms=");
		else
			usage_error("unknown field in --fault '%s'", spec);
	}
	if (fault->rank < 0 && fault->rank != FAULT_RANK_ALL)
		usage_error("--fault '%s' needs rank=R", spec);
	if (fault->step >= 0 && fault->kind == FAULT_COMPILE)
		usage_error("--fault '%s': compile happens before the first step (no step=)", spec);
	if (fault->step < 0 && fault->kind != FAULT_NOINIT && fault->kind != FAULT_COMPILE)
		usage_error("--fault '%s' needs step=S", spec);
	if (fault->ms < 0 && fault->kind == FAULT_SLEEP)
		usage_error("--fault '%s' needs ms=M", spec);
	free(copy);
}

void parse_options(int argc, char **argv, struct trainer_options *opt)
{
	enum { OPT_STEPS = 256, OPT_COUNT, OPT_BCAST, OPT_NRANKS, OPT_RDV, OPT_DEVICE,
	       OPT_NONBLOCKING, OPT_PIPELINE, OPT_FAULT, OPT_VERBOSE };
	static const struct option longopts[] = {
		{ "steps", required_argument, NULL, OPT_STEPS },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "bcast-every", required_argument, NULL, OPT_BCAST },
		{ "nranks", required_argument, NULL, OPT_NRANKS },
		{ "rendezvous", required_argument, NULL, OPT_RDV },
		{ "device-per-rank", no_argument, NULL, OPT_DEVICE },
		{ "nonblocking", no_argument, NULL, OPT_NONBLOCKING },
		{ "pipeline", no_argument, NULL, OPT_PIPELINE },
		{ "fault", required_argument, NULL, OPT_FAULT },
		{ "verbose", no_argument, NULL, OPT_VERBOSE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	*opt = (struct trainer_options){ .steps = 100, .count = 1024, .bcast_every = 10 };
	int c;
	while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_STEPS: opt->steps = parse_count(optarg, "--steps"); break;
		case OPT_COUNT: opt->count = parse_count(optarg, "--count"); break;
		case OPT_BCAST: opt->bcast_every = parse_count(optarg, "--bcast-every"); break;
		case OPT_NRANKS: opt->nranks = (int)parse_count(optarg, "--nranks"); break;
		case OPT_RDV: opt->rendezvous = optarg; break;
		case OPT_DEVICE: opt->device_per_rank = 1; break;
		case OPT_NONBLOCKING: opt->nonblocking = 1; break;
		case OPT_PIPELINE: opt->pipeline = 1; break;
		case OPT_FAULT:
			if (opt->fault.kind != FAULT_NONE)
				usage_error("%s: only one --fault at a time", optarg);
			parse_fault(optarg, &opt->fault);
			break;
		case 'v': case OPT_VERBOSE: opt->verbose = 1; break;
		case 'h': fputs(usage_text, stdout); exit(EXIT_OK);
		default: fprintf(stderr, "%s", usage_text); exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (opt->count < 1)
		usage_error("%s must be at least 1", "--count");
	if (opt->nranks > 4096)
		usage_error("%s: at most 4096 local ranks", "--nranks");
	if (opt->fault.kind == FAULT_P2P)
		opt->pipeline = 1;
}
