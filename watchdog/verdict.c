/* verdict: see verdict.h. */
#include "verdict.h"

#include "engine.h"
#include "../interpose/log.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#define NW_VERDICT_MIN_INTERVAL_NS 2000000000ull

static int lock_fd = -1;              /* >= 0: we report for this host */
static uint64_t last_signature;      /* of the verdict last printed, 0 none */
static uint64_t next_ns;              /* no analysis before this */
static int last_kind = -1;            /* worst kind of the last analysis, -1 none */
static const char *last_kind_name;    /* the engine's static name of it */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int hold_lock(const char *jobdir)
{
	if (lock_fd >= 0)
		return 1;
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/report.lock", jobdir) >= (int)sizeof(path))
		return 0;
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return 0;
	}
	lock_fd = fd;
	return 1;
}

static void write_report(const char *dir, const char *text, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32];
	if (snprintf(path, sizeof(path), "%s/report.txt", dir) >= (int)sizeof(path)
	    || snprintf(tmp, sizeof(tmp), "%s/.report.%d.tmp", dir, (int)getpid()) >= (int)sizeof(tmp))
		return;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	ssize_t w = write(fd, text, len);
	if (close(fd) == 0 && w == (ssize_t)len && rename(tmp, path) == 0)
		return;
	unlink(tmp);
}

/* The host's summary (report/sources/summary/) next to report.txt, as
 * `ncclwatch summary` writes it: <dump dir>/<host>.nwsum, this host's
 * processes of the job only. Quietly nothing when it cannot be. */
static void write_summary(const char *const *paths, size_t npaths, const char *job, const char *dir)
{
	nw_engine_summary_fn *summary = nw_engine_summary();
	char host[256] = "", path[PATH_MAX];
	if (!summary || gethostname(host, sizeof(host) - 1) != 0 || !host[0] || strchr(host, '/') ||
	    snprintf(path, sizeof(path), "%s/%s.nwsum", dir, host) >= (int)sizeof(path))
		return;
	struct nw_engine_summary_in in = { .paths = paths, .npaths = npaths, .job = job, .host = host,
	                                   .out_path = path };
	(void)summary(&in);
}

/* Each line to stderr with the prefix, as one write per line. */
static void print_lines(const char *text)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);
		nw_log("%.*s", n, p);
		p += n + (nl != NULL);
	}
}

void nw_verdict_tick(uint64_t now, const char *job, const char *jobdir, const char *dumpdir,
                     double timeout_s, int force)
{
	if (!force && now < next_ns)
		return;
	if (!hold_lock(jobdir))
		return;                       /* another process reports for this host */
	nw_engine_verdict_fn *verdict = nw_engine_verdict();
	if (!verdict)
		return;                        /* said once: no cross-rank verdict */
	const char *paths[2] = { jobdir, dumpdir };
	struct nw_engine_verdict_in in = { .paths = paths, .npaths = strcmp(jobdir, dumpdir) ? 2 : 1,
	                                   .job = job, .timeout_s = timeout_s,
	                                   .last_signature = last_signature };
	struct nw_engine_verdict_out out;
	uint64_t t0 = mono_ns();
	if (verdict(&in, &out) != 0) {
		next_ns = now + NW_VERDICT_MIN_INTERVAL_NS;
		return;
	}
	last_kind = out.worst_kind;
	last_kind_name = out.worst_name;
	/* A new verdict: the host's summary of the same files with it. */
	if (out.text)
		write_summary(paths, in.npaths, job, dumpdir);
	/* Analysing a large job is not free: not more often than 4x its cost. */
	uint64_t cost = mono_ns() - t0;
	next_ns = now + (4 * cost > NW_VERDICT_MIN_INTERVAL_NS ? 4 * cost : NW_VERDICT_MIN_INTERVAL_NS);
	if (!out.text)
		return;                        /* the same verdict as printed before */
	print_lines(out.text);
	write_report(dumpdir, out.text, out.len);
	free(out.text);
	last_signature = out.signature;
}

int nw_verdict_last_kind(const char **name)
{
	*name = last_kind_name;
	return last_kind_name ? last_kind : -1;
}

void nw_verdict_reset(void)
{
	last_kind = -1;
	last_kind_name = NULL;
	lock_fd = -1;                     /* the lock belongs to the parent's open file */
	last_signature = 0;
	next_ns = 0;
}
