/* bench_pystack: the time to take the Python stacks of a process with 64
 * Python threads (pystack/, the watchdog's Python part of a capture), and
 * what those threads notice, for `make bench` (tests/bench/pystack.sh).
 *
 * Embeds Debian's libpython3.11, starts THREADS Python threads, each three
 * calls deep in a loop of time.sleep(0.002) that counts sleeps that came
 * back early, releases the GIL, then calls nw_pystack_capture CAPTURES
 * times from this (non-Python) thread, as the watchdog does. Prints one
 * line: "threads=N python_threads=N frames=N median_ms=X max_ms=X
 * sleeps=N early=N".
 *
 * usage: bench-pystack THREADS CAPTURES */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <ncclwatch/segment.h>
#include "../../pystack/pystack.h"
#include "../../watchdog/symbolize.h"

/* libpython's API, declared here: no Python.h needed to build. */
void Py_Initialize(void);
int PyRun_SimpleString(const char *);
void *PyEval_SaveThread(void);
void PyEval_RestoreThread(void *);

static const char start_threads[] =
"import threading, time\n"
"stop = threading.Event()\n"
"counts = []\n"
"def level3(c):\n"
"    while not stop.is_set():\n"
"        t = time.monotonic()\n"
"        time.sleep(0.002)\n"
"        c[0] += 1\n"
"        if time.monotonic() - t < 0.002:\n"
"            c[1] += 1\n"
"def level2(c):\n"
"    level3(c)\n"
"def level1(c):\n"
"    level2(c)\n"
"ts = []\n"
"for i in range(%d):\n"
"    c = [0, 0]\n"
"    counts.append(c)\n"
"    ts.append(threading.Thread(target=level1, args=(c,), name='worker-%%d' %% i))\n"
"for t in ts:\n"
"    t.start()\n";

static const char stop_threads[] =
"stop.set()\n"
"for t in ts:\n"
"    t.join()\n"
"print('sleeps=%d early=%d' % (sum(c[0] for c in counts), sum(c[1] for c in counts)))\n";

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

#define CAP 512
#define FCAP 32

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int threads = atoi(argv[1]), captures = atoi(argv[2]);
	if (threads < 1 || threads > 400 || captures < 1 || captures > 10000)
		return 2;
	Py_Initialize();
	char *script = malloc(sizeof start_threads + 16);
	snprintf(script, sizeof start_threads + 16, start_threads, threads);
	if (PyRun_SimpleString(script) != 0)
		return 1;
	void *main_state = PyEval_SaveThread();   /* the GIL to the threads */
	usleep(200000);

	/* A stack area with the Python frame table, as the library lays it out. */
	static struct {
		struct nw_seg_stack_header h;
		struct nw_seg_stack_ext e;
		struct nw_seg_pyframe frames[NW_PYFRAME_CAPACITY];
	} area;
	area.h.magic = NW_STACK_MAGIC;
	area.e.ext_size = sizeof area.e;
	area.e.pyframe_offset = offsetof(__typeof__(area), frames);
	area.e.pyframe_capacity = NW_PYFRAME_CAPACITY;
	static struct nw_seg_thread thr[CAP];
	static struct nw_seg_frame frames[CAP * FCAP];
	static char buf[128 << 10];
	struct nw_strtab strtab = { buf, sizeof buf, 1, 0 };
	uint64_t *ns = calloc((size_t)captures, sizeof *ns);
	uint32_t n = 0, py = 0, pyframes = 0;
	for (int r = 0; r < captures; r++) {
		memset(thr, 0, sizeof thr);
		nw_strtab_reset(&strtab);
		uint64_t t0 = now_ns();
		n = nw_pystack_capture(&area.h, thr, 0, CAP, frames, FCAP, &strtab);
		ns[r] = now_ns() - t0;
		usleep(5000);
	}
	nw_pystack_write(&area.h);
	if (area.e.python_note && area.e.python_note < strtab.used)
		fprintf(stderr, "bench-pystack: note: %s\n", buf + area.e.python_note);
	for (uint32_t i = 0; i < n; i++) {
		py += (thr[i].py_flags & NW_PYT_PYTHON) != 0;
		pyframes += thr[i].py_count;
	}
	qsort(ns, (size_t)captures, sizeof *ns, cmp_u64);
	printf("threads=%d python_threads=%u frames=%u median_ms=%.3f max_ms=%.3f ", threads, py, pyframes,
	       ns[captures / 2] / 1e6, ns[captures - 1] / 1e6);
	fflush(stdout);
	PyEval_RestoreThread(main_state);
	PyRun_SimpleString(stop_threads);
	return 0;
}
