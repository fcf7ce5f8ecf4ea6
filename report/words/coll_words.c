/* coll_words: the words of verdicts_coll.c's facts (facts.h's NW_F_MM_*,
 * NW_F_SB_*): MISMATCH, ranks that disagree on a collective (its kind,
 * count, datatype, root or redop: nw_coll_sig), the minority against the
 * majority, or both sides of a tie nothing decides; STREAM_BLOCKED, ranks
 * whose collective never started, what their streams are busy with;
 * TRANSPORT_STALL (NW_F_TS_*), a collective every rank started and none
 * completed, or an op no rule explains; MISSING_RANK (NW_F_MR_*) at a
 * comm's frontier, ranks that never called its op (or ended inside it,
 * or only captured it) and ranks that went past the others' end. */
#include "words_int.h"

#include <inttypes.h>
#include <string.h>

/* An op's signature (none: all zero, as decide's empty group). */
static struct nw_coll_sig sig_of(const struct nw_seg_op *op)
{
	struct nw_coll_sig s;
	if (op)
		return nw_coll_sig(op);
	memset(&s, 0, sizeof s);
	return s;
}

static int dtype_size(int dt)
{
	static const int size[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };
	return dt >= 0 && dt < (int)(sizeof size / sizeof size[0]) ? size[dt] : 0;
}

static const char *redop_word(int32_t redop, char *rb)
{
	return redop >= 5 ? "premulsum" : nw_redop_name(redop, rb);
}

static void say_ranks(struct nw_buf *b, const struct nw_fset *s)
{
	nw_buf_puts(b, s->ranks.n == 1 ? "rank " : "ranks ");
	nw_buf_rankset(b, &s->ranks);
}

/* "AllReduce count 8 float32 root 0 sum" */
static void sig_text(struct nw_buf *b, const struct nw_coll_sig *s)
{
	char kb[NW_NAME_BUF], db[NW_NAME_BUF], rb[NW_NAME_BUF];
	nw_buf_printf(b, "%s count %" PRIu64 " %s", nw_op_kind_name(s->kind, kb), s->count, nw_datatype_name(s->dtype, db));
	if (s->root >= 0)
		nw_buf_printf(b, " root %d", (int)s->root);
	if (s->redop >= 0)
		nw_buf_printf(b, " %s", redop_word(s->redop, rb));
}

/* The minority's op, after "RANKS ": how it differs (what). */
void nw_say_MM_CALLED(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF], db[NW_NAME_BUF], rb[NW_NAME_BUF], cb[128];
	struct nw_coll_sig s = sig_of(f->op);
	const char *comm = nw_comm_label(f->view->id, f->view->name, cb);
	say_ranks(b, f->set);
	if (f->n == NW_MM_OP) {
		nw_buf_printf(b, " called %s", nw_op_kind_name(s.kind, kb));
		if (s.root >= 0)
			nw_buf_printf(b, " (root %d)", (int)s.root);
		nw_buf_printf(b, " as #%" PRIu64 " on %s (%d ranks)", f->seq, comm, (int)f->view->nranks);
		return;
	}
	nw_buf_printf(b, " called %s #%" PRIu64 " on %s (%d ranks) with ", nw_op_kind_name(s.kind, kb), f->seq, comm,
	              (int)f->view->nranks);
	if (f->n == NW_MM_COUNT)
		nw_buf_printf(b, "count %" PRIu64, s.count);
	else if (f->n == NW_MM_DTYPE)
		nw_buf_printf(b, "datatype %s (%d bytes)", nw_datatype_name(s.dtype, db), dtype_size(s.dtype));
	else if (f->n == NW_MM_ROOT)
		nw_buf_printf(b, "root %d", (int)s.root);
	else
		nw_buf_printf(b, "redop %s", redop_word(s.redop, rb));
}

