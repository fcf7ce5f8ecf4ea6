/* findings: a verdict's summary, evidence lines and hint as facts
 * (facts.h), for words/ to say; the ways a pass wraps another verdict's
 * summary without reading its words; evidence grouped across ranks by
 * fact. decide's only way to say anything: no words here. */
#include "decide.h"

#include <stdlib.h>
#include <string.h>

static struct nw_findings *found_of(struct nw_jctx *x, struct nw_vwork *w)
{
	if (!w->v.found && !(w->v.found = calloc(1, sizeof *w->v.found)))
		x->oom = 1;
	return w->v.found;
}

/* Appends a part (a copy of p: its text duplicated); -1 out of memory. */
static int line_add(struct nw_line *l, const struct nw_part *p)
{
	struct nw_part *n = realloc(l->p, (l->n + 1) * sizeof *n);
	if (!n)
		return -1;
	l->p = n;
	n[l->n] = *p;
	if (p->text && !(n[l->n].text = strdup(p->text)))
		return -1;
	if (p->f.set)
		((struct nw_fset *)p->f.set)->refs++;
	l->n++;
	return 0;
}

static int line_add_text(struct nw_line *l, const char *text)
{
	struct nw_part p = { .text = (char *)text };
	return line_add(l, &p);
}

static int line_add_fact(struct nw_line *l, const struct nw_fact *f)
{
	struct nw_part p = { .f = *f };
	return line_add(l, &p);
}

/* A new evidence line of w with no words yet (evidence[i] NULL): its
 * findings' line, NULL out of memory. */
static struct nw_line *evidence_line(struct nw_jctx *x, struct nw_vwork *w)
{
	struct nw_findings *fd = found_of(x, w);
	if (!fd)
		return NULL;
	size_t i = w->v.nevidence;
	char **e = realloc(w->v.evidence, (i + 1) * sizeof *e);
	if (!e) {
		x->oom = 1;
		return NULL;
	}
	w->v.evidence = e;
	struct nw_line *l = realloc(fd->evidence, (i + 1) * sizeof *l);
	if (!l) {
		x->oom = 1;
		return NULL;
	}
	fd->evidence = l;
	memset(l + fd->nev, 0, (i + 1 - fd->nev) * sizeof *l);   /* lines of words between */
	fd->nev = i + 1;
	e[i] = NULL;
	w->v.nevidence++;
	return &l[i];
}

void nw_verdict_summary_fact(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *f)
{
	struct nw_findings *fd = found_of(x, w);
	if (!fd)
		return;
	/* a summary that was words so far stays, as the first part */
	if (!fd->summary.n && w->v.summary && w->v.summary[0] && line_add_text(&fd->summary, w->v.summary))
		x->oom = 1;
	if (line_add_fact(&fd->summary, f))
		x->oom = 1;
}

void nw_verdict_evidence_fact(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *f)
{
	struct nw_line *l = evidence_line(x, w);
	if (l && line_add_fact(l, f))
		x->oom = 1;
}

void nw_verdict_evidence_facts(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *f, size_t n)
{
	struct nw_line *l = evidence_line(x, w);
	for (size_t i = 0; l && i < n && !x->oom; i++)
		if (line_add_fact(l, &f[i]))
			x->oom = 1;
}

void nw_verdict_hint_fact(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *f)
{
	struct nw_findings *fd = found_of(x, w);
	if (!fd)
		return;
	nw_line_free(&fd->hint);
	if (line_add_fact(&fd->hint, f))
		x->oom = 1;
	w->v.hint = NULL;   /* words/ says it, unless a later pass sets another */
}

/* Whether from's summary is findings. */
static const struct nw_line *summary_parts(const struct nw_vwork *from)
{
	return from->v.found && from->v.found->summary.n ? &from->v.found->summary : NULL;
}

/* Appends from's summary to l: its parts, or the words it came with
 * when it has no findings; -1 out of memory. */
static int line_add_summary(struct nw_line *l, const struct nw_vwork *from)
{
	const struct nw_line *s = summary_parts(from);
	if (!s)
		return from->v.summary && from->v.summary[0] ? line_add_text(l, from->v.summary) : 0;
	for (size_t i = 0; i < s->n; i++)
		if (line_add(l, &s->p[i]))
			return -1;
	return 0;
}

void nw_verdict_evidence_wrap_fact(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *head,
                                   const struct nw_vwork *from)
{
	struct nw_line *l = evidence_line(x, w);
	if (l && (line_add_fact(l, head) || line_add_summary(l, from)))
		x->oom = 1;
}

