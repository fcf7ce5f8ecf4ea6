/* where_words: the words shared by the families that group evidence
 * across ranks (decide/findings.c's nw_fg_*) and say where a process is
 * (nw_fact_where): "ranks 0-3: " before a group's line, "... N more
 * groups", "in AllReduce #5 on comm X (STARTED for 2.0 s); main thread:
 * ...", and an op as "AllReduce #5 on comm X" (nw_say_op). */
#include "words_int.h"

#include <inttypes.h>

/* "; WHAT in f (a.py:1) < g (a.py:9)" for a Python thread (its innermost
 * application frames), else "; WHAT: frame0 < frame1 ...". */
static void say_thread(struct nw_buf *b, const struct nw_thread_stack *t, const char *what, int native)
{
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

void nw_say_EG_HEAD(struct nw_buf *b, const struct nw_fact *f)
{
	const struct nw_fset *s = f->set;
	if (s->ranks.n) {
		nw_buf_puts(b, s->ranks.n == 1 ? "rank " : "ranks ");
		nw_buf_rankset(b, &s->ranks);
		if (s->others)
			nw_buf_printf(b, " and %zu process%s without rank", s->others, s->others == 1 ? "" : "es");
	} else if (s->others == 1) {
		char lb[128];
		nw_buf_puts(b, nw_proc_label(s->other, lb));
	} else {
		nw_buf_printf(b, "%zu processes without rank", s->others);
	}
	nw_buf_puts(b, ": ");
}

void nw_say_EG_MORE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "... %" PRIu64 " more groups", f->n);
}

void nw_say_op(struct nw_buf *b, const struct nw_seg_op *op, const struct nw_comm_view *v)
{
	char kb[NW_NAME_BUF], cb[128];
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

void nw_say_WHERE(struct nw_buf *b, const struct nw_fact *f)
{
	static const char *const ended[4] = {
		"", "; state as it ended: the other ranks completed it",
		"; state as it ended: some other ranks completed it", "; state as it ended: no other rank completed it",
	};
	const struct nw_proc *p = f->proc;
	const struct nw_seg_op *op = f->op;
	char sb[NW_NAME_BUF];
	if (op) {
		int stuck = (f->n & NW_WH_STUCK) != 0;
		nw_buf_puts(b, !stuck ? "last NCCL call " : op->state == NW_ST_INIT_ENTERED ? "inside " : "in ");
		nw_say_op(b, op, f->view);
		if (stuck)
			nw_buf_printf(b, " (%s for " NW_AGE ")", nw_op_state_name(op->state, sb));
		else
			nw_buf_printf(b, " (%s)", nw_op_state_name(op->state, sb));
		const char *site = nw_op_site(p, op);
		if (site)
			nw_buf_printf(b, ", issued at %s", site);
		nw_buf_puts(b, ended[NW_WH_ENDED(f->n)]);
	} else {
		nw_buf_puts(b, "no NCCL op recorded");
	}
	if (f->n & NW_WH_IDLE)
		nw_buf_puts(b, "; idle: no NCCL call for " NW_AGE);
	if (p->alive == 0)
		nw_buf_puts(b, (p->hdr.flags & NW_SEG_F_EXITED) ? "; exited" : "; process gone");
	else if (p->hdr.flags & NW_SEG_F_EXITED)
		nw_buf_puts(b, p->alive > 0 ? "; exiting" : "; exited");
	if ((p->hdr.flags & (NW_SEG_F_EXITED | NW_SEG_F_EXIT_STATUS)) == (NW_SEG_F_EXITED | NW_SEG_F_EXIT_STATUS))
		nw_buf_printf(b, " with status %d", (int)p->hdr.exit_status);
	if (f->n & NW_WH_STACK) {
		const struct nw_thread_stack *t = nw_main_thread(p);
		if (t)
			say_thread(b, t, "main thread", f->job && f->job->native);
	}
}

void nw_say_COMM_NOFILE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, f->set->ranks.n == 1 ? "comm rank " : "comm ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_puts(b, ": no file (their global ranks are not known)");
}

void nw_say_RANKS(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, f->set->ranks.n == 1 ? "rank " : "ranks ");
	nw_buf_rankset(b, &f->set->ranks);
}
