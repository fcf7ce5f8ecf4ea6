/* `ncclwatch status [--json] [--watch [S]] [--timeout S] [--job NAME]
 * [DIR|FILE...]`: a summary line across jobs, then each job (newest
 * first, live, hung or stale) and one line per rank, live or dead
 * (report/words/status.c, status_json.c); again every S seconds with
 * --watch (watch.h). */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>
#include "../words/words.h"
#include "cli_analyze.h"
#include "watch.h"

static void status_help(FILE *out)
{
	fprintf(out,
	        "usage: ncclwatch status [--json] [--watch [S]] [--timeout S] [--job NAME]\n"
	        "                        [--any-owner] [DIR|FILE...]\n"
	        "\n"
	        "Every job under the paths (default $NCCLWATCH_DIR, else\n"
	        "/dev/shm/ncclwatch-$UID), newest first, with its state, and one line per\n"
	        "rank, running or not, from its process's newest segment or dump (a process\n"
	        "that drives several ranks has a line for each).\n"
	        "\n"
	        "  -j, --json         one JSON document instead of text (schema\n"
	        "                     \"ncclwatch.status\" version 1: docs/json-schema.md)\n"
	        "  -w, --watch [S]    again every S seconds (default 2) until Ctrl-C or SIGTERM:\n"
	        "                     in place on a terminal, else appended after a line\n"
	        "                     \"# ---- ncclwatch status --watch: TIME ----\"\n"
	        "  -t, --timeout S    seconds an op may wait before its job counts as hung\n"
	        "                     (default: the job's NCCLWATCH_TIMEOUT, else 60)\n"
	        "  -J, --job NAME     only the job NAME (its directory name)\n"
	        "  -A, --any-owner    also read files of other users (without it, a file owned\n"
	        "                     by another uid, or whose header names one, is skipped\n"
	        "                     with a line on stderr)\n"
	        "  -h, --help         this text\n"
	        "\n"
	        "Output (lines that are not about a process start with '#'):\n"
	        "  # N jobs: L live, H hung, S stale[, U unknown]\n"
	        "  # host pid rank comms last state age alive\n"
	        "  # job NAME: N processes, world size W, ranks missing: R; STATE (DETAILS)\n"
	        "  HOST PID RANK comms=N last=KIND#SEQ@COMM state=STATE age=S.Ss alive|dead|?\n"
	        "  # unreadable: PATH: problem\n"
	        "A job is live (a process of it runs here), hung (a process that runs has\n"
	        "an op that waited at least the timeout: enqueued, started on the GPU, or\n"
	        "a blocking call; DETAILS name the one that waited longest), stale (every\n"
	        "process dead: its files are what is left) or unknown (its processes are\n"
	        "on other hosts). RANK is the global rank or '-'; last is the newest op\n"
	        "the process issued (#SEQ and @COMM, 16 hex digits, when it has them; '-'\n"
	        "when none), state its state (ENQUEUED STARTED COMPLETED FAILED ...), age\n"
	        "the time since it was issued; alive: running on this host; dead; '?':\n"
	        "another host. `diagnose` says why a job hangs.\n"
	        "\n"
	        "Exit status: 0 every file read; 1 a file could not be read (one line on\n"
	        "stderr each; a hung job is not an error here: diagnose judges); 2 usage\n"
	        "error, an untrusted default directory, or nothing readable (one line on\n"
	        "stderr). With --watch: 0 when ended by SIGINT or SIGTERM.\n");
}

struct status_args {
	int argc;
	char **argv;
	struct nw_analysis_options opt;
	int any_owner, json;
};

/* One run: the analysis and its output; the exit status of the rules above. */
static int status_once(void *arg, FILE *out)
{
	struct status_args *s = arg;
	struct nw_analysis a;
	int rc = nw_cli_analyze("status", s->argc, s->argv, &s->opt, s->any_owner, &a);
	if (rc != NW_EXIT_OK) {
		if (out != stdout)           /* a watch frame: the reason is on stderr */
			fputs("# nothing to show (see stderr)\n", out);
		return rc;
	}
	int written = s->json ? nw_render_status_json(out, &a) : nw_render_status(out, &a, 0);
	int all_read = a.nbad == 0;
	nw_analysis_free(&a);
	if (written != 0)
		return nw_usage_error("status", "writing the output: %s", strerror(errno));
	return all_read ? NW_EXIT_OK : NW_EXIT_PROBLEM;
}

static int status_run(int argc, char **argv)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "watch", optional_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ "job", required_argument, NULL, 'J' },
		{ "any-owner", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct status_args s = { 0 };
	int watch = 0, c;
	double every = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:jw::t:J:Ah", options, NULL)) != -1) {
		switch (c) {
		case 'j':
			s.json = 1;
			break;
		case 'w':
			watch = 1;
			if (nw_watch_seconds(optarg, argc, argv, &optind, &every) != 0)
				return nw_usage_error("status", "--watch wants a number of seconds > 0");
			break;
		case 't':
			if (nw_cli_seconds(optarg, &s.opt.timeout_s) != 0)
				return nw_usage_error("status", "--timeout wants a number of seconds > 0, not '%s'", optarg);
			break;
		case 'J':
			s.opt.job = optarg;
			break;
		case 'A':
			s.any_owner = 1;
			break;
		case 'h':
			status_help(stdout);
			return NW_EXIT_OK;
		case ':':
			return nw_usage_error("status", "option '%s' needs a value", argv[optind - 1]);
		default:
			return nw_usage_error("status", "unknown option '%s' (see ncclwatch status --help)",
			                      argv[optind - 1]);
		}
	}
	s.argc = argc - optind;
	s.argv = argv + optind;
	if (watch)
		return nw_watch("status", every, status_once, &s);
	return status_once(&s, stdout);
}

const struct nw_command nw_cmd_status = {
	.name = "status",
	.summary = "every job (live, hung, stale) and one line per rank: last op, state, age",
	.help = status_help,
	.run = status_run,
};
