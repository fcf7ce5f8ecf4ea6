/* verdicts_fault: GPU_FAULT. A process whose op FAILED with a CUDA error
 * (cuda_error != 0), or one of whose communicators reports an asynchronous
 * error (async_error not ncclSuccess / ncclInProgress), is the culprit; its
 * device and the error are the evidence. Processes that failed the same
 * way (same op, same errors) share one verdict. The ranks that wait for it
 * come from the collective pass (members still inside the op it failed). */
#include "decide.h"

#include <cuda.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* CUresult names of the errors a GPU fault shows (cuda.h's enum; the
 * driver's own cuGetErrorName is not at hand in a reader). */
static const char *cu_error_name(int code)
{
#define E(x) case x: return #x;
	switch (code) {
	E(CUDA_ERROR_INVALID_VALUE) E(CUDA_ERROR_OUT_OF_MEMORY) E(CUDA_ERROR_NOT_INITIALIZED)
	E(CUDA_ERROR_DEINITIALIZED) E(CUDA_ERROR_NO_DEVICE) E(CUDA_ERROR_INVALID_DEVICE)
	E(CUDA_ERROR_INVALID_CONTEXT) E(CUDA_ERROR_ECC_UNCORRECTABLE) E(CUDA_ERROR_NVLINK_UNCORRECTABLE)
	E(CUDA_ERROR_INVALID_HANDLE) E(CUDA_ERROR_NOT_READY) E(CUDA_ERROR_ILLEGAL_ADDRESS)
	E(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) E(CUDA_ERROR_LAUNCH_TIMEOUT)
	E(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED) E(CUDA_ERROR_CONTEXT_IS_DESTROYED) E(CUDA_ERROR_ASSERT)
	E(CUDA_ERROR_HARDWARE_STACK_ERROR) E(CUDA_ERROR_ILLEGAL_INSTRUCTION) E(CUDA_ERROR_MISALIGNED_ADDRESS)
	E(CUDA_ERROR_INVALID_ADDRESS_SPACE) E(CUDA_ERROR_INVALID_PC) E(CUDA_ERROR_LAUNCH_FAILED)
	E(CUDA_ERROR_NOT_PERMITTED) E(CUDA_ERROR_NOT_SUPPORTED) E(CUDA_ERROR_SYSTEM_NOT_READY)
	E(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) E(CUDA_ERROR_UNKNOWN)
	default: return NULL;
	}
#undef E
}

static int async_fault(int32_t e)
{
	return e != 0 && e != 7 /* ncclInProgress: not an error */;
}

/* A collective that every other member with a file completed ran to its
 * end: its FAILED state is the sticky error of a later op. */
static int peers_completed(struct nw_jctx *x, const struct nw_seg_op *op)
{
	if (!NW_OP_IS_COLL(op->kind))
		return 0;
	const struct nw_comm_view *v = nw_view_of(x, op->comm_id);
	int others = 0;
	for (int32_t r = 0; v && r < v->nranks; r++) {
		const struct nw_member *m = &v->members[r];
		if (!m->proc || r == op->rank)
			continue;
		if (m->comm->coll_completed < op->seq)
			return 0;
		others++;
	}
	return others > 0;
}

struct fkey {
	uint64_t comm_id, seq;
	uint32_t kind;
	int32_t cuda_error, async_error;
};

struct fgroup {
	struct fkey k;
	struct nw_vwork *w;
	UT_hash_handle hh;
};