/* The majority's op (or the other side's), after "RANKS ". */
static void say_major(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF], db[NW_NAME_BUF], rb[NW_NAME_BUF];
	struct nw_coll_sig s = sig_of(f->op);
	say_ranks(b, f->set);
	if (f->n == NW_MM_OP) {
		nw_buf_printf(b, " called %s", nw_op_kind_name(s.kind, kb));
		if (s.root >= 0)
			nw_buf_printf(b, " (root %d)", (int)s.root);
	} else if (f->n == NW_MM_COUNT)
		nw_buf_printf(b, " used count %" PRIu64, s.count);
	else if (f->n == NW_MM_DTYPE)
		nw_buf_printf(b, " used %s (%d bytes)", nw_datatype_name(s.dtype, db), dtype_size(s.dtype));
	else if (f->n == NW_MM_ROOT)
		nw_buf_printf(b, " used root %d", (int)s.root);
	else
		nw_buf_printf(b, " used %s", redop_word(s.redop, rb));
}

void nw_say_MM_WHERE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, " where ");
	say_major(b, f);
}

void nw_say_MM_WHILE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, " while ");
	say_major(b, f);
}

void nw_say_MM_WAIT(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "; they wait in it");
}

void nw_say_MM_BY_HISTORY(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, " (no majority: the ops every rank issued alike before repeat, and they give this op here)");
}

void nw_say_MM_TIE(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, "cannot tell which of ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_printf(b, " deviates (no majority, and the comm's history does not say which op the program "
	              "issues at #%" PRIu64 "): ", f->seq);
}

void nw_say_MM_OP(struct nw_buf *b, const struct nw_fact *f)
{
	static const char *const side[] = { "majority", "as in the history", "one side", "differs in " };
	static const char *const what[] = { "op", "count", "datatype", "root", "redop" };
	struct nw_coll_sig s = sig_of(f->op);
	unsigned sd = f->n & 0xf, wh = (f->n >> 4) & 0xf;
	sig_text(b, &s);
	nw_buf_printf(b, " (%s%s)", side[sd < 4 ? sd : 3], sd == NW_MM_DIFFERS && wh < 5 ? what[wh] : "");
}

void nw_say_MM_STATE(struct nw_buf *b, const struct nw_fact *f)
{
	char sb[NW_NAME_BUF];
	nw_buf_printf(b, ", %s", nw_op_state_name(f->op->state, sb));
	const char *site = f->n ? nw_op_site(f->proc, f->op) : NULL;
	if (site)
		nw_buf_printf(b, ", issued at %s", site);
}

/* ---- STREAM_BLOCKED ---- */

/* "AllReduce #5", or for a graph launch "replay 3 of the graph holding
 * AllReduce #5" (seq: the replay; root and redop: the graph's first op). */
static void op_words(struct nw_buf *b, const struct nw_seg_op *op)
{
	char kb[NW_NAME_BUF];
	if (op->kind == NW_OP_GRAPH_LAUNCH)
		nw_buf_printf(b, "replay %" PRIu64 " of the graph holding %s #%" PRId32, op->seq,
		              nw_op_kind_name((unsigned)op->redop, kb), op->root);
	else
		nw_buf_printf(b, "%s #%" PRIu64, nw_op_kind_name(op->kind, kb), op->seq);
}

/* "OP on COMM (N ranks)": the blocked op. */
static void blocked_op(struct nw_buf *b, const struct nw_fact *f)
{
	char cb[128];
	op_words(b, f->op);
	nw_buf_printf(b, " on %s (%d ranks)", nw_comm_label(f->view->id, f->view->name, cb), (int)f->view->nranks);
}

void nw_say_SB_ONE(struct nw_buf *b, const struct nw_fact *f)
{
	char lb[128], ab[32];
	nw_buf_printf(b, "%s's ", nw_proc_label(f->proc, lb));
	blocked_op(b, f);
	nw_buf_printf(b, " has not started in %s: ", nw_fmt_age(f->n, ab));
}

