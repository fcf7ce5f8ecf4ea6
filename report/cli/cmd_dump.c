/* `ncclwatch dump [--job NAME] [--wait S] [DIR]`: asks every process of
 * the jobs under DIR on this host for its thread stacks, live, the way a
 * watchdog that found a stall does (the job's control file), and waits
 * for their dumps. For jobs where nobody is stuck (an IDLE job compiling
 * or loading data) no watchdog asks by itself; `diagnose` then shows the
 * stacks the dumps hold. */
#include "commands.h"
#include "trust.h"

#include "ncclwatch/control.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../escape.h"

static void dump_help(FILE *out)
{
	fprintf(out,
	        "usage: ncclwatch dump [--job NAME] [--wait S] [DIR]\n"
	        "\n"
	        "Asks every ncclwatch process of each job under DIR (a job directory, or a\n"
	        "directory of them; default $NCCLWATCH_DIR, else /dev/shm/ncclwatch-$UID)\n"
	        "to capture all its threads' stacks and write a dump\n"
	        "(<host>.<pid>.rank<R>.dump.seg in its dump directory), as the watchdog\n"
	        "does when it finds a stall, then waits for the dumps of the job\n"
	        "directory. Only processes of this host see the request (and the wait\n"
	        "counts the dumps in the job directory only: with NCCLWATCH_DUMP_DIR\n"
	        "elsewhere, look there). Then `ncclwatch diagnose` shows where every\n"
	        "thread is.\n"
	        "\n"
	        "  -j, --job NAME   only that job\n"
	        "  -w, --wait S     seconds to wait for the dumps (default 5; 0: do not wait)\n"
	        "  -h, --help       this text\n"
	        "\n"
	        "Output: one line per job, \"dump: job NAME: N of M processes answered\".\n"
	        "Exit status: 0 every process answered, 1 some did not in time, 2 usage\n"
	        "error or no job with a control file under DIR.\n");
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Live segments (the processes) in `jobdir`, and dumps written since
 * `since` (CLOCK_REALTIME ns). */
static void count_files(const char *jobdir, uint64_t since, int *procs, int *dumps)
{
	*procs = *dumps = 0;
	DIR *d = opendir(jobdir);
	if (!d)
		return;
	struct dirent *e;
	char path[PATH_MAX];
	while ((e = readdir(d))) {
		if (!has_suffix(e->d_name, ".seg"))
			continue;
		if (!has_suffix(e->d_name, ".dump.seg")) {
			(*procs)++;
			continue;
		}
		struct stat st;
		if (snprintf(path, sizeof path, "%s/%s", jobdir, e->d_name) < (int)sizeof path && stat(path, &st) == 0 &&
		    (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec >= since)
			(*dumps)++;
	}
	closedir(d);
}

/* Raise one request in jobdir/control: 0, or -1 (not a usable control file). */
static int raise_request(const char *jobdir)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/control", jobdir) >= (int)sizeof path)
		return -1;
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	/* Another user's file could be truncated under the mapping (SIGBUS). */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < NW_CONTROL_SIZE ||
	    st.st_uid != getuid()) {
		close(fd);
		return -1;
	}
	struct nw_control *c = mmap(NULL, NW_CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (c == MAP_FAILED)
		return -1;
	int rc = -1;
	if (memcmp(c->magic, NW_CONTROL_MAGIC, sizeof NW_CONTROL_MAGIC) == 0) {
		c->pid = getpid();
		c->rank = -1;
		c->realtime_ns = now_ns(CLOCK_REALTIME);
		if (gethostname(c->host, sizeof c->host) != 0)
			c->host[0] = 0;
		c->host[sizeof c->host - 1] = 0;
		atomic_fetch_add(&c->request, 1);
		rc = 0;
	}
	munmap(c, NW_CONTROL_SIZE);
	return rc;
}

struct job_list {
	char paths[256][PATH_MAX];
	int n;
};

/* DIR itself if it has a control file, else its subdirectories that do. */
static void find_jobs(const char *dir, const char *only, struct job_list *jobs)
{
	char path[PATH_MAX];
	struct stat st;
	if (snprintf(path, sizeof path, "%s/control", dir) < (int)sizeof path && lstat(path, &st) == 0) {
		const char *base = strrchr(dir, '/');
		base = base && base[1] ? base + 1 : dir;
		if (!only || strcmp(base, only) == 0)
			snprintf(jobs->paths[jobs->n++], PATH_MAX, "%s", dir);
		return;
	}
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) && jobs->n < (int)(sizeof jobs->paths / sizeof jobs->paths[0])) {
		if (e->d_name[0] == '.' || (only && strcmp(e->d_name, only) != 0))
			continue;
		if (snprintf(path, sizeof path, "%s/%s/control", dir, e->d_name) >= (int)sizeof path ||
		    lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		snprintf(jobs->paths[jobs->n++], PATH_MAX, "%s/%s", dir, e->d_name);
	}
	closedir(d);
}

