/* verdicts_order: eager ops and replays of CUDA graphs on one comm, in the
 * order each rank issued them (issue 22).
 *
 * NCCL pairs a communicator's collectives across ranks in the order they
 * run on it, eager or replayed from a graph: a rank that launched graph G
 * one time fewer before its eager AllReduce #k than the others did has
 * that AllReduce pair with their replay of G, and the others then wait in
 * #k, which no rank holds up by seq (the deviator completed its #k). The
 * records name both numbers absolutely: an eager op its seq on the comm,
 * a launch its replay number. So for each eager collective #k on comm C
 * and each graph G holding ops on C, every rank that kept #k says how many
 * times it launched G before it (the replay number of its newest launch of
 * G before #k; unknown when none is kept before it). Ranks that agree did
 * the same thing in the same order up to #k; at the first #k where they
 * do not, the strict majority (majority.h) is the program as written and
 * the others deviate: MISSING_RANK on C, the ranks stuck on C wait for
 * them. A tie leaves the comm to the other rules. The rules that matched
 * C by seq or replay number alone (verdicts_coll.c, verdicts_graph.c)
 * judged a pairing that did not happen: their verdicts on C are
 * withdrawn. */
#include "decide.h"
#include "majority.h"

#include <stdlib.h>
#include <string.h>

#define ORD_GRAPHS 8     /* graphs of one comm compared (the first ones seen) */
#define ORD_GROUPS 16    /* distinct launch counts at one op; more: not compared */
#define ORD_SEQS 64      /* eager ops compared per comm (the kept ones of two members) */

struct ord_graph {
	uint64_t ident;
	uint16_t kind;   /* its first captured op's kind */
	uint64_t comm;   /* and comm */
};

/* How many times p launched graph g (with ops on comm) before p->ops[at]:
 * the replay number of its newest launch before it; 0 when none is but
 * the capture of the graph's first op is (captured, not launched yet, or
 * never); -1 when p kept neither (unknown). */
static int64_t launched_before(const struct nw_proc *p, uint64_t comm, const struct ord_graph *g, size_t at)
{
	for (size_t i = at; i-- > 0;) {
		const struct nw_seg_op *o = &p->ops[i];
		if (o->kind == NW_OP_GRAPH_LAUNCH && nw_graph_ident(p, o) == g->ident && nw_launch_touches(p, o, comm))
			return (int64_t)o->seq;
		if (o->state == NW_ST_CAPTURED && o->comm_id == g->comm && o->seq == g->ident && o->kind == g->kind)
			return 0;
	}
	return -1;
}

static int eager_coll(const struct nw_seg_op *o, uint64_t comm)
{
	return o->comm_id == comm && NW_OP_IS_COLL(o->kind) && o->state != NW_ST_CAPTURED && o->seq > 0;
}

/* The index in p->ops of p's eager collective #seq on comm, or p->nops. */
static size_t eager_at(const struct nw_proc *p, uint64_t comm, uint64_t seq)
{
	for (size_t i = 0; i < p->nops; i++)
		if (eager_coll(&p->ops[i], comm) && p->ops[i].seq == seq)
			return i;
	return p->nops;
}

/* The graphs with ops on v (identity known), at most ORD_GRAPHS. */
static size_t comm_graph_list(const struct nw_comm_view *v, struct ord_graph *g)
{
	size_t n = 0;
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_proc *p = v->members[r].proc;
		for (size_t i = 0; p && i < p->nops && n < ORD_GRAPHS; i++) {
			const struct nw_seg_op *o = &p->ops[i];
			uint64_t id = o->kind == NW_OP_GRAPH_LAUNCH ? nw_graph_ident(p, o) : 0;
			size_t j = 0;
			while (j < n && g[j].ident != id)
				j++;
			if (!id || j < n || !nw_launch_touches(p, o, v->id))
				continue;
			g[n].ident = id;
			g[n].comm = o->comm_id;
			g[n++].kind = (uint16_t)o->redop;
		}
	}
	return n;
}

/* p's oldest op on v pending past the timeout (an eager collective, or a
 * launch of a graph with ops on v), or NULL. */
static const struct nw_seg_op *stuck_on(struct nw_jctx *x, const struct nw_proc *p, uint64_t comm)
{
	if (x->sink[p->job_index])
		return NULL;
	for (size_t i = 0; i < p->nops; i++) {
		const struct nw_seg_op *o = &p->ops[i];
		if (!nw_op_pending(o->state) || nw_age(p, o->enqueue_ns) <= x->timeout_ns)
			continue;
		if (eager_coll(o, comm) || (o->kind == NW_OP_GRAPH_LAUNCH && nw_launch_touches(p, o, comm)))
			return o;
	}
	return NULL;
}

