/* `ncclwatch summary [-o FILE] [--job NAME] [DIR|FILE...]`: one compact
 * file of this host's processes (report/sources/summary/, docs/FORMAT.md
 * "Per-host summaries"), what `diagnose` needs of them and nothing more,
 * to be gathered from every host of a job and diagnosed on one. */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trust.h"
#include "../escape.h"
#include "../decide/decide.h"
#include "../sources/summary/summary.h"

static void summary_help(FILE *out)
{
	fprintf(out,
	        "usage: ncclwatch summary [-o FILE | --by-host DIR] [--job NAME] [--any-owner]\n"
	        "                         [DIR|FILE...]\n"
	        "\n"
	        "Reads every segment, dump and summary under the paths (default $NCCLWATCH_DIR,\n"
	        "else /dev/shm/ncclwatch-$UID: every job of this user on this host) and writes\n"
	        "one compact file with what `ncclwatch diagnose` needs of each process: its\n"
	        "identity (host, pid, ranks, job), its communicators' positions, its stuck and\n"
	        "latest ops, whether it is alive, what it lost, and its thread stacks, each\n"
	        "distinct stack once (docs/FORMAT.md, \"Per-host summaries\"). A few KB per\n"
	        "host. Gather the summaries of every host of a job in one directory and run\n"
	        "`ncclwatch diagnose DIR` there: the same verdict as from the segments.\n"
	        "\n"
	        "  -o, --output FILE   where to write (default ./HOST.nwsum; '-' is stdout);\n"
	        "                      the file is replaced whole (written aside, renamed)\n"
	        "  -H, --by-host DIR   one summary per host instead, DIR/HOST.nwsum, for the\n"
	        "                      files of many hosts already in one place\n"
	        "  -J, --job NAME      only the job NAME (its directory name)\n"
	        "  -A, --any-owner     also read files of other users\n"
	        "  -h, --help          this text\n"
	        "\n"
	        "Says on stderr what it wrote: \"ncclwatch summary: wrote FILE: N processes\n"
	        "of J jobs, B bytes\".\n"
	        "Exit status: 0 written, every file read; 1 written, but some file could not\n"
	        "be read (one line on stderr each); 2 usage error, nothing readable, or the\n"
	        "output could not be written (one line on stderr).\n");
}

static int count_jobs(struct nw_proc **procs, size_t n)
{
	int jobs = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < i && strncmp(procs[k]->hdr.job, procs[i]->hdr.job, sizeof procs[i]->hdr.job))
			k++;
		jobs += k == i;
	}
	return jobs;
}

/* Write the summary to `path` ("-": stdout) whole: aside, then renamed. */
static int write_out(const char *path, struct nw_proc **procs, size_t n, long *bytes)
{
	if (!strcmp(path, "-")) {
		if (isatty(STDOUT_FILENO))
			return nw_usage_error("summary", "a summary is binary: not written to a terminal "
			                      "(-o FILE, or redirect stdout)");
		if (nw_summary_write(stdout, procs, n, 0) != 0)
			return nw_usage_error("summary", "writing to stdout: %s", strerror(errno));
		*bytes = -1;
		return NW_EXIT_OK;
	}
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid()) >= (int)sizeof tmp)
		return nw_usage_error("summary", "%s: name too long", path);
	FILE *f = fopen(tmp, "wxe");
	if (!f)
		return nw_usage_error("summary", "%s: %s", tmp, strerror(errno));
	int failed = nw_summary_write(f, procs, n, 0) != 0;
	int e = errno;
	*bytes = ftell(f);
	if (fclose(f) != 0 && !failed) {
		failed = 1;
		e = errno;
	}
	if (!failed && rename(tmp, path) != 0) {
		failed = 1;
		e = errno;
	}
	if (failed) {
		unlink(tmp);
		return nw_usage_error("summary", "%s: %s", path, strerror(e));
	}
	return NW_EXIT_OK;
}

