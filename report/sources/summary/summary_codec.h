/* summary_codec: the record tables of a summary and their encoding, shared
 * by the writer and the reader (docs/FORMAT.md, "Per-host summaries").
 *
 * Every record of a summary (a process, its header, a comm, a peer entry,
 * an op, a thread) is a struct of fixed-width fields; a table lists the
 * fields a summary keeps, in order. A field is written as the zigzag
 * LEB128 varint of its difference from the same field of the previous
 * record of the same table in the file (0 before the first), so what ranks
 * and consecutive ops share costs one byte; a byte array (host, env, comm
 * name...) is a reference into the file's string table (0: all zero).
 * The file says how many fields each table has: a new field goes at the
 * end of its table with a minor version; a reader decodes and drops the
 * fields past those it knows (a newer minor), and leaves zero the ones a
 * file lacks (an older one). Anything else is a major version. */
#ifndef NCCLWATCH_REPORT_SUMMARY_CODEC_H
#define NCCLWATCH_REPORT_SUMMARY_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <ncclwatch/segment.h>
#include "../sources.h"

enum nw_sum_ftype {
	NW_SUM_U = 0,     /* unsigned integer of 1, 2, 4 or 8 bytes */
	NW_SUM_I = 1,     /* signed integer (sign-extended before the difference) */
	NW_SUM_S = 2,     /* byte array: string-table reference, trailing zeros trimmed */
	NW_SUM_P = 3,     /* const char *, NUL-terminated: string-table reference (0: NULL) */
	NW_SUM_E = 4,     /* const char *, "NAME=value\0...\0\0": string-table reference of its
	                   * bytes up to the last variable's NUL (0: NULL) */
};

struct nw_sum_field {
	uint16_t off, size;
	uint8_t type;
};

struct nw_sum_table {
	const struct nw_sum_field *f;
	size_t n;
};

/* The process record (what the loader adds to the header). */
struct nw_sum_proc {
	uint32_t path;                /* string ref */
	uint32_t source_note;         /* string ref, 0 none */
	uint32_t is_dump, snapshot, attached;
	int32_t alive;                /* 1, 0, -1 unknown */
	uint64_t now_ns, last_activity_ns, stacks_ns;
	uint32_t ncomms, npeers, nthreads;
	uint64_t nops;
	uint32_t sites;               /* 1: an op-site reference follows each op */
	uint32_t caps;                /* NW_CAP_* (analysis.h); 0 in a file written before them */
};

/* A thread of a process's last capture. */
struct nw_sum_thread {
	uint32_t tid, flags;
	char name[NW_STACK_NAME_LEN];
	uint32_t py_name;             /* string ref, 0 none */
	uint32_t frames;              /* list ref, 0 none */
	uint32_t wait_frames;         /* list ref, 0 none */
	uint32_t py_flags, npy, py_at, py_app;
};

/* The tables in the order the file lists their field counts. */
#define NW_SUM_TABLES 6
#define NW_SUM_MAX_FIELDS 64
extern const struct nw_sum_table *const nw_sum_tables[NW_SUM_TABLES];
extern const struct nw_sum_table nw_sum_t_proc, nw_sum_t_header, nw_sum_t_comm, nw_sum_t_peer,
	nw_sum_t_op, nw_sum_t_thread;

/* The previous record of each table, as the differences need it. */
struct nw_sum_prev {
	uint64_t v[NW_SUM_MAX_FIELDS];
};

/* ---- the byte buffer both halves use ---- */

struct nw_sum_buf {
	uint8_t *d;
	size_t len, cap;
	int oom;
};

void nw_sum_put_uv(struct nw_sum_buf *b, uint64_t v);
void nw_sum_put_bytes(struct nw_sum_buf *b, const void *p, size_t n);

struct nw_sum_in {
	const uint8_t *d;
	size_t len, at;
	int bad;                      /* read past the end or an overlong varint */
};

uint64_t nw_sum_get_uv(struct nw_sum_in *in);

/* Field k of a record as a 64-bit value (sign-extended for NW_SUM_I), and back. */
uint64_t nw_sum_field_get(const struct nw_sum_field *f, const void *rec);
void nw_sum_field_set(const struct nw_sum_field *f, void *rec, uint64_t v);

/* Trimmed length of a byte array field. */
size_t nw_sum_trimmed(const uint8_t *p, size_t n);

/* FNV-1a 64 of the payload: the header's checksum. */
uint64_t nw_sum_hash(const uint8_t *d, size_t n);

static inline uint64_t nw_sum_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t nw_sum_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif
