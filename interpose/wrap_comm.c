/* wrap_comm: the communicator life cycle and ncclCommGetAsyncError.
 *
 * A create call (InitRank, InitRankConfig, InitAll, InitRankScalable,
 * Split, Shrink) takes a comm slot and writes its record in state
 * INIT_ENTERED before calling the real NCCL, so a hang inside init is
 * visible; afterwards the slot becomes INIT_DONE, INIT_FAILED (with the
 * result) or INIT_ASYNC (ncclInProgress on a non-blocking comm, finished
 * when ncclCommGetAsyncError stops saying so). Finalize/Destroy/Abort/
 * Revoke are recorded entered and returned; a destroyed comm keeps its slot
 * for the post-mortem. Ids: comm_id.h. */
#include "comm_id.h"
#include "record.h"

#include <stddef.h>
#include <stdlib.h>

/* ncclConfig_t fields, read only within the size the caller passed (older
 * programs pass smaller structs). */
struct nw_config_view {
	int32_t blocking;
	const char *name;
};

static struct nw_config_view read_config(const ncclConfig_t *config, int32_t inherited_blocking)
{
	struct nw_config_view v = { inherited_blocking, NULL };
	if (!config)
		return v;
	size_t size = config->size;
#define NW_HAS_FIELD(f) (size >= offsetof(ncclConfig_t, f) + sizeof(config->f))
	if (NW_HAS_FIELD(blocking) && config->blocking != NCCL_CONFIG_UNDEF_INT)
		v.blocking = config->blocking != 0;
	if (NW_HAS_FIELD(commName) && config->commName)
		v.name = config->commName;
#undef NW_HAS_FIELD
	return v;
}

/* Before the create call: the slot and the INIT_ENTERED record. */
static struct nw_comm *create_begin(const struct nw_comm_spec *spec, uint16_t kind, uint64_t caller)
{
	struct nw_comm *c = nw_comm_create(spec);
	if (!c) {
		nw_count_dropped();        /* comm table full: this comm is untracked */
		return NULL;
	}
	c->init_ticket1 = nw_record_comm_event(c, kind, NW_ST_INIT_ENTERED, NULL, caller);
	return c;
}

/* After it: the slot's state, the record's result. */
static void create_end(struct nw_comm *c, ncclResult_t r, ncclComm_t *out)
{
	if (!c)
		return;
	ncclComm_t handle = out && (r == ncclSuccess || r == ncclInProgress) ? *out : NULL;
	nw_comm_created(c, handle, r);
	uint32_t state = r == ncclSuccess ? NW_ST_INIT_DONE
	               : r == ncclInProgress && handle ? 0 /* still INIT_ENTERED */ : NW_ST_INIT_FAILED;
	nw_ring_finish(c->init_ticket1, r, state);
}

NW_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
	NW_WRAP_BEGIN(CommInitRank, comm, nranks, commId, rank);
	struct nw_comm_spec spec = {
		.origin = NW_ORIGIN_INIT_RANK, .id = nw_comm_id_unique(&commId),
		.rank = rank, .nranks = nranks, .peer_capacity = nranks, .blocking = 1,
	};
	struct nw_comm *c = create_begin(&spec, NW_OP_COMM_INIT, NW_CALLER);
	ncclResult_t r = NW_GUARDED(real_(comm, nranks, commId, rank));
	create_end(c, r, comm);
	return r;
}

NW_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                              int rank, ncclConfig_t *config)
{
	NW_WRAP_BEGIN(CommInitRankConfig, comm, nranks, commId, rank, config);
	struct nw_config_view cfg = read_config(config, 1);
	struct nw_comm_spec spec = {
		.origin = NW_ORIGIN_INIT_CONFIG, .id = nw_comm_id_unique(&commId),
		.rank = rank, .nranks = nranks, .peer_capacity = nranks,
		.blocking = cfg.blocking, .name = cfg.name,
	};
	struct nw_comm *c = create_begin(&spec, NW_OP_COMM_INIT, NW_CALLER);
	ncclResult_t r = NW_GUARDED(real_(comm, nranks, commId, rank, config));
	create_end(c, r, comm);
	return r;
}

