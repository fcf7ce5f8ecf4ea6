/* How trainer processes find each other: the rank from the launcher's
 * environment, a tiny local launcher for --nranks (fork, wait, forward
 * signals, report failed ranks), and the rendezvous through which rank 0
 * hands the ncclUniqueId to everyone (a file in a shared directory). */
#include "trainer.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RENDEZVOUS_FILE "ncclUniqueId"

/* ---- ranks from the launcher ------------------------------------------ */

static int env_int(const char *name, int *value)
{
	const char *text = getenv(name);
	if (!text || !*text)
		return 0;
	char *end;
	long v = strtol(text, &end, 10);
	if (*end || v < 0 || v > 1 << 30)
		return -1;
	*value = (int)v;
	return 1;
}

int rank_from_environment(struct rank_info *who)
{
	static const struct {
		const char *launcher, *rank, *size, *local_rank;
	} launchers[] = {
		{ "torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK" },
		{ "mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK" },
		{ "srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID" },
	};
	*who = (struct rank_info){ .rank = 0, .world_size = 1, .local_rank = 0, .launcher = "none" };
	for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
		int rank, size, local_rank;
		int have_rank = env_int(launchers[i].rank, &rank);
		int have_size = env_int(launchers[i].size, &size);
		if (have_rank == 0 && have_size == 0)
			continue;
		if (have_rank != 1 || have_size != 1 || size < 1 || rank >= size) {
			fprintf(stderr, "trainer: %s=%s and %s=%s do not make a rank\n",
			        launchers[i].rank, getenv(launchers[i].rank) ? getenv(launchers[i].rank) : "",
			        launchers[i].size, getenv(launchers[i].size) ? getenv(launchers[i].size) : "");
			return -1;
		}
		if (env_int(launchers[i].local_rank, &local_rank) != 1)
			local_rank = rank;
		*who = (struct rank_info){ rank, size, local_rank, launchers[i].launcher };
		return 0;
	}
	return 0;
}

const char *launcher_job_key(void)
{
	static char key[64];
	const char *id = getenv("TORCHELASTIC_RUN_ID");
	const char *nodes = getenv("GROUP_WORLD_SIZE"), *hnp;
	if (!id || !*id || !strcmp(id, "none")) /* torchrun without --rdzv_id */
		id = getenv("SLURM_JOB_ID");
	if (id && *id && strlen(id) < 40)
		snprintf(key, sizeof key, "job-%s", id);
	else if (nodes && strcmp(nodes, "1") && getenv("MASTER_ADDR") && getenv("MASTER_PORT"))
		/* torchrun's run id "none" on several nodes: only the store's
		 * address is the same on every node */
		snprintf(key, sizeof key, "torchrun-%.30s-%.8s", getenv("MASTER_ADDR"), getenv("MASTER_PORT"));
	else if ((hnp = getenv("OMPI_MCA_orte_hnp_uri")) && strcspn(hnp, ".;") > 0 && strcspn(hnp, ".;") < 40)
		/* Open MPI: the job id, which the ranks on every node share (their
		 * parents are one orted per node) */
		snprintf(key, sizeof key, "ompi-%.*s", (int)strcspn(hnp, ".;"), hnp);
	else /* the launcher is our parent: torchrun, srun's stepd, mpirun on one node */
		snprintf(key, sizeof key, "ppid-%d", (int)getppid());
	/* It names a directory: nothing but [A-Za-z0-9._-]. */
	for (char *c = key; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		      *c == '.' || *c == '_' || *c == '-'))
			*c = '_';
	return key;
}

