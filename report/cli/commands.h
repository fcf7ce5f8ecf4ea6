/* The commands of the `ncclwatch` CLI. Each command is one file that
 * defines a `struct nw_command`; commands.c lists them. Adding a command
 * is adding its file and one line to that list.
 *
 * Exit status of every command (README, "Exit status"; `run` passes its
 * command's on instead):
 *   0  ok: everything given was read and nothing is wrong;
 *   1  a problem found: a verdict other than HEALTHY (diagnose), a file
 *      that could not be read while others could (diagnose, status, show:
 *      one line on stderr per file), a process that did not answer (dump),
 *      a file that could not be removed (gc);
 *   2  usage error, an untrusted default directory (trust.h), or nothing
 *      readable (one line on stderr naming the path and the problem).
 */
#ifndef NCCLWATCH_REPORT_CLI_COMMANDS_H
#define NCCLWATCH_REPORT_CLI_COMMANDS_H

#include <stddef.h>
#include <stdio.h>

#define NW_EXIT_OK 0
#define NW_EXIT_PROBLEM 1
#define NW_EXIT_USAGE 2

#ifndef NCCLWATCH_VERSION
#define NCCLWATCH_VERSION "0.1.0"
#endif

struct nw_command {
	const char *name;
	const char *summary;            /* one line for `ncclwatch --help` */
	void (*help)(FILE *out);        /* `ncclwatch <name> --help` */
	int (*run)(int argc, char **argv); /* argv[0] is the command's name */
};

/* NULL-terminated, in the order `ncclwatch --help` lists them. */
extern const struct nw_command *const nw_commands[];

extern const struct nw_command nw_cmd_diagnose;
extern const struct nw_command nw_cmd_status;
extern const struct nw_command nw_cmd_summary;
extern const struct nw_command nw_cmd_dump;
extern const struct nw_command nw_cmd_show;
extern const struct nw_command nw_cmd_gc;
extern const struct nw_command nw_cmd_run;
extern const struct nw_command nw_cmd_attach;
extern const struct nw_command nw_cmd_ras;

/* The directory the library writes to by default: $NCCLWATCH_DIR if set and
 * not empty, else /dev/shm/ncclwatch-$UID (written into buf). */
const char *nw_default_dir(char *buf, size_t len);

/* Seconds > 0 ("2", "0.5") into *out: 0, or -1 if s is not that. */
int nw_cli_seconds(const char *s, double *out);

/* "ncclwatch <cmd>: <message>" on stderr; returns NW_EXIT_USAGE. */
int nw_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* NCCLWATCH_REPORT_CLI_COMMANDS_H */