NW_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                                ncclUniqueId *commIds, ncclConfig_t *config)
{
	NW_WRAP_BEGIN(CommInitRankScalable, newcomm, nranks, myrank, nId, commIds, config);
	struct nw_config_view cfg = read_config(config, 1);
	struct nw_comm_spec spec = {
		.origin = NW_ORIGIN_INIT_SCALABLE,
		.id = nw_comm_id_scalable(commIds, commIds ? nId : 0),
		.rank = myrank, .nranks = nranks, .peer_capacity = nranks,
		.blocking = cfg.blocking, .name = cfg.name,
	};
	struct nw_comm *c = create_begin(&spec, NW_OP_COMM_INIT, NW_CALLER);
	ncclResult_t r = NW_GUARDED(real_(newcomm, nranks, myrank, nId, commIds, config));
	create_end(c, r, newcomm);
	return r;
}

NW_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
{
	NW_WRAP_BEGIN(CommInitAll, comm, ndev, devlist);
	uint64_t caller = NW_CALLER;
	struct nw_comm **made = ndev > 0 ? calloc((size_t)ndev, sizeof(*made)) : NULL;
	if (!made)
		return NW_GUARDED(real_(comm, ndev, devlist));
	uint64_t id = nw_comm_id_random();      /* one per call, shared by its comms */
	for (int i = 0; i < ndev; i++) {
		struct nw_comm_spec spec = {
			.origin = NW_ORIGIN_INIT_ALL, .id = id,
			.rank = i, .nranks = ndev, .peer_capacity = ndev, .blocking = 1,
		};
		made[i] = create_begin(&spec, NW_OP_COMM_INIT, caller);
	}
	ncclResult_t r = NW_GUARDED(real_(comm, ndev, devlist));
	for (int i = 0; i < ndev; i++)
		create_end(made[i], r, comm ? &comm[i] : NULL);
	free(made);
	return r;
}

/* A split's or shrink's child is made on its parent's device (NCCL gives
 * it the parent's cudaDev): known before the call returns, so a process
 * that drives several ranks and waits inside several splits at once tells
 * whose each is (report/sources/rank_split.c groups comms by device; the
 * child's id, the same on every rank of it, does not). */
static void child_device(struct nw_comm *c, const struct nw_comm *parent)
{
	if (c && parent->seg && c->seg->cuda_device < 0)
		c->seg->cuda_device = parent->seg->cuda_device;
}

NW_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                     ncclConfig_t *config)
{
	NW_WRAP_BEGIN(CommSplit, comm, color, key, newcomm, config);
	uint64_t caller = NW_CALLER;
	struct nw_comm *parent = nw_comm_lookup(comm);
	if (!parent) {                      /* untracked parent: no id to derive from */
		nw_count_dropped();
		return NW_GUARDED(real_(comm, color, key, newcomm, config));
	}
	/* Every split counts, NOCOLOR too: all ranks of the parent see the same n. */
	uint64_t nth = atomic_fetch_add(&parent->splits, 1);
	parent->seg->splits = nth + 1;
	if (color == NCCL_SPLIT_NOCOLOR) {
		struct nw_op_desc d = { .redop = key, .root = color };
		uint64_t t1 = nw_record_comm_event(parent, NW_OP_COMM_SPLIT, NW_ST_INIT_ENTERED, &d, caller);
		ncclResult_t r = NW_GUARDED(real_(comm, color, key, newcomm, config));
		nw_ring_finish(t1, r, r == ncclSuccess || r == ncclInProgress ? NW_ST_INIT_DONE : NW_ST_INIT_FAILED);
		return r;
	}
	struct nw_config_view cfg = read_config(config, parent->blocking);
	struct nw_comm_spec spec = {
		.origin = NW_ORIGIN_SPLIT, .id = nw_comm_id_split(parent->id, nth, color),
		.parent_id = parent->id, .rank = -1, .nranks = -1,
		.peer_capacity = parent->nranks > 0 ? parent->nranks : parent->peer_capacity,
		.color = color, .key = key, .blocking = cfg.blocking, .name = cfg.name,
	};
	struct nw_comm *c = create_begin(&spec, NW_OP_COMM_SPLIT, caller);
	child_device(c, parent);
	ncclResult_t r = NW_GUARDED(real_(comm, color, key, newcomm, config));
	create_end(c, r, newcomm);
	return r;
}

