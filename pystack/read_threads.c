/* read_threads: nw_py_threads (pythreads.h): the method's read (dump.c
 * or walk.c), read again while its ties are torn, then the threads'
 * names. Apart from pythreads.c, whose primitives both methods use. */
#include "pythreads.h"
#include "cpython.h"

#include <string.h>

#define TIE_ATTEMPTS 3

/* Thread states that are being born or buried are not threads to report,
 * and two states must never share a native thread:
 * - CPython 3.11 makes a new thread's state in the thread that starts it,
 *   with the starter's tid, and puts the new thread's own tid in only once
 *   it runs: until then two states carry the starter's tid. The one with
 *   frames is the starter's; one without is the unborn thread's. Two with
 *   frames are left untied (never guessed).
 * - A state with no frames and no tie is a thread starting or ending (or a
 *   state read as it was freed): it has no stack to lose, so it is dropped
 *   instead of being counted as "not tied".
 * Returns the new count; *unsettled counts the states with frames left
 * without a tie. */
static int settle_ties(struct nw_py_thread *t, int n, int *unsettled)
{
	for (int i = 0; i < n; i++) {
		if (!t[i].tid)
			continue;
		for (int j = i + 1; j < n; j++) {
			if (t[j].tid != t[i].tid)
				continue;
			if (!t[j].nframes)
				t[j].tid = 0;
			else if (!t[i].nframes)
				t[i].tid = 0;
			else
				t[i].tid = t[j].tid = 0;
			if (!t[i].tid)
				break;
		}
	}
	int kept = 0;
	*unsettled = 0;
	for (int i = 0; i < n; i++) {
		if (!t[i].tid && !t[i].nframes)
			continue;
		*unsettled += !t[i].tid;
		if (kept != i)
			memcpy(&t[kept], &t[i], sizeof t[i]);
		kept++;
	}
	return kept;
}

int nw_py_threads(struct nw_py_thread *out, int max, char *err, size_t errsize)
{
	/* Read without the GIL while threads start and end: a thread that
	 * started, ended or reused a freed state's memory as we read can leave
	 * a state with frames and no tie (or two on one tid). That is a torn
	 * read, not a fact, so it is read again; a stuck process reads the same
	 * twice. The last read stands, its untied states counted in the note. */
	int n = -1;
	for (int attempt = 0; attempt < TIE_ATTEMPTS; attempt++) {
		int unsettled = 0;
		nw_py_threads_cut = 0;
		n = nw_py.method == NW_PY_DUMP_TRACEBACK ? nw_py_threads_dump(out, max, err, errsize)
		                                         : nw_py_threads_walk(out, max, err, errsize);
		if (n <= 0)
			break;
		n = settle_ties(out, n, &unsettled);
		if (!unsettled)
			break;
	}
	nw_py_thread_names(out, n);
	return n;
}
