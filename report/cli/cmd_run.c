/* `ncclwatch run [options] -- CMD [ARGS...]`: CMD under libncclwatch.so.
 * Sets LD_PRELOAD and the NCCLWATCH_* variables the options name, runs CMD
 * as a child, forwards the signals a user or a launcher sends to it, and
 * ends the way CMD ended: its exit status, or its terminating signal
 * raised again (what a shell would have seen). */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../escape.h"

static void run_help(FILE *out)
{
	fprintf(out,
	        "usage: ncclwatch run [--timeout S] [--dir D] [--dump-dir D] [--keep] [--stacks]\n"
	        "                     -- CMD [ARGS...]\n"
	        "\n"
	        "Runs CMD with libncclwatch.so preloaded: every NCCL call of CMD and of the\n"
	        "processes it starts (torchrun, mpirun and srun pass the environment on) is\n"
	        "recorded, and each process's watchdog reports stalls.\n"
	        "\n"
	        "  -t, --timeout S    NCCLWATCH_TIMEOUT: seconds (decimals allowed) before an op\n"
	        "                     counts as stalled (library default 60)\n"
	        "  -d, --dir D        NCCLWATCH_DIR: where segments are created\n"
	        "                     (default /dev/shm/ncclwatch-$UID)\n"
	        "  -D, --dump-dir D   NCCLWATCH_DUMP_DIR: where dumps go (default: the job\n"
	        "                     directory); a shared directory for multi-host jobs\n"
	        "  -k, --keep         NCCLWATCH_KEEP=1: keep segments after a clean exit\n"
	        "  -s, --stacks       NCCLWATCH_STACKS=1: keep a call stack of every op\n"
	        "  -h, --help         this text\n"
	        "Variables the options do not name are inherited as they are.\n"
	        "\n"
	        "The library is $NCCLWATCH_LIB if set, else ../lib/libncclwatch.so beside this\n"
	        "program. It goes first in LD_PRELOAD (after a sanitizer runtime already\n"
	        "there, which must stay first), before what LD_PRELOAD already holds.\n"
	        "\n"
	        "SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to ncclwatch are\n"
	        "passed on to CMD (not those a terminal sends to the whole foreground process\n"
	        "group: CMD gets those itself).\n"
	        "\n"
	        "Exit status: CMD's; if a signal ended CMD, ncclwatch ends by the same signal\n"
	        "(a shell shows 128+N); 126 CMD could not be executed, 127 CMD not found;\n"
	        "2 usage error or no libncclwatch.so (one line on stderr).\n");
}

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])

static volatile sig_atomic_t child_pid;

static void forward(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	/* A terminal's ^C, ^\ or hangup goes to the whole foreground process
	 * group, CMD included: sending it again would deliver it twice. */
	if (info && info->si_code == SI_KERNEL)
		return;
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* The library beside this program: <bindir>/../lib/libncclwatch.so. */
static int default_lib(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	if ((size_t)snprintf(buf, len, "%s/../lib/libncclwatch.so", exe) >= len)
		return -1;
	char real[PATH_MAX];
	if (realpath(buf, real) && strlen(real) < len)
		strcpy(buf, real);
	return 0;
}

static int is_sanitizer_runtime(const char *entry, size_t len)
{
	static const char *const names[] = { "libasan", "libtsan", "libubsan", "libhwasan", "libclang_rt." };
	const char *base = entry;
	for (size_t i = 0; i < len; i++)
		if (entry[i] == '/')
			base = entry + i + 1;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strncmp(base, names[i], strlen(names[i])) == 0)
			return 1;
	return 0;
}

/* LD_PRELOAD with `lib` added: after the leading sanitizer runtimes, before
 * the rest; unchanged if it is already there. */
static char *preload_value(const char *lib, const char *old)
{
	size_t liblen = strlen(lib);
	if (!old || !*old)
		return strdup(lib);
	/* Entries are separated by ':' or spaces (ld.so(8)). */
	const char *p = old, *insert = old;
	int leading = 1;
	while (*p) {
		size_t n = strcspn(p, ": ");
		if (n == liblen && strncmp(p, lib, n) == 0)
			return strdup(old);
		if (n && leading && is_sanitizer_runtime(p, n))
			insert = p + n + strspn(p + n, ": ");
		else if (n)
			leading = 0;
		p += n;
		p += strspn(p, ": ");
	}
	size_t pre = (size_t)(insert - old), total = strlen(old) + liblen + 2;
	char *v = malloc(total + 1);
	if (!v)
		return NULL;
	if (pre && old[pre - 1] != ':' && old[pre - 1] != ' ')
		snprintf(v, total + 1, "%.*s:%s%s%s", (int)pre, old, lib, *insert ? ":" : "", insert);
	else
		snprintf(v, total + 1, "%.*s%s%s%s", (int)pre, old, lib, *insert ? ":" : "", insert);
	return v;
}

/* What the command line asks of run: the variables to set. */
struct run_opts {
	const char *timeout, *dir, *dump_dir;
	int keep, stacks;
};

