/* verdicts_graph: replays of CUDA graphs (issue 22).
 *
 * A launch of an executable graph holding NCCL ops is a GraphLaunch record
 * (seq = its replay number, per executable graph), timed like an op. A
 * replay is matched across ranks by (the comm of the graph's first op, the
 * graph's identity, the replay number). The identity must be the same on
 * every rank, so neither the exec handle nor the capture id (both per
 * process): it is the seq on that comm of the graph's first captured op
 * (the CAPTURED record), which every rank shares when they run the same
 * program. The library knows it at capture and writes it into every
 * launch's record (segment 2.2: root; graph_ident reads it). In a 2.1 file
 * it is 0: the launches of all graphs of the comm are matched together.
 *
 * For a replay stuck past the timeout (replay n of graph G on comm C):
 *   - members that launched G fewer than n times (or ended inside a replay
 *     before n) are the culprits: MISSING_RANK; the members stuck in
 *     replay n wait for them (wait-for edges through one junction);
 *   - every member stuck in replay n (each launched it, none completed):
 *     TRANSPORT_STALL on C, as for an eager collective;
 *   - anything else (some completed replay n) is left to
 *     nw_rules_unexplained, which names the stuck replays. */
#include "decide.h"

#include <stdlib.h>
#include <string.h>


/* The identity of the graph that launch l replays: from 2.2 the record
 * carries it (root: the seq of the graph's first captured op on its comm,
 * written by the library at capture). A 2.1 file's root is a per-process
 * capture id, no identity across ranks: 0, and the launches of all graphs
 * of the comm are matched together. */
uint64_t nw_graph_ident(const struct nw_proc *p, const struct nw_seg_op *l)
{
	if (p->hdr.version_major == 2 && p->hdr.version_minor < 2)
		return 0;
	return l->root > 0 ? (uint64_t)l->root : 0;
}

size_t nw_graph_ops(const struct nw_proc *p, const struct nw_seg_op *l, const struct nw_seg_op **out, size_t max)
{
	if (p->hdr.version_major == 2 && p->hdr.version_minor < 2)
		return 0;   /* root is a capture id there */
	size_t first = p->nops;
	for (size_t i = 0; i < p->nops && &p->ops[i] != l; i++) {
		const struct nw_seg_op *o = &p->ops[i];
		if (o->state == NW_ST_CAPTURED && o->comm_id == l->comm_id && o->kind == (uint16_t)l->redop &&
		    l->root > 0 && o->seq == (uint64_t)l->root && o->enqueue_ns <= l->enqueue_ns)
			first = i;
	}
	size_t n = 0;
	for (size_t i = first; i < p->nops && n < max && n < l->count && &p->ops[i] != l; i++) {
		const struct nw_seg_op *o = &p->ops[i];
		if (o->state == NW_ST_CAPTURED && (NW_OP_IS_COLL(o->kind) || NW_OP_IS_P2P(o->kind)))
			out[n++] = o;
	}
	return n;
}

const struct nw_seg_op *nw_graph_replay_of(const struct nw_proc *p, const struct nw_seg_op *l, uint64_t *launched)
{
	const struct nw_seg_op *r = NULL;
	*launched = 0;
	if ((p->hdr.version_major == 2 && p->hdr.version_minor < 2) || l->root <= 0)
		return NULL;
	for (size_t i = 0; i < p->nops; i++) {
		const struct nw_seg_op *o = &p->ops[i];
		if (o->kind != NW_OP_GRAPH_LAUNCH || o->root != l->root || o->redop != l->redop)
			continue;
		if (o->seq > *launched)
			*launched = o->seq;
		if (o->seq == l->seq)
			r = o;
	}
	return r;
}

/* One member's launches of one graph. */
struct mlaunch {
	uint64_t launched;                 /* highest replay number launched (0 none) */
	const struct nw_seg_op *stuck;     /* its oldest launch pending past the timeout, or NULL */
	const struct nw_seg_op *pending;   /* its oldest pending launch (any age), or NULL */
};

