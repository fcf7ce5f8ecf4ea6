/* pyspy: Python stacks of another process through `py-spy dump --json
 * --nonblocking` (PyPI's py-spy; `make deps` installs it into
 * build/venv). --nonblocking: py-spy reads the interpreter's memory
 * without stopping the process (its default stops every thread with
 * ptrace for the whole read, which wakes blocked calls: see README). */
#ifndef NCCLWATCH_ATTACH_PYSPY_H
#define NCCLWATCH_ATTACH_PYSPY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct nw_py_frame {
	char *name;        /* function ("Thread.run") */
	char *file;        /* file name as py-spy gives it */
	uint32_t line;
};

struct nw_py_thread {
	uint32_t tid;      /* os thread id */
	char name[32];
	int active;        /* py-spy: running (not idle) */
	int owns_gil;
	uint32_t nframes;  /* innermost first */
	struct nw_py_frame *frames;
};

struct nw_py_process {
	uint32_t nthreads;
	struct nw_py_thread *threads;
};

/* py-spy to run: $NCCLWATCH_PYSPY, else py-spy next to this program
 * (../libexec/ncclwatch/py-spy: make install's copy; ../venv/bin/py-spy:
 * the build's venv), else in $PATH; NULL if none. */
const char *nw_pyspy_path(void);
/* Why nw_pyspy_path found none and how to get one, in one line. */
void nw_pyspy_missing(char *buf, size_t len);

/* Run it on `pid` (at most 10 s a try; a failed read is tried again, up to
 * 3 times, as a read racing the running interpreter fails): the threads it read, or NULL with a
 * note on why (py-spy's own first line of error). */
struct nw_py_process *nw_pyspy_dump(const char *pyspy, pid_t pid, char *note, size_t len);
void nw_pyspy_free(struct nw_py_process *p);

#endif
