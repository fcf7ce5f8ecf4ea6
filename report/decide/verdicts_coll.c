/* verdicts_coll: the collective stream of each communicator, lined up by
 * sequence number across its ranks.
 *
 *   MISMATCH         ranks disagree on collective #n (kind, count, datatype,
 *                    root of rooted ops, redop of reductions); the earliest
 *                    such #n in the records kept; the minority is blamed.
 *   MISSING_RANK     at the comm's frontier #n (the oldest collective some
 *                    rank has been inside longer than the timeout), ranks
 *                    whose coll_enqueued < n never issued it: they are the
 *                    culprits, the ranks inside it wait.
 *   TRANSPORT_STALL  every rank started #n, none completed it, nothing else
 *                    explains it: the comm/link is blamed.
 *   STREAM_BLOCKED   a rank's #n was enqueued but never started: its
 *                    stream is busy with earlier work (decided after the
 *                    graph: only if that rank waits for nobody else).
 *   IDLE / HEALTHY   the fallbacks; plus stuck ops no verdict explains.
 *
 * Wait-for edges: a rank stuck in #m waits for every rank whose
 * coll_enqueued < m (through one junction per distinct m, chained, so the
 * edges stay linear in the comm size), and for the ranks that hold #n up
 * (not started, failed, mismatched). */
#include "decide.h"
#include "majority.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- signatures: what every rank must agree on ---- */

struct sig {
	uint64_t count;
	uint16_t kind;
	uint8_t dtype;
	int32_t root;                    /* rooted ops, else -1 */
	int32_t redop;                   /* reductions (PreMulSum ops as one class: 5), else -1 */
};

static int rooted(uint16_t k)
{
	return k == NW_OP_BROADCAST || k == NW_OP_BCAST || k == NW_OP_REDUCE || k == NW_OP_GATHER ||
	       k == NW_OP_SCATTER;
}

static int reduction(uint16_t k)
{
	return k == NW_OP_ALLREDUCE || k == NW_OP_REDUCE || k == NW_OP_REDUCESCATTER;
}

static struct sig op_sig(const struct nw_seg_op *op)
{
	struct sig s;
	memset(&s, 0, sizeof s);
	/* ncclBcast is ncclBroadcast in place: the same collective. */
	s.kind = op->kind == NW_OP_BCAST ? NW_OP_BROADCAST : op->kind;
	s.count = op->count;
	s.dtype = op->datatype;
	s.root = rooted(op->kind) ? op->root : -1;
	s.redop = reduction(op->kind) ? (op->redop >= 5 ? 5 : op->redop) : -1;
	return s;
}

static int sig_eq(const struct sig *a, const struct sig *b)
{
	return a->kind == b->kind && a->count == b->count && a->dtype == b->dtype && a->root == b->root &&
	       a->redop == b->redop;
}

static int dtype_size(int dt)
{
	static const int size[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };
	return dt >= 0 && dt < (int)(sizeof size / sizeof size[0]) ? size[dt] : 0;
}

static void sig_text(const struct sig *s, struct nw_buf *b)
{
	char kb[NW_NAME_BUF], db[NW_NAME_BUF], rb[NW_NAME_BUF];
	nw_buf_printf(b, "%s count %" PRIu64 " %s", nw_op_kind_name(s->kind, kb), s->count,
	              nw_datatype_name(s->dtype, db));
	if (s->root >= 0)
		nw_buf_printf(b, " root %d", (int)s->root);
	if (s->redop >= 0)
		nw_buf_printf(b, " %s", s->redop >= 5 ? "premulsum" : nw_redop_name(s->redop, rb));
}

#define MAX_SIGS 4

struct seqent {
	uint64_t seq;
	struct sig s[MAX_SIGS];
	uint32_t nsig;
	UT_hash_handle hh;
};

/* The earliest seq at which members disagree, 0 none. */
static uint64_t find_mismatch(struct nw_jctx *x, const struct nw_comm_view *v)
{
	struct seqent *seqs = NULL, *e, *et;
	uint64_t first = 0;
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_member *m = &v->members[r];
		if (!m->proc)
			continue;
		uint32_t *idx;
		size_t n;
		nw_member_ops(x, m, &idx, &n);
		for (size_t k = 0; k < n; k++) {
			const struct nw_seg_op *op = &m->proc->ops[idx[k]];
			if (!NW_OP_IS_COLL(op->kind))
				break;
			if (op->state == NW_ST_DISCARDED || op->seq == 0)
				continue;
			struct sig s = op_sig(op);
			HASH_FIND(hh, seqs, &op->seq, sizeof op->seq, e);
			if (!e) {
				if (!(e = calloc(1, sizeof *e))) {
					x->oom = 1;
					break;
				}
				e->seq = op->seq;
				HASH_ADD(hh, seqs, seq, sizeof e->seq, e);
				if (nw_hash_oom_taken()) {
					free(e);
					x->oom = 1;
					break;
				}
			}
			uint32_t i = 0;
			while (i < e->nsig && !sig_eq(&e->s[i], &s))
				i++;
			if (i == e->nsig && e->nsig < MAX_SIGS)
				e->s[e->nsig++] = s;
		}
	}
	HASH_ITER(hh, seqs, e, et) {
		if (e->nsig > 1 && (!first || e->seq < first))
			first = e->seq;
		HASH_DEL(seqs, e);
		free(e);
	}
	return first;
}

/* How the minority's op (b) differs from the majority's (a): the words
 * after "RANKS called ..." and after "where RANKS ...". */
static void mismatch_words(const struct sig *a, const struct sig *b, uint64_t seq, const char *comm,
                           int32_t nranks, struct nw_buf *minor, struct nw_buf *major, const char **what)
{
	char k1[NW_NAME_BUF], k2[NW_NAME_BUF], d1[NW_NAME_BUF], d2[NW_NAME_BUF], r1[NW_NAME_BUF], r2[NW_NAME_BUF];
	if (a->kind != b->kind) {
		*what = "op";
		nw_buf_printf(minor, "called %s", nw_op_kind_name(b->kind, k2));
		if (b->root >= 0)
			nw_buf_printf(minor, " (root %d)", (int)b->root);
		nw_buf_printf(minor, " as #%" PRIu64 " on %s (%d ranks)", seq, comm, (int)nranks);
		nw_buf_printf(major, "called %s", nw_op_kind_name(a->kind, k1));
		if (a->root >= 0)
			nw_buf_printf(major, " (root %d)", (int)a->root);
		return;
	}
	nw_buf_printf(minor, "called %s #%" PRIu64 " on %s (%d ranks) with ", nw_op_kind_name(b->kind, k2), seq, comm,
	              (int)nranks);
	if (a->count != b->count) {
		*what = "count";
		nw_buf_printf(minor, "count %" PRIu64, b->count);
		nw_buf_printf(major, "used count %" PRIu64, a->count);
	} else if (a->dtype != b->dtype) {
		*what = "datatype";
		nw_buf_printf(minor, "datatype %s (%d bytes)", nw_datatype_name(b->dtype, d2), dtype_size(b->dtype));
		nw_buf_printf(major, "used %s (%d bytes)", nw_datatype_name(a->dtype, d1), dtype_size(a->dtype));
	} else if (a->root != b->root) {
		*what = "root";
		nw_buf_printf(minor, "root %d", (int)b->root);
		nw_buf_printf(major, "used root %d", (int)a->root);
	} else {
		*what = "redop";
		nw_buf_printf(minor, "redop %s", b->redop >= 5 ? "premulsum" : nw_redop_name(b->redop, r2));
		nw_buf_printf(major, "used %s", a->redop >= 5 ? "premulsum" : nw_redop_name(a->redop, r1));
	}
}

/* A tie (no group of ranks larger than every other): the comm's own
 * history decides. The ops #lo..#n-1 every member issued alike (the
 * records kept, at most HIST_MAX back) repeat with a smallest period p
 * seen at least twice; the program's op #n is then #n-p, and the one tied
 * group that issued it is the program as written. Returns that group, or
 * -1 when the history cannot tell (too short, not periodic, or no tied
 * group, or more than one, matches). Why: two ranks (or two halves)
 * disagree and neither is a majority; the step both ran alike before shows
 * which of them left it. */
#define HIST_MAX 64
static int history_pick(struct nw_jctx *x, const struct nw_comm_view *v, uint64_t seq, const struct sig *s,
                        const uint32_t *cnt, uint32_t nsig, uint32_t top)
{
	struct sig h[HIST_MAX];
	size_t nh = 0;   /* h[0] is #seq-1, h[1] #seq-2, ... */
	for (uint64_t q = seq - 1; q >= 1 && nh < HIST_MAX; q--) {
		struct sig agreed;
		int have = 0, ok = 1;
		for (int32_t r = 0; r < v->nranks && ok; r++) {
			const struct nw_member *m = &v->members[r];
			const struct nw_seg_op *op = m->proc ? nw_member_coll(x, m, q) : NULL;
			if (!op) {
				ok = 0;
				break;
			}
			struct sig t = op_sig(op);
			if (!have)
				agreed = t, have = 1;
			else if (!sig_eq(&agreed, &t))
				ok = 0;
		}
		if (!ok || !have)
			break;
		h[nh++] = agreed;
	}
	for (size_t p = 1; 2 * p <= nh; p++) {
		size_t i = p;
		while (i < nh && sig_eq(&h[i], &h[i - p]))
			i++;
		if (i < nh)
			continue;
		/* period p: #n is #n-p, that is h[p-1] */
		int pick = -1;
		for (uint32_t g = 0; g < nsig; g++) {
			if (cnt[g] != top || !sig_eq(&s[g], &h[p - 1]))
				continue;
			if (pick >= 0)
				return -1;
			pick = (int)g;
		}
		return pick;
	}
	return -1;
}

