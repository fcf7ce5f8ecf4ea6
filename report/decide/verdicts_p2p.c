/* verdicts_p2p: P2P_UNMATCHED and P2P_DEADLOCK.
 *
 * Send #k from A to B matches receive #k on B from A. A send #k of A to B
 * pending past the timeout while B's recv_enqueued from A < k (or a
 * receive #k on B from A while A's send_enqueued to B < k) is an unmatched
 * pair: the side that did not post is the culprit, the other waits for it
 * (a wait-for edge). A pending op whose other half was posted waits for its
 * peer's progress (an edge that counts for who waits, not for cycles).
 * A pending op that has not started, with no NCCL op ahead of it on its
 * stream and its other half posted, waits for its own stream (a host
 * function, a kernel): no edge; its rank is a STREAM_BLOCKED candidate.
 *
 * A misdirected post: when B has an unmatched receive from C while A's
 * send to B is unmatched, B received from the wrong peer (B is the culprit
 * of A's pair; its own wait on C is of its own making: no edge); when A
 * has an unmatched send to C while B's receive from A is unmatched, A sent
 * to the wrong peer. The misdirected pair is reported in the other pair's
 * verdict.
 *
 * After the graph: a strongly connected component of two or more
 * processes holding a send/receive edge is a deadlock, named by one cycle
 * through that edge; its pairs are reported there. The other pairs are
 * P2P_UNMATCHED verdicts.
 *
 * What it finds are facts (facts.h's NW_F_P2P_*, a deadlock's steps and
 * hint included); their words are words/p2p_words.c's. */
#include "decide.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

static void add_pair(struct nw_jctx *x, const struct nw_p2p_pair *p)
{
	if (x->npairs == x->cappairs) {
		size_t cap = x->cappairs ? x->cappairs * 2 : 8;
		struct nw_p2p_pair *n = realloc(x->pairs, cap * sizeof *n);
		if (!n) {
			x->oom = 1;
			return;
		}
		x->pairs = n;
		x->cappairs = cap;
	}
	x->pairs[x->npairs++] = *p;
}

struct pkey {
	uint64_t comm;
	uint32_t culprit;
	uint32_t kind;
};

struct pent {
	struct pkey k;
	uint32_t first;                 /* first pair with this key */
	UT_hash_handle hh;
};

/* The peer's op that matches `op` (its receive #k from op's rank for a
 * send #k, and the other way round), if it is still kept. */
static const struct nw_seg_op *other_half(struct nw_jctx *x, const struct nw_member *pm, const struct nw_seg_op *op)
{
	uint32_t *idx;
	size_t n;
	nw_member_ops(x, pm, &idx, &n);
	uint16_t want = op->kind == NW_OP_SEND ? NW_OP_RECV : NW_OP_SEND;
	for (size_t k = 0; k < n; k++) {
		const struct nw_seg_op *o = &pm->proc->ops[idx[k]];
		if (o->kind == want && o->root == op->rank && o->seq == op->seq && o->state != NW_ST_DISCARDED)
			return o;
	}
	return NULL;
}

/* ---- eager sends nobody received ----
 *
 * A send no larger than NCCL's buffer completes without its receive (the
 * data waits in the peer's buffer), so a send to the wrong peer no longer
 * waits: it is an orphan, a completed send the peer never posted a
 * receive for. Two shapes of a misdirected post follow from it. */

/* Did member `b` (comm rank) of v complete sends to some member c other than
 * `not` that c never received from at all, after it talked with `not`
 * (sent to it before)? Then b sent to the wrong peer (c). Returns c, or -1. */
static int orphan_send_of(const struct nw_comm_view *v, int32_t b, int32_t not)
{
	const struct nw_member *bm = &v->members[b];
	if (!bm->proc)
		return -1;
	const struct nw_seg_peer *ba = nw_proc_peer(bm->proc, nw_member_slot(bm), not);
	if (!ba || !ba->send_enqueued)
		return -1;
	for (int32_t c = 0; c < v->nranks; c++) {
		if (c == b || c == not || !v->members[c].proc)
			continue;
		const struct nw_seg_peer *bc = nw_proc_peer(bm->proc, nw_member_slot(bm), c);
		const struct nw_seg_peer *cb = nw_proc_peer(v->members[c].proc, nw_member_slot(&v->members[c]), b);
		if (bc && bc->send_completed > 0 && (!cb || cb->recv_enqueued == 0))
			return c;
	}
	return -1;
}

/* Did member w of v receive from comm rank y, and never from xr, in an
 * earlier instance of v's group: another child of a split of v's parent
 * over the same processes at the same comm ranks, ended (finalized or
 * destroyed) on every member? Why: a group re-created
 * every step (split at the step's start, destroyed at its end) is one
 * group of the program; its new comm holds no history of its own, the
 * ended ones hold the peers it received from. */
