/* rootcause: the wait-for model's decision (docs/diagnosis.md).
 *
 * The rules propose candidate verdicts and add wait-for edges; this pass
 * decides which candidates are root causes. Waiting ends where a process
 * waits for nobody: a strongly connected component of the graph with no
 * edge leaving it (a terminal component). So:
 *
 *   1. A culprit that waits for somebody outside its component is not a
 *      root: it is taken out of the verdict (it becomes one of the waiting
 *      ranks). A verdict left without a root culprit is a consequence: it
 *      is folded into the root verdict it waits for, as one evidence line,
 *      never printed as a second culprit.
 *   2. A terminal component of two or more processes is a cycle: each waits
 *      for another. Somebody deviated; the tie-breaks, tried in order (the
 *      table tiebreaks[], with the reason each gives):
 *        a. send/receive counts (nw_p2p_count_deviants): in a pair where B
 *           posted fewer of the other half than A waits for, B if B went
 *           past that number with another peer, else A if A did more with
 *           B than with anybody else;
 *        b. never issued: the processes that never issued an op another
 *           of the cycle waits in, when they are not all of it (the others
 *           only wait behind their own earlier ops for them);
 *        b'. skipped: a process stuck in collective #n that never reached
 *           a collective every other issuer of #n issued before it, or
 *           issued it only after #n (skipped_deviants), when they are not
 *           all of it;
 *        b''. skipped a split: a process past the point of its parent's
 *           collectives where the ranks of the cycle inside a split of it
 *           make that split in every step (skipped_split_deviants);
 *        c. majority (majority.h): processes are grouped by the op they
 *           are stuck in first; a strictly largest group is the majority,
 *           the others deviate; on a tie the processes waiting for the
 *           cycle from outside vote too;
 *        c'. mismatch: a MISMATCH decided by a majority (or its history)
 *           that names ranks of the cycle alone (mismatch_deviants);
 *        e. order kept: the cycle closes through stream order and a
 *           process's queued op reverses the order of its previous ops of
 *           the two comms on that stream (order_history_deviants), when
 *           they are not all of it; none and no verdict names the cycle:
 *           the program as written deadlocks, one STREAM_BLOCKED names
 *           every process of it (program_deadlock);
 *        d. else the cycle cannot be decided: one verdict names the whole
 *           cycle and says so, the cycle's other verdicts fold into it (a
 *           cycle of posted send/receive halves only is the rule file's
 *           P2P_DEADLOCK, which names the cycle itself).
 *      Culprits of the cycle that did not deviate are taken out (1.); a
 *      decided cycle whose deviants no verdict names gets one.
 *   3. Two root verdicts with the same culprits: the higher kind keeps
 *      them, the other is folded into it; again once death took whole
 *      processes (nw_fold_same_culprits).
 *
 * And after the pass for stuck ops no verdict explains (nw_fold_shifted):
 * a stall blaming only a communicator whose earlier collective mismatched
 * is folded into that MISMATCH.
 *
 * And last, a launch-only source that joined a job with segments (a NCCL
 * RAS report lined up with their processes, nw_jctx.joined;
 * nw_fold_launch_only): op numbers decide, launch counts cannot. Its
 * verdicts (launch_only: the rules' on its positions, its own) never
 * stand; the first of them (one with culprits, the highest kind, the most
 * culprits) is one line on each verdict that does, RAS_FOLD_SAYS: it
 * agrees (the same kind and culprits, the same op when both name one) or
 * says otherwise.
 *
 * Dead and exited processes are sinks (no edge leaves them): a root.
 *
 * Findings, no words (facts.h's ROOT_*, said by words/rootcause_words.c):
 * a culprit's "deviates" line and its tie-break, the verdicts this pass
 * makes (a decided cycle's, the program as written deadlocking), a cycle
 * nobody can decide, and a consequence folded into its root (its summary
 * wrapped after a fact, nw_verdict_evidence_wrap_fact). Nothing is left
 * in words here. */
#include "decide.h"
#include "majority.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

struct rctx {
	struct nw_jctx *x;
	struct nw_graph *g;
	uint8_t *leaves;                 /* [nscc]: an edge leaves the component */
	uint32_t *nproc;                 /* [nscc]: processes in it */
	uint8_t *deviant;                /* [nprocs]: deviates in its cycle */
	uint8_t *decided;                /* [nscc]: how the cycle's deviants are known (enum
	                                  * nw_tiebreak, facts.h), 0 not */
	uint8_t *conseq;                 /* [nvw]: the verdict is a consequence, folded at the end */
	size_t nvw;                      /* verdicts when the pass began (later ones are its own) */
};

static int terminal(const struct rctx *r, uint32_t node)
{
	return !r->leaves[r->g->scc[node]];
}

/* The op a process is stuck in first: its oldest open op past the timeout
 * (NULL: none). */
static const struct nw_seg_op *stuck_op(const struct nw_jctx *x, const struct nw_proc *p)
{
	for (size_t i = 0; i < p->nops; i++) {
		const struct nw_seg_op *op = &p->ops[i];
		int open = nw_op_pending(op->state) || op->state == NW_ST_INIT_ENTERED;
		if (open && op->comm_id && nw_age(p, op->enqueue_ns) > x->timeout_ns)
			return op;
	}
	return NULL;
}

/* The communicator an op stands in: its own, but for a split or a shrink
 * the parent's. Why: a split is one collective over the parent whose
 * colors make different children; ranks inside it with different colors
 * are stuck in the same call, not in a minority each. */
static uint64_t sig_comm(struct nw_jctx *x, const struct nw_seg_op *op)
{
	if (op->kind == NW_OP_COMM_SPLIT || op->kind == NW_OP_COMM_SHRINK) {
		const struct nw_comm_view *v = nw_view_of(x, op->comm_id);
		if (v && v->parent_id)
			return v->parent_id;
	}
	return op->comm_id;
}

static int same_sig(struct nw_jctx *x, const struct nw_seg_op *a, const struct nw_seg_op *b)
{
	if (!a || !b)
		return a == b;
	return sig_comm(x, a) == sig_comm(x, b) && a->kind == b->kind &&
	       (NW_OP_IS_P2P(a->kind) ? a->root == b->root && a->seq == b->seq
	                              : nw_op_class(a->kind) != 0 || a->seq == b->seq);
}

/* The `cand` processes marked in `mark` deviate in cycle s when they are
 * not all of it (the others only wait for them): each not yet a deviant
 * becomes one. Returns how many did. */
static size_t mark_deviants(struct rctx *r, uint32_t s, const uint8_t *mark, size_t cand)
{
	size_t marked = 0;
	if (cand && cand < r->nproc[s])
		for (uint32_t n = 0; n < r->g->nprocs; n++)
			if (mark[n] && !r->deviant[n]) {
				r->deviant[n] = 1;
				marked++;
			}
	return marked;
}

/* 2b: inside the cycle, the processes that never issued an op another of
 * the cycle waits in (nw_graph_never_issued), when they are not all of it:
 * the others only wait behind their own earlier ops for them. */
static size_t never_issued_deviants(struct rctx *r, uint32_t s)
{
	uint32_t np = r->g->nprocs;
	uint8_t *mark = calloc(np + 1, 1);
	if (!mark) {
		r->x->oom = 1;
		return 0;
	}
	size_t cand = nw_graph_never_issued(r->g, s, mark), marked = 0;
	marked = mark_deviants(r, s, mark, cand);
	free(mark);
	return marked;
}

/* Whether every edge inside the component is a send/receive one. */
static int only_p2p(const struct rctx *r, uint32_t s)
{
	const struct nw_graph *g = r->g;
	for (size_t i = 0; i < g->nedges; i++) {
		const struct nw_edge *e = &g->edges[i];
		if (e->kind != NW_E_WAIT && g->scc[e->src] == s && g->scc[e->dst] == s && e->kind != NW_E_P2P)
			return 0;
	}
	return 1;
}

