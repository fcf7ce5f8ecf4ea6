/* verdicts_stacks: the verdict from stacks alone (docs/diagnosis.md,
 * "Verdicts from stacks alone"), for a job whose every process is an
 * attach snapshot: no op numbers, no communicators, only where each
 * process's main thread was.
 *
 * Each process is one of: gone (its snapshot names a process that no
 * longer runs; or a rank below the world size has no file at all),
 * waiting (its main thread waits inside NCCL or on the GPU: frameclass.c),
 * elsewhere, or without a stack. Elsewhere processes are grouped STAT-style
 * by where their stack leaves the waiting ranks' most common stack (the
 * first frame that differs, and the callers above it), so two ranks in one
 * compile step are one group whatever their innermost frames. Then:
 *
 *   - gone ranks are culprits (MISSING_RANK, "process gone"): no file at
 *     all, or a snapshot of a process that exited while others of its host
 *     still run (when none does, the job was torn down: stacks decide);
 *   - a strict minority elsewhere while the others wait: each group of it is
 *     a culprit (MISSING_RANK, "from stacks");
 *   - everybody waiting, or no minority elsewhere: UNDECIDED, saying what
 *     stacks cannot tell and what would;
 *   - nobody waiting: HEALTHY as far as stacks tell.
 *
 * In a job with segments the segments decide; the snapshots of ranks
 * without a segment add where those ranks are to the verdicts that name
 * them.
 *
 * A job of snapshots that a launch-only source joined (nw_jctx.joined: a
 * NCCL RAS report lined up with its processes) weighs the verdicts from
 * facts (the rules', on RAS's facts among them, and RAS's own: the hook
 * adds them after the stacks') against the stacks' (nw_rules_stacks_weigh,
 * docs/ras.md "One job, one verdict"): one of them names a culprit, or
 * nobody names one: they stand, each culprit's stack and the stacks'
 * verdicts as lines ("stacks agree/disagree/cannot decide"); else the
 * stacks' stand, RAS's equal counts or missing comm after a culprit's
 * summary, RAS's verdicts as lines. */
#include "decide.h"
#include "majority.h"

#include <stdlib.h>
#include <string.h>

enum sclass { S_NOSTACK, S_WAIT, S_ELSE, S_GONE, S_HOSTFN /* waits, and runs a host function */ };

struct sproc {
	struct nw_proc *p;
	int cls;                         /* enum sclass */
	const struct nw_thread_stack *t; /* its main thread, or NULL */
	const char *entry;               /* S_WAIT: the frame it waits in */
	char **where;                    /* S_ELSE: the interned frames from where it leaves the
	                                  * waiting ranks' stack outwards (the group key) */
	uint32_t nwhere;
};

struct egrp {                        /* a group of elsewhere processes */
	char **where;
	uint32_t nwhere;
	struct nw_rankset ranks;
	size_t first;                    /* index of its first process */
	size_t n;
	UT_hash_handle hh;
};

/* A fact of kind k (its words: words/stacks_words.c). */
static struct nw_fact fact(int k)
{
	struct nw_fact f = { .kind = (uint16_t)k };
	return f;
}

/* A fact of kind k about process p. */
static struct nw_fact proc_fact(int k, const struct nw_proc *p)
{
	struct nw_fact f = { .kind = (uint16_t)k, .proc = p };
	return f;
}

static void summary(struct nw_jctx *x, struct nw_vwork *w, struct nw_fact f)
{
	nw_verdict_summary_fact(x, w, &f);
}

static void evidence(struct nw_jctx *x, struct nw_vwork *w, int k)
{
	struct nw_fact f = fact(k);
	nw_verdict_evidence_fact(x, w, &f);
}

static void hint(struct nw_jctx *x, struct nw_vwork *w, int k)
{
	struct nw_fact f = fact(k);
	nw_verdict_hint_fact(x, w, &f);
}

/* The most common main-thread stack of the waiting processes (frame lists
 * are interned: one pointer per distinct stack); the first on a tie. */
struct scount {
	char **frames;
	size_t n;
	size_t first;
	UT_hash_handle hh;
};

