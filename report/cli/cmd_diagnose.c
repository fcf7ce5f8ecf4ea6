/* `ncclwatch diagnose [options] [DIR|FILE...]`: the cross-rank verdict of
 * every job under the paths (report/analysis/), as text or JSON, and
 * optionally a Chrome/Perfetto trace of the ops (report/render/). */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include "../analysis/verdicts_ras.h"
#include "../ras/ras_client.h"
#include "../render/render.h"
#include "../segment_reader.h"
#include "cli_analyze.h"

static int strcmp_ptr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* ---- saved RAS reports (`ncclwatch ras --save FILE`) among the paths ---- */
struct ras_files {
	char **paths;
	size_t n;
};

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

/* RAS reports given as files, or lying as *.json in a directory given (not
 * below it: the segments' job directories hold no report); the other paths
 * stay in argv for the segment analysis. Returns the number of paths left;
 * *has_segments says whether any of them holds a segment. */
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
				if (!ends_with(e->d_name, ".json")) continue;
				char path[4096];
				snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
				if (stat(path, &st) || !S_ISREG(st.st_mode) || !nw_ras_is_report_file(path)) continue;
				char **n = realloc(names, (nnames + 1) * sizeof *n);
				if (!n) break;
				names = n;
				if ((names[nnames] = strdup(path))) nnames++;
			}
			if (d) closedir(d);
			qsort(names, nnames, sizeof *names, strcmp_ptr);
			for (size_t k = 0; k < nnames; k++) { ras_note(r, names[k]); free(names[k]); }
			free(names);
			struct nw_path_list list = { 0 };
			struct nw_read_error err;
			if (nnames && nw_segment_list(argv[i], &list, &err) != 0) continue;  /* reports only */
			nw_path_list_free(&list);
		}
		*has_segments = 1;
		argv[left++] = argv[i];
	}
	return left;
}

static void diagnose_help(FILE *out)
{
	fprintf(out,
	        "usage: ncclwatch diagnose [--json] [--trace FILE] [--timeout S] [--job NAME]\n"
	        "                          [--verbose] [--any-owner] [DIR|FILE...]\n"
	        "\n"
	        "Reads every segment and dump under the paths (default $NCCLWATCH_DIR, else\n"
	        "/dev/shm/ncclwatch-$UID: every job of this user), live or left after a crash,\n"
	        "lines the ranks of each job up by communicator and sequence number, and says\n"
	        "what is wrong: which ranks are stuck, in which op of which communicator, who\n"
	        "is missing or mismatched, where their threads are, and what to try.\n"
	        "\n"
	        "  -j, --json          one JSON document instead of text (schema\n"
	        "                      \"ncclwatch.diagnose\" version 1: docs/json-schema.md)\n"
	        "  -T, --trace FILE    also write a Chrome trace of every op kept (open it in\n"
	        "                      ui.perfetto.dev): a process per rank, a thread per\n"
	        "                      communicator, stalls marked\n"
	        "  -t, --timeout S     seconds an op may stay pending before it counts as stuck\n"
	        "                      (default: the job's NCCLWATCH_TIMEOUT, else 60)\n"
	        "  -J, --job NAME      only the job NAME (its directory name)\n"
	        "  -v, --verbose       every evidence line and stack group (text shows the\n"
	        "                      first 5 of each)\n"
	        "  -A, --any-owner     also read files of other users (without it, a file\n"
	        "                      owned by another uid, or whose header names one, is\n"
	        "                      skipped with a line on stderr)\n"
	        "  -h, --help          this text\n"
	        "\n"
	        "Text, per job: \"job NAME: N processes read, world size W, ranks missing: R,\n"
	        "timeout Ts\"; then each verdict, worst first: \"KIND: summary\", its op and\n"
	        "communicator, \"culprits:\", \"waiting:\", \"unknown:\" (rank sets as 0-4,6),\n"
	        "evidence and \"hint:\"; then the environment differences between ranks and\n"
	        "the stacks of the first thread of each process, grouped by identical stack;\n"
	        "last, \"unreadable: PATH: problem\" per file that could not be read.\n"
	        "KIND is one of HEALTHY IDLE TRANSPORT_STALL STREAM_BLOCKED P2P_UNMATCHED\n"
	        "P2P_DEADLOCK MISSING_RANK MISMATCH INIT_STALL GPU_FAULT. Colour when stdout\n"
	        "is a terminal and NO_COLOR is not set.\n"
	        "\n"
	        "Exit status: 0 every job HEALTHY and every file read; 1 a problem found (a\n"
	        "verdict other than HEALTHY, or a file that could not be read: one line on\n"
	        "stderr each); 2 usage error, an untrusted default directory, or nothing\n"
	        "readable (one line on stderr).\n");
}