static void fault_line(struct nw_jctx *x, const struct nw_proc *p, const struct nw_seg_op *op,
                       const struct nw_seg_comm *c, struct nw_buf *b)
{
	char kb[NW_NAME_BUF], rb[NW_NAME_BUF], cb[128], lb[128];
	nw_buf_printf(b, "%s on %s", nw_proc_label(p, lb), p->hdr.host);
	if (op) {
		const char *cn = cu_error_name(op->cuda_error);
		nw_buf_printf(b, ": %s #%" PRIu64 " on %s FAILED", nw_op_kind_name(op->kind, kb), op->seq,
		              nw_comm_label(op->comm_id, c ? c->name : NULL, cb));
		if (op->cuda_error)
			nw_buf_printf(b, ", cuda_error %d%s%s", (int)op->cuda_error, cn ? " " : "", cn ? cn : "");
		if (op->result)
			nw_buf_printf(b, ", result %s", nw_nccl_result_name(op->result, rb));
	}
	for (uint32_t s = 0; s < p->ncomms; s++) {
		const struct nw_seg_comm *ac = &p->comms[s];
		if (async_fault(ac->async_error))
			nw_buf_printf(b, "; %s async error %s (%s)", nw_comm_label(ac->comm_id, ac->name, cb),
			              nw_nccl_result_name(ac->async_error, rb), nw_nccl_result_string(ac->async_error));
	}
	if (c) {
		nw_buf_printf(b, "; device %d", (int)c->cuda_device);
		if (c->bus_id[0])
			nw_buf_printf(b, " (%.*s)", (int)sizeof c->bus_id, c->bus_id);
	}
	if (p->hdr.gpu_name[0])
		nw_buf_printf(b, ", %.*s", (int)sizeof p->hdr.gpu_name, p->hdr.gpu_name);
	(void)x;
}

/* A process's failed op (FAILED with a CUDA error): the first the peers
 * did not complete; when the peers completed all of them, the first.
 * *before: the FAILED ops skipped for it (the sticky error's, not the
 * fault's). NULL: none. */
static const struct nw_seg_op *fault_op(struct nw_jctx *x, const struct nw_proc *p, size_t *before)
{
	*before = 0;
	for (size_t k = 0; k < p->nops; k++) {
		if (p->ops[k].state != NW_ST_FAILED || p->ops[k].cuda_error == 0)
			continue;
		if (!peers_completed(x, &p->ops[k]))
			return &p->ops[k];
		(*before)++;
	}
	if (*before)   /* all of them look done elsewhere: the first, then */
		for (size_t k = 0; k < p->nops; k++)
			if (p->ops[k].state == NW_ST_FAILED && p->ops[k].cuda_error != 0) {
				*before = 0;
				return &p->ops[k];
			}
	return NULL;
}

/* A process's first comm that reports an async fault (NULL: none). */
static const struct nw_seg_comm *async_comm(const struct nw_proc *p)
{
	for (uint32_t s = 0; s < p->ncomms; s++)
		if (async_fault(p->comms[s].async_error))
			return &p->comms[s];
	return NULL;
}

/* The summary of a GPU_FAULT verdict: its first process's failed op (or
 * the comm ac's async error), the device. */
static char *fault_summary(const struct nw_proc *p, const struct nw_seg_op *op, const struct nw_seg_comm *c,
                           const struct nw_seg_comm *ac, const struct nw_comm_view *v)
{
	char kb[NW_NAME_BUF], rb[NW_NAME_BUF], cb[128], lb[128];
	struct nw_buf b = { 0 };
	const char *cn = op ? cu_error_name(op->cuda_error) : NULL;
	nw_buf_printf(&b, "%s", nw_proc_label(p, lb));
	if (op)
		nw_buf_printf(&b, "'s %s #%" PRIu64 " on %s failed on the GPU (cuda_error %d%s%s)",
		              nw_op_kind_name(op->kind, kb), op->seq, nw_comm_label(op->comm_id, v ? v->name : NULL, cb),
		              (int)op->cuda_error, cn ? " " : "", cn ? cn : "");
	else
		nw_buf_printf(&b, ": %s reports async error %s (%s)", nw_comm_label(ac->comm_id, ac->name, cb),
		              nw_nccl_result_name(ac->async_error, rb), nw_nccl_result_string(ac->async_error));
	if (op && c && async_fault(c->async_error))
		nw_buf_printf(&b, ", then async error %s", nw_nccl_result_name(c->async_error, rb));
	if (c)
		nw_buf_printf(&b, " on device %d%s%.*s%s of %s", (int)c->cuda_device, c->bus_id[0] ? " (" : "",
		              (int)sizeof c->bus_id, c->bus_id, c->bus_id[0] ? ")" : "", p->hdr.host);
	return nw_buf_take(&b);
}