/* Does launch l (of p) replay ops on comm `comm`: its first op's, or one
 * of its other captured ops'? A graph may hold ops of several comms (a
 * tensor-parallel all-reduce and the world's): its replays are matched on
 * each of them. */
int nw_launch_touches(const struct nw_proc *p, const struct nw_seg_op *l, uint64_t comm)
{
	if (l->comm_id == comm)
		return 1;
	const struct nw_seg_op *g[64];
	size_t n = nw_graph_ops(p, l, g, sizeof g / sizeof *g);
	for (size_t j = 0; j < n; j++)
		if (g[j]->comm_id == comm)
			return 1;
	return 0;
}

static void member_launches(struct nw_jctx *x, const struct nw_member *m, uint64_t comm, uint64_t ident,
                            struct mlaunch *ml)
{
	memset(ml, 0, sizeof *ml);
	if (!m->proc)
		return;
	int touches = -1;   /* the graph's ops, looked up once */
	for (size_t k = 0; k < m->proc->nops; k++) {
		const struct nw_seg_op *o = &m->proc->ops[k];
		if (o->kind != NW_OP_GRAPH_LAUNCH)   /* any first kind: a pipeline stage's graph begins
		                                        * with a receive where the first stage's begins
		                                        * with a send */
			continue;
		if (nw_graph_ident(m->proc, o) != ident)
			continue;
		if (o->comm_id != comm && touches < 0)
			touches = nw_launch_touches(m->proc, o, comm);
		if (o->comm_id != comm && !touches)
			continue;
		if (o->seq > ml->launched)
			ml->launched = o->seq;
		if (!nw_op_pending(o->state))
			continue;
		if (!ml->pending || o->seq < ml->pending->seq)
			ml->pending = o;
		if (nw_age(m->proc, o->enqueue_ns) > x->timeout_ns && (!ml->stuck || o->seq < ml->stuck->seq))
			ml->stuck = o;
	}
	/* A process that waits for nothing (dead, exited) is stuck in nothing. */
	if (x->sink[m->proc->job_index])
		ml->stuck = NULL;
}

/* The MISMATCH the collective rules found on the graph's captured op
 * (they compare every rank's record of #ident, CAPTURED ones too), or NULL. */
static struct nw_vwork *captured_mismatch(struct nw_jctx *x, const struct nw_comm_view *v, uint64_t ident)
{
	for (size_t i = 0; ident && i < x->nvw; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->v.kind == NW_V_MISMATCH && w->v.comm_id == v->id && w->v.seq == ident && !w->v.replay)
			return w;
	}
	return NULL;
}

/* Where each member of a graph's replays is with replay nstar: who holds
 * it up (a member that launched it fewer times, or ended, a sink, before
 * completing it), who is inside it. */
enum rclass { R_NONE, R_SHORT, R_GONE, R_INSIDE, R_NOFILE };

/* The ranks stuck in replay nstar wait for that MISMATCH's culprits: a
 * rank whose captured op differs holds every replay of the graph up. */
static void join_mismatch(struct nw_jctx *x, const struct nw_comm_view *v, struct nw_vwork *w, const uint8_t *cls,
                          const struct mlaunch *ml, uint64_t nstar)
{
	uint32_t junction = nw_graph_junction(&x->g);
	struct nw_fgroups ein = { 0 };
	struct nw_rankset in = { 0 };
	uint64_t max_age = 0;
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_member *m = &v->members[r];
		if (!m->proc)
			continue;
		if (nw_rankset_has(&w->v.culprits, m->proc->rank)) {
			nw_graph_edge(&x->g, junction, m->proc->job_index, NW_E_BLOCK, NULL, v, nstar, 0);
		} else if (cls[r] == R_INSIDE) {
			nw_verdict_waiting(x, w, m->proc);
			nw_set_add(x, &in, m->proc->rank);
			nw_graph_edge(&x->g, m->proc->job_index, junction, NW_E_COLL, ml[r].stuck, v, nstar, 0);
			uint64_t age = nw_age(m->proc, ml[r].stuck->enqueue_ns);
			if (age > max_age)
				max_age = age;
			struct nw_fact f = { .kind = NW_F_REPLAY_IN, .proc = m->proc, .op = ml[r].stuck, .seq = nstar, .n = 2 };
			nw_fg_add(x, &ein, m->proc, &f, 1, age);
		}
	}
	nw_fg_flush(x, w, &ein, 8);
	/* after the MISMATCH's own summary (its words, or its findings) */
	if (in.n && (w->v.summary || (w->v.found && w->v.found->summary.n)) && !x->oom) {
		struct nw_fact f = { .kind = NW_F_REPLAY_MM_WAIT, .set = nw_findings_set(x, w, &in), .seq = nstar,
			             .n = max_age };
		if (f.set)
			nw_verdict_summary_fact(x, w, &f);
	}
	w->v.replay = nstar;
	nw_rankset_free(&in);
}