static int multi_rank(const struct nw_proc *p);

/* The role a comm plays in a process: the comm itself, or for a child of a
 * split / shrink, (parent, its place among the process's children of that
 * parent, in creation order). Why: the n-th split of a parent gives ranks
 * of different colors different comms that stand for the same step of the
 * program (every pair's tensor-parallel comm). */
struct role {
	uint64_t id;
	uint32_t nth;
	uint64_t comm;                   /* the comm itself */
};

static struct role comm_role(const struct nw_proc *p, uint64_t comm_id)
{
	for (uint32_t i = 0; i < p->ncomms; i++) {
		const struct nw_seg_comm *c = &p->comms[i];
		if (c->comm_id != comm_id)
			continue;
		if ((c->origin == NW_ORIGIN_SPLIT || c->origin == NW_ORIGIN_SHRINK) && c->parent_id) {
			uint32_t nth = 1;
			for (uint32_t j = 0; j < i; j++)
				nth += p->comms[j].parent_id == c->parent_id && p->comms[j].origin == c->origin;
			return (struct role){ c->parent_id, nth, comm_id };
		}
		break;
	}
	return (struct role){ comm_id, 0, comm_id };
}

/* Whether no process is a member of both comms. */
static int disjoint(struct nw_jctx *x, uint64_t a, uint64_t b)
{
	const struct nw_comm_view *va = nw_view_of(x, a), *vb = nw_view_of(x, b);
	for (int32_t i = 0; va && vb && i < va->nranks; i++)
		for (int32_t j = 0; j < vb->nranks; j++)
			if (va->members[i].proc && va->members[i].proc == vb->members[j].proc)
				return 0;
	return 1;
}

/* The same comm, or two children of one split: the comms of one split are
 * disjoint (a process gets one color). Why the check: the n-th child
 * counts only the splits a process got a comm from; where some ranks
 * passed NCCL_SPLIT_NOCOLOR (pair comms P01, P12, P20 made by three
 * splits), a process's n-th child may be another split's, sharing ranks. */
static int same_role(struct nw_jctx *x, struct role a, struct role b)
{
	return a.comm == b.comm || (a.id == b.id && a.nth == b.nth && disjoint(x, a.comm, b.comm));
}

/* P's collectives issued on the comm that plays role `ro` (-1: none). */
static int64_t role_count(struct nw_jctx *x, const struct nw_proc *p, struct role ro)
{
	for (uint32_t i = 0; i < p->ncomms; i++)
		if (p->comms[i].comm_id && same_role(x, comm_role(p, p->comms[i].comm_id), ro))
			return (int64_t)p->comms[i].coll_enqueued;
	return -1;
}

static int is_coll(const struct nw_seg_op *op)
{
	return NW_OP_IS_COLL(op->kind) && op->seq;
}

#define MAX_REFS 8     /* processes that show the order: a few agreeing suffice */
#define MAX_XSIGS 16   /* distinct stuck collectives of one cycle looked at */

/* The processes that issued the counterpart of collective X (same role,
 * kind and number), at most MAX_REFS of them, in job order, with their op. */
struct xrefs {
	struct role rx;
	uint16_t kind;
	uint64_t seq;
	size_t n;
	size_t proc[MAX_REFS];
	const struct nw_seg_op *op[MAX_REFS];
};

static void find_refs(struct nw_jctx *x, struct xrefs *xr)
{
	xr->n = 0;
	for (size_t q = 0; q < x->job->nprocs && xr->n < MAX_REFS; q++) {
		const struct nw_proc *o = x->job->procs[q];
		for (size_t i = 0; i < o->nops; i++)
			if (is_coll(&o->ops[i]) && o->ops[i].seq == xr->seq && o->ops[i].kind == xr->kind &&
			    same_role(x, comm_role(o, o->ops[i].comm_id), xr->rx)) {
				xr->proc[xr->n] = q;
				xr->op[xr->n++] = &o->ops[i];
				break;
			}
	}
}

/* Whether P (job index pi), stuck in collective X, skipped a collective:
 * every other process of refs (those that issued X's counterpart) issued,
 * from the same thread before it, a collective #m of another role that P
 * never reached (P's count there is below m) or reached only after X (it
 * took the two the other way round), and there is at least one such
 * process. Why: P is past a step the program takes before X (those
 * ranks show the order); a process stuck before that step only waits. */
/* Whether P issued its counterpart of z (same role and number) only after
 * its op X: it took the two the other way round. */
static int issued_after(struct nw_jctx *x, const struct nw_proc *p, struct role rz, const struct nw_seg_op *z,
                        const struct nw_seg_op *px)
{
	for (size_t i = 0; px && i < p->nops; i++) {
		const struct nw_seg_op *o = &p->ops[i];
		if (is_coll(o) && o->seq == z->seq && o->kind == z->kind && o->tid == px->tid &&
		    o->enqueue_ns > px->enqueue_ns && same_role(x, comm_role(p, o->comm_id), rz))
			return 1;
	}
	return 0;
}

static int skipped(struct nw_jctx *x, size_t pi, const struct xrefs *xr)
{
	const struct nw_proc *p = x->job->procs[pi];
	const struct nw_seg_op *px = stuck_op(x, p);
	size_t refs = 0, nroles = 0;
	struct role roles[MAX_REFS];     /* the roles the refs found P skipped */
	int missing[MAX_REFS] = { 0 };
	for (size_t k = 0; k < xr->n; k++) {
		if (xr->proc[k] == pi)
			continue;
		const struct nw_proc *o = x->job->procs[xr->proc[k]];
		const struct nw_seg_op *y = xr->op[k];
		int found = 0;
		for (size_t i = 0; i < o->nops && !found; i++) {
			const struct nw_seg_op *z = &o->ops[i];
			if (!is_coll(z) || z->tid != y->tid || z->enqueue_ns >= y->enqueue_ns)
				continue;
			struct role rz = comm_role(o, z->comm_id);
			if (same_role(x, rz, xr->rx))
				continue;
			int64_t have = role_count(x, p, rz);
			found = (have >= 0 && (uint64_t)have < z->seq) || issued_after(x, p, rz, z, px);
			if (found && nroles < MAX_REFS)
				roles[nroles++] = rz;
		}
		if (!found)
			missing[k] = 1;
		refs++;
	}
	/* A ref that found nothing is no counter-example when it is a member
	 * of no comm of the roles the others found (a rank left out of that
	 * split, NCCL_SPLIT_NOCOLOR): it cannot show that order. */
	for (size_t k = 0; k < xr->n; k++) {
		if (!missing[k])
			continue;
		if (!nroles)
			return 0;
		for (size_t j = 0; j < nroles; j++)
			if (role_count(x, x->job->procs[xr->proc[k]], roles[j]) >= 0)
				return 0;
	}
	return refs > 0 && nroles > 0;
}

#define MAX_SPLITS 64

/* The splits of comm w in p's records, in issue order: for each, how many
 * collectives of w p had issued before it (-1: not known, records of w
 * lost before it). Returns how many (at most cap). */
static size_t split_points(struct nw_jctx *x, const struct nw_proc *p, uint64_t w, int64_t *at, size_t cap)
{
	uint64_t first = 0;
	for (size_t i = 0; i < p->nops && !first; i++)
		if (is_coll(&p->ops[i]) && p->ops[i].comm_id == w)
			first = p->ops[i].seq;
	int64_t last = first == 1 || !first ? 0 : -1;
	size_t n = 0;
	for (size_t i = 0; i < p->nops; i++) {
		const struct nw_seg_op *o = &p->ops[i];
		if (is_coll(o) && o->comm_id == w)
			last = (int64_t)o->seq;
		else if ((o->kind == NW_OP_COMM_SPLIT || o->kind == NW_OP_COMM_SHRINK) && sig_comm(x, o) == w) {
			if (n == cap)
				return 0;
			at[n++] = last;
		}
	}
	return n;
}

