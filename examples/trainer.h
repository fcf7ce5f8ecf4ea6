/* The example trainer's shared declarations: its command-line options, the
 * application-level faults it can inject, how a process learns its rank
 * (launcher environment or --nranks), and its exit codes.
 *
 *   trainer_options.c  parses the command line (--help lists everything)
 *   launch.c           ranks from torchrun/mpirun/srun, the local fork
 *                      launcher of --nranks, the unique-id rendezvous
 *   trainer.c          main() and the training loop itself
 */
#ifndef NCCLWATCH_EXAMPLE_TRAINER_H
#define NCCLWATCH_EXAMPLE_TRAINER_H

#include <nccl.h>

/* Exit codes of a rank (the --nranks parent exits with the first failing
 * rank's code, or 128 + signal number if it was killed). */
enum trainer_exit {
	EXIT_OK = 0,
	EXIT_SETUP = 1,        /* rendezvous or environment problem */
	EXIT_USAGE = 2,        /* bad command line */
	EXIT_WRONG_RESULT = 3, /* a collective returned the wrong data */
	EXIT_NCCL_ERROR = 4,   /* an NCCL call or NCCL's async error failed */
	EXIT_CUDA_ERROR = 5,   /* a CUDA driver call failed (e.g. a GPU fault) */
};

/* Faults the application itself injects (--fault KIND:rank=R:step=S[:ms=M]);
 * compile takes rank=R|all and no step;
 * the simulated NCCL injects its own below the application (NCCLSIM_FAULT). */
enum fault_kind {
	FAULT_NONE,
	FAULT_SKIP,   /* R does not issue step S's all-reduce, then idles */
	FAULT_COUNT,  /* R's all-reduce at step S has a different count */
	FAULT_DTYPE,  /* R's all-reduce at step S has a different datatype */
	FAULT_ORDER,  /* R issues step S's broadcast before its all-reduce */
	FAULT_SLEEP,  /* R sleeps ms before step S's all-reduce */
	FAULT_P2P,    /* R sends to the wrong peer in step S's pipeline ring */
	FAULT_NOINIT, /* R never creates the communicator; it idles instead */
	FAULT_CRASH,  /* R kills itself with SIGKILL at step S */
	FAULT_EXIT,   /* R leaves with exit code 0 at step S */
	FAULT_COMPILE,/* R (or every rank) stalls in compile_step() after creating
	               * the communicators, before the first step: forever, or ms */
};

/* fault.rank of a fault that every rank injects (compile:rank=all). */
#define FAULT_RANK_ALL (-2)

struct fault {
	enum fault_kind kind;
	int rank;                /* FAULT_RANK_ALL: every rank */
	long step;
	long ms;
};

struct trainer_options {
	long steps;
	long count;              /* float elements per gradient */
	long bcast_every;        /* broadcast after steps 0, K, 2K...; 0: never */
	int nranks;              /* --nranks N: fork N local ranks; 0: from env */
	const char *rendezvous;  /* directory for the ncclUniqueId; NULL: default */
	int device_per_rank;
	int nonblocking;
	int pipeline;
	int verbose;
	struct fault fault;
};

/* Where this process sits in the job. */
struct rank_info {
	int rank;
	int world_size;
	int local_rank;
	const char *launcher;    /* "torchrun", "mpirun", "srun", "local", "none" */
};

/* trainer_options.c */
const char *fault_kind_name(enum fault_kind kind);
/* Fills *opt from argv; on --help prints usage and exits 0, on a bad
 * argument prints the problem and exits EXIT_USAGE. */
void parse_options(int argc, char **argv, struct trainer_options *opt);

/* launch.c */
/* The rank from RANK/WORLD_SIZE/LOCAL_RANK (torchrun), OMPI_COMM_WORLD_*
 * (mpirun) or SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID (srun); a process
 * started by none of them is rank 0 of 1. Returns 0, or -1 after printing
 * the problem. */
int rank_from_environment(struct rank_info *who);
/* The default rendezvous directory for a job whose ranks share `key`. */
char *default_rendezvous_dir(const char *key);
/* A key that every rank of a launcher-started job computes alike. */
const char *launcher_job_key(void);
/* Forks n ranks that each run rank_main(who, arg) and exit with its value;
 * forwards SIGINT/SIGTERM to them; reports every rank that failed. Returns
 * the parent's exit status. */
int launch_local_ranks(int n, int (*rank_main)(const struct rank_info *who, void *arg), void *arg);
/* Rank 0 publishes the unique id atomically (temp file + rename); others
 * wait for the file. Return 0, or -1 after printing the problem. */
int rendezvous_publish(const char *dir, const ncclUniqueId *id);
int rendezvous_fetch(const char *dir, ncclUniqueId *id);
/* Rank 0, once every rank joined the communicator: remove the id file so
 * that a later job reusing the directory never reads a stale id. */
void rendezvous_remove(const char *dir);

#endif /* NCCLWATCH_EXAMPLE_TRAINER_H */
