/* py-layout-table: the layout tables pystack carries (pystack/cpython.c's
 * nw_py_layout_table, threadnames.h's) for CPython 3.MINOR, one "name
 * value" line each, with the names and for the version exactly what
 * tests/gpu/py_layout.c prints from CPython's own headers (its "version"
 * line aside): test-py-layout.sh compares the two.
 * usage: py-layout-table 3.MINOR   (3.11 or 3.12) */
#include "../../pystack/cpython.h"
#include "../../pystack/threadnames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P(name, v) printf("%s %lu\n", name, (unsigned long)(v))

int main(int argc, char **argv)
{
	unsigned minor = 0;
	char end;
	if (argc != 2 || sscanf(argv[1], "3.%u%c", &minor, &end) != 1) {
		fprintf(stderr, "usage: py-layout-table 3.MINOR\n");
		return 2;
	}
	const struct nw_py_layout *L = nw_py_layout_table(minor);
	const struct nw_py_names_layout *N = nw_py_names_table(minor);
	if (!L || !N) {
		fprintf(stderr, "py-layout-table: no table for CPython 3.%u\n", minor);
		return 2;
	}
	/* cpython.c: every field the walk, the names and the hot path read.
	 * A field the table marks absent is not printed: the headers of that
	 * version have none either (py_layout.c's #if). */
	P("ts_next", L->ts_next);
	P("ts_interp", L->ts_interp);
	P("ts_thread_id", L->ts_thread_id);
	P("ts_native_thread_id", L->ts_native_thread_id);
	if (L->ts_cframe != NW_PY_NO_OFF) {
		P("ts_cframe", L->ts_cframe);
		P("cf_frame", L->cf_frame);
	}
	P("fr_code", L->fr_code);
	P("fr_previous", L->fr_previous);
	P("fr_instr", L->fr_instr);
	P("fr_owner", L->fr_owner);
	if (L->owner_cstack >= 0)
		P("owner_cstack", L->owner_cstack);
	P("co_filename", L->co_filename);
	P("co_name", L->co_name);
	P("co_qualname", L->co_qualname);
	P("co_linetable", L->co_linetable);
	P("co_firstlineno", L->co_firstlineno);
	P("co_code_adaptive", L->co_code_adaptive);
	if (L->co_firsttraceable != NW_PY_NO_OFF)
		P("co_firsttraceable", L->co_firsttraceable);
	P("ob_type", L->ob_type);
	P("str_length", L->str_length);
	P("str_state", L->str_state);
	P("str_ascii_size", L->str_ascii_size);
	P("str_compact_size", L->str_compact_size);
	P("bytes_size", L->bytes_size);
	P("bytes_sval", L->bytes_sval);
	P("interp_threads_head", L->interp_threads_head);
	if (L->interp_modules != NW_PY_NO_OFF)
		P("interp_modules", L->interp_modules);
	if (L->gil_holder != NW_PY_NO_OFF)
		P("gil_holder", L->gil_holder);
	if (L->gil_indirect)
		P("gil_locked", L->gil_locked);
	/* threadnames.c */
	P("tp_basicsize", NW_PY_TP_BASICSIZE);
	P("tp_flags", NW_PY_TP_FLAGS);
	P("ht_cached_keys", N->ht_cached_keys);
	P("ma_keys", NW_PY_MA_KEYS);
	P("ma_values", NW_PY_MA_VALUES);
	P("md_dict", NW_PY_MD_DICT);
	P("dk_log2_index_bytes", NW_PY_DK_LOG2_INDEX_BYTES);
	P("dk_kind", NW_PY_DK_KIND);
	P("dk_nentries", NW_PY_DK_NENTRIES);
	P("dk_indices", NW_PY_DK_INDICES);
	P("managed_dict_tpflag", NW_PY_TPFLAGS_MANAGED_DICT);
	if (N->dict_or_values) {
		P("dict_or_values_at_minus", NW_PY_MANAGED_DICT_AT);
		P("values_first", N->values_first);
	}
	return 0;
}
