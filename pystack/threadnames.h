/* threadnames: the object layouts threadnames.c reads (types, dicts,
 * modules, a Thread's managed dict), shared with the test program that
 * holds them against CPython's headers (tests/python/py_layout_table.c). */
#ifndef NCCLWATCH_PYSTACK_THREADNAMES_H
#define NCCLWATCH_PYSTACK_THREADNAMES_H

#include <stdint.h>

/* PyTypeObject, PyDictObject, PyDictKeysObject, PyModuleObject: the same
 * offsets in 3.11, 3.12 and 3.13 (release builds, x86-64). */
#define NW_PY_TP_BASICSIZE 32
#define NW_PY_TP_FLAGS 168
#define NW_PY_MA_KEYS 32
#define NW_PY_MA_VALUES 40
#define NW_PY_MD_DICT 16
#define NW_PY_DK_LOG2_INDEX_BYTES 9      /* u8 */
#define NW_PY_DK_KIND 10                 /* u8: 0 general, 1 unicode, 2 split */
#define NW_PY_DK_NENTRIES 24             /* Py_ssize_t */
#define NW_PY_DK_INDICES 32              /* then the entries, after 1 << log2_index_bytes */
#define NW_PY_TPFLAGS_INLINE_VALUES (1ul << 2)  /* 3.13 */
#define NW_PY_TPFLAGS_MANAGED_DICT (1ul << 4)
/* Before an object with a managed dict: 3.11 its values array at obj - 32
 * and its dict at obj - 24; 3.12 one PyDictOrValues word at obj - 24 (the
 * values array + ... tagged: values - 1, low bit set, else the dict);
 * 3.13 its dict at obj - 24 (values inline after the object). */
#define NW_PY_MANAGED_DICT_AT 24
#define NW_PY_MANAGED_VALUES_AT_311 32

struct nw_py_names_layout {
	uint32_t ht_cached_keys;          /* PyHeapTypeObject */
	uint32_t values_first;            /* PyDictValues: where values[0] is */
	int dict_or_values;               /* 3.12: the tagged word at obj - 24 */
	int inline_values;                /* 3.13: values after the object */
	int long_tag;                     /* 3.12+: PyLongObject.long_value.lv_tag, else ob_size */
};

/* The table for CPython 3.`minor` (11, 12, 13), NULL for others. */
const struct nw_py_names_layout *nw_py_names_table(uint32_t minor);

#endif
