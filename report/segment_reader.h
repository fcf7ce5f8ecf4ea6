/* The segment reader: opens one ncclwatch segment (a live file or a dump),
 * validates it against include/ncclwatch/segment.h, and copies a consistent
 * snapshot of it into private memory; and lists the segment files under a
 * directory.
 *
 * Library code, shared by the CLI, the analysis engine and the watchdog: it
 * never exits, never prints, and never maps the file (it uses pread, so a
 * live file truncated under it cannot SIGBUS the reader). Every failure is
 * a code plus a one-line message "PATH: problem".
 *
 * Thread safety: functions keep no global state; distinct segments may be
 * read from distinct threads at once.
 */
#ifndef NCCLWATCH_REPORT_SEGMENT_READER_H
#define NCCLWATCH_REPORT_SEGMENT_READER_H

#include <stddef.h>
#include <stdint.h>
#include <ncclwatch/segment.h>

enum nw_read_code {
	NW_READ_OK = 0,
	NW_READ_ERR_IO = 1,        /* open/read failed (missing file, permission, not a file) */
	NW_READ_ERR_FORMAT = 2,    /* malformed, truncated or foreign: not readable as a segment */
	NW_READ_ERR_VERSION = 3,   /* a format this reader does not know (newer major, or major 0) */
	NW_READ_ERR_NOT_READY = 4, /* the magic is still all zero: a segment being created */
	NW_READ_ERR_NOMEM = 5,     /* out of private memory */
	NW_READ_ERR_EMPTY = 6,     /* nw_segment_list: no segment file under a directory */
};

#define NW_READ_MESSAGE_LEN 512

struct nw_read_error {
	int code;                           /* enum nw_read_code */
	int sys_errno;                      /* errno of a failed system call, else 0 */
	char message[NW_READ_MESSAGE_LEN];  /* "PATH: problem", one line */
};

/* What a snapshot of the op ring found. Every ticket ever reserved
 * (0 .. head-1) is counted in exactly one of the four classes. */
struct nw_ring_stats {
	uint64_t head;        /* header.ring_head when the snapshot was taken */
	uint64_t valid;       /* published and stable: returned in ops[] */
	uint64_t torn;        /* commit changed while copied, or names no ticket of its slot */
	uint64_t overwritten; /* lost to ring wrap (older than head - capacity, or reused while read) */
	uint64_t unpublished; /* reserved but not committed yet (or the writer died while writing it) */
};

/* A snapshot in private memory. Structs are the known prefix of what the
 * file holds (a newer minor's larger records are cut to what we know). */
struct nw_segment {
	char *path;
	uint64_t file_size;
	struct nw_seg_header header;
	uint32_t comm_count;              /* comms[0 .. comm_count-1]: published comm slots */
	struct nw_seg_comm *comms;
	uint32_t peer_count;              /* peers[0 .. peer_count-1]: published peer slots */
	struct nw_seg_peer *peers;
	size_t op_count;                  /* ops[]: valid records, oldest first (by ticket) */
	struct nw_seg_op *ops;
	struct nw_ring_stats ring;
};

/* Flags for nw_segment_read. */
#define NW_READ_SKIP_RING 0x1u /* validate everything, copy header and tables, not the ring */

/* The ticket of a valid record. */
static inline uint64_t nw_op_ticket(const struct nw_seg_op *op)
{
	return op->commit - 1;
}

/* Read the segment at `path` into *seg (zeroed first). Returns NW_READ_OK,
 * or an error code with *err filled (err may be NULL); on error *seg holds
 * nothing to free. Release a good snapshot with nw_segment_free. */
int nw_segment_read(const char *path, unsigned flags, struct nw_segment *seg,
                    struct nw_read_error *err);

/* The same from an open file descriptor (not closed); `name` is used in
 * messages and copied into seg->path. */
int nw_segment_read_fd(int fd, const char *name, unsigned flags, struct nw_segment *seg,
                       struct nw_read_error *err);

void nw_segment_free(struct nw_segment *seg);

/* The comm in table slot `slot` (comms[] is indexed by slot), or NULL. */
const struct nw_seg_comm *nw_segment_comm_at(const struct nw_segment *seg, uint32_t slot);

/* A list of segment file paths. */
struct nw_path_list {
	char **paths;
	size_t count;
	size_t capacity;
};

/* Add the segments `path` names to *list: a file is taken as it is (even
 * without the .seg suffix: the reader will judge it); a directory is
 * searched for regular files named *.seg in it and in its subdirectories
 * up to two levels down (DIR/<job>/<host>.<pid>.seg, dumps), ignoring
 * other files and symbolic links; paths found under one directory are
 * sorted. A directory with no segment is NW_READ_ERR_EMPTY; a path that
 * does not exist is NW_READ_ERR_IO. */
int nw_segment_list(const char *path, struct nw_path_list *list, struct nw_read_error *err);
void nw_path_list_free(struct nw_path_list *list);

#endif /* NCCLWATCH_REPORT_SEGMENT_READER_H */
