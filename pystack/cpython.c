/* cpython: see cpython.h. */
#include "cpython.h"
#include "memread.h"
#include "../interpose/libc_dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ncclwatch/segment.h>

struct nw_py_rt nw_py;

#define MAX_THREADS_WALKED 4096
#define MAX_FRAMES_CHECKED 64

/* CPython 3.11 (x86-64, release build), from its headers (Include/cpython/
 * pystate.h, Include/internal/pycore_frame.h, code.h, unicodeobject.h,
 * pycore_runtime.h); checked against the live interpreter before use. */
static const struct nw_py_layout layout_311 = {
	.ts_next = 8, .ts_interp = 16, .ts_thread_id = 152, .ts_native_thread_id = 160,
	.ts_cframe = 56, .cf_frame = 8,
	.fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_owner = 69, .owner_cstack = -1,
	.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136,
	.co_firstlineno = 72, .co_code_adaptive = 184, .co_firsttraceable = 168,
	.ob_type = 8,
	.str_length = 16, .str_state = 32, .str_ascii_size = 48, .str_compact_size = 72,
	.bytes_size = 16, .bytes_sval = 32,
	.interp_threads_head = 16, .interp_modules = 888,
	.gil_holder = 576,
};

/* CPython 3.12 (x86-64, release build): tests/gpu/py312-layout.txt, what
 * tests/gpu/py_layout.c printed with offsetof() from Ubuntu 24.04's
 * python3.12-dev 3.12.3 headers on the GPU machine. Since 3.11: the frame
 * starts with f_code and previous, C-stack shim frames (owner 3) sit
 * between the frames of nested eval loops, and the GIL is the main
 * interpreter's own (interp->_gil: last_holder, valid while locked).
 * py-spy's bindings for 3.12.0 (src/python_bindings/v3_12_0.rs) give the
 * same offsets for every field here of _ts, _PyCFrame,
 * _PyInterpreterFrame, PyCodeObject, PyASCIIObject, PyCompactUnicodeObject,
 * PyBytesObject and _is.threads.head, and for _gil_runtime_state's
 * last_holder (8) and locked (16); the place of _gil and imports.modules in
 * _is was not recomputed from them. Checked against the live interpreter
 * before use, like 3.11's. */
static const struct nw_py_layout layout_312 = {
	.ts_next = 8, .ts_interp = 16, .ts_thread_id = 136, .ts_native_thread_id = 144,
	.ts_cframe = 56, .cf_frame = 0,
	.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70, .owner_cstack = 3,
	.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136,
	.co_firstlineno = 68, .co_code_adaptive = 192, .co_firsttraceable = 176,
	.ob_type = 8,
	.str_length = 16, .str_state = 32, .str_ascii_size = 40, .str_compact_size = 56,
	.bytes_size = 16, .bytes_sval = 32,
	.interp_threads_head = 72, .interp_modules = 944,
	.gil_holder = 1048, .gil_indirect = 1, .gil_locked = 1056,
};

const struct nw_py_layout *nw_py_layout_table(uint32_t minor)
{
	return minor == 11 ? &layout_311 : minor == 12 ? &layout_312 : NULL;
}

void *nw_py_sym(const char *name)
{
	nw_libc_dl_init();
	return nw_libc_dlsym ? nw_libc_dlsym(RTLD_DEFAULT, name) : NULL;
}


/* A free-threaded build names its library or executable python3.Nt. */
static int free_threaded(void *addr)
{
	Dl_info info;
	if (!addr || !dladdr(addr, &info) || !info.dli_fname)
		return 0;
	const char *base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	const char *p = strstr(base, "python3.");
	if (!p)
		return 0;
	p += 8;
	while (*p >= '0' && *p <= '9')
		p++;
	return *p == 't';
}

static void set_note(const char *fmt, uint32_t v)
{
	snprintf(nw_py.note, sizeof nw_py.note, fmt, v >> 24, (v >> 16) & 0xff);
}

int nw_py_debug_offsets(void); /* walk.c: 3.13+ layout from _Py_DebugOffsets */

/* The entry points and data the reading needs, where CPython exports
 * them (NULL where not). */
