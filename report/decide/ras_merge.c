/* ras_merge: a saved NCCL RAS report and the snapshots (or segments) of
 * the same processes made ONE job with one verdict set (docs/ras.md, "One
 * job, one verdict").
 *
 * Which processes are the report's ranks is the adapter's lining up
 * (sources/ras/ras_lineup.c: host and pid; the rank, world size, job and
 * capability bits each lined-up process takes); this file is what is left
 * of RAS's reconciler: the verdicts from the report folded into the job's.
 *
 * What RAS says is two things: the ordinary rules' verdicts on the facts
 * the adapter gives (launch counts as positions, verdicts_launch.c,
 * marked launch_only; comm states, verdicts_left.c, verdicts_fault.c,
 * verdicts_init.c) and what is left of RAS's own (verdicts_ras.c: gone
 * processes, no comm, a text report).
 *
 * One verdict set, per job the report joined:
 *   - a report of its own (its processes are the adapter's, ras_procs.c):
 *     RAS's own verdicts join the ordinary rules' (fold_own);
 *   - segments in the job: their verdicts stay (the strongest source);
 *     each gets one line saying whether RAS agrees (the launch_only
 *     verdicts become that line);
 *   - snapshots only, RAS or the rules on its facts (an async error:
 *     verdicts_fault.c) name culprits: those verdicts are the job's,
 *     each culprit's stack from its snapshot ("where it is instead"), and the stacks' verdicts fold into them as
 *     one line each, "stacks agree: ..." or "stacks disagree: ...";
 *   - RAS names nobody (launch counts equal, no comm yet): the stacks'
 *     culprits stay, with what RAS saw ("launch counts equal"); when the
 *     stacks name nobody either (every rank inside NCCL), RAS's verdict
 *     (TRANSPORT_STALL "launch counts equal; RAS cannot see completion",
 *     or INIT_STALL) is the job's, the stacks' as its evidence. */
#include "decide.h"   /* first: it configures uthash */
#include "verdicts_ras.h"
#include "../names.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one verdict set ---- */

static void copy_set(struct nw_jctx *x, const struct nw_ras_input *in, struct nw_rankset *to,
                     const struct nw_rankset *from)
{
	for (uint32_t k = 0; k < from->n; k++)
		nw_set_add(x, to, nw_ras_our_rank(in, from->v[k]));
}

/* A RAS verdict as one of the job's. */
static struct nw_vwork *adopt(struct nw_jctx *x, const struct nw_ras_input *in, const struct nw_verdict *rv)
{
	struct nw_vwork *w = nw_verdict_new(x, rv->kind, NULL, rv->op_kind, rv->seq);
	if (!w)
		return NULL;
	w->v.comm_id = rv->comm_id;
	w->v.comm_nranks = rv->comm_nranks;
	w->v.launches = rv->launches;
	w->v.hint = rv->hint;
	nw_verdict_summary(x, w, "%s", rv->summary ? rv->summary : "");
	copy_set(x, in, &w->v.culprits, &rv->culprits);
	copy_set(x, in, &w->v.waiting, &rv->waiting);
	/* what RAS saw (what it cannot see is its processes' source note,
	 * said last by the engine) */
	for (size_t i = 0; i < rv->nevidence; i++)
		nw_verdict_evidence(x, w, "%s", rv->evidence[i]);
	return w;
}

/* "rank R (from stacks): where it is instead: frames" for each culprit. */
static void culprit_stacks(struct nw_jctx *x, struct nw_vwork *w)
{
	for (uint32_t k = 0; k < w->v.culprits.n && k < 16 && !x->oom; k++) {
		int32_t r = w->v.culprits.v[k];
		size_t at = nw_proc_by_rank(x->job, r);
		if (at >= x->job->nprocs) {
			nw_verdict_evidence(x, w, "rank %d (from stacks): no snapshot: attach found no such process (gone, "
			                    "or its host was not attached)", (int)r);
			continue;
		}
		const struct nw_proc *p = x->job->procs[at];
		const struct nw_thread_stack *t = nw_main_thread(p);
		if ((!t || !t->nframes) && p->gone_how && !p->nthreads && !p->snapshot) {
			/* the adapter's process of a rank RAS saw gone (ras_lineup.c) */
			nw_verdict_evidence(x, w, "rank %d (from stacks): no snapshot: attach found no such process (gone, "
			                    "or its host was not attached)", (int)r);
			continue;
		}
		if (!t || !t->nframes) {
			nw_verdict_evidence(x, w, "rank %d (from stacks): pid %lld has no stack", (int)r, (long long)p->hdr.pid);
			continue;
		}
		const char *e = NULL;
		int waits = nw_stack_waits(t, &e) != NW_FC_OTHER;
		struct nw_buf b = { 0 };
		nw_buf_printf(&b, "rank %d (from stacks): %s", (int)r, p->alive == 0 ? "process gone; " : "");
		if (waits)
			nw_buf_printf(&b, "waits in %s: ", e ? e : "?");
		else
			nw_buf_puts(&b, "where it is instead: ");
		nw_buf_frames(&b, t, 8);
		if (b.oom || !b.s)
			x->oom = 1;
		else
			nw_verdict_evidence(x, w, "%s", b.s);
		nw_buf_free(&b);
	}
}