static int received_in_group(struct nw_jctx *x, const struct nw_comm_view *v, int32_t w, int32_t y, int32_t xr)
{
	const struct nw_proc *wp = v->members[w].proc;
	if (v->origin != NW_ORIGIN_SPLIT || !v->parent_id || !wp)
		return 0;
	struct nw_comm_view *u, *ut;
	HASH_ITER(hh, x->job->comms, u, ut) {
		if (u == v || u->parent_id != v->parent_id || u->origin != v->origin || u->nranks != v->nranks)
			continue;
		int same = 1;   /* an earlier instance: it ended on every member */
		for (int32_t i = 0; i < v->nranks && same; i++)
			same = v->members[i].proc && u->members[i].proc == v->members[i].proc && u->members[i].comm &&
			       (u->members[i].comm->state == NW_COMM_FINALIZED ||
			        u->members[i].comm->state == NW_COMM_DESTROYED);
		int from_y = 0, from_x = 0;
		for (size_t i = 0; same && i < wp->nops; i++) {
			const struct nw_seg_op *o = &wp->ops[i];
			if (o->comm_id == u->id && o->kind == NW_OP_RECV) {
				from_y |= o->root == y;
				from_x |= o->root == xr;
			}
		}
		if (from_y && !from_x)
			return 1;
	}
	return 0;
}

/* Receive #1 of member w from x, which x never sent to (x's sends to w:
 * none), while another member y's completed send to w waits unreceived
 * there, y being a peer w received from before (on this comm, or in an
 * earlier instance of its group: received_in_group): w received from the
 * wrong peer. Returns y, or -1. */
static int orphan_recv_at(struct nw_jctx *x, const struct nw_comm_view *v, int32_t w, int32_t xr)
{
	const struct nw_member *wm = &v->members[w];
	if (!wm->proc)
		return -1;
	for (int32_t y = 0; y < v->nranks; y++) {
		if (y == w || y == xr || !v->members[y].proc)
			continue;
		const struct nw_seg_peer *wy = nw_proc_peer(wm->proc, nw_member_slot(wm), y);
		const struct nw_seg_peer *yw = nw_proc_peer(v->members[y].proc, nw_member_slot(&v->members[y]), w);
		uint64_t got = wy ? wy->recv_enqueued : 0;
		if (yw && yw->send_completed > got && (got >= 1 || received_in_group(x, v, w, y, xr)))
			return y;
	}
	return -1;
}

/* How many of p's launches (done: completed ones only; upto: that one and
 * those before it only, NULL all) replay a graph holding a `kind` (send or
 * receive) with comm rank `peer` on comm `comm`: its posts to that peer
 * counted per replay, where its books count a captured op once, at
 * capture. */
static uint64_t graph_posts_upto(const struct nw_proc *p, uint64_t comm, uint16_t kind, int32_t peer, int done,
                                 const struct nw_seg_op *upto)
{
	uint64_t n = 0;
	for (size_t i = 0; i < p->nops && (!upto || &p->ops[i] <= upto); i++) {
		const struct nw_seg_op *l = &p->ops[i];
		if (l->kind != NW_OP_GRAPH_LAUNCH || (done && l->state != NW_ST_COMPLETED))
			continue;
		const struct nw_seg_op *g[64];
		size_t k = nw_graph_ops(p, l, g, sizeof g / sizeof *g);
		for (size_t j = 0; j < k; j++)
			if (g[j]->comm_id == comm && g[j]->kind == kind && g[j]->root == peer) {
				n++;
				break;
			}
	}
	return n;
}

static uint64_t graph_posts(const struct nw_proc *p, uint64_t comm, uint16_t kind, int32_t peer, int done)
{
	return graph_posts_upto(p, comm, kind, peer, done, NULL);
}

/* Captured op (of p's launch l) whose number lies past its peer q's
 * position, while q's launches posted the other half to p at least as many
 * times as p's launches up to l posted op's kind to q: both post it once
 * per replay, and p's number is shifted by a graph of its own (a
 * re-capture with another shape, launched instead of the graph the others
 * replay, counts its ops again at capture). */
static int posted_per_replay(const struct nw_proc *p, const struct nw_proc *q, const struct nw_seg_op *op,
                             const struct nw_seg_op *l)
{
	uint16_t other = op->kind == NW_OP_SEND ? NW_OP_RECV : NW_OP_SEND;
	uint64_t mine = graph_posts_upto(p, op->comm_id, op->kind, op->root, 0, l);
	return mine && graph_posts(q, op->comm_id, other, op->rank, 0) >= mine;
}

/* orphan_recv_at for replays: member w's receive from x in its stuck
 * replay, x never sent to w, while a peer y that w's graphs received from
 * before completed more replays sending to w than w launched replays
 * receiving from y (a send per replay, eager, waiting unreceived): w
 * received from the wrong peer. Returns y, or -1. */
static int graph_orphan_recv_at(const struct nw_comm_view *v, int32_t w, int32_t xr)
{
	const struct nw_member *wm = &v->members[w];
	if (!wm->proc)
		return -1;
	for (int32_t y = 0; y < v->nranks; y++) {
		if (y == w || y == xr || !v->members[y].proc)
			continue;
		uint64_t got = graph_posts(wm->proc, v->id, NW_OP_RECV, y, 0);
		if (got && graph_posts(v->members[y].proc, v->id, NW_OP_SEND, w, 1) > got)
			return y;
	}
	return -1;
}