/* Every member launched replay nstar and is stuck in it, some never
 * started it: their streams did not reach the graph (earlier work on the
 * launch stream holds it). They are STREAM_BLOCKED candidates
 * (nw_rules_stream decides, once it knows whether they wait for someone
 * else); the members that started it wait for them. 1 if so. */
static int replay_blocked(struct nw_jctx *x, const struct nw_comm_view *v, const struct mlaunch *ml)
{
	int32_t enq = 0;
	for (int32_t r = 0; r < v->nranks; r++)
		enq += ml[r].stuck->state == NW_ST_ENQUEUED;
	if (!enq || enq == v->nranks)
		return 0;
	struct nw_rankset all = { 0 };
	uint32_t junction = nw_graph_junction(&x->g);
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_proc *p = v->members[r].proc;
		nw_set_add(x, &all, p->rank);
		if (ml[r].stuck->state == NW_ST_ENQUEUED)
			nw_graph_edge(&x->g, junction, p->job_index, NW_E_BLOCK, NULL, v, ml[r].stuck->seq, 0);
		else
			nw_graph_edge(&x->g, p->job_index, junction, NW_E_COLL, ml[r].stuck, v, ml[r].stuck->seq, 0);
	}
	const struct nw_rankset *inside = nw_shared_set(x, &all);
	for (int32_t r = 0; r < v->nranks && inside; r++)
		if (ml[r].stuck->state == NW_ST_ENQUEUED)
			nw_add_sblock(x, v, r, ml[r].stuck, nw_age(v->members[r].proc, ml[r].stuck->enqueue_ns), inside);
	nw_rankset_free(&all);
	return 1;
}

struct replay {
	const struct nw_comm_view *v;
	int32_t n;
	uint64_t ident;                  /* the graph's first captured op's number (0: none) */
	uint16_t kind;                   /* and its kind */
	struct mlaunch *ml;              /* [n] */
	uint8_t *cls;                    /* [n]: enum rclass */
	uint64_t nstar, max_age;         /* the first stuck replay; the oldest member inside it */
	int32_t nofile, gone, short_, inside;
	struct nw_fact gn;               /* the graph (GRAPH_NAME) */
};

/* Whether a strict majority of comm view fv's members never launched the
 * graph ident (on v: the launches rp found already). */
static int never_launched_most(struct nw_jctx *x, const struct replay *rp, const struct nw_comm_view *fv)
{
	int32_t never = 0, some = 0;
	for (int32_t r = 0; r < fv->nranks; r++) {
		const struct nw_member *m = &fv->members[r];
		if (!m->proc)
			continue;
		struct mlaunch ml = { 0 };
		if (fv == rp->v)
			ml = rp->ml[r];
		else
			member_launches(x, m, fv->id, rp->ident, &ml);
		if (ml.launched)
			some++;
		else if (!x->sink[m->proc->job_index])
			never++;
	}
	return never > some;
}

/* A graph that a strict majority of the members never launched at all is
 * the minority's own (a graph it captured when the others did not): the
 * majority is the program as written, nobody there launched it "fewer
 * times" (the rules on its captured ops, a mismatch or a send/receive,
 * name the minority). Judged on every comm the graph holds ops of, not on
 * v alone: on a comm of 2 ranks (a TP pair, a DP pair) no majority is
 * strict, and its other member would be taken to have launched the graph
 * fewer times where most ranks of the graph's other comms never did. */