/* Whether q is inside its last split of a comm: the split's record is
 * still open, or its child was made in a group that has not ended (the
 * call returned, no size learned yet: NCCL creates it at the outermost
 * ncclGroupEnd). Returns that comm (the parent), or 0. */
static uint64_t inside_split(struct nw_jctx *x, const struct nw_proc *q)
{
	for (size_t i = q->nops; i-- > 0;) {
		const struct nw_seg_op *o = &q->ops[i];
		if (o->kind != NW_OP_COMM_SPLIT && o->kind != NW_OP_COMM_SHRINK)
			continue;
		if (nw_age(q, o->enqueue_ns) <= x->timeout_ns)
			return 0;
		if (o->state == NW_ST_INIT_ENTERED)
			return sig_comm(x, o);
		for (uint32_t c = 0; c < q->ncomms; c++)
			if (q->comms[c].comm_id == o->comm_id && q->comms[c].state == NW_COMM_INIT_DONE &&
			    q->comms[c].handle && q->comms[c].nranks < 0)
				return sig_comm(x, o);
		return 0;
	}
	return 0;
}

/* Whether P (job index pi) skipped a split of comm W that another process
 * Q of cycle s is inside: P and Q made the same splits of W before it,
 * after the same numbers of W's collectives; Q's splits recur with a
 * period (every L splits, D more collectives of W, seen at least twice,
 * the one Q is inside included), which puts the split P never made after
 * D collectives more than its L-th before; and P issued a collective of W
 * past that point. Why: a split is a call of its parent; the ranks inside
 * it keep the order of every earlier step, the rank already past it in
 * the parent's collectives skipped it (with two ranks, or two equal
 * halves, no majority tells). */
static int skipped_split(struct rctx *r, uint32_t s, size_t pi)
{
	struct nw_jctx *x = r->x;
	const struct nw_proc *p = x->job->procs[pi];
	int64_t cp[MAX_SPLITS], cq[MAX_SPLITS];
	for (uint32_t m = 0; m < r->g->nprocs; m++) {
		if (m == pi || r->g->scc[m] != s)
			continue;
		const struct nw_proc *q = x->job->procs[m];
		uint64_t w = inside_split(x, q);
		if (!w)
			continue;
		uint64_t past = 0;   /* P's newest collective of W */
		for (size_t i = 0; i < p->nops; i++)
			if (is_coll(&p->ops[i]) && p->ops[i].comm_id == w && p->ops[i].seq > past)
				past = p->ops[i].seq;
		size_t np = split_points(x, p, w, cp, MAX_SPLITS), nq = split_points(x, q, w, cq, MAX_SPLITS);
		if (nq != np + 1 || cq[np] < 0 || (int64_t)past <= cq[np])
			continue;
		int same = 1;
		for (size_t j = 0; j < np && same; j++)
			same = cp[j] == cq[j];
		for (size_t L = 1; same && L <= 4 && L < nq; L++) {
			int64_t d = cq[np] - cq[np - L];
			size_t seen = 0;
			int ok = d > 0;
			for (size_t j = L; ok && j < nq; j++) {
				if (cq[j] < 0 || cq[j - L] < 0)
					continue;
				ok = cq[j] - cq[j - L] == d;
				seen++;
			}
			if (ok && seen >= 2)
				return 1;
		}
	}
	return 0;
}

/* 2b'': the cycle's processes that skipped a split (skipped_split), when
 * they are not all of it. */
static size_t skipped_split_deviants(struct rctx *r, uint32_t s)
{
	size_t cand = 0;
	uint8_t *mark = calloc((size_t)r->g->nprocs + 1, 1);
	if (!mark) {
		r->x->oom = 1;
		return 0;
	}
	for (uint32_t n = 0; n < r->g->nprocs; n++) {
		const struct nw_proc *p = r->x->job->procs[n];
		if (r->g->scc[n] == s && !multi_rank(p) && !inside_split(r->x, p) && skipped_split(r, s, n)) {
			mark[n] = 1;
			cand++;
		}
	}
	size_t marked = mark_deviants(r, s, mark, cand);
	free(mark);
	return marked;
}

/* 2b': the cycle's processes that skipped a collective (skipped), when
 * they are not all of it. */
static size_t skipped_deviants(struct rctx *r, uint32_t s)
{
	const struct nw_graph *g = r->g;
	size_t cand = 0, marked = 0, nx = 0;
	uint8_t *mark = calloc((size_t)g->nprocs + 1, 1);
	struct xrefs *xs = calloc(MAX_XSIGS, sizeof *xs);
	if (!mark || !xs) {
		free(mark);
		free(xs);
		r->x->oom = 1;
		return 0;
	}
	for (uint32_t n = 0; n < g->nprocs; n++) {
		if (g->scc[n] != s)
			continue;
		const struct nw_proc *p = r->x->job->procs[n];
		const struct nw_seg_op *xo = stuck_op(r->x, p);
		if (!xo || !is_coll(xo) || multi_rank(p))
			continue;
		struct role rx = comm_role(p, xo->comm_id);
		size_t k = 0;
		while (k < nx && !(same_role(r->x, xs[k].rx, rx) && xs[k].kind == xo->kind && xs[k].seq == xo->seq))
			k++;
		if (k == nx) {
			if (nx == MAX_XSIGS)
				continue;
			xs[nx] = (struct xrefs){ .rx = rx, .kind = xo->kind, .seq = xo->seq };
			find_refs(r->x, &xs[nx++]);
		}
		if (skipped(r->x, n, &xs[k])) {
			mark[n] = 1;
			cand++;
		}
	}
	marked = mark_deviants(r, s, mark, cand);
	free(mark);
	free(xs);
	return marked;
}

/* Whether a process holds two ranks of one communicator (ncclCommInitAll,
 * several InitRank in a group: one process, one thread per GPU). */
static int multi_rank(const struct nw_proc *p)
{
	for (uint32_t i = 0; i < p->ncomms; i++)
		for (uint32_t j = i + 1; j < p->ncomms; j++)
			if (p->comms[i].comm_id && p->comms[i].comm_id == p->comms[j].comm_id)
				return 1;
	return 0;
}

#define MAX_VOTES 64   /* ranks one process drives that vote; more are rare */

/* A process's votes: the op it is stuck in first (stuck_op). A process
 * that drives several ranks votes once per calling thread, with that
 * thread's oldest stuck op. Why: its ranks are distinct members of the
 * comm; one of its threads taking another path while its other threads
 * agree with everybody else is a deviation the oldest op alone hides (it
 * may well be the agreeing thread's). Returns the number of votes. */
static size_t proc_votes(const struct nw_jctx *x, const struct nw_proc *p, const struct nw_seg_op **out)
{
	const struct nw_seg_op *first = stuck_op(x, p);
	if (!first)
		return 0;
	out[0] = first;
	if (!multi_rank(p))
		return 1;
	size_t n = 1;
	for (size_t i = 0; i < p->nops && n < MAX_VOTES; i++) {
		const struct nw_seg_op *op = &p->ops[i];
		int open = nw_op_pending(op->state) || op->state == NW_ST_INIT_ENTERED;
		if (!open || !op->comm_id || nw_age(p, op->enqueue_ns) <= x->timeout_ns)
			continue;
		size_t k = 0;
		while (k < n && out[k]->tid != op->tid)
			k++;
		if (k == n)
			out[n++] = op;
	}
	return n;
}

/* 2d: a cycle the votes leave tied, in which a MISMATCH with a majority
 * (or decided by history: it has ranks that only wait) names ranks of the
 * cycle alone: they passed other arguments at the same position than the
 * rest of their comm; the others of the cycle only wait behind their own
 * streams for them (one rank issued two comms' ops in another order on
 * one stream, and the moved op lands on a position where its comm
 * expects another). */
