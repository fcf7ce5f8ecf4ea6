/* names: a Python frame reference (code object, instruction pointer) ->
 * file, function, line, with fault-proof reads (the code object may be
 * freed under us: then UNREAD). Watchdog only. */
#ifndef NCCLWATCH_PYSTACK_NAMES_H
#define NCCLWATCH_PYSTACK_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define NW_PY_STR_LEN 256

struct nw_py_name {
	char file[NW_PY_STR_LEN];
	char function[NW_PY_STR_LEN];
	int32_t line;
};

/* 0 named, -1 not (not a code object, unreadable). Names are cached from
 * one nw_py_names_begin to the next (a capture: code objects do not move
 * while it runs; threads share most of their frames). */
int nw_py_name_ref(uint64_t code, uint64_t instr, struct nw_py_name *out);
void nw_py_names_begin(void);

/* A str object's text as printable ASCII (others as \xNN / \uNNNN), cut
 * to the buffer; 0 or -1. */
int nw_py_read_str(uint64_t obj, char *buf, size_t size);

#endif