static void resolve_symbols(void)
{
	nw_py.this_tstate = (void *(*)(void))nw_py_sym("PyGILState_GetThisThreadState");
	nw_py.interp_main = (void *(*)(void))nw_py_sym("PyInterpreterState_Main");
	nw_py.dump_threads = (const char *(*)(int, void *, void *))nw_py_sym("_Py_DumpTracebackThreads");
	nw_py.is_finalizing = (int (*)(void))nw_py_sym("Py_IsFinalizing");
	if (!nw_py.is_finalizing)
		nw_py.is_finalizing = (int (*)(void))nw_py_sym("_Py_IsFinalizing");
	nw_py.code_type = (uint64_t)(uintptr_t)nw_py_sym("PyCode_Type");
	nw_py.runtime = (uint64_t)(uintptr_t)nw_py_sym("_PyRuntime");
}

/* How this CPython's threads are read: its layout table (the walk; the
 * interpreter's dumper when NCCLWATCH_PY_METHOD=dump), or 3.13+'s
 * _Py_DebugOffsets. 0, or -1 with the note saying why none. */
static int choose_method(uint32_t v)
{
	uint32_t minor = (v >> 16) & 0xff;
	if ((v >> 24) == 3 && nw_py_layout_table(minor)) {
		/* The walk by default: the interpreter's dumper reads thread states
		 * and frames without a lock and was seen to crash the process when
		 * threads start and exit during a dump; the walk's reads cannot
		 * fault. NCCLWATCH_PY_METHOD=dump asks for the dumper. */
		nw_py.L = *nw_py_layout_table(minor);
		nw_py.method = NW_PY_WALK_TABLE;
		set_note("CPython %u.%u via its thread states", v);
		const char *m = getenv("NCCLWATCH_PY_METHOD");
		if (m && !strcmp(m, "dump")) {
			if (!nw_py.dump_threads) {
				set_note("CPython %u.%u: _Py_DumpTracebackThreads is not exported: no Python stacks", v);
				return -1;
			}
			nw_py.method = NW_PY_DUMP_TRACEBACK;
			set_note("CPython %u.%u via _Py_DumpTracebackThreads (NCCLWATCH_PY_METHOD=dump)", v);
		}
	} else if ((v >> 24) == 3 && minor >= 13) {
		if (nw_py_debug_offsets() != 0)
			return -1; /* the note says why */
		nw_py.method = NW_PY_DEBUG_OFFSETS;
		set_note("CPython %u.%u via _Py_DebugOffsets", v);
	} else {
		set_note("CPython %u.%u: not supported (3.11, 3.12, 3.13 and later are)", v);
		return -1;
	}
	return 0;
}

int nw_py_probe(void)
{
	if (nw_py.state == NW_PYRT_READY || nw_py.state == NW_PYRT_UNSUPPORTED)
		return nw_py.state;
	const unsigned long *pv = nw_py_sym("Py_Version");
	int (*initialized)(void) = (int (*)(void))nw_py_sym("Py_IsInitialized");
	if (!initialized) {
		nw_py.state = NW_PYRT_ABSENT;
		snprintf(nw_py.note, sizeof nw_py.note, "no CPython in this process");
		return nw_py.state;
	}
	if (!pv) {
		/* Before 3.11 there is no Py_Version: say which one it is. */
		const char *(*getv)(void) = (const char *(*)(void))nw_py_sym("Py_GetVersion");
		const char *v = getv ? getv() : "?";
		snprintf(nw_py.note, sizeof nw_py.note, "CPython %.8s: not supported (3.11 and later are)", v);
		nw_py.state = NW_PYRT_UNSUPPORTED;
		return nw_py.state;
	}
	if (!initialized()) {
		nw_py.state = NW_PYRT_ABSENT;
		snprintf(nw_py.note, sizeof nw_py.note, "CPython not initialized");
		return nw_py.state;
	}
	uint32_t v = (uint32_t)*pv;
	nw_py.version = v;
	nw_py.is_initialized = initialized;
	resolve_symbols();
	nw_py.state = NW_PYRT_UNSUPPORTED;
	if (free_threaded((void *)pv)) {
		set_note("CPython %u.%ut free-threaded: not supported", v);
		return nw_py.state;
	}
	if (!nw_mem_usable()) {
		set_note("CPython %u.%u: process_vm_readv is not permitted here: no Python stacks", v);
		return nw_py.state;
	}
	if (!nw_py.this_tstate || !nw_py.interp_main || !nw_py.code_type) {
		set_note("CPython %u.%u: PyGILState_GetThisThreadState, PyInterpreterState_Main or "
		         "PyCode_Type not exported: no Python stacks", v);
		return nw_py.state;
	}
	if (choose_method(v) != 0)
		return nw_py.state; /* the note says why */
	nw_py.state = NW_PYRT_READY;
	return nw_py.state;
}