void nw_verdict_summary_prefix_fact(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *head)
{
	struct nw_findings *fd = found_of(x, w);
	if (!fd)
		return;
	struct nw_line n = { 0 };
	if (line_add_fact(&n, head) || line_add_summary(&n, w)) {
		nw_line_free(&n);
		x->oom = 1;
		return;
	}
	nw_line_free(&fd->summary);
	fd->summary = n;
}

void nw_verdict_summary_wrap(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *open,
                             const struct nw_fact *close)
{
	struct nw_findings *fd = found_of(x, w);
	if (!fd)
		return;
	struct nw_line n = { 0 };
	int oom = line_add_fact(&n, open);
	if (fd->summary.n)
		for (size_t i = 0; i < fd->summary.n && !oom; i++)
			oom = line_add(&n, &fd->summary.p[i]);
	else if (!oom && w->v.summary && w->v.summary[0])
		oom = line_add_text(&n, w->v.summary);
	if (oom || line_add_fact(&n, close)) {
		nw_line_free(&n);
		x->oom = 1;
		return;
	}
	nw_line_free(&fd->summary);
	fd->summary = n;
}

/* ---- sets of processes a fact names ---- */

static struct nw_fset *fset_new(struct nw_jctx *x, struct nw_vwork *w)
{
	struct nw_findings *fd = found_of(x, w);
	struct nw_fset *s = fd ? calloc(1, sizeof *s) : NULL;
	if (!s) {
		x->oom = 1;
		return NULL;
	}
	s->age_lo = NW_NO_AGE;
	s->refs = 1;
	s->next = fd->sets;
	fd->sets = s;
	return s;
}

const struct nw_fset *nw_findings_set(struct nw_jctx *x, struct nw_vwork *w, const struct nw_rankset *r)
{
	struct nw_fset *s = fset_new(x, w);
	for (uint32_t i = 0; s && r && i < r->n; i++)
		nw_set_add(x, &s->ranks, r->v[i]);
	return s;
}

const struct nw_fset *nw_findings_set_others(struct nw_jctx *x, struct nw_vwork *w, const struct nw_rankset *r,
                                             size_t others, const struct nw_proc *other)
{
	struct nw_fset *s = (struct nw_fset *)nw_findings_set(x, w, r);
	if (s) {
		s->others = others;
		s->other = other;
	}
	return s;
}

const struct nw_fset *nw_findings_aged(struct nw_jctx *x, struct nw_vwork *w, uint64_t lo, uint64_t hi)
{
	struct nw_fset *s = fset_new(x, w);
	if (s) {
		s->age_lo = lo;
		s->age_hi = hi;
	}
	return s;
}

const struct nw_fset *nw_findings_host(struct nw_jctx *x, struct nw_vwork *w, const char *host)
{
	struct nw_fset *s = fset_new(x, w);
	if (s && !(s->host = strdup(host))) {
		x->oom = 1;
		return NULL;
	}
	return s;
}

static void fset_add(struct nw_jctx *x, struct nw_fset *s, const struct nw_proc *p, uint64_t age)
{
	if (age != NW_NO_AGE) {
		if (age < s->age_lo)
			s->age_lo = age;
		if (age > s->age_hi)
			s->age_hi = age;
	}
	if (p->rank >= 0)
		nw_set_add(x, &s->ranks, p->rank);
	else if (s->others++ == 0)
		s->other = p;
}

/* ---- where a process is, as a fact ---- */

/* What the other ranks made of p's collective `op` that its records leave
 * open because p ended (nw_where's "state as it ended"): 0 nothing to
 * say, 1 all completed it, 2 some did, 3 none did. */
static unsigned ended_code(struct nw_jctx *x, const struct nw_proc *p, const struct nw_seg_op *op)
{
	if (!x->sink || !x->sink[p->job_index] || !nw_op_pending(op->state) || !NW_OP_IS_COLL(op->kind))
		return 0;
	const struct nw_comm_view *v = nw_view_of(x, op->comm_id);
	if (!v)
		return 0;
	uint32_t peers = 0, done = 0;
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_member *m = &v->members[r];
		if (!m->proc || m->proc == p)
			continue;
		peers++;
		done += m->comm->coll_completed >= op->seq;
	}
	return !peers ? 0 : done == peers ? 1 : done ? 2 : 3;
}

