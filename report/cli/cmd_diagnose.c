/* `ncclwatch diagnose [options] [DIR|FILE...]`: the cross-rank verdict of
 * every job under the paths (report/{sources,model,decide}/), as text or JSON, and
 * optionally a Chrome/Perfetto trace of the ops (report/words/). */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../words/words.h"
#include "cli_analyze.h"
#include "cli_ras.h"
#include "watch.h"

/* "KIND is one of ...": every kind of the kinds' table
 * (report/verdict_kinds.h), lowest precedence first, wrapped before 80
 * columns. */
static void kinds_help(FILE *out)
{
	int col = fprintf(out, "KIND is one of");
	for (int k = 0; k < NW_VERDICT_NKINDS; k++) {
		const char *name = nw_verdict_name(k);
		int len = (int)strlen(name) + (k == NW_VERDICT_NKINDS - 1);   /* the last one's ',' */
		if (col + 1 + len >= 80) {
			fputc('\n', out);
			col = 0;
		} else {
			fputc(' ', out);
			col++;
		}
		col += fprintf(out, "%s", name);
	}
	fprintf(out, ",\nlowest precedence first (a job's verdicts are printed highest first).\n");
}

static void diagnose_help(FILE *out)
{
	fprintf(out,
	        "usage: ncclwatch diagnose [--json] [--trace FILE] [--watch [S]] [--timeout S]\n"
	        "                          [--job NAME] [--verbose] [--native] [--any-owner]\n"
	        "                          [DIR|FILE...]\n"
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
	        "  -w, --watch [S]     again every S seconds (default 2) until Ctrl-C or\n"
	        "                      SIGTERM: in place on a terminal, else appended after a\n"
	        "                      line \"# ---- ncclwatch diagnose --watch: TIME ----\"\n"
	        "                      (exit status 0 then; not with --trace)\n"
	        "  -t, --timeout S     seconds an op may stay pending before it counts as stuck\n"
	        "                      (default: the job's NCCLWATCH_TIMEOUT, else 60)\n"
	        "  -J, --job NAME      only the job NAME (its directory name)\n"
	        "  -v, --verbose       every evidence line and stack group (text shows the\n"
	        "                      first 5 of each)\n"
	        "  -N, --native        a Python thread's stack is its mixed stack: native frames\n"
	        "                      under its innermost Python frame, its Python frames, the\n"
	        "                      interpreter's native frames (default: Python frames only,\n"
	        "                      and the evidence names its innermost application frames)\n"
	        "  -A, --any-owner     also read files of other users (without it, a file\n"
	        "                      owned by another uid, or whose header names one, is\n"
	        "                      skipped with a line on stderr)\n"
	        "  -h, --help          this text\n"
	        "\n"
	        "Text, per job: \"job NAME: N processes read, world size W, ranks missing: R,\n"
	        "timeout Ts\"; then each verdict, worst first: \"KIND: summary\", its op and\n"
	        "communicator, \"culprits:\", \"waiting:\", \"unknown:\" (rank sets as 0-4,6),\n"
	        "evidence and \"hint:\"; then the environment differences between ranks and\n"
	        "the stacks of the first thread of each process (and of its other Python\n"
	        "threads), grouped by identical stack; a Python thread's frames read\n"
	        "\"function (file.py:line)\", and an op issued from Python says \"issued at\n"
	        "file.py:line in function\";\n"
	        "last, \"unreadable: PATH: problem\" per file that could not be read.\n");
	kinds_help(out);
	fprintf(out,
	        "Colour when stdout is a terminal and NO_COLOR is not set.\n"
	        "\n"
	        "Exit status: 0 every job HEALTHY and every file read; 1 a problem found (a\n"
	        "verdict other than HEALTHY, or a file that could not be read: one line on\n"
	        "stderr each); 2 usage error, an untrusted default directory, or nothing\n"
	        "readable (one line on stderr).\n"
	        "\n"
	        "A FILE may also be a saved NCCL RAS report (`ncclwatch ras --save`), and a\n"
	        "DIR's *.json reports are read too: each is a job \"ras FILE\" whose verdicts\n"
	        "come from RAS launch counts, its comms lined up with the segments' (docs/ras.md).\n");
}

