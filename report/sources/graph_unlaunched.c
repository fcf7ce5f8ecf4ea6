/* graph_unlaunched: ops captured into a CUDA graph that was never launched
 * were never issued (docs/FORMAT.md, "CUDA graphs").
 *
 * The preload counts an op at its call, so the comm and peer positions
 * count a captured op as issued, once, at capture; a peer sees it only
 * when the graph is launched (NCCL numbers it at each launch). A graph
 * none of whose launches is in the ring never ran: its ops took no place
 * on their comms, and peers that launched their graph and wait in those
 * ops wait for a rank that never issued them. So the positions end before
 * such an op, as for an op held in an open group (load.c).
 *
 * Which captured ops a launch runs: from its graph's first captured op
 * (same comm and kind, seq = the launch's root) on, the next `count`
 * captured ops. Captures come before their launches in the ring, so while
 * a captured op is in it, so is every launch of its graph. Not judged: a
 * file before 2.2 (no launch records, or root is a per-process capture id
 * there) and a segment whose
 * library lost track of some graphs (graphs_untracked: their launches are
 * not recorded). */
#include "sources.h"

#include <stdlib.h>

static int captured_op(const struct nw_seg_op *o)
{
	return o->state == NW_ST_CAPTURED && (NW_OP_IS_COLL(o->kind) || NW_OP_IS_P2P(o->kind));
}

/* Whether ops a and b (indexes in seg->ops) are of one rank of p: a process
 * that drives several ranks (a thread per GPU) captures their graphs side
 * by side, on one comm id, so a launch's ops are those of its own rank,
 * told by its comms' CUDA device as rank_split.c does (a comm of unknown
 * device: any rank's, as before ranks were told apart). */
static int same_rank(const struct nw_proc *p, const struct nw_comm_instances *ci, size_t a, size_t b)
{
	uint32_t ca = ci->op_comm[a], cb = ci->op_comm[b];
	int32_t da = ca < p->ncomms ? p->comms[ca].cuda_device : -1;
	int32_t db = cb < p->ncomms ? p->comms[cb].cuda_device : -1;
	return da < 0 || db < 0 || da == db;
}

/* Marks in ran[] the captured ops that launch seg->ops[at] runs: its
 * graph's first op (the launch's comm instance, kind and seq = its root)
 * and the next captured ops of the same rank. Its graph's first op no
 * longer in the ring (the ring wrapped over it, maybe keeping later ops of
 * the graph): every captured op of its rank before the launch may be one
 * of them, none is judged. */
static void mark_launched(const struct nw_proc *p, const struct nw_segment *seg, const struct nw_comm_instances *ci,
                          size_t at, uint8_t *ran)
{
	const struct nw_seg_op *l = &seg->ops[at];
	size_t first = at;
	for (size_t i = at; i-- > 0;) {
		const struct nw_seg_op *o = &seg->ops[i];
		if (o->state == NW_ST_CAPTURED && o->comm_id == l->comm_id && o->kind == (uint16_t)l->redop &&
		    o->seq == (uint64_t)l->root && ci->op_comm[i] == ci->op_comm[at]) {
			first = i;
			break;
		}
	}
	uint64_t n = first == at ? UINT64_MAX : l->count;
	for (size_t i = first == at ? 0 : first; i < at && n; i++)
		if (captured_op(&seg->ops[i]) && same_rank(p, ci, first == at ? at : first, i)) {
			ran[i] = 1;
			n--;
		}
}

/* Ends op's position before it when it is the latest issued there (a
 * later eager op on that position keeps it: the rules on issue order,
 * verdicts_order.c, judge those). */
static void unissue_latest(struct nw_proc *p, const struct nw_seg_op *op, uint32_t slot)
{
	if (slot >= p->ncomms || !op->seq)
		return;
	struct nw_seg_comm *c = &p->comms[slot];
	if (NW_OP_IS_COLL(op->kind)) {
		if (c->coll_enqueued == op->seq)
			c->coll_enqueued = op->seq - 1;
		return;
	}
	for (uint32_t i = 0; i < p->npeers; i++) {
		struct nw_seg_peer *q = &p->peers[i];
		if (q->comm_slot != slot || q->peer != op->root)
			continue;
		uint64_t *pos = (uint64_t *)(op->kind == NW_OP_SEND ? &q->send_enqueued : &q->recv_enqueued);
		if (*pos == op->seq) {
			*pos = op->seq - 1;
			if (c->p2p_enqueued)
				c->p2p_enqueued--;
		}
	}
}

int nw_unlaunched_graphs(struct nw_proc *p, const struct nw_segment *seg, const struct nw_comm_instances *ci)
{
	const struct nw_seg_header *h = &seg->header;
	if (h->version_major < 2 || (h->version_major == 2 && h->version_minor < 2) || h->graphs_untracked)
		return 0;
	size_t ncap = 0;
	for (size_t i = 0; i < seg->op_count; i++)
		ncap += captured_op(&seg->ops[i]);
	if (!ncap)
		return 0;
	uint8_t *ran = calloc(seg->op_count, 1);
	if (!ran)
		return -1;
	for (size_t i = 0; i < seg->op_count; i++)
		if (seg->ops[i].kind == NW_OP_GRAPH_LAUNCH && seg->ops[i].root > 0)
			mark_launched(p, seg, ci, i, ran);
	/* Newest first: a position moves back over each of its unlaunched ops. */
	for (size_t i = seg->op_count; i-- > 0;)
		if (captured_op(&seg->ops[i]) && !ran[i])
			unissue_latest(p, &seg->ops[i], ci->op_comm[i]);
	free(ran);
	return 0;
}
