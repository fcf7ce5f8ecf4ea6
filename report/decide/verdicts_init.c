/* verdicts_init: INIT_STALL. Processes inside the creation of a
 * communicator (comm state INIT_ENTERED, or INIT_ASYNC for a non-blocking
 * one) for longer than the timeout wait for the ranks that never entered
 * it:
 *
 *   InitRank / InitRankConfig / InitRankScalable / InitAll: the comm ranks
 *     no process holds. When the comm numbers its ranks like the world
 *     (every member's comm rank is its global rank), a missing comm rank r
 *     is the process of global rank r (a culprit) or, without a file,
 *     unknown; when the comm spans the world (nranks = world size), the
 *     culprits are the processes of the job holding no slot of it, and the
 *     world ranks with no file are unknown.
 *   Split: collective over the parent; a process inside the n-th split of
 *     the parent counted n in the parent's `splits`, so the culprits are the
 *     parent's members whose `splits` is still below n. Every color's child
 *     of one split is one verdict, named by the parent comm.
 *   Shrink: the same with `shrinks`, except that excluded ranks never call
 *     it: the laggards are named as evidence only.
 *
 * With nobody missing, the comm itself is blamed (every rank entered, none
 * finished: rendezvous, network). */
#include "decide.h"
#include "majority.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Inside its creation: entered, or (non-blocking) still in progress, or
 * made inside a group that has not ended: the call returned at once, but
 * NCCL creates the comm at the outermost ncclGroupEnd, where the recorder
 * learns its size (a split's child has none before). */
static int inside(const struct nw_seg_comm *c)
{
	return c->state == NW_COMM_INIT_ENTERED || c->state == NW_COMM_INIT_ASYNC ||
	       (c->state == NW_COMM_INIT_DONE && c->handle && c->nranks < 0);
}

static uint16_t create_kind(uint32_t origin)
{
	return origin == NW_ORIGIN_SPLIT ? NW_OP_COMM_SPLIT : origin == NW_ORIGIN_SHRINK ? NW_OP_COMM_SHRINK
	                                                                              : NW_OP_COMM_INIT;
}

/* The slot of comm `id` in p, or NULL. */
static const struct nw_seg_comm *slot_of(const struct nw_proc *p, uint64_t id)
{
	for (uint32_t s = 0; s < p->ncomms; s++)
		if (p->comms[s].comm_id == id && p->comms[s].state != NW_COMM_FREE)
			return &p->comms[s];
	return NULL;
}

struct stuckset {
	struct nw_proc **p;
	const struct nw_seg_comm **c;
	size_t n, cap;
	uint64_t max_age;
};

static void stuck_add(struct nw_jctx *x, struct stuckset *s, struct nw_proc *p, const struct nw_seg_comm *c)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		struct nw_proc **pp = realloc(s->p, cap * sizeof *pp);
		if (pp)
			s->p = pp;
		const struct nw_seg_comm **cc = realloc(s->c, cap * sizeof *cc);
		if (cc)
			s->c = cc;
		if (!pp || !cc) {
			x->oom = 1;
			return;
		}
		s->cap = cap;
	}
	s->p[s->n] = p;
	s->c[s->n] = c;
	s->n++;
	uint64_t age = nw_age(p, c->init_enter_ns);
	if (age > s->max_age)
		s->max_age = age;
}