static int same_set(const struct nw_rankset *a, const struct nw_rankset *b)
{
	if (a->n != b->n)
		return 0;
	for (uint32_t i = 0; i < a->n; i++)
		if (a->v[i] != b->v[i])
			return 0;
	return 1;
}

/* What a fold weighs: RAS's verdicts (on its own ranks) and what they and
 * the stacks' verdicts (the first nstack of the job's) say. */
struct foldctx {
	struct nw_ras_input *in;
	struct nw_verdict *rv;
	size_t nr, nstack;
	size_t from;                        /* x->vw[0..from): the rules' verdicts on facts (RAS's
	                                     * among them: an async error); [from..nstack): the
	                                     * stacks' (nw_rules_stacks) */
	struct nw_rankset ras_c, stack_c;   /* culprits, as the job's ranks */
	int ras_decided, ras_equal, ras_nocomm, ras_healthy, stack_named;
};

static void fold_tally(struct nw_jctx *x, struct foldctx *f)
{
	for (size_t i = 0; i < f->nr; i++) {
		const struct nw_verdict *v = &f->rv[i];
		if (v->culprits.n && v->kind != NW_V_HEALTHY) {
			f->ras_decided = 1;
			copy_set(x, f->in, &f->ras_c, &v->culprits);
		}
		f->ras_equal |= v->kind == NW_V_TRANSPORT_STALL;
		f->ras_nocomm |= v->kind == NW_V_INIT_STALL && !v->comm_id;
		f->ras_healthy |= v->kind == NW_V_HEALTHY;
	}
	/* the rules on RAS's facts decide like RAS's own verdicts */
	for (size_t i = 0; i < f->from; i++) {
		const struct nw_verdict *v = &x->vw[i]->v;
		f->ras_equal |= x->vw[i]->launch_only && !x->vw[i]->dropped && v->kind == NW_V_TRANSPORT_STALL;
		if (x->vw[i]->dropped || !v->culprits.n || v->kind == NW_V_HEALTHY)
			continue;
		f->ras_decided = 1;
		for (uint32_t k = 0; k < v->culprits.n; k++)
			nw_set_add(x, &f->ras_c, v->culprits.v[k]);
	}
	/* the stacks name a culprit (a process without a rank is named by its
	 * pid: its verdict has no culprit rank, but it names one) */
	for (size_t i = f->from; i < f->nstack; i++) {
		const struct nw_verdict *v = &x->vw[i]->v;
		if (x->vw[i]->dropped)
			continue;
		for (uint32_t k = 0; k < v->culprits.n; k++)
			nw_set_add(x, &f->stack_c, v->culprits.v[k]);
		f->stack_named |= v->kind != NW_V_UNDECIDED && v->kind != NW_V_HEALTHY && v->kind != NW_V_IDLE;
	}
}

/* What RAS says first, among its own verdicts (on its ranks) and the
 * rules' on its launch counts (launch_only, on the job's ranks): one with
 * culprits, the highest kind, the most culprits. *ours: the latter's
 * verdict (its summary may be findings), else NULL. */
static const struct nw_verdict *ras_first(struct nw_jctx *x, struct foldctx *f, const struct nw_vwork **ours)
{
	const struct nw_verdict *best = NULL;
	for (size_t i = 0; i < x->nvw + f->nr; i++) {
		const struct nw_verdict *v = i < x->nvw ? &x->vw[i]->v : &f->rv[i - x->nvw];
		if (i < x->nvw && (x->vw[i]->dropped || !x->vw[i]->launch_only))
			continue;
		if (!best || (!!v->culprits.n > !!best->culprits.n) ||
		    (!!v->culprits.n == !!best->culprits.n &&
		     (v->kind > best->kind || (v->kind == best->kind && v->culprits.n > best->culprits.n)))) {
			best = v;
			*ours = i < x->nvw ? x->vw[i] : NULL;
		}
	}
	return best;
}

