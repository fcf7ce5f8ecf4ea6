/* py_layout: the offsets pystack reads (pystack/cpython.c, threadnames.c)
 * as the interpreter's own headers give them, one "name value" line each.
 * Built against the Python.h of the machine it runs on (with its internal
 * headers: Py_BUILD_CORE), so `make gpu-check` can hold our table against
 * CPython's headers where a 3.12 is installed; `check-layout` compares. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#include <internal/pycore_dict.h>
#include <internal/pycore_moduleobject.h>
#if PY_VERSION_HEX >= 0x030c0000 && PY_VERSION_HEX < 0x030d0000
#include <internal/pycore_object.h>
#endif
#include <stddef.h>
#include <stdio.h>

#define P(name, v) printf("%s %lu\n", name, (unsigned long)(v))

int main(void)
{
	P("version", PY_VERSION_HEX);
	P("ts_next", offsetof(PyThreadState, next));
	P("ts_interp", offsetof(PyThreadState, interp));
	P("ts_thread_id", offsetof(PyThreadState, thread_id));
	P("ts_native_thread_id", offsetof(PyThreadState, native_thread_id));
#if PY_VERSION_HEX < 0x030d0000
	P("ts_cframe", offsetof(PyThreadState, cframe));
	P("cf_frame", offsetof(_PyCFrame, current_frame));
#endif
	P("fr_code", offsetof(_PyInterpreterFrame, f_code));
	P("fr_previous", offsetof(_PyInterpreterFrame, previous));
#if PY_VERSION_HEX < 0x030d0000
	P("fr_instr", offsetof(_PyInterpreterFrame, prev_instr));
#endif
	P("fr_owner", offsetof(_PyInterpreterFrame, owner));
#if PY_VERSION_HEX >= 0x030c0000
	P("owner_cstack", FRAME_OWNED_BY_CSTACK);
#endif
	P("co_filename", offsetof(PyCodeObject, co_filename));
	P("co_name", offsetof(PyCodeObject, co_name));
	P("co_qualname", offsetof(PyCodeObject, co_qualname));
	P("co_linetable", offsetof(PyCodeObject, co_linetable));
	P("co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("co_code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
	P("co_firsttraceable", offsetof(PyCodeObject, _co_firsttraceable));
	P("ob_type", offsetof(PyObject, ob_type));
	P("str_length", offsetof(PyASCIIObject, length));
	P("str_state", offsetof(PyASCIIObject, state));
	P("str_ascii_size", sizeof(PyASCIIObject));
	P("str_compact_size", sizeof(PyCompactUnicodeObject));
	P("bytes_size", offsetof(PyVarObject, ob_size));
	P("bytes_sval", offsetof(PyBytesObject, ob_sval));
	P("interp_threads_head", offsetof(PyInterpreterState, threads.head));
#if PY_VERSION_HEX >= 0x030c0000
	P("interp_modules", offsetof(PyInterpreterState, imports.modules));
#else
	P("interp_modules", offsetof(PyInterpreterState, modules));
#endif
#if PY_VERSION_HEX >= 0x030c0000
	/* The main interpreter's GIL is its own _gil (ceval.gil points there). */
	P("gil_holder", offsetof(PyInterpreterState, _gil) + offsetof(struct _gil_runtime_state, last_holder));
	P("gil_locked", offsetof(PyInterpreterState, _gil) + offsetof(struct _gil_runtime_state, locked));
#else
	P("gil_holder", offsetof(_PyRuntimeState, gilstate.tstate_current));
#endif
	/* threadnames.c */
	P("tp_basicsize", offsetof(PyTypeObject, tp_basicsize));
	P("tp_flags", offsetof(PyTypeObject, tp_flags));
	P("ht_cached_keys", offsetof(PyHeapTypeObject, ht_cached_keys));
	P("ma_keys", offsetof(PyDictObject, ma_keys));
	P("ma_values", offsetof(PyDictObject, ma_values));
	P("md_dict", offsetof(PyModuleObject, md_dict));
	P("dk_log2_index_bytes", offsetof(PyDictKeysObject, dk_log2_index_bytes));
	P("dk_kind", offsetof(PyDictKeysObject, dk_kind));
	P("dk_nentries", offsetof(PyDictKeysObject, dk_nentries));
	P("dk_indices", offsetof(PyDictKeysObject, dk_indices));
	P("managed_dict_tpflag", Py_TPFLAGS_MANAGED_DICT);
#if PY_VERSION_HEX >= 0x030c0000 && PY_VERSION_HEX < 0x030d0000
	P("dict_or_values_at_minus", sizeof(PyDictOrValues) * 3);
	P("values_first", offsetof(PyDictValues, values));
#endif
	return 0;
}