/* A MISMATCH at #seq of a comm: the members grouped by the op they
 * issued there, and which group is the program as written. */
struct mismatch {
	const struct nw_comm_view *v;
	uint64_t seq;
	int32_t n;
	uint8_t *grp;                    /* [n]: each member's group, 0xff none (no #seq) */
	struct sig s[MAX_SIGS];          /* each group's op */
	uint32_t cnt[MAX_SIGS], nsig;    /* each group's members, the groups */
	uint32_t maj;                    /* the majority's group (undecided: the first tied) */
	int by_history, undecided;       /* a tie the history decided; a tie nothing decides */
	struct nw_rankset majority, minority;
};

/* Groups the members by the op they issued at #seq (at most MAX_SIGS
 * groups: more kinds of disagreement are counted with the last). */
static void mismatch_groups(struct nw_jctx *x, struct mismatch *mm)
{
	for (int32_t r = 0; r < mm->n; r++) {
		mm->grp[r] = 0xff;
		const struct nw_member *m = &mm->v->members[r];
		const struct nw_seg_op *op = m->proc ? nw_member_coll(x, m, mm->seq) : NULL;
		if (!op)
			continue;
		struct sig t = op_sig(op);
		uint32_t i = 0;
		while (i < mm->nsig && !sig_eq(&mm->s[i], &t))
			i++;
		if (i == mm->nsig) {
			if (mm->nsig == MAX_SIGS)
				i = MAX_SIGS - 1;
			else
				mm->s[mm->nsig++] = t;
		}
		mm->grp[r] = (uint8_t)i;
		mm->cnt[i]++;
	}
}

/* The majority (majority.h); on a tie, the one the history names
 * (history_pick), else nobody: every rank of the tied groups is named,
 * "cannot tell which" (never a coin flip that may blame a rank that only
 * waits); maj is then the first tied group, the side the words describe
 * first. */
static void mismatch_majority(struct nw_jctx *x, struct mismatch *mm)
{
	uint32_t tied;
	mm->maj = nw_vote_top(mm->cnt, mm->nsig, &tied);
	if (tied > 1) {
		int h = history_pick(x, mm->v, mm->seq, mm->s, mm->cnt, mm->nsig, mm->cnt[mm->maj]);
		if (h >= 0)
			mm->maj = (uint32_t)h, mm->by_history = 1;
		else
			mm->undecided = 1;
	}
}

/* The majority's members wait (those stuck in #seq wait for the others
 * through one junction); the others are the culprits. */
static void mismatch_members(struct nw_jctx *x, struct nw_vwork *w, struct mismatch *mm)
{
	const struct nw_comm_view *v = mm->v;
	uint32_t junction = UINT32_MAX;
	for (int32_t r = 0; r < mm->n; r++) {
		const struct nw_member *m = &v->members[r];
		if (mm->grp[r] == 0xff)
			continue;
		if (mm->grp[r] == mm->maj && !mm->undecided) {
			nw_set_add(x, &mm->majority, m->proc->rank);
			const struct nw_seg_op *op = nw_member_coll(x, m, mm->seq);
			if (op && nw_op_pending(op->state)) {
				nw_verdict_waiting(x, w, m->proc);
				if (nw_age(m->proc, op->enqueue_ns) > x->timeout_ns) {
					if (junction == UINT32_MAX)
						junction = nw_graph_junction(&x->g);
					nw_graph_edge(&x->g, m->proc->job_index, junction, NW_E_BLOCK, op, v, mm->seq, 0);
				}
			}
		} else {
			nw_verdict_culprit(x, w, m->proc);
			nw_set_add(x, &mm->minority, m->proc->rank);
		}
	}
	if (junction != UINT32_MAX)
		for (int32_t r = 0; r < mm->n; r++)
			if (mm->grp[r] != 0xff && mm->grp[r] != mm->maj)
				nw_graph_edge(&x->g, junction, v->members[r].proc->job_index, NW_E_BLOCK, NULL, v, mm->seq, 0);
}

/* The summary of a tie nothing decides: both sides, "cannot tell which". */
static void undecided_words(struct nw_jctx *x, const struct mismatch *mm, const char *mw, const char *Mw,
                            struct nw_buf *b)
{
	struct nw_rankset mine = { 0 }, theirs = { 0 };
	for (int32_t r = 0; r < mm->n; r++) {
		if (mm->grp[r] == 0xff)
			continue;
		nw_set_add(x, mm->grp[r] == mm->maj ? &theirs : &mine, mm->v->members[r].proc->rank);
	}
	nw_buf_puts(b, "cannot tell which of ranks ");
	nw_buf_rankset(b, &mm->minority);
	nw_buf_printf(b, " deviates (no majority, and the comm's history does not say which op the program "
	              "issues at #%" PRIu64 "): ", mm->seq);
	nw_buf_puts(b, mine.n == 1 ? "rank " : "ranks ");
	nw_buf_rankset(b, &mine);
	nw_buf_printf(b, " %s while ", mw);
	nw_buf_puts(b, theirs.n == 1 ? "rank " : "ranks ");
	nw_buf_rankset(b, &theirs);
	nw_buf_printf(b, " %s", Mw);
	nw_rankset_free(&mine);
	nw_rankset_free(&theirs);
}

/* The verdict's summary; *what: what the minority's op differs in. */
static void mismatch_summary(struct nw_jctx *x, struct nw_vwork *w, const struct mismatch *mm, const char **what)
{
	char cb[128];
	uint32_t minor = mm->maj == 0 ? 1 : 0;   /* the first minority group, for the summary */
	struct nw_buf mw = { 0 }, Mw = { 0 };
	mismatch_words(&mm->s[mm->maj], &mm->s[minor], mm->seq, nw_comm_label(mm->v->id, mm->v->name, cb), mm->n, &mw,
	               &Mw, what);
	struct nw_buf b = { 0 };
	if (mm->undecided) {
		undecided_words(x, mm, mw.s ? mw.s : "", Mw.s ? Mw.s : "", &b);
	} else {
		nw_buf_puts(&b, mm->minority.n == 1 ? "rank " : "ranks ");
		nw_buf_rankset(&b, &mm->minority);
		nw_buf_printf(&b, " %s where ", mw.s ? mw.s : "");
		nw_buf_puts(&b, mm->majority.n == 1 ? "rank " : "ranks ");
		nw_buf_rankset(&b, &mm->majority);
		nw_buf_printf(&b, " %s%s", Mw.s ? Mw.s : "", w->v.waiting.n ? "; they wait in it" : "");
		if (mm->by_history)
			nw_buf_puts(&b, " (no majority: the ops every rank issued alike before repeat, and they "
			                "give this op here)");
	}
	nw_buf_free(&mw);
	nw_buf_free(&Mw);
	char *sum = nw_buf_take(&b);
	if (!sum)
		x->oom = 1;
	w->v.summary = sum;
}

/* Each group's values and state, and where the differing op was issued. */
static void mismatch_evidence(struct nw_jctx *x, struct nw_vwork *w, const struct mismatch *mm, const char *what)
{
	struct nw_egroups eg = { 0 };
	for (int32_t r = 0; r < mm->n && !x->oom; r++) {
		const struct nw_member *m = &mm->v->members[r];
		if (mm->grp[r] == 0xff)
			continue;
		const struct nw_seg_op *op = nw_member_coll(x, m, mm->seq);
		int major = mm->grp[r] == mm->maj;
		struct nw_buf t = { 0 };
		char sb[NW_NAME_BUF];
		sig_text(&mm->s[mm->grp[r]], &t);
		nw_buf_printf(&t, " (%s%s), %s",
		              mm->undecided ? "one side" : major ? (mm->by_history ? "as in the history" : "majority")
		                                                 : "differs in ",
		              mm->undecided || major ? "" : what, nw_op_state_name(op->state, sb));
		/* 1.4: the Python line that issued the differing op. */
		const char *site = major ? NULL : nw_op_site(m->proc, op);
		if (site)
			nw_buf_printf(&t, ", issued at %s", site);
		if (t.s && !t.oom)
			nw_eg_add(x, &eg, m->proc, t.s, NW_NO_AGE);
		nw_buf_free(&t);
	}
	nw_eg_flush(x, w, &eg, 8);
}