void nw_say_SB_MANY(struct nw_buf *b, const struct nw_fact *f)
{
	char lb[128], ab[32];
	nw_buf_puts(b, "ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	nw_buf_puts(b, ": ");
	blocked_op(b, f);
	nw_buf_printf(b, " never started (for %s on %s; ", nw_fmt_age(f->n, ab), nw_proc_label(f->proc, lb));
}

void nw_say_SB_WHY(struct nw_buf *b, const struct nw_fact *f)
{
	char cb[128], ab[32], sb[NW_NAME_BUF];
	const struct nw_seg_op *prev = f->op;
	if (prev) {
		nw_buf_puts(b, "its stream is busy with ");
		op_words(b, prev);
		nw_buf_printf(b, " on %s (%s for %s)", nw_comm_label(prev->comm_id, f->view ? f->view->name : NULL, cb),
		              nw_op_state_name(prev->state, sb),
		              nw_fmt_age(nw_age(f->proc, prev->start_ns ? prev->start_ns : prev->enqueue_ns), ab));
	} else
		nw_buf_printf(b, "no earlier NCCL op is pending on its stream 0x%" PRIx64
		              ": earlier work that is not NCCL (a long or hung kernel, a host callback)", f->n);
}

void nw_say_SB_WHY_IN(struct nw_buf *b, const struct nw_fact *f)
{
	nw_say_SB_WHY(b, f);
	nw_buf_puts(b, ")");
}

void nw_say_SB_IN(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_puts(b, f->set->ranks.n == 1 ? "; rank " : "; ranks ");
	nw_buf_rankset(b, &f->set->ranks);
	/* a send/receive's peer waits in the other half */
	nw_buf_printf(b, " wait%s %s it", f->set->ranks.n == 1 ? "s" : "", NW_OP_IS_P2P(f->op->kind) ? "for" : "in");
}

void nw_say_SB_STREAM(struct nw_buf *b, const struct nw_fact *f)
{
	char cb[128], sb[NW_NAME_BUF];
	nw_buf_printf(b, "stream 0x%" PRIx64 " ", f->n);
	if (f->op) {
		nw_buf_puts(b, "busy with ");
		op_words(b, f->op);
		nw_buf_printf(b, " on %s (%s)", nw_comm_label(f->op->comm_id, f->view ? f->view->name : NULL, cb),
		              nw_op_state_name(f->op->state, sb));
	} else
		nw_buf_puts(b, "has no earlier NCCL op pending");
	nw_buf_puts(b, "; ");
}

/* ---- TRANSPORT_STALL ---- */

void nw_say_TS_ALL(struct nw_buf *b, const struct nw_fact *f)
{
	char cb[128], kb[NW_NAME_BUF], ab[32];
	nw_buf_printf(b,
	              "every rank of %s (%d ranks) started %s #%" PRIu64 " and none completed it in %s: "
	              "the transfer itself is stuck (communicator or link, not a rank)",
	              nw_comm_label(f->view->id, f->view->name, cb), (int)f->view->nranks,
	              nw_op_kind_name(f->op_kind, kb), f->seq, nw_fmt_age(f->n, ab));
}

void nw_say_TS_STARTED(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "STARTED for " NW_AGE ", not completed");
}

void nw_say_TS_VERSIONS(struct nw_buf *b, const struct nw_fact *f)
{
	char nb[NW_NAME_BUF], db[NW_NAME_BUF], t[256];
	const struct nw_proc *p = f->proc;
	snprintf(t, sizeof t, "NCCL %s, CUDA driver %s, host %s", nw_nccl_version_str(p->hdr.nccl_version, nb),
	         nw_cuda_version_str(p->hdr.cuda_driver_version, db), p->hdr.host);
	nw_buf_puts(b, t);
}

/* How an op nobody explains is named (its verdict's key): a collective by
 * kind, number and comm, a replay by its graph's first op, a send/receive
 * by kind and comm (v: its comm's view, or NULL). */
static void stuck_op(struct nw_buf *b, const struct nw_seg_op *op, const struct nw_comm_view *v)
{
	char kb[NW_NAME_BUF], cb[128], t[256];
	if (NW_OP_IS_COLL(op->kind))
		snprintf(t, sizeof t, "%s #%" PRIu64 " on %s", nw_op_kind_name(op->kind, kb), op->seq,
		         nw_comm_label(op->comm_id, v ? v->name : NULL, cb));
	else if (op->kind == NW_OP_GRAPH_LAUNCH)
		snprintf(t, sizeof t, "a replay of a CUDA graph whose first op is a %s on %s",
		         nw_op_kind_name((uint16_t)op->redop, kb), nw_comm_label(op->comm_id, v ? v->name : NULL, cb));
	else
		snprintf(t, sizeof t, "%s on %s", nw_op_kind_name(op->kind, kb), nw_comm_label(op->comm_id, v ? v->name : NULL, cb));
	nw_buf_puts(b, t);
}