/* Op (pending on process i, or captured into a graph whose replay is
 * pending there) against its peer's position: a pair when the peer never
 * posted the other half, else a wait-for edge. */
static void pair_of(struct nw_jctx *x, size_t i, const struct nw_seg_op *op, const struct nw_seg_op *launch)
{
	const struct nw_comm_view *v = nw_view_of(x, op->comm_id);
	if (!v || op->root < 0 || op->root >= v->nranks)
		return;
	const struct nw_member *pm = &v->members[op->root];
	struct nw_p2p_pair pair = {
		.view = v, .waiter = (uint32_t)i, .culprit = NONE, .culprit_crank = op->root, .op = op,
		.launch = launch, .primary = NONE, .orphan_crank = -1,
	};
	if (pm->proc) {
		const struct nw_seg_peer *e = nw_proc_peer(pm->proc, nw_member_slot(pm), op->rank);
		if (!e && (pm->proc->hdr.flags & NW_SEG_F_PEERS_FULL))
			return;   /* its position is not known */
		uint64_t pos = e ? (op->kind == NW_OP_SEND ? e->recv_enqueued : e->send_enqueued) : 0;
		if (launch && pos < op->seq && !x->sink[pm->proc->job_index] &&
		    posted_per_replay(x->job->procs[i], pm->proc, op, launch)) {
			/* posted in the peer's replays: it waits for the peer's progress */
			nw_graph_edge(&x->g, (uint32_t)i, pm->proc->job_index, NW_E_WAIT, op, v, op->seq, pos);
			return;
		}
		if (pos >= op->seq) {
			/* Posted. If the other half sits unstarted behind earlier
			 * work on the peer's stream, or has not started for longer
			 * than the timeout behind work we do not see (a kernel, a
			 * host function), the peer holds it up (a send/receive
			 * edge: it counts for cycles and roots); else this op only
			 * waits for the peer's progress. */
			const struct nw_seg_op *half = other_half(x, pm, op);
			/* In a replay, the other half is the peer's captured op
			 * (counted once, at capture): the peer's launch of the
			 * same replay stands for it; none: the peer never posted
			 * it in this replay. */
			if (launch && half && half->state == NW_ST_CAPTURED) {
				uint64_t launched = 0;
				half = nw_graph_replay_of(pm->proc, launch, &launched);
				if (!half && launched && launched < launch->seq)
					goto unposted;
			}
			/* A peer that ended (exited or died while the job went on:
			 * a sink) before completing its half never will: whatever
			 * state the half was left in, the peer holds it up. */
			uint64_t done = e ? (op->kind == NW_OP_SEND ? e->recv_completed : e->send_completed) : 0;
			int ended = x->sink[pm->proc->job_index] && done < op->seq &&
			            !(half && (half->state == NW_ST_COMPLETED || half->state == NW_ST_FAILED));
			int held = ended || (half && half->state == NW_ST_ENQUEUED &&
			                     (nw_previous_work(pm->proc, half) ||
			                      nw_age(pm->proc, half->enqueue_ns) > x->timeout_ns));
			/* A receive matched only by a send the peer posted behind
			 * its own stuck work, while its send to another peer went
			 * eagerly to nobody: the peer sent to the wrong peer and
			 * went on (its later send fills the count). */
			int c = held && op->kind == NW_OP_RECV ? orphan_send_of(v, op->root, op->rank) : -1;
			if (c < 0) {
				nw_graph_edge(&x->g, (uint32_t)i, pm->proc->job_index, held ? NW_E_P2P : NW_E_WAIT, op, v,
				              op->seq, pos);
				return;
			}
			pair.orphan_crank = c;
		}
	unposted:
		pair.culprit = pm->proc->job_index;
		pair.peer_pos = pos;
		if (op->kind == NW_OP_RECV && pair.orphan_crank < 0)   /* its send went elsewhere? */
			pair.orphan_crank = orphan_send_of(v, op->root, op->rank);
		if (op->kind == NW_OP_RECV && op->seq == 1 && pos == 0) {
			int y = orphan_recv_at(x, v, op->rank, op->root);
			if (y < 0 && launch)
				y = graph_orphan_recv_at(v, op->rank, op->root);
			if (y >= 0) {   /* we received from the wrong peer */
				pair.culprit = (uint32_t)i;
				pair.orphan_crank = y;
			}
		}
	}
	add_pair(x, &pair);
}

/* Whether process p is already a STREAM_BLOCKED candidate (one of its
 * collectives or graph replays never started: verdicts_coll.c,
 * verdicts_graph.c). */
static int has_sblock(const struct nw_jctx *x, const struct nw_proc *p)
{
	for (size_t i = 0; i < x->nsblocks; i++)
		if (x->sblocks[i].view->members[x->sblocks[i].member].proc == p)
			return 1;
	return 0;
}

/* Send/receive op of process i has not started for longer than the timeout
 * and no earlier NCCL op is pending on its stream: work we do not see (a
 * host function, a kernel) holds the stream. When its peer posted the
 * other half, the op waits for its own stream, not for the peer (the
 * peer's half waits for it: pair_of gives the peer a send/receive edge to
 * it): no edge leaves it, and its process is a STREAM_BLOCKED candidate
 * (once, at its oldest such op), the peer waiting in the other half when
 * that is pending. True when so; false leaves the op to pair_of (the peer
 * never posted the other half: an unmatched pair). */