/* The stuck processes wait (edges through one junction) for the culprits. */
static void stuck_edges(struct nw_jctx *x, struct nw_vwork *w, const struct stuckset *s,
                        const struct nw_comm_view *v)
{
	struct nw_fgroups eg = { 0 };
	uint32_t junction = w->nblame ? nw_graph_junction(&x->g) : UINT32_MAX;
	int comm_blamed = !w->nblame;
	size_t nculprits = w->nblame;
	for (size_t i = 0; i < s->n; i++) {
		nw_verdict_waiting(x, w, s->p[i]);
		if (comm_blamed)
			nw_verdict_blame(x, w, s->p[i]->job_index);   /* the comm itself: its waiters */
		uint64_t aged = (s->p[i]->caps & NW_CAP_WAIT_TIME) != 0;   /* else no time of entry is known */
		struct nw_fact f = { .kind = NW_F_INIT_INSIDE,
			             .n = s->c[i]->origin | (uint64_t)s->c[i]->state << 32 | aged << 48 };
		nw_fg_add(x, &eg, s->p[i], &f, 1, aged ? nw_age(s->p[i], s->c[i]->init_enter_ns) : NW_NO_AGE);
	}
	if (junction != UINT32_MAX) {
		for (size_t i = 0; i < s->n; i++)
			nw_graph_edge(&x->g, s->p[i]->job_index, junction, NW_E_INIT, NULL, v, 0, 0);
		for (size_t i = 0; i < nculprits; i++)
			nw_graph_edge(&x->g, junction, w->blame[i], NW_E_INIT, NULL, v, 0, 0);
	}
	nw_fg_flush(x, w, &eg, 8);
}

/* Each culprit's line: what (an INIT_NEVER fact), then where it is. */
static void culprit_lines(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *what)
{
	struct nw_fgroups eg = { 0 };
	for (size_t i = 0; i < w->nblame; i++) {
		const struct nw_proc *p = x->job->procs[w->blame[i]];
		struct nw_fact f[2] = { *what };
		uint64_t age = nw_fact_where(x, p, 1, &f[1]);
		nw_fg_add(x, &eg, p, f, 2, age);
	}
	nw_fg_flush(x, w, &eg, 8);
}

/* The summary: who is inside (INIT_IN with its origin, split/shrink
 * number nth, comm id when there is no view), for how long, and who never
 * came (never: 0 entered, 1 called) or, with nobody named, why (tail). */
static void summary(struct nw_jctx *x, struct nw_vwork *w, const struct stuckset *s, uint32_t origin,
                    const struct nw_comm_view *v, uint64_t id, uint64_t nth, uint64_t never, uint64_t tail)
{
	struct nw_fact in = { .kind = NW_F_INIT_IN, .set = nw_findings_set(x, w, &w->v.waiting), .view = v,
		              .op_kind = (uint16_t)origin, .seq = nth, .n = id };
	struct nw_fact age = { .kind = NW_F_INIT_FOR, .n = s->max_age };
	if (!in.set)
		return;
	nw_verdict_summary_fact(x, w, &in);
	nw_verdict_summary_fact(x, w, &age);
	if (w->v.culprits.n) {
		struct nw_fact f = { .kind = NW_F_INIT_NEVER_DID, .set = nw_findings_set(x, w, &w->v.culprits),
			             .n = never };
		if (f.set)
			nw_verdict_summary_fact(x, w, &f);
		if (w->v.unknown.n) {
			struct nw_fact u = { .kind = NW_F_INIT_NOFILE, .set = nw_findings_set(x, w, &w->v.unknown) };
			if (u.set)
				nw_verdict_summary_fact(x, w, &u);
		}
	} else if (w->v.unknown.n) {
		struct nw_fact u = { .kind = NW_F_INIT_NOFILE_Q, .set = nw_findings_set(x, w, &w->v.unknown),
			             .n = never };
		if (u.set)
			nw_verdict_summary_fact(x, w, &u);
	} else {
		struct nw_fact t = { .kind = NW_F_INIT_TAIL, .n = tail };
		nw_verdict_summary_fact(x, w, &t);
	}
}

/* A tie between sizes: the one that counts exactly the ranks that entered
 * the creation is the program's (the others passed another number); its
 * index, or UINT32_MAX when none or several do. */
static uint32_t size_of_those_there(const struct nw_comm_view *v, const int32_t *sizes, const uint32_t *votes,
                                    uint32_t nsizes, uint32_t top)
{
	int32_t there = 0;
	for (int32_t r = 0; r < v->nranks; r++)
		there += v->members[r].proc != NULL;
	uint32_t pick = UINT32_MAX;
	for (uint32_t i = 0; i < nsizes; i++) {
		if (votes[i] != votes[top] || sizes[i] != there)
			continue;
		if (pick != UINT32_MAX)
			return UINT32_MAX;
		pick = i;
	}
	return pick;
}

