/* verdicts_lineup: a comm's collectives lined up in the order they run,
 * replays of CUDA graphs expanded into their captured ops (issue 22).
 *
 * The records number a captured op once, at capture (its seq on the
 * comm), and each launch of its graph by replay number. NCCL pairs a
 * comm's collectives across ranks in the order they run: an eager op where
 * it was issued, op j of graph G's ops on the comm at each launch of G. So
 * a seq is a position only while every rank captured the same graphs at
 * the same places: a rank that captured a graph the others did not (a
 * re-capture of the step's graph, its shape changed or not) numbers it,
 * and every later op of its on the comm, differently, and lining its
 * captured op up by number against the others' eager op pairs what never
 * runs together (seed 110987: a false MISMATCH, a false "only captured").
 *
 * Here each member's collectives on comm C are listed as they run: eager
 * ones, and for each launch of a graph holding ops on C its captured
 * collectives on C in capture order (key: graph, replay number, j). The
 * lists are lined up at the newest replay key every member kept (replay
 * numbers are absolute, per graph), and compared op by op after it:
 *   - where the members differ (kind, count, datatype, root, redop) with
 *     a strict majority (majority.h), the others replay (or issue) what
 *     the program does not: MISMATCH of them, unless a rule already judged
 *     the comm (seed 113331: rank 7's re-captured ReduceScatter float64
 *     runs where ranks 4-6 replay float32);
 *   - where they agree all along, a MISMATCH or MISSING_RANK the
 *     collective rules found on C by seq, at a seq where some members'
 *     records are captured ops and others' eager ones, judged a pairing
 *     that does not happen: it is withdrawn.
 * Not judged: a comm without a member stuck on it, a file before 2.2 (no
 * graph identity), a launch whose graph's captures the ring lost before
 * the line-up point, lists without a common replay. */
#include "decide.h"
#include "majority.h"

#include <stdlib.h>
#include <string.h>

#define LU_GRAPH_OPS 64   /* captured ops of one graph looked at */
#define LU_ANCHORS 16     /* newest replay keys of the first member tried as the line-up point */
#define LU_DEPTH 64       /* ops compared past it */
#define LU_SIGS 4         /* groups of one position; more: not judged */
#define LU_CACHE 8        /* graphs of one member whose captured ops are kept at hand */

/* One collective as it runs on the comm. */
struct lu_op {
	uint64_t ident, replay;          /* a replay's graph and number (ident 0: an eager op) */
	uint32_t j;                      /* the op's place among its graph's ops on the comm */
	const struct nw_seg_op *op;      /* the collective: captured, or eager */
	const struct nw_seg_op *by;      /* what runs it: the launch, or the eager op itself */
};

struct lu_list {
	struct lu_op *o;
	size_t n, cap;
	size_t from;                     /* the first op past the line-up point */
	int has;                         /* the member has a file */
};

static int lu_push(struct nw_jctx *x, struct lu_list *l, const struct lu_op *o)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		struct lu_op *n = realloc(l->o, cap * sizeof *n);
		if (!n) {
			x->oom = 1;
			return -1;
		}
		l->o = n, l->cap = cap;
	}
	l->o[l->n++] = *o;
	return 0;
}

static int eager_coll(const struct nw_seg_op *o, uint64_t comm)
{
	return o->comm_id == comm && NW_OP_IS_COLL(o->kind) && o->state != NW_ST_CAPTURED &&
	       o->state != NW_ST_DISCARDED && o->seq > 0;
}

/* The captured ops of the graphs p launched, looked up once per graph
 * (the ring is scanned for each). */
struct lu_cache {
	uint64_t ident[LU_CACHE];
	size_t n[LU_CACHE], used;
	const struct nw_seg_op *ops[LU_CACHE][LU_GRAPH_OPS];
};

static size_t lu_graph_ops(const struct nw_proc *p, const struct nw_seg_op *l, uint64_t ident, struct lu_cache *c,
                           const struct nw_seg_op *const **ops)
{
	size_t k = 0;
	while (k < c->used && c->ident[k] != ident)
		k++;
	if (k == c->used) {
		k = c->used < LU_CACHE ? c->used++ : LU_CACHE - 1;
		c->ident[k] = ident;
		c->n[k] = nw_graph_ops(p, l, c->ops[k], LU_GRAPH_OPS);
	}
	*ops = c->ops[k];
	return c->n[k];
}

/* p's collectives on comm, as they run. A launch whose graph's captures
 * are no longer kept empties the list: nothing before it can be lined up
 * with what follows. */
