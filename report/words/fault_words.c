/* fault_words: the words of GPU_FAULT's facts (decide/verdicts_fault.c
 * finds them; facts.h's NW_F_FAULT*): the summary, the "and N more"
 * suffix, one evidence line per process, the hint. */
#include "words_int.h"

#include <cuda.h>
#include <inttypes.h>

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

/* "rank 3 (pid ...)'s AllReduce #5 on comm X failed on the GPU (cuda_error
 * 700 CUDA_ERROR_ILLEGAL_ADDRESS), then async error ... on device 0
 * (0000:3b:00.0) of host"; without a failed op, the comm's async error. */
void nw_say_FAULT(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF], rb[NW_NAME_BUF], cb[128], lb[128];
	const struct nw_proc *p = f->proc;
	const struct nw_seg_op *op = f->op;
	const struct nw_seg_comm *c = f->comm, *ac = f->acomm;
	const char *cn = op ? cu_error_name(op->cuda_error) : NULL;
	nw_buf_printf(b, "%s", nw_proc_label(p, lb));
	if (op)
		nw_buf_printf(b, "'s %s #%" PRIu64 " on %s failed on the GPU (cuda_error %d%s%s)",
		              nw_op_kind_name(op->kind, kb), op->seq,
		              nw_comm_label(op->comm_id, f->view ? f->view->name : NULL, cb), (int)op->cuda_error,
		              cn ? " " : "", cn ? cn : "");
	else if (ac)
		nw_buf_printf(b, ": %s reports async error %s (%s)", nw_comm_label(ac->comm_id, ac->name, cb),
		              nw_nccl_result_name(ac->async_error, rb), nw_nccl_result_string(ac->async_error));
	if (op && c && nw_async_fault(c->async_error))
		nw_buf_printf(b, ", then async error %s", nw_nccl_result_name(c->async_error, rb));
	if (c)
		nw_buf_printf(b, " on device %d%s%.*s%s of %s", (int)c->cuda_device, c->bus_id[0] ? " (" : "",
		              (int)sizeof c->bus_id, c->bus_id, c->bus_id[0] ? ")" : "", p->hdr.host);
}

void nw_say_FAULT_MORE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, " (and %" PRIu64 " more ranks the same way)", f->n);
}

/* "rank 3 (pid ...) on host: AllReduce #5 on comm X FAILED, cuda_error
 * 700 ..., result ...; comm Y async error ...; device 0 (bus), GPU name". */
void nw_say_FAULT_LINE(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF], rb[NW_NAME_BUF], cb[128], lb[128];
	const struct nw_proc *p = f->proc;
	const struct nw_seg_op *op = f->op;
	const struct nw_seg_comm *c = f->comm;
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
		if (nw_async_fault(ac->async_error))
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
	if (f->n)
		nw_buf_printf(b, "; %" PRIu64 " earlier op%s marked FAILED too, which the other ranks completed "
		              "(the error is sticky: reported on every op not yet seen done)", f->n, f->n == 1 ? "" : "s");
}

/* A more specific hint than the kind's: the error's own words. */
void nw_say_FAULT_HINT(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_seg_op *op = f->op;
	const struct nw_seg_comm *c = f->comm;
	nw_buf_puts(b, "Xid / ECC (dmesg, nvidia-smi -q); the error: ");
	if (op && op->cuda_error) {
		const char *cn = cu_error_name(op->cuda_error);
		if (cn)
			nw_buf_puts(b, cn);
		else
			nw_buf_printf(b, "CUresult %d", (int)op->cuda_error);
	}
	if (c && nw_async_fault(c->async_error))
		nw_buf_printf(b, "%s%s", op && op->cuda_error ? ", " : "", nw_nccl_result_string(c->async_error));
}