/* As many ranks on each side of the tie and nothing else to tell which
 * size the program meant: every rank of the tied sides is named, "cannot
 * tell which", none as only waiting. Returns 1. */
static int nranks_tie(struct nw_jctx *x, const struct nw_comm_view *v, const struct stuckset *s, const int32_t *sizes,
                      const uint32_t *votes, uint32_t nsizes)
{
	uint32_t top = nw_vote_top(votes, nsizes, &(uint32_t){ 0 });
	struct nw_vwork *w = nw_verdict_new(x, NW_V_INIT_STALL, v, NW_OP_COMM_INIT, 0);
	if (!w)
		return 1;
	struct nw_fgroups eg = { 0 };
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_member *m = &v->members[r];
		uint32_t i = 0;
		while (m->proc && i < nsizes && sizes[i] != m->comm->nranks)
			i++;
		if (!m->proc || i == nsizes || votes[i] != votes[top])
			continue;
		nw_verdict_culprit(x, w, m->proc);
		struct nw_fact f[2] = { { .kind = NW_F_INIT_CALLED, .view = v, .n = (uint32_t)m->comm->nranks } };
		uint64_t age = nw_fact_where(x, m->proc, 1, &f[1]);
		nw_fg_add(x, &eg, m->proc, f, 2, age);
	}
	nw_fg_flush(x, w, &eg, 8);
	struct nw_fact f = { .kind = NW_F_INIT_TIE, .set = nw_findings_set(x, w, &w->v.culprits), .view = v,
		             .n = s->max_age };
	if (f.set)
		nw_verdict_summary_fact(x, w, &f);   /* words/init_words.c */
	return 1;
}

/* Members that disagree on nranks (the same unique id, another size): the
 * majority's size is the comm's; the others are the culprits (their init
 * can never complete: it waits for ranks that will never come, and the
 * majority waits for them). Returns 1 when it made the verdict. */
static int nranks_disagree(struct nw_jctx *x, const struct nw_comm_view *v, const struct stuckset *s)
{
	int32_t sizes[4] = { 0 };
	uint32_t votes[4] = { 0 };
	uint32_t nsizes = 0;
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_member *m = &v->members[r];
		if (!m->proc)
			continue;
		uint32_t i = 0;
		while (i < nsizes && sizes[i] != m->comm->nranks)
			i++;
		if (i == nsizes && nsizes < 4)
			sizes[nsizes++] = m->comm->nranks;
		if (i < nsizes)
			votes[i]++;
	}
	if (nsizes < 2)
		return 0;
	uint32_t ntop;
	uint32_t maj = nw_vote_top(votes, nsizes, &ntop);
	if (ntop > 1 && (maj = size_of_those_there(v, sizes, votes, nsizes, maj)) == UINT32_MAX)
		return nranks_tie(x, v, s, sizes, votes, nsizes);
	struct nw_vwork *w = nw_verdict_new(x, NW_V_INIT_STALL, v, NW_OP_COMM_INIT, 0);
	if (!w)
		return 1;
	w->v.comm_nranks = sizes[maj];
	struct nw_fgroups eg = { 0 };
	for (int32_t r = 0; r < v->nranks && !x->oom; r++) {
		const struct nw_member *m = &v->members[r];
		if (!m->proc || m->comm->nranks == sizes[maj])
			continue;
		nw_verdict_culprit(x, w, m->proc);
		struct nw_fact f[2] = { { .kind = NW_F_INIT_CALLED, .view = v, .n = (uint32_t)m->comm->nranks } };
		uint64_t age = nw_fact_where(x, m->proc, 1, &f[1]);
		nw_fg_add(x, &eg, m->proc, f, 2, age);
	}
	nw_fg_flush(x, w, &eg, 8);
	/* Those inside it with the majority's size wait for the culprits. */
	struct stuckset in = { 0 };
	for (size_t i = 0; i < s->n; i++)
		if (s->c[i]->nranks == sizes[maj])
			stuck_add(x, &in, s->p[i], s->c[i]);
	stuck_edges(x, w, &in, v);
	free(in.p);
	free(in.c);
	struct nw_fact who = { .kind = NW_F_INIT_NSIZE, .set = nw_findings_set(x, w, &w->v.culprits), .view = v };
	struct nw_fact wait = { .kind = NW_F_INIT_NSIZE_WAIT, .set = nw_findings_set(x, w, &w->v.waiting),
		                .n = (uint32_t)sizes[maj], .seq = s->max_age };
	if (who.set && wait.set) {
		nw_verdict_summary_fact(x, w, &who);
		nw_verdict_summary_fact(x, w, &wait);
	}
	return 1;
}

