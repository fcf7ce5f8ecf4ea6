/* ras_merge: a saved NCCL RAS report and the snapshots (or segments) of
 * the same processes made ONE job with one verdict set (docs/ras.md, "One
 * job, one verdict"): the hook's verdicts half (nw_ras_hook; its procs
 * half is the adapter's lining up, sources/ras/ras_lineup.c: host and pid;
 * the rank, world size, job and capability bits each lined-up process
 * takes).
 *
 * What RAS says is two things: the ordinary rules' verdicts on the facts
 * the adapter gives (launch counts as positions, verdicts_launch.c, and
 * gone ranks, rule_fate.c, marked launch_only; comm states,
 * verdicts_left.c, verdicts_fault.c, verdicts_init.c) and what is left of
 * RAS's own (verdicts_ras.c: no comm, a text report). This file hands the
 * latter to the job:
 *   - a report of its own (its processes are the adapter's, ras_procs.c):
 *     RAS's own verdicts join the ordinary rules';
 *   - a report that joined the job's processes: RAS's own verdicts join as
 *     launch_only, the report is the job's joined source (x->joined) and
 *     decide makes one verdict set of it: beside segments the segments'
 *     verdicts stand, each with a line whether RAS agrees
 *     (nw_fold_launch_only, rootcause.c); beside snapshots only, RAS's and
 *     the stacks' verdicts are weighed (nw_rules_stacks_weigh,
 *     verdicts_stacks.c); the last line of the first verdict standing says
 *     how many of the report's ranks are the job's (x->joined_line);
 *   - another job's report (none of its ranks is a process here): one line
 *     on each verdict, not used. */
#include "decide.h"   /* first: it configures uthash */
#include "verdicts_ras.h"

#include <string.h>

static void copy_set(struct nw_jctx *x, const struct nw_ras_input *in, struct nw_rankset *to,
                     const struct nw_rankset *from)
{
	for (uint32_t k = 0; k < from->n; k++)
		nw_set_add(x, to, nw_ras_our_rank(in, from->v[k]));
}

/* A RAS verdict as one of the job's: its summary and evidence (what RAS
 * saw; what it cannot see is its processes' source note, said last by the
 * engine) move into it, its ranks become the job's. */
static struct nw_vwork *adopt(struct nw_jctx *x, const struct nw_ras_input *in, struct nw_verdict *rv)
{
	struct nw_vwork *w = nw_verdict_new(x, rv->kind, NULL, rv->op_kind, rv->seq);
	if (!w)
		return NULL;
	w->v.comm_id = rv->comm_id;
	w->v.comm_nranks = rv->comm_nranks;
	w->v.launches = rv->launches;
	w->v.hint = rv->hint;
	w->v.summary = rv->summary;
	w->v.evidence = rv->evidence;
	w->v.nevidence = rv->nevidence;
	w->v.found = rv->found;
	rv->summary = NULL;
	rv->evidence = NULL;
	rv->nevidence = 0;
	rv->found = NULL;
	copy_set(x, in, &w->v.culprits, &rv->culprits);
	copy_set(x, in, &w->v.waiting, &rv->waiting);
	return w;
}

/* The report's file, for a fact's name: the analysis's copy (the words
 * come after the report is gone). */
static const char *report_name(struct nw_jctx *x, const struct nw_ras_input *in)
{
	const char *s = nw_intern_str(x->in, in->path, strlen(in->path));
	if (!s)
		x->oom = 1;
	return s;
}

/* RAS's verdicts into the job: those of a report of its own join the
 * ordinary rules'; a joined report's (launch_only) fold into the job's
 * (decide: nw_rules_stacks_weigh, nw_fold_launch_only), with how many of
 * its ranks are the job's as the first standing verdict's last line. */
static void join(struct nw_jctx *x, struct nw_ras_input *in)
{
	const char *name = report_name(x, in);
	struct nw_verdict *rv;
	size_t nr;
	int32_t ws;
	if (!name)
		return;
	if (nw_ras_verdicts(&in->r, NULL, &rv, &nr, &ws)) {
		x->oom = 1;
		return;
	}
	in->folded = 1;
	for (size_t i = 0; i < nr && !x->oom; i++) {
		struct nw_vwork *w = adopt(x, in, &rv[i]);
		if (!w)
			break;
		w->launch_only = !in->own;
	}
	nw_ras_verdicts_free(rv, nr);
	if (in->own)
		return;
	const struct nw_ras_comm *wc = nw_ras_world(&in->r);
	size_t n_other = wc ? wc->nranks + wc->nmissing - in->nmatched : 0;
	struct nw_fact f = { .kind = wc ? NW_F_RAS_FOLD_RANKS : NW_F_RAS_FOLD_NOCOMM, .name = name,
	                     .n = wc ? in->nmatched : 0, .seq = n_other != 0 };
	x->joined = name;
	x->joined_line = f;
}

/* A foreign report: one evidence line on each of the job's verdicts. */
static void discarded(struct nw_jctx *x, struct nw_ras_input *in)
{
	const struct nw_ras_comm *wc = nw_ras_world(&in->r);
	in->folded = 1;
	struct nw_fact f = { .kind = NW_F_RAS_FOLD_FOREIGN, .name = report_name(x, in),
	                     .n = wc ? wc->nranks + wc->nmissing : 0 };
	for (size_t i = 0; i < x->nvw && !x->oom; i++)
		if (!x->vw[i]->dropped)
			nw_verdict_evidence_fact(x, x->vw[i], &f);
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
			join(x, in);
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
