/* py-churn: Python stacks taken over and over while threads start, run
 * Python 15 calls deep and exit, for tests/python/test-py-churn.sh: the
 * capture (pystack/, as the watchdog runs it, from a thread the
 * interpreter does not know) must never crash the process, whatever
 * thread states and frames it meets half made or half freed.
 *
 * Embeds Debian's libpython3.11; 3 Python threads each start and join 10
 * short threads in a loop; this thread calls nw_pystack_capture CAPTURES
 * times. Prints "captures=N threads_seen=N frames_seen=N note=TEXT".
 * usage: py-churn CAPTURES */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
"def deep(n):\n"
"    if n:\n"
"        return deep(n - 1)\n"
"    time.sleep(0.0002)\n"
"def churn():\n"
"    while not stop.is_set():\n"
"        xs = [threading.Thread(target=deep, args=(15,)) for _ in range(10)]\n"
"        for x in xs:\n"
"            x.start()\n"
"        for x in xs:\n"
"            x.join()\n"
"cs = [threading.Thread(target=churn) for _ in range(3)]\n"
"for c in cs:\n"
"    c.start()\n";

#define CAP 512
#define FCAP 32

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
	unsigned long threads = 0, pyframes = 0;
	for (int i = 0; i < captures; i++) {
		memset(thr, 0, sizeof thr);
		nw_strtab_reset(&strtab);
		uint32_t n = nw_pystack_capture(&area.h, thr, 0, CAP, frames, FCAP, &strtab);
		for (uint32_t k = 0; k < n; k++) {
			threads += (thr[k].py_flags & NW_PYT_PYTHON) != 0;
			pyframes += thr[k].py_count;
		}
	}
	nw_pystack_write(&area.h);
	printf("captures=%d threads_seen=%lu frames_seen=%lu note=%s\n", captures, threads, pyframes,
	       area.e.python_note < strtab.used ? buf + area.e.python_note : "");
	fflush(stdout);
	PyEval_RestoreThread(main_state);
	return PyRun_SimpleString("stop.set()\nfor c in cs:\n    c.join()\n") != 0;
}
