/* Operations of the simulated NCCL, host side: the collective and
 * send/recv entry points (argument checks as NCCL does them), the per-thread
 * group (ncclGroupStart/End/SimulateEnd), and the launch that numbers the
 * operations and queues one work item per stream (progress.c runs it).
 * Nothing is numbered or queued before the outermost ncclGroupEnd.
 */
#include "sim_nccl.h"
#include "sim_group.h"
#include "../sim_stream.h"

#include <stdlib.h>
#include <string.h>

/* ---- per-thread group ---- */
struct group_state {
	int depth;
	ncclResult_t error;          /* first error of a call inside the group */
	struct sim_op *ops;
	int nops, cap;
	ncclComm_t *inits;
	int ninits, icap;
	ncclComm_t *jobs;
	int njobs, jcap;
};
static __thread struct group_state grp;

int sim_group_depth(void) { return grp.depth; }

void sim_group_add_init(ncclComm_t comm)
{
	if (grp.ninits == grp.icap) {
		int cap = grp.icap ? 2 * grp.icap : 8;
		ncclComm_t *p = realloc(grp.inits, cap * sizeof *p);
		if (!p) { grp.error = ncclSystemError; return; }
		grp.inits = p;
		grp.icap = cap;
	}
	grp.inits[grp.ninits++] = comm;
}

void sim_group_add_job(ncclComm_t comm)
{
	if (grp.njobs == grp.jcap) {
		int cap = grp.jcap ? 2 * grp.jcap : 8;
		ncclComm_t *p = realloc(grp.jobs, cap * sizeof *p);
		if (!p) { grp.error = ncclSystemError; sim_comm_job_result(comm); return; }
		grp.jobs = p;
		grp.jcap = cap;
	}
	grp.jobs[grp.njobs++] = comm;
}

/* The grouped splits' results (every one waited for, error or not). */
static ncclResult_t group_wait_jobs(ncclResult_t r)
{
	for (int i = 0; i < grp.njobs; i++) {
		ncclResult_t rj = sim_comm_job_result(grp.jobs[i]);
		if (rj != ncclSuccess && r == ncclSuccess) r = rj;
	}
	return r;
}

static int group_push(const struct sim_op *op)
{
	if (grp.nops == grp.cap) {
		int cap = grp.cap ? 2 * grp.cap : 16;
		struct sim_op *p = realloc(grp.ops, cap * sizeof *p);
		if (!p) return -1;
		grp.ops = p;
		grp.cap = cap;
	}
	grp.ops[grp.nops++] = *op;
	return 0;
}

/* ---- launch ---- */
struct launch_job { int nunits; CUstream streams[64]; struct sim_unit *units[64]; };

static void op_release(struct sim_op *op)
{
	ncclComm_t c = op->comm;
	pthread_mutex_lock(&c->mu);
	if (op->seq) c->inflight--;   /* captured ops are counted at launch */
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	sim_comm_unref(c);
}

static ncclResult_t enqueue_units(void *arg)
{
	struct launch_job *job = arg;
	ncclResult_t res = ncclSuccess;
	for (int u = 0; u < job->nunits; u++) {
		CUresult cr = simStreamEnqueueReplayable(job->streams[u], sim_unit_run, sim_unit_drop, sim_unit_replay,
		                                         job->units[u]);
		if (cr != CUDA_SUCCESS) {
			sim_unit_drop(job->units[u]);
			res = sim_error(ncclUnhandledCudaError, "enqueue on stream %p failed: CUDA error %d",
			                (void *)job->streams[u], (int)cr);
		}
	}
	free(job);
	return res;
}

/* Number the ops (in issue order), group them by stream into work items and
 * queue those, in the background when a comm is non-blocking. */