/* The first divergence on v: eager #seq, graph g, each member's launch
 * count before it (cnt[], -2: no vote), the majority's count. */
struct ord_div {
	const struct nw_comm_view *v;
	uint64_t seq;
	uint16_t okind;
	struct ord_graph g;
	int64_t *cnt;
	int64_t want;
};

/* Two counts with as many ranks each (no majority): when the ranks of one
 * wait on the comm and none of the other's do, the waiting ends at the
 * other (it went on, its peers wait for what it did not issue): the
 * waiting side's count is taken as the program's (index into val), else
 * NW_NO_MAJORITY. */
static int tie_waiting_side(struct nw_jctx *x, const struct nw_comm_view *v, const int64_t *cnt, const int64_t *val)
{
	int stuck[2] = { 0, 0 };
	for (int32_t r = 0; r < v->nranks; r++)
		for (int j = 0; j < 2; j++)
			if (cnt[r] == val[j] && stuck_on(x, v->members[r].proc, v->id))
				stuck[j] = 1;
	return stuck[0] == stuck[1] ? NW_NO_MAJORITY : stuck[0] ? 0 : 1;
}

/* Whether the members that kept #seq disagree on how many times they
 * launched graph g before it, with a strict majority; fills d. */
static int diverges_at(struct nw_jctx *x, const struct nw_comm_view *v, uint64_t seq, const struct ord_graph *g,
                       struct ord_div *d)
{
	int64_t val[ORD_GROUPS];
	uint32_t votes[ORD_GROUPS], ng = 0;
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_proc *p = v->members[r].proc;
		size_t at = p ? eager_at(p, v->id, seq) : 0;
		d->cnt[r] = p && at < p->nops ? launched_before(p, v->id, g, at) : -2;
		if (d->cnt[r] < 0)
			continue;   /* unknown: no vote */
		if (p)
			d->okind = p->ops[at].kind;
		uint32_t j = 0;
		while (j < ng && val[j] != d->cnt[r])
			j++;
		if (j == ng) {
			if (ng == ORD_GROUPS)
				return 0;
			val[ng] = d->cnt[r];
			votes[ng++] = 0;
		}
		votes[j]++;
	}
	int top = ng > 1 ? nw_majority(votes, ng) : NW_NO_MAJORITY;
	if (top == NW_NO_MAJORITY && ng == 2)
		top = tie_waiting_side(x, v, d->cnt, val);
	if (top == NW_NO_MAJORITY)
		return 0;
	d->want = val[top];
	d->seq = seq;
	d->g = *g;
	return 1;
}

