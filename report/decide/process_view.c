/* process_view: read-only questions about the job's processes and
 * communicators that the rules ask: which comm ranks have no file, a
 * member's ops and its collective #n, a peer table entry, the op a stream
 * is busy with, and where a process is ("in AllReduce #5 on comm X
 * (STARTED for 2.0 s); main thread: ..."). */
#include "decide.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- communicator helpers ---- */

int nw_view_identity(const struct nw_comm_view *v)
{
	int any = 0;
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_proc *p = v->members[r].proc;
		if (!p)
			continue;
		if (p->rank != r)
			return 0;
		any = 1;
	}
	return any;
}

uint32_t nw_member_slot(const struct nw_member *m)
{
	return (uint32_t)(m->comm - m->proc->comms);
}

void nw_member_ops(struct nw_jctx *x, const struct nw_member *m, uint32_t **idx, size_t *n)
{
	const struct nw_pctx *pc = &x->pc[m->proc->job_index];
	uint32_t s = nw_member_slot(m);
	*idx = pc->order + pc->slot_off[s];
	*n = pc->slot_off[s + 1] - pc->slot_off[s];
}

const struct nw_seg_op *nw_member_coll(struct nw_jctx *x, const struct nw_member *m, uint64_t seq)
{
	uint32_t *idx;
	size_t n;
	nw_member_ops(x, m, &idx, &n);
	const struct nw_seg_op *ops = m->proc->ops, *found = NULL;
	/* Collectives come first in a slot's range, sorted by seq. */
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct nw_seg_op *o = &ops[idx[mid]];
		if (nw_op_class(o->kind) == 0 && o->seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n; lo++) {
		const struct nw_seg_op *o = &ops[idx[lo]];
		if (nw_op_class(o->kind) != 0 || o->seq != seq)
			break;
		if (o->state != NW_ST_DISCARDED)
			found = o;   /* the newest ticket of that seq */
	}
	return found;
}

const struct nw_seg_peer *nw_proc_peer(const struct nw_proc *p, uint32_t slot, int32_t peer)
{
	size_t lo = 0, hi = p->npeers;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct nw_seg_peer *e = &p->peers[mid];
		if (e->comm_slot < slot || (e->comm_slot == slot && e->peer < peer))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->npeers && p->peers[lo].comm_slot == slot && p->peers[lo].peer == peer)
		return &p->peers[lo];
	return NULL;
}

/* ---- where a process is ---- */

const struct nw_seg_op *nw_previous_work(const struct nw_proc *p, const struct nw_seg_op *op)
{
	const struct nw_seg_op *found = NULL;
	for (size_t i = 0; i < p->nops; i++) {
		const struct nw_seg_op *o = &p->ops[i];
		if (o == op || o->commit >= op->commit)
			break;
		if (o->stream == op->stream &&
		    (NW_OP_IS_COLL(o->kind) || NW_OP_IS_P2P(o->kind) || o->kind == NW_OP_GRAPH_LAUNCH) &&
		    (nw_op_pending(o->state) || o->state == NW_ST_FAILED) &&
		    !(o->group_id && o->group_id == op->group_id))
			found = o;
	}
	return found;
}

const struct nw_comm_view *nw_view_of(struct nw_jctx *x, uint64_t id)
{
	struct nw_comm_view *v;
	HASH_FIND(hh, x->job->comms, &id, sizeof id, v);
	return v;
}

/* "AllReduce #5 on comm X", "Send #3 to rank 6 on comm X", "CommInit of comm X". */
void nw_describe_op(struct nw_jctx *x, const struct nw_seg_op *op, struct nw_buf *b)
{
	char kb[NW_NAME_BUF], cb[128];
	const struct nw_comm_view *v = nw_view_of(x, op->comm_id);
	const char *kind = nw_op_kind_name(op->kind, kb);
	const char *comm = nw_comm_label(op->comm_id, v ? v->name : NULL, cb);
	if (NW_OP_IS_COLL(op->kind)) {
		nw_buf_printf(b, "%s #%" PRIu64 " on %s", kind, op->seq, comm);
	} else if (NW_OP_IS_P2P(op->kind)) {
		const struct nw_proc *peer = v && op->root >= 0 && op->root < v->nranks ? v->members[op->root].proc
		                                                                       : NULL;
		char pb[128];
		nw_buf_printf(b, "%s #%" PRIu64 " %s %s on %s", kind, op->seq, op->kind == NW_OP_SEND ? "to" : "from",
		              peer ? nw_proc_label(peer, pb) : "comm rank", comm);
		if (!peer)
			nw_buf_printf(b, " (comm rank %d)", (int)op->root);
	} else if (op->comm_id) {
		nw_buf_printf(b, "%s of %s", kind, comm);
	} else {
		nw_buf_puts(b, kind);
	}
}

/* A process that ended with a collective still open in its records: the
 * state there is what its watchdog last saw, not what became of the op;
 * the peers' positions tell whether the op itself completed. */
