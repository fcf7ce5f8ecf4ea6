/* debugoff: the layout of CPython 3.13+ from the _Py_DebugOffsets table it
 * publishes at the start of _PyRuntime for debuggers: cookie "xdebugpy",
 * the version, then sections of u64 offsets, each starting with the size
 * of its struct.
 *
 * The table's own layout changed between releases (3.13.0 has no
 * free_threaded word; later ones add fields to the interpreter section;
 * 3.14 more), so sections are found by what they must hold, not by fixed
 * indexes: the thread-state section is the one that starts [size, prev =
 * 0, next = 8, interp = 16] (PyThreadState begins with those three
 * pointers); the frame section follows it; the PyObject section is [16,
 * 8]; the code-object section sits before it and is checked for
 * consistent offsets; the bytes section is [size, ob_size = 16, ob_sval =
 * 32] and the unicode one [size, state = 32, length = 16, asciiobject_size]
 * (3.13.5 has list, dict, float and long sections between them; 3.13.0
 * not). Anything that does not fit: not supported, said once. */
#include "cpython.h"
#include "memread.h"

#include <stdio.h>
#include <string.h>

#define WORDS 96
#define FRAME_OWNED_BY_CSTACK 3   /* enum _frameowner, 3.12 and later */

static int unsupported(const char *why)
{
	snprintf(nw_py.note, sizeof nw_py.note, "CPython %u.%u: _Py_DebugOffsets %s: not supported",
	         nw_py.version >> 24, (nw_py.version >> 16) & 0xff, why);
	return -1;
}

/* A code-object section at w[c]: size, filename, name, qualname, linetable,
 * firstlineno, argcount, localsplusnames, localspluskinds, co_code_adaptive. */
static int code_section_ok(const uint64_t *w, int c)
{
	uint64_t size = w[c];
	if (size < 64 || size > 4096)
		return 0;
	for (int k = 1; k <= 9; k++)
		if (w[c + k] < 16 || w[c + k] >= size + 8)
			return 0;
	return w[c + 1] != w[c + 2] && w[c + 2] != w[c + 3] && w[c + 3] != w[c + 4] && w[c + 9] >= w[c + 4];
}

/* Where the sections of _PyDebugOffsets are in its words w: each found by
 * the shape of its first fields. */
struct sections {
	int interp, ts, fr, obj, code, uni, bytes;
};

/* The sections after the runtime section (at w[rs]): 0, or -1 with the
 * note naming the one not found. */
static int find_sections(const uint64_t *w, int rs, struct sections *s)
{
	s->interp = rs + 3;            /* size, finalizing, interpreters_head */
	s->ts = -1;
	for (int i = s->interp + 4; i + 9 < WORDS; i++)
		if (w[i] >= 128 && w[i] < (1u << 20) && w[i + 1] == 0 && w[i + 2] == 8 && w[i + 3] == 16) {
			s->ts = i;
			break;
		}
	if (s->ts < 0)
		return unsupported("has no thread-state section we know");
	s->fr = s->ts + 9;             /* size, prev, next, interp, current_frame, thread_id,
	                                * native_thread_id, datastack_chunk, status */
	s->obj = -1;
	for (int i = s->fr + 6; i + 9 < WORDS; i++)
		if (w[i] == 16 && w[i + 1] == 8) {
			s->obj = i;
			break;
		}
	if (s->obj < 0)
		return unsupported("has no object section we know");
	s->code = -1;
	for (int c = s->obj - 10; c >= s->fr + 6 && c >= s->obj - 12; c--)
		if (code_section_ok(w, c)) {
			s->code = c;
			break;
		}
	if (s->code < 0)
		return unsupported("has no code-object section we know");
	s->uni = s->bytes = -1;
	for (int i = s->obj + 2; i + 3 < WORDS && s->uni < 0; i++) {
		if (s->bytes < 0 && w[i] >= 33 && w[i] < 64 && w[i + 1] == 16 && w[i + 2] == 32)
			s->bytes = i;
		if (w[i + 1] == 32 && w[i + 2] == 16 && w[i + 3] >= 32 && w[i + 3] <= 64 && w[i] >= w[i + 3])
			s->uni = i;
	}
	if (s->uni < 0)
		return unsupported("has no unicode section we know");
	return 0;
}

