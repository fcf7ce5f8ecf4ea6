/* p2p_words: the words of verdicts_p2p.c's facts (facts.h's NW_F_P2P_*):
 * P2P_UNMATCHED, a send or receive whose other half the peer never posted
 * (or posted to the wrong peer), and P2P_DEADLOCK, a cycle of processes
 * waiting for each other's send/receive, said step by step. */
#include "words_int.h"

#include <inttypes.h>
#include <stdio.h>

/* The member at comm rank r of v: its process's label, or "comm rank r"
 * and what follows it (no_file). */
static const char *member_label(const struct nw_comm_view *v, int32_t r, const char *no_file, char *lb, size_t n)
{
	const struct nw_proc *p = r >= 0 && r < v->nranks ? v->members[r].proc : NULL;
	if (p)
		return nw_proc_label(p, lb);
	snprintf(lb, n, "comm rank %d%s", (int)r, no_file);
	return lb;
}

/* The peer an op of a pair names (its root). */
static const char *peer_label(const struct nw_fact *f, char *lb, size_t n)
{
	return member_label(f->view, f->op->root, " (no file)", lb, n);
}

static const char *orphan_label(const struct nw_fact *f, char *lb, size_t n)
{
	return member_label(f->view, (int32_t)(uint32_t)f->n, "", lb, n);
}

void nw_say_PROC_AT(struct nw_buf *b, const struct nw_fact *f)
{
	char lb[128];
	nw_buf_printf(b, "%s: ", nw_proc_label(f->proc, lb));
}

void nw_say_P2P_OP(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF], cb[128], wl[128], cl[128];
	nw_buf_printf(b, "%s's %s #%" PRIu64 " %s %s on %s", nw_proc_label(f->proc, wl), nw_op_kind_name(f->op->kind, kb),
	              f->op->seq, f->op->kind == NW_OP_SEND ? "to" : "from",
	              member_label(f->view, (int32_t)(uint32_t)f->n, " (no file)", cl, sizeof cl),
	              nw_comm_label(f->view->id, f->view->name, cb));
}

void nw_say_P2P_PENDING(struct nw_buf *b, const struct nw_fact *f)
{
	char ab[32];
	nw_buf_printf(b, " is pending for %s", nw_fmt_age(f->n, ab));
}

void nw_say_P2P_REPLAY_PENDING(struct nw_buf *b, const struct nw_fact *f)
{
	char ab[32];
	nw_buf_printf(b, " in replay %" PRIu64 " of its graph is pending for %s", f->n, nw_fmt_age(f->seq, ab));
}

void nw_say_P2P_NEVER(struct nw_buf *b, const struct nw_fact *f)
{
	char cl[128], wl[128];
	int send = f->op->kind == NW_OP_SEND;
	nw_buf_printf(b, ", which %s never %s (it posted %s %s up to #%" PRIu64 ")", peer_label(f, cl, sizeof cl),
	              send ? "received" : "sent", send ? "receives from" : "sends to", nw_proc_label(f->proc, wl), f->seq);
}

void nw_say_P2P_WRONG_FROM(struct nw_buf *b, const struct nw_fact *f)
{
	char cl[128], wl[128], ol[128];
	nw_buf_printf(b, ", which %s never sent; %s received from the wrong peer: %s's send to it "
	              "completed (eager, into its buffer) and it never received it", peer_label(f, cl, sizeof cl),
	              nw_proc_label(f->proc, wl), orphan_label(f, ol, sizeof ol));
}

void nw_say_P2P_WRONG_TO(struct nw_buf *b, const struct nw_fact *f)
{
	char cl[128], wl[128], ol[128];
	peer_label(f, cl, sizeof cl);
	orphan_label(f, ol, sizeof ol);
	nw_buf_printf(b, ", which %s never sent (it posted sends to %s up to #%" PRIu64 "); %s sent to the "
	              "wrong peer: its send to %s completed (eager) and %s never received it", cl,
	              nw_proc_label(f->proc, wl), f->seq, cl, ol, ol);
}

void nw_say_P2P_WRONG_TO_LATE(struct nw_buf *b, const struct nw_fact *f)
{
	char cl[128], ol[128];
	peer_label(f, cl, sizeof cl);
	orphan_label(f, ol, sizeof ol);
	nw_buf_printf(b, ", matched only by a send %s posted later behind its own stuck work; %s sent to "
	              "the wrong peer: its send to %s completed (eager, into %s's buffer) and %s never "
	              "received it", cl, cl, ol, ol, ol);
}

void nw_say_P2P_INSTEAD(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "; instead ");
}