static void verdict_mismatch(struct nw_jctx *x, const struct nw_comm_view *v, uint64_t seq)
{
	struct mismatch mm = { .v = v, .seq = seq, .n = v->nranks };
	if (!(mm.grp = malloc((size_t)mm.n))) {
		x->oom = 1;
		return;
	}
	mismatch_groups(x, &mm);
	mismatch_majority(x, &mm);
	struct nw_vwork *w = nw_verdict_new(x, NW_V_MISMATCH, v, mm.s[mm.maj].kind, seq);
	if (w) {
		const char *what = "op";
		mismatch_members(x, w, &mm);
		mismatch_summary(x, w, &mm, &what);
		mismatch_evidence(x, w, &mm, what);
		nw_view_unknown(x, v, w);
	}
	nw_rankset_free(&mm.majority);
	nw_rankset_free(&mm.minority);
	free(mm.grp);
}

/* ---- the frontier of a comm ---- */

/* Where a member is with #n. M_GONE: its process died or exited before
 * completing it (whatever state its record was left in, it will never go
 * on); M_CAPTURED: it issued #n while its stream was being captured into a
 * CUDA graph, so #n runs only when that graph is launched, and it went on
 * past #n while the others wait in it. */
/* M_FINISHED: it never issued #n and has finalized or destroyed the comm
 * (it declared that it is done with it), along with a majority of the
 * comm: the ranks inside #n went past the comm's end, they are the
 * culprits. A minority that finished is M_NOT_ISSUED: it left early. */
/* M_IN_GRAPH: it never issued #n, and stopped in a graph (stopped_in_graph)
 * along with a majority of the comm. */
/* M_STOPPED: it completed #n-1, never issued #n, and has been idle since
 * (stopped_idle), along with a majority of the comm. */
enum mclass { M_NOFILE, M_NOT_ISSUED, M_STARTED, M_ENQUEUED, M_COMPLETED, M_FAILED, M_GONE, M_CAPTURED, M_FINISHED,
              M_IN_GRAPH, M_STOPPED, M_OTHER };

static int cmp_u64v(const void *a, const void *b)
{
	return nw_cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

struct byenq {
	uint64_t e;
	int32_t r;
};

static int cmp_byenq(const void *a, const void *b)
{
	const struct byenq *x = a, *y = b;
	if (x->e != y->e)
		return x->e < y->e ? -1 : 1;
	return x->r < y->r ? -1 : x->r > y->r;
}

/* A member whose newest collective on the comm was issued into a CUDA graph
 * (CAPTURED) and that has made no NCCL call since, past the timeout: the
 * graph's launch is not recorded, so it may well be waiting inside that
 * op. */
static int stopped_in_graph(struct nw_jctx *x, const struct nw_member *m)
{
	if (!m->proc || x->sink[m->proc->job_index] || !m->comm->coll_enqueued ||
	    nw_age(m->proc, m->proc->last_activity_ns) <= x->timeout_ns)
		return 0;
	const struct nw_seg_op *op = nw_member_coll(x, m, m->comm->coll_enqueued);
	return op && op->state == NW_ST_CAPTURED;
}

static int finished(const struct nw_member *m)
{
	return m->proc && (m->comm->state == NW_COMM_FINALIZED || m->comm->state == NW_COMM_DESTROYED);
}

/* A live member that completed #nstar-1 of the comm, never issued #nstar,
 * has nothing open anywhere (no op, no creation) and has made no NCCL call
 * for longer than the timeout: it stopped right before #nstar, somewhere
 * outside NCCL (a host-side join, the end of its loop). Why: when most of
 * a comm stopped at the same op and waits for nothing in NCCL, they are
 * the program as written; a minority stuck in #nstar went one op past
 * them (an extra step), as with members that finished with the comm. */
/* Its main thread, in stacks taken since its last NCCL call, was running
 * (computing on the CPU) or waiting on the GPU: busy, not stopped. A
 * majority that computes longer than the timeout while a minority waits
 * has not called #n yet; it did not stop short of it. (Captured with
 * NCCLWATCH_STACK_SIGNAL=1 every thread reads as running.) A thread that
 * drives several ranks of its process and waits on the GPU for another's
 * op is not this rank's work: it waits for that rank (rank_split.c). */
static int busy(const struct nw_jctx *x, const struct nw_proc *p)
{
	if (!p->stacks_ns || p->stacks_ns < p->last_activity_ns)
		return 0;
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct nw_thread_stack *t = &p->threads[i];
		if ((int64_t)t->tid != p->hdr.pid)
			continue;
		if (t->flags & (NW_THR_REGS_PTRACE | NW_THR_REGS_SIGNAL))
			return 1;
		return nw_stack_waits(t, NULL) == NW_FC_GPU && !nw_sibling_pending(x->job, p, t->tid);
	}
	return 0;
}

static int stopped_idle(struct nw_jctx *x, const struct nw_member *m, uint64_t nstar)
{
	const struct nw_proc *p = m->proc;
	if (!p || x->sink[p->job_index] || !nstar || m->comm->coll_enqueued != nstar - 1 ||
	    m->comm->coll_completed != nstar - 1 || nw_age(p, p->last_activity_ns) <= x->timeout_ns || busy(x, p))
		return 0;
	for (size_t i = 0; i < p->nops; i++)
		if (nw_op_pending(p->ops[i].state) || p->ops[i].state == NW_ST_INIT_ENTERED)
			return 0;
	return 1;
}

/* The first op the comm's stuck members wait in (0: none). */
static uint64_t first_stuck(const struct nw_comm_view *v, const struct nw_mpos *mp)
{
	uint64_t first = 0;
	for (int32_t r = 0; r < v->nranks; r++)
		if (mp[r].stuck && (!first || mp[r].pend_seq < first))
			first = mp[r].pend_seq;
	return first;
}

/* Whether the members that stopped short of the stuck ones (they finished
 * with the comm, or stopped in a graph) outnumber those stuck in its ops:
 * then they are the program as written and the stuck ones went ahead
 * without them (nobody waits for them; the stuck ones are the culprits).
 * As a minority, they are the ones that left early. */
static int stopped_majority(struct nw_jctx *x, const struct nw_comm_view *v, const struct nw_mpos *mp)
{
	uint32_t stopped = 0, stuck = 0;
	uint64_t first = first_stuck(v, mp);
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_member *m = &v->members[r];
		stuck += mp[r].stuck;
		stopped += !mp[r].pend && (finished(m) || stopped_in_graph(x, m) || stopped_idle(x, m, first));
	}
	uint32_t votes[2] = { stuck, stopped };
	return stuck && nw_majority(votes, 2) == 1;
}

/* A member that stopped short of the stuck ones (see stopped_majority). */
static int stopped_short(struct nw_jctx *x, const struct nw_member *m, uint64_t nstar)
{
	return finished(m) || stopped_in_graph(x, m) || stopped_idle(x, m, nstar);
}

/* Edges: a member stuck in #m waits for the members whose coll_enqueued < m. */
static void edges_not_issued(struct nw_jctx *x, const struct nw_comm_view *v, const struct nw_mpos *mp)
{
	int32_t n = v->nranks;
	size_t k = 0, nm = 0;
	uint64_t *seqs = malloc((size_t)n * sizeof *seqs);
	struct byenq *by = malloc((size_t)n * sizeof *by);
	uint32_t *junction = NULL;
	if (!seqs || !by) {
		x->oom = 1;
		goto out;
	}
	int stopped = stopped_majority(x, v, mp);
	uint64_t first = first_stuck(v, mp);
	for (int32_t r = 0; r < n; r++) {
		if (mp[r].stuck)
			seqs[k++] = mp[r].pend_seq;
		/* A majority that finished with the comm, or stopped in a graph, is
		 * not waited for (stopped_majority). */
		const struct nw_member *m = &v->members[r];
		if (m->proc && !(stopped && !mp[r].pend && stopped_short(x, m, first)))
			by[nm++] = (struct byenq){ m->comm->coll_enqueued, r };
	}
	if (!k)
		goto out;
	qsort(seqs, k, sizeof *seqs, cmp_u64v);
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (!u || seqs[i] != seqs[u - 1])
			seqs[u++] = seqs[i];
	qsort(by, nm, sizeof *by, cmp_byenq);
	if (!(junction = malloc(u * sizeof *junction))) {
		x->oom = 1;
		goto out;
	}
	/* Junction i stands for "every member with coll_enqueued < seqs[i]":
	 * it points to junction i-1 and to the members in [seqs[i-1], seqs[i]).
	 * None while nobody is behind. */
	size_t j = 0;
	for (size_t i = 0; i < u; i++) {
		junction[i] = UINT32_MAX;
		if (j >= nm || by[j].e >= seqs[i]) {
			if (i && junction[i - 1] != UINT32_MAX) {
				junction[i] = nw_graph_junction(&x->g);
				nw_graph_edge(&x->g, junction[i], junction[i - 1], NW_E_COLL, NULL, v, seqs[i - 1], 0);
			}
			continue;
		}
		junction[i] = nw_graph_junction(&x->g);
		if (i && junction[i - 1] != UINT32_MAX)
			nw_graph_edge(&x->g, junction[i], junction[i - 1], NW_E_COLL, NULL, v, seqs[i - 1], 0);
		for (; j < nm && by[j].e < seqs[i]; j++)
			nw_graph_edge(&x->g, junction[i], v->members[by[j].r].proc->job_index, NW_E_COLL, NULL, v, seqs[i],
			              by[j].e);
	}
	for (int32_t r = 0; r < n; r++) {
		if (!mp[r].stuck)
			continue;
		/* An op that has not started behind earlier unfinished work on
		 * its own stream waits for that stream, not for the members that
		 * have not issued it yet (as a send/receive does). */
		if (mp[r].pend->state == NW_ST_ENQUEUED && nw_previous_work(v->members[r].proc, mp[r].pend))
			continue;
		const uint64_t *at = bsearch(&mp[r].pend_seq, seqs, u, sizeof *seqs, cmp_u64v);
		if (junction[at - seqs] != UINT32_MAX)
			nw_graph_edge(&x->g, v->members[r].proc->job_index, junction[at - seqs], NW_E_COLL, mp[r].pend, v,
		              mp[r].pend_seq, 0);
	}
out:
	free(seqs);
	free(by);
	free(junction);
}