/* The members of a creation that will never join (its creation returned
 * an error, or its process ended inside it) into gone; those inside it
 * past the timeout into s. */
static void init_members(struct nw_jctx *x, const struct nw_comm_view *v, struct stuckset *s, struct stuckset *gone)
{
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_member *m = &v->members[r];
		/* Its creation returned an error: it will never join, whatever it
		 * does next. */
		if (m->proc && m->comm->state == NW_COMM_INIT_FAILED) {
			stuck_add(x, gone, m->proc, m->comm);
			continue;
		}
		if (!m->proc || !inside(m->comm))
			continue;
		/* A process that ended inside the creation will never finish it:
		 * a culprit, not a waiter. */
		if (x->sink[m->proc->job_index])
			stuck_add(x, gone, m->proc, m->comm);
		else if (!(m->proc->caps & NW_CAP_WAIT_TIME) || nw_age(m->proc, m->comm->init_enter_ns) > x->timeout_ns)
			stuck_add(x, s, m->proc, m->comm);   /* without a wait time, inside counts as stuck */
	}
}

/* The comm ranks that never entered: their processes are culprits where
 * they can be named (the comm is the world, or its ranks are the global
 * ranks); ranks with no file are unknown; comm ranks nobody can name go
 * into lost. Returns how many never entered. */
static uint32_t never_entered(struct nw_jctx *x, struct nw_vwork *w, const struct nw_comm_view *v,
                              struct nw_rankset *lost)
{
	struct nw_job *job = x->job;
	int identity = nw_view_identity(v);
	int world = job->world_size > 0 && v->nranks == job->world_size;
	uint32_t nmissing = 0;
	for (int32_t r = 0; r < v->nranks; r++)
		nmissing += !v->members[r].proc;
	if (nmissing && identity) {
		/* procs are sorted by global rank */
		size_t i = 0;
		for (int32_t r = 0; r < v->nranks; r++) {
			if (v->members[r].proc)
				continue;
			while (i < job->nprocs && (uint32_t)job->procs[i]->rank < (uint32_t)r)
				i++;
			if (i < job->nprocs && job->procs[i]->rank == r)
				nw_verdict_culprit(x, w, job->procs[i]);
			else
				nw_set_add(x, &w->v.unknown, r);
		}
	} else if (nmissing && world) {
		for (size_t i = 0; i < job->nprocs; i++)
			if (!slot_of(job->procs[i], v->id))
				nw_verdict_culprit(x, w, job->procs[i]);
		for (uint32_t k = 0; k < job->missing.n; k++)
			nw_set_add(x, &w->v.unknown, job->missing.v[k]);
	} else if (nmissing) {
		for (int32_t r = 0; r < v->nranks; r++)
			if (!v->members[r].proc)
				nw_set_add(x, lost, r);
	}
	return nmissing;
}

/* The members that will never join (gone) are culprits: why, and where. */
static void gone_lines(struct nw_jctx *x, struct nw_vwork *w, const struct nw_comm_view *v,
                       const struct stuckset *gone)
{
	for (size_t i = 0; i < gone->n; i++) {
		nw_verdict_culprit(x, w, gone->p[i]);
		struct nw_fact f[2] = { { .kind = NW_F_INIT_GONE, .proc = gone->p[i], .comm = gone->c[i], .view = v } };
		uint64_t age = nw_fact_where(x, gone->p[i], 1, &f[1]);
		if (!(f[0].set = nw_findings_aged(x, w, age, age)))
			return;
		nw_verdict_evidence_facts(x, w, f, 2);
	}
}