uint64_t nw_fact_where(struct nw_jctx *x, const struct nw_proc *p, int with_stack, struct nw_fact *f)
{
	uint64_t age = NW_NO_AGE;
	const struct nw_seg_op *stuck = NULL, *last = NULL;
	for (size_t i = 0; i < p->nops; i++) {
		const struct nw_seg_op *op = &p->ops[i];
		if (op->state == NW_ST_DISCARDED)
			continue;
		int open = nw_op_pending(op->state) || op->state == NW_ST_INIT_ENTERED;
		if (open && !stuck && nw_age(p, op->enqueue_ns) > x->timeout_ns &&
		    (op->comm_id || op->kind == NW_OP_GROUP_END))
			stuck = op;
		if (op->comm_id)
			last = op;
	}
	memset(f, 0, sizeof *f);
	f->kind = NW_F_WHERE;
	f->proc = p;
	f->job = x->job;
	f->op = stuck ? stuck : last;
	f->view = f->op ? nw_view_of(x, f->op->comm_id) : NULL;
	if (stuck) {
		f->n |= NW_WH_STUCK;
		age = nw_age(p, stuck->enqueue_ns);
	} else {
		uint64_t idle = nw_age(p, p->last_activity_ns);
		if (idle > x->timeout_ns) {
			f->n |= NW_WH_IDLE;
			age = idle;
		}
	}
	if (f->op)
		f->n |= (uint64_t)ended_code(x, p, f->op) << NW_WH_ENDED_SHIFT;
	if (with_stack)
		f->n |= NW_WH_STACK;
	return age;
}

/* ---- evidence grouped across ranks by fact ---- */

struct nw_fgroup {
	struct nw_fact *f;
	size_t nf;
	struct nw_fset *set;
};

/* Two ops of two processes said alike: kind, number, comm, state, and a
 * send/receive's peer. */
static int op_same(const struct nw_seg_op *a, const struct nw_seg_op *b)
{
	if (!a || !b)
		return a == b;
	return a->kind == b->kind && a->seq == b->seq && a->comm_id == b->comm_id && a->state == b->state &&
	       (!NW_OP_IS_P2P(a->kind) || a->root == b->root);
}

