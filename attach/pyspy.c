/* pyspy: see pyspy.h. py-spy runs as a child with its output in a pipe;
 * its JSON is parsed with jansson, bounded by what it wrote. */
#include "pyspy.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PYSPY_TIMEOUT_MS 10000
#define PYSPY_MAX_OUT (32u << 20)

static int executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

const char *nw_pyspy_path(void)
{
	static char buf[PATH_MAX];
	const char *env = getenv("NCCLWATCH_PYSPY");
	if (env && *env)
		return executable(env) ? env : NULL;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			/* make install's copy (PREFIX/bin/ncclwatch, PREFIX/libexec/ncclwatch/py-spy),
			 * then the build tree's venv (build/bin/ncclwatch, build/venv/bin/py-spy) */
			static const char *const beside[] = { "../libexec/ncclwatch/py-spy", "../venv/bin/py-spy" };
			for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++)
				if (snprintf(buf, sizeof(buf), "%s/%s", exe, beside[i]) < (int)sizeof(buf) && executable(buf))
					return buf;
		}
	}
	const char *path = getenv("PATH");
	while (path && *path) {
		size_t len = strcspn(path, ":");
		if (len && snprintf(buf, sizeof(buf), "%.*s/py-spy", (int)len, path) < (int)sizeof(buf) && executable(buf))
			return buf;
		path += len + (path[len] == ':');
	}
	return NULL;
}

