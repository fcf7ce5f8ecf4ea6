/* record: turns a wrapped call into op records, and the one wrapper idiom
 * every wrapper uses (NW_WRAP_OP): resolve the real function, record unless
 * nested or not recording, call it with the guard set, store its result.
 *
 * The hot path (a collective or send/recv in steady state) is: a TLS cache
 * lookup of the comm, one fetch_add on the comm's (or peer's) counter, one
 * ticket CAS in the ring, the record's stores, a vDSO clock read. No lock,
 * no syscall, no allocation. The record is written once in its first
 * state (tracking decided before it: no update right after) and a
 * successful call leaves it alone (result 0 is what it holds). */
#ifndef NCCLWATCH_INTERPOSE_RECORD_H
#define NCCLWATCH_INTERPOSE_RECORD_H

#include "visibility.h"
#include "comms.h"
#include "real_nccl.h"
#include "ring.h"
#include "state.h"
#include "thread.h"
#include "track.h"
#include "graphs.h"

#include <stdint.h>
#include <nccl.h>

#define NW_EXPORT __attribute__((visibility("default")))
#define NW_CALLER ((uint64_t)(uintptr_t)__builtin_return_address(0))

/* The arguments of an op, as the record keeps them. */
struct nw_op_desc {
	uint64_t count;
	uint64_t stream;
	uint64_t caller;
	int32_t redop;                 /* -1 n/a */
	int32_t root;                  /* root, or the peer of Send/Recv; -1 n/a */
	uint16_t kind;                 /* enum nw_op_kind */
	uint8_t datatype;
	uint8_t captured;              /* out: issued on a capturing stream (its event-record node follows it) */
	uint32_t flags;                /* NW_OPF_* known from the arguments */
	uint32_t graph_op1;            /* out: its index + 1 among its graph's ops, 0 not followed */
	uint64_t seq;                  /* out: the sequence number the op took (0 none) */
	struct nw_comm *comm;          /* out (nw_op_coll/p2p): the comm entry, NULL untracked */
	struct nw_track *track;        /* out (nw_op_coll/p2p): its event pair, NULL none */
};

#define NW_OP_DESC(var, kind_, count_, dtype_, redop_, root_, stream_, inplace_) \
	struct nw_op_desc var = { .count = (uint64_t)(count_), .stream = (uint64_t)(uintptr_t)(stream_), \
		.redop = (int32_t)(redop_), .root = (int32_t)(root_), .kind = (kind_), \
		.datatype = (uint8_t)(dtype_), .flags = (inplace_) ? NW_OPF_INPLACE : 0 }

/* The state a new collective or send/receive starts in: ENQUEUED, or
 * UNTRACKED when no CUDA driver could be loaded (set once at start). */
extern NW_HIDDEN uint32_t nw_op_initial_state;

/* nw_op_coll / nw_op_p2p (record_op.h, inlined into the wrappers): all of
 * a collective's / a send's or receive's work before its real call:
 * recording or not (else counted dropped), the comm's entry, the event
 * pair (outside a group), the record; ring ticket + 1, or 0; d->comm and
 * d->track set.
 * nw_op_after: after the real call, only when it failed or the op has an
 * event pair (`track`, on `comm`): its result, its end event. */
void nw_op_after(struct nw_track *track, struct nw_comm *comm, uint64_t ticket1, ncclResult_t r);

/* A record on comm `c` (NULL: none) of `kind` in `state`, seq 0: life-cycle
 * calls, async errors. `d` may be NULL. */
uint64_t nw_record_comm_event(struct nw_comm *c, uint16_t kind, uint32_t state,
                              const struct nw_op_desc *d, uint64_t caller);

/* A GRAPH_LAUNCH record (segment.h) for replay `replay` of `exec` on
 * `stream`, in `state`; ring ticket + 1, or 0. */
struct nw_graph_exec;
uint64_t nw_record_graph_launch(const struct nw_graph_exec *e, uint64_t exec, uint64_t replay, uint64_t stream,
                                uint64_t caller, uint32_t state);

/* A GROUP_START / GROUP_END record for group `gid`. */
uint64_t nw_record_group(uint16_t kind, uint64_t gid, uint32_t depth, uint32_t state, uint64_t caller);

#define NW_WRAP_OP(name, op_fn, desc, ...) do { \
	__typeof__(nccl##name) *real_ = NW_REAL_FN(name); \
	if (__builtin_expect(real_ == NULL, 0)) \
		return nw_real_missing(NW_REAL_##name, "nccl" #name); \
	if (nw_tls.inside) \
		return real_(__VA_ARGS__); \
	(desc)->caller = NW_CALLER; \
	uint64_t t1_ = op_fn(comm, (desc)); \
	nw_tls.inside = 1; \
	ncclResult_t r_ = real_(__VA_ARGS__); \
	nw_tls.inside = 0; \
	/* a success leaves the record alone: it holds 0 (ncclSuccess) already */ \
	if (__builtin_expect(r_ != ncclSuccess || (desc)->track != NULL, 0)) \
		nw_op_after((desc)->track, (desc)->comm, t1_, r_); \
	if (__builtin_expect((desc)->captured, 0) && r_ == ncclSuccess) \
		nw_graph_op_issued((desc)->stream, (desc)->graph_op1); \
	return r_; \
} while (0)

/* The start of a wrapper that is not on the hot path: the real function
 * (or the "missing" error), and pass-through when nested or not recording.
 * Leaves `real_` for the rest of the wrapper. */
#define NW_WRAP_BEGIN(name, ...) \
	__typeof__(nccl##name) *real_ = NW_REAL_FN(name); \
	if (__builtin_expect(real_ == NULL, 0)) \
		return nw_real_missing(NW_REAL_##name, "nccl" #name); \
	if (nw_tls.inside || !nw_recording()) \
		return NW_GUARDED(real_(__VA_ARGS__))

#endif