static ncclResult_t launch(struct sim_op *ops, int nops)
{
	if (nops == 0) return ncclSuccess;
	int nonblocking = 0;
	for (int i = 0; i < nops; i++) {
		struct sim_op *op = &ops[i];
		ncclComm_t c = op->comm;
		if (!c->blocking) { nonblocking = 1; sim_comm_wait_job(c); }
		/* An op captured into a CUDA graph takes its place among the
		 * comm's ops when the graph is launched (sim_unit_replay), as NCCL
		 * pairs a comm's ops in the order they run: not here. NCCL's RAS
		 * counts at launch (ncclProfilerStartTaskEvents), not for plans
		 * captured into a graph. */
		if (!simStreamCapturing(op->stream)) {
			sim_op_number(op);
			sim_ras_count_launch(c, op->kind);
		}
		sim_comm_ref(c);
	}
	struct launch_job *job = calloc(1, sizeof *job);
	int *unit_of = malloc(nops * sizeof *unit_of);
	int counts[64] = { 0 };
	if (!job || !unit_of) {
		free(job); free(unit_of);
		for (int i = 0; i < nops; i++) op_release(&ops[i]);
		return sim_error(ncclSystemError, "out of memory");
	}
	for (int i = 0; i < nops; i++) {
		int u;
		for (u = 0; u < job->nunits; u++) if (job->streams[u] == ops[i].stream) break;
		if (u == job->nunits) {
			if (u == 64) u = 63;  /* more streams than that in one group: share the last unit */
			else job->streams[job->nunits++] = ops[i].stream;
		}
		unit_of[i] = u;
		counts[u]++;
	}
	for (int u = 0; u < job->nunits; u++) {
		job->units[u] = malloc(sizeof(struct sim_unit) + counts[u] * sizeof(struct sim_op));
		if (job->units[u]) {
			job->units[u]->nops = 0;
			job->units[u]->is_template = 0;
			job->units[u]->replays = 0;
			job->units[u]->captured = simStreamCapturing(job->streams[u]);
		}
	}
	for (int i = 0; i < nops; i++) {
		struct sim_unit *unit = job->units[unit_of[i]];
		if (unit) unit->ops[unit->nops++] = ops[i];
		else op_release(&ops[i]);
	}
	free(unit_of);
	for (int u = 0; u < job->nunits; u++) if (!job->units[u]) { job->units[u] = job->units[job->nunits - 1]; job->nunits--; u--; }
	if (nonblocking) {
		ncclComm_t comms[64];
		int ncomms = 0;
		for (int i = 0; i < nops && ncomms < 64; i++) {
			int seen = 0;
			for (int k = 0; k < ncomms; k++) seen |= comms[k] == ops[i].comm;
			if (!seen && !ops[i].comm->blocking) comms[ncomms++] = ops[i].comm;
		}
		sim_comm_start_job(comms, ncomms, enqueue_units, job);
		return ncclInProgress;
	}
	return enqueue_units(job);
}

/* ---- entry points ---- */
static ncclResult_t resolve_redop(ncclComm_t comm, ncclRedOp_t op, ncclDataType_t dtype, struct sim_redop *out)
{
	memset(out, 0, sizeof *out);
	out->dtype = dtype;
	if ((int)op >= 0 && op < ncclNumOps) { out->base = op; return ncclSuccess; }
	int idx = (int)op - ncclNumOps;
	if ((int)op < 0 || idx >= (int)(sizeof comm->premul / sizeof comm->premul[0]))
		return sim_error(ncclInvalidArgument, "invalid reduction operation %d", (int)op);
	pthread_mutex_lock(&comm->mu);
	struct sim_premul pm = comm->premul[idx];
	pthread_mutex_unlock(&comm->mu);
	if (!pm.used) return sim_error(ncclInvalidArgument, "reduction operation %d was not created on this comm", (int)op);
	if (pm.dtype != dtype) return sim_error(ncclInvalidArgument, "reduction operation %d is for datatype %d, not %d", (int)op, pm.dtype, dtype);
	out->base = ncclNumOps;
	memcpy(out->scalar, pm.value, sizeof out->scalar);
	out->scalar_devptr = pm.residence == ncclScalarDevice ? pm.devptr : NULL;
	return ncclSuccess;
}