void nw_pyspy_missing(char *buf, size_t len)
{
	const char *env = getenv("NCCLWATCH_PYSPY");
	if (env && *env)
		snprintf(buf, len, "NCCLWATCH_PYSPY=%s is not an executable file: native stacks only", env);
	else
		snprintf(buf, len, "py-spy not found beside ncclwatch (../libexec/ncclwatch/) or in PATH: "
		         "pip install py-spy, or set NCCLWATCH_PYSPY; native stacks only");
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Start `py-spy dump` on pid, its stdout and stderr into pipes whose read
 * ends (out[0], err[0]) stay open: the child's pid, or -1 (none open). */
static pid_t start_pyspy(const char *pyspy, pid_t pid, int out[2], int err[2])
{
	if (pipe2(out, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(err, O_CLOEXEC) != 0) {
		close(out[0]);
		close(out[1]);
		return -1;
	}
	char pidbuf[16];
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	pid_t child = fork();
	if (child == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		execl(pyspy, pyspy, "dump", "--pid", pidbuf, "--json", "--nonblocking", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	if (child < 0) {
		close(out[0]);
		close(err[0]);
		return -1;
	}
	return child;
}

/* What py-spy wrote: its stdout, grown up to PYSPY_MAX_OUT, and the start
 * of its stderr. */
struct pyspy_out {
	char *buf;          /* NULL: no memory, or over the limit */
	size_t cap, n;
	char ebuf[1024];
	size_t en;
};

/* One read from stream i (0 stdout, 1 stderr) into o: read's result, or
 * -2 when stdout outgrew its limit (o->buf freed). */
static ssize_t read_stream(struct pyspy_out *o, int i, int fd)
{
	ssize_t r;
	if (i == 0) {
		if (o->n + 1 >= o->cap) {
			char *nb = o->cap < PYSPY_MAX_OUT ? realloc(o->buf, o->cap * 2) : NULL;
			if (!nb) {
				free(o->buf);
				o->buf = NULL;
				return -2;
			}
			o->buf = nb;
			o->cap *= 2;
		}
		r = read(fd, o->buf + o->n, o->cap - o->n - 1);
		if (r > 0)
			o->n += (size_t)r;
	} else {
		r = read(fd, o->ebuf + o->en, sizeof(o->ebuf) - o->en - 1);
		if (r > 0)
			o->en += (size_t)r;
		if (o->en >= sizeof(o->ebuf) - 1)
			o->en = sizeof(o->ebuf) - 1;
	}
	return r;
}

/* Both streams read until they close, the deadline passes or stdout
 * outgrows its limit (then the child is killed): why it was killed, or
 * PYSPY_RAN. */
enum { PYSPY_RAN, PYSPY_TIMED_OUT, PYSPY_TOO_MUCH };
static int read_pyspy(pid_t child, struct pollfd pf[2], struct pyspy_out *o)
{
	int64_t deadline = now_ms() + PYSPY_TIMEOUT_MS;
	int open_fds = 2, killed = PYSPY_RAN;
	while (open_fds && o->buf) {
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			kill(child, SIGKILL);
			killed = PYSPY_TIMED_OUT;
			break;
		}
		if (poll(pf, 2, (int)left) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t r = read_stream(o, i, pf[i].fd);
			if (r == -2) {
				kill(child, SIGKILL);
				killed = PYSPY_TOO_MUCH;
				break;
			}
			if (r <= 0 && !(r < 0 && errno == EINTR)) {
				close(pf[i].fd);
				pf[i].fd = -1;
				open_fds--;
			}
		}
	}
	return killed;
}

/* Run py-spy; its stdout (malloc'd) and the first line of its stderr. */
static char *run(const char *pyspy, pid_t pid, char *errline, size_t errlen, int *status)
{
	int out[2], err[2];
	pid_t child = start_pyspy(pyspy, pid, out, err);
	if (child < 0)
		return NULL;
	struct pyspy_out o = { .cap = 65536 };
	o.buf = malloc(o.cap);
	struct pollfd pf[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
	int killed = read_pyspy(child, pf, &o);
	for (int i = 0; i < 2; i++)
		if (pf[i].fd >= 0)
			close(pf[i].fd);
	while (waitpid(child, status, 0) < 0 && errno == EINTR)
		;
	o.ebuf[o.en] = 0;
	if (killed == PYSPY_TIMED_OUT)
		snprintf(errline, errlen, "timed out after %d s", PYSPY_TIMEOUT_MS / 1000);
	else if (killed == PYSPY_TOO_MUCH)
		snprintf(errline, errlen, "wrote more than %u MB", PYSPY_MAX_OUT >> 20);
	else
		snprintf(errline, errlen, "%.*s", (int)strcspn(o.ebuf, "\n"), o.ebuf);
	if (o.buf)
		o.buf[o.n] = 0;
	return o.buf;
}

static char *dup_str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return strdup(s ? s : "");
}

/* py-spy --nonblocking reads the interpreter's structures while it runs:
 * a read that races a thread state or frame being changed fails the whole
 * dump ("Failed to copy PyThreadState", seen under load on busy ranks). Such
 * a failure is tried again, a few times, a little later; a timeout is not
 * (the process is not answering, another 10 s would not help). */
#define PYSPY_TRIES 3
#define PYSPY_RETRY_NS 50000000L

static char *run_tries(const char *pyspy, pid_t pid, char *errline, size_t errlen, unsigned *tries)
{
	for (*tries = 1;; (*tries)++) {
		int status = 0;
		char *out = run(pyspy, pid, errline, errlen, &status);
		if (out && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			return out;
		free(out);
		int timed_out = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
		if (timed_out || *tries >= PYSPY_TRIES || kill(pid, 0) != 0)
			return NULL;
		struct timespec pause = { 0, PYSPY_RETRY_NS };
		nanosleep(&pause, NULL);
	}
}

struct nw_py_process *nw_pyspy_dump(const char *pyspy, pid_t pid, char *note, size_t len)
{
	char errline[512] = "";
	unsigned tries;
	char *out = run_tries(pyspy, pid, errline, sizeof(errline), &tries);
	if (!out) {
		if (tries > 1)
			snprintf(note, len, "py-spy: %s (tried %u times)", errline[0] ? errline : "failed", tries);
		else
			snprintf(note, len, "py-spy: %s", errline[0] ? errline : "failed");
		return NULL;
	}
	json_error_t jerr;
	json_t *root = json_loads(out, 0, &jerr);
	free(out);
	if (!json_is_array(root)) {
		snprintf(note, len, "py-spy: output is not a JSON list of threads");
		json_decref(root);
		return NULL;
	}
	struct nw_py_process *p = calloc(1, sizeof(*p));
	size_t nt = json_array_size(root);
	if (p)
		p->threads = calloc(nt ? nt : 1, sizeof(*p->threads));
	if (!p || !p->threads) {
		free(p);
		json_decref(root);
		snprintf(note, len, "py-spy: out of memory");
		return NULL;
	}
	for (size_t i = 0; i < nt; i++) {
		json_t *t = json_array_get(root, i);
		struct nw_py_thread *pt = &p->threads[p->nthreads];
		pt->tid = (uint32_t)json_integer_value(json_object_get(t, "os_thread_id"));
		const char *name = json_string_value(json_object_get(t, "thread_name"));
		snprintf(pt->name, sizeof(pt->name), "%s", name ? name : "");
		pt->active = json_is_true(json_object_get(t, "active"));
		pt->owns_gil = json_is_true(json_object_get(t, "owns_gil"));
		json_t *frames = json_object_get(t, "frames");
		size_t nf = json_array_size(frames);
		pt->frames = calloc(nf ? nf : 1, sizeof(*pt->frames));
		if (!pt->frames)
			continue;
		for (size_t k = 0; k < nf; k++) {
			json_t *f = json_array_get(frames, k);
			struct nw_py_frame *pf = &pt->frames[pt->nframes++];
			pf->name = dup_str(f, "name");
			pf->file = dup_str(f, "filename");
			pf->line = (uint32_t)json_integer_value(json_object_get(f, "line"));
		}
		p->nthreads++;
	}
	json_decref(root);
	char tried[32] = "";
	if (tries > 1)
		snprintf(tried, sizeof(tried), " (try %u of %d)", tries, PYSPY_TRIES);
	snprintf(note, len, "py-spy dump --nonblocking: %u Python thread%s%s", p->nthreads, p->nthreads == 1 ? "" : "s",
	         tried);
	return p;
}

void nw_pyspy_free(struct nw_py_process *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->nthreads; i++) {
		for (uint32_t k = 0; k < p->threads[i].nframes; k++) {
			free(p->threads[i].frames[k].name);
			free(p->threads[i].frames[k].file);
		}
		free(p->threads[i].frames);
	}
	free(p->threads);
	free(p);
}