static int unstarted_posted(struct nw_jctx *x, size_t i, const struct nw_seg_op *op, int *blocked)
{
	const struct nw_comm_view *v = nw_view_of(x, op->comm_id);
	if (!v || op->root < 0 || op->root >= v->nranks || op->rank < 0 || op->rank >= v->nranks)
		return 0;
	const struct nw_member *pm = &v->members[op->root], *me = &v->members[op->rank];
	/* A process that ended is not held by its stream: it left (its peers
	 * wait for it, pair_of) */
	if (!pm->proc || me->proc != x->job->procs[i] || x->sink[i])
		return 0;
	const struct nw_seg_peer *e = nw_proc_peer(pm->proc, nw_member_slot(pm), op->rank);
	uint64_t pos = e ? (op->kind == NW_OP_SEND ? e->recv_enqueued : e->send_enqueued) : 0;
	if (pos < op->seq)
		return 0;
	if (*blocked)
		return 1;
	*blocked = 1;
	if (has_sblock(x, me->proc))
		return 1;
	struct nw_rankset in = { 0 };
	const struct nw_seg_op *half = other_half(x, pm, op);
	if (half && nw_op_pending(half->state) && pm->proc->rank >= 0)
		nw_set_add(x, &in, pm->proc->rank);
	const struct nw_rankset *shared = nw_shared_set(x, &in);
	nw_rankset_free(&in);
	if (shared)
		nw_add_sblock(x, v, op->rank, op, nw_age(me->proc, op->enqueue_ns), shared);
	return 1;
}

/* Every send/receive pending past the timeout, and every stuck replay's
 * captured ones, against its peer's position: a pair or an edge. */
static void pending_pairs(struct nw_jctx *x)
{
	for (size_t i = 0; i < x->job->nprocs && !x->oom; i++) {
		struct nw_proc *p = x->job->procs[i];
		int blocked = 0;   /* p is a STREAM_BLOCKED candidate already */
		for (size_t k = 0; k < p->nops && !x->oom; k++) {
			const struct nw_seg_op *op = &p->ops[k];
			int launch = op->kind == NW_OP_GRAPH_LAUNCH;
			if ((!NW_OP_IS_P2P(op->kind) && !launch) || !nw_op_pending(op->state) ||
			    nw_age(p, op->enqueue_ns) <= x->timeout_ns)
				continue;
			/* Not yet started behind earlier work on its stream: it waits
			 * for that work, not (yet) for its peer. */
			if (op->state == NW_ST_ENQUEUED && nw_previous_work(p, op))
				continue;
			/* Not started, nothing of NCCL ahead of it: it waits for
			 * work we do not see on its stream. */
			if (!launch && op->state == NW_ST_ENQUEUED && unstarted_posted(x, i, op, &blocked))
				continue;
			if (!launch) {
				pair_of(x, i, op, NULL);
				continue;
			}
			/* A stuck replay: the sends and receives captured into its
			 * graph stand for their ops in it (both sides count a
			 * captured op once, as issued, so positions compare alike). */
			const struct nw_seg_op *g[64];
			size_t n = nw_graph_ops(p, op, g, sizeof g / sizeof *g);
			for (size_t j = 0; j < n; j++)
				if (NW_OP_IS_P2P(g[j]->kind))
					pair_of(x, i, g[j], op);
		}
	}
}

/* Misdirected posts: a pair whose waiter is itself the culprit of a pair
 * of the other direction on the comm is reported in that one's verdict;
 * the others' waiters wait for their culprits (send/receive edges). */
static void misdirected(struct nw_jctx *x)
{
	struct pent *idx = NULL, *e, *et;
	for (size_t i = 0; i < x->npairs && !x->oom; i++) {
		struct pkey k;
		memset(&k, 0, sizeof k);
		k.comm = x->pairs[i].view->id;
		k.culprit = x->pairs[i].culprit;
		k.kind = x->pairs[i].op->kind;
		HASH_FIND(hh, idx, &k, sizeof k, e);
		if (e)
			continue;
		if (!(e = calloc(1, sizeof *e))) {
			x->oom = 1;
			break;
		}
		e->k = k;
		e->first = (uint32_t)i;
		HASH_ADD(hh, idx, k, sizeof e->k, e);
		if (nw_hash_oom_taken()) {
			free(e);
			x->oom = 1;
		}
	}
	for (size_t i = 0; i < x->npairs && !x->oom; i++) {
		struct nw_p2p_pair *pr = &x->pairs[i];
		/* A receive by the waiter from the wrong peer: someone's send to the
		 * waiter is unmatched. A send by the waiter to the wrong peer:
		 * someone's receive from the waiter is unmatched. */
		struct pkey k;
		memset(&k, 0, sizeof k);
		k.comm = pr->view->id;
		k.culprit = pr->waiter;
		k.kind = pr->op->kind == NW_OP_RECV ? NW_OP_SEND : NW_OP_RECV;
		HASH_FIND(hh, idx, &k, sizeof k, e);
		if (e && e->first != i) {
			pr->primary = e->first;
			pr->folded = 1;
		}
	}
	HASH_ITER(hh, idx, e, et) {
		HASH_DEL(idx, e);
		free(e);
	}
	for (size_t i = 0; i < x->npairs; i++) {
		const struct nw_p2p_pair *pr = &x->pairs[i];
		if (pr->primary == NONE && pr->culprit != NONE && pr->culprit != pr->waiter)
			nw_graph_edge(&x->g, pr->waiter, pr->culprit, NW_E_P2P, pr->op, pr->view, pr->op->seq, pr->peer_pos);
	}
}