void nw_add_sblock(struct nw_jctx *x, const struct nw_comm_view *v, int32_t r, const struct nw_seg_op *op,
                       uint64_t age, const struct nw_rankset *waiting)
{
	if (x->nsblocks == x->capsblocks) {
		size_t cap = x->capsblocks ? x->capsblocks * 2 : 8;
		struct nw_sblock *s = realloc(x->sblocks, cap * sizeof *s);
		if (!s) {
			x->oom = 1;
			return;
		}
		x->sblocks = s;
		x->capsblocks = cap;
	}
	struct nw_sblock *s = &x->sblocks[x->nsblocks++];
	memset(s, 0, sizeof *s);
	s->view = v;
	s->member = (uint32_t)r;
	s->op = op;
	s->age_ns = age;
	s->waiting_in_it = waiting;
}

/* A copy of `src` that lives until the end of the job's pass. */
const struct nw_rankset *nw_shared_set(struct nw_jctx *x, const struct nw_rankset *src)
{
	if (x->nsets == x->capsets) {
		size_t cap = x->capsets ? x->capsets * 2 : 8;
		struct nw_rankset **s = realloc(x->sets, cap * sizeof *s);
		if (!s) {
			x->oom = 1;
			return NULL;
		}
		x->sets = s;
		x->capsets = cap;
	}
	struct nw_rankset *c = calloc(1, sizeof *c);
	if (!c || (src->n && !(c->v = malloc(src->n * sizeof *c->v)))) {
		free(c);
		x->oom = 1;
		return NULL;
	}
	if (src->n)
		memcpy(c->v, src->v, src->n * sizeof *c->v);
	c->n = c->cap = src->n;
	x->sets[x->nsets++] = c;
	return c;
}

/* "driver 13.0, NCCL 2.28.9: hosts a, b (ranks 0-7)" per distinct pair. */
static void versions_evidence(struct nw_jctx *x, struct nw_vwork *w, const struct nw_comm_view *v)
{
	struct nw_egroups eg = { 0 };
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_proc *p = v->members[r].proc;
		if (!p)
			continue;
		char nb[NW_NAME_BUF], db[NW_NAME_BUF], t[256];
		snprintf(t, sizeof t, "NCCL %s, CUDA driver %s, host %s", nw_nccl_version_str(p->hdr.nccl_version, nb),
		         nw_cuda_version_str(p->hdr.cuda_driver_version, db), p->hdr.host);
		nw_eg_add(x, &eg, p, t, NW_NO_AGE);
	}
	nw_eg_flush(x, w, &eg, 16);
}

/* Ranks inside #n of a comm the others have finalized or destroyed without
 * issuing #n: the ranks inside it issued an op nobody else will (one step
 * too many, a code path the others did not take). They are the culprits,
 * and nobody waits for them. */
static void past_end(struct nw_jctx *x, const struct nw_comm_view *v, const uint8_t *cls, uint64_t nstar,
                     uint16_t kind)
{
	struct nw_vwork *w = nw_verdict_new(x, NW_V_MISSING_RANK, v, kind, nstar);
	if (!w)
		return;
	struct nw_rankset done = { 0 };
	struct nw_egroups eg = { 0 };
	char kb[NW_NAME_BUF], cb[128], sb[NW_NAME_BUF];
	uint64_t last = 0;
	uint32_t in_graph = 0, idle = 0;
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_member *m = &v->members[r];
		if (cls[r] == M_FINISHED || cls[r] == M_IN_GRAPH || cls[r] == M_STOPPED) {
			idle += cls[r] == M_STOPPED;
			nw_set_add(x, &done, m->proc->rank);
			if (m->comm->coll_enqueued > last)
				last = m->comm->coll_enqueued;
			if (cls[r] == M_IN_GRAPH) {
				in_graph++;
				nw_verdict_waiting(x, w, m->proc);   /* presumably inside its graph's #n-1 */
			}
		} else if (cls[r] == M_STARTED || cls[r] == M_ENQUEUED) {
			nw_verdict_culprit(x, w, m->proc);
			nw_eg_where(x, &eg, m->proc, "issued it past where the others stopped; ", 1);
		}
	}
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_member *m = &v->members[r];
		if (cls[r] != M_FINISHED && cls[r] != M_IN_GRAPH && cls[r] != M_STOPPED)
			continue;
		char t[256];
		if (cls[r] == M_STOPPED)
			snprintf(t, sizeof t, "stopped after #%" PRIu64 " (COMPLETED), nothing pending since; ",
			         m->comm->coll_enqueued);
		else if (cls[r] == M_FINISHED)
			snprintf(t, sizeof t, "%s the comm after #%" PRIu64 "; ", nw_comm_state_name(m->comm->state, sb),
			         m->comm->coll_enqueued);
		else
			snprintf(t, sizeof t, "issued #%" PRIu64 " into a CUDA graph (CAPTURED: a graph's launch is not "
			         "recorded; it may wait inside it) and made no NCCL call since; ", m->comm->coll_enqueued);
		nw_eg_where(x, &eg, m->proc, t, 0);
	}
	nw_eg_flush(x, w, &eg, 8);
	struct nw_buf b = { 0 };
	nw_buf_puts(&b, w->v.culprits.n == 1 ? "rank " : "ranks ");
	nw_buf_rankset(&b, &w->v.culprits);
	nw_buf_printf(&b, " called %s #%" PRIu64 " on %s (%d ranks) after ", nw_op_kind_name(kind, kb), nstar,
	              nw_comm_label(v->id, v->name, cb), (int)v->nranks);
	nw_buf_puts(&b, done.n == 1 ? "rank " : "ranks ");
	nw_buf_rankset(&b, &done);
	if (in_graph)
		nw_buf_printf(&b, " stopped at #%" PRIu64 ", issued into a CUDA graph: the minority went on without "
		              "them (a graph it captured but never launched?)", last);
	else if (idle)
		nw_buf_printf(&b, " stopped at #%" PRIu64 " and wait for nothing in NCCL: the minority went one op past "
		              "the others (an extra step?)", last);
	else
		nw_buf_printf(&b, " had finished with it (their last: #%" PRIu64 "): nobody else will call it", last);
	if (!(w->v.summary = nw_buf_take(&b)))
		x->oom = 1;
	nw_rankset_free(&done);
}

/* A comm's frontier at #n (nstar): each member's class (enum mclass),
 * counted, and the ranks waiting inside #n. */
struct frontier {
	const struct nw_comm_view *v;
	const struct nw_mpos *mp;
	uint64_t nstar, mism;
	int32_t n;
	uint8_t *cls;                        /* [n] */
	uint32_t cnt[M_OTHER + 1];
	const struct nw_seg_op *first_pending;   /* the first member's pending #n */
	uint64_t max_age;                    /* the oldest pending #n */
	struct nw_rankset waiting;           /* the members whose #n is pending */
	uint16_t kind;                       /* #n's kind */
	const char *kname, *comm;            /* #n's kind and the comm, as words */
	char kb[NW_NAME_BUF], cb[128];
};

/* A member with #n in its ring: its state; a pending one is waiting. */
static uint8_t op_class(struct nw_jctx *x, struct frontier *f, const struct nw_member *m, const struct nw_seg_op *op)
{
	uint8_t c;
	switch (op->state) {
	case NW_ST_STARTED: c = M_STARTED; break;
	case NW_ST_ENQUEUED: c = M_ENQUEUED; break;
	case NW_ST_COMPLETED: c = M_COMPLETED; break;
	case NW_ST_FAILED: c = M_FAILED; break;
	case NW_ST_CAPTURED: c = M_CAPTURED; break;
	default: c = M_OTHER; break;
	}
	if (nw_op_pending(op->state)) {
		if (!f->first_pending)
			f->first_pending = op;
		uint64_t age = nw_age(m->proc, op->enqueue_ns);
		if (age > f->max_age)
			f->max_age = age;
		nw_set_add(x, &f->waiting, m->proc->rank);
	}
	return c;
}

/* Where member m is with #n (enum mclass). stopped: the members that
 * stopped short of the stuck ones are a majority (stopped_majority). */