/* The options; -1 to go on, else the exit status. */
static int parse_run_options(int argc, char **argv, struct run_opts *o)
{
	static const struct option options[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "dir", required_argument, NULL, 'd' },
		{ "dump-dir", required_argument, NULL, 'D' },
		{ "keep", no_argument, NULL, 'k' },
		{ "stacks", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	double secs;
	*o = (struct run_opts){ 0 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:t:d:D:ksh", options, NULL)) != -1) {
		switch (c) {
		case 't':
			if (nw_cli_seconds(optarg, &secs) != 0)
				return nw_usage_error("run", "--timeout wants a number of seconds > 0, not '%s'", optarg);
			o->timeout = optarg;
			break;
		case 'd':
			o->dir = optarg;
			break;
		case 'D':
			o->dump_dir = optarg;
			break;
		case 'k':
			o->keep = 1;
			break;
		case 's':
			o->stacks = 1;
			break;
		case 'h':
			run_help(stdout);
			return NW_EXIT_OK;
		case ':':
			return nw_usage_error("run", "option '%s' needs a value", argv[optind - 1]);
		default:
			return nw_usage_error("run", "unknown option '%s' (see ncclwatch run --help)", argv[optind - 1]);
		}
	}
	return -1;
}

/* The library to preload, readable, as an absolute path: $NCCLWATCH_LIB,
 * else the one beside this program. -1 to go on, else the exit status. */
static int find_lib(char lib[PATH_MAX])
{
	const char *env_lib = getenv("NCCLWATCH_LIB");
	if (env_lib && *env_lib) {
		if (strlen(env_lib) >= PATH_MAX)
			return nw_usage_error("run", "NCCLWATCH_LIB is too long");
		strcpy(lib, env_lib);
	} else if (default_lib(lib, PATH_MAX) != 0) {
		return nw_usage_error("run", "cannot find where this program is (/proc/self/exe); set NCCLWATCH_LIB");
	}
	if (access(lib, R_OK) != 0)
		return nw_usage_error("run", "%s: %s (set NCCLWATCH_LIB to libncclwatch.so)", lib, strerror(errno));
	char real[PATH_MAX];
	if (realpath(lib, real))   /* absolute: CMD's processes may change directory */
		strcpy(lib, real);
	return -1;
}

/* LD_PRELOAD and the variables the options name, for CMD to inherit. -1
 * to go on, else the exit status. */
static int set_run_environment(const char *lib, const struct run_opts *o)
{
	char *preload = preload_value(lib, getenv("LD_PRELOAD"));
	if (!preload || setenv("LD_PRELOAD", preload, 1) != 0
	    || (o->timeout && setenv("NCCLWATCH_TIMEOUT", o->timeout, 1) != 0)
	    || (o->dir && setenv("NCCLWATCH_DIR", o->dir, 1) != 0)
	    || (o->dump_dir && setenv("NCCLWATCH_DUMP_DIR", o->dump_dir, 1) != 0)
	    || (o->keep && setenv("NCCLWATCH_KEEP", "1", 1) != 0)
	    || (o->stacks && setenv("NCCLWATCH_STACKS", "1", 1) != 0)) {
		free(preload);
		return nw_usage_error("run", "cannot set the environment: %s", strerror(errno));
	}
	free(preload);
	return -1;
}

/* Forwarded signals are blocked until the child's pid is known, so none
 * is lost between fork and the handler seeing the pid; *old is the mask
 * before, orig[] the actions before. */
static void install_forwarding(sigset_t *old, struct sigaction orig[NFORWARDED])
{
	sigset_t block;
	sigemptyset(&block);
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaddset(&block, forwarded[i]);
	sigprocmask(SIG_BLOCK, &block, old);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < NFORWARDED; i++) {
		sigaction(forwarded[i], NULL, &orig[i]);
		/* A signal ignored here (nohup) stays ignored, for CMD too. */
		if (orig[i].sa_handler != SIG_IGN)
			sigaction(forwarded[i], &sa, NULL);
	}
}

/* The child: the signal actions and mask as they were, then CMD. */
static void exec_command(char **cmd, const sigset_t *old, const struct sigaction orig[NFORWARDED])
{
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaction(forwarded[i], &orig[i], NULL);
	sigprocmask(SIG_SETMASK, old, NULL);
	execvp(cmd[0], cmd);
	int e = errno;
	nw_print_line(stderr, "ncclwatch run: %s: %s", cmd[0], strerror(e));
	_exit(e == ENOENT ? 127 : 126);
}

/* Exit as CMD did: its status, or the signal that ended it. */
static int exit_as_child(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		/* End the same way, without a core file of our own. */
		struct rlimit no_core = { 0, 0 };
		setrlimit(RLIMIT_CORE, &no_core);
		fflush(NULL);
		signal(sig, SIG_DFL);
		sigset_t only;
		sigemptyset(&only);
		sigaddset(&only, sig);
		sigprocmask(SIG_UNBLOCK, &only, NULL);
		raise(sig);
		return 128 + sig;   /* a signal whose default is not to end */
	}
	return NW_EXIT_USAGE;
}

static int run_run(int argc, char **argv)
{
	struct run_opts o;
	int rc = parse_run_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return nw_usage_error("run", "no command given: ncclwatch run [OPTIONS] -- CMD [ARGS...]");
	if ((o.dir && !*o.dir) || (o.dump_dir && !*o.dump_dir))
		return nw_usage_error("run", "--dir and --dump-dir want a directory, not ''");

	char lib[PATH_MAX];
	if ((rc = find_lib(lib)) >= 0 || (rc = set_run_environment(lib, &o)) >= 0)
		return rc;

	sigset_t old;
	struct sigaction orig[NFORWARDED];
	install_forwarding(&old, orig);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return nw_usage_error("run", "fork: %s", strerror(errno));
	}
	if (pid == 0)
		exec_command(argv + optind, &old, orig);
	child_pid = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);

	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "ncclwatch run: waitpid: %s\n", strerror(errno));
			return NW_EXIT_USAGE;
		}
	}
	child_pid = 0;
	return exit_as_child(status);
}

const struct nw_command nw_cmd_run = {
	.name = "run",
	.summary = "run a command with libncclwatch.so preloaded; exit as it did",
	.help = run_help,
	.run = run_run,
};
