/* `ncclwatch dump [--job NAME] [--wait S] [DIR]`: asks every process of
 * the jobs under DIR on this host for its thread stacks, live, the way a
 * watchdog that found a stall does (the job's control file), and waits
 * for their dumps. For jobs where nobody is stuck (an IDLE job compiling
 * or loading data) no watchdog asks by itself; `diagnose` then shows the
 * stacks the dumps hold. A process has answered when its segment's
 * request_served reaches the request raised; dead processes' kept
 * segments are named, never waited for. */
#include "commands.h"
#include "trust.h"

#include "ncclwatch/control.h"
#include "../sources/segment_reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
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
	        "Asks every live ncclwatch process of each job under DIR (a job directory,\n"
	        "or a directory of them; default $NCCLWATCH_DIR, else /dev/shm/ncclwatch-$UID)\n"
	        "to capture all its threads' stacks and write a dump\n"
	        "(<host>.<pid>.rank<R>.dump.seg in its dump directory), as the watchdog\n"
	        "does when it finds a stall, then waits until each has answered (its\n"
	        "segment notes the request it served). Only processes of this host see the\n"
	        "request; a segment a dead process left (kept as evidence) is not asked and\n"
	        "not waited for: it is named dead. Then `ncclwatch diagnose` shows where\n"
	        "every thread is.\n"
	        "\n"
	        "  -j, --job NAME   only that job\n"
	        "  -w, --wait S     seconds to wait for the answers (default 5; 0: do not wait)\n"
	        "  -h, --help       this text\n"
	        "\n"
	        "Output: one line per job, \"dump: job NAME: N of M processes answered\",\n"
	        "M the live processes asked, followed when there are any by\n"
	        "\"; D dead processes not asked (pids P,...)\", \"; E exiting, not asked\"\n"
	        "(their exit handler runs: their watchdog has stopped) and \"; O of other\n"
	        "hosts, not asked (run dump there)\".\n"
	        "Exit status: 0 every live process answered (none alive: nothing to wait\n"
	        "for), 1 some did not in time, 2 usage error or no job with a control file\n"
	        "under DIR.\n");
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

/* The processes of a job directory a request reaches, and what became of
 * the others. A process is asked when its segment (not a dump, not a
 * snapshot) is of the job, of this host, and its writer runs and has not
 * begun to exit; a kept segment of a process that is gone is dead. */
#define SHOW_DEAD 8
struct job_procs {
	char (*live)[NAME_MAX + 1];           /* segment file names of the processes asked */
	int nlive, cap;
	int64_t dead_pid[SHOW_DEAD];
	int ndead;
	int nexiting;                         /* running their exit handler: the watchdog has stopped */
	int nother;                           /* of another host: the request cannot reach them */
};

/* The header of segment `path`: 0, or -1 if it is not one we can read. */
static int read_header(const char *path, struct nw_seg_header *h)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n;
	do
		n = pread(fd, h, sizeof *h, 0);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n != (ssize_t)sizeof *h || memcmp(h->magic, NW_SEG_MAGIC, sizeof h->magic) != 0 ||
	    h->endian != NW_SEG_ENDIAN)
		return -1;
	h->host[sizeof h->host - 1] = 0;
	h->job[sizeof h->job - 1] = 0;
	return 0;
}

static void list_procs(const char *jobdir, const char *job, struct job_procs *jp)
{
	memset(jp, 0, sizeof *jp);
	char myhost[NW_SEG_HOST_LEN] = "";
	if (gethostname(myhost, sizeof myhost - 1) != 0)
		myhost[0] = 0;
	DIR *d = opendir(jobdir);
	if (!d)
		return;
	struct dirent *e;
	char path[PATH_MAX];
	struct nw_seg_header h;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !has_suffix(e->d_name, ".seg") || has_suffix(e->d_name, ".dump.seg") ||
		    snprintf(path, sizeof path, "%s/%s", jobdir, e->d_name) >= (int)sizeof path ||
		    read_header(path, &h) != 0)
			continue;
		if (h.flags & (NW_SEG_F_DUMP | NW_SEG_F_SNAPSHOT) || strcmp(h.job, job) != 0)
			continue;
		if (!myhost[0] || strcmp(h.host, myhost) != 0) {
			jp->nother++;
		} else if (nw_segment_writer_state(&h, path) == NW_WRITER_GONE) {
			if (jp->ndead < SHOW_DEAD)
				jp->dead_pid[jp->ndead] = h.pid;
			jp->ndead++;
		} else if (h.flags & NW_SEG_F_EXITED) {
			jp->nexiting++;
		} else {
			if (jp->nlive == jp->cap) {
				int cap = jp->cap ? 2 * jp->cap : 16;
				void *m = realloc(jp->live, (size_t)cap * sizeof *jp->live);
				if (!m)
					break;      /* the ones listed so far are asked */
				jp->live = m;
				jp->cap = cap;
			}
			snprintf(jp->live[jp->nlive++], sizeof jp->live[0], "%s", e->d_name);
		}
	}
	closedir(d);
}

/* Processes of jp->live that served request `id` (or a later one). */
static int count_answers(const char *jobdir, const struct job_procs *jp, uint64_t id)
{
	int n = 0;
	char path[PATH_MAX];
	struct nw_seg_header h;
	for (int i = 0; i < jp->nlive; i++)
		if (snprintf(path, sizeof path, "%s/%s", jobdir, jp->live[i]) < (int)sizeof path &&
		    read_header(path, &h) == 0 && h.request_served >= id)
			n++;
	return n;
}