static const struct nw_thread_stack *reference(struct nw_jctx *x, const struct sproc *sp, size_t n)
{
	struct scount *h = NULL, *c, *ct, *best = NULL;
	struct scount *pool = calloc(n + 1, sizeof *pool);
	if (!pool) {
		x->oom = 1;
		return NULL;
	}
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		if (sp[i].cls != S_WAIT)
			continue;
		HASH_FIND(hh, h, &sp[i].t->frames, sizeof sp[i].t->frames, c);
		if (!c) {
			c = &pool[used++];
			c->frames = sp[i].t->frames;
			c->first = i;
			HASH_ADD(hh, h, frames, sizeof c->frames, c);
			if (nw_hash_oom_taken()) {
				x->oom = 1;
				break;
			}
		}
		c->n++;
		if (!best || c->n > best->n || (c->n == best->n && c->first < best->first))
			best = c;
	}
	const struct nw_thread_stack *ref = best ? sp[best->first].t : NULL;
	HASH_ITER(hh, h, c, ct)
		HASH_DEL(h, c);
	free(pool);
	return ref;
}

/* Where an elsewhere stack leaves the reference: its frames from the first
 * one (from the outermost inwards) that differs, outwards. */
static void leave_point(struct nw_jctx *x, struct sproc *s, const struct nw_thread_stack *ref)
{
	const struct nw_thread_stack *t = s->t;
	uint32_t c = 0;
	if (ref)
		while (c < t->nframes && c < ref->nframes &&
		       t->frames[t->nframes - 1 - c] == ref->frames[ref->nframes - 1 - c])
			c++;
	uint32_t from = c < t->nframes ? t->nframes - 1 - c : 0;
	int oom = 0;
	s->where = nw_intern_list(x->in, t->frames + from, t->nframes - from, &oom);
	s->nwhere = s->where ? t->nframes - from : 0;
	if (oom)
		x->oom = 1;
}

/* Evidence: where each waiting process waits, grouped. */
static void evidence_waiting(struct nw_jctx *x, struct nw_vwork *w, const struct sproc *sp, size_t n)
{
	struct nw_fgroups eg = { 0 };
	for (size_t i = 0; i < n && !x->oom; i++) {
		if (sp[i].cls != S_WAIT)
			continue;
		struct nw_fact f = proc_fact(NW_F_STK_WAITS_IN, sp[i].p);
		nw_fg_add(x, &eg, sp[i].p, &f, 1, NW_NO_AGE);
	}
	nw_fg_flush(x, w, &eg, 4);
}

/* Evidence: the other processes (elsewhere, gone with a stack, no stack). */
static void evidence_others(struct nw_jctx *x, struct nw_vwork *w, const struct sproc *sp, size_t n, int cls)
{
	struct nw_fgroups eg = { 0 };
	const int kind = cls == S_GONE ? NW_F_STK_GONE_PROC : cls == S_NOSTACK ? NW_F_STK_NO_STACK : NW_F_STK_NOT_IN;
	for (size_t i = 0; i < n && !x->oom; i++) {
		if (sp[i].cls != cls)
			continue;
		struct nw_fact f = proc_fact(kind, sp[i].p);
		nw_fg_add(x, &eg, sp[i].p, &f, 1, NW_NO_AGE);
	}
	nw_fg_flush(x, w, &eg, 8);
}

/* A summary's part naming set's ranks and `others` processes without
 * rank (other: said by its label when it is the only one). */
static struct nw_fact who(struct nw_jctx *x, struct nw_vwork *w, int k, const struct nw_rankset *set, size_t others,
                          const struct nw_proc *other)
{
	struct nw_fact f = fact(k);
	f.set = nw_findings_set_others(x, w, set, others, other);
	return f;
}