static int lu_build(struct nw_jctx *x, const struct nw_proc *p, uint64_t comm, struct lu_list *l)
{
	struct lu_cache *c = calloc(1, sizeof *c);
	if (!c) {
		x->oom = 1;
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < p->nops && !x->oom && !rc; i++) {
		const struct nw_seg_op *o = &p->ops[i];
		if (eager_coll(o, comm)) {
			struct lu_op e = { .op = o, .by = o };
			rc = lu_push(x, l, &e);
			continue;
		}
		uint64_t ident = o->kind == NW_OP_GRAPH_LAUNCH ? nw_graph_ident(p, o) : 0;
		if (!ident)
			continue;
		const struct nw_seg_op *const *g;
		size_t n = lu_graph_ops(p, o, ident, c, &g);
		if (!n) {
			if (o->comm_id == comm)
				l->n = 0;   /* its ops on comm are not known */
			continue;
		}
		uint32_t j = 0;
		for (size_t k = 0; k < n; k++) {
			if (g[k]->comm_id != comm || !NW_OP_IS_COLL(g[k]->kind))
				continue;
			struct lu_op r = { .ident = ident, .replay = o->seq, .j = j++, .op = g[k], .by = o };
			if ((rc = lu_push(x, l, &r)))
				break;
		}
	}
	free(c);
	return rc;
}

static int same_key(const struct lu_op *a, const struct lu_op *b)
{
	return a->ident && a->ident == b->ident && a->replay == b->replay && a->j == b->j;
}

/* The index in l of the op with k's key, newest first, or l->n. */
static size_t lu_find(const struct lu_list *l, const struct lu_op *k)
{
	for (size_t i = l->n; i-- > 0;)
		if (same_key(&l->o[i], k))
			return i;
	return l->n;
}

/* Lines the lists up at the newest replay key of the first one that every
 * other kept; sets each from. 1 if found. */
static int lu_anchor(struct lu_list *ls, int32_t n)
{
	int32_t first = 0;
	while (first < n && !ls[first].n)
		first++;
	if (first == n)
		return 0;
	const struct lu_list *a = &ls[first];
	int tried = 0;
	for (size_t i = a->n; i-- > 0 && tried < LU_ANCHORS;) {
		if (!a->o[i].ident)
			continue;
		tried++;
		int32_t r = 0;
		for (; r < n; r++)
			if (ls[r].has && lu_find(&ls[r], &a->o[i]) == ls[r].n)
				break;
		if (r < n)
			continue;
		for (r = 0; r < n; r++)
			if (ls[r].has)
				ls[r].from = lu_find(&ls[r], &a->o[i]) + 1;
		return 1;
	}
	return 0;
}

static int sig_eq(const struct nw_coll_sig *a, const struct nw_coll_sig *b)
{
	return a->kind == b->kind && a->count == b->count && a->dtype == b->dtype && a->root == b->root &&
	       a->redop == b->redop;
}

/* The first place past the line-up point where the members differ. */
struct lu_div {
	size_t d;                        /* ops past the line-up point */
	uint8_t *grp;                    /* [n]: each member's group there (0xff: none) */
	struct nw_coll_sig s[LU_SIGS];
	const struct lu_op *rep[LU_SIGS];
	uint32_t cnt[LU_SIGS], nsig;
	int maj;                         /* the strict majority's group, or NW_NO_MAJORITY */
};

/* 1: a difference (dv filled), 0: the members agree all along and each
 * ran as many ops past the line-up point, -1: anything else (a difference
 * no strict majority decides or too many kinds of it, lists of several
 * lengths, longer than LU_DEPTH). */
static int lu_compare(const struct lu_list *ls, int32_t n, struct lu_div *dv)
{
	for (size_t d = 0; d <= LU_DEPTH; d++) {
		int any = 0, all = 1;
		dv->nsig = 0;
		memset(dv->cnt, 0, sizeof dv->cnt);
		for (int32_t r = 0; r < n; r++) {
			dv->grp[r] = 0xff;
			const struct lu_list *l = &ls[r];
			if (!l->has)
				continue;
			if (l->from + d >= l->n) {
				all = 0;
				continue;
			}
			any = 1;
			if (d == LU_DEPTH)
				return -1;
			const struct lu_op *o = &l->o[l->from + d];
			struct nw_coll_sig s = nw_coll_sig(o->op);
			uint32_t g = 0;
			while (g < dv->nsig && !sig_eq(&dv->s[g], &s))
				g++;
			if (g == dv->nsig) {
				if (g == LU_SIGS)
					return -1;
				dv->s[g] = s, dv->rep[g] = o, dv->nsig++;
			}
			dv->grp[r] = (uint8_t)g;
			dv->cnt[g]++;
		}
		if (!any)
			return 0;
		if (dv->nsig < 2 && all)
			continue;
		if (dv->nsig < 2)
			return -1;   /* some ran fewer: the issue-order rules' */
		dv->d = d;
		dv->maj = nw_majority(dv->cnt, dv->nsig);
		return dv->maj == NW_NO_MAJORITY ? -1 : 1;
	}
	return 0;
}

