/* py-churn: Python stacks taken over and over while threads start, run
 * Python 15 calls deep and exit, for tests/python/test-py-churn.sh: the
 * capture (pystack/, as the watchdog runs it, from a thread the
 * interpreter does not know) must never crash the process, whatever
 * thread states and frames it meets half made or half freed.
 *
 * Embeds Debian's libpython3.11; 3 Python threads each start and join 10
 * short threads in a loop, next to 100 idle threads; every thread renames
 * itself at run time ("tid-<its native id>"), half the idle ones with
 * their __dict__ made a real dict (vars()); this thread calls
 * nw_pystack_capture CAPTURES times. Prints "captures=N threads_seen=N
 * frames_seen=N note=TEXT" then "names: named=N wrong=N full=N" (a
 * threading name that is neither the thread's own "tid-N", its name before
 * it renamed itself, nor "MainThread" on the main thread is wrong; full:
 * captures that named at least 100 threads by their own "tid-N": the
 * idle ones live throughout) and "capture_ns: mean=N
 * max=N" (a figure, not asserted).
 * usage: py-churn CAPTURES */
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

void Py_Initialize(void);
int PyRun_SimpleString(const char *);
void *PyEval_SaveThread(void);
void PyEval_RestoreThread(void *);

static const char start[] =
"import threading, time\n"
"stop = threading.Event()\n"
"def rename():\n"
"    threading.current_thread().name = 'tid-%d' % threading.get_native_id()\n"
"def idle():\n"
"    rename()\n"
"    if threading.get_native_id() % 2:\n"
"        vars(threading.current_thread())\n"
"    stop.wait()\n"
"idles = [threading.Thread(target=idle, name='idle') for _ in range(100)]\n"
"for t in idles:\n"
"    t.start()\n"
"def deep(n):\n"
"    if n == 15:\n"
"        rename()\n"
"    if n:\n"
"        return deep(n - 1)\n"
"    time.sleep(0.0002)\n"
"def churn():\n"
"    rename()\n"
"    while not stop.is_set():\n"
"        xs = [threading.Thread(target=deep, args=(15,)) for _ in range(10)]\n"
"        for x in xs:\n"
"            x.start()\n"
"        for x in xs:\n"
"            x.join()\n"
"cs = [threading.Thread(target=churn) for _ in range(3)]\n"
"for c in cs:\n"
"    c.start()\n"
"while sum(t.name.startswith('tid-') for t in idles) < 100:\n"
"    time.sleep(0.01)\n";

#define CAP 512
#define FCAP 32

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A thread's name before it renamed itself: "Thread-N (deep)", "Thread-N
 * (churn)", "idle". */
static int is_default_name(const char *s)
{
	if (!strcmp(s, "idle"))
		return 1;
	if (strncmp(s, "Thread-", 7))
		return 0;
	s += 7;
	while (*s >= '0' && *s <= '9')
		s++;
	return !strcmp(s, " (deep)") || !strcmp(s, " (churn)");
}

int main(int argc, char **argv)
{
	int captures = argc == 2 ? atoi(argv[1]) : 0;
	if (captures < 1)
		return 2;
	Py_Initialize();
	if (PyRun_SimpleString(start) != 0)
		return 1;
	void *main_state = PyEval_SaveThread();
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
	unsigned long threads = 0, pyframes = 0, named = 0, wrong = 0, full = 0;
	uint64_t total_ns = 0, max_ns = 0;
	for (int i = 0; i < captures; i++) {
		memset(thr, 0, sizeof thr);
		nw_strtab_reset(&strtab);
		uint64_t t0 = now_ns();
		uint32_t n = nw_pystack_capture(&area.h, thr, 0, CAP, frames, FCAP, &strtab);
		uint64_t dt = now_ns() - t0;
		total_ns += dt;
		max_ns = dt > max_ns ? dt : max_ns;
		unsigned own_named = 0;
		for (uint32_t k = 0; k < n; k++) {
			threads += (thr[k].py_flags & NW_PYT_PYTHON) != 0;
			pyframes += thr[k].py_count;
			if (!thr[k].py_name)
				continue;
			const char *name = buf + thr[k].py_name;
			char own[32];
			snprintf(own, sizeof own, "tid-%u", thr[k].tid);
			named++;
			if (!strcmp(name, own))
				own_named++;
			else if (!(thr[k].tid == (uint32_t)getpid() && !strcmp(name, "MainThread")) &&
			         !is_default_name(name)) {
				wrong++;
				fprintf(stderr, "wrong name: tid %u named \"%s\"\n", thr[k].tid, name);
			}
		}
		full += own_named >= 100;
	}
	nw_pystack_write(&area.h);
	printf("captures=%d threads_seen=%lu frames_seen=%lu note=%s\n", captures, threads, pyframes,
	       area.e.python_note < strtab.used ? buf + area.e.python_note : "");
	printf("names: named=%lu wrong=%lu full=%lu\n", named, wrong, full);
	printf("capture_ns: mean=%llu max=%llu\n", (unsigned long long)(total_ns / (uint64_t)captures),
	       (unsigned long long)max_ns);
	fflush(stdout);
	PyEval_RestoreThread(main_state);
	return PyRun_SimpleString("stop.set()\nfor c in cs:\n    c.join()\n") != 0;
}