static int cmp_egrp(const void *a, const void *b)
{
	const struct egrp *x = *(struct egrp *const *)a, *y = *(struct egrp *const *)b;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The distinct calls the waiting processes are in ("ncclAllReduce" vs
 * "ncclBroadcast"): more than one says they are not in one collective. */
static size_t distinct_entries(const struct sproc *sp, size_t n)
{
	size_t d = 0;
	for (size_t i = 0; i < n; i++) {
		if (sp[i].cls != S_WAIT)
			continue;
		size_t k;
		for (k = 0; k < i; k++)
			if (sp[k].cls == S_WAIT && sp[k].entry == sp[i].entry)
				break;
		d += k == i;
	}
	return d;
}

/* Every rank waits inside NCCL or on the GPU, and some of them run a CUDA
 * host function that has not returned (the driver's thread is inside the
 * application's code): what their streams queued behind it, their NCCL
 * ops too, cannot start, and their peers wait for those ops. STREAM_BLOCKED
 * with them as culprits; 0 when no waiting rank runs one. */
static int host_fn_verdict(struct nw_jctx *x, struct sproc *sp, size_t n)
{
	struct nw_rankset hf = { 0 }, wait = { 0 };
	size_t nhf = 0, hf_norank = 0, nwait = 0, wait_norank = 0;
	for (size_t i = 0; i < n; i++) {
		if (sp[i].cls != S_WAIT)
			continue;
		if (nw_stack_host_fn(sp[i].p)) {
			sp[i].cls = S_HOSTFN;
			nhf++;
			if (sp[i].p->rank >= 0) nw_set_add(x, &hf, sp[i].p->rank);
			else hf_norank++;
		} else {
			nwait++;
			if (sp[i].p->rank >= 0) nw_set_add(x, &wait, sp[i].p->rank);
			else wait_norank++;
		}
	}
	struct nw_vwork *w = nhf ? nw_verdict_new(x, NW_V_STREAM_BLOCKED, NULL, 0, 0) : NULL;
	if (w) {
		hint(x, w, NW_F_STK_HOST_FN_HINT);
		const struct nw_proc *first = NULL;   /* the first culprit: its host function is said */
		for (size_t i = 0; i < n; i++) {
			if (sp[i].cls == S_HOSTFN) {
				nw_verdict_culprit(x, w, sp[i].p);
				if (!first)
					first = sp[i].p;
			} else if (sp[i].cls == S_WAIT) {
				nw_verdict_waiting(x, w, sp[i].p);
			}
		}
		summary(x, w, who(x, w, NW_F_STK_WHO, &hf, hf_norank, first));
		summary(x, w, proc_fact(NW_F_STK_HOST_FN, first));
		if (nwait) {
			struct nw_fact f = who(x, w, NW_F_STK_ALSO_WAIT, &wait, wait_norank, NULL);
			f.n = nwait;
			summary(x, w, f);
		}
		struct nw_fgroups eg = { 0 };
		for (size_t i = 0; i < n && !x->oom; i++) {
			if (sp[i].cls != S_HOSTFN)
				continue;
			struct nw_fact f = proc_fact(NW_F_STK_HOST_FN_AT, sp[i].p);
			nw_fg_add(x, &eg, sp[i].p, &f, 1, NW_NO_AGE);
		}
		nw_fg_flush(x, w, &eg, 4);
		evidence_waiting(x, w, sp, n);
		evidence(x, w, NW_F_STK_NO_OPS);
		evidence(x, w, NW_F_STK_ONE_CAPTURE);
	}
	nw_rankset_free(&hf);
	nw_rankset_free(&wait);
	return nhf > 0;
}

/* Whether another process of the job on p's host still runs: a process
 * gone while its job goes on is gone; a job whose processes are all gone
 * was torn down (its snapshots read afterwards), and each is judged as
 * attach saw it. */
static int host_runs(const struct nw_job *job, const struct nw_proc *p)
{
	for (size_t i = 0; i < job->nprocs; i++) {
		const struct nw_proc *q = job->procs[i];
		if (q != p && q->alive == 1 && !strcmp(q->hdr.host, p->hdr.host))
			return 1;
	}
	return 0;
}

/* What the processes' stacks say, counted by class (enum sclass). */
struct tally {
	struct nw_rankset wait, gone, nostack;
	size_t nwait, nelse, ngone, nno, wait_norank, gone_norank;
};

/* Each process's class (sp[i].cls, its main thread and where it waits),
 * counted in *c; the ranks below the world size with no file (attach found
 * no process) count as gone. */
static void classify(struct nw_jctx *x, struct sproc *sp, size_t n, struct tally *c)
{
	struct nw_job *job = x->job;
	for (size_t i = 0; i < n; i++) {
		struct sproc *s = &sp[i];
		s->p = job->procs[i];
		s->t = nw_main_thread(s->p);
		if (s->t && !s->t->nframes)
			s->t = NULL;
		if ((s->p->alive == 0 && host_runs(job, s->p)) || s->p->gone_how)   /* gone_how: seen gone */
			s->cls = S_GONE;
		else if (!s->t)
			s->cls = S_NOSTACK;
		else
			s->cls = nw_stack_waits(s->t, &s->entry) != NW_FC_OTHER ? S_WAIT : S_ELSE;
		switch (s->cls) {
		case S_WAIT:
			c->nwait++;
			if (s->p->rank >= 0)
				nw_set_add(x, &c->wait, s->p->rank);
			else
				c->wait_norank++;
			break;
		case S_ELSE: c->nelse++; break;
		case S_GONE:
			c->ngone++;
			if (s->p->rank >= 0)
				nw_set_add(x, &c->gone, s->p->rank);
			else
				c->gone_norank++;
			break;
		default:
			c->nno++;
			nw_set_add(x, &c->nostack, s->p->rank);
			break;
		}
	}
	for (uint32_t k = 0; k < job->missing.n; k++)
		nw_set_add(x, &c->gone, job->missing.v[k]);
}

/* Gone ranks: culprits whatever the others do. Returns -1 when the verdict
 * could not be made. */
static int gone_verdict(struct nw_jctx *x, const struct sproc *sp, size_t n, struct tally *c)
{
	struct nw_job *job = x->job;
	struct nw_vwork *w = nw_verdict_new(x, NW_V_MISSING_RANK, NULL, 0, 0);
	if (!w)
		return -1;
	hint(x, w, NW_F_STK_GONE_HINT);
	for (size_t i = 0; i < n; i++) {
		if (sp[i].cls == S_GONE)
			nw_verdict_culprit(x, w, sp[i].p);
		else if (sp[i].cls == S_WAIT)
			nw_verdict_waiting(x, w, sp[i].p);
	}
	for (uint32_t k = 0; k < job->missing.n; k++)
		nw_set_add(x, &w->v.culprits, job->missing.v[k]);
	summary(x, w, who(x, w, NW_F_STK_WHO, &c->gone, c->gone_norank, NULL));
	summary(x, w, fact(NW_F_STK_GONE));
	if (c->nwait) {
		struct nw_fact f = who(x, w, NW_F_STK_ALSO_WAIT, &c->wait, c->wait_norank, NULL);
		f.n = c->nwait;
		summary(x, w, f);
	} else {
		summary(x, w, fact(NW_F_STK_NONE_WAITS));
	}
	if (job->missing.n) {
		struct nw_fact f = fact(NW_F_STK_MISSING);
		f.set = nw_findings_set(x, w, &job->missing);
		f.n = (uint64_t)(int64_t)job->world_size;
		if (f.set)
			nw_verdict_evidence_fact(x, w, &f);
	}
	evidence_others(x, w, sp, n, S_GONE);
	evidence_waiting(x, w, sp, n);
	evidence_others(x, w, sp, n, S_ELSE);
	evidence(x, w, NW_F_STK_NO_OPS);
	return 0;
}

/* The elsewhere processes grouped by where they leave the waiting ranks'
 * stack (ref); the groups in *groups, ordered (cmp_egrp) in the array
 * returned (NULL: out of memory), their number in *ng. */
static struct egrp **group_elsewhere(struct nw_jctx *x, struct sproc *sp, size_t n,
                                     const struct nw_thread_stack *ref, struct egrp **groups, size_t *ng)
{
	struct egrp *g, *gt;
	size_t count = 0;
	for (size_t i = 0; i < n && !x->oom; i++) {
		struct sproc *s = &sp[i];
		if (s->cls != S_ELSE)
			continue;
		leave_point(x, s, ref);
		HASH_FIND(hh, *groups, &s->where, sizeof s->where, g);
		if (!g) {
			if (!(g = calloc(1, sizeof *g))) {
				x->oom = 1;
				break;
			}
			g->where = s->where;
			g->nwhere = s->nwhere;
			g->first = i;
			HASH_ADD(hh, *groups, where, sizeof g->where, g);
			if (nw_hash_oom_taken()) {
				free(g);
				x->oom = 1;
				break;
			}
			count++;
		}
		g->n++;
		nw_set_add(x, &g->ranks, s->p->rank);
	}
	struct egrp **order = calloc(count + 1, sizeof *order);
	size_t k = 0;
	HASH_ITER(hh, *groups, g, gt) {
		if (order)
			order[k++] = g;
	}
	if (!order)
		x->oom = 1;
	else
		qsort(order, k, sizeof *order, cmp_egrp);
	*ng = k;
	return order;
}

/* How many of its frames, from the outermost, every stack of group g
 * shares (at least where they leave the waiting ranks' stack). */
static uint32_t group_common(const struct sproc *sp, size_t n, const struct egrp *g)
{
	const struct nw_thread_stack *t0 = sp[g->first].t;
	uint32_t common = t0->nframes;
	for (size_t i = g->first + 1; i < n; i++) {
		if (sp[i].cls != S_ELSE || sp[i].where != g->where)
			continue;
		uint32_t c = 0;
		while (c < common && c < sp[i].t->nframes &&
		       t0->frames[t0->nframes - 1 - c] == sp[i].t->frames[sp[i].t->nframes - 1 - c])
			c++;
		common = c;
	}
	return common < g->nwhere ? g->nwhere : common;
}

/* The summary of an elsewhere group's verdict: said as the frames the
 * group's stacks share, up to two callers above where they leave. */
static void group_summary(struct nw_jctx *x, struct nw_vwork *w, const struct sproc *sp, size_t n,
                          const struct egrp *g, const struct tally *c)
{
	uint32_t common = group_common(sp, n, g);
	uint32_t shown = common - g->nwhere + 3 < common ? common - g->nwhere + 3 : common;
	struct nw_fact f = who(x, w, NW_F_STK_WHO, &g->ranks, g->n - g->ranks.n, sp[g->first].p);
	summary(x, w, f);
	f.kind = NW_F_STK_IS_IN;
	f.proc = sp[g->first].p;
	f.n = common;
	f.seq = shown;
	summary(x, w, f);
	struct nw_fact wf = who(x, w, NW_F_STK_WHILE, &c->wait, c->wait_norank, NULL);
	wf.n = c->nwait;
	wf.seq = g->n;
	summary(x, w, wf);
}

/* One elsewhere group's verdict: its processes are the culprits, the
 * waiting ones wait. Returns -1 when the verdict could not be made. */
static int group_verdict(struct nw_jctx *x, const struct sproc *sp, size_t n, const struct egrp *g,
                         const struct tally *c)
{
	struct nw_vwork *w = nw_verdict_new(x, NW_V_MISSING_RANK, NULL, 0, 0);
	if (!w)
		return -1;
	hint(x, w, NW_F_STK_DIFFERS_HINT);
	for (size_t i = 0; i < n; i++) {
		if (sp[i].cls == S_ELSE && sp[i].where == g->where)
			nw_verdict_culprit(x, w, sp[i].p);
		else if (sp[i].cls == S_WAIT)
			nw_verdict_waiting(x, w, sp[i].p);
	}
	group_summary(x, w, sp, n, g, c);
	struct nw_fgroups eg = { 0 };
	for (size_t i = 0; i < n && !x->oom; i++) {
		if (sp[i].cls != S_ELSE || sp[i].where != g->where)
			continue;
		struct nw_fact f = proc_fact(NW_F_STK_NOT_IN, sp[i].p);
		nw_fg_add(x, &eg, sp[i].p, &f, 1, NW_NO_AGE);
	}
	nw_fg_flush(x, w, &eg, 4);
	evidence_waiting(x, w, sp, n);
	evidence(x, w, NW_F_STK_NO_OPS);
	evidence(x, w, NW_F_STK_ONE_CAPTURE);
	return 0;
}

/* A minority elsewhere while the majority waits: one verdict per group of
 * where they are. */
static void minority_verdicts(struct nw_jctx *x, struct sproc *sp, size_t n, const struct nw_thread_stack *ref,
                              const struct tally *c)
{
	struct egrp *groups = NULL, *g, *gt;
	size_t ng = 0;
	struct egrp **order = group_elsewhere(x, sp, n, ref, &groups, &ng);
	for (size_t j = 0; order && j < ng && !x->oom; j++)
		if (group_verdict(x, sp, n, order[j], c) < 0)
			break;
	free(order);
	HASH_ITER(hh, groups, g, gt) {
		HASH_DEL(groups, g);
		nw_rankset_free(&g->ranks);
		free(g);
	}
}

/* Everybody waits (and nobody is gone), or no minority stands out.
 * Returns -1 when the verdict could not be made. */
static int undecided_verdict(struct nw_jctx *x, const struct sproc *sp, size_t n, const struct tally *c)
{
	struct nw_vwork *w = nw_verdict_new(x, NW_V_UNDECIDED, NULL, 0, 0);
	if (!w)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (sp[i].cls == S_WAIT)
			nw_verdict_waiting(x, w, sp[i].p);
	struct nw_fact f = who(x, w, c->nelse ? NW_F_STK_SOME_WAIT : NW_F_STK_ALL_WAIT, &c->wait, c->wait_norank, NULL);
	f.n = c->nelse ? c->nwait : c->nno != 0;
	f.seq = c->nelse;
	summary(x, w, f);
	if (distinct_entries(sp, n) > 1)
		evidence(x, w, NW_F_STK_CALLS_DIFFER);
	evidence_waiting(x, w, sp, n);
	evidence_others(x, w, sp, n, S_ELSE);
	evidence(x, w, NW_F_STK_NO_OPS);
	evidence(x, w, NW_F_STK_WOULD_DECIDE);
	return 0;
}

/* Nobody waits in NCCL: nothing from stacks says the job is stuck.
 * Returns -1 when the verdict could not be made. */
static int quiet_verdict(struct nw_jctx *x, const struct sproc *sp, size_t n, const struct tally *c)
{
	struct nw_vwork *w = nw_verdict_new(x, c->nelse ? NW_V_HEALTHY : NW_V_UNDECIDED, NULL, 0, 0);
	if (!w)
		return -1;
	struct nw_fact f = fact(c->nelse ? NW_F_STK_QUIET : NW_F_STK_NO_STACKS);
	f.n = n;
	summary(x, w, f);
	evidence_others(x, w, sp, n, S_ELSE);
	return 0;
}

/* Said once, on the first verdict made here (first_vw): the processes
 * without a stack, and those that ended before attach read them. */
static void first_verdict_notes(struct nw_jctx *x, const struct sproc *sp, size_t n, const struct tally *c,
                                size_t first_vw)
{
	size_t ended = 0;
	for (size_t i = 0; i < n; i++)
		ended += sp[i].p->alive == 0 && sp[i].cls != S_GONE;
	if (c->nno && x->nvw > first_vw && !x->oom)
		evidence_others(x, x->vw[first_vw], sp, n, S_NOSTACK);
	if (ended && x->nvw > first_vw && !x->oom) {
		struct nw_fact f = fact(NW_F_STK_ENDED);
		f.n = ended;
		nw_verdict_evidence_fact(x, x->vw[first_vw], &f);
	}
}

/* A job of snapshots only (no segments): the verdicts its stacks allow.
 * Gone ranks are culprits; a minority elsewhere while the majority waits
 * in NCCL (majority.h: the waiting ones are the program as written) is
 * blamed by where it is; else a host function that holds the streams;
 * else nothing stands out. */
static void stacks_only(struct nw_jctx *x)
{
	size_t n = x->job->nprocs;
	struct sproc *sp = calloc(n + 1, sizeof *sp);
	if (!sp) {
		x->oom = 1;
		return;
	}
	struct tally c = { 0 };
	classify(x, sp, n, &c);
	const struct nw_thread_stack *ref = reference(x, sp, n);
	const int anygone = c.gone.n || c.gone_norank;
	const size_t first_vw = x->nvw;
	uint32_t votes[2] = { (uint32_t)c.nelse, (uint32_t)c.nwait };
	if (anygone && gone_verdict(x, sp, n, &c) < 0)
		goto out;
	if (c.nelse && nw_majority(votes, 2) == 1) {
		minority_verdicts(x, sp, n, ref, &c);
	} else if (c.nwait && !c.nelse && !anygone && host_fn_verdict(x, sp, n)) {
		/* STREAM_BLOCKED: a host function holds the streams */
	} else if (c.nwait && (c.nelse || !anygone)) {
		if (undecided_verdict(x, sp, n, &c) < 0)
			goto out;
	} else if (!c.nwait && !anygone) {
		if (quiet_verdict(x, sp, n, &c) < 0)
			goto out;
	}
	first_verdict_notes(x, sp, n, &c, first_vw);
out:
	nw_rankset_free(&c.wait);
	nw_rankset_free(&c.gone);
	nw_rankset_free(&c.nostack);
	free(sp);
}

/* A job with segments: what the snapshots of ranks without a segment show,
 * on each verdict that names them (culprits, waiting or unknown). A verdict
 * that blames no rank, whose unknown ranks (no segment) include some whose
 * snapshot is not inside NCCL (or whose process is gone) while others wait,
 * takes those as its culprits "from stacks". */
static void annotate(struct nw_jctx *x)
{
	for (size_t i = 0; i < x->nvw && !x->oom; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped)
			continue;
		struct nw_fgroups eg = { 0 };
		struct nw_rankset promote = { 0 };
		const struct nw_proc *first = NULL;   /* the first promoted process still running */
		const struct nw_rankset *sets[3] = { &w->v.culprits, &w->v.unknown, &w->v.waiting };
		for (int s = 0; s < 3; s++) {
			for (uint32_t k = 0; k < sets[s]->n && !x->oom; k++) {
				size_t at = nw_proc_by_rank(x->job, sets[s]->v[k]);
				if (at >= x->job->nprocs || (x->job->procs[at]->caps & NW_CAP_OPNUMS))
					continue;
				const struct nw_proc *p = x->job->procs[at];
				const struct nw_thread_stack *t = nw_main_thread(p);
				const char *e = NULL;
				int waits = t && t->nframes && nw_stack_waits(t, &e) != NW_FC_OTHER;
				struct nw_fact f = proc_fact(NW_F_STK_ATTACHED, p);
				nw_fg_add(x, &eg, p, &f, 1, NW_NO_AGE);
				if (s == 1 && !w->v.culprits.n && w->v.waiting.n && w->v.kind != NW_V_HEALTHY &&
				    (p->alive == 0 || (t && t->nframes && !waits))) {
					nw_set_add(x, &promote, p->rank);
					if (!first && p->alive != 0)
						first = p;
				}
			}
		}
		nw_fg_flush(x, w, &eg, 8);
		if (promote.n && !x->oom) {
			struct nw_rankset left = { 0 };
			for (uint32_t k = 0; k < w->v.unknown.n; k++)
				if (!nw_rankset_has(&promote, w->v.unknown.v[k]))
					nw_set_add(x, &left, w->v.unknown.v[k]);
			nw_rankset_free(&w->v.unknown);
			w->v.unknown = left;
			for (uint32_t k = 0; k < promote.n; k++)
				nw_set_add(x, &w->v.culprits, promote.v[k]);
			/* appended to the summary, findings or words (nw_verdict_summary_fact keeps a
			 * summary that is words as its first part) */
			struct nw_fact f = fact(NW_F_STK_PROMOTED);
			f.set = nw_findings_set(x, w, &promote);
			f.proc = promote.n == 1 ? first : NULL;
			if (f.set)
				nw_verdict_summary_fact(x, w, &f);
		}
		nw_rankset_free(&promote);
	}
}

