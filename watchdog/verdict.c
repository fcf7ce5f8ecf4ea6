/* verdict: see verdict.h. */
#include "verdict.h"

#include "../interpose/log.h"
#include "../interpose/ring.h"
#include "../report/analysis/analysis.h"
#include "../report/render/render.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define NW_VERDICT_MIN_INTERVAL_NS 2000000000ull

static int lock_fd = -1;              /* >= 0: we report for this host */
static char *last_text;
static uint64_t next_ns;              /* no analysis before this */

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

void nw_verdict_tick(uint64_t now, const char *jobdir, const char *dumpdir, double timeout_s, int force)
{
	if (!force && now < next_ns)
		return;
	if (!hold_lock(jobdir))
		return;                       /* another process reports for this host */
	const char *paths[2] = { jobdir, dumpdir };
	size_t npaths = strcmp(jobdir, dumpdir) ? 2 : 1;
	struct nw_analysis_options opt = { .timeout_s = timeout_s, .job = nw_seg.hdr->job };
	struct nw_analysis a;
	struct nw_read_error err;
	uint64_t t0 = nw_now_ns();
	if (nw_analyze(paths, npaths, &opt, &a, &err) != 0) {
		next_ns = now + NW_VERDICT_MIN_INTERVAL_NS;
		return;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (out) {
		nw_render_text(out, &a, 0);
		fclose(out);
	}
	nw_analysis_free(&a);
	/* Analysing a large job is not free: not more often than 4x its cost. */
	uint64_t cost = nw_now_ns() - t0;
	next_ns = now + (4 * cost > NW_VERDICT_MIN_INTERVAL_NS ? 4 * cost : NW_VERDICT_MIN_INTERVAL_NS);
	if (!text)
		return;
	if (last_text && !strcmp(last_text, text)) {
		free(text);
		return;
	}
	print_lines(text);
	write_report(dumpdir, text, len);
	free(last_text);
	last_text = text;
}

void nw_verdict_reset(void)
{
	lock_fd = -1;                     /* the lock belongs to the parent's open file */
	last_text = NULL;
	next_ns = 0;
}