void nw_rules_p2p(struct nw_jctx *x)
{
	pending_pairs(x);
	if (!x->oom)
		misdirected(x);
}

/* ---- counts that do not add up ---- */

/* A's first send/receive with B on comm W, where neither has any other
 * send/receive, is the twin of B's unmatched op toward A on another comm P
 * (the other half: B sends where A receives, or the other way round) on
 * which A already matched some of B's ops. Why: the pair talks on P; A's
 * op on W, where nobody ever talked, is the one posted on the wrong comm
 * (the wrong process group passed to send/recv), and B waits on P for it. */
/* The eager form of the same: B's sends to A on another comm completed
 * into A's buffer beyond what A received there (A received from B there
 * before): B's message waits on the comm the pair talks on while A
 * receives from B where nobody talks. */
static int orphan_twin(struct nw_jctx *x, const struct nw_proc *a, const struct nw_proc *b,
                       const struct nw_comm_view *not)
{
	for (uint32_t c = 0; c < b->ncomms; c++) {
		const struct nw_comm_view *v = nw_view_of(x, b->comms[c].comm_id);
		if (!v || v == not)
			continue;
		int32_t ra = -1, rb = -1;
		for (int32_t r = 0; r < v->nranks; r++) {
			if (v->members[r].proc == a)
				ra = r;
			if (v->members[r].proc == b)
				rb = r;
		}
		if (ra < 0 || rb < 0)
			continue;
		const struct nw_seg_peer *ba = nw_proc_peer(b, nw_member_slot(&v->members[rb]), ra);
		const struct nw_seg_peer *ab = nw_proc_peer(a, nw_member_slot(&v->members[ra]), rb);
		if (ba && ab && ab->recv_enqueued >= 1 && ba->send_completed > ab->recv_enqueued)
			return 1;
	}
	return 0;
}

static int wrong_comm_twin(const struct nw_graph *g, uint32_t s, const struct nw_edge *e)
{
	for (size_t i = 0; i < g->nedges; i++) {
		const struct nw_edge *f = &g->edges[i];
		if (f->kind == NW_E_P2P && f->src == e->dst && f->dst == e->src && g->scc[f->src] == s && f->op &&
		    f->view != e->view && f->op->kind != e->op->kind && f->peer_pos > 0 && f->peer_pos < f->op->seq)
			return 1;
	}
	return 0;
}

size_t nw_p2p_count_deviants(struct nw_jctx *x, uint32_t s, uint8_t *deviant)
{
	struct nw_graph *g = &x->g;
	size_t marked = 0;
	for (size_t i = 0; i < g->nedges; i++) {
		const struct nw_edge *e = &g->edges[i];
		if (e->kind != NW_E_P2P || e->src >= g->nprocs || e->dst >= g->nprocs || g->scc[e->src] != s ||
		    g->scc[e->dst] != s || !e->op)
			continue;
		if (e->peer_pos >= e->op->seq) {
			/* Posted, but held behind the peer's own stuck work while the
			 * peer's send to another rank went eagerly to nobody: the peer
			 * sent to the wrong peer and went on. */
			if (e->op->kind == NW_OP_RECV && orphan_send_of(e->view, e->op->root, e->op->rank) >= 0 &&
			    (!deviant || !deviant[e->dst])) {
				if (deviant)
					deviant[e->dst] = 1;
				marked++;
			}
			continue;   /* else only pairs whose other half was never posted */
		}
		const struct nw_proc *a = x->job->procs[e->src], *b = x->job->procs[e->dst];
		uint64_t k = e->op->seq;
		/* B's counts with anybody on this comm; A's with anybody but B in
		 * this direction. */
		const struct nw_comm_view *v = e->view;
		uint64_t bmax = 0, aother = 0;
		int aany = 0;
		for (int side = 0; side < 2; side++) {
			const struct nw_proc *p = side ? a : b;
			for (uint32_t j = 0; j < p->npeers; j++) {
				const struct nw_seg_peer *pe = &p->peers[j];
				if (pe->comm_slot >= p->ncomms || p->comms[pe->comm_slot].comm_id != v->id)
					continue;
				uint64_t sm = pe->send_enqueued, rm = pe->recv_enqueued;
				if (!side) {
					bmax = sm > bmax ? sm : bmax;
					bmax = rm > bmax ? rm : bmax;
				} else {
					int toward_b = pe->peer == e->op->root;
					uint64_t other = e->op->kind == NW_OP_SEND ? (toward_b ? rm : (sm > rm ? sm : rm))
					                                           : (toward_b ? sm : (sm > rm ? sm : rm));
					if (toward_b && !other)
						continue;
					aany = 1;
					aother = other > aother ? other : aother;
				}
			}
		}
		uint32_t who = NONE;
		if (bmax >= k)
			who = e->dst;            /* B went past #k elsewhere but not with A */
		else if (aany && aother < k)
			who = e->src;            /* A did more with B than with anybody else */
		else if (k == 1 && !bmax && !aany &&
		         (wrong_comm_twin(g, s, e) || (e->op->kind == NW_OP_RECV && orphan_twin(x, a, b, v))))
			who = e->src;            /* A posted it on a comm where nobody else talks */
		if (who != NONE && (!deviant || !deviant[who])) {
			if (deviant)
				deviant[who] = 1;
			marked++;
		}
	}
	return marked;
}

