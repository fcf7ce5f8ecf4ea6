/* `ncclwatch attach [--tree PID] [-o DIR] [PID...]`: a job that runs
 * without the preload, seen from outside: per process its ranks, its
 * allowlisted environment and every thread's stack (native through the
 * capture core, Python through py-spy), one snapshot file each
 * (attach/snapshot.c); then the verdict over them, as `diagnose` gives
 * (--verbose, --json as diagnose's). */
#include "commands.h"
#include "cli_ras.h"
#include "trust.h"

#include "../../attach/proc.h"
#include "../../attach/pyspy.h"
#include "../../attach/snapshot.h"
#include "../../capture/capture.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../escape.h"

static void attach_help(FILE *out)
{
	fprintf(out,
	        "usage: ncclwatch attach [--tree PID] [-o DIR] [--no-python] [--no-dump]\n"
	        "                        [--no-verdict] [--no-ras] [--verbose] [--json] [PID...]\n"
	        "\n"
	        "Takes the stacks of a job started without ncclwatch, without changing what\n"
	        "it sees: for each process its rank, world size, local rank and the\n"
	        "allowlisted variables of its environment (/proc/PID/environ), every thread's\n"
	        "native stack (threads blocked in a call are read from /proc without being\n"
	        "stopped; a thread running user code is stopped with ptrace only while its\n"
	        "registers and stack are copied) and its Python stacks (py-spy dump\n"
	        "--nonblocking, when\n"
	        "py-spy is installed). Writes one snapshot file per process\n"
	        "(<host>.<pid>.rank<R>.snap.seg), then prints the verdict over them, as\n"
	        "`ncclwatch diagnose` does.\n"
	        "\n"
	        "Processes: the PIDs given; or --tree PID, the descendants of a launcher\n"
	        "(torchrun, mpirun, an srun step) that have libnccl mapped or a launcher rank\n"
	        "in their environment; by default every process of yours with libnccl mapped.\n"
	        "A process that runs with the preload keeps its own segment (no snapshot is\n"
	        "written for it); its watchdog is asked for a dump (as `ncclwatch dump`).\n"
	        "\n"
	        "  -t, --tree PID     the descendants of PID\n"
	        "  -o, --output DIR   write the snapshots into DIR (made if missing); default\n"
	        "                     $NCCLWATCH_DIR/<job>, else /dev/shm/ncclwatch-$UID/<job>,\n"
	        "                     <job> as the preload would name it (README, \"Jobs\")\n"
	        "  -P, --no-python    no Python stacks (py-spy is not run)\n"
	        "  -D, --no-dump      do not ask processes with the preload for a dump\n"
	        "  -n, --no-verdict   write the snapshots only\n"
	        "  -v, --verbose      the verdict with every evidence line and stack group\n"
	        "                     (as diagnose --verbose)\n"
	        "  -j, --json         the verdict as diagnose --json gives it (docs/json-schema.md)\n"
	        "                     on stdout; attach's own lines go to stderr\n"
	        "  -R, --no-ras       do not ask NCCL's RAS (by default its report, from the\n"
	        "                     address the processes' NCCL_RAS_ADDR names, else\n"
	        "                     localhost:28028, goes next to the snapshots as ras.json and\n"
	        "                     into the verdict: launch counts; docs/ras.md)\n"
	        "  -h, --help         this text\n"
	        "\n"
	        "Output: one line per process (\"attach: pid P rank R: T threads, S stacks ...\n"
	        "-> FILE\"), one line of what was stopped, then the verdict (with --json: those\n"
	        "lines on stderr, the JSON document alone on stdout). Needs: same user (or root), ptrace allowed\n"
	        "(kernel.yama.ptrace_scope 0, or 1 for descendants; in a container\n"
	        "CAP_SYS_PTRACE for processes it did not start).\n"
	        "\n"
	        "Exit status: 2 usage error, no process found, or some process could not be\n"
	        "read (one line each: not permitted, gone); else diagnose's: 0 healthy, 1 a\n"
	        "problem found.\n");
}

#define MAX_DIRS 256