static int str_same(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

/* Two main threads said alike (where_words.c: a Python thread's innermost
 * application frames, else up to 8 frames). */
static int stack_same(const struct nw_thread_stack *a, const struct nw_thread_stack *b, int native)
{
	if (!a || !b)
		return a == b;
	int pa = a->npy && !native, pb = b->npy && !native;
	if (pa != pb)
		return 0;
	uint32_t from_a = 0, from_b = 0, na, nb, max = 8;
	if (pa) {
		from_a = a->py_app, na = a->py_at + a->npy - a->py_app;
		from_b = b->py_app, nb = b->py_at + b->npy - b->py_app;
		max = 4;
	} else {
		na = a->nframes, nb = b->nframes;
		if (!na && !nb)
			return (a->flags & NW_THR_NO_REPLY) == (b->flags & NW_THR_NO_REPLY);
	}
	if ((na > max) != (nb > max) || (na < max || nb < max ? na != nb : 0))
		return 0;
	for (uint32_t i = 0; i < na && i < max; i++)
		if (strcmp(a->frames[from_a + i], b->frames[from_b + i]))
			return 0;
	return 1;
}

/* How a process ended, as nw_where says it: 0 nothing, 1 exited, 2 gone,
 * 3 exiting; 4 more with an exit status. */
static int life_code(const struct nw_proc *p)
{
	int exited = (p->hdr.flags & NW_SEG_F_EXITED) != 0;
	int c = p->alive == 0 ? (exited ? 1 : 2) : exited ? (p->alive > 0 ? 3 : 1) : 0;
	return c + (exited && (p->hdr.flags & NW_SEG_F_EXIT_STATUS) ? 4 : 0);
}

static int life_same(const struct nw_proc *a, const struct nw_proc *b)
{
	int c = life_code(a);
	return c == life_code(b) && (c < 4 || a->hdr.exit_status == b->hdr.exit_status);
}

/* A main thread with frames, or NULL. */
static const struct nw_thread_stack *framed_main(const struct nw_proc *p)
{
	const struct nw_thread_stack *t = nw_main_thread(p);
	return t && t->nframes ? t : NULL;
}

/* Two threads that wait (nw_stack_waits) or not alike, in the same frame. */
static int waits_same(const struct nw_thread_stack *a, const struct nw_thread_stack *b)
{
	const char *ea = NULL, *eb = NULL;
	int wa = nw_stack_waits(a, &ea) != NW_FC_OTHER, wb = nw_stack_waits(b, &eb) != NW_FC_OTHER;
	return wa == wb && (!wa || str_same(ea, eb));   /* a thread that waits has its entry */
}

/* The facts of verdicts_stacks.c that say what their process shows: its
 * pid and host, its snapshot, the frames of its main or host-function
 * thread (as nw_buf_frames says them, up to 8). */
static int says_its_stack(int kind)
{
	return kind == NW_F_STK_WAITS_IN || kind == NW_F_STK_NOT_IN || kind == NW_F_STK_GONE_PROC ||
	       kind == NW_F_STK_NO_STACK || kind == NW_F_STK_HOST_FN_AT || kind == NW_F_STK_ATTACHED;
}

/* Two such facts (of one kind) on two processes said alike. */
static int stacks_fact_same(const struct nw_fact *a, const struct nw_fact *b)
{
	const struct nw_proc *p = a->proc, *q = b->proc;
	const struct nw_thread_stack *ta = framed_main(p), *tb = framed_main(q);
	switch (a->kind) {
	case NW_F_STK_WAITS_IN:
		return waits_same(ta, tb) && stack_same(ta, tb, 1);
	case NW_F_STK_NOT_IN:
		return stack_same(ta, tb, 1);
	case NW_F_STK_GONE_PROC:
		return p->hdr.pid == q->hdr.pid && !strcmp(p->hdr.host, q->hdr.host) && !ta == !tb &&
		       (!ta || stack_same(ta, tb, 1));
	case NW_F_STK_NO_STACK:
		return p->rank == q->rank && (p->rank >= 0 || (p->hdr.pid == q->hdr.pid && !strcmp(p->hdr.host, q->hdr.host)));
	case NW_F_STK_HOST_FN_AT: {
		const struct nw_thread_stack *ha = nw_stack_host_fn(p), *hb = nw_stack_host_fn(q);
		return ha->tid == hb->tid && !strcmp(ha->name, hb->name) && stack_same(ha, hb, 1);
	}
	case NW_F_STK_ATTACHED:
		return (p->alive == 0) == (q->alive == 0) && !ta == !tb &&
		       (!ta || (waits_same(ta, tb) && stack_same(ta, tb, 1)));
	default:
		return 1;
	}
}

/* Two facts of two processes that say the same: the same kind and fields
 * but the process (ops alike: op_same); a WHERE fact also says what the
 * process itself shows (its op's call site, how it ended, its stack), a
 * fact of verdicts_stacks.c its stacks (says_its_stack); a MISMATCH's
 * MM_STATE only its op's state and call site; TS_VERSIONS its process's
 * versions and host; TS_IN, naming its op as its verdict's summary does
 * (one verdict's lines: the same op), only the state. */
static int fact_same(const struct nw_fact *a, const struct nw_fact *b)
{
	if (a->kind != b->kind || a->n != b->n || a->view != b->view ||
	    a->job != b->job || a->set != b->set || a->seq != b->seq || a->op_kind != b->op_kind ||
	    (a->comm ? a->comm->comm_id : 0) != (b->comm ? b->comm->comm_id : 0) ||
	    (a->acomm ? a->acomm->comm_id : 0) != (b->acomm ? b->acomm->comm_id : 0) ||
	    !str_same(a->name, b->name))
		return 0;
	if (a->kind == NW_F_TS_VERSIONS)   /* says its process's versions and host */
		return a->proc->hdr.nccl_version == b->proc->hdr.nccl_version &&
		       a->proc->hdr.cuda_driver_version == b->proc->hdr.cuda_driver_version &&
		       !strncmp(a->proc->hdr.host, b->proc->hdr.host, sizeof a->proc->hdr.host);
	if (a->kind == NW_F_TS_IN && a->n == NW_FACT_OTHER)   /* names its op as the verdict does: its state */
		return a->op->state == b->op->state;
	if (a->kind == NW_F_MM_STATE)   /* says its op's state and call site, not its kind (its group's) */
		return a->op->state == b->op->state && (!a->n || str_same(nw_op_site(a->proc, a->op), nw_op_site(b->proc, b->op)));
	if (!op_same(a->op, b->op))
		return 0;
	if (a->kind == NW_F_SB_STREAM && a->op && a->op->kind == NW_OP_GRAPH_LAUNCH)   /* says its graph's first op */
		return a->op->redop == b->op->redop && a->op->root == b->op->root;
	if (a->kind == NW_F_REPLAY_IN) {   /* it also says where the launch is inside its replay */
		unsigned sa = 0, sb = 0;
		return a->op->count == b->op->count &&
		       nw_graph_replay_at(a->op, &sa) == nw_graph_replay_at(b->op, &sb) && sa == sb;
	}
	if (says_its_stack(a->kind))
		return stacks_fact_same(a, b);
	if (a->kind != NW_F_WHERE)
		return 1;
	if (a->op && !str_same(nw_op_site(a->proc, a->op), nw_op_site(b->proc, b->op)))
		return 0;
	if (!life_same(a->proc, b->proc))
		return 0;
	return !(a->n & NW_WH_STACK) ||
	       stack_same(nw_main_thread(a->proc), nw_main_thread(b->proc), a->job && a->job->native);
}

void nw_fg_add(struct nw_jctx *x, struct nw_fgroups *eg, const struct nw_proc *p, const struct nw_fact *f,
               size_t nf, uint64_t age)
{
	struct nw_fgroup *g = NULL;
	for (size_t i = 0; i < eg->n && !g; i++) {
		struct nw_fgroup *c = &eg->g[i];
		int same = c->nf == nf;
		for (size_t k = 0; same && k < nf; k++)
			same = fact_same(&c->f[k], &f[k]);
		if (same)
			g = c;
	}
	if (!g) {
		struct nw_fgroup *n = realloc(eg->g, (eg->n + 1) * sizeof *n);
		if (!n) {
			x->oom = 1;
			return;
		}
		eg->g = n;
		g = &n[eg->n];
		memset(g, 0, sizeof *g);
		if (!(g->set = calloc(1, sizeof *g->set)) || !(g->f = malloc(nf * sizeof *g->f))) {
			free(g->set);
			x->oom = 1;
			return;
		}
		g->set->age_lo = NW_NO_AGE;
		g->set->refs = 1;
		memcpy(g->f, f, nf * sizeof *f);
		g->nf = nf;
		eg->n++;
	}
	fset_add(x, g->set, p, age);
}

void nw_fg_flush(struct nw_jctx *x, struct nw_vwork *w, struct nw_fgroups *eg, size_t max)
{
	struct nw_findings *fd = found_of(x, w);
	for (size_t i = 0; i < eg->n; i++) {
		struct nw_fgroup *g = &eg->g[i];
		struct nw_line *l = fd && i < max ? evidence_line(x, w) : NULL;
		if (l) {
			struct nw_fact head = { .kind = NW_F_EG_HEAD, .set = g->set };
			g->set->next = fd->sets;   /* the findings own it now */
			fd->sets = g->set;
			g->set = NULL;
			if (line_add_fact(l, &head))
				x->oom = 1;
			for (size_t k = 0; k < g->nf && !x->oom; k++)
				if (line_add_fact(l, &g->f[k]))
					x->oom = 1;
		}
		if (g->set)
			nw_fsets_free(g->set);
		free(g->f);
	}
	if (eg->n > max) {
		struct nw_fact more = { .kind = NW_F_EG_MORE, .n = eg->n - max };
		nw_verdict_evidence_fact(x, w, &more);
	}
	free(eg->g);
	memset(eg, 0, sizeof *eg);
}

void nw_fact_where_component(struct nw_jctx *x, struct nw_vwork *w, uint32_t scc)
{
	struct nw_fgroups eg = { 0 };
	for (uint32_t n = 0; n < x->g.nprocs && !x->oom; n++) {
		if (x->g.scc[n] != scc)
			continue;
		struct nw_fact f;
		const struct nw_proc *p = x->job->procs[n];
		uint64_t age = nw_fact_where(x, p, 1, &f);
		nw_fg_add(x, &eg, p, &f, 1, age);
	}
	nw_fg_flush(x, w, &eg, 8);
}

/* nw_view_unknown with facts: members of v with no file go to w's
 * unknown ranks when v numbers its ranks like the world, else one
 * evidence line (COMM_NOFILE) names their comm ranks. */
void nw_view_unknown_fact(struct nw_jctx *x, const struct nw_comm_view *v, struct nw_vwork *w)
{
	int identity = nw_view_identity(v);
	struct nw_rankset cranks = { 0 };
	for (int32_t r = 0; r < v->nranks; r++) {
		if (v->members[r].proc)
			continue;
		if (identity)
			nw_set_add(x, &w->v.unknown, r);
		else
			nw_set_add(x, &cranks, r);
	}
	if (cranks.n) {
		struct nw_fact f = { .kind = NW_F_COMM_NOFILE, .view = v, .set = nw_findings_set(x, w, &cranks) };
		if (f.set)
			nw_verdict_evidence_fact(x, w, &f);
	}
	nw_rankset_free(&cranks);
}