char *default_rendezvous_dir(const char *key)
{
	const char *base = getenv("NCCLSIM_DIR");
	if (!base || !*base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	char *dir;
	if (asprintf(&dir, "%s/trainer-rendezvous-%d-%s", base, (int)getuid(), key) < 0)
		return NULL;
	return dir;
}

/* ---- the local launcher (--nranks) ------------------------------------- */

static pid_t *child_pids;
static int child_count;

/* Ctrl-C or a kill of the parent reaches every rank, as with torchrun. */
static void forward_signal(int sig)
{
	int saved = errno;
	for (int i = 0; i < child_count; i++)
		if (child_pids[i] > 0)
			kill(child_pids[i], sig);
	errno = saved;
}

int launch_local_ranks(int n, int (*rank_main)(const struct rank_info *who, void *arg), void *arg)
{
	child_pids = calloc((size_t)n, sizeof *child_pids);
	if (!child_pids) {
		fprintf(stderr, "trainer: out of memory\n");
		return EXIT_SETUP;
	}
	/* Block the forwarded signals while forking so no child is missed. */
	sigset_t forwarded, previous;
	sigemptyset(&forwarded);
	sigaddset(&forwarded, SIGINT);
	sigaddset(&forwarded, SIGTERM);
	sigprocmask(SIG_BLOCK, &forwarded, &previous);
	struct sigaction forward = { .sa_handler = forward_signal };
	sigemptyset(&forward.sa_mask);
	sigaction(SIGINT, &forward, NULL);
	sigaction(SIGTERM, &forward, NULL);

	fflush(NULL);
	pid_t parent = getpid();
	for (int rank = 0; rank < n; rank++) {
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "trainer: fork: %s\n", strerror(errno));
			forward_signal(SIGTERM);
			break;
		}
		if (pid == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			sigprocmask(SIG_SETMASK, &previous, NULL);
			/* A launcher killed outright takes its ranks along. */
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() != parent)
				_exit(EXIT_SETUP);
			/* Like torchrun: tools (ncclwatch too) read the rank from here. */
			char text[16];
			snprintf(text, sizeof text, "%d", rank);
			setenv("RANK", text, 1);
			setenv("LOCAL_RANK", text, 1);
			snprintf(text, sizeof text, "%d", n);
			setenv("WORLD_SIZE", text, 1);
			setenv("LOCAL_WORLD_SIZE", text, 1);
			struct rank_info who = { rank, n, rank, "local" };
			exit(rank_main(&who, arg));
		}
		child_pids[rank] = pid;
		child_count = rank + 1;
	}
	sigprocmask(SIG_SETMASK, &previous, NULL);

	int status = EXIT_OK, failed = 0, left = child_count;
	while (left > 0) {
		int wstatus;
		pid_t pid = waitpid(-1, &wstatus, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		int rank = 0;
		while (rank < child_count && child_pids[rank] != pid)
			rank++;
		if (rank == child_count)
			continue;
		child_pids[rank] = 0;
		left--;
		int code = EXIT_OK;
		if (WIFSIGNALED(wstatus)) {
			code = 128 + WTERMSIG(wstatus);
			fprintf(stderr, "trainer: rank %d (pid %d) was killed by signal %d (%s)\n",
			        rank, (int)pid, WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
		} else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0) {
			code = WEXITSTATUS(wstatus);
			fprintf(stderr, "trainer: rank %d (pid %d) failed with exit code %d\n",
			        rank, (int)pid, code);
		}
		if (code != EXIT_OK && failed++ == 0)
			status = code;
	}
	if (child_count < n && status == EXIT_OK)
		status = EXIT_SETUP;
	if (failed)
		fprintf(stderr, "trainer: %d of %d ranks failed\n", failed, n);
	else if (status == EXIT_OK)
		printf("trainer: all %d ranks ok\n", n);
	free(child_pids);
	child_pids = NULL;
	child_count = 0;
	return status;
}

/* ---- the unique-id rendezvous ------------------------------------------ */

static int make_dir(const char *dir)
{
	if (mkdir(dir, 0700) == 0 || errno == EEXIST)
		return 0;
	fprintf(stderr, "trainer: cannot create rendezvous directory %s: %s\n", dir, strerror(errno));
	return -1;
}

int rendezvous_publish(const char *dir, const ncclUniqueId *id)
{
	if (make_dir(dir) < 0)
		return -1;
	char tmp[4096], final[4096];
	snprintf(tmp, sizeof tmp, "%s/.%s.%d.tmp", dir, RENDEZVOUS_FILE, (int)getpid());
	snprintf(final, sizeof final, "%s/%s", dir, RENDEZVOUS_FILE);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, id, sizeof *id) != (ssize_t)sizeof *id || close(fd) < 0) {
		fprintf(stderr, "trainer: cannot write %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	/* rename() is atomic: a reader sees no file or the whole id. */
	if (rename(tmp, final) < 0) {
		fprintf(stderr, "trainer: cannot rename %s to %s: %s\n", tmp, final, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int rendezvous_fetch(const char *dir, ncclUniqueId *id)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, RENDEZVOUS_FILE);
	const struct timespec poll_interval = { 0, 20 * 1000 * 1000 };
	for (long polls = 0;; polls++) {
		int fd = open(path, O_RDONLY);
		if (fd >= 0) {
			ssize_t got = read(fd, id, sizeof *id);
			close(fd);
			if (got == (ssize_t)sizeof *id)
				return 0;
			fprintf(stderr, "trainer: %s holds %zd bytes, not a ncclUniqueId\n", path, got);
			return -1;
		}
		if (errno != ENOENT) {
			fprintf(stderr, "trainer: cannot read %s: %s\n", path, strerror(errno));
			return -1;
		}
		if (polls == 1500) /* 30 s: say once what we are waiting for */
			fprintf(stderr, "trainer: still waiting for rank 0 to write %s\n", path);
		nanosleep(&poll_interval, NULL);
	}
}

void rendezvous_remove(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, RENDEZVOUS_FILE);
	unlink(path);
}