static int run_dump(int argc, char **argv)
{
	static const struct option options[] = {
		{ "job", required_argument, NULL, 'j' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *only = NULL;
	double wait_s = 5;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":j:w:h", options, NULL)) != -1) {
		switch (c) {
		case 'j':
			only = optarg;
			break;
		case 'w':
			if (strcmp(optarg, "0") == 0)
				wait_s = 0;
			else if (nw_cli_seconds(optarg, &wait_s) != 0)
				return nw_usage_error("dump", "--wait wants a number of seconds >= 0, not '%s'", optarg);
			break;
		case 'h':
			dump_help(stdout);
			return NW_EXIT_OK;
		case ':':
			return nw_usage_error("dump", "option '%s' needs a value", argv[optind - 1]);
		default:
			return nw_usage_error("dump", "unknown option '%s' (see ncclwatch dump --help)", argv[optind - 1]);
		}
	}
	if (argc - optind > 1)
		return nw_usage_error("dump", "one directory at most, not %d", argc - optind);
	char defdir[PATH_MAX];
	const char *dir = optind < argc ? argv[optind] : NULL;
	int rc;
	if (!dir && (rc = nw_cli_default_dir("dump", defdir, sizeof defdir, NULL, &dir)) != NW_EXIT_OK)
		return rc;
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return nw_usage_error("dump", "%s: %s", dir, errno ? strerror(errno) : "not a directory");

	static struct job_list jobs;
	jobs.n = 0;
	find_jobs(dir, only, &jobs);
	if (jobs.n == 0)
		return nw_usage_error("dump", "%s: no job%s%s with a control file (no running ncclwatch process?)", dir,
		                      only ? " named " : "", only ? only : "");
	uint64_t since = now_ns(CLOCK_REALTIME);
	int raised[256] = { 0 };
	for (int i = 0; i < jobs.n; i++)
		raised[i] = raise_request(jobs.paths[i]) == 0;
	/* Dumps arrive within a poll of each watchdog (NCCLWATCH_POLL_MS). */
	uint64_t deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t)(wait_s * 1e9);
	int status = NW_EXIT_OK;
	for (int i = 0; i < jobs.n; i++) {
		int procs, dumps;
		for (;;) {
			count_files(jobs.paths[i], since, &procs, &dumps);
			if (!raised[i] || dumps >= procs || now_ns(CLOCK_MONOTONIC) >= deadline)
				break;
			usleep(50 * 1000);
		}
		const char *name = strrchr(jobs.paths[i], '/');
		name = name ? name + 1 : jobs.paths[i];
		if (!raised[i]) {
			nw_print_line(stdout, "dump: job %s: %s/control is not a control file; nothing asked", name, jobs.paths[i]);
			status = NW_EXIT_PROBLEM;
		} else {
			nw_print_line(stdout, "dump: job %s: %d of %d process%s answered", name, dumps < procs ? dumps : procs, procs,
			       procs == 1 ? "" : "es");
			if (dumps < procs && wait_s > 0)
				status = NW_EXIT_PROBLEM;
		}
	}
	return status;
}

const struct nw_command nw_cmd_dump = {
	.name = "dump",
	.summary = "ask every process of a live job for its stacks (a dump each)",
	.help = dump_help,
	.run = run_dump,
};