void nw_rules_stacks(struct nw_jctx *x)
{
	size_t snaps = 0;                  /* processes known by their stacks alone */
	for (size_t i = 0; i < x->job->nprocs; i++)
		snaps += (x->job->procs[i]->caps & (NW_CAP_OPNUMS | NW_CAP_STACKS)) == NW_CAP_STACKS;
	if (!snaps)
		return;
	if (snaps == x->job->nprocs)
		stacks_only(x);
	else
		annotate(x);
}

/* ---- beside a launch-only source (x->joined: a NCCL RAS report lined up
 * with a job of snapshots): the verdicts from facts weighed against the
 * stacks' (docs/ras.md, "One job, one verdict") ---- */

/* The verdicts from facts: the rules' (vw[0..nfacts)) and the joined
 * source's own (vw[nstacks..)); the stacks' lie between. */
static int from_facts(const struct nw_jctx *x, size_t i)
{
	return i < x->nfacts || i >= x->nstacks;
}

static int names_culprit(int kind)
{
	return kind != NW_V_UNDECIDED && kind != NW_V_HEALTHY && kind != NW_V_IDLE;
}

static int same_set(const struct nw_rankset *a, const struct nw_rankset *b)
{
	return a->n == b->n && (!a->n || !memcmp(a->v, b->v, a->n * sizeof *a->v));
}