static uint8_t member_class(struct nw_jctx *x, struct frontier *f, const struct nw_member *m, int stopped)
{
	uint64_t nstar = f->nstar;
	if (!m->proc)
		return M_NOFILE;
	const struct nw_seg_op *op = nw_member_coll(x, m, nstar);
	const struct nw_seg_comm *sc = m->comm;
	if (op && x->sink[m->proc->job_index] && op->state != NW_ST_COMPLETED && op->state != NW_ST_FAILED &&
	    sc->coll_completed < nstar)
		return M_GONE;
	if (op && op->state != NW_ST_IN_OPEN_GROUP)
		return op_class(x, f, m, op);
	/* In a group its thread never ended: never handed to NCCL, not issued
	 * (the reader's positions end before it, load.c). */
	if (sc->coll_enqueued < nstar)
		return !stopped ? M_NOT_ISSUED : finished(m) ? M_FINISHED
		       : stopped_in_graph(x, m) ? M_IN_GRAPH : stopped_idle(x, m, nstar) ? M_STOPPED : M_NOT_ISSUED;
	/* Enqueued but no longer in the ring: the positions tell. */
	return sc->coll_completed >= nstar ? M_COMPLETED : x->sink[m->proc->job_index] ? M_GONE
	       : sc->coll_started >= nstar ? M_STARTED : M_OTHER;
}

/* The ranks that hold #n up; a process that ended inside #n too (a sink:
 * the ranks inside wait for it, and so for nobody else). */
static void hold_edges(struct nw_jctx *x, const struct frontier *f)
{
	const uint32_t *cnt = f->cnt;
	const uint8_t *cls = f->cls;
	const struct nw_mpos *mp = f->mp;
	if (!(cnt[M_FAILED] || cnt[M_ENQUEUED] || cnt[M_CAPTURED] || cnt[M_GONE]))
		return;
	uint32_t junction = UINT32_MAX;
	for (int32_t r = 0; r < f->n; r++) {
		if (cls[r] != M_STARTED || !mp[r].stuck || mp[r].pend_seq != f->nstar)
			continue;
		if (junction == UINT32_MAX)
			junction = nw_graph_junction(&x->g);
		nw_graph_edge(&x->g, f->v->members[r].proc->job_index, junction, NW_E_BLOCK, mp[r].pend, f->v, f->nstar,
		              0);
	}
	for (int32_t r = 0; r < f->n && junction != UINT32_MAX; r++)
		if (cls[r] == M_FAILED || cls[r] == M_CAPTURED || cls[r] == M_GONE ||
		    (cls[r] == M_ENQUEUED && mp[r].stuck))
			nw_graph_edge(&x->g, junction, f->v->members[r].proc->job_index, NW_E_BLOCK, NULL, f->v, f->nstar, 0);
}

/* Ranks whose #n never started: STREAM_BLOCKED candidates (the ranks
 * inside #n wait for them; the culprits leave that set later). */
static void never_started(struct nw_jctx *x, const struct frontier *f)
{
	const struct nw_rankset *inside = NULL;
	for (int32_t r = 0; r < f->n && !x->oom; r++) {
		if (f->cls[r] != M_ENQUEUED || !f->mp[r].stuck || f->mp[r].pend_seq != f->nstar)
			continue;
		if (!inside && !(inside = nw_shared_set(x, &f->waiting)))
			break;
		nw_add_sblock(x, f->v, r, f->mp[r].pend, f->mp[r].age_ns, inside);
	}
}

/* Member m's #n is in a group its thread never ended (load.c). */
static int held_in_group(struct nw_jctx *x, const struct nw_member *m, uint64_t nstar)
{
	const struct nw_seg_op *op = nw_member_coll(x, m, nstar);
	return op && op->state == NW_ST_IN_OPEN_GROUP;
}

/* A member of a MISSING_RANK verdict: a culprit's line (it never called
 * #n, ended inside it, or only captured it) into out, a waiting one's into
 * in. */
static void missing_member(struct nw_jctx *x, struct nw_vwork *w, const struct frontier *f, int32_t r,
                           struct nw_egroups *in, struct nw_egroups *out)
{
	const struct nw_member *m = &f->v->members[r];
	uint8_t c = f->cls[r];
	char sb[NW_NAME_BUF];
	if (c == M_NOT_ISSUED || c == M_GONE || c == M_CAPTURED) {
		nw_verdict_culprit(x, w, m->proc);
		struct nw_buf t = { 0 };
		/* An abort is leaving the comm too (an error path); it is said,
		 * but not weighed as a program's end (finished). */
		if (c == M_NOT_ISSUED && (finished(m) || m->comm->state == NW_COMM_ABORTED))
			nw_buf_printf(&t, "never called it: it %s the comm after #%" PRIu64 "; ",
			              nw_comm_state_name(m->comm->state, sb), m->comm->coll_enqueued);
		else if (c == M_NOT_ISSUED && held_in_group(x, m, f->nstar))
			nw_buf_puts(&t, "issued it inside ncclGroupStart, but its thread never called the group's "
			            "ncclGroupEnd, so NCCL never launched it; ");
		else if (c == M_NOT_ISSUED)
			nw_buf_printf(&t, "never called it (coll_enqueued %" PRIu64 "); ", m->comm->coll_enqueued);
		else if (c == M_GONE)
			nw_buf_puts(&t, "called it but ended before completing it; ");
		else
			nw_buf_puts(&t, "captured it into a CUDA graph (it runs only when the graph is launched) "
			            "and went on; ");
		uint64_t age = nw_where(x, m->proc, &t, 1);
		if (t.s && !t.oom)
			nw_eg_add(x, out, m->proc, t.s, age);
		nw_buf_free(&t);
	} else if (c == M_STARTED || c == M_ENQUEUED) {
		const struct nw_seg_op *op = nw_member_coll(x, m, f->nstar);
		char t[160];
		if (op)
			snprintf(t, sizeof t, "in it (%s for " NW_AGE ")", nw_op_state_name(op->state, sb));
		else
			snprintf(t, sizeof t, "in it (STARTED)");
		nw_eg_add(x, in, m->proc, t, op ? nw_age(m->proc, op->enqueue_ns) : NW_NO_AGE);
	}
}

/* The summary of a MISSING_RANK verdict at the frontier. */
static void missing_summary(struct nw_jctx *x, struct nw_vwork *w, const struct frontier *f)
{
	const uint32_t *cnt = f->cnt;
	char ab[32];
	struct nw_buf b = { 0 };
	if (w->v.culprits.n) {
		nw_buf_puts(&b, w->v.culprits.n == 1 ? "rank " : "ranks ");
		nw_buf_rankset(&b, &w->v.culprits);
		nw_buf_printf(&b, " %s %s #%" PRIu64 " on %s (%d ranks); ",
		              cnt[M_GONE] && !cnt[M_NOT_ISSUED] && !cnt[M_CAPTURED] ? "ended inside"
		              : cnt[M_CAPTURED] && !cnt[M_NOT_ISSUED] && !cnt[M_GONE] ? "only captured (never launched)"
		              : "never called",
		              f->kname, f->nstar, f->comm, (int)f->n);
		nw_buf_puts(&b, f->waiting.n == 1 ? "rank " : "ranks ");
		nw_buf_rankset(&b, &f->waiting);
		nw_buf_printf(&b, " wait%s in it", f->waiting.n == 1 ? "s" : "");
		if (cnt[M_NOFILE])
			nw_buf_printf(&b, "; %u rank%s of it ha%s no file", cnt[M_NOFILE], cnt[M_NOFILE] == 1 ? "" : "s",
			              cnt[M_NOFILE] == 1 ? "s" : "ve");
	} else {
		nw_buf_puts(&b, f->waiting.n == 1 ? "rank " : "ranks ");
		nw_buf_rankset(&b, &f->waiting);
		nw_buf_printf(&b, " wait%s in %s #%" PRIu64 " on %s (%d ranks) for %s; ", f->waiting.n == 1 ? "s" : "",
		              f->kname, f->nstar, f->comm, (int)f->n, nw_fmt_age(f->max_age, ab));
		if (w->v.unknown.n) {
			nw_buf_puts(&b, w->v.unknown.n == 1 ? "rank " : "ranks ");
			nw_buf_rankset(&b, &w->v.unknown);
			nw_buf_printf(&b, " ha%s no file", w->v.unknown.n == 1 ? "s" : "ve");
		} else {
			nw_buf_printf(&b, "%u of its ranks have no file", cnt[M_NOFILE]);
		}
		nw_buf_puts(&b, " (they may never have called it)");
	}
	w->v.summary = nw_buf_take(&b);
	if (!w->v.summary)
		x->oom = 1;
}

/* The decision at the frontier: the first rule whose case it is makes the
 * verdict (the cases exclude each other but for the first, which wins). */

/* A majority stopped short of #n (finished with the comm, stopped in a
 * graph, or idle: stopped_majority) and nobody else holds #n up: the
 * ranks inside #n went past the program's end (past_end). */
static int is_past_end(const struct frontier *f)
{
	const uint32_t *cnt = f->cnt;
	return (cnt[M_FINISHED] || cnt[M_IN_GRAPH] || cnt[M_STOPPED]) && !cnt[M_NOT_ISSUED] && !cnt[M_GONE] &&
	       !cnt[M_CAPTURED];
}