NW_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
                                      ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags)
{
	NW_WRAP_BEGIN(CommShrink, comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
	struct nw_comm *parent = nw_comm_lookup(comm);
	if (!parent) {
		nw_count_dropped();
		return NW_GUARDED(real_(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags));
	}
	uint64_t nth = atomic_fetch_add(&parent->shrinks, 1);
	parent->seg->shrinks = nth + 1;
	struct nw_config_view cfg = read_config(config, parent->blocking);
	struct nw_comm_spec spec = {
		.origin = NW_ORIGIN_SHRINK,
		.id = nw_comm_id_shrink(parent->id, nth, excludeRanksList, excludeRanksCount),
		.parent_id = parent->id, .rank = -1, .nranks = -1,
		.peer_capacity = parent->nranks > 0 ? parent->nranks : parent->peer_capacity,
		.color = excludeRanksCount, .blocking = cfg.blocking, .name = cfg.name,
	};
	struct nw_comm *c = create_begin(&spec, NW_OP_COMM_SHRINK, NW_CALLER);
	child_device(c, parent);
	ncclResult_t r = NW_GUARDED(real_(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags));
	create_end(c, r, newcomm);
	return r;
}

/* Finalize/Destroy/Abort/Revoke: a record entered, then returned. The
 * comm's state changes when the call is made (abort, revoke: they act at
 * once) or when it returned successfully (finalize, destroy). */
static uint64_t life_cycle_begin(struct nw_comm *c, uint16_t kind, uint64_t caller)
{
	if (!c) {
		nw_count_dropped();        /* an untracked comm */
		return 0;
	}
	return nw_record_comm_event(c, kind, NW_ST_INIT_ENTERED, NULL, caller);
}

static ncclResult_t life_cycle_end(uint64_t t1, ncclResult_t r)
{
	nw_ring_finish(t1, r, r == ncclSuccess || r == ncclInProgress ? NW_ST_INIT_DONE : NW_ST_INIT_FAILED);
	return r;
}

NW_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
	NW_WRAP_BEGIN(CommFinalize, comm);
	struct nw_comm *c = nw_comm_lookup(comm);
	uint64_t t1 = life_cycle_begin(c, NW_OP_COMM_FINALIZE, NW_CALLER);
	ncclResult_t r = NW_GUARDED(real_(comm));
	if (c && (r == ncclSuccess || r == ncclInProgress))
		nw_comm_ended(c, NW_COMM_FINALIZED, 0);
	return life_cycle_end(t1, r);
}

NW_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	NW_WRAP_BEGIN(CommDestroy, comm);
	struct nw_comm *c = nw_comm_lookup(comm);
	uint64_t t1 = life_cycle_begin(c, NW_OP_COMM_DESTROY, NW_CALLER);
	ncclResult_t r = NW_GUARDED(real_(comm));
	if (c && r == ncclSuccess)
		nw_comm_ended(c, NW_COMM_DESTROYED, 1);
	return life_cycle_end(t1, r);
}

NW_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	NW_WRAP_BEGIN(CommAbort, comm);
	struct nw_comm *c = nw_comm_lookup(comm);
	uint64_t t1 = life_cycle_begin(c, NW_OP_COMM_ABORT, NW_CALLER);
	if (c)
		nw_comm_ended(c, NW_COMM_ABORTED, 0);
	ncclResult_t r = NW_GUARDED(real_(comm));
	if (c)
		nw_comm_ended(c, NW_COMM_ABORTED, 1);   /* the handle is freed now */
	return life_cycle_end(t1, r);
}

NW_EXPORT ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags)
{
	NW_WRAP_BEGIN(CommRevoke, comm, revokeFlags);
	struct nw_comm *c = nw_comm_lookup(comm);
	uint64_t t1 = life_cycle_begin(c, NW_OP_COMM_REVOKE, NW_CALLER);
	if (c)
		nw_comm_ended(c, NW_COMM_REVOKED, 0);
	ncclResult_t r = NW_GUARDED(real_(comm, revokeFlags));
	return life_cycle_end(t1, r);
}

/* Sees the end of a non-blocking init and async errors (recorded once per
 * change of the comm's error). */
NW_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
	NW_WRAP_BEGIN(CommGetAsyncError, comm, asyncError);
	uint64_t caller = NW_CALLER;
	ncclResult_t r = NW_GUARDED(real_(comm, asyncError));
	if (r != ncclSuccess || !asyncError)
		return r;
	struct nw_comm *c = nw_comm_lookup(comm);
	if (!c)
		return r;
	ncclResult_t a = *asyncError;
	if (atomic_load_explicit(&c->seg->state, memory_order_acquire) == NW_COMM_INIT_ASYNC)
		nw_comm_async_result(c, a);
	if (a != ncclInProgress)
		nw_track_async_done(c);        /* launches that were in progress are on their streams now */
	if (a != ncclSuccess && a != ncclInProgress
	    && atomic_exchange(&c->seg->async_error, (int32_t)a) != (int32_t)a) {
		uint64_t t1 = nw_record_comm_event(c, NW_OP_ASYNC_ERROR, NW_ST_FAILED, NULL, caller);
		nw_ring_finish(t1, a, 0);
	}
	return r;
}