/* nw_py.L from the sections' fields. */
static void fill_layout(const uint64_t *w, const struct sections *s)
{
	const int interp = s->interp, ts = s->ts, fr = s->fr, obj = s->obj, code = s->code, uni = s->uni,
	          bytes = s->bytes;
	struct nw_py_layout *L = &nw_py.L;
	memset(L, 0, sizeof *L);
	L->interp_threads_head = (uint32_t)w[interp + 3];
	/* [size, id, next, threads_head, gc, imports_modules, ...] in 3.13;
	 * threadnames.c checks that it points at a dict. */
	L->interp_modules = ((nw_py.version >> 16) & 0xff) == 13 && w[interp + 5] < w[interp]
	                    ? (uint32_t)w[interp + 5] : NW_PY_NO_OFF;
	L->ts_next = (uint32_t)w[ts + 2];
	L->ts_interp = (uint32_t)w[ts + 3];
	L->ts_cframe = NW_PY_NO_OFF;
	L->cf_frame = (uint32_t)w[ts + 4];
	L->ts_thread_id = (uint32_t)w[ts + 5];
	L->ts_native_thread_id = (uint32_t)w[ts + 6];
	L->fr_previous = (uint32_t)w[fr + 1];
	L->fr_code = (uint32_t)w[fr + 2];
	L->fr_instr = (uint32_t)w[fr + 3];
	L->fr_owner = (uint32_t)w[fr + 5];
	L->owner_cstack = FRAME_OWNED_BY_CSTACK;
	L->co_filename = (uint32_t)w[code + 1];
	L->co_name = (uint32_t)w[code + 2];
	L->co_qualname = (uint32_t)w[code + 3];
	L->co_linetable = (uint32_t)w[code + 4];
	L->co_firstlineno = (uint32_t)w[code + 5];
	L->co_code_adaptive = (uint32_t)w[code + 9];
	L->co_firsttraceable = NW_PY_NO_OFF;
	L->ob_type = (uint32_t)w[obj + 1];
	L->str_state = (uint32_t)w[uni + 1];
	L->str_length = (uint32_t)w[uni + 2];
	L->str_ascii_size = (uint32_t)w[uni + 3];
	/* PyCompactUnicodeObject: PyASCIIObject, utf8_length, utf8. */
	L->str_compact_size = L->str_ascii_size + 16;
	L->bytes_size = bytes >= 0 ? (uint32_t)w[bytes + 1] : 16;  /* PyVarObject.ob_size */
	L->bytes_sval = bytes >= 0 ? (uint32_t)w[bytes + 2] : 32;  /* after ob_shash (kept, deprecated) */
	/* The GIL holder: 3.13's interpreter section ends with
	 * gil_runtime_state_locked and _holder, offsets in the interpreter
	 * state of its own GIL's fields (the main interpreter's is its own).
	 * Only for 3.13, whose order we know. */
	L->gil_holder = NW_PY_NO_OFF;
	if (((nw_py.version >> 16) & 0xff) == 13 && w[ts - 1] < w[interp] && w[ts - 2] < w[interp]) {
		L->gil_holder = (uint32_t)w[ts - 1];
		L->gil_locked = (uint32_t)w[ts - 2];
		L->gil_indirect = 1;
	}
}

int nw_py_debug_offsets(void)
{
	uint64_t w[WORDS];
	if (!nw_py.runtime || nw_mem_read(nw_py.runtime, w, sizeof w) != 0 || memcmp(w, "xdebugpy", 8) != 0)
		return unsupported("not found at _PyRuntime");
	/* w[1]: the version; then free_threaded (0 or 1) from 3.13.1 on, or
	 * at once the runtime section (its size: a large struct). */
	int rs = 2;
	if (w[2] <= 1) {
		if (w[2] == 1) {
			snprintf(nw_py.note, sizeof nw_py.note, "CPython %u.%ut free-threaded: not supported",
			         nw_py.version >> 24, (nw_py.version >> 16) & 0xff);
			return -1;
		}
		rs = 3;
	}
	struct sections sec;
	if (find_sections(w, rs, &sec) != 0)
		return -1;
	fill_layout(w, &sec);
	return 0;
}