static size_t mismatch_deviants(struct rctx *r, uint32_t s)
{
	struct nw_jctx *x = r->x;
	size_t marked = 0;
	for (size_t i = 0; i < x->nvw; i++) {
		const struct nw_vwork *w = x->vw[i];
		if (w->dropped || w->v.kind != NW_V_MISMATCH || !w->v.culprits.n || !w->v.waiting.n)
			continue;
		int inside = 1;
		for (uint32_t k = 0; k < w->v.culprits.n && inside; k++) {
			size_t at = nw_proc_by_rank(x->job, w->v.culprits.v[k]);
			inside = at < x->job->nprocs && r->g->scc[at] == s;
		}
		if (!inside)
			continue;
		for (uint32_t k = 0; k < w->v.culprits.n; k++) {
			size_t at = nw_proc_by_rank(x->job, w->v.culprits.v[k]);
			if (!r->deviant[at]) {
				r->deviant[at] = 1;
				marked++;
			}
		}
	}
	return marked;
}

#define SIG(sig, n, i) (sig)[(size_t)(n) * MAX_VOTES + (i)]

/* How many of the voters' votes are the op c (a process without a stuck
 * op votes NULL). */
static uint32_t votes_for(struct nw_jctx *x, uint32_t np, const struct nw_seg_op **sig, const uint32_t *nsig,
                          const uint8_t *voter, const struct nw_seg_op *c)
{
	uint32_t votes = 0;
	for (uint32_t m = 0; m < np; m++) {
		if (!voter[m])
			continue;
		if (!nsig[m])
			votes += same_sig(x, c, NULL);
		for (uint32_t j = 0; j < nsig[m]; j++)
			votes += same_sig(x, c, SIG(sig, m, j));
	}
	return votes;
}

/* One round of 2c: the candidates are the distinct votes of the cycle's
 * voting processes, each counted over every voter; the strict majority of
 * them (nw_majority). Returns 1 and its op in *maj (NULL: the majority has
 * no stuck op), 0 on a tie. */
static int round_majority(struct rctx *r, uint32_t s, const struct nw_seg_op **sig, const uint32_t *nsig,
                          const uint8_t *voter, const struct nw_seg_op **maj)
{
	struct nw_jctx *x = r->x;
	uint32_t np = r->g->nprocs, ncand = 0, cap = 0;
	for (uint32_t n = 0; n < np; n++)
		if (voter[n] && r->g->scc[n] == s)
			cap += nsig[n] ? nsig[n] : 1;
	const struct nw_seg_op **cand = malloc(((size_t)cap + 1) * sizeof *cand);
	uint32_t *votes = malloc(((size_t)cap + 1) * sizeof *votes);
	int found = 0;
	if (!cand || !votes) {
		x->oom = 1;
		goto out;
	}
	for (uint32_t n = 0; n < np; n++) {
		if (!voter[n] || r->g->scc[n] != s)
			continue;
		for (uint32_t i = 0; i < (nsig[n] ? nsig[n] : 1); i++) {
			const struct nw_seg_op *c = nsig[n] ? SIG(sig, n, i) : NULL;
			uint32_t k = 0;
			while (k < ncand && !same_sig(x, cand[k], c))
				k++;
			if (k < ncand)
				continue;
			cand[ncand] = c;
			votes[ncand++] = votes_for(x, np, sig, nsig, voter, c);
		}
	}
	int k = nw_majority(votes, ncand);
	if (k != NW_NO_MAJORITY) {
		*maj = cand[k];
		found = 1;
	}
out:
	free(cand);
	free(votes);
	return found;
}

/* Marks the cycle's processes (seeds) with a vote other than the
 * majority's op as deviants; returns how many. */
static size_t mark_minority(struct rctx *r, const uint32_t *seeds, size_t nseeds, const struct nw_seg_op **sig,
                            const uint32_t *nsig, const struct nw_seg_op *maj)
{
	size_t marked = 0;
	for (size_t i = 0; i < nseeds; i++) {
		uint32_t n = seeds[i];
		int differs = !nsig[n] && !same_sig(r->x, NULL, maj);
		for (uint32_t j = 0; j < nsig[n]; j++)
			differs |= !same_sig(r->x, SIG(sig, n, j), maj);
		if (differs) {
			r->deviant[n] = 1;
			marked++;
		}
	}
	return marked;
}

/* The voters of a round: round 0 the cycle's processes (seeds), round 1
 * also those that wait for it and have a stuck op. */
static void round_voters(struct nw_graph *g, int round, const uint32_t *seeds, size_t nseeds,
                         const uint32_t *nsig, uint32_t *reach, uint8_t *voter)
{
	if (round == 0) {
		for (size_t i = 0; i < nseeds; i++)
			voter[seeds[i]] = 1;
		return;
	}
	size_t nr = nw_graph_reaching(g, seeds, nseeds, reach);
	for (size_t i = 0; i < nr; i++)
		if (reach[i] < g->nprocs && nsig[reach[i]])
			voter[reach[i]] = 1;
}

/* 2c: the majority of the op the cycle's processes are stuck in first;
 * on a tie (or when the majority's side names nobody) the processes
 * waiting for the cycle from outside vote too. */
/* The voters from outside cycle s that can tell its ops apart: members
 * of a comm of each op's role (the op's comm, or a split of the same
 * place). Why: a process with no comm of one of them (left out of that
 * split, NCCL_SPLIT_NOCOLOR) never issues that op; its vote for the other
 * says nothing about which the program issues first. */
static void outside_witnesses(struct rctx *r, uint32_t s, const struct nw_seg_op **sig, const uint32_t *nsig,
                              uint8_t *voter)
{
	struct nw_jctx *x = r->x;
	for (uint32_t m = 0; m < r->g->nprocs; m++) {
		if (!voter[m] || r->g->scc[m] == s)
			continue;
		for (uint32_t n = 0; n < r->g->nprocs && voter[m]; n++) {
			if (r->g->scc[n] != s)
				continue;
			for (uint32_t j = 0; j < nsig[n] && voter[m]; j++) {
				const struct nw_seg_op *c = SIG(sig, n, j);
				if (c && c->comm_id &&
				    role_count(x, x->job->procs[m], comm_role(x->job->procs[n], sig_comm(x, c))) < 0)
					voter[m] = 0;
			}
		}
	}
}

static size_t majority_deviants(struct rctx *r, uint32_t s)
{
	struct nw_jctx *x = r->x;
	struct nw_graph *g = r->g;
	uint32_t np = g->nprocs;
	const struct nw_seg_op **sig = calloc(((size_t)np + 1) * MAX_VOTES, sizeof *sig);
	uint32_t *nsig = calloc(np + 1, sizeof *nsig);
	uint32_t *reach = malloc(((size_t)g->nnodes + 1) * sizeof *reach);
	uint32_t *seeds = malloc(((size_t)np + 1) * sizeof *seeds);
	size_t marked = 0;
	if (!sig || !nsig || !reach || !seeds) {
		x->oom = 1;
		goto out;
	}
	size_t nseeds = 0;
	for (uint32_t n = 0; n < np; n++) {
		nsig[n] = (uint32_t)proc_votes(x, x->job->procs[n], &SIG(sig, n, 0));
		if (g->scc[n] == s)
			seeds[nseeds++] = n;
	}
	for (int round = 0; round < 2 && !marked; round++) {
		uint8_t *voter = calloc(np + 1, 1);
		if (!voter) {
			x->oom = 1;
			goto out;
		}
		round_voters(g, round, seeds, nseeds, nsig, reach, voter);
		outside_witnesses(r, s, sig, nsig, voter);
		const struct nw_seg_op *maj = NULL;
		int found = round_majority(r, s, sig, nsig, voter, &maj);
		free(voter);
		if (found)
			marked = mark_minority(r, seeds, nseeds, sig, nsig, maj);
	}
out:
	free(sig);
	free(nsig);
	free(reach);
	free(seeds);
	return marked;
}
#undef SIG

