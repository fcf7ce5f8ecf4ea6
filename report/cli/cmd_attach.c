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

/* What the command line asks of attach. */
struct attach_opts {
	pid_t tree;
	const char *out_dir;
	int python, dump, verdict, ras, verbose, json;
};

/* A pass of attach over its processes: where snapshots go, and what came
 * of them. */
struct attach_pass {
	const struct attach_opts *o;
	const char *base;       /* the default directory, jobs below it (no --output) */
	const char *pyspy;      /* py-spy, or NULL: none, or not asked */
	int problems, written, foreign;
	struct dirset dirs;     /* every job directory to diagnose */
	struct dirset dump_dirs; /* those of processes with the preload */
};

/* The options; -1 to go on, else the exit status. */
static int parse_attach_options(int argc, char **argv, struct attach_opts *o)
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
	int c;
	*o = (struct attach_opts){ .python = 1, .dump = 1, .verdict = 1, .ras = 1 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:t:o:PDnRvjh", options, NULL)) != -1) {
		switch (c) {
		case 't':
			if (parse_pid(optarg, &o->tree) != 0)
				return nw_usage_error("attach", "--tree wants a process id, not '%s'", optarg);
			break;
		case 'o':
			if (!*optarg)
				return nw_usage_error("attach", "--output wants a directory");
			o->out_dir = optarg;
			break;
		case 'P':
			o->python = 0;
			break;
		case 'D':
			o->dump = 0;
			break;
		case 'n':
			o->verdict = 0;
			break;
		case 'R':
			o->ras = 0;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'j':
			o->json = 1;
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
	return -1;
}

/* The processes of yours with libnccl mapped (under --tree PID, its
 * descendants); the launchers among them are named, not attached to. -1
 * to go on, else the exit status. */
static int find_attach_pids(pid_t tree, pid_t **pids, int *npids)
{
	if (tree && kill(tree, 0) != 0 && errno == ESRCH)
		return nw_usage_error("attach", "--tree %d: no such process", (int)tree);
	pid_t *launchers = NULL;
	int nlaunchers = 0;
	*npids = nw_attach_find(getuid(), tree, pids, &launchers, &nlaunchers);
	if (*npids < 0)
		return nw_usage_error("attach", "/proc: %s", strerror(errno));
	for (int i = 0; i < nlaunchers; i++) {
		struct nw_attach_proc lp;
		if (nw_attach_proc_read(launchers[i], &lp) == 0)
			nw_print_line(stdout, "attach: pid %d (%s): a launcher of ranks (no rank of its own): not a rank",
			              (int)lp.pid, lp.comm);
	}
	free(launchers);
	if (*npids == 0) {
		free(*pids);
		if (tree)
			return nw_usage_error("attach", "--tree %d: no descendant has libnccl mapped or a rank "
			                      "in its environment", (int)tree);
		return nw_usage_error("attach", "no process of yours has libnccl mapped (give PIDs or --tree PID)");
	}
	return -1;
}

/* The PIDs given, else those found. -1 to go on, else the exit status. */
static int attach_pids(const struct attach_opts *o, int npids, char **args, pid_t **pids, int *n)
{
	*n = npids;
	*pids = NULL;
	if (!npids)
		return find_attach_pids(o->tree, pids, n);
	*pids = calloc((size_t)npids, sizeof(**pids));
	if (!*pids)
		return nw_usage_error("attach", "out of memory");
	for (int i = 0; i < npids; i++)
		if (parse_pid(args[i], &(*pids)[i]) != 0) {
			free(*pids);
			return nw_usage_error("attach", "'%s' is not a process id", args[i]);
		}
	return -1;
}

/* The directory the snapshots go to: --output, made if missing, or the
 * default directory (*base, in defbuf), checked as every command checks
 * it. -1 to go on, else the exit status. */
static int attach_output_dir(const char *out_dir, char *defbuf, size_t len, const char **base)
{
	if (out_dir) {
		if (make_dirs(out_dir) != 0)
			return nw_usage_error("attach", "%s: %s", out_dir, strerror(errno));
		return -1;
	}
	const char *d = nw_default_dir(defbuf, len);
	if (make_dirs(d) != 0)
		return nw_usage_error("attach", "%s: %s", d, strerror(errno));
	int rc = nw_cli_default_dir("attach", defbuf, len, NULL, base);
	return rc != NW_EXIT_OK ? rc : -1;
}

/* A process that runs with the preload keeps its own segment: its job
 * directory is diagnosed, and its watchdog asked for a dump. */
static void note_preloaded(struct attach_pass *ap, const struct nw_attach_proc *p)
{
	char rbuf[16], jobdir[PATH_MAX];
	snprintf(jobdir, sizeof(jobdir), "%s", p->segment);
	char *slash = strrchr(jobdir, '/');
	if (slash)
		*slash = 0;
	nw_print_line(stdout, "attach: pid %d rank %s (%s): runs with the preload: its segment %s", (int)p->pid,
	              rank_text(p->global_rank, rbuf, sizeof(rbuf)), p->comm, p->segment);
	dirset_add(&ap->dirs, jobdir, p->pid);
	dirset_add(&ap->dump_dirs, jobdir, p->pid);
}

/* The process's Python stacks from py-spy, or NULL with pynote saying why
 * there are none. */
static struct nw_py_process *python_stacks(const struct attach_pass *ap, const struct nw_attach_proc *p,
                                           char *pynote, size_t len)
{
	if (!ap->o->python)
		snprintf(pynote, len, "not asked (--no-python)");
	else if (!p->python)
		snprintf(pynote, len, "no Python in this process");
	else if (!ap->pyspy)
		nw_pyspy_missing(pynote, len);
	else
		return nw_pyspy_dump(ap->pyspy, p->pid, pynote, len);
	return NULL;
}

/* The snapshot of process p into dir, and its line. */
static void snapshot_one(struct attach_pass *ap, const struct nw_attach_proc *p, const char *dir)
{
	char rbuf[16], pynote[256] = "";
	struct nw_py_process *py = python_stacks(ap, p, pynote, sizeof(pynote));
	struct nw_snapshot_result res;
	char err[512];
	if (nw_snapshot_take(p, dir, py, pynote[0] ? pynote : NULL, &res, err, sizeof(err)) != 0) {
		nw_print_line(stderr, "ncclwatch attach: pid %d (%s): %s", (int)p->pid, p->comm, err);
		ap->problems = 1;
		nw_pyspy_free(py);
		return;
	}
	nw_pyspy_free(py);
	if (res.denied) {
		nw_print_line(stderr, "ncclwatch attach: pid %d (%s): not permitted to read its threads "
		        "(ptrace: same user, kernel.yama.ptrace_scope, CAP_SYS_PTRACE in a container)",
		        (int)p->pid, p->comm);
		ap->problems = 1;
	}
	char left[64] = "";
	if (res.left_running)
		snprintf(left, sizeof(left), ", %u left running", res.left_running);
	nw_print_line(stdout, "attach: pid %d rank %s (%s): %u threads, %u stacks (%u stopped, longest %.3f ms%s), "
	       "%.1f ms; python: %s -> %s",
	       (int)p->pid, rank_text(p->global_rank, rbuf, sizeof(rbuf)), p->comm, res.threads, res.stacks,
	       res.by_ptrace, res.stopped_max_ns / 1e6, left, res.capture_ns / 1e6, pynote, res.path);
	if (p->uid != getuid())
		ap->foreign = 1;
	ap->written++;
	dirset_add(&ap->dirs, dir, p->pid);
}

/* One process: named gone or denied, its own segment, or a snapshot. */
static void attach_one(struct attach_pass *ap, pid_t pid)
{
	static struct nw_attach_proc p;
	char rbuf[16];
	if (nw_attach_proc_read(pid, &p) != 0) {
		nw_print_line(stderr, "ncclwatch attach: pid %d: process gone", (int)pid);
		ap->problems = 1;
		return;
	}
	if (p.denied) {
		nw_print_line(stderr, "ncclwatch attach: pid %d (%s): not permitted to read it (another user's "
		        "process, or one that set PR_SET_DUMPABLE 0)", (int)p.pid, p.comm);
		ap->problems = 1;
		return;
	}
	if (p.preload && !p.segment[0]) {
		nw_print_line(stdout, "attach: pid %d rank %s (%s): has the preload but no segment yet (no NCCL call so far): "
		       "a snapshot instead", (int)p.pid, rank_text(p.global_rank, rbuf, sizeof(rbuf)), p.comm);
	} else if (p.preload) {
		note_preloaded(ap, &p);
		return;
	}
	char dir[PATH_MAX];
	if (ap->o->out_dir)
		snprintf(dir, sizeof(dir), "%s", ap->o->out_dir);
	else if (snprintf(dir, sizeof(dir), "%s/%s", ap->base, p.job) >= (int)sizeof(dir) || make_dirs(dir) != 0) {
		nw_print_line(stderr, "ncclwatch attach: %s: %s", dir, strerror(errno));
		ap->problems = 1;
		return;
	}
	snapshot_one(ap, &p, dir);
}

/* The totals of the capture core over every snapshot written. */
static void print_attach_totals(int written)
{
	if (written)
		printf("attach: %d process%s: %llu threads read without stopping them, %llu stopped (longest %.3f ms), "
		       "%llu call%s woken in the window restarted, %llu left running (not interrupted)\n",
		       written, written == 1 ? "" : "es", (unsigned long long)nw_cap_stats.by_syscall,
		       (unsigned long long)nw_cap_stats.by_ptrace, nw_cap_stats.stopped_max_ns / 1e6,
		       (unsigned long long)nw_cap_stats.restarted, nw_cap_stats.restarted == 1 ? "" : "s",
		       (unsigned long long)nw_cap_stats.left_running);
	fflush(stdout);
}

/* `ncclwatch dump` for the jobs of the processes with the preload. */
static void dump_preloaded(const struct dirset *dump_dirs)
{
	for (int i = 0; i < dump_dirs->n; i++) {
		char *dargv[] = { "dump", "--wait", "5", dump_dirs->dir[i], NULL };
		optind = 0;
		nw_cmd_dump.run(4, dargv);
	}
}

/* `ncclwatch diagnose` over every job directory written or found. */
static int diagnose_attached(const struct attach_pass *ap)
{
	char *dargv[MAX_DIRS + 5];
	int k = 0;
	dargv[k++] = "diagnose";
	if (ap->foreign)
		dargv[k++] = "--any-owner";
	if (ap->o->verbose)
		dargv[k++] = "--verbose";
	if (ap->o->json)
		dargv[k++] = "--json";
	for (int i = 0; i < ap->dirs.n; i++)
		dargv[k++] = ap->dirs.dir[i];
	dargv[k] = NULL;
	optind = 0;
	return nw_cmd_diagnose.run(k, dargv);
}

/* Each process in turn, then RAS over the jobs written, the totals, the
 * dumps asked for and the verdict. */
static int attach_all(struct attach_pass *ap, const pid_t *pids, int npids, int saved_stdout)
{
	for (int i = 0; i < npids; i++)
		attach_one(ap, pids[i]);
	if (ap->o->ras && ap->dirs.n)
		nw_cli_ras_attach(ap->dirs.dir, ap->dirs.pids, ap->dirs.npids, ap->dirs.n);
	else if (ap->dirs.n)
		printf("attach: RAS not asked (--no-ras): stacks alone\n");
	print_attach_totals(ap->written);
	if (ap->o->dump)
		dump_preloaded(&ap->dump_dirs);
	int status = NW_EXIT_OK;
	fflush(stdout);
	if (saved_stdout >= 0) {
		dup2(saved_stdout, STDOUT_FILENO);
		close(saved_stdout);
	}
	if (ap->o->verdict && ap->dirs.n)
		status = diagnose_attached(ap);
	return status;
}

static int run_attach(int argc, char **argv)
{
	struct attach_opts o;
	int rc = parse_attach_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	int npids = argc - optind;
	if (o.json && !o.verdict)
		return nw_usage_error("attach", "--json is the verdict's form: not with --no-verdict");
	if (o.tree && npids)
		return nw_usage_error("attach", "either --tree PID or PIDs, not both");
	pid_t *pids;
	if ((rc = attach_pids(&o, npids, argv + optind, &pids, &npids)) >= 0)
		return rc;

	char defbuf[PATH_MAX];
	struct attach_pass ap = { .o = &o };
	if ((rc = attach_output_dir(o.out_dir, defbuf, sizeof(defbuf), &ap.base)) >= 0) {
		free(pids);
		return rc;
	}
	/* --json: stdout is the verdict's document alone; what attach (and the
	 * dump it asks for) says goes to stderr until then. */
	int saved_stdout = -1;
	if (o.json) {
		fflush(stdout);
		saved_stdout = dup(STDOUT_FILENO);
		if (saved_stdout < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			free(pids);
			return nw_usage_error("attach", "stdout: %s", strerror(errno));
		}
	}
	ap.pyspy = o.python ? nw_pyspy_path() : NULL;
	int status = attach_all(&ap, pids, npids, saved_stdout);
	free(pids);
	dirset_free(&ap.dirs);
	dirset_free(&ap.dump_dirs);
	if (ap.problems)
		return NW_EXIT_USAGE;
	if (!ap.written && !ap.dirs.n)
		return NW_EXIT_USAGE;
	return status;
}

const struct nw_command nw_cmd_attach = {
	.name = "attach",
	.summary = "the stacks of a job started without ncclwatch (snapshot files), and the verdict",
	.help = attach_help,
	.run = run_attach,
};