/* InitRank, InitRankConfig, InitRankScalable, InitAll. */
/* The members of v that finished its creation (held, not inside it, not
 * failed). */
static size_t finished(const struct nw_comm_view *v)
{
	size_t n = 0;
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_member *m = &v->members[r];
		n += m->proc && m->comm->state != NW_COMM_FREE && !inside(m->comm) && m->comm->state != NW_COMM_INIT_FAILED;
	}
	return n;
}

/* Every comm rank entered the creation, a strict majority finished it
 * (majority.c) and the others (s) are still inside: theirs is the
 * deviation (their own connection setup, a device or the network on their
 * side): they are the culprits, not waiters. 1 when it made the verdict. */
static int inside_minority(struct nw_jctx *x, const struct nw_comm_view *v, const struct stuckset *s)
{
	size_t done = finished(v);
	for (int32_t r = 0; r < v->nranks; r++)
		if (!v->members[r].proc)
			return 0;   /* one never entered: the ordinary verdict names it */
	uint32_t votes[2] = { (uint32_t)done, (uint32_t)s->n }, ntop;
	if (!done || !s->n || nw_vote_top(votes, 2, &ntop) != 0 || ntop != 1)
		return 0;
	struct nw_vwork *w = nw_verdict_new(x, NW_V_INIT_STALL, v, NW_OP_COMM_INIT, 0);
	if (!w)
		return 1;
	for (size_t i = 0; i < s->n; i++)
		nw_verdict_culprit(x, w, s->p[i]);
	struct nw_fact what = { .kind = NW_F_INIT_NEVER, .n = 2, .seq = s->c[0]->state };
	culprit_lines(x, w, &what);
	struct nw_rankset fin = { 0 };
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_member *m = &v->members[r];
		if (m->comm->state != NW_COMM_FREE && !inside(m->comm) && m->comm->state != NW_COMM_INIT_FAILED)
			nw_set_add(x, &fin, m->proc->rank);
	}
	struct nw_fact who = { .kind = NW_F_INIT_MINORITY, .set = nw_findings_set(x, w, &w->v.culprits), .view = v };
	struct nw_fact fdone = { .kind = NW_F_INIT_MINORITY_DONE, .set = nw_findings_set(x, w, &fin),
		                .n = w->v.culprits.n };
	if (who.set && fdone.set) {
		nw_verdict_summary_fact(x, w, &who);
		nw_verdict_summary_fact(x, w, &fdone);
	}
	nw_rankset_free(&fin);
	return 1;
}

/* Nobody is stuck inside the creation, and some members' creation
 * returned an error (gone: those, and the processes that ended inside
 * it): they will never join the comm the others hold. 1 when it made
 * the verdict. */
static int failed_alone(struct nw_jctx *x, const struct nw_comm_view *v, const struct stuckset *gone)
{
	size_t nfailed = 0;
	for (size_t i = 0; i < gone->n; i++)
		nfailed += gone->c[i]->state == NW_COMM_INIT_FAILED;
	if (!nfailed)
		return 0;
	struct nw_vwork *w = nw_verdict_new(x, NW_V_INIT_STALL, v, NW_OP_COMM_INIT, 0);
	if (!w)
		return 1;
	gone_lines(x, w, v, gone);
	int32_t first = 0;
	for (size_t i = 0; i < gone->n && !first; i++)
		if (gone->c[i]->state == NW_COMM_INIT_FAILED)
			first = gone->c[i]->init_result;
	struct nw_fact f = { .kind = NW_F_INIT_FAILED, .set = nw_findings_set(x, w, &w->v.culprits), .view = v,
		             .n = (uint32_t)first, .seq = finished(v) };
	if (f.set)
		nw_verdict_summary_fact(x, w, &f);
	return 1;
}