/* 2a: send/receive counts (verdicts_p2p.c). */
static size_t count_deviants(struct rctx *r, uint32_t s)
{
	return nw_p2p_count_deviants(r->x, s, r->deviant);
}

/* ---- 2e: stream order kept before ----
 * A cycle that closes through stream order: a process's collective of
 * comm A is queued (not started) behind its own pending collective of
 * comm B on the same stream, and another process of the cycle waits in
 * A. The order the process issued its previous ops of A and B in on that
 * stream (the completed ops in its ring) is the program's order as it ran
 * so far; a process whose current order reverses it changed its path. */

/* P's latest collective of comm on stream committed before op (NULL: the
 * ring holds none: no history). */
/* The same comm, or an earlier instance of its group: a child of a split
 * of the same parent over the same processes at the same comm ranks that
 * ended (finalized or destroyed on every member) before (a group made
 * anew every step; two live comms over the same ranks are two groups).
 * Why: the fresh comm has no earlier ops; the ended instances hold the
 * order the group kept. */
static int same_group(struct nw_jctx *x, uint64_t a, uint64_t b)
{
	if (a == b)
		return 1;
	const struct nw_comm_view *va = nw_view_of(x, a), *vb = nw_view_of(x, b);
	if (!va || !vb || va->origin != NW_ORIGIN_SPLIT || vb->origin != NW_ORIGIN_SPLIT || !va->parent_id ||
	    va->parent_id != vb->parent_id || va->nranks != vb->nranks || va->nranks <= 0)
		return 0;
	for (int32_t i = 0; i < va->nranks; i++) {
		const struct nw_member *m = &va->members[i];
		if (!m->proc || m->proc != vb->members[i].proc || !m->comm ||
		    (m->comm->state != NW_COMM_FINALIZED && m->comm->state != NW_COMM_DESTROYED))
			return 0;
	}
	return 1;
}

static const struct nw_seg_op *last_before(struct nw_jctx *x, const struct nw_proc *p, uint64_t comm,
                                           uint64_t stream, const struct nw_seg_op *op)
{
	const struct nw_seg_op *found = NULL;
	for (size_t i = 0; i < p->nops; i++) {
		const struct nw_seg_op *o = &p->ops[i];
		if (o == op || o->commit >= op->commit)
			break;
		if (is_coll(o) && o->stream == stream && same_group(x, o->comm_id, comm))
			found = o;
	}
	return found;
}

/* Whether another process of component s is a member of comm. */
static int comm_in_cycle(struct rctx *r, uint32_t s, uint64_t comm, const struct nw_proc *p)
{
	const struct nw_comm_view *v = nw_view_of(r->x, comm);
	for (int32_t i = 0; v && i < v->nranks; i++) {
		const struct nw_proc *m = v->members[i].proc;
		if (m && m != p && m->job_index < r->g->nprocs && r->g->scc[m->job_index] == s)
			return 1;
	}
	return 0;
}

/* A stream-order hold whose order changed: P queued `held` behind `prev`
 * (of another comm) where its previous ops of the two comms, `was_held`
 * and `was_prev`, came the other way round. */
struct reorder {
	const struct nw_seg_op *held, *prev, *was_held, *was_prev;
};

/* P's stream-order holds the cycle s goes through (held: its queued op,
 * prev: the op of another comm it waits behind). Returns 1 when one of
 * them reverses the order of P's previous ops of the two comms on that
 * stream (the first such into *ro when not NULL); *holds counts them. */
static int order_changed(struct rctx *r, uint32_t s, const struct nw_proc *p, size_t *holds, struct reorder *ro)
{
	int changed = 0;
	for (size_t i = 0; i < p->nops; i++) {
		const struct nw_seg_op *held = &p->ops[i];
		if (!is_coll(held) || held->state != NW_ST_ENQUEUED)
			continue;
		const struct nw_seg_op *prev = nw_previous_work(p, held);
		if (!prev || !is_coll(prev) || prev->comm_id == held->comm_id || !comm_in_cycle(r, s, held->comm_id, p))
			continue;
		(*holds)++;
		const struct nw_seg_op *a = last_before(r->x, p, held->comm_id, held->stream, prev);
		const struct nw_seg_op *b = last_before(r->x, p, prev->comm_id, held->stream, prev);
		if (a && b && a->commit < b->commit) {
			if (ro && !changed)
				*ro = (struct reorder){ held, prev, a, b };
			changed = 1;
		}
	}
	return changed;
}

/* The evidence of a cycle decided by the order kept: for each deviant,
 * which order it kept and which it took. */
static void reorder_evidence(struct rctx *r, uint32_t s, struct nw_vwork *w)
{
	struct nw_jctx *x = r->x;
	for (uint32_t n = 0; n < r->g->nprocs; n++) {
		const struct nw_proc *p = x->job->procs[n];
		struct reorder ro;
		size_t holds = 0;
		if (r->g->scc[n] != s || !r->deviant[n] || !order_changed(r, s, p, &holds, &ro))
			continue;
		const struct nw_seg_op *ops[4] = { ro.was_held, ro.was_prev, ro.prev, ro.held };
		static const uint16_t says[4] = { NW_F_ROOT_BROKE, NW_F_ROOT_BROKE_THEN, NW_F_ROOT_BROKE_BEFORE,
		                                  NW_F_ROOT_BROKE_LAST };
		struct nw_fact f[4];
		for (int k = 0; k < 4; k++)
			f[k] = (struct nw_fact){ .kind = says[k], .proc = p, .op = ops[k],
			                         .view = nw_view_of(x, ops[k]->comm_id) };
		nw_verdict_evidence_facts(x, w, f, 4);
	}
}

/* 2e: the cycle's processes whose stream order changed (order_changed),
 * when they are not all of it. */
static size_t order_history_deviants(struct rctx *r, uint32_t s)
{
	uint32_t np = r->g->nprocs;
	uint8_t *mark = calloc(np + 1, 1);
	size_t cand = 0, marked = 0, holds = 0;
	if (!mark) {
		r->x->oom = 1;
		return 0;
	}
	for (uint32_t n = 0; n < np; n++) {
		const struct nw_proc *p = r->x->job->procs[n];
		if (r->g->scc[n] == s && !multi_rank(p) && order_changed(r, s, p, &holds, NULL)) {
			mark[n] = 1;
			cand++;
		}
	}
	marked = mark_deviants(r, s, mark, cand);
	free(mark);
	return marked;
}

/* Whether a process of cycle s holds an op of the cycle behind its own op
 * of another comm on the same stream: the cycle closes through stream
 * order. */
static int stream_cycle(struct rctx *r, uint32_t s)
{
	size_t holds = 0;
	for (uint32_t n = 0; n < r->g->nprocs; n++)
		if (r->g->scc[n] == s)
			order_changed(r, s, r->x->job->procs[n], &holds, NULL);
	return holds > 0;
}

/* The tie-breaks between the processes of a cycle (2. above; enum
 * nw_tiebreak, facts.h), in the order they are tried: the first that
 * marks deviants decides the cycle; none does, the cycle cannot be
 * decided (cannot_decide). Each row: the function that marks the deviants
 * (returns how many), and whether it also judges a cycle of send/receive
 * edges only (where every rank posted what it should have, that stays a
 * P2P_DEADLOCK). The reason a deviant's verdict gives is its words
 * (ROOT_IN_CYCLE). */
struct tiebreak {
	size_t (*deviants)(struct rctx *r, uint32_t s);
	int p2p_only_too;
};