/* The job directories written into, each with the pids whose files it
 * holds: RAS is asked per job, for that job's processes. */
struct dirset {
	char *dir[MAX_DIRS];
	pid_t *pids[MAX_DIRS];
	size_t npids[MAX_DIRS];
	int n;
};

static void dirset_add(struct dirset *s, const char *d, pid_t pid)
{
	int i;
	for (i = 0; i < s->n && strcmp(s->dir[i], d); i++) {}
	if (i == s->n) {
		if (s->n == MAX_DIRS || !(s->dir[i] = strdup(d)))
			return;
		s->pids[i] = NULL;
		s->npids[i] = 0;
		s->n++;
	}
	pid_t *np = realloc(s->pids[i], (s->npids[i] + 1) * sizeof *np);
	if (np) {
		np[s->npids[i]++] = pid;
		s->pids[i] = np;
	}
}

static void dirset_free(struct dirset *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->dir[i]);
		free(s->pids[i]);
		s->dir[i] = NULL;
		s->pids[i] = NULL;
	}
}

/* mkdir -p with mode 0700 for the parts we make. 0, or -1 (errno). */
static int make_dirs(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0700) != 0 && errno != EEXIST)
		return -1;
	struct stat st;
	if (stat(buf, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

static int parse_pid(const char *s, pid_t *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 0x3fffffff)
		return -1;
	*out = (pid_t)v;
	return 0;
}

static const char *rank_text(int32_t r, char *buf, size_t len)
{
	if (r < 0)
		return "-";
	snprintf(buf, len, "%d", r);
	return buf;
}

static int run_attach(int argc, char **argv)
{
	static const struct option options[] = {
		{ "tree", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-python", no_argument, NULL, 'P' },
		{ "no-dump", no_argument, NULL, 'D' },
		{ "no-verdict", no_argument, NULL, 'n' },
		{ "no-ras", no_argument, NULL, 'R' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	pid_t tree = 0;
	const char *out_dir = NULL;
	int python = 1, dump = 1, verdict = 1, ras = 1, verbose = 0, json = 0, c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:t:o:PDnRvjh", options, NULL)) != -1) {
		switch (c) {
		case 't':
			if (parse_pid(optarg, &tree) != 0)
				return nw_usage_error("attach", "--tree wants a process id, not '%s'", optarg);
			break;
		case 'o':
			if (!*optarg)
				return nw_usage_error("attach", "--output wants a directory");
			out_dir = optarg;
			break;
		case 'P':
			python = 0;
			break;
		case 'D':
			dump = 0;
			break;
		case 'n':
			verdict = 0;
			break;
		case 'R':
			ras = 0;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			attach_help(stdout);
			return NW_EXIT_OK;
		case ':':
			return nw_usage_error("attach", "option '%s' needs a value", argv[optind - 1]);
		default:
			return nw_usage_error("attach", "unknown option '%s' (see ncclwatch attach --help)",
			                      argv[optind - 1]);
		}
	}
	int npids = argc - optind;
	if (json && !verdict)
		return nw_usage_error("attach", "--json is the verdict's form: not with --no-verdict");
	if (tree && npids)
		return nw_usage_error("attach", "either --tree PID or PIDs, not both");
	pid_t *pids = NULL;
	if (npids) {
		pids = calloc((size_t)npids, sizeof(*pids));
		if (!pids)
			return nw_usage_error("attach", "out of memory");
		for (int i = 0; i < npids; i++)
			if (parse_pid(argv[optind + i], &pids[i]) != 0) {
				free(pids);
				return nw_usage_error("attach", "'%s' is not a process id", argv[optind + i]);
			}
	} else {
		if (tree && kill(tree, 0) != 0 && errno == ESRCH)
			return nw_usage_error("attach", "--tree %d: no such process", (int)tree);
		pid_t *launchers = NULL;
		int nlaunchers = 0;
		npids = nw_attach_find(getuid(), tree, &pids, &launchers, &nlaunchers);
		if (npids < 0)
			return nw_usage_error("attach", "/proc: %s", strerror(errno));
		for (int i = 0; i < nlaunchers; i++) {
			struct nw_attach_proc lp;
			if (nw_attach_proc_read(launchers[i], &lp) == 0)
				nw_print_line(stdout, "attach: pid %d (%s): a launcher of ranks (no rank of its own): not a rank",
				              (int)lp.pid, lp.comm);
		}
		free(launchers);
		if (npids == 0) {
			free(pids);
			if (tree)
				return nw_usage_error("attach", "--tree %d: no descendant has libnccl mapped or a rank "
				                      "in its environment", (int)tree);
			return nw_usage_error("attach", "no process of yours has libnccl mapped (give PIDs or --tree PID)");
		}
	}

	char defbuf[PATH_MAX];
	const char *base = NULL;
	if (out_dir) {
		if (make_dirs(out_dir) != 0) {
			free(pids);
			return nw_usage_error("attach", "%s: %s", out_dir, strerror(errno));
		}
	} else {
		const char *d = nw_default_dir(defbuf, sizeof(defbuf));
		if (make_dirs(d) != 0) {
			free(pids);
			return nw_usage_error("attach", "%s: %s", d, strerror(errno));
		}
		int rc = nw_cli_default_dir("attach", defbuf, sizeof(defbuf), NULL, &base);
		if (rc != NW_EXIT_OK) {
			free(pids);
			return rc;
		}
	}

	/* --json: stdout is the verdict's document alone; what attach (and the
	 * dump it asks for) says goes to stderr until then. */
	int saved_stdout = -1;
	if (json) {
		fflush(stdout);
		saved_stdout = dup(STDOUT_FILENO);
		if (saved_stdout < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			free(pids);
			return nw_usage_error("attach", "stdout: %s", strerror(errno));
		}
	}
	const char *pyspy = python ? nw_pyspy_path() : NULL;
	int problems = 0, written = 0, foreign = 0;
	struct dirset dirs = { .n = 0 };
	struct dirset dump_dirs = { .n = 0 };
	static struct nw_attach_proc p;
	for (int i = 0; i < npids; i++) {
		char rbuf[16];
		if (nw_attach_proc_read(pids[i], &p) != 0) {
			nw_print_line(stderr, "ncclwatch attach: pid %d: process gone", (int)pids[i]);
			problems = 1;
			continue;
		}
		if (p.denied) {
			nw_print_line(stderr, "ncclwatch attach: pid %d (%s): not permitted to read it (another user's "
			        "process, or one that set PR_SET_DUMPABLE 0)", (int)p.pid, p.comm);
			problems = 1;
			continue;
		}
		if (p.preload && !p.segment[0]) {
			nw_print_line(stdout, "attach: pid %d rank %s (%s): has the preload but no segment yet (no NCCL call so far): "
			       "a snapshot instead", (int)p.pid, rank_text(p.global_rank, rbuf, sizeof(rbuf)), p.comm);
		} else if (p.preload) {
			char jobdir[PATH_MAX];
			snprintf(jobdir, sizeof(jobdir), "%s", p.segment);
			char *slash = strrchr(jobdir, '/');
			if (slash)
				*slash = 0;
			nw_print_line(stdout, "attach: pid %d rank %s (%s): runs with the preload: its segment %s", (int)p.pid,
			       rank_text(p.global_rank, rbuf, sizeof(rbuf)), p.comm, p.segment);
			dirset_add(&dirs, jobdir, p.pid);
			dirset_add(&dump_dirs, jobdir, p.pid);
			continue;
		}
		char dir[PATH_MAX];
		if (out_dir)
			snprintf(dir, sizeof(dir), "%s", out_dir);
		else if (snprintf(dir, sizeof(dir), "%s/%s", base, p.job) >= (int)sizeof(dir) || make_dirs(dir) != 0) {
			nw_print_line(stderr, "ncclwatch attach: %s: %s", dir, strerror(errno));
			problems = 1;
			continue;
		}
		char pynote[256] = "";
		struct nw_py_process *py = NULL;
		if (!python)
			snprintf(pynote, sizeof(pynote), "not asked (--no-python)");
		else if (!p.python)
			snprintf(pynote, sizeof(pynote), "no Python in this process");
		else if (!pyspy)
			nw_pyspy_missing(pynote, sizeof(pynote));
		else
			py = nw_pyspy_dump(pyspy, p.pid, pynote, sizeof(pynote));
		struct nw_snapshot_result res;
		char err[512];
		if (nw_snapshot_take(&p, dir, py, pynote[0] ? pynote : NULL, &res, err, sizeof(err)) != 0) {
			nw_print_line(stderr, "ncclwatch attach: pid %d (%s): %s", (int)p.pid, p.comm, err);
			problems = 1;
			nw_pyspy_free(py);
			continue;
		}
		nw_pyspy_free(py);
		if (res.denied) {
			nw_print_line(stderr, "ncclwatch attach: pid %d (%s): not permitted to read its threads "
			        "(ptrace: same user, kernel.yama.ptrace_scope, CAP_SYS_PTRACE in a container)",
			        (int)p.pid, p.comm);
			problems = 1;
		}
		char left[64] = "";
		if (res.left_running)
			snprintf(left, sizeof(left), ", %u left running", res.left_running);
		nw_print_line(stdout, "attach: pid %d rank %s (%s): %u threads, %u stacks (%u stopped, longest %.3f ms%s), "
		       "%.1f ms; python: %s -> %s",
		       (int)p.pid, rank_text(p.global_rank, rbuf, sizeof(rbuf)), p.comm, res.threads, res.stacks,
		       res.by_ptrace, res.stopped_max_ns / 1e6, left, res.capture_ns / 1e6, pynote, res.path);
		if (p.uid != getuid())
			foreign = 1;
		written++;
		dirset_add(&dirs, dir, p.pid);
	}
	if (ras && dirs.n)
		nw_cli_ras_attach(dirs.dir, dirs.pids, dirs.npids, dirs.n);
	else if (dirs.n)
		printf("attach: RAS not asked (--no-ras): stacks alone\n");
	free(pids);
	if (written)
		printf("attach: %d process%s: %llu threads read without stopping them, %llu stopped (longest %.3f ms), "
		       "%llu call%s woken in the window restarted, %llu left running (not interrupted)\n",
		       written, written == 1 ? "" : "es", (unsigned long long)nw_cap_stats.by_syscall,
		       (unsigned long long)nw_cap_stats.by_ptrace, nw_cap_stats.stopped_max_ns / 1e6,
		       (unsigned long long)nw_cap_stats.restarted, nw_cap_stats.restarted == 1 ? "" : "s",
		       (unsigned long long)nw_cap_stats.left_running);
	fflush(stdout);

	if (dump)
		for (int i = 0; i < dump_dirs.n; i++) {
			char *dargv[] = { "dump", "--wait", "5", dump_dirs.dir[i], NULL };
			optind = 0;
			nw_cmd_dump.run(4, dargv);
		}
	int status = NW_EXIT_OK;
	fflush(stdout);
	if (saved_stdout >= 0) {
		dup2(saved_stdout, STDOUT_FILENO);
		close(saved_stdout);
	}
	if (verdict && dirs.n) {
		char *dargv[MAX_DIRS + 5];
		int k = 0;
		dargv[k++] = "diagnose";
		if (foreign)
			dargv[k++] = "--any-owner";
		if (verbose)
			dargv[k++] = "--verbose";
		if (json)
			dargv[k++] = "--json";
		for (int i = 0; i < dirs.n; i++)
			dargv[k++] = dirs.dir[i];
		dargv[k] = NULL;
		optind = 0;
		status = nw_cmd_diagnose.run(k, dargv);
	}
	dirset_free(&dirs);
	dirset_free(&dump_dirs);
	if (problems)
		return NW_EXIT_USAGE;
	if (!written && !dirs.n)
		return NW_EXIT_USAGE;
	return status;
}

const struct nw_command nw_cmd_attach = {
	.name = "attach",
	.summary = "the stacks of a job started without ncclwatch (snapshot files), and the verdict",
	.help = attach_help,
	.run = run_attach,
};