void nw_say_TS_STUCK(struct nw_buf *b, const struct nw_fact *f)
{
	say_ranks(b, f->set);
	nw_buf_printf(b, " %s stuck in ", f->set->ranks.n == 1 ? "is" : "are");
	stuck_op(b, f->op, f->view);
	nw_buf_puts(b, " and no rank was found missing, mismatched or failed: the transfer does not finish "
	            "(communicator or link)");
}

void nw_say_TS_DONE(struct nw_buf *b, const struct nw_fact *f)
{
	say_ranks(b, f->set);
	nw_buf_puts(b, ": completed it");
}

void nw_say_TS_IN(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF], sb[NW_NAME_BUF], pb[128];
	const struct nw_seg_op *op = f->op;
	nw_buf_puts(b, "in ");
	if (f->n != NW_FACT_OTHER) {
		const struct nw_proc *peer = f->view->members[op->root].proc;
		nw_buf_printf(b, "%s #%" PRIu64 " %s %s", nw_op_kind_name(op->kind, kb), op->seq,
		              op->kind == NW_OP_SEND ? "to" : "from", peer ? nw_proc_label(peer, pb) : "?");
		if (peer)
			nw_buf_printf(b, " (posted on the other side: %s %" PRIu64 ")",
			              op->kind == NW_OP_SEND ? "recv_enqueued" : "send_enqueued", f->n);
	} else
		stuck_op(b, op, f->view);
	nw_buf_printf(b, ", %s for " NW_AGE, nw_op_state_name(op->state, sb));
}

/* ---- MISSING_RANK at a comm's frontier ---- */

/* "KIND #n on COMM (N ranks)" */
static void frontier_op(struct nw_buf *b, const struct nw_fact *f)
{
	char kb[NW_NAME_BUF], cb[128];
	nw_buf_printf(b, "%s #%" PRIu64 " on %s (%d ranks)", nw_op_kind_name(f->op_kind, kb), f->seq,
	              nw_comm_label(f->view->id, f->view->name, cb), (int)f->view->nranks);
}

void nw_say_MR_PAST(struct nw_buf *b, const struct nw_fact *f)
{
	say_ranks(b, f->set);
	nw_buf_puts(b, " called ");
	frontier_op(b, f);
	nw_buf_puts(b, " after ");
}

void nw_say_MR_PAST_DONE(struct nw_buf *b, const struct nw_fact *f)
{
	say_ranks(b, f->set);
	if (f->n == 0)
		nw_buf_printf(b, " stopped at #%" PRIu64 ", issued into a CUDA graph: the minority went on without "
		              "them (a graph it captured but never launched?)", f->seq);
	else if (f->n == 1)
		nw_buf_printf(b, " stopped at #%" PRIu64 " and wait for nothing in NCCL: the minority went one op past "
		              "the others (an extra step?)", f->seq);
	else
		nw_buf_printf(b, " had finished with it (their last: #%" PRIu64 "): nobody else will call it", f->seq);
}

void nw_say_MR_PAST_IN(struct nw_buf *b, const struct nw_fact *f)
{
	(void)f;
	nw_buf_puts(b, "issued it past where the others stopped; ");
}

void nw_say_MR_STOPPED(struct nw_buf *b, const struct nw_fact *f)
{
	char sb[NW_NAME_BUF];
	if ((f->n & 0xff) == 0)
		nw_buf_printf(b, "stopped after #%" PRIu64 " (COMPLETED), nothing pending since; ", f->seq);
	else if ((f->n & 0xff) == 1)
		nw_buf_printf(b, "%s the comm after #%" PRIu64 "; ", nw_comm_state_name((unsigned)(f->n >> 8), sb), f->seq);
	else
		nw_buf_printf(b, "issued #%" PRIu64 " into a CUDA graph (CAPTURED: a graph's launch is not "
		              "recorded; it may wait inside it) and made no NCCL call since; ", f->seq);
}