/* Raise one request in jobdir/control: its id, or 0 (not a usable control file). */
static uint64_t raise_request(const char *jobdir)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/control", jobdir) >= (int)sizeof path)
		return -1;
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	/* Another user's file could be truncated under the mapping (SIGBUS). */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < NW_CONTROL_SIZE ||
	    st.st_uid != getuid()) {
		close(fd);
		return 0;
	}
	struct nw_control *c = mmap(NULL, NW_CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (c == MAP_FAILED)
		return 0;
	uint64_t id = 0;
	if (memcmp(c->magic, NW_CONTROL_MAGIC, sizeof NW_CONTROL_MAGIC) == 0) {
		c->pid = getpid();
		c->rank = -1;
		c->realtime_ns = now_ns(CLOCK_REALTIME);
		if (gethostname(c->host, sizeof c->host) != 0)
			c->host[0] = 0;
		c->host[sizeof c->host - 1] = 0;
		id = atomic_fetch_add(&c->request, 1) + 1;
	}
	munmap(c, NW_CONTROL_SIZE);
	return id;
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

/* The options; -1 to go on, else the exit status. */
static int parse_dump_options(int argc, char **argv, const char **only, double *wait_s)
{
	static const struct option options[] = {
		{ "job", required_argument, NULL, 'j' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":j:w:h", options, NULL)) != -1) {
		switch (c) {
		case 'j':
			*only = optarg;
			break;
		case 'w':
			if (strcmp(optarg, "0") == 0)
				*wait_s = 0;
			else if (nw_cli_seconds(optarg, wait_s) != 0)
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
	return -1;
}

/* How many of the job's live processes answered request `id` (0: none
 * raised), waiting for them until the deadline. */
static int wait_answers(const char *jobdir, const struct job_procs *jp, uint64_t id, uint64_t deadline)
{
	int answered;
	for (;;) {
		answered = id ? count_answers(jobdir, jp, id) : 0;
		if (!id || answered >= jp->nlive || now_ns(CLOCK_MONOTONIC) >= deadline)
			break;
		usleep(50 * 1000);
	}
	return answered;
}

/* The job's line: who answered, who was not asked and why. */
static void print_answers(const char *name, const struct job_procs *jp, int answered)
{
	fputs("dump: job ", stdout);
	nw_put_escaped(stdout, name, 0);
	printf(": %d of %d process%s answered", answered, jp->nlive, jp->nlive == 1 ? "" : "es");
	if (jp->ndead) {
		printf("; %d dead process%s not asked (pid%s ", jp->ndead, jp->ndead == 1 ? "" : "es",
		       jp->ndead == 1 ? "" : "s");
		for (int k = 0; k < jp->ndead && k < SHOW_DEAD; k++)
			printf("%s%lld", k ? "," : "", (long long)jp->dead_pid[k]);
		printf("%s)", jp->ndead > SHOW_DEAD ? ",..." : "");
	}
	if (jp->nexiting)
		printf("; %d exiting, not asked", jp->nexiting);
	if (jp->nother)
		printf("; %d of other hosts, not asked (run dump there)", jp->nother);
	putchar('\n');
}

static int run_dump(int argc, char **argv)
{
	const char *only = NULL;
	double wait_s = 5;
	int rc = parse_dump_options(argc, argv, &only, &wait_s);
	if (rc >= 0)
		return rc;
	if (argc - optind > 1)
		return nw_usage_error("dump", "one directory at most, not %d", argc - optind);
	char defdir[PATH_MAX];
	const char *dir = optind < argc ? argv[optind] : NULL;
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
	/* Who is asked is decided before asking: a process that starts later
	 * does not serve requests older than it. */
	static struct job_procs procs[256];
	uint64_t raised[256] = { 0 };
	for (int i = 0; i < jobs.n; i++) {
		const char *name = strrchr(jobs.paths[i], '/');
		list_procs(jobs.paths[i], name ? name + 1 : jobs.paths[i], &procs[i]);
		raised[i] = raise_request(jobs.paths[i]);
	}
	/* Each live process answers within a poll (NCCLWATCH_POLL_MS), or a
	 * second after its last dump; it notes the request in its segment. */
	uint64_t deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t)(wait_s * 1e9);
	int status = NW_EXIT_OK;
	for (int i = 0; i < jobs.n; i++) {
		const struct job_procs *jp = &procs[i];
		int answered = wait_answers(jobs.paths[i], jp, raised[i], deadline);
		const char *name = strrchr(jobs.paths[i], '/');
		name = name ? name + 1 : jobs.paths[i];
		if (!raised[i]) {
			nw_print_line(stdout, "dump: job %s: %s/control is not a control file; nothing asked", name, jobs.paths[i]);
			status = NW_EXIT_PROBLEM;
			continue;
		}
		print_answers(name, jp, answered);
		if (answered < jp->nlive && wait_s > 0)
			status = NW_EXIT_PROBLEM;
	}
	for (int i = 0; i < jobs.n; i++)
		free(procs[i].live);
	return status;
}

const struct nw_command nw_cmd_dump = {
	.name = "dump",
	.summary = "ask every process of a live job for its stacks (a dump each)",
	.help = dump_help,
	.run = run_dump,
};