static ncclResult_t submit(enum sim_op_kind kind, const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t dtype, ncclRedOp_t redop, int root, ncclComm_t comm, cudaStream_t stream)
{
	if (SIM_NULL()) return ncclSuccess;
	ncclResult_t r = sim_comm_check_usable(comm);
	if (r != ncclSuccess) goto fail;
	struct sim_op op = {
		.kind = kind, .comm = comm, .stream = (CUstream)stream, .sendbuff = sendbuff, .recvbuff = recvbuff,
		.count = count, .dtype = dtype, .redop_handle = (int)redop, .root = root,
	};
	if ((int)dtype < 0 || dtype >= ncclNumTypes) { r = sim_error(ncclInvalidArgument, "invalid datatype %d", (int)dtype); goto fail; }
	int rooted = kind == OP_BROADCAST || kind == OP_REDUCE || kind == OP_GATHER || kind == OP_SCATTER;
	int p2p = kind == OP_SEND || kind == OP_RECV;
	if ((rooted || p2p) && (root < 0 || root >= comm->nranks)) {
		r = sim_error(ncclInvalidArgument, "invalid %s %d (nranks %d)", p2p ? "peer" : "root", root, comm->nranks);
		goto fail;
	}
	if (kind == OP_ALLREDUCE || kind == OP_REDUCE || kind == OP_REDUCESCATTER) {
		if ((r = resolve_redop(comm, redop, dtype, &op.redop)) != ncclSuccess) goto fail;
	}
	if (count > 0) {
		int me_root = root == comm->rank;
		int need_send = kind == OP_SEND || kind == OP_ALLREDUCE || kind == OP_REDUCE || kind == OP_ALLGATHER ||
		                kind == OP_REDUCESCATTER || kind == OP_ALLTOALL || kind == OP_GATHER ||
		                ((kind == OP_BROADCAST || kind == OP_SCATTER) && me_root);
		int need_recv = kind == OP_RECV || kind == OP_ALLREDUCE || kind == OP_ALLGATHER || kind == OP_REDUCESCATTER ||
		                kind == OP_ALLTOALL || kind == OP_BROADCAST || kind == OP_SCATTER ||
		                ((kind == OP_REDUCE || kind == OP_GATHER) && me_root);
		if ((need_send && !sendbuff) || (need_recv && !recvbuff)) {
			r = sim_error(ncclInvalidArgument, "%s buffer is NULL", need_send && !sendbuff ? "send" : "receive");
			goto fail;
		}
	}
	if (grp.depth > 0) {
		if (group_push(&op)) { r = sim_error(ncclSystemError, "out of memory"); goto fail; }
		return ncclSuccess;
	}
	return launch(&op, 1);
fail:
	if (grp.depth > 0 && grp.error == ncclSuccess) grp.error = r;
	return r;
}

#define NCCLSIM_COLL(name, KIND, SB, RB, CNT, DT, OP, ROOT, ...) \
	ncclResult_t p##name(__VA_ARGS__) { return submit(KIND, SB, RB, CNT, DT, OP, ROOT, comm, stream); } \
	NCCLSIM_ALIAS(name);

NCCLSIM_COLL(ncclAllReduce, OP_ALLREDUCE, sendbuff, recvbuff, count, datatype, op, 0,
             const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
             ncclComm_t comm, cudaStream_t stream)
NCCLSIM_COLL(ncclBroadcast, OP_BROADCAST, sendbuff, recvbuff, count, datatype, ncclSum, root,
             const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
             ncclComm_t comm, cudaStream_t stream)