/* What the verdicts standing say: their culprits, and whether the source
 * decided (a culprit from facts), saw equal counts or no comm, or saw
 * nothing wrong; whether the stacks named a culprit (a process without
 * a rank is named by its pid: its verdict has no culprit rank, but it
 * names one). */
struct weigh {
	struct nw_rankset fact_c, stack_c;
	int decided, equal, nocomm, healthy, stack_named;
};

static void weigh_tally(struct nw_jctx *x, struct weigh *g)
{
	for (size_t i = 0; i < x->nvw; i++) {
		const struct nw_vwork *w = x->vw[i];
		const struct nw_verdict *v = &w->v;
		if (w->dropped)
			continue;
		struct nw_rankset *c = from_facts(x, i) ? &g->fact_c : &g->stack_c;
		if (!from_facts(x, i)) {
			g->stack_named |= names_culprit(v->kind);
		} else {
			g->equal |= w->launch_only && v->kind == NW_V_TRANSPORT_STALL;
			g->nocomm |= w->launch_only && v->kind == NW_V_INIT_STALL && !v->comm_id;
			g->healthy |= w->launch_only && v->kind == NW_V_HEALTHY;
			if (!v->culprits.n || v->kind == NW_V_HEALTHY)
				continue;
			g->decided = 1;
		}
		for (uint32_t k = 0; k < v->culprits.n; k++)
			nw_set_add(x, c, v->culprits.v[k]);
	}
}

