/* `ncclwatch status [--job NAME] [DIR|FILE...]`: one line per process of
 * every job under the paths, live or dead (report/render/status.c). */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>
#include "../render/render.h"
#include "cli_analyze.h"

static void status_help(FILE *out)
{
	fprintf(out,
	        "usage: ncclwatch status [--job NAME] [--any-owner] [DIR|FILE...]\n"
	        "\n"
	        "One line per rank of every job under the paths (default $NCCLWATCH_DIR,\n"
	        "else /dev/shm/ncclwatch-$UID), running or not, from its process's newest segment\n"
	        "or dump (a process that drives several ranks has a line for each).\n"
	        "\n"
	        "  -J, --job NAME   only the job NAME (its directory name)\n"
	        "  -A, --any-owner  also read files of other users (without it, a file owned\n"
	        "                   by another uid, or whose header names one, is skipped\n"
	        "                   with a line on stderr)\n"
	        "  -h, --help       this text\n"
	        "\n"
	        "Output (lines that are not about a process start with '#'):\n"
	        "  # host pid rank comms last state age alive\n"
	        "  # job NAME: N processes, world size W, ranks missing: R\n"
	        "  HOST PID RANK comms=N last=KIND#SEQ@COMM state=STATE age=S.Ss alive|dead|?\n"
	        "  # unreadable: PATH: problem\n"
	        "RANK is the global rank or '-'; last is the newest op the process issued\n"
	        "(#SEQ and @COMM, 16 hex digits, when it has them; '-' when none), state its\n"
	        "state (ENQUEUED STARTED COMPLETED FAILED ...), age the time since it was\n"
	        "issued; alive: running on this host; dead; '?': another host.\n"
	        "\n"
	        "Exit status: 0 every file read; 1 a file could not be read (one line on\n"
	        "stderr each; status does not judge jobs: diagnose does); 2 usage error, an\n"
	        "untrusted default directory, or nothing readable (one line on stderr).\n");
}

static int status_run(int argc, char **argv)
{
	static const struct option options[] = {
		{ "job", required_argument, NULL, 'J' },
		{ "any-owner", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nw_analysis_options opt = { 0 };
	int any_owner = 0, c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:J:Ah", options, NULL)) != -1) {
		switch (c) {
		case 'J':
			opt.job = optarg;
			break;
		case 'A':
			any_owner = 1;
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
	struct nw_analysis a;
	int rc = nw_cli_analyze("status", argc - optind, argv + optind, &opt, any_owner, &a);
	if (rc != NW_EXIT_OK)
		return rc;
	int written = nw_render_status(stdout, &a, 0);
	int all_read = a.nbad == 0;
	nw_analysis_free(&a);
	if (written != 0)
		return nw_usage_error("status", "writing the output: %s", strerror(errno));
	return all_read ? NW_EXIT_OK : NW_EXIT_PROBLEM;
}

const struct nw_command nw_cmd_status = {
	.name = "status",
	.summary = "one line per process: host, pid, rank, communicators, last op, state, age",
	.help = status_help,
	.run = status_run,
};