/* A verdict the rules on v already gave (MISMATCH, MISSING_RANK). */
static int comm_judged(struct nw_jctx *x, const struct nw_comm_view *v)
{
	for (size_t i = 0; i < x->nvw; i++) {
		const struct nw_vwork *w = x->vw[i];
		if (!w->dropped && w->v.comm_id == v->id &&
		    (w->v.kind == NW_V_MISMATCH || w->v.kind == NW_V_MISSING_RANK))
			return 1;
	}
	return 0;
}

/* What the minority's op (b) differs in from the majority's (a). */
static unsigned lu_what(const struct nw_coll_sig *a, const struct nw_coll_sig *b)
{
	return a->kind != b->kind ? NW_MM_OP : a->count != b->count ? NW_MM_COUNT : a->dtype != b->dtype ? NW_MM_DTYPE
	       : a->root != b->root ? NW_MM_ROOT : NW_MM_REDOP;
}

/* "rank 7 called ReduceScatter #2 on comm X with datatype float64 where
 * ranks 4-6 used float32, in the place of their replay 5 of the graph
 * holding ReduceScatter #1 on comm X; ..." */
static void lu_summary(struct nw_jctx *x, struct nw_vwork *w, const struct nw_comm_view *v, const struct lu_div *dv,
                       uint32_t minor, const struct nw_rankset *maj, const struct nw_rankset *min, unsigned what)
{
	const struct lu_op *mo = dv->rep[minor], *jo = dv->rep[dv->maj];
	struct nw_fact called = { .kind = NW_F_MM_CALLED, .op = mo->op, .view = v, .seq = mo->op->seq, .n = what,
		                  .set = nw_findings_set(x, w, min) };
	struct nw_fact where = { .kind = NW_F_MM_WHERE, .op = jo->op, .n = what, .set = nw_findings_set(x, w, maj) };
	if (!called.set || !where.set)
		return;
	nw_verdict_summary_fact(x, w, &called);
	nw_verdict_summary_fact(x, w, &where);
	struct nw_fact at = { .kind = NW_F_REPLAY_MM_AT, .seq = jo->replay, .n = jo->ident ? 0 : jo->op->seq,
		              .op_kind = jo->op->kind };
	nw_verdict_summary_fact(x, w, &at);
	if (jo->ident) {
		const struct nw_seg_op *l = jo->by;
		struct nw_fact gn = { .kind = NW_F_GRAPH_NAME, .view = nw_view_of(x, l->comm_id), .op_kind = (uint16_t)l->redop,
			              .seq = jo->ident };
		if (gn.view)
			nw_verdict_summary_fact(x, w, &gn);
	}
}

/* MISMATCH: the members outside the strict majority at dv->d. The
 * majority's members stuck in that op (its replay, or the eager op) wait
 * for them. */
static void lu_verdict(struct nw_jctx *x, const struct nw_comm_view *v, const struct lu_list *ls, const struct lu_div *dv)
{
	const struct lu_op *jo = dv->rep[dv->maj];
	struct nw_vwork *w = nw_verdict_new(x, NW_V_MISMATCH, v, jo->ident ? (uint16_t)jo->by->redop : jo->op->kind,
	                                    jo->ident ? jo->ident : jo->op->seq);
	if (!w)
		return;
	w->v.replay = jo->replay;
	uint32_t minor = dv->maj == 0 ? 1 : 0;
	unsigned what = lu_what(&dv->s[dv->maj], &dv->s[minor]);
	struct nw_rankset maj = { 0 }, min = { 0 };
	struct nw_fgroups eg = { 0 };
	uint32_t junction = UINT32_MAX;
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_proc *p = v->members[r].proc;
		if (dv->grp[r] == 0xff)
			continue;
		const struct lu_op *o = &ls[r].o[ls[r].from + dv->d];
		int major = dv->grp[r] == (uint8_t)dv->maj;
		if (major) {
			nw_set_add(x, &maj, p->rank);
			if (nw_op_pending(o->by->state) && nw_age(p, o->by->enqueue_ns) > x->timeout_ns &&
			    !x->sink[p->job_index]) {
				nw_verdict_waiting(x, w, p);
				if (junction == UINT32_MAX)
					junction = nw_graph_junction(&x->g);
				nw_graph_edge(&x->g, p->job_index, junction, NW_E_BLOCK, o->by, v, w->v.seq, 0);
			}
		} else {
			nw_verdict_culprit(x, w, p);
			nw_set_add(x, &min, p->rank);
		}
		unsigned side = major ? NW_MM_MAJORITY : NW_MM_DIFFERS;
		struct nw_fact f[2] = {
			{ .kind = NW_F_MM_OP, .op = o->op, .n = side | what << 4 | (uint64_t)dv->grp[r] << 8 },
			{ .kind = NW_F_MM_STATE, .proc = p, .op = o->by, .n = !major },
		};
		nw_fg_add(x, &eg, p, f, 2, NW_NO_AGE);
	}
	if (junction != UINT32_MAX)
		for (int32_t r = 0; r < v->nranks; r++)
			if (dv->grp[r] != 0xff && dv->grp[r] != (uint8_t)dv->maj)
				nw_graph_edge(&x->g, junction, v->members[r].proc->job_index, NW_E_BLOCK, NULL, v, w->v.seq, 0);
	lu_summary(x, w, v, dv, minor, &maj, &min, what);
	nw_fg_flush(x, w, &eg, 8);
	nw_view_unknown_fact(x, v, w);
	nw_rankset_free(&maj);
	nw_rankset_free(&min);
}