static void ended_state(struct nw_jctx *x, const struct nw_proc *p, const struct nw_seg_op *op, struct nw_buf *b)
{
	if (!x->sink || !x->sink[p->job_index] || !nw_op_pending(op->state) || !NW_OP_IS_COLL(op->kind))
		return;
	const struct nw_comm_view *v = nw_view_of(x, op->comm_id);
	if (!v)
		return;
	uint32_t peers = 0, done = 0;
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_member *m = &v->members[r];
		if (!m->proc || m->proc == p)
			continue;
		peers++;
		done += m->comm->coll_completed >= op->seq;
	}
	if (peers)
		nw_buf_puts(b, done == peers ? "; state as it ended: the other ranks completed it"
		               : done ? "; state as it ended: some other ranks completed it"
		                      : "; state as it ended: no other rank completed it");
}

const char *nw_op_site(const struct nw_proc *p, const struct nw_seg_op *op)
{
	if (!p->op_site || op < p->ops || op >= p->ops + p->nops)
		return NULL;
	return p->op_site[op - p->ops];
}

/* ", issued at train.py:77 in sync_gradients" when the op has a Python call site. */
static void put_site(const struct nw_proc *p, const struct nw_seg_op *op, struct nw_buf *b)
{
	const char *site = nw_op_site(p, op);
	if (site)
		nw_buf_printf(b, ", issued at %s", site);
}

void nw_buf_thread(struct nw_buf *b, const struct nw_thread_stack *t, const char *what, int native)
{
	/* A Python thread: where its application code is, innermost first. */
	if (t->npy && !native) {
		nw_buf_printf(b, "; %s in ", what);
		uint32_t end = t->py_at + t->npy;
		for (uint32_t i = t->py_app, k = 0; i < end && k < 4; i++, k++)
			nw_buf_printf(b, "%s%s", k ? " < " : "", t->frames[i]);
		if (end - t->py_app > 4)
			nw_buf_puts(b, " < ...");
		return;
	}
	nw_buf_printf(b, "; %s: ", what);
	nw_buf_frames(b, t, 8);
}

uint64_t nw_where(struct nw_jctx *x, const struct nw_proc *p, struct nw_buf *b, int with_stack)
{
	uint64_t age = NW_NO_AGE;
	char sb[NW_NAME_BUF];
	const struct nw_seg_op *stuck = NULL, *last = NULL;
	for (size_t i = 0; i < p->nops; i++) {
		const struct nw_seg_op *op = &p->ops[i];
		if (op->state == NW_ST_DISCARDED)
			continue;
		int open = nw_op_pending(op->state) || op->state == NW_ST_INIT_ENTERED;
		if (open && !stuck && nw_age(p, op->enqueue_ns) > x->timeout_ns &&
		    (op->comm_id || op->kind == NW_OP_GROUP_END))
			stuck = op;
		if (op->comm_id)
			last = op;
	}
	if (stuck) {
		nw_buf_puts(b, stuck->state == NW_ST_INIT_ENTERED ? "inside " : "in ");
		nw_describe_op(x, stuck, b);
		nw_buf_printf(b, " (%s for " NW_AGE ")", nw_op_state_name(stuck->state, sb));
		put_site(p, stuck, b);
		ended_state(x, p, stuck, b);
		age = nw_age(p, stuck->enqueue_ns);
	} else if (last) {
		nw_buf_puts(b, "last NCCL call ");
		nw_describe_op(x, last, b);
		nw_buf_printf(b, " (%s)", nw_op_state_name(last->state, sb));
		put_site(p, last, b);
		ended_state(x, p, last, b);
	} else {
		nw_buf_puts(b, "no NCCL op recorded");
	}
	if (!stuck) {
		uint64_t idle = nw_age(p, p->last_activity_ns);
		if (idle > x->timeout_ns) {
			nw_buf_puts(b, "; idle: no NCCL call for " NW_AGE);
			age = idle;
		}
	}
	if (p->alive == 0)
		nw_buf_puts(b, (p->hdr.flags & NW_SEG_F_EXITED) ? "; exited" : "; process gone");
	else if (p->hdr.flags & NW_SEG_F_EXITED)
		nw_buf_puts(b, p->alive > 0 ? "; exiting" : "; exited");
	if ((p->hdr.flags & (NW_SEG_F_EXITED | NW_SEG_F_EXIT_STATUS)) == (NW_SEG_F_EXITED | NW_SEG_F_EXIT_STATUS))
		nw_buf_printf(b, " with status %d", (int)p->hdr.exit_status);
	if (with_stack) {
		const struct nw_thread_stack *t = nw_main_thread(p);
		if (t)
			nw_buf_thread(b, t, "main thread", x->job->native);
	}
	return age;
}

void nw_eg_where(struct nw_jctx *x, struct nw_egroups *eg, const struct nw_proc *p, const char *prefix,
                 int with_stack)
{
	struct nw_buf t = { 0 };
	if (prefix)
		nw_buf_puts(&t, prefix);
	uint64_t age = nw_where(x, p, &t, with_stack);
	if (t.s && !t.oom)
		nw_eg_add(x, eg, p, t.s, age);
	else
		x->oom = 1;
	nw_buf_free(&t);
}

void nw_where_component(struct nw_jctx *x, struct nw_vwork *w, uint32_t scc)
{
	struct nw_egroups eg = { 0 };
	for (uint32_t n = 0; n < x->g.nprocs && !x->oom; n++)
		if (x->g.scc[n] == scc)
			nw_eg_where(x, &eg, x->job->procs[n], NULL, 1);
	nw_eg_flush(x, w, &eg, 8);
}