/* Segments decide; RAS says whether it agrees (the rules' verdicts on its
 * launch counts become that line: their summary's parts, wrapped). */
static void fold_segments(struct nw_jctx *x, struct foldctx *f)
{
	const struct nw_vwork *ours = NULL;
	const struct nw_verdict *best = ras_first(x, f, &ours);
	struct nw_rankset c = { 0 };
	if (best && ours)
		for (uint32_t k = 0; k < best->culprits.n; k++)
			nw_set_add(x, &c, best->culprits.v[k]);
	else if (best)
		copy_set(x, f->in, &c, &best->culprits);
	for (size_t i = 0; i < x->nvw && !x->oom && best; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped || w->launch_only)
			continue;
		int agree = best->kind == w->v.kind && same_set(&c, &w->v.culprits) &&
		            (!best->seq || !w->v.seq || best->seq == w->v.seq);
		struct nw_buf prefix = { 0 };
		nw_buf_printf(&prefix, "NCCL RAS (%s) %s: %s: ", f->in->path, agree ? "agrees" : "says otherwise",
		              nw_verdict_name(best->kind));
		if (!prefix.s || prefix.oom)
			x->oom = 1;
		else if (ours)   /* a launch-only verdict's summary: wrapped, not read (facts.h) */
			nw_verdict_evidence_wrap(x, w, prefix.s, ours);
		else
			nw_verdict_evidence(x, w, "%s%s", prefix.s, best->summary ? best->summary : "");
		nw_buf_free(&prefix);
	}
	nw_rankset_free(&c);
	for (size_t i = 0; i < x->nvw; i++)
		if (x->vw[i]->launch_only)
			x->vw[i]->dropped = 1;
}

/* The stacks' verdicts as lines of w, a verdict from facts. */
static void stacks_lines(struct nw_jctx *x, struct foldctx *f, struct nw_vwork *w)
{
	culprit_stacks(x, w);
	for (size_t k = f->from; k < f->nstack; k++) {
		const struct nw_vwork *s = x->vw[k];
		if (s->dropped)
			continue;
		const char *how = !s->v.culprits.n && s->v.kind == NW_V_UNDECIDED && !w->v.culprits.n
		                      ? "stacks agree"
		                  : !s->v.culprits.n && s->v.kind == NW_V_UNDECIDED ? "stacks cannot decide"
		                  : same_set(&f->stack_c, &f->ras_c) ? "stacks agree"
		                                                     : "stacks disagree";
		char prefix[128];
		snprintf(prefix, sizeof prefix, "%s: %s: ", how, nw_verdict_name(s->v.kind));
		nw_verdict_evidence_wrap(x, w, prefix, s);
	}
}

/* The verdicts from facts (the rules' on RAS's facts, and RAS's) are the
 * job's; the stacks' fold into them. */
static void fold_adopt(struct nw_jctx *x, struct foldctx *f)
{
	for (size_t i = 0; i < f->from && !x->oom; i++)
		if (!x->vw[i]->dropped)
			stacks_lines(x, f, x->vw[i]);
	for (size_t i = 0; i < f->nr && !x->oom; i++) {
		if (f->rv[i].kind == NW_V_HEALTHY)
			continue;
		struct nw_vwork *w = adopt(x, f->in, &f->rv[i]);
		if (!w)
			break;
		stacks_lines(x, f, w);
	}
	for (size_t k = f->from; k < f->nstack; k++)
		x->vw[k]->dropped = 1;
}

/* RAS names nobody; the stacks' verdicts stay, with what RAS saw (the
 * rules' verdicts on its launch counts among it, as lines). */
static void fold_keep_stacks(struct nw_jctx *x, struct foldctx *f)
{
	for (size_t i = f->from; i < f->nstack && !x->oom; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped)
			continue;
		int named = w->v.kind != NW_V_UNDECIDED && w->v.kind != NW_V_HEALTHY && w->v.kind != NW_V_IDLE;
		if (named && (f->ras_equal || f->ras_nocomm)) {
			nw_verdict_summary_suffix(x, w, f->ras_equal ? "; launch counts equal (NCCL RAS): the counts cannot "
			                                                "tell who is behind, the stacks do"
			                                              : "; NCCL RAS lists no communicator (no init got past "
			                                                "its rendezvous when it was asked)");
		}
		for (size_t k = 0; k < f->from; k++)
			if (x->vw[k]->launch_only && !x->vw[k]->dropped) {
				struct nw_buf prefix = { 0 };
				nw_buf_printf(&prefix, "NCCL RAS (%s): %s: ", f->in->path, nw_verdict_name(x->vw[k]->v.kind));
				if (prefix.s && !prefix.oom)
					nw_verdict_evidence_wrap(x, w, prefix.s, x->vw[k]);
				else
					x->oom = 1;
				nw_buf_free(&prefix);
			}
		for (size_t k = 0; k < f->nr; k++)
			nw_verdict_evidence(x, w, "NCCL RAS (%s): %s: %s", f->in->path, nw_verdict_name(f->rv[k].kind),
			                    f->rv[k].summary ? f->rv[k].summary : "");
	}
	for (size_t k = 0; k < f->from; k++)
		if (x->vw[k]->launch_only)
			x->vw[k]->dropped = 1;
}

