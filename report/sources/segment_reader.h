/* The segment reader: opens one ncclwatch segment (a live file or a dump),
 * validates it against include/ncclwatch/segment.h, and copies a consistent
 * snapshot of it into private memory, stack area included; gives bounded
 * access to the stack area's threads, frames, modules, strings and per-op
 * stacks; and lists the segment files under a directory.
 *
 * Versions: reads format 2.0 and 1.0 to 1.4 (and, by their known prefix,
 * newer minors of majors 1 and 2); refuses 3.x. In a 1.0 file the 1.1
 * header fields read as zero and the stack area (opaque in 1.0) is not
 * interpreted; in a 1.0 or 1.1 file the 1.2 field (proc_start_ticks) reads
 * as zero; in a 1.x file the 2.0 header fields and every generation (comm
 * gen, op and peer comm_gen) read as zero. 1.4's stack area extension
 * (notes, Python frames, per-op Python call sites) is validated and
 * returned by nw_stack_ext, nw_stack_pyframes, nw_pysite_lookup and
 * nw_pycall. 2.0 reuses comm slots: comms[] is copied between two reads
 * of every slot's gen word, a slot being given to a new comm reads FREE,
 * and a kept gen is the generation alone; an op or peer entry is of
 * comms[slot] only when its comm_gen equals that gen (else of an ended
 * comm: see report/sources/comm_instances.c).
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

/* What the stack area of a snapshot holds (docs/FORMAT.md, "The stack area"). */
enum nw_stack_state {
	NW_STACKS_NONE = 0,          /* no stack area (stack_size 0), or a 1.0 file (its area is not read) */
	NW_STACKS_UNINITIALIZED = 1, /* the area's header is all zero: not laid out yet */
	NW_STACKS_NEVER = 2,         /* laid out, no capture made yet (capture_ns 0); `stack` is
	                              * set when it holds Python call site names (1.4), with no
	                              * threads or modules */
	NW_STACKS_CAPTURED = 3,      /* a consistent capture: the stack helpers return it */
	NW_STACKS_BEING_WRITTEN = 4, /* seq was odd or changed in every attempt: the capture is
	                              * kept in stack_copy but not returned (a watchdog writing
	                              * now, or one that died while writing) */
};

/* A snapshot in private memory. Structs are the known prefix of what the
 * file holds (a newer minor's larger records are cut to what we know). */
struct nw_segment {
	char *path;
	uint64_t file_size;
	struct nw_seg_header header;
	uint32_t comm_count;              /* comms[0 .. comm_count-1]: published comm slots (2.0: the
	                                   * current comm of each; FREE while being given to a new one) */
	struct nw_seg_comm *comms;
	uint32_t peer_count;              /* peers[0 .. peer_count-1]: published peer slots */
	struct nw_seg_peer *peers;
	size_t op_count;                  /* ops[]: valid records, oldest first (by ticket) */
	struct nw_seg_op *ops;
	struct nw_ring_stats ring;

	/* The stack area (v1.1). Its layout (magic, capacities, sub-areas) is
	 * validated whenever stack_state >= NW_STACKS_NEVER; its contents
	 * (counts, threads, frames, modules, strings, ip-symbols) only for
	 * NW_STACKS_CAPTURED (`stack` set), and for NW_STACKS_NEVER when it holds
	 * call site names (`stack` set, thread_count 0). */
	int stack_state;                          /* enum nw_stack_state */
	const struct nw_seg_stack_header *stack;  /* the copied area if CAPTURED (or NEVER with
	                                           * call site names), else NULL */
	uint32_t stack_seq;                       /* seq of the copy (odd: being written) */
	uint64_t stack_bytes;                     /* bytes of stack_copy (header.stack_size) */
	void *stack_copy;                         /* the copy, whatever its state; NULL if not read */
};

/* Flags for nw_segment_read. */
#define NW_READ_SKIP_RING 0x1u /* validate everything, copy header and tables, not the ring */
#define NW_READ_NO_WAIT   0x2u /* no pause between attempts at a stack area being written
                                * (implied for a dump, NW_SEG_F_DUMP: nothing writes it) */