static int minority_graph(struct nw_jctx *x, const struct replay *rp)
{
	if (never_launched_most(x, rp, rp->v))
		return 1;
	for (int32_t r = 0; r < rp->n; r++) {
		const struct nw_member *m = &rp->v->members[r];
		const struct nw_seg_op *l = rp->ml[r].pending;
		if (!m->proc || !l)
			continue;
		const struct nw_seg_op *g[64];
		size_t n = nw_graph_ops(m->proc, l, g, sizeof g / sizeof *g);
		for (size_t j = 0; j < n; j++) {
			const struct nw_comm_view *fv = g[j]->comm_id == rp->v->id ? NULL : nw_view_of(x, g[j]->comm_id);
			if (fv && never_launched_most(x, rp, fv))
				return 1;
		}
		return 0;   /* one launch names the graph's comms */
	}
	return 0;
}

static void replay_classes(struct nw_jctx *x, struct replay *rp)
{
	int own = minority_graph(x, rp);
	for (int32_t r = 0; r < rp->n; r++) {
		const struct nw_member *m = &rp->v->members[r];
		const struct mlaunch *ml = &rp->ml[r];
		if (own && m->proc && !ml->launched && !x->sink[m->proc->job_index]) {
			rp->cls[r] = R_NONE;
		} else if (!m->proc) {
			rp->cls[r] = R_NOFILE;
			rp->nofile++;
		} else if (x->sink[m->proc->job_index] && ml->pending && ml->pending->seq <= rp->nstar) {
			rp->cls[r] = R_GONE;
			rp->gone++;
		} else if (ml->launched < rp->nstar) {
			rp->cls[r] = R_SHORT;
			rp->short_++;
		} else if (ml->stuck && ml->stuck->seq == rp->nstar) {
			rp->cls[r] = R_INSIDE;
			rp->inside++;
			uint64_t age = nw_age(m->proc, ml->stuck->enqueue_ns);
			if (age > rp->max_age)
				rp->max_age = age;
		}
	}
}

/* A member of a MISSING_RANK replay verdict: a culprit (short or gone) is
 * waited for through the junction, a member inside waits; its line into
 * eout or ein. */
static void replay_member(struct nw_jctx *x, struct nw_vwork *w, const struct replay *rp, int32_t r,
                          uint32_t junction, struct nw_fgroups *eout, struct nw_fgroups *ein)
{
	const struct nw_comm_view *v = rp->v;
	const struct nw_member *m = &v->members[r];
	const struct mlaunch *ml = &rp->ml[r];
	uint64_t nstar = rp->nstar;
	if (rp->cls[r] == R_SHORT || rp->cls[r] == R_GONE) {
		nw_verdict_culprit(x, w, m->proc);
		nw_graph_edge(&x->g, junction, m->proc->job_index, NW_E_COLL, NULL, v, nstar, ml->launched);
		struct nw_fact f[2] = { { .kind = NW_F_REPLAY_SHORT, .proc = m->proc, .n = ml->launched, .seq = nstar } };
		if (rp->cls[r] == R_GONE)
			f[0] = (struct nw_fact){ .kind = NW_F_REPLAY_ENDED, .proc = m->proc, .seq = ml->pending->seq };
		uint64_t age = nw_fact_where(x, m->proc, 1, &f[1]);
		nw_fg_add(x, eout, m->proc, f, 2, age);
	} else if (rp->cls[r] == R_INSIDE) {
		nw_verdict_waiting(x, w, m->proc);
		nw_graph_edge(&x->g, m->proc->job_index, junction, NW_E_COLL, ml->stuck, v, nstar, 0);
		struct nw_fact f = { .kind = NW_F_REPLAY_IN, .proc = m->proc, .op = ml->stuck, .seq = nstar, .n = 1 };
		nw_fg_add(x, ein, m->proc, &f, 1, nw_age(m->proc, ml->stuck->enqueue_ns));
	}
}