struct diagnose_args {
	int argc;
	char **argv;
	struct nw_analysis_options opt;
	const char *trace;
	int json, any_owner;
	unsigned flags;
};

/* One run: the analysis, the trace if asked, the output; the exit status
 * of the rules in the help. */
static int diagnose_once(void *arg, FILE *out)
{
	struct diagnose_args *d = arg;
	struct nw_analysis a;
	int rc = nw_cli_analyze_ras("diagnose", d->argc, d->argv, &d->opt, d->any_owner, &a);
	if (rc != NW_EXIT_OK) {
		if (out != stdout)           /* a watch frame: the reason is on stderr */
			fputs("nothing to show (see stderr)\n", out);
		return rc;
	}
	if (nw_words_say(&a) != 0) {
		nw_analysis_free(&a);
		return nw_usage_error("diagnose", "out of memory");
	}

	if (d->trace) {
		FILE *f = fopen(d->trace, "w");
		int failed = !f || nw_render_trace(f, &a) != 0;
		int e = errno;
		if (f && fclose(f) != 0 && !failed) {
			failed = 1;
			e = errno;
		}
		if (failed) {
			nw_analysis_free(&a);
			return nw_usage_error("diagnose", "%s: %s", d->trace, strerror(e));
		}
	}

	int written = d->json ? nw_render_json(out, &a) : nw_render_text(out, &a, d->flags);
	int healthy = nw_analysis_worst(&a) == NW_V_HEALTHY && a.nbad == 0;
	nw_analysis_free(&a);
	if (written != 0)
		return nw_usage_error("diagnose", "writing the output: %s", strerror(errno));
	return healthy ? NW_EXIT_OK : NW_EXIT_PROBLEM;
}

static int diagnose_run(int argc, char **argv)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "trace", required_argument, NULL, 'T' },
		{ "watch", optional_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ "job", required_argument, NULL, 'J' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "any-owner", no_argument, NULL, 'A' },
		{ "native", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct diagnose_args d = { 0 };
	int verbose = 0, watch = 0, c;
	double every = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:jT:w::t:J:vANh", options, NULL)) != -1) {
		switch (c) {
		case 'j':
			d.json = 1;
			break;
		case 'T':
			if (!*optarg)
				return nw_usage_error("diagnose", "--trace wants a file name");
			d.trace = optarg;
			break;
		case 'w':
			watch = 1;
			if (nw_watch_seconds(optarg, argc, argv, &optind, &every) != 0)
				return nw_usage_error("diagnose", "--watch wants a number of seconds > 0");
			break;
		case 't':
			if (nw_cli_seconds(optarg, &d.opt.timeout_s) != 0)
				return nw_usage_error("diagnose", "--timeout wants a number of seconds > 0, not '%s'", optarg);
			break;
		case 'J':
			d.opt.job = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'A':
			d.any_owner = 1;
			break;
		case 'N':
			d.opt.native = 1;
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
	if (watch && d.trace)
		return nw_usage_error("diagnose", "--watch and --trace do not go together");
	d.argc = argc - optind;
	d.argv = argv + optind;
	d.flags = verbose ? NW_RENDER_VERBOSE : 0;
	const char *no_color = getenv("NO_COLOR");
	if (isatty(STDOUT_FILENO) && !(no_color && *no_color))
		d.flags |= NW_RENDER_COLOR;
	if (watch)
		return nw_watch("diagnose", every, diagnose_once, &d);
	return diagnose_once(&d, stdout);
}

const struct nw_command nw_cmd_diagnose = {
	.name = "diagnose",
	.summary = "the verdict: which ranks are stuck where, who is at fault, what to try",
	.help = diagnose_help,
	.run = diagnose_run,
};