/* --by-host: the processes of each host into DIR/HOST.nwsum. */
static int write_by_host(const char *dir, struct nw_proc **procs, size_t n, size_t *files, long *bytes)
{
	*files = 0;
	*bytes = 0;
	struct nw_proc **one = malloc((n ? n : 1) * sizeof *one);
	uint8_t *done = calloc(n ? n : 1, 1);
	int rc = one && done ? NW_EXIT_OK : nw_usage_error("summary", "out of memory");
	/* procs are in the order read: sorted by path, so a host's are together */
	for (size_t i = 0; i < n && rc == NW_EXIT_OK; i++) {
		if (done[i])
			continue;
		size_t k = 0;
		for (size_t j = i; j < n; j++)
			if (!done[j] && !strncmp(procs[j]->hdr.host, procs[i]->hdr.host, sizeof procs[i]->hdr.host)) {
				one[k++] = procs[j];
				done[j] = 1;
			}
		const char *host = procs[i]->hdr.host;
		char path[PATH_MAX];
		if (!host[0] || strchr(host, '/') || host[0] == '.')
			host = "unknown-host";
		if (snprintf(path, sizeof path, "%s/%s%s", dir, host, NW_SUM_SUFFIX) >= (int)sizeof path) {
			rc = nw_usage_error("summary", "%s: name too long", dir);
			break;
		}
		long b = 0;
		rc = write_out(path, one, k, &b);
		*bytes += b;
		(*files)++;
	}
	free(one);
	free(done);
	return rc;
}

/* What the command line asks of summary. */
struct summary_opts {
	struct nw_analysis_options opt;
	const char *output, *by_host;
	int any_owner;
};

/* The options; -1 to go on, else the exit status. */
static int parse_summary_options(int argc, char **argv, struct summary_opts *o)
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "by-host", required_argument, NULL, 'H' },
		{ "job", required_argument, NULL, 'J' },
		{ "any-owner", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	*o = (struct summary_opts){ .opt = { 0 } };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:H:J:Ah", options, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return nw_usage_error("summary", "--output wants a file name");
			o->output = optarg;
			break;
		case 'H':
			if (!*optarg)
				return nw_usage_error("summary", "--by-host wants a directory");
			o->by_host = optarg;
			break;
		case 'J':
			o->opt.job = optarg;
			break;
		case 'A':
			o->any_owner = 1;
			break;
		case 'h':
			summary_help(stdout);
			return NW_EXIT_OK;
		case ':':
			return nw_usage_error("summary", "option '%s' needs a value", argv[optind - 1]);
		default:
			return nw_usage_error("summary", "unknown option '%s' (see ncclwatch summary --help)",
			                      argv[optind - 1]);
		}
	}
	return -1;
}

/* Nothing to summarize: why, as the one line of a usage error. */
static int no_process_error(const struct summary_opts *o, const struct nw_analysis *a,
                            const char *const *paths, size_t npaths)
{
	if (o->opt.job && a->nread > a->nbad)
		return nw_usage_error("summary", "no job named '%s' in %s%s", o->opt.job, paths[0],
		                      npaths > 1 ? " ..." : "");
	if (a->nbad)
		return nw_usage_error("summary", "no readable segment: %zu file%s could not be read, first %s",
		                      a->nbad, a->nbad == 1 ? "" : "s", a->bad[0].err.message);
	return nw_usage_error("summary", "no segment in %s%s", paths[0], npaths > 1 ? " ..." : "");
}

static void print_unreadable(const struct nw_analysis *a)
{
	for (size_t i = 0; i < a->nbad; i++)
		nw_print_line(stderr, "ncclwatch summary: unreadable: %s", a->bad[i].err.message);
}

/* --by-host DIR: one summary per host, and what was written. */
static int write_host_summaries(const char *by_host, const struct nw_analysis *a, struct nw_proc **procs,
                                size_t n)
{
	size_t files = 0;
	long bytes = 0;
	int rc = write_by_host(by_host, procs, n, &files, &bytes);
	if (rc != NW_EXIT_OK)
		return rc;
	print_unreadable(a);
	nw_print_line(stderr, "ncclwatch summary: wrote %zu summar%s in %s: %zu process%s, %ld bytes",
	              files, files == 1 ? "y" : "ies", by_host, n, n == 1 ? "" : "es", bytes);
	return a->nbad ? NW_EXIT_PROBLEM : rc;
}