static const struct tiebreak tiebreaks[NW_TB_N] = {
	[NW_TB_COUNTS] = { count_deviants, 1 },
	[NW_TB_NEVER_ISSUED] = { never_issued_deviants, 0 },
	[NW_TB_SKIPPED] = { skipped_deviants, 0 },
	[NW_TB_SKIPPED_SPLIT] = { skipped_split_deviants, 0 },
	[NW_TB_MAJORITY] = { majority_deviants, 0 },
	[NW_TB_MISMATCH] = { mismatch_deviants, 0 },
	[NW_TB_ORDER_KEPT] = { order_history_deviants, 0 },
};

/* 2: which tie-break decides cycle s (0: none). */
static uint8_t decide_cycle(struct rctx *r, uint32_t s)
{
	for (uint8_t by = NW_TB_COUNTS; by < NW_TB_N; by++) {
		if (!tiebreaks[by].p2p_only_too && only_p2p(r, s))
			continue;
		if (tiebreaks[by].deviants(r, s))
			return by;
	}
	return 0;
}

static int is_root(const struct rctx *r, uint32_t node)
{
	if (!terminal(r, node))
		return 0;
	uint32_t s = r->g->scc[node];
	return r->nproc[s] < 2 || !r->decided[s] || r->deviant[node];
}

/* Culprits that are not roots leave the verdict; returns how many roots
 * (or files not found, which cannot be judged) remain. */
static uint32_t keep_root_culprits(struct rctx *r, struct nw_vwork *w)
{
	struct nw_jctx *x = r->x;
	struct nw_rankset keep = { 0 };
	uint32_t n = 0;
	for (uint32_t k = 0; k < w->v.culprits.n; k++) {
		int32_t rank = w->v.culprits.v[k];
		size_t at = nw_proc_by_rank(x->job, rank);
		if (at >= x->job->nprocs || is_root(r, (uint32_t)at)) {
			nw_set_add(x, &keep, rank);
			n++;
		}
	}
	/* Why: a culprit that deviates in a cycle, or culprits taken out. */
	size_t at0 = n ? nw_proc_by_rank(x->job, keep.n ? keep.v[0] : w->v.culprits.v[0]) : x->job->nprocs;
	uint32_t s0 = at0 < x->job->nprocs ? r->g->scc[at0] : NONE;
	int in_cycle = s0 != NONE && r->nproc[s0] >= 2 && r->decided[s0] && r->deviant[at0];
	if (n && (n != w->v.culprits.n || in_cycle)) {
		const struct nw_rankset *named = n != w->v.culprits.n ? &keep : &w->v.culprits;
		struct nw_fact f[2] = { { .kind = NW_F_ROOT_DEVIATES, .set = nw_findings_set(x, w, named) },
		                        { .kind = NW_F_ROOT_NOBODY } };
		if (in_cycle) {
			struct nw_rankset cyc = { 0 };
			for (uint32_t k = 0; k < r->g->nprocs; k++)
				if (r->g->scc[k] == s0 && x->job->procs[k]->rank >= 0)
					nw_set_add(x, &cyc, x->job->procs[k]->rank);
			f[1] = (struct nw_fact){ .kind = NW_F_ROOT_IN_CYCLE, .set = nw_findings_set(x, w, &cyc),
			                         .n = r->decided[s0] };
			nw_rankset_free(&cyc);
		}
		if (f[0].set && (!in_cycle || f[1].set))
			nw_verdict_evidence_facts(x, w, f, 2);
	}
	if (n && n != w->v.culprits.n) {
		nw_rankset_free(&w->v.culprits);
		w->v.culprits = keep;
		/* Blame what remains. */
		w->nblame = 0;
		for (uint32_t k = 0; k < keep.n; k++) {
			size_t at = nw_proc_by_rank(x->job, keep.v[k]);
			if (at < x->job->nprocs)
				nw_verdict_blame(x, w, (uint32_t)at);
		}
	} else {
		nw_rankset_free(&keep);   /* all roots, or none: a consequence keeps its culprits to be traced */
	}
	return n;
}

/* A verdict that blames the comm (no culprits) is a root while one of the
 * processes it blames is. */
static int blames_root(const struct rctx *r, const struct nw_vwork *w)
{
	for (size_t k = 0; k < w->nblame; k++)
		if (w->blame[k] < r->g->nprocs && terminal(r, w->blame[k]))
			return 1;
	return w->nblame == 0;
}

static int same_set(const struct nw_rankset *a, const struct nw_rankset *b)
{
	return a->n == b->n && (!a->n || !memcmp(a->v, b->v, a->n * sizeof *a->v));
}

/* Whether one of the verdict's culprits is in component s. */
static int in_scc(const struct rctx *r, const struct nw_vwork *w, uint32_t s)
{
	for (uint32_t k = 0; k < w->v.culprits.n; k++) {
		size_t at = nw_proc_by_rank(r->x->job, w->v.culprits.v[k]);
		if (at < r->g->nprocs && r->g->scc[at] == s)
			return 1;
	}
	return 0;
}

/* "also: KIND: summary" on the root, and the consequence withdrawn. */
static void fold(struct nw_jctx *x, struct nw_vwork *root, struct nw_vwork *w)
{
	struct nw_fact head = { .kind = NW_F_ROOT_CONSEQUENCE, .n = w->v.kind };
	nw_verdict_evidence_wrap_fact(x, root, &head, w);   /* its summary wrapped, not read (facts.h) */
	for (uint32_t k = 0; k < w->v.waiting.n; k++)
		if (!nw_rankset_has(&root->v.culprits, w->v.waiting.v[k]))
			nw_set_add(x, &root->v.waiting, w->v.waiting.v[k]);
	w->dropped = 1;
}

/* The root verdict a consequence waits for: the first (in rank order of
 * kinds) whose blamed nodes its blamed nodes or culprits reach. */
static struct nw_vwork *root_of(struct rctx *r, struct nw_vwork *w, uint32_t *reach)
{
	struct nw_jctx *x = r->x;
	struct nw_vwork *best = NULL;
	for (size_t i = 0; i < x->nvw; i++) {
		struct nw_vwork *c = x->vw[i];
		if (c == w || c->dropped || !c->nblame)
			continue;
		size_t nr = nw_graph_reaching(r->g, c->blame, c->nblame, reach);
		int hit = 0;
		for (size_t k = 0; k < nr && !hit; k++) {
			for (size_t b = 0; b < w->nblame && !hit; b++)
				hit = reach[k] == w->blame[b];
			if (reach[k] < r->g->nprocs) {
				int32_t rank = x->job->procs[reach[k]]->rank;
				hit |= rank >= 0 && nw_rankset_has(&w->v.culprits, rank);
			}
		}
		if (hit && (!best || c->v.kind > best->v.kind))
			best = c;
	}
	return best;
}

/* The deviant's own op of collective op's comm and number, NULL none. */
static const struct nw_seg_op *deviant_copy(struct nw_jctx *x, const struct nw_proc *dev, const struct nw_seg_op *op)
{
	const struct nw_comm_view *v = nw_view_of(x, op->comm_id);
	for (int32_t cr = 0; v && cr < v->nranks; cr++)
		if (v->members[cr].proc == dev)
			return nw_member_coll(x, &v->members[cr], op->seq);
	return NULL;
}

