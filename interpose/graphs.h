/* graphs: which CUDA graphs hold NCCL ops, and the launches of their
 * executable graphs.
 *
 * At capture (an op issued on a capturing stream, recorded CAPTURED),
 * cuStreamGetCaptureInfo names the graph being built; the op is added to
 * that graph's entry in the graph table. cuGraphInstantiate* of a graph in
 * the table enters the executable graph in the exec table with a copy of
 * what its graph holds; each cuGraphLaunch of an exec found there writes a
 * GRAPH_LAUNCH record and brackets the launch with one event pair
 * (wrap_cuda.c). A successful cuGraphExecUpdate gives the exec's entry the
 * new graph's ops (its replays count again from 1), or removes it when
 * the new graph holds none (counted untracked when the table may have
 * missed that graph's ops). cuGraphUpload runs nothing: not wrapped.
 *
 * Both tables share one allocation (184 KB), made at the first capture of
 * an NCCL op into a graph, so a process that captures none carries
 * neither; fixed size, never reallocated nor freed (a fork child starts
 * without tables):
 * - graph table: NW_GRAPHS_MAX graphs holding NCCL ops at once (from the
 *   first captured op to cuGraphDestroy or a failed cuStreamEndCapture);
 *   the first NW_GRAPH_OPS ops of each are described, all are counted.
 * - exec table: NW_GRAPH_EXECS slots, open addressing on the handle, at
 *   most 3/4 of them used (live executable graphs holding NCCL ops).
 * Past either bound, or while memory for them runs out (tried again at
 * each capture), the graph's launches are not recorded; header
 * .graphs_untracked counts them and one "ncclwatch:" line says so.
 *
 * Writers (capture, instantiate, destroy) take one mutex; the tables are
 * allocated under it and published zeroed with a release store. The launch's
 * lookup takes none and makes no call: an acquire load of the tables'
 * pointer (NULL: no exec known) and a probe of the exec table with
 * acquire loads; an exec holding no NCCL op costs that one lookup. */
#ifndef NCCLWATCH_INTERPOSE_GRAPHS_H
#define NCCLWATCH_INTERPOSE_GRAPHS_H

#include "visibility.h"

#include <cuda.h>
#include <stdatomic.h>
#include <stdint.h>

#define NW_GRAPHS_MAX 256
#define NW_GRAPH_OPS 8
#define NW_GRAPH_EXECS 1024

/* A captured NCCL op, as its CAPTURED record says. */
struct nw_graph_op {
	uint64_t comm_id;
	uint64_t seq;                /* its seq on its comm (collective, or per peer): the
	                              * same on every rank running the same program */
	uint64_t count;
	uint32_t comm_slot, comm_gen;
	int32_t rank, nranks;
	uint16_t kind;
	uint8_t datatype;
};

/* Per-op events (on unless NCCLWATCH_GRAPH_OP_EVENTS=0, decided once at
 * start: nw_graph_op_events): after each captured NCCL op one event is
 * recorded on the capturing stream with CU_EVENT_RECORD_EXTERNAL, which
 * adds an event-record node to the user's graph right after the op; each
 * replay re-records it, so the watchdog can tell how far the newest replay
 * got. Ops of a group get one node per captured stream, after the group's
 * ncclGroupEnd (they are launched together). Every captured op gets its
 * node, whatever our tables hold, so two graphs of the same captured code
 * always have the same topology (cuGraphExecUpdate between them works):
 * - an op of a graph in the graph table, among its first
 *   NW_GRAPH_OP_EVENTS ops, records an event of its own. The events of a
 *   graph form one reference-counted set held by the graph, by every
 *   executable graph instantiated or updated from it, and by every launch
 *   the watchdog still follows; the last reference gives the events back
 *   to their pool;
 * - any other (past the table or the bound, or no event to spare) records
 *   its context's sink event (evpool.h), which nobody reads. */
#define NW_GRAPH_OP_EVENTS 64

struct nw_track;
struct nw_graph_opev {
	_Atomic uint32_t refs;
	uint32_t n;                  /* ops 0..n-1 may have an event (NULL: none, e.g. grouped) */
	_Atomic uint64_t latest;     /* ticket+1 of the newest launch enqueued with these events */
	struct nw_track *ev[NW_GRAPH_OP_EVENTS];   /* ev[i]->end is op i's event */
};

struct nw_graph_exec {
	_Atomic uintptr_t key;       /* the CUgraphExec; 0 never used, 1 deleted */
	uint32_t nops;               /* NCCL ops captured into its graph */
	struct nw_graph_op first;    /* the first of them */
	_Atomic uint64_t replays;    /* launches so far */
	struct nw_graph_opev *_Atomic opev;   /* its graph's per-op events, NULL none */
};

/* A reference to a set, taken (lock-free) and dropped; the last drop gives
 * the events back. */
static inline void nw_graph_opev_ref(struct nw_graph_opev *s)
{
	atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}
void nw_graph_opev_unref(struct nw_graph_opev *s);

/* 1: captured ops get event-record nodes (set at start, watchdog.c, from
 * NCCLWATCH_GRAPH_OP_EVENTS and what the driver offers; never changes
 * while the process records, so every capture is treated alike). */
extern NW_HIDDEN int nw_graph_op_events;

/* After the real NCCL call of an op captured on `stream` returned
 * ncclSuccess (a group: after its ncclGroupEnd, once per captured stream,
 * op1 its last op there): add its event-record node. op1: what
 * nw_graph_captured returned for it (0: not followed). */
void nw_graph_op_issued(uint64_t stream, uint32_t op1);

/* The op of record ticket1 was just recorded CAPTURED on `stream`: add it
 * to the graph being captured there. Its index + 1 among the graph's ops,
 * 0 if not followed. */
uint32_t nw_graph_captured(uint64_t stream, uint64_t ticket1);

/* After a successful cuGraphInstantiate* of `graph` into `exec`. */
void nw_graph_instantiated(CUgraphExec exec, CUgraph graph);

/* After a successful cuGraphExecUpdate of `exec` from `graph`. */
void nw_graph_exec_updated(CUgraphExec exec, CUgraph graph);

/* Before cuGraphExecDestroy / cuGraphDestroy (the handle may be reused
 * as soon as the real call returns). */
void nw_graph_exec_forget(CUgraphExec exec);
void nw_graph_forget(CUgraph graph);

/* Before cuStreamEndCapture: the graph being built there (NULL none);
 * after it failed, nw_graph_forget it. */
CUgraph nw_graph_capturing(CUstream stream);

/* The launch path: the exec's entry, or NULL (no NCCL op in it, or not
 * known). Lock-free. */
struct nw_graph_exec *nw_graph_exec_find(CUgraphExec exec);

/* 1 once any graph holding NCCL ops was captured: before that the
 * wrappers skip even the lookup. */
extern NW_HIDDEN _Atomic int nw_graphs_seen;

void nw_graph_reset_after_fork(void);

#endif