static int cmp_seq(const void *a, const void *b)
{
	return nw_cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

/* Candidate seqs: the eager collectives on v kept by its first two members
 * with a file, sorted and unique. */
static size_t candidate_seqs(const struct nw_comm_view *v, uint64_t *s)
{
	size_t n = 0;
	int used = 0;
	for (int32_t r = 0; r < v->nranks && used < 2; r++) {
		const struct nw_proc *p = v->members[r].proc;
		if (!p)
			continue;
		used++;
		for (size_t i = 0; i < p->nops && n < ORD_SEQS; i++)
			if (eager_coll(&p->ops[i], v->id))
				s[n++] = p->ops[i].seq;
	}
	qsort(s, n, sizeof *s, cmp_seq);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (!u || s[u - 1] != s[i])
			s[u++] = s[i];
	return u;
}

static int find_divergence(struct nw_jctx *x, const struct nw_comm_view *v, struct ord_div *d)
{
	struct ord_graph g[ORD_GRAPHS];
	size_t ng = comm_graph_list(v, g);
	if (!ng)
		return 0;
	uint64_t seqs[ORD_SEQS];
	size_t ns = candidate_seqs(v, seqs);
	for (size_t i = 0; i < ns; i++)
		for (size_t j = 0; j < ng; j++)
			if (diverges_at(x, v, seqs[i], &g[j], d))
				return 1;
	return 0;
}

/* One member of the verdict: a deviator is a culprit, a member of the
 * majority stuck on the comm waits for them (through the junction). */
static void order_member(struct nw_jctx *x, struct nw_vwork *w, const struct ord_div *d, int32_t r,
                         uint32_t junction, struct nw_fgroups *eout, struct nw_fgroups *ein, uint64_t *max_age)
{
	const struct nw_proc *p = d->v->members[r].proc;
	/* each line: how many times it launched the graph, then where it is */
	struct nw_fact f[2] = { { .kind = NW_F_ORDER_COUNT, .proc = p, .n = (uint64_t)d->cnt[r], .op_kind = d->okind,
		                  .seq = d->seq } };
	if (d->cnt[r] != d->want) {
		nw_verdict_culprit(x, w, p);
		nw_graph_edge(&x->g, junction, p->job_index, NW_E_COLL, NULL, d->v, d->seq, 0);
		uint64_t age = nw_fact_where(x, p, 1, &f[1]);
		nw_fg_add(x, eout, p, f, 2, age);
		return;
	}
	const struct nw_seg_op *o = stuck_on(x, p, d->v->id);
	if (!o)
		return;
	uint64_t age = nw_age(p, o->enqueue_ns);
	*max_age = age > *max_age ? age : *max_age;
	nw_verdict_waiting(x, w, p);
	nw_graph_edge(&x->g, p->job_index, junction, NW_E_COLL, o, d->v, d->seq, 0);
	f[1] = (struct nw_fact){ .kind = NW_F_ORDER_IN, .proc = p, .op = o, .view = nw_view_of(x, o->comm_id) };
	nw_fg_add(x, ein, p, f, 2, age);
}

/* "rank 0 launched the graph ... 3 times before its AllReduce #5, where
 * ranks 1-2 launched it 4 times: ..." (order_words.c) */
static void order_summary(struct nw_jctx *x, struct nw_vwork *w, const struct ord_div *d, int64_t culprit_cnt,
                          int agree, uint64_t max_age)
{
	const struct nw_fset *culprits = nw_findings_set(x, w, &w->v.culprits);
	if (!culprits)
		return;
	struct nw_fact who = { .kind = NW_F_ORDER_WHO, .set = culprits, .n = agree && culprit_cnt == 0 };
	struct nw_fact graph = { .kind = NW_F_ORDER_GRAPH, .view = d->v, .op_kind = d->g.kind, .seq = d->g.ident,
		                 .n = d->g.comm == d->v->id };
	struct nw_fact times = { .kind = NW_F_ORDER_TIMES, .n = !agree ? NW_FACT_OTHER : (uint64_t)culprit_cnt };
	struct nw_fact before = { .kind = NW_F_ORDER_BEFORE, .set = culprits, .op_kind = d->okind, .seq = d->seq,
		                  .n = (uint64_t)d->want };
	nw_verdict_summary_fact(x, w, &who);
	nw_verdict_summary_fact(x, w, &graph);
	nw_verdict_summary_fact(x, w, &times);
	nw_verdict_summary_fact(x, w, &before);
	if (w->v.waiting.n) {
		struct nw_fact wait = { .kind = NW_F_ORDER_WAIT, .set = nw_findings_set(x, w, &w->v.waiting),
			                .n = max_age };
		if (wait.set)
			nw_verdict_summary_fact(x, w, &wait);
	}
}

static void order_verdict(struct nw_jctx *x, const struct ord_div *d)
{
	struct nw_vwork *w = nw_verdict_new(x, NW_V_MISSING_RANK, d->v, d->g.kind, d->g.ident);
	if (!w)
		return;
	/* the other rules' verdicts on this comm judged pairings by number */
	for (size_t i = 0; i < x->nvw; i++)
		if (x->vw[i] != w && x->vw[i]->v.comm_id == d->v->id)
			x->vw[i]->dropped = 1;
	uint32_t junction = nw_graph_junction(&x->g);
	struct nw_fgroups eout = { 0 }, ein = { 0 };
	uint64_t max_age = 0;
	int64_t cc = -1;
	int agree = 1;
	for (int32_t r = 0; r < d->v->nranks && !x->oom; r++) {
		if (d->cnt[r] < 0)
			continue;
		if (d->cnt[r] != d->want) {
			agree &= cc < 0 || cc == d->cnt[r];
			cc = d->cnt[r];
		}
		order_member(x, w, d, r, junction, &eout, &ein, &max_age);
	}
	w->v.replay = (uint64_t)(cc < d->want ? cc : d->want) + 1;
	nw_fg_flush(x, w, &eout, 8);
	nw_fg_flush(x, w, &ein, 8);
	order_summary(x, w, d, cc, agree, max_age);
}

void nw_rules_order(struct nw_jctx *x)
{
	struct nw_comm_view *v, *vt;
	HASH_ITER(hh, x->job->comms, v, vt) {
		if (x->oom || v->nranks < 2)
			continue;
		int stuck = 0;
		for (int32_t r = 0; r < v->nranks && !stuck; r++)
			stuck = v->members[r].proc && stuck_on(x, v->members[r].proc, v->id);
		struct ord_div d = { .v = v };
		if (!stuck || !(d.cnt = calloc((size_t)v->nranks, sizeof *d.cnt))) {
			x->oom |= stuck;
			continue;
		}
		if (find_divergence(x, v, &d))
			order_verdict(x, &d);
		free(d.cnt);
	}
	/* then each comm's collectives as they run, replays expanded: what a
	 * seq cannot line up once a rank captured a graph the others did not */
	nw_rules_lineup(x);
}