/* A verdict for a decided cycle whose deviants no verdict names. */
static void cycle_verdict(struct rctx *r, uint32_t s)
{
	struct nw_jctx *x = r->x;
	struct nw_graph *g = r->g;
	const struct nw_proc *dev = NULL;
	const struct nw_seg_op *dop = NULL, *mop = NULL;
	for (uint32_t n = 0; n < g->nprocs; n++) {
		if (g->scc[n] != s)
			continue;
		const struct nw_seg_op *op = stuck_op(x, x->job->procs[n]);
		if (r->deviant[n] && !dev) {
			dev = x->job->procs[n];
			dop = op;
		} else if (!r->deviant[n] && !mop) {
			mop = op;
		}
	}
	if (!dev)
		return;
	/* Where the deviant holds the majority's op: behind its own op on the
	 * same stream (stream order), or not issued at all. Of the others'
	 * stuck ops, one the deviant holds behind its own op on its stream
	 * says it best (others of the cycle may wait in something else, a
	 * send that waits behind that op, first). */
	const struct nw_seg_op *held = NULL;
	for (uint32_t n = 0; n < g->nprocs && dop; n++) {
		if (g->scc[n] != s || r->deviant[n])
			continue;
		const struct nw_seg_op *op = stuck_op(x, x->job->procs[n]);
		const struct nw_seg_op *h = op && NW_OP_IS_COLL(op->kind) ? deviant_copy(x, dev, op) : NULL;
		if (h && h->state == NW_ST_ENQUEUED && h->stream == dop->stream) {
			mop = op;
			held = h;
			break;
		}
	}
	if (!held && mop && NW_OP_IS_COLL(mop->kind))
		held = deviant_copy(x, dev, mop);
	int stream = held && held->state == NW_ST_ENQUEUED && dop && held->stream == dop->stream;
	const struct nw_comm_view *hv = mop ? nw_view_of(x, mop->comm_id) : NULL;
	struct nw_vwork *w = nw_verdict_new(x, stream ? NW_V_STREAM_BLOCKED : NW_V_MISSING_RANK, hv,
	                                    mop ? mop->kind : 0, mop ? mop->seq : 0);
	if (!w)
		return;
	if (stream) {
		struct nw_fact h = { .kind = NW_F_ROOT_STREAM_HINT };
		nw_verdict_hint_fact(x, w, &h);
	}
	for (uint32_t n = 0; n < g->nprocs; n++)
		if (g->scc[n] == s && r->deviant[n])
			nw_verdict_culprit(x, w, x->job->procs[n]);
	/* "ranks D issued <dop> before <mop> ..." / "are in <dop> while the others wait in <mop> ..." */
	const struct nw_fset *who = nw_findings_set(x, w, &w->v.culprits);
	struct nw_fact f[3] = {
		{ .kind = NW_F_RANKS, .set = who },
		{ .kind = stream ? NW_F_ROOT_STREAM : NW_F_ROOT_DIFFERS, .set = who, .op = dop,
		  .view = dop ? nw_view_of(x, dop->comm_id) : NULL },
		{ .kind = stream ? NW_F_ROOT_STREAM_END : NW_F_ROOT_DIFFERS_END, .set = who, .op = mop, .view = hv },
	};
	for (int k = 0; k < 3 && who; k++)
		nw_verdict_summary_fact(x, w, &f[k]);
	if (r->decided[s] == NW_TB_ORDER_KEPT)
		reorder_evidence(r, s, w);
	nw_fact_where_component(x, w, s);
}

/* The components' sizes and which of them an edge leaves. */
static int rctx_init(struct rctx *r, struct nw_jctx *x)
{
	struct nw_graph *g = &x->g;
	*r = (struct rctx){ .x = x, .g = g };
	r->leaves = calloc((size_t)g->nscc + 1, 1);
	r->nproc = calloc((size_t)g->nscc + 1, sizeof *r->nproc);
	r->decided = calloc((size_t)g->nscc + 1, 1);
	r->deviant = calloc((size_t)g->nprocs + 1, 1);
	if (!r->leaves || !r->nproc || !r->decided || !r->deviant)
		return -1;
	for (size_t i = 0; i < g->nedges; i++) {
		const struct nw_edge *e = &g->edges[i];
		if (e->kind != NW_E_WAIT && g->scc[e->src] != g->scc[e->dst])
			r->leaves[g->scc[e->src]] = 1;
	}
	for (uint32_t n = 0; n < g->nprocs; n++)
		r->nproc[g->scc[n]]++;
	return 0;
}

static void rctx_free(struct rctx *r)
{
	free(r->leaves);
	free(r->nproc);
	free(r->decided);
	free(r->deviant);
	free(r->conseq);
}

/* A cycle: a terminal component of two or more processes. */
static int is_cycle(const struct rctx *r, uint32_t s)
{
	return !r->leaves[s] && r->nproc[s] >= 2;
}

/* 1: culprits that wait are not roots; verdicts with none left are
 * consequences. */
static void mark_consequences(struct rctx *r)
{
	struct nw_jctx *x = r->x;
	for (size_t i = 0; i < r->nvw; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped)
			continue;
		if (w->v.culprits.n)
			r->conseq[i] = keep_root_culprits(r, w) == 0;
		else
			r->conseq[i] = !blames_root(r, w);
	}
}

/* Decided cycles whose deviants nobody names get a verdict. A
 * P2P_DEADLOCK over a cycle that also waits through collectives or stream
 * order, decided by who skipped, never issued or is in the minority, names
 * the deviant for the wrong reason (its hint is about send/receive
 * posting): it folds into the cycle's own verdict. */
static void name_deviants(struct rctx *r, uint32_t s)
{
	struct nw_jctx *x = r->x;
	int named = 0, p2p_only = only_p2p(r, s);
	for (size_t i = 0; i < r->nvw && !named; i++) {
		const struct nw_vwork *w = x->vw[i];
		if (w->dropped || r->conseq[i])
			continue;
		if (w->v.kind == NW_V_P2P_DEADLOCK && r->decided[s] != NW_TB_COUNTS && !p2p_only && in_scc(r, w, s)) {
			r->conseq[i] = 1;
			continue;
		}
		for (uint32_t k = 0; k < w->v.culprits.n && !named; k++) {
			size_t at = nw_proc_by_rank(x->job, w->v.culprits.v[k]);
			named = at < r->g->nprocs && r->g->scc[at] == s;
		}
	}
	if (!named)
		cycle_verdict(r, s);
}

/* The cycle's verdict that speaks for it: the first by kind, then by the
 * order they were made in (NULL: none). */
static struct nw_vwork *cycle_keeper(struct rctx *r, uint32_t s)
{
	struct nw_vwork *keep = NULL;
	for (size_t i = 0; i < r->nvw; i++) {
		struct nw_vwork *w = r->x->vw[i];
		if (w->dropped || r->conseq[i] || !in_scc(r, w, s))
			continue;
		if (!keep || w->v.kind > keep->v.kind)
			keep = w;
	}
	return keep;
}

/* 2d: a cycle nobody can decide (not a pure send/receive deadlock, which
 * says so itself): one verdict (cycle_keeper) names the whole cycle and
 * says the records cannot decide; the cycle's other verdicts fold into
 * it. */
static void cannot_decide(struct rctx *r, uint32_t s)
{
	struct nw_jctx *x = r->x;
	struct nw_vwork *keep = cycle_keeper(r, s);
	if (!keep)
		return;
	for (size_t i = 0; i < r->nvw; i++)
		if (x->vw[i] != keep && !x->vw[i]->dropped && !r->conseq[i] && in_scc(r, x->vw[i], s))
			r->conseq[i] = 1;
	struct nw_rankset cyc = { 0 };
	for (uint32_t n = 0; n < r->g->nprocs; n++)
		if (r->g->scc[n] == s && x->job->procs[n]->rank >= 0) {
			nw_set_add(x, &cyc, x->job->procs[n]->rank);
			nw_verdict_culprit(x, keep, x->job->procs[n]);
		}
	const struct nw_fset *set = nw_findings_set(x, keep, &cyc);
	nw_rankset_free(&cyc);
	if (!set)
		return;
	struct nw_fact f = { .kind = NW_F_ROOT_UNDECIDED, .set = set };
	nw_verdict_evidence_fact(x, keep, &f);
	/* The summary says it too: alone it read as a verdict on one side
	 * ("rank 1 never called ...") while the culprits name both. */
	f.kind = NW_F_ROOT_UNDECIDED_PREFIX;
	nw_verdict_summary_prefix_fact(x, keep, &f);
}