static int diagnose_run(int argc, char **argv)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "trace", required_argument, NULL, 'T' },
		{ "timeout", required_argument, NULL, 't' },
		{ "job", required_argument, NULL, 'J' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "any-owner", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nw_analysis_options opt = { 0 };
	const char *trace = NULL;
	int json = 0, verbose = 0, any_owner = 0, c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:jT:t:J:vAh", options, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'T':
			if (!*optarg)
				return nw_usage_error("diagnose", "--trace wants a file name");
			trace = optarg;
			break;
		case 't':
			if (nw_cli_seconds(optarg, &opt.timeout_s) != 0)
				return nw_usage_error("diagnose", "--timeout wants a number of seconds > 0, not '%s'", optarg);
			break;
		case 'J':
			opt.job = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'A':
			any_owner = 1;
			break;
		case 'h':
			diagnose_help(stdout);
			return NW_EXIT_OK;
		case ':':
			return nw_usage_error("diagnose", "option '%s' needs a value", argv[optind - 1]);
		default:
			return nw_usage_error("diagnose", "unknown option '%s' (see ncclwatch diagnose --help)",
			                      argv[optind - 1]);
		}
	}

	struct nw_analysis a;
	struct ras_files ras = { 0 };
	int has_segments = 1, nargs = argc - optind;
	if (nargs > 0)
		nargs = ras_split(nargs, argv + optind, &ras, &has_segments);
	int rc = NW_EXIT_OK;
	if (has_segments || !ras.n)
		rc = nw_cli_analyze("diagnose", nargs, argv + optind, &opt, any_owner, &a);
	else
		memset(&a, 0, sizeof a);
	for (size_t i = 0; i < ras.n && rc == NW_EXIT_OK; i++) {
		struct nw_ras_report r;
		char err[512], name[4200];
		if (nw_ras_load_file(ras.paths[i], &r, err, sizeof err)) {
			nw_analysis_free(&a);
			rc = nw_usage_error("diagnose", "%s", err);
			break;
		}
		snprintf(name, sizeof name, "ras %s", ras.paths[i]);
		if (nw_ras_add_job(&a, &r, name) || nw_ras_match(&a, a.njobs - 1, &r)) {
			nw_ras_report_free(&r);
			nw_analysis_free(&a);
			rc = nw_usage_error("diagnose", "%s: out of memory", ras.paths[i]);
			break;
		}
		nw_ras_report_free(&r);
	}
	for (size_t i = 0; i < ras.n; i++)
		free(ras.paths[i]);
	free(ras.paths);
	if (rc != NW_EXIT_OK)
		return rc;

	if (trace) {
		FILE *f = fopen(trace, "w");
		int failed = !f || nw_render_trace(f, &a) != 0;
		int e = errno;
		if (f && fclose(f) != 0 && !failed) {
			failed = 1;
			e = errno;
		}
		if (failed) {
			nw_analysis_free(&a);
			return nw_usage_error("diagnose", "%s: %s", trace, strerror(e));
		}
	}

	unsigned flags = verbose ? NW_RENDER_VERBOSE : 0;
	const char *no_color = getenv("NO_COLOR");
	if (isatty(STDOUT_FILENO) && !(no_color && *no_color))
		flags |= NW_RENDER_COLOR;
	int written = json ? nw_render_json(stdout, &a) : nw_render_text(stdout, &a, flags);
	int healthy = nw_analysis_worst(&a) == NW_V_HEALTHY && a.nbad == 0;
	nw_analysis_free(&a);
	if (written != 0)
		return nw_usage_error("diagnose", "writing the output: %s", strerror(errno));
	return healthy ? NW_EXIT_OK : NW_EXIT_PROBLEM;
}

const struct nw_command nw_cmd_diagnose = {
	.name = "diagnose",
	.summary = "the verdict: which ranks are stuck where, who is at fault, what to try",
	.help = diagnose_help,
	.run = diagnose_run,
};