/* Where each culprit of w is, from its stack (RAS_FOLD_STACK): no
 * snapshot, no stack, or its main thread. */
static void culprit_stacks(struct nw_jctx *x, struct nw_vwork *w)
{
	for (uint32_t k = 0; k < w->v.culprits.n && k < 16 && !x->oom; k++) {
		int32_t r = w->v.culprits.v[k];
		struct nw_fact f = { .kind = NW_F_RAS_FOLD_STACK, .n = (uint64_t)(uint32_t)r };
		size_t at = nw_proc_by_rank(x->job, r);
		const struct nw_proc *p = at < x->job->nprocs ? x->job->procs[at] : NULL;
		const struct nw_thread_stack *t = p ? nw_main_thread(p) : NULL;
		int framed = t && t->nframes;
		/* no process, or the adapter's of a rank its source saw gone */
		if (!p || (!framed && p->gone_how && !p->nthreads && !p->snapshot))
			f.seq = 0;
		else
			f.seq = framed ? 2 : 1;
		f.proc = f.seq ? p : NULL;
		nw_verdict_evidence_fact(x, w, &f);
	}
}

/* The stacks' verdicts as lines of w, a verdict from facts: whether they
 * agree (RAS_FOLD_STACKS), after where w's culprits are. */
static void stacks_lines(struct nw_jctx *x, const struct weigh *g, struct nw_vwork *w)
{
	culprit_stacks(x, w);
	for (size_t k = x->nfacts; k < x->nstacks; k++) {
		const struct nw_vwork *s = x->vw[k];
		if (s->dropped)
			continue;
		int undecided = !s->v.culprits.n && s->v.kind == NW_V_UNDECIDED;
		/* 0 agree, 1 cannot decide, 2 disagree */
		uint64_t how = undecided && !w->v.culprits.n ? 0
		             : undecided                      ? 1
		             : same_set(&g->stack_c, &g->fact_c) ? 0 : 2;
		struct nw_fact head = { .kind = NW_F_RAS_FOLD_STACKS, .n = (uint64_t)s->v.kind, .seq = how };
		nw_verdict_evidence_wrap_fact(x, w, &head, s);
	}
}