static void verdict_past_end(struct nw_jctx *x, struct frontier *f)
{
	past_end(x, f->v, f->cls, f->nstar, f->kind);
}

/* Ranks that never called #n, ended inside it or only captured it into a
 * graph never launched hold it up: they are the culprits. Ranks without a
 * file may never have called it: unknown. */
static int is_missing(const struct frontier *f)
{
	const uint32_t *cnt = f->cnt;
	return cnt[M_NOT_ISSUED] || cnt[M_NOFILE] || cnt[M_GONE] || cnt[M_CAPTURED];
}

static void verdict_missing(struct nw_jctx *x, struct frontier *f)
{
	struct nw_vwork *w = nw_verdict_new(x, NW_V_MISSING_RANK, f->v, f->kind, f->nstar);
	if (!w)
		return;
	struct nw_egroups in = { 0 }, out = { 0 };
	for (int32_t r = 0; r < f->n && !x->oom; r++)
		missing_member(x, w, f, r, &in, &out);
	for (uint32_t i = 0; i < f->waiting.n; i++)
		nw_set_add(x, &w->v.waiting, f->waiting.v[i]);
	nw_eg_flush(x, w, &out, 8);
	nw_eg_flush(x, w, &in, 8);
	nw_view_unknown(x, f->v, w);
	missing_summary(x, w, f);
}

/* Every rank started #n and none completed it (and #n is not where the
 * comm's arguments mismatch): no rank is behind, the transfer itself is
 * stuck. */
static int is_transport(const struct frontier *f)
{
	const uint32_t *cnt = f->cnt;
	return !cnt[M_NOT_ISSUED] && !cnt[M_NOFILE] && !cnt[M_FAILED] && !cnt[M_ENQUEUED] && !cnt[M_COMPLETED] &&
	       !cnt[M_OTHER] && cnt[M_STARTED] == (uint32_t)f->n && f->mism != f->nstar;
}

static void verdict_transport(struct nw_jctx *x, struct frontier *f)
{
	const struct nw_comm_view *v = f->v;
	char ab[32];
	struct nw_vwork *w = nw_verdict_new(x, NW_V_TRANSPORT_STALL, v, f->kind, f->nstar);
	if (!w)
		return;
	struct nw_egroups in = { 0 };
	for (int32_t r = 0; r < f->n; r++) {
		const struct nw_member *m = &v->members[r];
		nw_verdict_blame(x, w, m->proc->job_index);
		nw_verdict_waiting(x, w, m->proc);
		const struct nw_seg_op *op = nw_member_coll(x, m, f->nstar);
		nw_eg_add(x, &in, m->proc, "STARTED for " NW_AGE ", not completed",
		          op ? nw_age(m->proc, op->start_ns ? op->start_ns : op->enqueue_ns) : NW_NO_AGE);
	}
	nw_eg_flush(x, w, &in, 8);
	versions_evidence(x, w, v);
	nw_verdict_summary(x, w,
	                   "every rank of %s (%d ranks) started %s #%" PRIu64 " and none completed it in %s: "
	                   "the transfer itself is stuck (communicator or link, not a rank)",
	                   f->comm, (int)f->n, f->kname, f->nstar, nw_fmt_age(f->max_age, ab));
}

static const struct frontier_rule {
	int (*applies)(const struct frontier *f);
	void (*verdict)(struct nw_jctx *x, struct frontier *f);
} frontier_rules[] = {
	{ is_past_end, verdict_past_end },
	{ is_missing, verdict_missing },
	{ is_transport, verdict_transport },
};

static void comm_frontier(struct nw_jctx *x, const struct nw_comm_view *v, const struct nw_mpos *mp,
                          uint64_t nstar, uint64_t mism)
{
	struct frontier f = { .v = v, .mp = mp, .nstar = nstar, .mism = mism, .n = v->nranks };
	if (!(f.cls = malloc((size_t)f.n))) {
		x->oom = 1;
		return;
	}
	int stopped = stopped_majority(x, v, mp);
	for (int32_t r = 0; r < f.n; r++) {
		f.cls[r] = member_class(x, &f, &v->members[r], stopped);
		f.cnt[f.cls[r]]++;
	}
	if (f.first_pending) {
		f.kind = f.first_pending->kind;
		f.kname = nw_op_kind_name(f.kind, f.kb);
		f.comm = nw_comm_label(v->id, v->name, f.cb);
		hold_edges(x, &f);
		never_started(x, &f);
		for (size_t i = 0; i < sizeof frontier_rules / sizeof frontier_rules[0]; i++)
			if (frontier_rules[i].applies(&f)) {
				frontier_rules[i].verdict(x, &f);
				break;
			}
	}
	nw_rankset_free(&f.waiting);
	free(f.cls);
}

static void comm_coll(struct nw_jctx *x, const struct nw_comm_view *v)
{
	int32_t n = v->nranks;
	if (n <= 0)
		return;
	struct nw_mpos *mp = calloc((size_t)n, sizeof *mp);
	if (!mp) {
		x->oom = 1;
		return;
	}
	uint64_t nstar = 0;
	for (int32_t r = 0; r < n; r++) {
		const struct nw_member *m = &v->members[r];
		if (!m->proc)
			continue;
		uint32_t *idx;
		size_t cnt;
		nw_member_ops(x, m, &idx, &cnt);
		for (size_t k = 0; k < cnt; k++) {
			const struct nw_seg_op *op = &m->proc->ops[idx[k]];
			if (!NW_OP_IS_COLL(op->kind))
				break;
			if (nw_op_pending(op->state)) {
				mp[r].pend = op;
				break;
			}
		}
		if (!mp[r].pend)
			continue;
		if (x->sink[m->proc->job_index]) {
			mp[r].pend = NULL;   /* gone: it waits for nothing (comm_frontier says where it ended) */
			continue;
		}
		mp[r].pend_seq = mp[r].pend->seq;
		mp[r].age_ns = nw_age(m->proc, mp[r].pend->enqueue_ns);
		mp[r].stuck = mp[r].age_ns > x->timeout_ns;
		if (mp[r].stuck && (!nstar || mp[r].pend_seq < nstar))
			nstar = mp[r].pend_seq;
	}
	uint64_t mism = find_mismatch(x, v);
	if (mism && !x->oom)
		verdict_mismatch(x, v, mism);
	edges_not_issued(x, v, mp);
	if (nstar && !x->oom)
		comm_frontier(x, v, mp, nstar, mism);
	free(mp);
}

void nw_rules_coll(struct nw_jctx *x)
{
	struct nw_comm_view *v, *vt;
	HASH_ITER(hh, x->job->comms, v, vt) {
		if (x->oom)
			return;
		comm_coll(x, v);
	}
}

/* ---- STREAM_BLOCKED, after the graph ---- */

struct skey {
	uint64_t comm_id, seq;
	struct nw_vwork *w;
	const struct nw_sblock *first;  /* the first blocked rank: the summary's example */
	char *why;                       /* what its stream is busy with */
	struct nw_egroups eg;
	UT_hash_handle hh;
};

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

/* One verdict per (comm, #n): its culprits are the ranks whose #n never
 * started, the ranks inside #n wait. */
/* What the blocked op's stream is busy with: the previous op on it
 * (prev, of comm pv), or work that is not NCCL. */
static char *stream_why(const struct nw_proc *p, const struct nw_sblock *s, const struct nw_seg_op *prev,
                        const struct nw_comm_view *pv)
{
	char cb[128], ab[32], sb[NW_NAME_BUF];
	struct nw_buf why = { 0 };
	if (prev) {
		nw_buf_puts(&why, "its stream is busy with ");
		op_words(&why, prev);
		nw_buf_printf(&why, " on %s (%s for %s)", nw_comm_label(prev->comm_id, pv ? pv->name : NULL, cb),
		              nw_op_state_name(prev->state, sb),
		              nw_fmt_age(nw_age(p, prev->start_ns ? prev->start_ns : prev->enqueue_ns), ab));
	} else
		nw_buf_printf(&why, "no earlier NCCL op is pending on its stream 0x%" PRIx64
		              ": earlier work that is not NCCL (a long or hung kernel, a host callback)",
		              s->op->stream);
	return nw_buf_take(&why);
}

/* The verdict of a blocked (comm, #n), made at its first blocked rank s
 * and added to keys (NULL: out of memory). */
static struct skey *stream_key(struct nw_jctx *x, struct skey **keys, const uint64_t key[2],
                               const struct nw_sblock *s, const struct nw_seg_op *prev, const struct nw_comm_view *pv)
{
	int replay = s->op->kind == NW_OP_GRAPH_LAUNCH;   /* named by its graph's first captured op */
	struct nw_vwork *w = nw_verdict_new(x, NW_V_STREAM_BLOCKED, s->view,
	                                    replay ? (uint16_t)s->op->redop : s->op->kind,
	                                    replay ? (uint64_t)s->op->root : s->op->seq);
	if (w && replay)
		w->v.replay = s->op->seq;
	struct skey *k;
	if (!w || !(k = calloc(1, sizeof *k))) {
		x->oom = 1;
		return NULL;
	}
	k->comm_id = key[0];
	k->seq = key[1];
	k->w = w;
	k->first = s;
	HASH_ADD(hh, *keys, comm_id, sizeof k->comm_id + sizeof k->seq, k);
	if (nw_hash_oom_taken()) {
		free(k);
		x->oom = 1;
		return NULL;
	}
	if (!(k->why = stream_why(s->view->members[s->member].proc, s, prev, pv)))
		x->oom = 1;
	for (uint32_t j = 0; j < s->waiting_in_it->n; j++)
		nw_set_add(x, &w->v.waiting, s->waiting_in_it->v[j]);
	return k;
}

