/* pickle: a reader of Python pickles that never runs code. It accepts the
 * data opcodes of protocols 0-5 (None, bool, int, long, float, str, bytes,
 * tuple, list, dict, set, marks, the memo, frames) and refuses every opcode
 * that imports or calls (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ,
 * NEWOBJ, NEWOBJ_EX, EXT1/2/4, PERSID, BINPERSID) and out-of-band buffers,
 * naming the opcode and its offset. Bounded: the values it builds take at
 * most NW_PICKLE_MEM_FACTOR times the input plus 1 MiB (and never more than
 * NW_PICKLE_MEM_MAX), marks nest at most NW_PICKLE_MAX_MARKS deep, the memo
 * is indexed below the input's size. It never recurses, so no input can
 * exhaust the C stack. nw_pickle_reparse keeps memory between parses
 * (bounded below) and never carries a value from one parse to the next.
 *
 * The values live in one arena freed at once; strings and bytes point into
 * the input (which must outlive the values). A container may hold itself
 * (APPEND to a memoized list): walkers of the tree must bound their depth.
 * The JSON form of a Flight Recorder dump (fr_json.c) builds the same tree.
 *
 * Library code: never prints, never exits; errors are one line in err[]. */
#ifndef NCCLWATCH_REPORT_FR_PICKLE_H
#define NCCLWATCH_REPORT_FR_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#define NW_PICKLE_MEM_FACTOR 32
#define NW_PICKLE_MEM_MAX (1ull << 30)
#define NW_PICKLE_MAX_MARKS 256
#define NW_PICKLE_ERR_LEN 200

enum nw_pv_type {
	NW_PV_NONE = 1,
	NW_PV_BOOL,
	NW_PV_INT,        /* fits int64 */
	NW_PV_FLOAT,
	NW_PV_STR,        /* UTF-8 as written, not NUL-terminated: use len */
	NW_PV_BYTES,
	NW_PV_LIST,       /* also sets and frozensets */
	NW_PV_TUPLE,
	NW_PV_DICT,       /* items[2k] key, items[2k+1] value, in insertion order */
};

struct nw_pv {
	uint8_t type;                  /* enum nw_pv_type */
	uint32_t n, cap;               /* items (a DICT holds 2 per pair) */
	union {
		int64_t i;                 /* BOOL, INT */
		double f;
		struct { const char *s; size_t len; } str;   /* STR, BYTES */
		struct nw_pv **items;
	} u;
};

struct nw_arena;

struct nw_pickle {
	struct nw_arena *arena;
	struct nw_pv *root;
	/* The machine's stack and memo, kept for nw_pickle_reparse. */
	struct nw_pv **stack, **memo;
	size_t scap, nmemo;
};

/* Parse data[0..len) (one pickle, up to its STOP). Returns 0 and fills
 * *out, or -1 with err ("opcode REDUCE (0x52) at offset 1234 imports or
 * calls code: refused"). Free with nw_pickle_free (also after an error). */
int nw_pickle_parse(const uint8_t *data, size_t len, struct nw_pickle *out, char err[NW_PICKLE_ERR_LEN]);
void nw_pickle_free(struct nw_pickle *p);
/* The same into a nw_pickle already used (parsed, or zeroed): its previous
 * values are gone, its memory is reused (a reader of many dumps in a row
 * allocates once). Between parses it keeps at most 8 MiB of arena blocks
 * and 1 MiB each of stack and memo; during one, the bounds above hold. */
int nw_pickle_reparse(const uint8_t *data, size_t len, struct nw_pickle *p, char err[NW_PICKLE_ERR_LEN]);

/* The arena, for other producers of the same tree (fr_json.c). limit 0:
 * NW_PICKLE_MEM_MAX. */
struct nw_arena *nw_arena_new(size_t limit);
void *nw_arena_alloc(struct nw_arena *a, size_t n);   /* NULL past the limit */
void nw_arena_free(struct nw_arena *a);
struct nw_pv *nw_pv_new(struct nw_arena *a, int type);
int nw_pv_push(struct nw_arena *a, struct nw_pv *c, struct nw_pv *v);   /* -1: over the limit */

/* Lookups (NULL/0 when absent or of another type). */
struct nw_pv *nw_pv_get(const struct nw_pv *dict, const char *key);   /* str key */
int nw_pv_is_str(const struct nw_pv *v, const char *s);
/* A str value as a NUL-terminated copy into buf (truncated); "" if not str. */
const char *nw_pv_cstr(const struct nw_pv *v, char *buf, size_t len);
/* INT (or BOOL) value; FLOAT truncated; a decimal STR parsed; else `dflt`. */
int64_t nw_pv_int(const struct nw_pv *v, int64_t dflt);

#endif