/* The ticket of a valid record. */
static inline uint64_t nw_op_ticket(const struct nw_seg_op *op)
{
	return nw_seg_commit_ticket1(op->commit) - 1;
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

/* ---- The stack area ----
 *
 * Every function takes a snapshot from nw_segment_read, never reads outside
 * the copy, and returns NULL (or 0) for an index out of range or when the
 * snapshot has no area to return (`stack` NULL: no consistent capture, and
 * no 1.4 call site names before one, which come with no threads or
 * modules), except nw_opstack: per-op stacks are written by the hot path, not under
 * the capture's seqlock, so they are returned in every state whose layout
 * was validated. */

/* 1.4: the area extension (laid out; NULL before 1.4 or without an area)
 * and the capture's notes on native (python 0) or Python (python 1)
 * stacks: NULL when there is none or no consistent capture. */
const struct nw_seg_stack_ext *nw_stack_ext(const struct nw_segment *seg);
const char *nw_stack_note(const struct nw_segment *seg, int python);

/* Thread i of the capture, i < stack->thread_count. */
const struct nw_seg_thread *nw_stack_thread(const struct nw_segment *seg, uint32_t i);

/* The frames of thread i (innermost first); *n = its nframes (0 when NULL
 * is returned). The reader refused a capture with nframes > frame_capacity. */
const struct nw_seg_frame *nw_stack_frames(const struct nw_segment *seg, uint32_t i, uint32_t *n);

/* The string at `offset` of the string table: "" for 0; NULL for an offset
 * at or beyond strtab_used, or one whose string is not NUL-terminated
 * within strtab_used (checked on every call). */
const char *nw_stack_string(const struct nw_segment *seg, uint32_t offset);

/* The module a frame names: `index1` is the table index + 1 (0: unknown,
 * NULL), below module_count + 1. Its path is NUL-terminated (checked). */
const struct nw_seg_module *nw_stack_module(const struct nw_segment *seg, uint32_t index1);

/* The module whose [base, base + size) holds `ip` (the first one in table
 * order), or NULL; *index1 (may be NULL) gets its index + 1. */
const struct nw_seg_module *nw_stack_module_at(const struct nw_segment *seg, uint64_t ip,
                                               uint32_t *index1);

/* The ip-symbol table entry for exactly `ip` (binary search; the reader
 * checked that the table is sorted), or NULL. */
const struct nw_seg_frame *nw_ipsym_lookup(const struct nw_segment *seg, uint64_t ip);

/* The call stack recorded for ring ticket `ticket` (NCCLWATCH_STACKS=1):
 * its return addresses, innermost first; *depth = how many are nonzero
 * before the first 0. NULL (and *depth 0) when per-op stacks are off, the
 * ticket is not one of ops[] (a valid record of this snapshot: a slot's
 * ips belong to the ticket whose record was copied with them), or all its
 * ips are zero. */
const uint64_t *nw_opstack(const struct nw_segment *seg, uint64_t ticket, uint32_t *depth);

/* 1.4: the Python frames of thread i (innermost first, tied to it by tid);
 * *n = its py_count (0 when NULL is returned). */
const struct nw_seg_pyframe *nw_stack_pyframes(const struct nw_segment *seg, uint32_t i, uint32_t *n);

/* 1.4: the site table's name for a per-op reference (code, instr) (binary
 * search; the reader checked the order), or NULL. */
const struct nw_seg_pyframe *nw_pysite_lookup(const struct nw_segment *seg, uint64_t code,
                                              uint64_t instr);

/* 1.4: the Python call site recorded for ring ticket `ticket`
 * (NCCLWATCH_PY_FRAMES): its references, innermost first; *depth = how
 * many before the first with code 0. Like nw_opstack: in every state whose
 * layout was validated, NULL when off or the ticket is not one of ops[]. */
const struct nw_seg_pycall *nw_pycall(const struct nw_segment *seg, uint64_t ticket, uint32_t *depth);

/* ---- Is the writer of a segment still running? ----
 *
 * For a segment of THIS host only (/proc cannot judge another host's
 * process: the caller compares header.host with its own first). The rule:
 * no process has header.pid: GONE; it has exited (a zombie): GONE; else,
 * when header.proc_start_ticks is set (1.2), the process whose
 * /proc/<pid>/stat start time equals it is the writer (LIVE), any other
 * got the pid later (GONE: pid reused); when it is 0 (a 1.0/1.1 file, or a
 * writer that could not read its start), the older, inexact rule: LIVE if
 * the process started before the segment was created (CLOCK_BOOTTIME start
 * less the time suspended so far, against start_monotonic_ns). Either
 * way, a process that maps the file `path` (may be NULL: not checked) is
 * LIVE: it writes that live segment. UNKNOWN: a pid out of range, /proc
 * unreadable, no creation time. A process in another pid namespace of the
 * same host name is judged by this namespace's pids. */
enum nw_writer_state {
	NW_WRITER_GONE = 0,
	NW_WRITER_LIVE = 1,
	NW_WRITER_UNKNOWN = 2,
};
int nw_segment_writer_state(const struct nw_seg_header *h, const char *path);

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
/* Append a copy of path: 0, or -1 out of memory. */
int nw_path_list_add(struct nw_path_list *list, const char *path);
/* The walk nw_segment_list makes, with another choice of files: the
 * regular files under dir (depth levels of subdirectories; no symbolic
 * links, no dot files) for which keep(path, file name) is nonzero, in
 * directory order. 0, or -1 out of memory. */
int nw_path_scan(const char *dir, int depth, int (*keep)(const char *path, const char *name),
                 struct nw_path_list *list);

/* Process pid's state letter (field 3 of /proc/PID/stat) and start time
 * in clock ticks since boot (field 22): 0, or -1 when it has none. */
int nw_proc_stat(int64_t pid, char *state, unsigned long long *ticks);

#endif /* NCCLWATCH_REPORT_SEGMENT_READER_H */