/* How many of the report's ranks are processes of the job, on the first
 * verdict that stays. */
static void fold_ranks_line(struct nw_jctx *x, const struct nw_ras_input *in)
{
	const struct nw_ras_comm *wc = nw_ras_world(&in->r);
	size_t n_other = wc ? wc->nranks + wc->nmissing - in->nmatched : 0;
	for (size_t i = 0; i < x->nvw && !x->oom; i++) {
		if (x->vw[i]->dropped)
			continue;
		if (!wc)
			nw_verdict_evidence(x, x->vw[i], "NCCL RAS report %s lists no communicator: it joins the one job of its "
			                    "directory", in->path);
		else
			nw_verdict_evidence(x, x->vw[i], "NCCL RAS report %s: %zu of its ranks are processes of this job (same "
			                    "host and pid)%s", in->path, in->nmatched,
			                    n_other ? "; the others have no snapshot or segment here" : "");
		break;
	}
}

/* A report of its own: its processes are the adapter's (ras_procs.c),
 * judged by the ordinary rules; RAS's verdicts join theirs. */
static void fold_own(struct nw_jctx *x, struct foldctx *f)
{
	for (size_t i = 0; i < f->nr && !x->oom; i++)
		if (!adopt(x, f->in, &f->rv[i]))
			break;
}

static void fold(struct nw_jctx *x, struct nw_ras_input *in)
{
	struct foldctx f = { .in = in, .nstack = x->nvw, .from = x->nfacts };
	int32_t ws;
	if (nw_ras_verdicts(&in->r, &f.rv, &f.nr, &ws)) {
		x->oom = 1;
		return;
	}
	in->folded = 1;
	if (in->own) {
		fold_own(x, &f);
		nw_ras_verdicts_free(f.rv, f.nr);
		return;
	}
	size_t snaps = 0;
	for (size_t i = 0; i < x->job->nprocs; i++)
		snaps += !(x->job->procs[i]->caps & NW_CAP_OPNUMS);
	fold_tally(x, &f);
	if (snaps < x->job->nprocs)
		fold_segments(x, &f);
	else if (f.ras_decided || (!f.stack_named && !f.ras_healthy))
		fold_adopt(x, &f);
	else
		fold_keep_stacks(x, &f);
	fold_ranks_line(x, in);
	nw_rankset_free(&f.ras_c);
	nw_rankset_free(&f.stack_c);
	nw_ras_verdicts_free(f.rv, f.nr);
}

/* A foreign report: one evidence line on each of the job's verdicts. */
static void discarded(struct nw_jctx *x, struct nw_ras_input *in)
{
	const struct nw_ras_comm *wc = nw_ras_world(&in->r);
	in->folded = 1;
	for (size_t i = 0; i < x->nvw && !x->oom; i++)
		if (!x->vw[i]->dropped)
			nw_verdict_evidence(x, x->vw[i], "NCCL RAS report %s not used: none of its %zu ranks is a process of "
			                    "this job (host and pid): another job's RAS answered (every job on a host listens "
			                    "on one port)", in->path, wc ? wc->nranks + wc->nmissing : 0);
}

static void hook_verdicts(void *arg, struct nw_jctx *x)
{
	struct nw_ras_merge *m = arg;
	for (size_t i = 0; i < m->n; i++) {
		struct nw_ras_input *in = &m->in[i];
		if (in->foreign && !in->folded && !strcmp(in->job, x->job->name))
			discarded(x, in);
	}
	for (size_t i = 0; i < m->n; i++) {
		struct nw_ras_input *in = &m->in[i];
		if (in->job[0] && !in->foreign && !in->folded && !strcmp(in->job, x->job->name)) {
			fold(x, in);
			return;
		}
	}
}

void nw_ras_hook(struct nw_ras_merge *m, struct nw_source_hook *h)
{
	h->procs = nw_ras_lineup;
	h->verdicts = hook_verdicts;
	h->arg = m;
}
