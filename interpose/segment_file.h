/* segment_file: creates this process's segment file and maps it
 * (include/ncclwatch/segment.h is the format): the directories, the file,
 * its size, the header with identity and environment fingerprint. */
#ifndef NCCLWATCH_INTERPOSE_SEGMENT_FILE_H
#define NCCLWATCH_INTERPOSE_SEGMENT_FILE_H

#include "visibility.h"
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include <ncclwatch/segment.h>

/* The mapped segment; set once at start, read by every recording path. */
struct nw_segment {
	struct nw_seg_header *hdr;    /* NULL when no segment is mapped */
	struct nw_seg_comm *comms;
	struct nw_seg_peer *peers;
	struct nw_seg_op *ring;
	struct nw_seg_stack_header *stacks;
	uint64_t ring_mask;           /* ring_capacity - 1 */
	uint32_t comm_capacity;
	uint32_t peer_capacity;
	void *base;
	size_t size;
	pid_t owner;                  /* the process that created it */
	int python;                   /* its stack area has 1.4's Python tables (CPython runs here) */
	uint32_t pycall_depth;        /* and this many Python frames per op (0 none) */
	char path[PATH_MAX];
	char jobdir[PATH_MAX];        /* the directory it is in */
};

extern NW_HIDDEN struct nw_segment nw_seg;

/* Create and map the segment for `job` ($NCCLWATCH_DIR/<job>/<host>.<pid>.seg).
 * 0 on success; -1 after one "ncclwatch:" message. */
int nw_segment_create(struct nw_segment *s, const char *job, int32_t nccl_version,
                      const char *nccl_lib);

/* mkdir (0700) if missing, then check it is a real directory of ours:
 * 0, or -1 after one "ncclwatch:" line. The _path form makes parents too. */
int nw_ensure_private_dir(const char *dir);
int nw_ensure_dir_path(const char *dir);

/* Unmap without touching the file (a fork child lets go of its parent's). */
void nw_segment_forget(struct nw_segment *s);

/* Exit handler: mark EXITED; unless nw_segment_kept_why() says why the
 * file stays, mark it LEFT_EARLY and return 1: nw_requests_leave removes
 * it (and the job directory) if no other process of the job still runs,
 * else it stays for their diagnosis. 0: kept. */
int nw_segment_exit(struct nw_segment *s);

/* Why the file outlives the process (the post-mortem record), or NULL:
 * NCCLWATCH_KEEP=1, a stall the watchdog saw, an exit status not 0, or a
 * communicator not destroyed, finalized or aborted (its state in the comm
 * table says which). */
const char *nw_segment_kept_why(const struct nw_segment *s);

/* Keeps the status the process passed to exit() (from an on_exit handler,
 * which runs before nw_segment_exit): a non-zero status keeps the file. */
void nw_segment_note_exit_status(struct nw_segment *s, int status);

#endif