static void summary_fact(struct nw_jctx *x, struct nw_vwork *w, uint16_t kind, const struct nw_fset *set,
                         uint64_t seq, uint64_t n)
{
	struct nw_fact f = { .kind = kind, .set = set, .seq = seq, .n = n };
	nw_verdict_summary_fact(x, w, &f);
}

/* The summary of a MISSING_RANK replay verdict (graph_words.c); launched:
 * the launch counts of the short members. */
static void replay_missing_summary(struct nw_jctx *x, struct nw_vwork *w, const struct replay *rp,
                                   const struct nw_rankset *launched)
{
	const struct nw_fset *waiting = nw_findings_set(x, w, &w->v.waiting);
	const struct nw_fset *culprits = nw_findings_set(x, w, &w->v.culprits);
	if (!waiting || !culprits)
		return;
	if (!w->v.culprits.n) {
		summary_fact(x, w, NW_F_REPLAY_NOFILE_WAIT, waiting, rp->nstar, 0);
		nw_verdict_summary_fact(x, w, &rp->gn);
		summary_fact(x, w, NW_F_REPLAY_NOFILE, NULL, (uint64_t)rp->nofile, rp->max_age);
		return;
	}
	summary_fact(x, w, NW_F_RANKS, culprits, 0, 0);
	if (rp->short_ && !rp->gone) {
		summary_fact(x, w, NW_F_REPLAY_LAUNCHED, NULL, 0, 0);
		nw_verdict_summary_fact(x, w, &rp->gn);
		/* "9 times" when they agree, else "fewer than 10 times" */
		summary_fact(x, w, NW_F_REPLAY_TIMES, NULL, rp->nstar,
		             launched->n == 1 ? (uint64_t)launched->v[0] : NW_FACT_OTHER);
	} else {
		summary_fact(x, w, NW_F_REPLAY_ENDED_BEFORE, NULL, rp->nstar, 0);
		nw_verdict_summary_fact(x, w, &rp->gn);
		summary_fact(x, w, NW_F_REPLAY_COMPLETED, NULL, 0, 0);
	}
	summary_fact(x, w, NW_F_REPLAY_WAIT, waiting, rp->nstar, rp->max_age);
}

/* Members launched the graph fewer times, ended inside a replay, or have
 * no file: MISSING_RANK. */
static void replay_missing(struct nw_jctx *x, const struct replay *rp)
{
	struct nw_vwork *w = nw_verdict_new(x, NW_V_MISSING_RANK, rp->v, rp->kind, rp->ident);
	if (!w)
		return;
	w->v.replay = rp->nstar;
	uint32_t junction = nw_graph_junction(&x->g);
	struct nw_fgroups eout = { 0 }, ein = { 0 };
	struct nw_rankset launched = { 0 };
	for (int32_t r = 0; r < rp->n && !x->oom; r++) {
		replay_member(x, w, rp, r, junction, &eout, &ein);
		if (rp->cls[r] == R_SHORT)
			nw_set_add(x, &launched, (int32_t)rp->ml[r].launched);
	}
	nw_fg_flush(x, w, &eout, 8);
	nw_fg_flush(x, w, &ein, 8);
	nw_view_unknown_fact(x, rp->v, w);
	replay_missing_summary(x, w, rp, &launched);
	nw_rankset_free(&launched);
}