static void init_view(struct nw_jctx *x, const struct nw_comm_view *v)
{
	struct stuckset s = { 0 }, gone = { 0 };
	init_members(x, v, &s, &gone);
	if (!s.n && failed_alone(x, v, &gone))
		goto out;
	if (!s.n || nranks_disagree(x, v, &s))
		goto out;
	if (inside_minority(x, v, &s))
		goto out;
	struct nw_vwork *w = nw_verdict_new(x, NW_V_INIT_STALL, v, NW_OP_COMM_INIT, 0);
	if (!w)
		goto out;
	struct nw_rankset lost = { 0 };  /* comm ranks nobody holds, when they cannot be named */
	uint32_t nmissing = never_entered(x, w, v, &lost);
	struct nw_fact never = { .kind = NW_F_INIT_NEVER, .n = 0 };
	culprit_lines(x, w, &never);
	gone_lines(x, w, v, &gone);
	stuck_edges(x, w, &s, v);
	if (lost.n) {
		struct nw_fact f = { .kind = NW_F_INIT_LOST, .set = nw_findings_set(x, w, &lost) };
		if (f.set)
			nw_verdict_evidence_fact(x, w, &f);
	}
	summary(x, w, &s, v->origin, v, v->id, 0, 0, nmissing ? 0 : finished(v) ? 1 : 2);
	nw_rankset_free(&lost);
out:
	free(s.p);
	free(s.c);
	free(gone.p);
	free(gone.c);
}

/* Split / Shrink: one verdict per (parent, n-th call). */
struct skey {
	uint64_t parent;
	uint64_t nth;
	uint32_t origin;
	uint32_t pad;
};

struct sgroup {
	struct skey k;
	struct stuckset s;
	UT_hash_handle hh;
};

static void split_group(struct nw_jctx *x, struct sgroup *g)
{
	struct nw_comm_view *parent;
	HASH_FIND(hh, x->job->comms, &g->k.parent, sizeof g->k.parent, parent);
	struct nw_vwork *w = nw_verdict_new(x, NW_V_INIT_STALL, parent, create_kind(g->k.origin), 0);
	if (!w)
		return;
	if (!parent)
		w->v.comm_id = g->k.parent;
	int shrink = g->k.origin == NW_ORIGIN_SHRINK;
	struct nw_rankset late = { 0 };
	if (parent) {
		for (int32_t r = 0; r < parent->nranks; r++) {
			const struct nw_member *m = &parent->members[r];
			if (!m->proc)
				continue;
			uint64_t have = shrink ? m->comm->shrinks : m->comm->splits;
			if (have >= g->k.nth)
				continue;
			if (shrink)
				nw_set_add(x, &late, m->proc->rank);
			else
				nw_verdict_culprit(x, w, m->proc);
		}
		nw_view_unknown_fact(x, parent, w);
	}
	struct nw_fact never = { .kind = NW_F_INIT_NEVER, .n = 1 };
	culprit_lines(x, w, &never);
	stuck_edges(x, w, &g->s, parent);
	if (late.n) {
		struct nw_fact f = { .kind = NW_F_INIT_LATE, .set = nw_findings_set(x, w, &late), .seq = g->k.nth,
			             .n = (uint32_t)(g->s.n ? g->s.c[0]->split_color : 0) };
		if (f.set)
			nw_verdict_evidence_fact(x, w, &f);
	}
	summary(x, w, &g->s, g->k.origin, parent, g->k.parent, g->k.nth, 1, shrink && late.n ? 3 : 4);
	nw_rankset_free(&late);
}

/* The group of key k, made when new; NULL out of memory. */
static struct sgroup *group_of(struct nw_jctx *x, struct sgroup **groups, const struct skey *k)
{
	struct sgroup *g;
	HASH_FIND(hh, *groups, k, sizeof *k, g);
	if (g)
		return g;
	if (!(g = calloc(1, sizeof *g))) {
		x->oom = 1;
		return NULL;
	}
	g->k = *k;
	HASH_ADD(hh, *groups, k, sizeof g->k, g);
	if (nw_hash_oom_taken()) {
		free(g);
		x->oom = 1;
		return NULL;
	}
	return g;
}

