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
 * (not started, failed, mismatched).
 *
 * Findings, not words (docs/ARCHITECTURE.md): every verdict here says
 * facts (facts.h's MM_, SB_, TS_, MR_, IDLE, HEALTHY rows), their words
 * are words/coll_words.c's. */
#include "decide.h"
#include "majority.h"

#include <stdlib.h>
#include <string.h>

/* ---- signatures: what every rank must agree on (nw_coll_sig, decide.h) ---- */

static int rooted(uint16_t k)
{
	return k == NW_OP_BROADCAST || k == NW_OP_BCAST || k == NW_OP_REDUCE || k == NW_OP_GATHER ||
	       k == NW_OP_SCATTER;
}

static int reduction(uint16_t k)
{
	return k == NW_OP_ALLREDUCE || k == NW_OP_REDUCE || k == NW_OP_REDUCESCATTER;
}

struct nw_coll_sig nw_coll_sig(const struct nw_seg_op *op)
{
	struct nw_coll_sig s;
	memset(&s, 0, sizeof s);
	s.kind = op->kind == NW_OP_BCAST ? NW_OP_BROADCAST : op->kind;
	s.count = op->count;
	s.dtype = op->datatype;
	s.root = rooted(op->kind) ? op->root : -1;
	s.redop = reduction(op->kind) ? (op->redop >= 5 ? 5 : op->redop) : -1;
	return s;
}

static int sig_eq(const struct nw_coll_sig *a, const struct nw_coll_sig *b)
{
	return a->kind == b->kind && a->count == b->count && a->dtype == b->dtype && a->root == b->root &&
	       a->redop == b->redop;
}

#define MAX_SIGS 4

struct seqent {
	uint64_t seq;
	struct nw_coll_sig s[MAX_SIGS];
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
			struct nw_coll_sig s = nw_coll_sig(op);
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

/* What the minority's op (b) differs in from the majority's (a), the
 * first of kind, count, datatype, root, redop (enum nw_mm_what). */
static unsigned mismatch_what(const struct nw_coll_sig *a, const struct nw_coll_sig *b)
{
	return a->kind != b->kind ? NW_MM_OP : a->count != b->count ? NW_MM_COUNT : a->dtype != b->dtype ? NW_MM_DTYPE
	       : a->root != b->root ? NW_MM_ROOT : NW_MM_REDOP;
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
static int history_pick(struct nw_jctx *x, const struct nw_comm_view *v, uint64_t seq, const struct nw_coll_sig *s,
                        const uint32_t *cnt, uint32_t nsig, uint32_t top)
{
	struct nw_coll_sig h[HIST_MAX];
	size_t nh = 0;   /* h[0] is #seq-1, h[1] #seq-2, ... */
	for (uint64_t q = seq - 1; q >= 1 && nh < HIST_MAX; q--) {
		struct nw_coll_sig agreed;
		int have = 0, ok = 1;
		for (int32_t r = 0; r < v->nranks && ok; r++) {
			const struct nw_member *m = &v->members[r];
			const struct nw_seg_op *op = m->proc ? nw_member_coll(x, m, q) : NULL;
			if (!op) {
				ok = 0;
				break;
			}
			struct nw_coll_sig t = nw_coll_sig(op);
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
	struct nw_coll_sig s[MAX_SIGS];          /* each group's op */
	const struct nw_seg_op *rep[MAX_SIGS];   /* ...as its first member issued it */
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
		struct nw_coll_sig t = nw_coll_sig(op);
		uint32_t i = 0;
		while (i < mm->nsig && !sig_eq(&mm->s[i], &t))
			i++;
		if (i == mm->nsig) {
			if (mm->nsig == MAX_SIGS)
				i = MAX_SIGS - 1;
			else
				mm->rep[mm->nsig] = op, mm->s[mm->nsig++] = t;
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

/* The verdict's summary: the minority's op and the majority's (what the
 * first minority group's differs in), or, on a tie nothing decides, both
 * sides and "cannot tell which". */
static void mismatch_summary(struct nw_jctx *x, struct nw_vwork *w, const struct mismatch *mm, unsigned what)
{
	uint32_t minor = mm->maj == 0 ? 1 : 0;   /* the first minority group, for the summary */
	struct nw_fact called = { .kind = NW_F_MM_CALLED, .op = mm->rep[minor], .view = mm->v, .seq = mm->seq, .n = what };
	struct nw_fact major = { .kind = mm->undecided ? NW_F_MM_WHILE : NW_F_MM_WHERE, .op = mm->rep[mm->maj], .n = what };
	if (mm->undecided) {
		struct nw_rankset mine = { 0 }, theirs = { 0 };
		for (int32_t r = 0; r < mm->n; r++)
			if (mm->grp[r] != 0xff)
				nw_set_add(x, mm->grp[r] == mm->maj ? &theirs : &mine, mm->v->members[r].proc->rank);
		struct nw_fact tie = { .kind = NW_F_MM_TIE, .set = nw_findings_set(x, w, &mm->minority), .seq = mm->seq };
		called.set = nw_findings_set(x, w, &mine);
		major.set = nw_findings_set(x, w, &theirs);
		nw_rankset_free(&mine);
		nw_rankset_free(&theirs);
		if (!tie.set || !called.set || !major.set)
			return;
		nw_verdict_summary_fact(x, w, &tie);
		nw_verdict_summary_fact(x, w, &called);
		nw_verdict_summary_fact(x, w, &major);
		return;
	}
	called.set = nw_findings_set(x, w, &mm->minority);
	major.set = nw_findings_set(x, w, &mm->majority);
	if (!called.set || !major.set)
		return;
	nw_verdict_summary_fact(x, w, &called);
	nw_verdict_summary_fact(x, w, &major);
	if (w->v.waiting.n) {
		struct nw_fact f = { .kind = NW_F_MM_WAIT };
		nw_verdict_summary_fact(x, w, &f);
	}
	if (mm->by_history) {
		struct nw_fact f = { .kind = NW_F_MM_BY_HISTORY };
		nw_verdict_summary_fact(x, w, &f);
	}
}

/* Each group's values and state, and where the differing op was issued. */
static void mismatch_evidence(struct nw_jctx *x, struct nw_vwork *w, const struct mismatch *mm, unsigned what)
{
	struct nw_fgroups eg = { 0 };
	for (int32_t r = 0; r < mm->n && !x->oom; r++) {
		const struct nw_member *m = &mm->v->members[r];
		if (mm->grp[r] == 0xff)
			continue;
		int major = mm->grp[r] == mm->maj;
		unsigned side = mm->undecided ? NW_MM_ONE_SIDE : major ? (mm->by_history ? NW_MM_HISTORY : NW_MM_MAJORITY)
		                                                       : NW_MM_DIFFERS;
		struct nw_fact f[2] = {
			{ .kind = NW_F_MM_OP, .op = mm->rep[mm->grp[r]], .n = side | what << 4 | (uint64_t)mm->grp[r] << 8 },
			/* 1.4: the Python line that issued the differing op */
			{ .kind = NW_F_MM_STATE, .proc = m->proc, .op = nw_member_coll(x, m, mm->seq), .n = !major },
		};
		nw_fg_add(x, &eg, m->proc, f, 2, NW_NO_AGE);
	}
	nw_fg_flush(x, w, &eg, 8);
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
		unsigned what = mismatch_what(&mm.s[mm.maj], &mm.s[mm.maj == 0 ? 1 : 0]);
		mismatch_members(x, w, &mm);
		mismatch_summary(x, w, &mm, what);
		mismatch_evidence(x, w, &mm, what);
		nw_view_unknown_fact(x, v, w);
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

/* A strict majority of one of its comms' members, alive, issued a
 * collective past it there (they wait for it: a collective never
 * completes without every member): the program goes on past where it
 * stopped, so its idleness is not the program's end on any comm (seed
 * 9262: ranks 4-5, a process whose thread paused, idle at #2 of their tp
 * comm of 3 and of the world; the world's majority waits in #3 for them,
 * so rank 3 alone in the tp comm's #3 did not go past the end). */
static int behind_majority(struct nw_jctx *x, const struct nw_proc *p)
{
	struct nw_pctx *c = &x->pc[p->job_index];
	if (c->behind)
		return c->behind == 2;
	c->behind = 1;
	for (uint32_t i = 0; i < p->ncomms && c->behind == 1; i++) {
		const struct nw_comm_view *v;
		HASH_FIND(hh, x->job->comms, &p->comms[i].comm_id, sizeof p->comms[i].comm_id, v);
		if (!v || v->nranks < 1)
			continue;
		uint64_t at = UINT64_MAX;
		for (int32_t r = 0; r < v->nranks; r++)
			if (v->members[r].proc == p)
				at = v->members[r].comm->coll_enqueued;
		if (at == UINT64_MAX)
			continue;
		uint32_t votes[2] = { 0, 0 };   /* past it, not */
		for (int32_t r = 0; r < v->nranks; r++) {
			const struct nw_member *m = &v->members[r];
			votes[m->proc && !x->sink[m->proc->job_index] && m->comm->coll_enqueued > at ? 0 : 1]++;
		}
		if (nw_majority(votes, 2) == 0)
			c->behind = 2;
	}
	return c->behind == 2;
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
	    m->comm->coll_completed != nstar - 1 || nw_age(p, p->last_activity_ns) <= x->timeout_ns || busy(x, p) ||
	    behind_majority(x, p))
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

/* "ranks 0-7: NCCL 2.28.9, CUDA driver 13.0, host a" per distinct triple. */
static void versions_evidence(struct nw_jctx *x, struct nw_vwork *w, const struct nw_comm_view *v)
{
	struct nw_fgroups eg = { 0 };
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_proc *p = v->members[r].proc;
		if (!p)
			continue;
		struct nw_fact f = { .kind = NW_F_TS_VERSIONS, .proc = p };
		nw_fg_add(x, &eg, p, &f, 1, NW_NO_AGE);
	}
	nw_fg_flush(x, w, &eg, 16);
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
	struct nw_fgroups eg = { 0 };
	uint64_t last = 0;
	uint32_t in_graph = 0, idle = 0;
	struct nw_fact f[2];
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
			f[0] = (struct nw_fact){ .kind = NW_F_MR_PAST_IN };
			uint64_t age = nw_fact_where(x, m->proc, 1, &f[1]);
			nw_fg_add(x, &eg, m->proc, f, 2, age);
		}
	}
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_member *m = &v->members[r];
		if (cls[r] != M_FINISHED && cls[r] != M_IN_GRAPH && cls[r] != M_STOPPED)
			continue;
		f[0] = (struct nw_fact){ .kind = NW_F_MR_STOPPED, .seq = m->comm->coll_enqueued,
		                         .n = cls[r] == M_STOPPED ? 0 : cls[r] == M_FINISHED ? 1 | (uint64_t)m->comm->state << 8 : 2 };
		uint64_t age = nw_fact_where(x, m->proc, 0, &f[1]);
		nw_fg_add(x, &eg, m->proc, f, 2, age);
	}
	nw_fg_flush(x, w, &eg, 8);
	struct nw_fact sum = { .kind = NW_F_MR_PAST, .set = nw_findings_set(x, w, &w->v.culprits), .view = v,
		               .op_kind = kind, .seq = nstar };
	struct nw_fact why = { .kind = NW_F_MR_PAST_DONE, .set = nw_findings_set(x, w, &done), .seq = last,
		               .n = in_graph ? 0 : idle ? 1 : 2 };
	if (sum.set && why.set) {
		nw_verdict_summary_fact(x, w, &sum);
		nw_verdict_summary_fact(x, w, &why);
	}
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
                           struct nw_fgroups *in, struct nw_fgroups *out)
{
	const struct nw_member *m = &f->v->members[r];
	uint8_t c = f->cls[r];
	if (c == M_NOT_ISSUED || c == M_GONE || c == M_CAPTURED) {
		nw_verdict_culprit(x, w, m->proc);
		struct nw_fact e[2] = { { .kind = NW_F_MR_OUT } };
		/* An abort is leaving the comm too (an error path); it is said,
		 * but not weighed as a program's end (finished). */
		if (c == M_NOT_ISSUED && (finished(m) || m->comm->state == NW_COMM_ABORTED))
			e[0].n = 0 | (uint64_t)m->comm->state << 8, e[0].seq = m->comm->coll_enqueued;
		else if (c == M_NOT_ISSUED && held_in_group(x, m, f->nstar))
			e[0].n = 1;
		else if (c == M_NOT_ISSUED)
			e[0].n = 2, e[0].seq = m->comm->coll_enqueued;
		else
			e[0].n = c == M_GONE ? 3 : 4;
		uint64_t age = nw_fact_where(x, m->proc, 1, &e[1]);
		nw_fg_add(x, out, m->proc, e, 2, age);
	} else if (c == M_STARTED || c == M_ENQUEUED) {
		const struct nw_seg_op *op = nw_member_coll(x, m, f->nstar);
		struct nw_fact e = { .kind = NW_F_MR_IN, .n = op ? (uint64_t)op->state + 1 : 0 };
		nw_fg_add(x, in, m->proc, &e, 1, op ? nw_age(m->proc, op->enqueue_ns) : NW_NO_AGE);
	}
}

/* The summary of a MISSING_RANK verdict at the frontier. */
static void missing_summary(struct nw_jctx *x, struct nw_vwork *w, const struct frontier *f)
{
	const uint32_t *cnt = f->cnt;
	const struct nw_fset *waiting = nw_findings_set(x, w, &f->waiting);
	if (!waiting)
		return;
	if (w->v.culprits.n) {
		struct nw_fact s = { .kind = NW_F_MR_SUM, .set = nw_findings_set(x, w, &w->v.culprits), .view = f->v,
		                     .op_kind = f->kind, .seq = f->nstar,
		                     .n = cnt[M_GONE] && !cnt[M_NOT_ISSUED] && !cnt[M_CAPTURED] ? 1
		                          : cnt[M_CAPTURED] && !cnt[M_NOT_ISSUED] && !cnt[M_GONE] ? 2 : 0 };
		struct nw_fact wt = { .kind = NW_F_MR_WAIT, .set = waiting };
		if (!s.set)
			return;
		nw_verdict_summary_fact(x, w, &s);
		nw_verdict_summary_fact(x, w, &wt);
		if (cnt[M_NOFILE]) {
			struct nw_fact nf = { .kind = NW_F_MR_NOFILE_N, .n = cnt[M_NOFILE] };
			nw_verdict_summary_fact(x, w, &nf);
		}
		return;
	}
	struct nw_fact s = { .kind = NW_F_MR_WAIT_IN, .set = waiting, .view = f->v, .op_kind = f->kind, .seq = f->nstar,
	                     .n = f->max_age };
	struct nw_fact u = { .kind = NW_F_MR_UNKNOWN, .n = cnt[M_NOFILE] };
	if (w->v.unknown.n && !(u.set = nw_findings_set(x, w, &w->v.unknown)))
		return;
	nw_verdict_summary_fact(x, w, &s);
	nw_verdict_summary_fact(x, w, &u);
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
	struct nw_fgroups in = { 0 }, out = { 0 };
	for (int32_t r = 0; r < f->n && !x->oom; r++)
		missing_member(x, w, f, r, &in, &out);
	for (uint32_t i = 0; i < f->waiting.n; i++)
		nw_set_add(x, &w->v.waiting, f->waiting.v[i]);
	nw_fg_flush(x, w, &out, 8);
	nw_fg_flush(x, w, &in, 8);
	nw_view_unknown_fact(x, f->v, w);
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
	struct nw_vwork *w = nw_verdict_new(x, NW_V_TRANSPORT_STALL, v, f->kind, f->nstar);
	if (!w)
		return;
	struct nw_fgroups in = { 0 };
	for (int32_t r = 0; r < f->n; r++) {
		const struct nw_member *m = &v->members[r];
		nw_verdict_blame(x, w, m->proc->job_index);
		nw_verdict_waiting(x, w, m->proc);
		const struct nw_seg_op *op = nw_member_coll(x, m, f->nstar);
		struct nw_fact e = { .kind = NW_F_TS_STARTED };
		nw_fg_add(x, &in, m->proc, &e, 1,
		          op ? nw_age(m->proc, op->start_ns ? op->start_ns : op->enqueue_ns) : NW_NO_AGE);
	}
	nw_fg_flush(x, w, &in, 8);
	versions_evidence(x, w, v);
	struct nw_fact s = { .kind = NW_F_TS_ALL, .view = v, .op_kind = f->kind, .seq = f->nstar, .n = f->max_age };
	nw_verdict_summary_fact(x, w, &s);
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
	struct nw_fact why;              /* what its stream is busy with (SB_WHY) */
	struct nw_fgroups eg;
	UT_hash_handle hh;
};

/* One verdict per (comm, #n): its culprits are the ranks whose #n never
 * started, the ranks inside #n wait. The verdict of a blocked (comm, #n),
 * made at its first blocked rank s and added to keys (NULL: out of
 * memory). */
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
	/* what its stream is busy with: the previous op on it (of comm pv), or
	 * work that is not NCCL */
	k->why = (struct nw_fact){ .kind = NW_F_SB_WHY, .proc = s->view->members[s->member].proc, .op = prev, .view = pv,
	                           .n = s->op->stream };
	for (uint32_t j = 0; j < s->waiting_in_it->n; j++)
		nw_set_add(x, &w->v.waiting, s->waiting_in_it->v[j]);
	return k;
}

/* A blocked rank's line: its stream, what it is busy with, where it is. */
static void stream_line(struct nw_jctx *x, struct skey *k, const struct nw_sblock *s, const struct nw_proc *p,
                        const struct nw_seg_op *prev, const struct nw_comm_view *pv)
{
	struct nw_fact f[2] = { { .kind = NW_F_SB_STREAM, .op = prev, .view = pv, .n = s->op->stream } };
	uint64_t age = nw_fact_where(x, p, 1, &f[1]);
	nw_fg_add(x, &k->eg, p, f, 2, age);
}

/* The summary of a blocked (comm, #n): its blocked ranks (the first as the
 * example), what its stream is busy with, who waits inside #n. */
static void stream_summary(struct nw_jctx *x, const struct skey *k)
{
	struct nw_vwork *w = k->w;
	const struct nw_sblock *s = k->first;
	struct nw_fact f = { .kind = NW_F_SB_ONE, .proc = s->view->members[s->member].proc, .op = s->op, .view = s->view,
	                     .n = s->age_ns };
	struct nw_fact why = k->why;
	if (w->v.culprits.n > 1) {
		f.kind = NW_F_SB_MANY;
		why.kind = NW_F_SB_WHY_IN;
		if (!(f.set = nw_findings_set(x, w, &w->v.culprits)))
			return;
	}
	nw_verdict_summary_fact(x, w, &f);
	nw_verdict_summary_fact(x, w, &why);
	/* Those inside #n but the blocked ranks. */
	struct nw_rankset in = { 0 };
	for (uint32_t j = 0; j < s->waiting_in_it->n; j++)
		if (!nw_rankset_has(&w->v.culprits, s->waiting_in_it->v[j]))
			nw_set_add(x, &in, s->waiting_in_it->v[j]);
	if (in.n) {
		struct nw_fact i = { .kind = NW_F_SB_IN, .op = s->op, .set = nw_findings_set(x, w, &in) };
		if (i.set)
			nw_verdict_summary_fact(x, w, &i);
	}
	nw_rankset_free(&in);
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
		nw_fg_flush(x, k->w, &k->eg, 8);
		HASH_DEL(keys, k);
		free(k);
	}
}

/* ---- stuck ops no verdict explains ---- */

/* One verdict per op nobody explains, as its summary names it: a
 * collective by kind, number and comm; a replay by its graph's first op's
 * kind and comm; a send/receive by kind and comm. */
struct ukey {
	struct {
		uint64_t comm_id, seq;
		uint16_t kind;           /* a replay: its graph's first op's */
		uint16_t replay;
	} id;
	const struct nw_seg_op *op;      /* the first rank's, naming it */
	const struct nw_comm_view *v;
	struct nw_vwork *w;
	struct nw_fgroups eg;
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

/* The key of op's verdict (struct ukey). */
static void unexplained_key(const struct nw_seg_op *op, struct ukey *k)
{
	memset(&k->id, 0, sizeof k->id);
	k->id.comm_id = op->comm_id;
	k->id.replay = op->kind == NW_OP_GRAPH_LAUNCH;
	k->id.kind = k->id.replay ? (uint16_t)op->redop : op->kind;
	k->id.seq = NW_OP_IS_COLL(op->kind) ? op->seq : 0;
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
	memcpy(&k->id, &key->id, sizeof k->id);   /* padding too: the hash reads its bytes */
	k->op = op;
	k->v = v;
	k->w = w;
	HASH_ADD(hh, *keys, id, sizeof k->id, k);
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
		struct nw_fact f = { .kind = NW_F_TS_DONE, .set = nw_findings_set(x, w, &done) };
		if (f.set)
			nw_verdict_evidence_fact(x, w, &f);
	}
	nw_rankset_free(&done);
	return k;
}

/* A stuck rank's line: its op (a send/receive with its peer and what the
 * peer posted of the other half), its state and age. */
static void unexplained_line(struct nw_jctx *x, struct ukey *k, const struct nw_proc *p, const struct nw_seg_op *op,
                             const struct nw_comm_view *v)
{
	struct nw_fact f = { .kind = NW_F_TS_IN, .proc = p, .op = op, .view = v, .n = NW_FACT_OTHER };
	if (NW_OP_IS_P2P(op->kind) && v && op->root >= 0 && op->root < v->nranks) {
		const struct nw_member *pm = &v->members[op->root];
		const struct nw_seg_peer *e = pm->proc ? nw_proc_peer(pm->proc, nw_member_slot(pm), op->rank) : NULL;
		f.n = e ? (op->kind == NW_OP_SEND ? e->recv_enqueued : e->send_enqueued) : 0;
	}
	nw_fg_add(x, &k->eg, p, &f, 1, nw_age(p, op->enqueue_ns));
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
		unexplained_key(op, &key);
		HASH_FIND(hh, keys, &key.id, sizeof key.id, k);
		if (!k && !(k = unexplained_verdict(x, &keys, &key, op, v)))
			break;
		nw_verdict_waiting(x, k->w, p);
		nw_verdict_blame(x, k->w, p->job_index);
		unexplained_line(x, k, p, op, v);
	}
	HASH_ITER(hh, keys, k, kt) {
		struct nw_vwork *w = k->w;
		struct nw_fact f = { .kind = NW_F_TS_STUCK, .op = k->op, .view = k->v,
		                     .set = nw_findings_set(x, w, &w->v.waiting) };
		if (f.set)
			nw_verdict_summary_fact(x, w, &f);
		nw_fg_flush(x, w, &k->eg, 8);
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
	struct nw_fgroups eg = { 0 };
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
		struct nw_fact f;
		uint64_t age = nw_fact_where(x, p, 1, &f);
		nw_fg_add(x, &eg, p, &f, 1, age);
	}
	if (!w)
		return 0;
	nw_fg_flush(x, w, &eg, 8);
	struct nw_fact s = { .kind = NW_F_IDLE, .set = nw_findings_set(x, w, &w->v.culprits), .n = idle_min };
	if (s.set)
		nw_verdict_summary_fact(x, w, &s);
	return 1;
}

/* HEALTHY: no stall; the ranks without a file are unknown. */
static void healthy_verdict(struct nw_jctx *x)
{
	struct nw_job *job = x->job;
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
	struct nw_fact s[2] = { { .kind = NW_F_HEALTHY, .job = job, .n = alive, .seq = pending },
		                { .kind = NW_F_HEALTHY_TIMEOUT, .n = x->timeout_ns } };
	nw_verdict_summary_fact(x, w, &s[0]);
	nw_verdict_summary_fact(x, w, &s[1]);
	if (job->missing.n) {
		struct nw_fact f = { .kind = NW_F_HEALTHY_NOFILE, .job = job, .set = nw_findings_set(x, w, &job->missing) };
		if (f.set)
			nw_verdict_evidence_fact(x, w, &f);
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