/* A blocked rank's line: its stream, what it is busy with, where it is. */
static void stream_line(struct nw_jctx *x, struct skey *k, const struct nw_sblock *s, const struct nw_proc *p,
                        const struct nw_seg_op *prev, const struct nw_comm_view *pv)
{
	char cb[128], sb[NW_NAME_BUF];
	struct nw_buf t = { 0 };
	nw_buf_printf(&t, "stream 0x%" PRIx64 " ", s->op->stream);
	if (prev) {
		nw_buf_puts(&t, "busy with ");
		op_words(&t, prev);
		nw_buf_printf(&t, " on %s (%s)", nw_comm_label(prev->comm_id, pv ? pv->name : NULL, cb),
		              nw_op_state_name(prev->state, sb));
	} else
		nw_buf_puts(&t, "has no earlier NCCL op pending");
	nw_buf_puts(&t, "; ");
	uint64_t age = nw_where(x, p, &t, 1);
	if (t.s && !t.oom)
		nw_eg_add(x, &k->eg, p, t.s, age);
	nw_buf_free(&t);
}

/* The summary of a blocked (comm, #n): its blocked ranks (the first as the
 * example), what its stream is busy with, who waits inside #n. */
static void stream_summary(struct nw_jctx *x, const struct skey *k)
{
	struct nw_vwork *w = k->w;
	const struct nw_sblock *s = k->first;
	char cb[128], ab[32], lb[128];
	struct nw_buf b = { 0 };
	if (w->v.culprits.n > 1) {
		nw_buf_puts(&b, "ranks ");
		nw_buf_rankset(&b, &w->v.culprits);
		nw_buf_puts(&b, ": ");
		op_words(&b, s->op);
		nw_buf_printf(&b, " on %s (%d ranks) never started (for %s on %s; %s)",
		              nw_comm_label(s->view->id, s->view->name, cb), (int)s->view->nranks,
		              nw_fmt_age(s->age_ns, ab), nw_proc_label(s->view->members[s->member].proc, lb),
		              k->why ? k->why : "");
	} else {
		nw_buf_printf(&b, "%s's ", nw_proc_label(s->view->members[s->member].proc, lb));
		op_words(&b, s->op);
		nw_buf_printf(&b, " on %s (%d ranks) has not started in %s: %s",
		              nw_comm_label(s->view->id, s->view->name, cb), (int)s->view->nranks,
		              nw_fmt_age(s->age_ns, ab), k->why ? k->why : "");
	}
	/* Those inside #n but the blocked ranks. */
	struct nw_rankset in = { 0 };
	for (uint32_t j = 0; j < s->waiting_in_it->n; j++)
		if (!nw_rankset_has(&w->v.culprits, s->waiting_in_it->v[j]))
			nw_set_add(x, &in, s->waiting_in_it->v[j]);
	if (in.n) {
		nw_buf_puts(&b, in.n == 1 ? "; rank " : "; ranks ");
		nw_buf_rankset(&b, &in);
		/* a send/receive's peer waits in the other half */
		nw_buf_printf(&b, " wait%s %s it", in.n == 1 ? "s" : "", NW_OP_IS_P2P(s->op->kind) ? "for" : "in");
	}
	nw_rankset_free(&in);
	if (!(w->v.summary = nw_buf_take(&b)))
		x->oom = 1;
}

/* The work that runs at the head of a stream: from `op` back through
 * the ops queued (ENQUEUED) behind earlier pending work on it. */
static const struct nw_seg_op *first_running(const struct nw_proc *p, const struct nw_seg_op *op)
{
	for (const struct nw_seg_op *e; op && op->state == NW_ST_ENQUEUED && (e = nw_previous_work(p, op));)
		op = e;
	return op;
}

void nw_rules_stream(struct nw_jctx *x)
{
	struct skey *keys = NULL, *k, *kt;
	for (size_t i = 0; i < x->nsblocks && !x->oom; i++) {
		const struct nw_sblock *s = &x->sblocks[i];
		const struct nw_proc *p = s->view->members[s->member].proc;
		/* Blocked only because its earlier work waits for another rank:
		 * then it is a waiter of that rank's verdict, not a culprit. */
		if (nw_graph_waits(&x->g, p->job_index))
			continue;
		uint64_t key[2] = { s->view->id, s->op->seq };
		HASH_FIND(hh, keys, key, sizeof key, k);
		const struct nw_seg_op *prev = nw_previous_work(p, s->op);
		struct nw_comm_view *pv = NULL;
		/* Its stream runs a replay of a CUDA graph that started and is
		 * stuck (right ahead, or ahead of ops queued behind it): the
		 * launch's events bracket every op of the graph, which may wait
		 * for a peer on any comm the graph holds ops of; the rank is inside
		 * it (the replay's verdicts concern it), not blocked by other
		 * work. */
		const struct nw_seg_op *head = first_running(p, prev);
		if (head && head->kind == NW_OP_GRAPH_LAUNCH && head->state == NW_ST_STARTED &&
		    nw_age(p, head->enqueue_ns) > x->timeout_ns)
			continue;
		if (prev)
			HASH_FIND(hh, x->job->comms, &prev->comm_id, sizeof prev->comm_id, pv);
		if (!k && !(k = stream_key(x, &keys, key, s, prev, pv)))
			break;
		nw_verdict_culprit(x, k->w, p);
		stream_line(x, k, s, p, prev, pv);
	}
	HASH_ITER(hh, keys, k, kt) {
		if (!x->oom)
			stream_summary(x, k);
		nw_eg_flush(x, k->w, &k->eg, 8);
		HASH_DEL(keys, k);
		free(k->why);
		free(k);
	}
}

/* ---- stuck ops no verdict explains ---- */

struct ukey {
	char text[256];
	struct nw_vwork *w;
	struct nw_egroups eg;
	UT_hash_handle hh;
};

/* A process's oldest op past the timeout that a rule could explain (a
 * collective, a send/receive, a graph's replay), NULL: none. */
static const struct nw_seg_op *unexplained_op(const struct nw_jctx *x, const struct nw_proc *p)
{
	for (size_t j = 0; j < p->nops; j++) {
		const struct nw_seg_op *o = &p->ops[j];
		if ((NW_OP_IS_COLL(o->kind) || NW_OP_IS_P2P(o->kind) || o->kind == NW_OP_GRAPH_LAUNCH) &&
		    nw_op_pending(o->state) && nw_age(p, o->enqueue_ns) > x->timeout_ns)
			return o;
	}
	return NULL;
}

/* The words that name op (of comm v), the key of its verdict. */
static void unexplained_key(const struct nw_seg_op *op, const struct nw_comm_view *v, char *text, size_t size)
{
	char kb[NW_NAME_BUF], cb[128];
	memset(text, 0, size);
	if (NW_OP_IS_COLL(op->kind))
		snprintf(text, size, "%s #%" PRIu64 " on %s", nw_op_kind_name(op->kind, kb), op->seq,
		         nw_comm_label(op->comm_id, v ? v->name : NULL, cb));
	else if (op->kind == NW_OP_GRAPH_LAUNCH)   /* a replay: its graph's first op names it */
		snprintf(text, size, "a replay of a CUDA graph whose first op is a %s on %s",
		         nw_op_kind_name((uint16_t)op->redop, kb), nw_comm_label(op->comm_id, v ? v->name : NULL, cb));
	else
		snprintf(text, size, "%s on %s", nw_op_kind_name(op->kind, kb),
		         nw_comm_label(op->comm_id, v ? v->name : NULL, cb));
}

/* The TRANSPORT_STALL verdict of an op nobody explains, added to keys
 * (NULL: out of memory); for a collective, who completed it. */
static struct ukey *unexplained_verdict(struct nw_jctx *x, struct ukey **keys, const struct ukey *key,
                                        const struct nw_seg_op *op, const struct nw_comm_view *v)
{
	struct ukey *k;
	struct nw_vwork *w = nw_verdict_new(x, NW_V_TRANSPORT_STALL, v, op->kind, NW_OP_IS_COLL(op->kind) ? op->seq : 0);
	if (!w || !(k = calloc(1, sizeof *k))) {
		x->oom = 1;
		return NULL;
	}
	memcpy(k->text, key->text, sizeof k->text);
	k->w = w;
	HASH_ADD_STR(*keys, text, k);
	if (nw_hash_oom_taken()) {
		free(k);
		x->oom = 1;
		return NULL;
	}
	if (!NW_OP_IS_COLL(op->kind) || !v)
		return k;
	struct nw_rankset done = { 0 };
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_member *m = &v->members[r];
		if (m->proc && m->comm->coll_completed >= op->seq)
			nw_set_add(x, &done, m->proc->rank);
	}
	if (done.n) {
		nw_buf_puts(&w->ev, done.n == 1 ? "rank " : "ranks ");
		nw_buf_rankset(&w->ev, &done);
		nw_buf_puts(&w->ev, ": completed it");
		nw_verdict_evidence_flush(x, w);
	}
	nw_rankset_free(&done);
	return k;
}