/* Split / shrink child v: its members whose rank is known and the
 * processes still entering it, stuck inside past the timeout, into the
 * group of their parent's n-th call. */
static void split_child(struct nw_jctx *x, struct sgroup **groups, const struct nw_comm_view *v)
{
	size_t total = v->nentering + (size_t)(v->nranks > 0 ? v->nranks : 0);
	for (size_t i = 0; i < total && !x->oom; i++) {
		struct nw_proc *p;
		const struct nw_seg_comm *c;
		if (i < v->nentering) {
			p = v->entering[i].proc;
			c = v->entering[i].comm;
		} else {
			const struct nw_member *m = &v->members[i - v->nentering];
			p = m->proc;
			c = m->comm;
		}
		if (!p || !c || !inside(c) || nw_age(p, c->init_enter_ns) <= x->timeout_ns)
			continue;
		const struct nw_seg_comm *pc = slot_of(p, v->parent_id);
		struct skey k;
		memset(&k, 0, sizeof k);
		k.parent = v->parent_id;
		k.nth = pc ? (c->origin == NW_ORIGIN_SHRINK ? pc->shrinks : pc->splits) : 0;
		k.origin = c->origin;
		struct sgroup *g = group_of(x, groups, &k);
		if (g)
			stuck_add(x, &g->s, p, c);
	}
}

/* Ranks inside a split with NCCL_SPLIT_NOCOLOR: no child, the record
 * is on the parent (done), the call is the parent's collective all the
 * same: they wait in the same split as the ranks with a color. Their
 * stand-in comm entries go into nocolor[] (one per process at most). */
static void nocolor_ranks(struct nw_jctx *x, struct sgroup *groups, struct nw_seg_comm *nocolor)
{
	size_t nnc = 0;
	for (size_t q = 0; q < x->job->nprocs && !x->oom; q++) {
		struct nw_proc *p = x->job->procs[q];
		for (size_t i = p->nops; i-- > 0;) {
			const struct nw_seg_op *o = &p->ops[i];
			if (o->kind != NW_OP_COMM_SPLIT)
				continue;
			const struct nw_seg_comm *pc = slot_of(p, o->comm_id);
			if (o->state != NW_ST_INIT_ENTERED || !pc || pc->state != NW_COMM_INIT_DONE ||
			    nw_age(p, o->enqueue_ns) <= x->timeout_ns)
				break;   /* its newest split only, and a NOCOLOR one */
			struct skey k;
			memset(&k, 0, sizeof k);
			k.parent = o->comm_id;
			k.nth = pc->splits;
			k.origin = NW_ORIGIN_SPLIT;
			struct sgroup *g;
			HASH_FIND(hh, groups, &k, sizeof k, g);
			if (!g)
				break;   /* no rank with a color waits in it: nothing to add to */
			struct nw_seg_comm *c = &nocolor[nnc++];
			c->origin = NW_ORIGIN_SPLIT;
			c->state = NW_COMM_INIT_ENTERED;
			c->init_enter_ns = o->enqueue_ns;
			c->split_color = -1;
			c->nranks = -1;
			stuck_add(x, &g->s, p, c);
			break;
		}
	}
}

void nw_rules_init(struct nw_jctx *x)
{
	struct sgroup *groups = NULL, *g, *gt;
	struct nw_comm_view *v, *vt;
	HASH_ITER(hh, x->job->comms, v, vt) {
		if (x->oom)
			break;
		if (v->origin != NW_ORIGIN_SPLIT && v->origin != NW_ORIGIN_SHRINK)
			init_view(x, v);
		else
			split_child(x, &groups, v);
	}
	struct nw_seg_comm *nocolor = calloc(x->job->nprocs + 1, sizeof *nocolor);
	if (nocolor)
		nocolor_ranks(x, groups, nocolor);
	else
		x->oom = 1;
	HASH_ITER(hh, groups, g, gt) {
		if (!x->oom)
			split_group(x, g);
		HASH_DEL(groups, g);
		free(g->s.p);
		free(g->s.c);
		free(g);
	}
	free(nocolor);
}