/* A more specific hint: the error's own words. */
static void fault_hint(struct nw_jctx *x, struct nw_vwork *w, const struct nw_seg_op *op, const struct nw_seg_comm *c)
{
	struct nw_buf h = { 0 };
	nw_buf_puts(&h, "Xid / ECC (dmesg, nvidia-smi -q); the error: ");
	if (op && op->cuda_error) {
		const char *cn = cu_error_name(op->cuda_error);
		if (cn)
			nw_buf_puts(&h, cn);
		else
			nw_buf_printf(&h, "CUresult %d", (int)op->cuda_error);
	}
	if (c && async_fault(c->async_error))
		nw_buf_printf(&h, "%s%s", op && op->cuda_error ? ", " : "", nw_nccl_result_string(c->async_error));
	if (!h.oom) {
		const char *hint = nw_intern_str(x->in, h.s, h.len);
		if (hint)
			w->v.hint = hint;
	}
	nw_buf_free(&h);
}

/* The GPU_FAULT verdict of key k, made at its first process p and added to
 * groups (NULL: out of memory). */
static struct fgroup *fault_group(struct nw_jctx *x, struct fgroup **groups, const struct fkey *k,
                                  const struct nw_proc *p, const struct nw_seg_op *op, const struct nw_seg_comm *c,
                                  const struct nw_seg_comm *ac)
{
	struct fgroup *g;
	struct nw_comm_view *v;
	HASH_FIND(hh, x->job->comms, &k->comm_id, sizeof k->comm_id, v);
	struct nw_vwork *w = nw_verdict_new(x, NW_V_GPU_FAULT, v, (uint16_t)k->kind, k->seq);
	if (!w || !(g = calloc(1, sizeof *g))) {
		x->oom = 1;
		return NULL;
	}
	g->k = *k;
	g->w = w;
	HASH_ADD(hh, *groups, k, sizeof g->k, g);
	if (nw_hash_oom_taken()) {
		free(g);
		x->oom = 1;
		return NULL;
	}
	/* The summary names the first process; the count follows. */
	if (!(w->v.summary = fault_summary(p, op, c, ac, v))) {
		x->oom = 1;
		return NULL;
	}
	fault_hint(x, w, op, c);
	return g;
}

void nw_rules_fault(struct nw_jctx *x)
{
	struct fgroup *groups = NULL, *g, *gt;
	for (size_t i = 0; i < x->job->nprocs && !x->oom; i++) {
		struct nw_proc *p = x->job->procs[i];
		size_t before;   /* FAILED ops the peers completed: the sticky error's, not the fault's */
		const struct nw_seg_op *op = fault_op(x, p, &before);
		const struct nw_seg_comm *c = op && op->comm_slot < p->ncomms ? &p->comms[op->comm_slot] : NULL;
		const struct nw_seg_comm *ac = async_comm(p);
		if (!op && !ac)
			continue;
		if (!c)
			c = ac;
		struct fkey k;
		memset(&k, 0, sizeof k);
		k.comm_id = op ? op->comm_id : ac->comm_id;
		k.seq = op ? op->seq : 0;
		k.kind = op ? op->kind : 0;
		k.cuda_error = op ? op->cuda_error : 0;
		k.async_error = c ? c->async_error : 0;
		HASH_FIND(hh, groups, &k, sizeof k, g);
		if (!g && !(g = fault_group(x, &groups, &k, p, op, c, ac)))
			break;
		nw_verdict_culprit(x, g->w, p);
		x->pc[i].fault = 1;
		if (g->w->v.nevidence < 16) {
			fault_line(x, p, op, c, &g->w->ev);
			if (before)
				nw_buf_printf(&g->w->ev, "; %zu earlier op%s marked FAILED too, which the other ranks completed "
				              "(the error is sticky: reported on every op not yet seen done)", before,
				              before == 1 ? "" : "s");
			nw_verdict_evidence_flush(x, g->w);
		}
	}
	HASH_ITER(hh, groups, g, gt) {
		if (g->w->v.culprits.n > 1) {
			char *old = g->w->v.summary;
			struct nw_buf b = { 0 };
			nw_buf_printf(&b, "%s (and %u more ranks the same way)", old ? old : "", g->w->v.culprits.n - 1);
			char *s = nw_buf_take(&b);
			if (s) {
				free(old);
				g->w->v.summary = s;
			}
		}
		HASH_DEL(groups, g);
		free(g);
	}
}