/* ---- describing, as facts (their words: words/p2p_words.c) ---- */

/* The facts that say pair pr into f[0..3): the op, how long it is pending
 * (with_age), what its peer did instead; returns how many. */
static size_t pair_facts(struct nw_jctx *x, const struct nw_p2p_pair *pr, int with_age, struct nw_fact *f)
{
	const struct nw_proc *w = x->job->procs[pr->waiter];
	size_t n = 0;
	f[n++] = (struct nw_fact){ .kind = NW_F_P2P_OP, .proc = w, .op = pr->op, .view = pr->view,
		                   .n = (uint32_t)pr->culprit_crank };
	if (with_age && pr->launch)
		f[n++] = (struct nw_fact){ .kind = NW_F_P2P_REPLAY_PENDING, .n = pr->launch->seq,
			                   .seq = nw_age(w, pr->launch->enqueue_ns) };
	else if (with_age)
		f[n++] = (struct nw_fact){ .kind = NW_F_P2P_PENDING, .n = nw_age(w, pr->op->enqueue_ns) };
	if (pr->culprit == NONE)
		return n;   /* the peer has no file: nothing known of what it posted */
	struct nw_fact t = { .kind = NW_F_P2P_NEVER, .proc = w, .op = pr->op, .view = pr->view,
		             .n = (uint32_t)pr->orphan_crank, .seq = pr->peer_pos };
	if (pr->orphan_crank >= 0)
		t.kind = pr->culprit == pr->waiter        ? NW_F_P2P_WRONG_FROM
		         : pr->peer_pos >= pr->op->seq ? NW_F_P2P_WRONG_TO_LATE
		                                        : NW_F_P2P_WRONG_TO;
	f[n++] = t;
	return n;
}

/* One step of a cycle into f[0..2): what process `from` waits in, and for
 * whom (by the kind of the step's last edge). */
static void step_facts(struct nw_jctx *x, const struct nw_edge *first, const struct nw_edge *last,
                       struct nw_fact *f)
{
	f[0] = (struct nw_fact){ .kind = NW_F_P2P_STEP, .proc = x->job->procs[first->src], .op = first->op,
		                 .view = first->op ? nw_view_of(x, first->op->comm_id) : NULL };
	f[1] = (struct nw_fact){ .kind = NW_F_P2P_STEP_HELD, .proc = x->job->procs[last->dst], .op = first->op,
		                 .n = last->peer_pos };
	switch (last->kind) {
	case NW_E_P2P:
		f[1].kind = first->op && last->peer_pos >= first->op->seq ? NW_F_P2P_STEP_UNSTARTED : NW_F_P2P_STEP_NEVER;
		break;
	case NW_E_COLL:
		f[1].kind = NW_F_P2P_STEP_COLL;
		break;
	case NW_E_INIT:
		f[1].kind = NW_F_P2P_STEP_INIT;
		break;
	default:
		break;
	}
}