void nw_say_MR_SUM(struct nw_buf *b, const struct nw_fact *f)
{
	static const char *const verb[] = { "never called", "ended inside", "only captured (never launched)" };
	say_ranks(b, f->set);
	nw_buf_printf(b, " %s ", verb[f->n < 3 ? f->n : 0]);
	frontier_op(b, f);
	nw_buf_puts(b, "; ");
}

void nw_say_MR_WAIT(struct nw_buf *b, const struct nw_fact *f)
{
	say_ranks(b, f->set);
	nw_buf_printf(b, " wait%s in it", f->set->ranks.n == 1 ? "s" : "");
}

void nw_say_MR_NOFILE_N(struct nw_buf *b, const struct nw_fact *f)
{
	nw_buf_printf(b, "; %u rank%s of it ha%s no file", (unsigned)f->n, f->n == 1 ? "" : "s", f->n == 1 ? "s" : "ve");
}

void nw_say_MR_WAIT_IN(struct nw_buf *b, const struct nw_fact *f)
{
	char ab[32];
	say_ranks(b, f->set);
	nw_buf_printf(b, " wait%s in ", f->set->ranks.n == 1 ? "s" : "");
	frontier_op(b, f);
	nw_buf_printf(b, " for %s; ", nw_fmt_age(f->n, ab));
}

void nw_say_MR_UNKNOWN(struct nw_buf *b, const struct nw_fact *f)
{
	if (f->set) {
		say_ranks(b, f->set);
		nw_buf_printf(b, " ha%s no file", f->set->ranks.n == 1 ? "s" : "ve");
	} else
		nw_buf_printf(b, "%u of its ranks have no file", (unsigned)f->n);
	nw_buf_puts(b, " (they may never have called it)");
}

void nw_say_MR_OUT(struct nw_buf *b, const struct nw_fact *f)
{
	char sb[NW_NAME_BUF];
	switch (f->n & 0xff) {
	case 0:
		nw_buf_printf(b, "never called it: it %s the comm after #%" PRIu64 "; ",
		              nw_comm_state_name((unsigned)(f->n >> 8), sb), f->seq);
		break;
	case 1:
		nw_buf_puts(b, "issued it inside ncclGroupStart, but its thread never called the group's "
		            "ncclGroupEnd, so NCCL never launched it; ");
		break;
	case 2:
		nw_buf_printf(b, "never called it (coll_enqueued %" PRIu64 "); ", f->seq);
		break;
	case 3:
		nw_buf_puts(b, "called it but ended before completing it; ");
		break;
	default:
		nw_buf_puts(b, "captured it into a CUDA graph (it runs only when the graph is launched) and went on; ");
	}
}

void nw_say_MR_IN(struct nw_buf *b, const struct nw_fact *f)
{
	char sb[NW_NAME_BUF];
	if (f->n)
		nw_buf_printf(b, "in it (%s for " NW_AGE ")", nw_op_state_name((unsigned)(f->n - 1), sb));
	else
		nw_buf_puts(b, "in it (STARTED)");
}

/* ---- IDLE, HEALTHY ---- */

void nw_say_IDLE(struct nw_buf *b, const struct nw_fact *f)
{
	char ab[32];
	say_ranks(b, f->set);
	nw_buf_printf(b, " created their communicators but never called a collective; no NCCL call for %s",
	              nw_fmt_age(f->n, ab));
}

void nw_say_HEALTHY(struct nw_buf *b, const struct nw_fact *f)
{
	size_t n = f->job->nprocs;
	nw_buf_printf(b, "no stall: %zu process%s (%zu running or on other hosts), %zu op%s in flight, ", n,
	              n == 1 ? "" : "es", (size_t)f->n, (size_t)f->seq, f->seq == 1 ? "" : "s");
}

void nw_say_HEALTHY_TIMEOUT(struct nw_buf *b, const struct nw_fact *f)
{
	char ab[32];
	nw_buf_printf(b, "none older than the timeout (%s)", nw_fmt_age(f->n, ab));
}

void nw_say_HEALTHY_NOFILE(struct nw_buf *b, const struct nw_fact *f)
{
	say_ranks(b, f->set);
	nw_buf_printf(b, ": no file (world size %d)", (int)f->job->world_size);
}
