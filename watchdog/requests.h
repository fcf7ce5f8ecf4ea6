/* requests: how a process that found a stall asks every other ncclwatch
 * process of its job to capture its stacks and write a dump, even those
 * that are not stuck themselves (they are often the reason the others wait).
 *
 * Same host: the job directory holds a small control file ("control",
 * mapped by every watchdog of the job) whose request counter the raiser
 * increments; each watchdog compares it with the last one it served at
 * every poll (a memory read, no system call). Other hosts: when
 * NCCLWATCH_DUMP_DIR names a directory of its own (meant to be on a shared
 * filesystem), the raiser also replaces the file "request" there, and every
 * watchdog looks at its modification time about once a second. */
#ifndef NCCLWATCH_WATCHDOG_REQUESTS_H
#define NCCLWATCH_WATCHDOG_REQUESTS_H

#include <stdint.h>

#include "ncclwatch/control.h"

struct nw_request {
	uint64_t id;                  /* local counter value, or 0 for a remote request */
	uint64_t realtime_ns;         /* when it was raised (the last raiser's time), 0 unknown */
	int64_t pid;
	int32_t rank;
	char host[64];
};

/* Open (or create) the job's control file; `shared_dir` is the dump
 * directory when it is not the job directory, else NULL. 0, or -1 after
 * one "ncclwatch:" line (requests then do not reach this process). The
 * file is held with a shared flock(2) for as long as the process runs. */
int nw_requests_open(const char *jobdir, const char *shared_dir);

/* At exit (kept: our segment stays for a reason of its own; else
 * nw_segment_exit flagged it LEFT_EARLY): if no
 * other process of the job holds the control file we are the last one
 * out: remove the segments that left early (ours too) unless a process of
 * the job did not end well (killed, crashed, an exit status not 0: then
 * whoever left early may be why), the control file, and the
 * job directory if it is empty (rmdir: never one that holds anything).
 * Otherwise our segment stays: the others may wait for us. */
void nw_requests_leave(const char *jobdir, int kept);

/* Ask every process of the job for a dump; the local request's id (this
 * process's own request counts as served by the dump it makes), 0 none. */
uint64_t nw_requests_raise(void);

/* A request from another process not served yet? 1 and *r filled. The
 * request stays pending (every later call returns it, or a newer one)
 * until nw_requests_done(r): a request is never taken without an answer. */
int nw_requests_pending(uint64_t now, struct nw_request *r);

/* The request *r (from nw_requests_pending) is answered. */
void nw_requests_done(const struct nw_request *r);

/* Fork child: forget the parent's state. */
void nw_requests_reset(void);

#endif
