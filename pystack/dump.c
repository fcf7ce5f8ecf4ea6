/* dump: Python thread stacks from the interpreter's own dumper,
 * _Py_DumpTracebackThreads(fd, interp, NULL): what faulthandler's
 * dump_traceback_later thread runs, from a thread that holds no GIL. It
 * writes into a memory file (a pipe could fill and block us), which we
 * parse:
 *
 *   Thread 0x00007f0c6d3ff6c0 (most recent call first):
 *     File "train.py", line 47 in run_evaluation
 *     ...
 *   <blank line>
 *
 * The dumper bounds itself (100 threads, 100 frames each; "..." marks a
 * cut). The thread id it prints is the thread's pthread_t; the thread
 * states walked with fault-proof reads give the tid for it. */
#include "pythreads.h"
#include "cpython.h"
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DUMP_MAX (1u << 20)

static int memfd = -1;
/* Mapped on first use (scratch.h). */
static struct {
	struct nw_py_thread states[NW_PY_THREADS_MAX];
	char text[DUMP_MAX + 1];
} *scratch;

/* `  File "NAME", line N in FUNC` -> frame; 0, or -1 if not such a line. */
static int parse_frame(char *s, struct nw_py_frame_text *f)
{
	if (strncmp(s, "  File ", 7))
		return -1;
	s += 7;
	char *in = strstr(s, " in ");
	char *last;
	/* The name may contain " in ": the last one after ", line " counts. */
	char *line = strstr(s, ", line ");
	if (!line)
		return -1;
	while ((last = strstr(line + 1, ", line ")))
		line = last;
	in = strstr(line, " in ");
	if (!in)
		return -1;
	*line = 0;
	if (s[0] == '"' && line > s + 1 && line[-1] == '"') {
		line[-1] = 0;
		s++;
	}
	snprintf(f->file, sizeof f->file, "%s", strcmp(s, "???") ? s : "");
	f->line = atoi(line + 7);
	snprintf(f->function, sizeof f->function, "%s", strcmp(in + 4, "???") ? in + 4 : "");
	return 0;
}

/* The interpreter's own dumper writes every thread's stack into the
 * memory file; its text into text (NUL-terminated). 0, or -1 with err. */
static int run_dumper(char *text, char *err, size_t errsize)
{
	if (memfd < 0) {
		memfd = memfd_create("ncclwatch-pystack", MFD_CLOEXEC);
		if (memfd < 0) {
			snprintf(err, errsize, "memfd_create failed");
			return -1;
		}
	}
	if (ftruncate(memfd, 0) != 0 || lseek(memfd, 0, SEEK_SET) != 0) {
		snprintf(err, errsize, "memory file unusable");
		return -1;
	}
	void *interp = nw_py.interp_main();
	if (!interp || !nw_py.is_initialized()) {
		snprintf(err, errsize, "interpreter not running");
		return -1;
	}
	const char *why = nw_py.dump_threads(memfd, interp, NULL);
	if (why) {
		snprintf(err, errsize, "%s", why);
		return -1;
	}
	ssize_t len = pread(memfd, text, DUMP_MAX, 0);
	if (len <= 0) {
		snprintf(err, errsize, "the dumper wrote nothing");
		return -1;
	}
	text[len] = 0;
	return 0;
}

/* A thread's first line: a new entry in out, tied to its thread state
 * (tid, flags) by id. */
static void start_thread(struct nw_py_thread *cur, unsigned long long id, const struct nw_py_thread *states,
                         int ns)
{
	memset(cur, 0, offsetof(struct nw_py_thread, frames));
	cur->thread_id = id;
	for (int i = 0; i < ns; i++)
		if (states[i].thread_id == id) {
			cur->tstate = states[i].tstate;
			cur->tid = states[i].tid;
			cur->flags = states[i].flags;
			break;
		}
}

int nw_py_threads_dump(struct nw_py_thread *out, int max, char *err, size_t errsize)
{
	if (!nw_py_scratch((void **)&scratch, sizeof *scratch, "the Python dumper's text")) {
		snprintf(err, errsize, "no memory for the dumper's text");
		return -1;
	}
	struct nw_py_thread *states = scratch->states;
	char *text = scratch->text;
	if (run_dumper(text, err, errsize) != 0)
		return -1;

	int ns = nw_py_thread_states(states, NW_PY_THREADS_MAX);
	int n = 0;
	struct nw_py_thread *cur = NULL;
	for (char *s = text, *next; s && *s; s = next) {
		next = strchr(s, '\n');
		if (next)
			*next++ = 0;
		unsigned long long id;
		if (sscanf(s, "Thread 0x%llx", &id) == 1 || sscanf(s, "Current thread 0x%llx", &id) == 1) {
			if (n == max) {
				nw_py_threads_cut = 1;
				cur = NULL;
				continue;
			}
			cur = &out[n++];
			start_thread(cur, id, states, ns);
			continue;
		}
		if (!strcmp(s, "...")) {      /* the dumper's own limit: 100 threads */
			nw_py_threads_cut = 1;
			continue;
		}
		if (!cur)
			continue;
		if (!strcmp(s, "  ...")) {
			cur->flags |= NW_PYT_TRUNCATED;
			continue;
		}
		if (cur->nframes == NW_PY_THREAD_FRAMES) {
			cur->flags |= NW_PYT_TRUNCATED;
			continue;
		}
		struct nw_py_frame_text *f = &cur->frames[cur->nframes];
		memset(f, 0, sizeof *f);
		if (parse_frame(s, f) == 0)
			cur->nframes++;
	}
	return n;
}