/* Withdraws the MISMATCH and MISSING_RANK verdicts the collective rules
 * gave on v at a seq where some members' records are captured ops and
 * others' eager ones: the lists agree, that pairing does not happen. */
static void lu_withdraw(struct nw_jctx *x, const struct nw_comm_view *v)
{
	for (size_t i = 0; i < x->nvw; i++) {
		struct nw_vwork *w = x->vw[i];
		/* a MISMATCH by seq the replay rules joined (verdicts_graph.c) too */
		if (w->dropped || w->v.comm_id != v->id || !w->v.seq ||
		    (w->v.kind != NW_V_MISMATCH && (w->v.kind != NW_V_MISSING_RANK || w->v.replay)))
			continue;
		int captured = 0, eager = 0;
		for (int32_t r = 0; r < v->nranks; r++) {
			const struct nw_member *m = &v->members[r];
			const struct nw_seg_op *o = m->proc ? nw_member_coll(x, m, w->v.seq) : NULL;
			if (o && o->state == NW_ST_CAPTURED)
				captured = 1;
			else if (o)
				eager = 1;
		}
		if (captured && eager)
			w->dropped = 1;
	}
}

/* Whether a member is stuck on v: an eager collective, or a launch of a
 * graph with ops on v, pending past the timeout. */
static int stuck_on(struct nw_jctx *x, const struct lu_list *ls, int32_t n, const struct nw_comm_view *v)
{
	for (int32_t r = 0; r < n; r++) {
		const struct nw_proc *p = v->members[r].proc;
		if (!p || x->sink[p->job_index])
			continue;
		for (size_t i = 0; i < ls[r].n; i++) {
			const struct nw_seg_op *b = ls[r].o[i].by;
			if (nw_op_pending(b->state) && nw_age(p, b->enqueue_ns) > x->timeout_ns)
				return 1;
		}
	}
	return 0;
}

static void lineup_comm(struct nw_jctx *x, const struct nw_comm_view *v)
{
	int32_t n = v->nranks;
	struct lu_list *ls = calloc((size_t)n, sizeof *ls);
	struct lu_div dv = { .grp = malloc((size_t)n) };
	if (!ls || !dv.grp) {
		x->oom = 1;
		goto out;
	}
	int replays = 0;
	for (int32_t r = 0; r < n && !x->oom; r++) {
		const struct nw_proc *p = v->members[r].proc;
		if (!p || lu_build(x, p, v->id, &ls[r]))
			continue;
		ls[r].has = 1;
		for (size_t i = 0; i < ls[r].n; i++)
			replays |= ls[r].o[i].ident != 0;
	}
	if (x->oom || !replays || !stuck_on(x, ls, n, v) || !lu_anchor(ls, n))
		goto out;
	int c = lu_compare(ls, n, &dv);
	if (c == 0)
		lu_withdraw(x, v);
	else if (c == 1 && !comm_judged(x, v))
		lu_verdict(x, v, ls, &dv);
out:
	for (int32_t r = 0; ls && r < n; r++)
		free(ls[r].o);
	free(ls);
	free(dv.grp);
}

/* Does any process of the job hold a graph launch? Without one there is
 * nothing to line up, and a job of eager ops only (most, and the largest)
 * costs a scan, not a copy of every ring per comm. */
static int any_launch(const struct nw_job *job)
{
	for (size_t i = 0; i < job->nprocs; i++) {
		const struct nw_proc *p = job->procs[i];
		for (size_t k = 0; p && k < p->nops; k++)
			if (p->ops[k].kind == NW_OP_GRAPH_LAUNCH)
				return 1;
	}
	return 0;
}

void nw_rules_lineup(struct nw_jctx *x)
{
	struct nw_comm_view *v, *vt;
	if (!any_launch(x->job))
		return;
	HASH_ITER(hh, x->job->comms, v, vt) {
		if (x->oom)
			return;
		if (v->nranks > 1)
			lineup_comm(x, v);
	}
}
