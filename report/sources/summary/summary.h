/* summary: one compact file per host holding what the engine keeps of
 * each process (struct nw_proc), a source of the engine's model like a
 * segment or a Flight Recorder dump (docs/FORMAT.md, "Per-host summaries").
 *
 *   summary_codec.c  the field tables and the varint codec both halves share
 *   summary_write.c  processes -> one file (`ncclwatch summary`, the watchdog)
 *   summary_read.c   one file -> processes, every byte checked
 *
 * A summary holds the processes as the loader built them from their
 * segments (before a process of several ranks is split into rank views),
 * so reading one and reading the segments it was made of give the engine
 * the same facts. Library code: never prints, never exits, never trusts a
 * file. */
#ifndef NCCLWATCH_REPORT_SUMMARY_H
#define NCCLWATCH_REPORT_SUMMARY_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "../sources.h"
#include "../segment_reader.h"

#define NW_SUM_MAGIC "NWSUMRY\n"      /* 8 bytes, the first of the file */
#define NW_SUM_VERSION_MAJOR 1
#define NW_SUM_VERSION_MINOR 0
#define NW_SUM_SUFFIX ".nwsum"        /* what directories are scanned for */
#define NW_SUM_HEADER_SIZE 32
#define NW_SUM_MAX_BYTES (256u << 20) /* a larger file is refused before it is read */

/* header.flags */
#define NW_SUM_F_NATIVE 0x1u          /* Python stacks are mixed stacks (--native) */

struct nw_intern;

/* Write procs[0..n) as one summary to `out` (a stream opened for
 * writing); `native`: how their stacks were built. 0, or -1 with errno
 * set (ENOMEM, or the stream's error). */
int nw_summary_write(FILE *out, struct nw_proc *const *procs, size_t n, int native);

/* Whether a path names a summary by its suffix. */
int nw_summary_named(const char *path);

/* Read the summary at `path` into new processes (*procs, *nprocs: the
 * caller frees each with nw_proc_free and the array with free), their
 * stacks in the form they were written in (NW_SUM_F_NATIVE). Strings
 * are interned into `in` under `lock` (may be NULL). Returns NW_READ_OK,
 * NW_SUM_NOT_A_SUMMARY (the first bytes are not a summary's: nothing
 * done), or an error code with err set ("PATH: problem", one line). */
#define NW_SUM_NOT_A_SUMMARY (-1)
int nw_summary_read(const char *path, struct nw_intern *in, pthread_mutex_t *lock,
                    struct nw_proc ***procs, size_t *nprocs, struct nw_read_error *err);
/* The same from bytes; `name` is used in messages. */
int nw_summary_read_bytes(const uint8_t *d, size_t n, const char *name, struct nw_intern *in,
                          pthread_mutex_t *lock, struct nw_proc ***procs, size_t *nprocs,
                          struct nw_read_error *err);

#endif