NCCLSIM_COLL(ncclBcast, OP_BROADCAST, buff, buff, count, datatype, ncclSum, root,
             void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
NCCLSIM_COLL(ncclReduce, OP_REDUCE, sendbuff, recvbuff, count, datatype, op, root,
             const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, int root,
             ncclComm_t comm, cudaStream_t stream)
NCCLSIM_COLL(ncclAllGather, OP_ALLGATHER, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0,
             const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
             ncclComm_t comm, cudaStream_t stream)
NCCLSIM_COLL(ncclReduceScatter, OP_REDUCESCATTER, sendbuff, recvbuff, recvcount, datatype, op, 0,
             const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op,
             ncclComm_t comm, cudaStream_t stream)
NCCLSIM_COLL(ncclAlltoAll, OP_ALLTOALL, sendbuff, recvbuff, count, datatype, ncclSum, 0,
             const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
             ncclComm_t comm, cudaStream_t stream)
NCCLSIM_COLL(ncclGather, OP_GATHER, sendbuff, recvbuff, count, datatype, ncclSum, root,
             const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
             ncclComm_t comm, cudaStream_t stream)
NCCLSIM_COLL(ncclScatter, OP_SCATTER, sendbuff, recvbuff, count, datatype, ncclSum, root,
             const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
             ncclComm_t comm, cudaStream_t stream)
NCCLSIM_COLL(ncclSend, OP_SEND, sendbuff, NULL, count, datatype, ncclSum, peer,
             const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, cudaStream_t stream)
NCCLSIM_COLL(ncclRecv, OP_RECV, NULL, recvbuff, count, datatype, ncclSum, peer,
             void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, cudaStream_t stream)

ncclResult_t pncclGroupStart(void)
{
	if (SIM_NULL()) return ncclSuccess;
	grp.depth++;
	return ncclSuccess;
}
NCCLSIM_ALIAS(ncclGroupStart);

static void group_reset(void)
{
	grp.nops = 0;
	grp.ninits = 0;
	grp.njobs = 0;
	grp.error = ncclSuccess;
}

ncclResult_t pncclGroupEnd(void)
{
	if (SIM_NULL()) return ncclSuccess;
	if (grp.depth == 0) return sim_error(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
	if (--grp.depth > 0) return ncclSuccess;
	ncclResult_t r = grp.error;
	if (r != ncclSuccess) {  /* a call inside failed: the whole group is dropped */
		for (int i = 0; i < grp.ninits; i++) pncclCommAbort(grp.inits[i]);
		group_wait_jobs(r);
		group_reset();
		return r;
	}
	r = launch(grp.ops, grp.nops);
	for (int i = 0; i < grp.ninits; i++) {
		ncclResult_t ri = sim_comm_wait_joined(grp.inits[i]);
		if (ri != ncclSuccess && r == ncclSuccess) r = ri;
	}
	r = group_wait_jobs(r);
	group_reset();
	return r;
}
NCCLSIM_ALIAS(ncclGroupEnd);

ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t *simInfo)
{
	if (SIM_NULL()) return ncclSuccess;
	if (!simInfo || simInfo->magic != 0x74685283)
		return sim_error(ncclInvalidArgument, "simInfo not initialized with NCCL_SIM_INFO_INITIALIZER");
	if (grp.depth == 0) return sim_error(ncclInvalidUsage, "ncclGroupSimulateEnd without ncclGroupStart");
	if (--grp.depth > 0) return ncclSuccess;
	ncclResult_t r = grp.error;
	/* A made-up cost model: 5 us per op plus 1 ns per 10 bytes. */
	double us = 0;
	for (int i = 0; i < grp.nops; i++) us += 5.0 + grp.ops[i].count * sim_dtype_size(grp.ops[i].dtype) / 10000.0;
	simInfo->estimatedTime = (float)us;
	/* Inits inside a simulated group still happened: wait for them. */
	for (int i = 0; i < grp.ninits; i++) {
		ncclResult_t ri = sim_comm_wait_joined(grp.inits[i]);
		if (ri != ncclSuccess && r == ncclSuccess) r = ri;
	}
	r = group_wait_jobs(r);
	group_reset();
	return r;
}
NCCLSIM_ALIAS(ncclGroupSimulateEnd);
