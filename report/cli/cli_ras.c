/* See cli_ras.h. */
#include "cli_ras.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../decide/verdicts_ras.h"
#include "../sources/fr/fr.h"
#include "../sources/ras/ras_client.h"
#include "../sources/segment_reader.h"
#include "cli_analyze.h"
#include "commands.h"
#include "../escape.h"

struct ras_files {
	char **paths;
	size_t n;
};

static int strcmp_ptr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void ras_note(struct ras_files *r, const char *path)
{
	char **n = realloc(r->paths, (r->n + 1) * sizeof *n);
	if (!n) return;
	r->paths = n;
	if ((r->paths[r->n] = strdup(path))) r->n++;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

/* The reports out of argv (kept in r): files that sniff as reports, and
 * in a directory given its *.json and *.txt files that do; returns the number of paths left,
 * *has_segments whether any of them may hold a segment. */
static int ras_split(int argc, char **argv, struct ras_files *r, int *has_segments)
{
	int left = 0;
	*has_segments = 0;
	for (int i = 0; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISREG(st.st_mode) && nw_ras_is_report_file(argv[i])) {
			ras_note(r, argv[i]);
			continue;
		}
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *e;
			char **names = NULL;
			size_t nnames = 0;
			while (d && (e = readdir(d))) {
				if (!ends_with(e->d_name, ".json") && !ends_with(e->d_name, ".txt")) continue;
				char path[4096];
				snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
				if (stat(path, &st) || !S_ISREG(st.st_mode) || !nw_ras_is_report_file(path)) continue;
				char **n = realloc(names, (nnames + 1) * sizeof *n);
				if (!n) break;
				names = n;
				if ((names[nnames] = strdup(path))) nnames++;
			}
			if (d) closedir(d);
			if (nnames) qsort(names, nnames, sizeof *names, strcmp_ptr);
			for (size_t k = 0; k < nnames; k++) { ras_note(r, names[k]); free(names[k]); }
			free(names);
			struct nw_path_list list = { 0 };
			struct nw_read_error err;
			if (nnames && nw_input_list(argv[i], &list, &err) != 0) continue;  /* reports only: no segment, no FR dump */
			nw_path_list_free(&list);
		}
		*has_segments = 1;
		argv[left++] = argv[i];
	}
	return left;
}

/* The job of each report of its own is "ras PATH" (the lining up gave it a
 * short name: a segment's job name holds 63 bytes), after the jobs of the
 * processes read, as before. 0, or -1 out of memory. */
static int own_names(const struct nw_ras_merge *m, struct nw_analysis *a)
{
	uint8_t *own = calloc(a->njobs + 1, 1);
	struct nw_job *tmp = calloc(a->njobs + 1, sizeof *tmp);
	if (!own || !tmp) {
		free(own);
		free(tmp);
		return -1;
	}
	int oom = 0;
	for (size_t i = 0; i < m->n && !oom; i++) {
		const struct nw_ras_input *in = &m->in[i];
		for (size_t j = 0; in->own && j < a->njobs; j++) {
			char *name = NULL;
			if (own[j] || strcmp(a->jobs[j].name, in->job))
				continue;
			if (asprintf(&name, "ras %s", in->path) < 0) {
				oom = 1;
				break;
			}
			free(a->jobs[j].name);
			a->jobs[j].name = name;
			own[j] = 1;
		}
	}
	size_t n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t j = 0; j < a->njobs; j++)
			if (own[j] == pass)
				tmp[n++] = a->jobs[j];
	if (a->njobs)
		memcpy(a->jobs, tmp, a->njobs * sizeof *tmp);
	free(own);
	free(tmp);
	return oom ? -1 : 0;
}