/* Every member inside the replay and none completed it: TRANSPORT_STALL. */
static void replay_transport(struct nw_jctx *x, const struct replay *rp)
{
	const struct nw_comm_view *v = rp->v;
	struct nw_vwork *w = nw_verdict_new(x, NW_V_TRANSPORT_STALL, v, rp->kind, rp->ident);
	if (!w)
		return;
	w->v.replay = rp->nstar;
	struct nw_fgroups ein = { 0 };
	for (int32_t r = 0; r < rp->n; r++) {
		const struct nw_member *m = &v->members[r];
		nw_verdict_blame(x, w, m->proc->job_index);
		nw_verdict_waiting(x, w, m->proc);
		struct nw_fact f = { .kind = NW_F_REPLAY_IN, .proc = m->proc, .op = rp->ml[r].stuck, .seq = rp->nstar };
		nw_fg_add(x, &ein, m->proc, &f, 1, nw_age(m->proc, rp->ml[r].stuck->enqueue_ns));
	}
	nw_fg_flush(x, w, &ein, 8);
	struct nw_fact all = { .kind = NW_F_REPLAY_STALL, .view = v, .n = (uint64_t)rp->n, .seq = rp->nstar };
	struct nw_fact what = { .kind = NW_F_REPLAY_STALL_WHAT, .op_kind = rp->kind, .seq = rp->ident };
	struct nw_fact end = { .kind = NW_F_REPLAY_STALL_END, .n = rp->max_age };
	nw_verdict_summary_fact(x, w, &all);
	nw_verdict_summary_fact(x, w, &what);
	nw_verdict_summary_fact(x, w, &end);
}

static void judge_replay(struct nw_jctx *x, const struct nw_comm_view *v, uint64_t ident, uint16_t kind, int other)
{
	struct replay rp = { .v = v, .n = v->nranks, .ident = ident, .kind = kind,
		             .gn = { .kind = NW_F_GRAPH_NAME, .view = v, .op_kind = kind, .seq = ident, .n = other != 0 } };
	if (!(rp.ml = calloc((size_t)rp.n, sizeof *rp.ml))) {
		x->oom = 1;
		return;
	}
	for (int32_t r = 0; r < rp.n; r++) {
		member_launches(x, &v->members[r], v->id, ident, &rp.ml[r]);
		if (rp.ml[r].stuck && (!rp.nstar || rp.ml[r].stuck->seq < rp.nstar))
			rp.nstar = rp.ml[r].stuck->seq;
	}
	if (!rp.nstar)
		goto out;
	if (!(rp.cls = calloc((size_t)rp.n, 1))) {
		x->oom = 1;
		goto out;
	}
	replay_classes(x, &rp);
	struct nw_vwork *mm = other ? NULL : captured_mismatch(x, v, ident);
	if (mm && rp.inside) {
		join_mismatch(x, v, mm, rp.cls, rp.ml, rp.nstar);
		goto out;
	}
	if (rp.short_ || rp.gone || rp.nofile)
		replay_missing(x, &rp);
	else if (rp.inside == rp.n && replay_blocked(x, v, rp.ml))
		; /* nw_rules_stream gives the verdict */
	else if (rp.inside == rp.n)
		replay_transport(x, &rp);
out:
	free(rp.cls);
	free(rp.ml);
}

static void comm_graphs(struct nw_jctx *x, const struct nw_comm_view *v)
{
	/* The graphs with a launch stuck past the timeout on some member. */
	uint64_t done[16];
	size_t ndone = 0;
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_member *m = &v->members[r];
		if (!m->proc || x->sink[m->proc->job_index])
			continue;
		for (size_t k = 0; k < m->proc->nops && !x->oom; k++) {
			const struct nw_seg_op *o = &m->proc->ops[k];
			if (o->kind != NW_OP_GRAPH_LAUNCH || !nw_op_pending(o->state) ||
			    nw_age(m->proc, o->enqueue_ns) <= x->timeout_ns || !nw_launch_touches(m->proc, o, v->id))
				continue;
			uint64_t ident = nw_graph_ident(m->proc, o);
			size_t j = 0;
			while (j < ndone && done[j] != ident)
				j++;
			if (j < ndone)
				continue;
			if (ndone == sizeof done / sizeof *done)
				return;   /* more stuck graphs than that on one comm: the first ones say enough */
			done[ndone++] = ident;
			judge_replay(x, v, ident, (uint16_t)o->redop, o->comm_id != v->id);
		}
	}
}

void nw_rules_graph(struct nw_jctx *x)
{
	struct nw_comm_view *v, *vt;
	HASH_ITER(hh, x->job->comms, v, vt) {
		if (x->oom)
			return;
		if (v->nranks > 0)
			comm_graphs(x, v);
	}
}

