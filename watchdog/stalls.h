/* stalls: what the watchdog reports. It follows every new record of the
 * ring and keeps watching those that can get stuck: collectives,
 * sends/receives and launches of CUDA graphs holding NCCL ops until they
 * complete, blocking calls (init, split, shrink,
 * finalize, destroy, the outermost group end) until they return, failed ops
 * and async errors. A finding is
 *   - an op started on the GPU and not completed for longer than the timeout,
 *   - an op enqueued that the GPU has not reached for longer than the timeout,
 *   - a thread inside a blocking NCCL call for longer than the timeout,
 *   - a failed op (event error: a GPU fault) or an async error (at once).
 * Per communicator only the oldest stuck op of its collectives, of its
 * sends/receives and of its graph launches (by the graph's first op) is a
 * finding (the ones queued behind it wait for it). The
 * set of findings is the "picture"; it is reported when it changes. */
#ifndef NCCLWATCH_WATCHDOG_STALLS_H
#define NCCLWATCH_WATCHDOG_STALLS_H

#include <stddef.h>
#include <stdint.h>

enum nw_finding_kind {
	NW_FIND_STARTED = 1,     /* started, not completed */
	NW_FIND_ENQUEUED = 2,    /* enqueued, not started */
	NW_FIND_IN_CALL = 3,     /* a thread is inside a blocking call */
	NW_FIND_FAILED = 4,      /* event error (GPU fault) */
	NW_FIND_ASYNC = 5,       /* ncclCommGetAsyncError reported an error */
};

struct nw_finding {
	uint64_t ticket1;
	uint32_t kind;           /* enum nw_finding_kind */
	uint32_t comm_slot;
	uint64_t cls;            /* its op's class: comm slot, generation, collective or p2p */
	uint64_t age_ns;
	int new_;                /* not in the previous picture */
};

#define NW_MAX_FINDINGS 64

struct nw_picture {
	uint32_t count;
	struct nw_finding f[NW_MAX_FINDINGS];
};

/* Follow the ring's new records. */
void nw_stalls_scan(void);

/* The findings at `now` into *p; returns 1 if the picture differs from the
 * previous call's (and marks the new findings). */
int nw_stalls_evaluate(uint64_t now, uint64_t timeout_ns, struct nw_picture *p);

/* When the oldest op not final of comm slot `slot` (generation `gen`) was
 * enqueued, among its collectives, sends/receives and graph launches
 * watched at the last nw_stalls_evaluate; 0 when none is pending. */
uint64_t nw_stalls_oldest_pending_ns(uint32_t slot, uint32_t gen);

/* One line describing finding f (without the "ncclwatch: " prefix). */
void nw_finding_describe(const struct nw_finding *f, char *buf, size_t len);

/* Fork child: forget the parent's state. */
void nw_stalls_reset(void);

#endif
