/* fr: PyTorch Flight Recorder dumps as a source of the engine's model.
 *
 *   pickle.c    a data-only pickle reader (never runs code)
 *   fr_json.c   the JSON form (dump_json / the debug server) into the same tree
 *   load_fr.c   one dump -> one struct nw_proc: process groups -> comms,
 *               entries -> ops, like a segment's process (docs/flight-recorder.md)
 *   fr_list.c   what diagnose reads: segments and FR dumps under a path
 *
 * Library code: never prints, never exits, never trusts a file. */
#ifndef NCCLWATCH_REPORT_FR_H
#define NCCLWATCH_REPORT_FR_H

#include <pthread.h>
#include "../sources.h"
#include "../segment_reader.h"

struct nw_intern;

enum nw_fr_form {
	NW_FR_NOT = 0,
	NW_FR_PICKLE = 1,
	NW_FR_JSON = 2,
};

/* What the first bytes of the file say: a pickle (protocol 2-5) or a JSON
 * object whose first key is one of a dump's top-level keys. */
int nw_fr_sniff(const char *path);
int nw_fr_sniff_bytes(const uint8_t *d, size_t n);

/* What the dumps of one reading share (the process groups' rank lists,
 * parsed once); thread-safe. NULL works too (nothing shared). */
struct nw_fr_cache;
struct nw_fr_cache *nw_fr_cache_new(void);
void nw_fr_cache_free(struct nw_fr_cache *c);

/* Read the dump at `path` into a new process (*out). The frame strings
 * are interned into `in` under `lock` (may be NULL). Returns NW_READ_OK,
 * or an error code with err set ("PATH: problem", one line). */
int nw_fr_read(const char *path, struct nw_intern *in, pthread_mutex_t *lock, struct nw_fr_cache *cache,
               struct nw_proc **out, struct nw_read_error *err);
/* The same, but first the file's first bytes are sniffed: not a dump ->
 * NW_FR_NOT_A_DUMP and nothing else done (one open for both questions). */
#define NW_FR_NOT_A_DUMP (-1)
int nw_fr_read_if_dump(const char *path, struct nw_intern *in, pthread_mutex_t *lock,
                       struct nw_fr_cache *cache, struct nw_proc **out, struct nw_read_error *err);
/* The same from bytes (the fuzz target); `name` is used in messages. */
int nw_fr_read_bytes(const uint8_t *d, size_t n, const char *name, struct nw_intern *in,
                     pthread_mutex_t *lock, struct nw_fr_cache *cache, struct nw_proc **out,
                     struct nw_read_error *err);

/* After every file is read: the processes of FR dumps of one job get the
 * job's one "now" (a dump carries no time of its own); FR dumps whose job
 * also left segments (the segment's environment names the dump file) are
 * dropped in favour of the segments: their paths go to *preferred (count
 * in *npreferred, the caller frees) and their procs are freed and removed. */
int nw_fr_settle(struct nw_proc **procs, size_t *nprocs, char ***preferred, size_t *npreferred);

/* Add what `path` names to *list: a file as it is; for a directory, its
 * segment files (nw_segment_list) and the FR dumps in it (regular files
 * that sniff as dumps, same depth), sorted. NW_READ_ERR_EMPTY when there
 * is neither. */
int nw_input_list(const char *path, struct nw_path_list *list, struct nw_read_error *err);

#endif