/* 2e, undecided: a cycle through stream order that no verdict names and
 * no process broke an order it kept (no history: the cycle from the first
 * step): the program as written deadlocks; one STREAM_BLOCKED names every
 * process of the cycle, like a P2P_DEADLOCK names its cycle. */
static void program_deadlock(struct rctx *r, uint32_t s)
{
	struct nw_jctx *x = r->x;
	if (cycle_keeper(r, s) || !stream_cycle(r, s))
		return;
	const struct nw_seg_op *op = NULL;
	for (uint32_t n = 0; n < r->g->nprocs && !op; n++)
		if (r->g->scc[n] == s)
			op = stuck_op(x, x->job->procs[n]);
	struct nw_vwork *w = nw_verdict_new(x, NW_V_STREAM_BLOCKED, op ? nw_view_of(x, op->comm_id) : NULL,
	                                    op ? op->kind : 0, op ? op->seq : 0);
	if (!w)
		return;
	struct nw_fact h = { .kind = NW_F_ROOT_DEADLOCK_HINT };
	nw_verdict_hint_fact(x, w, &h);
	for (uint32_t n = 0; n < r->g->nprocs; n++)
		if (r->g->scc[n] == s)
			nw_verdict_culprit(x, w, x->job->procs[n]);
	struct nw_fact f = { .kind = NW_F_ROOT_DEADLOCK, .set = nw_findings_set(x, w, &w->v.culprits) };
	if (f.set)
		nw_verdict_summary_fact(x, w, &f);
	nw_fact_where_component(x, w, s);
}

/* 3: the same culprits twice: the higher kind keeps them. */
static void same_culprits(struct rctx *r)
{
	struct nw_jctx *x = r->x;
	for (size_t i = 0; i < r->nvw; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped || r->conseq[i] || !w->v.culprits.n)
			continue;
		for (size_t j = 0; j < x->nvw; j++) {
			struct nw_vwork *o = x->vw[j];
			if (j == i || o->dropped || (j < r->nvw && r->conseq[j]) || !same_set(&o->v.culprits, &w->v.culprits))
				continue;
			if (o->v.kind > w->v.kind || (o->v.kind == w->v.kind && j < i)) {
				r->conseq[i] = 1;
				break;
			}
		}
	}
}

/* Fold the consequences into the roots they wait for. */
static void fold_consequences(struct rctx *r, uint32_t *reach)
{
	struct nw_jctx *x = r->x;
	for (size_t i = 0; i < r->nvw && !x->oom; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped || !r->conseq[i])
			continue;
		w->dropped = 1;                 /* not a candidate root for itself */
		struct nw_vwork *root = root_of(r, w, reach);
		w->dropped = 0;                 /* without a root nothing explains it: it stays */
		if (root)
			fold(x, root, w);
	}
}

void nw_rootcause(struct nw_jctx *x)
{
	struct nw_graph *g = &x->g;
	struct rctx r;
	uint32_t *reach = malloc(((size_t)g->nnodes + 1) * sizeof *reach);
	if (rctx_init(&r, x) || !reach) {
		x->oom = 1;
		goto out;
	}
	for (uint32_t s = 0; s < g->nscc && !x->oom; s++)
		if (is_cycle(&r, s))
			r.decided[s] = decide_cycle(&r, s);
	r.nvw = x->nvw;
	if (!(r.conseq = calloc(r.nvw + 1, 1))) {
		x->oom = 1;
		goto out;
	}
	mark_consequences(&r);
	for (uint32_t s = 0; s < g->nscc && !x->oom; s++)
		if (r.decided[s])
			name_deviants(&r, s);
	for (uint32_t s = 0; s < g->nscc && !x->oom; s++)
		if (is_cycle(&r, s) && !r.decided[s] && !only_p2p(&r, s)) {
			program_deadlock(&r, s);
			cannot_decide(&r, s);
		}
	same_culprits(&r);
	fold_consequences(&r, reach);
out:
	rctx_free(&r);
	free(reach);
}

void nw_fold_same_culprits(struct nw_jctx *x)
{
	/* Rule 3 again once death took whole processes (nw_rules_process_fate):
	 * verdicts that blamed different ranks of one killed process (one the
	 * rank that never called #n, one its mate that never posted a send)
	 * now blame the same ranks, for the same death. The higher kind keeps
	 * them (the first made, between equals), the others fold into it. */
	for (size_t i = 0; i < x->nvw && !x->oom; i++) {
		struct nw_vwork *w = x->vw[i], *keep = NULL;
		if (w->dropped || !w->v.culprits.n || w->launch_only)
			continue;
		for (size_t j = 0; j < x->nvw; j++) {
			struct nw_vwork *o = x->vw[j];
			if (j == i || o->dropped || o->launch_only || !same_set(&o->v.culprits, &w->v.culprits))
				continue;
			if (o->v.kind > w->v.kind || (o->v.kind == w->v.kind && j < i))
				if (!keep || o->v.kind > keep->v.kind)
					keep = o;
		}
		if (keep)
			fold(x, keep, w);
	}
}

void nw_fold_shifted(struct nw_jctx *x)
{
	/* A count or datatype size mismatch completes, but leaves the
	 * communicator's data streams shifted (NCCL's connections keep their
	 * step counters from one kernel to the next): every later collective
	 * on it pairs the wrong chunks, and some rank waits, in the end, for
	 * chunks nobody sends. A later stall on it that blames only the
	 * communicator is that mismatch's consequence. */
	for (size_t i = 0; i < x->nvw && !x->oom; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped || w->v.culprits.n || !w->v.comm_id || w->v.kind == NW_V_MISMATCH)
			continue;
		for (size_t j = 0; j < x->nvw; j++) {
			struct nw_vwork *m = x->vw[j];
			if (j != i && !m->dropped && m->v.kind == NW_V_MISMATCH && m->v.comm_id == w->v.comm_id &&
			    m->v.seq < w->v.seq) {
				fold(x, m, w);
				break;
			}
		}
	}
}

/* Which of a launch-only source's verdicts speaks for it: one with
 * culprits, the highest kind, the most culprits (the first of equals). */
static int speaks_before(const struct nw_verdict *v, const struct nw_verdict *b)
{
	if (!!v->culprits.n != !!b->culprits.n)
		return !!v->culprits.n > !!b->culprits.n;
	return v->kind > b->kind || (v->kind == b->kind && v->culprits.n > b->culprits.n);
}

void nw_fold_launch_only(struct nw_jctx *x)
{
	if (!x->joined)
		return;
	int segments = 0;
	for (size_t i = 0; i < x->job->nprocs; i++)
		segments |= !!(x->job->procs[i]->caps & NW_CAP_OPNUMS);
	if (!segments)
		return;   /* a job of snapshots: nw_rules_stacks_weigh */
	const struct nw_vwork *best = NULL;
	for (size_t i = 0; i < x->nvw; i++) {
		const struct nw_vwork *w = x->vw[i];
		if (!w->dropped && w->launch_only && (!best || speaks_before(&w->v, &best->v)))
			best = w;
	}
	/* it agrees: the same kind and culprits, the same op when both name one */
	for (size_t i = 0; i < x->nvw && !x->oom && best; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped || w->launch_only)
			continue;
		int agree = best->v.kind == w->v.kind && same_set(&best->v.culprits, &w->v.culprits) &&
		            (!best->v.seq || !w->v.seq || best->v.seq == w->v.seq);
		struct nw_fact head = { .kind = NW_F_RAS_FOLD_SAYS, .name = x->joined, .n = (uint64_t)best->v.kind,
		                        .seq = agree ? 1 : 2 };
		nw_verdict_evidence_wrap_fact(x, w, &head, best);
	}
	for (size_t i = 0; i < x->nvw; i++)
		if (x->vw[i]->launch_only)
			x->vw[i]->dropped = 1;
}