/* One summary of every process, and what was written. */
static int write_one_summary(const char *output, const struct nw_analysis *a, struct nw_proc **procs,
                             size_t n)
{
	long bytes = 0;
	int rc = write_out(output, procs, n, &bytes);
	if (rc != NW_EXIT_OK)
		return rc;
	print_unreadable(a);
	if (bytes >= 0)
		nw_print_line(stderr, "ncclwatch summary: wrote %s: %zu process%s of %d job%s, %ld bytes",
		              output, n, n == 1 ? "" : "es", count_jobs(procs, n),
		              count_jobs(procs, n) == 1 ? "" : "s", bytes);
	return a->nbad ? NW_EXIT_PROBLEM : rc;
}

/* The summary file's default name: ./HOST.nwsum. */
static const char *default_output(char *buf, size_t len)
{
	char host[NW_SEG_HOST_LEN] = "";
	if (gethostname(host, sizeof host - 1) != 0 || !host[0] || strchr(host, '/'))
		snprintf(host, sizeof host, "localhost");
	snprintf(buf, len, "%s%s", host, NW_SUM_SUFFIX);
	return buf;
}

/* The processes of the files of this user (--any-owner: of anyone) under
 * the paths. -1 to go on, else the exit status. */
static int load_mine(const struct summary_opts *o, const char *const *paths, size_t npaths,
                     struct nw_analysis *a, struct nw_proc ***procs, size_t *n)
{
	char **mine;
	size_t nmine, skipped;
	if (nw_cli_mine("summary", paths, npaths, o->any_owner, &mine, &nmine, &skipped) != 0)
		return nw_usage_error("summary", "out of memory");
	if (nmine == 0) {
		nw_cli_paths_free(mine, nmine);
		return nw_usage_error("summary", "no segment of yours in %s%s: %zu file%s of other users skipped",
		                      paths[0], npaths > 1 ? " ..." : "", skipped, skipped == 1 ? "" : "s");
	}
	struct nw_read_error err;
	int failed = nw_load_processes((const char *const *)mine, nmine, &o->opt, a, procs, n, &err) != 0;
	nw_cli_paths_free(mine, nmine);
	if (failed)
		return nw_usage_error("summary", "%s", err.message);
	return -1;
}

static int summary_run(int argc, char **argv)
{
	struct summary_opts o;
	int rc = parse_summary_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.output && o.by_host)
		return nw_usage_error("summary", "-o and --by-host exclude each other");
	char def[PATH_MAX], out_def[NW_SEG_HOST_LEN + 16];
	const char *one[1];
	const char *const *paths = (const char *const *)(argv + optind);
	size_t npaths = (size_t)(argc - optind);
	if (npaths == 0) {
		rc = nw_cli_default_dir("summary", def, sizeof def,
		                        " (no job has run here with ncclwatch, or NCCLWATCH_DIR differs)", &one[0]);
		if (rc != NW_EXIT_OK)
			return rc;
		paths = one;
		npaths = 1;
	}
	if (!o.output && !o.by_host)
		o.output = default_output(out_def, sizeof out_def);
	struct nw_analysis a;
	struct nw_proc **procs;
	size_t n;
	if ((rc = load_mine(&o, paths, npaths, &a, &procs, &n)) >= 0)
		return rc;
	if (n == 0)
		rc = no_process_error(&o, &a, paths, npaths);
	else if (o.by_host)
		rc = write_host_summaries(o.by_host, &a, procs, n);
	else
		rc = write_one_summary(o.output, &a, procs, n);
	for (size_t i = 0; i < n; i++)
		nw_proc_free(procs[i]);
	free(procs);
	nw_analysis_free(&a);
	return rc;
}

const struct nw_command nw_cmd_summary = {
	.name = "summary",
	.summary = "one compact file of this host's processes, to diagnose many hosts on one",
	.help = summary_help,
	.run = summary_run,
};