void nw_say_P2P_MISDIRECTED(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "misdirected: ");
}

void nw_say_P2P_EAGER_SEND(struct nw_buf *b, const struct nw_fact *f)
{
	char cl[128], ol[128], cb[128];
	const struct nw_proc *o = f->view->members[(int32_t)(uint32_t)f->seq].proc;
	nw_proc_label(o, ol);
	nw_buf_printf(b, "misdirected: %s's Send #%" PRIu64 " to %s on %s COMPLETED (eager, into %s's buffer), which %s "
	              "never received", nw_proc_label(f->proc, cl), f->n, ol,
	              nw_comm_label(f->view->id, f->view->name, cb), ol, ol);
}

void nw_say_P2P_EAGER_RECVS(struct nw_buf *b, const struct nw_fact *f)
{
	char cl[128];
	nw_buf_printf(b, " (it posted receives from %s up to #%" PRIu64 ")", nw_proc_label(f->proc, cl), f->n);
}

void nw_say_P2P_WAITER_OP(struct nw_buf *b, const struct nw_fact *f)
{
	char wl[128], kb[NW_NAME_BUF], sb[NW_NAME_BUF], ab[32];
	nw_buf_printf(b, "%s: %s #%" PRIu64 " %s for %s", nw_proc_label(f->proc, wl), nw_op_kind_name(f->op->kind, kb),
	              f->op->seq, nw_op_state_name(f->op->state, sb), nw_fmt_age(f->n, ab));
}

void nw_say_P2P_WAITER_REPLAY(struct nw_buf *b, const struct nw_fact *f)
{
	char wl[128], kb[NW_NAME_BUF], sb[NW_NAME_BUF], ab[32];
	nw_buf_printf(b, "%s: %s #%" PRIu64 " in replay %" PRIu64 " of its graph, %s for %s", nw_proc_label(f->proc, wl),
	              nw_op_kind_name(f->op_kind, kb), f->seq, f->op->seq, nw_op_state_name(f->op->state, sb),
	              nw_fmt_age(f->n, ab));
}

void nw_say_P2P_NOFILE(struct nw_buf *b, const struct nw_fact *f)
{
	char cb[128];
	nw_buf_printf(b, "comm rank %d of %s: no file", (int)(int32_t)(uint32_t)f->n,
	              nw_comm_label(f->view->id, f->view->name, cb));
}

void nw_say_P2P_DEADLOCK_HEAD(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "deadlock: ");
}

void nw_say_P2P_STEP_SEP(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "; ");
}

void nw_say_P2P_STEPS_MORE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "; ... (%" PRIu64 " steps)", f->n);
}

void nw_say_P2P_STEP(struct nw_buf *b, const struct nw_fact *f)
{
	char fl[128];
	nw_buf_printf(b, "%s waits in ", nw_proc_label(f->proc, fl));
	if (f->op)
		nw_say_op(b, f->op, f->view);
	else
		nw_buf_puts(b, "an op");
}

void nw_say_P2P_STEP_UNSTARTED(struct nw_buf *b, const struct nw_fact *f)
{
	char tl[128];
	nw_proc_label(f->proc, tl);
	nw_buf_printf(b, ", which %s posted but has not started: it waits behind %s's earlier work on its stream", tl, tl);
}

void nw_say_P2P_STEP_NEVER(struct nw_buf *b, const struct nw_fact *f)
{
	char tl[128];
	nw_buf_printf(b, ", which %s never %s (posted up to #%" PRIu64 ")", nw_proc_label(f->proc, tl),
	              f->op && f->op->kind == NW_OP_SEND ? "received" : "sent", f->n);
}

void nw_say_P2P_STEP_COLL(struct nw_buf *b, const struct nw_fact *f)
{
	char tl[128];
	nw_buf_printf(b, ", which %s never called (coll_enqueued %" PRIu64 ")", nw_proc_label(f->proc, tl), f->n);
}

void nw_say_P2P_STEP_INIT(struct nw_buf *b, const struct nw_fact *f)
{
	char tl[128];
	nw_buf_printf(b, ", which %s never entered", nw_proc_label(f->proc, tl));
}

void nw_say_P2P_STEP_HELD(struct nw_buf *b, const struct nw_fact *f)
{
	char tl[128];
	nw_buf_printf(b, ", which %s holds up", nw_proc_label(f->proc, tl));
}

void nw_say_P2P_DEADLOCK_HINT(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "post sends and receives that depend on each other inside one ncclGroupStart/ncclGroupEnd, "
	            "or order them so that every send meets a posted receive");
}