/* A deadlock: the SCC `s`, named by a cycle through the p2p edge `e`. */
static void deadlock(struct nw_jctx *x, uint32_t s, const struct nw_edge *e, uint32_t *parent, uint32_t *queue)
{
	struct nw_graph *g = &x->g;
	struct nw_vwork *w = nw_verdict_new(x, NW_V_P2P_DEADLOCK, e->view, e->op ? e->op->kind : 0, e->seq);
	if (!w)
		return;
	struct nw_fact hint = { .kind = NW_F_P2P_DEADLOCK_HINT };
	nw_verdict_hint_fact(x, w, &hint);
	for (uint32_t n = 0; n < g->nprocs; n++)
		if (g->scc[n] == s)
			nw_verdict_culprit(x, w, x->job->procs[n]);
	/* Shortest path e->dst ~> e->src inside the SCC (parent[] = edge index). */
	for (uint32_t n = 0; n < g->nnodes; n++)
		parent[n] = NONE;
	size_t head = 0, tail = 0;
	queue[tail++] = e->dst;
	parent[e->dst] = (uint32_t)(e - g->edges);
	while (head < tail && parent[e->src] == NONE) {
		uint32_t v = queue[head++];
		for (uint32_t k = g->fwd_off[v]; k < g->fwd_off[v + 1]; k++) {
			const struct nw_edge *f = &g->edges[g->fwd[k]];
			if (f->kind == NW_E_WAIT || g->scc[f->dst] != s || parent[f->dst] != NONE)
				continue;
			parent[f->dst] = g->fwd[k];
			queue[tail++] = f->dst;
		}
	}
	/* The cycle's edges, from e->src round to e->src. */
	size_t nedges = 0;
	uint32_t *cyc = queue;   /* reused: the BFS is done */
	if (parent[e->src] != NONE) {
		for (uint32_t v = e->src; v != e->dst; v = g->edges[parent[v]].src)
			cyc[nedges++] = parent[v];
	}
	cyc[nedges++] = (uint32_t)(e - g->edges);
	/* cyc[] runs backwards: reverse. */
	for (size_t i = 0; i < nedges / 2; i++) {
		uint32_t t = cyc[i];
		cyc[i] = cyc[nedges - 1 - i];
		cyc[nedges - 1 - i] = t;
	}
	/* Steps: from a process edge through junctions to the next process;
	 * each an evidence line, the first four the summary too. */
	struct nw_fact dl = { .kind = NW_F_P2P_DEADLOCK_HEAD }, sep = { .kind = NW_F_P2P_STEP_SEP };
	nw_verdict_summary_fact(x, w, &dl);
	size_t steps = 0;
	for (size_t i = 0; i < nedges && !x->oom;) {
		size_t j = i;
		while (j + 1 < nedges && g->edges[cyc[j]].dst >= g->nprocs)
			j++;
		struct nw_fact f[2];
		step_facts(x, &g->edges[cyc[i]], &g->edges[cyc[j]], f);
		nw_verdict_evidence_facts(x, w, f, 2);
		if (steps < 4) {
			if (steps)
				nw_verdict_summary_fact(x, w, &sep);
			nw_verdict_summary_fact(x, w, &f[0]);
			nw_verdict_summary_fact(x, w, &f[1]);
		}
		steps++;
		i = j + 1;
	}
	if (steps > 4) {
		struct nw_fact more = { .kind = NW_F_P2P_STEPS_MORE, .n = steps };
		nw_verdict_summary_fact(x, w, &more);
	}
	nw_fact_where_component(x, w, s);   /* where each of them is */
}

/* The culprit's send that went eagerly to another peer (the pair's orphan),
 * nobody receiving it: one evidence line. */
static void eager_line(struct nw_jctx *x, struct nw_vwork *w, const struct nw_p2p_pair *pr, const struct nw_proc *c)
{
	const struct nw_member *cm = NULL, *om = &pr->view->members[pr->orphan_crank];
	for (int32_t r = 0; r < pr->view->nranks; r++)
		if (pr->view->members[r].proc == c)
			cm = &pr->view->members[r];
	const struct nw_seg_peer *co = cm ? nw_proc_peer(c, nw_member_slot(cm), pr->orphan_crank) : NULL;
	const struct nw_seg_peer *oc = cm && om->proc ? nw_proc_peer(om->proc, nw_member_slot(om), pr->culprit_crank)
	                                              : NULL;
	if (!co || !om->proc)
		return;
	struct nw_fact f[2] = {
		{ .kind = NW_F_P2P_EAGER_SEND, .proc = c, .view = pr->view, .n = co->send_completed,
		  .seq = (uint32_t)pr->orphan_crank },
		{ .kind = NW_F_P2P_EAGER_RECVS, .proc = c, .n = oc ? oc->recv_enqueued : 0 },
	};
	nw_verdict_evidence_facts(x, w, f, 2);
}

/* next[i]: the next misdirected pair reported by the same primary pair. */
static void unmatched(struct nw_jctx *x, size_t i, const uint32_t *first_of, const uint32_t *next)
{
	const struct nw_p2p_pair *pr = &x->pairs[i];
	struct nw_vwork *w = nw_verdict_new(x, NW_V_P2P_UNMATCHED, pr->view, pr->op->kind, pr->op->seq);
	if (!w)
		return;
	const struct nw_proc *c = pr->culprit != NONE ? x->job->procs[pr->culprit] : NULL;
	if (c)
		nw_verdict_culprit(x, w, c);
	else if (nw_view_identity(pr->view))
		nw_set_add(x, &w->v.unknown, pr->culprit_crank);
	if (pr->culprit != pr->waiter)
		nw_verdict_waiting(x, w, x->job->procs[pr->waiter]);

	struct nw_fact f[4];
	size_t n = pair_facts(x, pr, 1, f);
	for (size_t k = 0; k < n; k++)
		nw_verdict_summary_fact(x, w, &f[k]);
	if (c && pr->culprit != pr->waiter && pr->orphan_crank >= 0)
		eager_line(x, w, pr, c);
	/* The culprit's own misdirected post, if any: "instead" in the
	 * summary, a line of its own. */
	for (uint32_t k = first_of[i]; k != NONE && !x->oom; k = next[k]) {
		const struct nw_p2p_pair *o = &x->pairs[k];
		struct nw_fact instead = { .kind = NW_F_P2P_INSTEAD };
		nw_verdict_summary_fact(x, w, &instead);
		n = pair_facts(x, o, 0, f);
		for (size_t j = 0; j < n; j++)
			nw_verdict_summary_fact(x, w, &f[j]);
		f[0] = (struct nw_fact){ .kind = NW_F_P2P_MISDIRECTED };
		n = 1 + pair_facts(x, o, 1, f + 1);
		nw_verdict_evidence_facts(x, w, f, n);
	}
	const struct nw_proc *wp = x->job->procs[pr->waiter];
	struct nw_fact l = { .kind = NW_F_P2P_WAITER_OP, .proc = wp, .op = pr->op,
		             .n = nw_age(wp, pr->op->enqueue_ns) };
	if (pr->launch)   /* a captured op: its replay's state and age */
		l = (struct nw_fact){ .kind = NW_F_P2P_WAITER_REPLAY, .proc = wp, .op = pr->launch,
			              .op_kind = pr->op->kind, .seq = pr->op->seq,
			              .n = nw_age(wp, pr->launch->enqueue_ns) };
	nw_verdict_evidence_fact(x, w, &l);
	if (c) {
		struct nw_fact at[2] = { { .kind = NW_F_PROC_AT, .proc = c } };
		uint64_t age = nw_fact_where(x, c, 1, &at[1]);
		if ((at[0].set = nw_findings_aged(x, w, age, age)))
			nw_verdict_evidence_facts(x, w, at, 2);
	} else {
		struct nw_fact nf = { .kind = NW_F_P2P_NOFILE, .view = pr->view, .n = (uint32_t)pr->culprit_crank };
		nw_verdict_evidence_fact(x, w, &nf);
	}
}

