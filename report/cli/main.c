/* `ncclwatch`: global options (--help, --version) and dispatch to the
 * command named by the first argument (see commands.h). */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ncclwatch/segment.h>
#include "../escape.h"

int nw_usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* the message names paths and values from files: escaped (../escape.h) */
	nw_print_line(stderr, "ncclwatch%s%s: %s", cmd ? " " : "", cmd ? cmd : "", msg);
	return NW_EXIT_USAGE;
}

const char *nw_default_dir(char *buf, size_t len)
{
	const char *dir = getenv("NCCLWATCH_DIR");
	if (dir && *dir)
		return dir;
	snprintf(buf, len, "/dev/shm/ncclwatch-%u", (unsigned)getuid());
	return buf;
}

int nw_cli_seconds(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

static void help(FILE *out)
{
	fprintf(out,
	        "usage: ncclwatch [--help] [--version] COMMAND [ARGS...]\n"
	        "\n"
	        "Finds out why an NCCL job hangs from what libncclwatch.so recorded about its\n"
	        "NCCL calls: one segment file per process, live or left behind after a crash.\n"
	        "\n"
	        "commands:\n");
	for (const struct nw_command *const *c = nw_commands; *c; c++)
		fprintf(out, "  %-10s %s\n", (*c)->name, (*c)->summary);
	fprintf(out,
	        "\n"
	        "DIR, where a command takes one, defaults to $NCCLWATCH_DIR, else\n"
	        "/dev/shm/ncclwatch-$UID: every job of this user on this host.\n"
	        "'ncclwatch COMMAND --help' describes a command.\n"
	        "The default directory must be yours and writable by nobody else; diagnose\n"
	        "and status skip files of other users (--any-owner reads them).\n"
	        "Exit status: 0 ok; 1 a problem found (a hung job, a file that could not be\n"
	        "read while others could: one line on stderr each); 2 usage error, an\n"
	        "untrusted default directory, or nothing readable.\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	opterr = 0;
	/* '+': stop at the command name; its options are its own. */
	while ((opt = getopt_long(argc, argv, "+hV", options, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help(stdout);
			return NW_EXIT_OK;
		case 'V':
			printf("ncclwatch %s (segment format %d.%d)\n", NCCLWATCH_VERSION,
			       NW_SEG_VERSION_MAJOR, NW_SEG_VERSION_MINOR);
			return NW_EXIT_OK;
		default:
			return nw_usage_error(NULL, "unknown option '%s' (see ncclwatch --help)",
			                      argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return nw_usage_error(NULL, "no command given (see ncclwatch --help)");
	const int first = optind;
	const char *name = argv[first];
	for (const struct nw_command *const *c = nw_commands; *c; c++)
		if (strcmp((*c)->name, name) == 0) {
			optind = 0; /* glibc: restart getopt for the command's own options */
			return (*c)->run(argc - first, argv + first);
		}
	return nw_usage_error(NULL, "unknown command '%s' (see ncclwatch --help)", name);
}
