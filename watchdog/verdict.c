/* verdict: see verdict.h. */
#include "verdict.h"

/* Not interpose/ring.h: the interposer's struct nw_segment (the mapped
 * file) and the reader's (a snapshot) share a name; this file only knows
 * the reader's. */
#include "../interpose/log.h"
#include "../report/analysis/analysis.h"
#include "../report/render/render.h"

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

/* What the verdict says, without what changes every second (ages): the
 * kinds, communicators, ops and rank sets of every job's verdicts, and
 * which ranks share which stack. */
static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t mix_set(uint64_t h, const struct nw_rankset *s)
{
	h = mix(h, s->n);
	for (uint32_t i = 0; i < s->n; i++)
		h = mix(h, (uint64_t)(uint32_t)s->v[i]);
	return h;
}

static uint64_t signature(const struct nw_analysis *a)
{
	uint64_t h = 1;
	for (size_t j = 0; j < a->njobs; j++) {
		const struct nw_job *job = &a->jobs[j];
		h = mix(h, job->nverdicts);
		for (size_t i = 0; i < job->nverdicts; i++) {
			const struct nw_verdict *v = &job->verdicts[i];
			h = mix(h, (uint64_t)v->kind);
			h = mix(h, v->comm_id);
			h = mix(h, v->op_kind);
			h = mix(h, v->seq);
			h = mix_set(h, &v->culprits);
			h = mix_set(h, &v->waiting);
			h = mix_set(h, &v->unknown);
		}
		/* Stacks arrive with the peers' dumps: a new group is news. */
		h = mix(h, job->nstacks);
		for (size_t i = 0; i < job->nstacks; i++)
			h = mix_set(h, &job->stacks[i].ranks);
	}
	return h ? h : 1;
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

void nw_verdict_tick(uint64_t now, const char *job, const char *jobdir, const char *dumpdir,
                     double timeout_s, int force)
{
	if (!force && now < next_ns)
		return;
	if (!hold_lock(jobdir))
		return;                       /* another process reports for this host */
	const char *paths[2] = { jobdir, dumpdir };
	size_t npaths = strcmp(jobdir, dumpdir) ? 2 : 1;
	struct nw_analysis_options opt = { .timeout_s = timeout_s, .job = job,
	                                    .max_threads = 1 /* inside the application: no extra threads */ };
	struct nw_analysis a;
	struct nw_read_error err;
	uint64_t t0 = mono_ns();
	if (nw_analyze(paths, npaths, &opt, &a, &err) != 0) {
		next_ns = now + NW_VERDICT_MIN_INTERVAL_NS;
		return;
	}
	uint64_t sig = signature(&a);
	char *text = NULL;
	size_t len = 0;
	FILE *out = sig != last_signature ? open_memstream(&text, &len) : NULL;
	if (out) {
		nw_render_text(out, &a, 0);
		fclose(out);
	}
	nw_analysis_free(&a);
	/* Analysing a large job is not free: not more often than 4x its cost. */
	uint64_t cost = mono_ns() - t0;
	next_ns = now + (4 * cost > NW_VERDICT_MIN_INTERVAL_NS ? 4 * cost : NW_VERDICT_MIN_INTERVAL_NS);
	if (!text)
		return;                        /* the same verdict as printed before */
	print_lines(text);
	write_report(dumpdir, text, len);
	free(text);
	last_signature = sig;
}

void nw_verdict_reset(void)
{
	lock_fd = -1;                     /* the lock belongs to the parent's open file */
	last_signature = 0;
	next_ns = 0;
}