int nw_cli_analyze_ras(const char *cmd, int argc, char **argv, const struct nw_analysis_options *opt, int any_owner,
                       struct nw_analysis *a)
{
	struct ras_files ras = { 0 };
	int has_segments = 1, nargs = argc;
	if (nargs > 0)
		nargs = ras_split(nargs, argv, &ras, &has_segments);
	int rc = NW_EXIT_OK;
	/* The reports first: one that lies next to the snapshots (or segments)
	 * of its processes joins their job (report/decide/ras_merge.c). */
	struct nw_ras_merge m = { .in = calloc(ras.n + 1, sizeof *m.in), .n = 0 };
	if (!m.in)
		rc = nw_usage_error(cmd, "out of memory");
	for (size_t i = 0; i < ras.n && rc == NW_EXIT_OK; i++) {
		char err[512];
		if (nw_ras_load_file(ras.paths[i], &m.in[m.n].r, err, sizeof err)) {
			rc = nw_usage_error(cmd, "%s", err);
			break;
		}
		/* the report as read is not needed to judge it: its text goes
		 * before the adapter builds a process per rank */
		free(m.in[m.n].r.raw);
		m.in[m.n].r.raw = NULL;
		m.in[m.n].r.raw_len = 0;
		m.in[m.n++].path = ras.paths[i];
	}
	struct nw_source_hook hook;
	struct nw_analysis_options o = *opt;
	nw_ras_hook(&m, &hook);
	o.hook = m.n ? &hook : opt->hook;
	if (rc == NW_EXIT_OK) {
		if (has_segments || !ras.n) {
			rc = nw_cli_analyze(cmd, nargs, argv, &o, any_owner, a);
		} else {
			/* reports alone: the adapter's processes are the jobs */
			struct nw_read_error err;
			if (nw_analyze(NULL, 0, &o, a, &err))
				rc = nw_usage_error(cmd, "%s", err.message);
		}
	}
	if (rc == NW_EXIT_OK && own_names(&m, a))
		rc = nw_usage_error(cmd, "out of memory");
	/* a report without a comm names no process, a text report only its
	 * outliers: a job of its own from the report */
	for (size_t i = 0; i < m.n && rc == NW_EXIT_OK; i++) {
		struct nw_ras_input *in = &m.in[i];
		if (in->job[0])
			continue;
		char name[4200];
		snprintf(name, sizeof name, "ras %s", in->path);
		if (nw_ras_add_job(a, &in->r, name)) {
			nw_analysis_free(a);
			rc = nw_usage_error(cmd, "%s: out of memory", in->path);
			break;
		}
	}
	for (size_t i = 0; i < m.n; i++) {
		nw_ras_report_free(&m.in[i].r);
		free(m.in[i].map);
	}
	free(m.in);
	for (size_t i = 0; i < ras.n; i++)
		free(ras.paths[i]);
	free(ras.paths);
	return rc;
}

/* path holds the n bytes at data, mode 0600 like the snapshots next to it
 * (the report names hosts and pids of the job): written under a temporary
 * name and renamed, so an older file's mode does not stay. 0 or -1. */
static int write_private(const char *path, const char *data, size_t n)
{
	char tmp[4300];
	if ((size_t)snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid()) >= sizeof tmp) return -1;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) return -1;
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(fd, data + done, n - done);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) break;
		done += (size_t)w;
	}
	if (close(fd) != 0 || done != n || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Whether report r is about any of pids: a rank (answered or missing) of
 * one of its communicators has one of them. RAS names hosts by address,
 * attach by name, so the pid alone decides; the report came from this
 * host's port, where the job's processes run. */
static int report_holds(const struct nw_ras_report *r, const pid_t *pids, size_t n)
{
	for (size_t c = 0; c < r->ncomms; c++) {
		const struct nw_ras_comm *m = &r->comms[c];
		for (size_t k = 0; k < n; k++) {
			for (size_t i = 0; i < m->nranks; i++)
				if (m->ranks[i].pid == pids[k])
					return 1;
			for (size_t i = 0; i < m->nmissing; i++)
				if (m->missing[i].pid == pids[k])
					return 1;
		}
	}
	return 0;
}

/* NCCL's RAS of every job on a host listens on one port (SO_REUSEPORT):
 * a connection reaches one listener of any job, a new connection (a new
 * source port) perhaps another. So many tries before a job is said to have
 * no report of its own. */
#define RAS_JOB_TRIES 16

void nw_cli_ras_attach(char *const *dirs, pid_t *const *pids, const size_t *npids, int ndirs)
{
	for (int d = 0; d < ndirs; d++) {
		struct nw_ras_report r;
		struct nw_ras_query_opts q = { .server_timeout_s = -1 };
		char note[600];
		int tries = 0, rc, ours = 0;
		do {
			rc = nw_ras_query_pids(pids[d], npids[d], &q, &r, note, sizeof note);
			if (rc != NW_RAS_OK)
				break;
			/* a report without a communicator (no init past its
			 * rendezvous yet) names no pid: it cannot be told apart */
			ours = r.ncomms == 0 || report_holds(&r, pids[d], npids[d]);
			if (!ours)
				nw_ras_report_free(&r);
		} while (!ours && ++tries < RAS_JOB_TRIES);
		if (rc != NW_RAS_OK) {
			nw_print_line(stdout, "attach: %s", note);
			continue;
		}
		if (!ours) {
			nw_print_line(stdout, "attach: %s: another job's (none of the %zu processes of %s among its ranks, "
			              "%d tries): not used, stacks alone", note, npids[d], dirs[d], RAS_JOB_TRIES);
			continue;
		}
		const char *name = r.from_text ? "ras.txt" : "ras.json";
		char path[4200];
		snprintf(path, sizeof path, "%s/%s", dirs[d], name);
		int ok = write_private(path, r.raw, r.raw_len) == 0;
		if (ok) nw_print_line(stdout, "attach: %s -> %s", note, path);
		else nw_print_line(stdout, "attach: %s, but %s cannot be written: stacks alone", note, path);
		nw_ras_report_free(&r);
	}
}