/* A stuck rank's line: its op (a send/receive with its peer and what the
 * peer posted), its state and age. */
static void unexplained_line(struct nw_jctx *x, struct ukey *k, const struct nw_proc *p, const struct nw_seg_op *op,
                             const struct nw_comm_view *v)
{
	char kb[NW_NAME_BUF], sb[NW_NAME_BUF];
	struct nw_buf t = { 0 };
	nw_buf_puts(&t, "in ");
	if (NW_OP_IS_P2P(op->kind) && v && op->root >= 0 && op->root < v->nranks) {
		const struct nw_member *pm = &v->members[op->root];
		char pb[128];
		nw_buf_printf(&t, "%s #%" PRIu64 " %s %s", nw_op_kind_name(op->kind, kb), op->seq,
		              op->kind == NW_OP_SEND ? "to" : "from", pm->proc ? nw_proc_label(pm->proc, pb) : "?");
		if (pm->proc) {
			const struct nw_seg_peer *e = nw_proc_peer(pm->proc, nw_member_slot(pm), op->rank);
			nw_buf_printf(&t, " (posted on the other side: %s %" PRIu64 ")",
			              op->kind == NW_OP_SEND ? "recv_enqueued" : "send_enqueued",
			              e ? (op->kind == NW_OP_SEND ? e->recv_enqueued : e->send_enqueued) : 0);
		}
	} else {
		nw_buf_puts(&t, k->text);
	}
	nw_buf_printf(&t, ", %s for " NW_AGE, nw_op_state_name(op->state, sb));
	if (t.s && !t.oom)
		nw_eg_add(x, &k->eg, p, t.s, nw_age(p, op->enqueue_ns));
	nw_buf_free(&t);
}

void nw_rules_unexplained(struct nw_jctx *x, const uint8_t *explained)
{
	struct ukey *keys = NULL, *k, *kt;
	for (size_t i = 0; i < x->job->nprocs && !x->oom; i++) {
		const struct nw_proc *p = x->job->procs[i];
		const struct nw_seg_op *op = explained[i] ? NULL : unexplained_op(x, p);
		if (!op)
			continue;
		struct nw_comm_view *v;
		HASH_FIND(hh, x->job->comms, &op->comm_id, sizeof op->comm_id, v);
		struct ukey key;
		unexplained_key(op, v, key.text, sizeof key.text);
		HASH_FIND_STR(keys, key.text, k);
		if (!k && !(k = unexplained_verdict(x, &keys, &key, op, v)))
			break;
		nw_verdict_waiting(x, k->w, p);
		nw_verdict_blame(x, k->w, p->job_index);
		unexplained_line(x, k, p, op, v);
	}
	HASH_ITER(hh, keys, k, kt) {
		struct nw_vwork *w = k->w;
		struct nw_buf b = { 0 };
		nw_buf_puts(&b, w->v.waiting.n == 1 ? "rank " : "ranks ");
		nw_buf_rankset(&b, &w->v.waiting);
		nw_buf_printf(&b, " %s stuck in %s and no rank was found missing, mismatched or failed: the transfer "
		              "does not finish (communicator or link)", w->v.waiting.n == 1 ? "is" : "are", k->text);
		w->v.summary = nw_buf_take(&b);
		if (!w->v.summary)
			x->oom = 1;
		nw_eg_flush(x, w, &k->eg, 8);
		HASH_DEL(keys, k);
		free(k);
	}
}

/* ---- IDLE before the first collective, and HEALTHY ---- */

/* Every comm created, no collective or send/receive ever. */
static int never_used(const struct nw_job *job)
{
	int created = 1, used = 0, comms = 0;
	for (size_t i = 0; i < job->nprocs; i++) {
		const struct nw_proc *p = job->procs[i];
		for (uint32_t s = 0; s < p->ncomms; s++) {
			const struct nw_seg_comm *c = &p->comms[s];
			if (c->state == NW_COMM_FREE)
				continue;
			comms++;
			if (c->state == NW_COMM_INIT_ENTERED || c->state == NW_COMM_INIT_ASYNC)
				created = 0;
			if (c->coll_enqueued || c->p2p_enqueued)
				used = 1;
		}
	}
	return comms && created && !used;
}

/* The comm that names an IDLE verdict: the largest (the world, usually),
 * a split or shrink's child last, then the lowest id. */
static const struct nw_comm_view *largest_comm(const struct nw_job *job)
{
	const struct nw_comm_view *big = NULL, *v, *vt;
	HASH_ITER(hh, job->comms, v, vt) {
		if (!big || v->nranks > big->nranks ||
		    (v->nranks == big->nranks && (big->origin == NW_ORIGIN_SPLIT || big->origin == NW_ORIGIN_SHRINK) &&
		     v->origin != NW_ORIGIN_SPLIT && v->origin != NW_ORIGIN_SHRINK) ||
		    (v->nranks == big->nranks && v->origin == big->origin && v->id < big->id))
			big = v;
	}
	return big;
}

/* IDLE: the processes of a running job (one killed while idle, its files
 * read after the kill, was idle; a job whose processes all exited is
 * over) that made no NCCL call for longer than the timeout. Returns 1
 * when it made the verdict, -1 when it could not, 0 when nobody is idle. */
static int idle_verdict(struct nw_jctx *x)
{
	struct nw_job *job = x->job;
	const struct nw_comm_view *big = largest_comm(job);
	struct nw_vwork *w = NULL;
	struct nw_egroups eg = { 0 };
	uint64_t idle_min = UINT64_MAX;
	int running = 0;
	for (size_t i = 0; i < job->nprocs; i++)
		running |= !(job->procs[i]->hdr.flags & NW_SEG_F_EXITED);
	for (size_t i = 0; i < job->nprocs && !x->oom && running; i++) {
		const struct nw_proc *p = job->procs[i];
		uint64_t idle = nw_age(p, p->last_activity_ns);
		if (idle <= x->timeout_ns)
			continue;
		if (!w && !(w = nw_verdict_new(x, NW_V_IDLE, big, 0, 0)))
			return -1;
		nw_verdict_culprit(x, w, p);
		if (idle < idle_min)
			idle_min = idle;
		struct nw_buf t = { 0 };
		uint64_t age = nw_where(x, p, &t, 1);
		if (t.s && !t.oom)
			nw_eg_add(x, &eg, p, t.s, age);
		nw_buf_free(&t);
	}
	if (!w)
		return 0;
	nw_eg_flush(x, w, &eg, 8);
	char ab[32];
	struct nw_buf b = { 0 };
	nw_buf_puts(&b, w->v.culprits.n == 1 ? "rank " : "ranks ");
	nw_buf_rankset(&b, &w->v.culprits);
	nw_buf_printf(&b, " created their communicators but never called a collective; no NCCL call for %s",
	              nw_fmt_age(idle_min, ab));
	w->v.summary = nw_buf_take(&b);
	if (!w->v.summary)
		x->oom = 1;
	return 1;
}

/* HEALTHY: no stall; the ranks without a file are unknown. */
static void healthy_verdict(struct nw_jctx *x)
{
	struct nw_job *job = x->job;
	char ab[32];
	struct nw_vwork *w = nw_verdict_new(x, NW_V_HEALTHY, NULL, 0, 0);
	if (!w)
		return;
	for (uint32_t i = 0; i < job->missing.n; i++)
		nw_set_add(x, &w->v.unknown, job->missing.v[i]);
	size_t alive = 0, pending = 0;
	for (size_t i = 0; i < job->nprocs; i++) {
		const struct nw_proc *p = job->procs[i];
		alive += p->alive != 0 && !(p->hdr.flags & NW_SEG_F_EXITED);
		for (size_t k = 0; k < p->nops; k++)
			pending += nw_op_pending(p->ops[k].state);
	}
	nw_verdict_summary(x, w, "no stall: %zu process%s (%zu running or on other hosts), %zu op%s in flight, none "
	                   "older than the timeout (%s)", job->nprocs, job->nprocs == 1 ? "" : "es", alive, pending,
	                   pending == 1 ? "" : "s", nw_fmt_age(x->timeout_ns, ab));
	if (job->missing.n) {
		nw_buf_puts(&w->ev, job->missing.n == 1 ? "rank " : "ranks ");
		nw_buf_rankset(&w->ev, &job->missing);
		nw_buf_printf(&w->ev, ": no file (world size %d)", (int)job->world_size);
		nw_verdict_evidence_flush(x, w);
	}
}

/* When no verdict stands: IDLE (comms created, never used, no NCCL call
 * for long), else HEALTHY. */
void nw_rules_idle(struct nw_jctx *x)
{
	for (size_t i = 0; i < x->nvw; i++)
		if (!x->vw[i]->dropped)
			return;
	if (never_used(x->job) && idle_verdict(x))
		return;
	healthy_verdict(x);
}
