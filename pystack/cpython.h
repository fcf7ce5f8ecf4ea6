/* cpython: which CPython runs in this process, and where its structures
 * keep what we read (thread states, frames, code objects, strings).
 *
 * Found once, with dlsym on the process's global symbols (the python
 * executable or libpython exports them): Py_Version, the interpreter, the
 * dumper. The layout comes from the interpreter itself where it publishes
 * one (_Py_DebugOffsets, CPython >= 3.13), else from a table of versions
 * we know (3.11, 3.12), checked against the live interpreter before use: every
 * thread state must name a live thread of this process and every frame a
 * code object (its type is PyCode_Type). */
#ifndef NCCLWATCH_PYSTACK_CPYTHON_H
#define NCCLWATCH_PYSTACK_CPYTHON_H

#include <stdint.h>

#define NW_PY_NOTE_LEN 160

/* Offsets in bytes; NW_PY_NONE_OFF: not in this version. */
#define NW_PY_NO_OFF UINT32_MAX
struct nw_py_layout {
	uint32_t ts_next, ts_interp, ts_thread_id, ts_native_thread_id;
	uint32_t ts_cframe;          /* 3.11/3.12: tstate->cframe, then cf_frame in it; NO_OFF: 3.13+ */
	uint32_t cf_frame;           /* _PyCFrame.current_frame, or tstate->current_frame (3.13+) */
	uint32_t fr_code, fr_previous, fr_instr, fr_owner;
	int32_t  owner_cstack;       /* owner of a C-stack shim frame (3.12+), -1 none */
	uint32_t co_filename, co_name, co_qualname, co_linetable, co_firstlineno, co_code_adaptive;
	uint32_t co_firsttraceable;  /* 3.11, 3.12: frames before it are incomplete; NO_OFF later */
	uint32_t ob_type;
	uint32_t str_length, str_state, str_ascii_size, str_compact_size;
	uint32_t bytes_size, bytes_sval;
	uint32_t interp_threads_head;
	uint32_t interp_modules;     /* sys.modules (threadnames.c), NO_OFF unknown */
	uint32_t gil_holder;         /* from _PyRuntime (3.11: gilstate.tstate_current), NO_OFF unknown */
	int gil_indirect;            /* 3.12, 3.13: the holder is at interp + gil_holder, */
	uint32_t gil_locked;         /* valid while the int at interp + gil_locked is positive */
};

enum nw_py_state {
	NW_PYRT_UNPROBED = 0,
	NW_PYRT_ABSENT = 1,          /* no CPython here (or not initialized yet: probed again later) */
	NW_PYRT_UNSUPPORTED = 2,     /* a CPython we do not read: note says which */
	NW_PYRT_READY = 3,
};

struct nw_py_rt {
	int state;                   /* enum nw_py_state */
	uint32_t version;            /* PY_VERSION_HEX */
	uint32_t method;             /* enum nw_py_method for thread stacks */
	int layout_checked;          /* the layout was checked against live thread states */
	char note[NW_PY_NOTE_LEN];   /* what python_note says */
	void *(*this_tstate)(void);  /* PyGILState_GetThisThreadState */
	void *(*interp_main)(void);  /* PyInterpreterState_Main */
	const char *(*dump_threads)(int fd, void *interp, void *tstate); /* _Py_DumpTracebackThreads */
	int (*is_initialized)(void); /* Py_IsInitialized */
	int (*is_finalizing)(void);  /* Py_IsFinalizing (3.13) or _Py_IsFinalizing, may be NULL */
	uint64_t code_type;          /* &PyCode_Type */
	uint64_t runtime;            /* &_PyRuntime */
	struct nw_py_layout L;
};

extern struct nw_py_rt nw_py;

/* Probe (again while no initialized interpreter was found). Not on the hot
 * path: dlsym, reads of /proc. Returns nw_py.state. */
int nw_py_probe(void);
/* A global symbol of this process (the interpreter's API) through libc's
 * own dlsym (interpose/libc_dl.h), never through our dlsym hook, which is
 * there for the program's lookups; NULL if absent or libc's not found. */
void *nw_py_sym(const char *name);

/* Check the layout against the live interpreter: walk its thread states
 * with fault-proof reads; every one must name a live thread, every frame a
 * code object. 1 good, 0 not (nw_py.note says why). */
int nw_py_check_layout(void);

/* The interpreter's main state and its first thread state (fault-proof). */
uint64_t nw_py_interp(void);
uint64_t nw_py_first_tstate(uint64_t interp);

/* The frame a thread state is running (fault-proof), 0 none. */
uint64_t nw_py_current_frame(uint64_t tstate);

/* 1 when `tid` is a thread of this process now (/proc/self/task). */
int nw_py_tid_listed(uint64_t tid);

/* Is this frame a C-stack shim (3.12+) or not started yet (3.11, 3.12:
 * before its code's first traceable instruction): not a line of Python? */
int nw_py_frame_hidden(uint64_t frame, uint64_t code, uint64_t instr);
/* Is this frame a C-stack shim (3.12+: owned by the C stack)? */
int nw_py_frame_shim(uint64_t frame);

/* The layout table carried for CPython 3.`minor` (11, 12), NULL for
 * others (3.13+ publish theirs). tests/python/test-py-layout.sh holds them
 * against CPython's headers. */
const struct nw_py_layout *nw_py_layout_table(uint32_t minor);

#endif