/* The verdicts from facts stand (the source's HEALTHY says nothing
 * then); the stacks' fold into them. */
static void facts_stand(struct nw_jctx *x, const struct weigh *g)
{
	for (size_t i = 0; i < x->nvw && !x->oom; i++) {
		struct nw_vwork *w = x->vw[i];
		if (!from_facts(x, i) || w->dropped)
			continue;
		if (i >= x->nstacks && w->v.kind == NW_V_HEALTHY)
			w->dropped = 1;
		else
			stacks_lines(x, g, w);
	}
	for (size_t k = x->nfacts; k < x->nstacks; k++)
		x->vw[k]->dropped = 1;
}

/* The source names nobody: the stacks' verdicts stand, with what it saw
 * (its equal counts or no comm after a culprit's summary; its verdicts
 * as lines, RAS_FOLD_SAYS). */
static void stacks_stand(struct nw_jctx *x, const struct weigh *g)
{
	for (size_t i = x->nfacts; i < x->nstacks && !x->oom; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped)
			continue;
		if (names_culprit(w->v.kind) && (g->equal || g->nocomm)) {
			struct nw_fact eq = { .kind = NW_F_RAS_FOLD_EQUAL, .n = !g->equal };
			nw_verdict_summary_fact(x, w, &eq);
		}
		struct nw_fact head = { .kind = NW_F_RAS_FOLD_SAYS, .name = x->joined };
		for (size_t k = 0; k < x->nvw; k++)
			if (from_facts(x, k) && x->vw[k]->launch_only && !x->vw[k]->dropped) {
				head.n = (uint64_t)x->vw[k]->v.kind;
				nw_verdict_evidence_wrap_fact(x, w, &head, x->vw[k]);
			}
	}
	for (size_t k = 0; k < x->nvw; k++)
		if (from_facts(x, k) && x->vw[k]->launch_only)
			x->vw[k]->dropped = 1;
}

void nw_rules_stacks_weigh(struct nw_jctx *x)
{
	if (!x->joined)
		return;
	for (size_t i = 0; i < x->job->nprocs; i++)
		if (x->job->procs[i]->caps & NW_CAP_OPNUMS)
			return;   /* segments decide: nw_fold_launch_only */
	struct weigh g = { 0 };
	weigh_tally(x, &g);
	if (g.decided || (!g.stack_named && !g.healthy))
		facts_stand(x, &g);
	else
		stacks_stand(x, &g);
	nw_rankset_free(&g.fact_c);
	nw_rankset_free(&g.stack_c);
}