void nw_rules_p2p_verdicts(struct nw_jctx *x)
{
	struct nw_graph *g = &x->g;
	uint32_t *first = malloc(((size_t)g->nscc + 1) * sizeof *first);
	uint32_t *count = calloc((size_t)g->nscc + 1, sizeof *count);
	uint32_t *parent = malloc(((size_t)g->nnodes + 1) * sizeof *parent);
	uint32_t *queue = malloc(((size_t)g->nnodes + 1) * sizeof *queue);
	if (!first || !count || !parent || !queue) {
		x->oom = 1;
		goto out;
	}
	for (uint32_t s = 0; s < g->nscc; s++)
		first[s] = NONE;
	for (uint32_t n = 0; n < g->nprocs; n++)
		count[g->scc[n]]++;
	for (size_t i = 0; i < g->nedges; i++) {
		const struct nw_edge *e = &g->edges[i];
		if (e->kind == NW_E_P2P && g->scc[e->src] == g->scc[e->dst] && first[g->scc[e->src]] == NONE)
			first[g->scc[e->src]] = (uint32_t)i;
	}
	/* A cycle in which somebody deviates (its send/receive counts do not
	 * add up, or it alone never posted or issued what others wait in) is
	 * an unmatched pair whose consequences loop back: the pairs are
	 * reported as such and rootcause.c names the deviant. What is left is
	 * a true deadlock. */
	uint8_t *mark = calloc((size_t)g->nprocs + 1, 1);
	if (!mark) {
		x->oom = 1;
		goto out;
	}
	for (uint32_t s = 0; s < g->nscc && !x->oom; s++) {
		if (first[s] == NONE || count[s] < 2)
			continue;
		memset(mark, 0, (size_t)g->nprocs + 1);
		size_t never = nw_graph_never_issued(g, s, mark);
		if (nw_p2p_count_deviants(x, s, NULL) || (never && never < count[s]))
			first[s] = NONE;
	}
	free(mark);
	for (uint32_t s = 0; s < g->nscc && !x->oom; s++)
		if (first[s] != NONE && count[s] >= 2)
			deadlock(x, s, &g->edges[first[s]], parent, queue);
	/* Pairs inside a deadlock are reported there. */
	for (size_t i = 0; i < x->npairs; i++) {
		struct nw_p2p_pair *pr = &x->pairs[i];
		if (pr->culprit != NONE && pr->primary == NONE && g->scc[pr->waiter] == g->scc[pr->culprit] &&
		    first[g->scc[pr->waiter]] != NONE && count[g->scc[pr->waiter]] >= 2)
			pr->folded = 1;
	}
	/* The misdirected pairs of each primary pair, as lists. */
	uint32_t *first_of = malloc((x->npairs + 1) * sizeof *first_of);
	uint32_t *next = malloc((x->npairs + 1) * sizeof *next);
	if (!first_of || !next) {
		free(first_of);
		free(next);
		x->oom = 1;
		goto out;
	}
	for (size_t i = 0; i < x->npairs; i++)
		first_of[i] = next[i] = NONE;
	for (size_t i = x->npairs; i-- > 0;) {
		uint32_t pr = x->pairs[i].primary;
		if (pr != NONE) {
			next[i] = first_of[pr];
			first_of[pr] = (uint32_t)i;
		}
	}
	for (size_t i = 0; i < x->npairs && !x->oom; i++)
		if (!x->pairs[i].folded)
			unmatched(x, i, first_of, next);
	free(first_of);
	free(next);
out:
	free(first);
	free(count);
	free(parent);
	free(queue);
}