uint64_t nw_py_interp(void)
{
	return nw_py.interp_main ? (uint64_t)(uintptr_t)nw_py.interp_main() : 0;
}

uint64_t nw_py_first_tstate(uint64_t interp)
{
	return interp ? nw_mem_u64(interp + nw_py.L.interp_threads_head) : 0;
}

uint64_t nw_py_current_frame(uint64_t tstate)
{
	const struct nw_py_layout *L = &nw_py.L;
	if (L->ts_cframe == NW_PY_NO_OFF)
		return nw_mem_u64(tstate + L->cf_frame);
	uint64_t cf = nw_mem_u64(tstate + L->ts_cframe);
	return cf ? nw_mem_u64(cf + L->cf_frame) : 0;
}

int nw_py_frame_shim(uint64_t frame)
{
	const struct nw_py_layout *L = &nw_py.L;
	uint8_t owner;
	return L->owner_cstack >= 0 && nw_mem_read(frame + L->fr_owner, &owner, 1) == 0 &&
	       owner == (uint8_t)L->owner_cstack;
}

int nw_py_frame_hidden(uint64_t frame, uint64_t code, uint64_t instr)
{
	const struct nw_py_layout *L = &nw_py.L;
	if (nw_py_frame_shim(frame))
		return 1;
	if (L->co_firsttraceable != NW_PY_NO_OFF) {
		/* _PyFrame_IsIncomplete of 3.11 and 3.12 (the same test): not yet
		 * past the code's first traceable instruction (its RESUME); a
		 * generator's frame is never incomplete. */
		uint8_t owner = 0;
		int32_t first = 0;
		if (nw_mem_read(frame + L->fr_owner, &owner, 1) == 0 && owner != 1 &&
		    nw_mem_read(code + L->co_firsttraceable, &first, sizeof first) == 0 &&
		    instr < code + L->co_code_adaptive + 2 * (uint64_t)first)
			return 1;
	}
	return 0;
}

int nw_py_tid_listed(uint64_t tid)
{
	char path[64];
	struct stat sb;
	if (tid == 0 || tid > 0x7fffffff)
		return 0;
	snprintf(path, sizeof path, "/proc/self/task/%llu", (unsigned long long)tid);
	return stat(path, &sb) == 0;
}

int nw_py_check_layout(void)
{
	/* Other threads run Python while we read: a frame being pushed, a
	 * thread state being made, may read inconsistent once. The layout is
	 * wrong only when most of what we read is wrong, or nothing is right,
	 * a few times in a row. */
	static int failures;
	const struct nw_py_layout *L = &nw_py.L;
	uint64_t interp = nw_py_interp();
	uint64_t ts = nw_py_first_tstate(interp);
	int threads = 0, good = 0, bad = 0;
	for (int i = 0; ts && i < MAX_THREADS_WALKED; i++, ts = nw_mem_u64(ts + L->ts_next)) {
		if (nw_mem_u64(ts + L->ts_interp) != interp) {
			bad++;
			break;           /* not a thread state of ours: the list is not ours either */
		}
		/* A thread state whose thread just exited may still be listed. */
		threads += nw_py_tid_listed(nw_mem_u64(ts + L->ts_native_thread_id));
		uint64_t f = nw_py_current_frame(ts);
		for (int k = 0; f && k < MAX_FRAMES_CHECKED; k++, f = nw_mem_u64(f + L->fr_previous)) {
			uint64_t code = nw_mem_u64(f + L->fr_code);
			if (code && nw_mem_u64(code + L->ob_type) == nw_py.code_type)
				good++;
			else if (!nw_py_frame_shim(f))
				bad++;   /* a shim frame's executable may be another object (3.13: None) */
		}
	}
	if (threads > 0 && good > 0 && bad * 4 <= good) {
		nw_py.layout_checked = 1;
		failures = 0;
		return 1;
	}
	if (++failures < 3)
		return 0;        /* tried again at the next capture */
	snprintf(nw_py.note, sizeof nw_py.note,
	         "CPython %u.%u: its thread states do not have the layout we know: no Python stacks",
	         nw_py.version >> 24, (nw_py.version >> 16) & 0xff);
	nw_py.state = NW_PYRT_UNSUPPORTED;
	return 0;
}