/* Whether edge e stands for a wait inside a replay: it leaves from a
 * launch (the replay rules), or from a captured op of one (its sends and
 * receives lined up with their peers, verdicts_p2p.c). */
static int replay_edge(const struct nw_edge *e, uint32_t nprocs)
{
	return e->kind != NW_E_WAIT && e->src < nprocs && e->op && e->view &&
	       (e->op->kind == NW_OP_GRAPH_LAUNCH || e->op->state == NW_ST_CAPTURED);
}

/* Each process's comm of its first wait inside a replay (0: none) and
 * whether it waits inside replays on two comms or more (many[]). */
static void replay_waits(struct nw_jctx *x, uint64_t *on, uint8_t *many)
{
	const struct nw_graph *g = &x->g;
	memset(on, 0, g->nprocs * sizeof *on);
	memset(many, 0, g->nprocs);
	for (size_t i = 0; i < g->nedges; i++) {
		const struct nw_edge *e = &g->edges[i];
		if (!replay_edge(e, g->nprocs))
			continue;
		if (!on[e->src])
			on[e->src] = e->view->id;
		else if (on[e->src] != e->view->id)
			many[e->src] = 1;
	}
}

/* One replay stall (every member of v started replay w->v.replay and none
 * completed it): its members whose replay waits for a peer on another comm
 * the graph holds are held there; the others wait for them. 1 if any. */
static int stall_held(struct nw_jctx *x, struct nw_vwork *w, const struct nw_comm_view *v, const uint64_t *on,
                      const uint8_t *many)
{
	int32_t held = 0;
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_proc *p = v->members[r].proc;
		held += p && (many[p->job_index] || (on[p->job_index] && on[p->job_index] != v->id));
	}
	if (!held)
		return 0;
	uint32_t junction = nw_graph_junction(&x->g);
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_member *m = &v->members[r];
		if (!m->proc)
			continue;
		uint32_t n = m->proc->job_index;
		if (many[n] || (on[n] && on[n] != v->id)) {
			nw_graph_edge(&x->g, junction, n, NW_E_BLOCK, NULL, v, w->v.replay, 0);
			continue;
		}
		struct mlaunch ml;
		member_launches(x, m, v->id, w->v.seq, &ml);
		if (ml.stuck && ml.stuck->seq == w->v.replay)
			nw_graph_edge(&x->g, n, junction, NW_E_BLOCK, ml.stuck, v, w->v.replay, 0);
	}
	return 1;
}

/* A replay that every member of comm C started and none completed is not
 * the link's (TRANSPORT_STALL) when a member's replay waits for a peer on
 * another comm its graph holds (a replay rule's or a send/receive's edge):
 * the graph's ops run in order on its stream, so that member's op on C may
 * not have run yet, as an eager op queued behind earlier work on its stream
 * (a block edge). The others inside wait for it, and the stall is
 * withdrawn: the waits it stands for lead to the replay's real culprit.
 * In rounds until nothing changes, each judged on the waits of the rounds
 * before it (the order of the stalls does not matter): a member held so
 * holds the replays of its other comms up in turn. */
void nw_rules_graph_held(struct nw_jctx *x)
{
	uint32_t np = x->g.nprocs;
	uint64_t *on = malloc((np + 1) * sizeof *on);
	uint8_t *many = malloc(np + 1);
	if (!on || !many) {
		x->oom = 1;
		goto out;
	}
	for (int changed = 1; changed && !x->oom;) {
		changed = 0;
		replay_waits(x, on, many);
		for (size_t i = 0; i < x->nvw && !x->oom; i++) {
			struct nw_vwork *w = x->vw[i];
			const struct nw_comm_view *v;
			if (w->dropped || w->v.kind != NW_V_TRANSPORT_STALL || !w->v.replay ||
			    !(v = nw_view_of(x, w->v.comm_id)))
				continue;
			if (stall_held(x, w, v, on, many)) {
				w->dropped = 1;
				changed = 1;
			}
		}
	}
out:
	free(on);
	free(many);
}
