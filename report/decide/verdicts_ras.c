/* verdicts_ras: see verdicts_ras.h. The rules, per communicator of the
 * report (largest first):
 *
 *   (gone     a rank whose process did not answer (unresponsive) or that
 *             RAS declared dead is a process's fact, gone_how: the
 *             ordinary rule nw_rules_gone, rule_fate.c; ras_procs.c,
 *             ras_lineup.c make it)
 *   (errors   an async error is a fault of its process, an init error
 *             a failed init of it: verdicts_fault.c and verdicts_init.c
 *             judge them on the comm table the adapter fills, ras_procs.c)
 *   (init     a rank still in init (ncclInProgress) is an init op of its
 *             process: verdicts_init.c, on the comm table ras_procs.c fills)
 *   (counts   launch counts per collective kind that differ: positions
 *             of the processes, verdicts_launch.c; a text report's, its
 *             majority line and its outliers: text_counts)
 *   (left     ranks that answered but no longer hold the comm, or that
 *             finalized, destroy or abort it: comm states of their
 *             processes, verdicts_left.c)
 *   (equal    every rank launched the same counts: launch-only
 *             positions, TRANSPORT_STALL "launch counts equal; RAS cannot
 *             see completion" of verdicts_launch.c)
 *   no comm   a report without any communicator: INIT_STALL without a
 *             culprit (RAS lists a comm only once every rank exchanged its
 *             peer info, so a rank that never arrived cannot be named).
 *
 * What it finds are facts (facts.h's NW_F_RAS_*; a text report's counts
 * that differ, verdicts_launch.c's NW_F_LAUNCH_*); their words are
 * words/ras_words.c's. A text report's ranks are no processes of a job:
 * a fact names its rank's host by a set of no rank (nw_findings_host),
 * which lives as long as the findings that name it. */
#include "decide.h"   /* first: it configures uthash */
#include "verdicts_ras.h"

#include <stdlib.h>
#include <string.h>
#include <ncclwatch/segment.h>

/* A verdict about comm c; `launches`: the op as a launch count of its
 * kind (RAS has no op numbers: analysis.h, nw_verdict.launches). Built
 * with the job's builders on a context of its own (no job: x->vw only). */
static struct nw_vwork *vadd(struct nw_jctx *x, int kind, const struct nw_ras_comm *c, uint16_t op, uint64_t launches)
{
	struct nw_vwork *w = nw_verdict_new(x, kind, NULL, op, 0);
	if (!w)
		return NULL;
	w->v.comm_id = c ? c->hash : 0;
	w->v.comm_nranks = c ? c->size : 0;
	w->v.launches = launches;
	return w;
}

/* A verdict whose summary is the one fact of `kind`. */
static struct nw_vwork *vsaid(struct nw_jctx *x, int kind, const struct nw_ras_comm *c, uint16_t op, int fact)
{
	struct nw_vwork *w = vadd(x, kind, c, op, 0);
	struct nw_fact f = { .kind = (uint16_t)fact };
	if (w)
		nw_verdict_summary_fact(x, w, &f);
	return w;
}

static void radd(struct nw_jctx *x, struct nw_rankset *s, int32_t r)
{
	if (nw_rankset_add(s, r))
		x->oom = 1;
}

static uint16_t op_of(int f)
{
	return nw_ras_func_ops[f];
}

/* ---- global ranks: the largest comm's ranks, others mapped by pid ---- */
struct pidrank { int pid, rank, dev; };
struct world {
	const struct nw_ras_comm *c;
	struct pidrank *byp;      /* the world comm's (pid, rank), sorted by pid */
	size_t n;
};

static int cmp_pidrank(const void *a, const void *b)
{
	const struct pidrank *x = a, *y = b;
	if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static int world_index(struct world *w)
{
	if (!w->c) return 0;
	w->byp = malloc((w->c->nranks + w->c->nmissing + 1) * sizeof *w->byp);
	if (!w->byp) return -1;
	for (size_t i = 0; i < w->c->nranks; i++) w->byp[w->n++] = (struct pidrank){ w->c->ranks[i].pid, w->c->ranks[i].rank, w->c->ranks[i].cuda_dev };
	for (size_t i = 0; i < w->c->nmissing; i++) w->byp[w->n++] = (struct pidrank){ w->c->missing[i].pid, w->c->missing[i].rank, w->c->missing[i].cuda_dev };
	qsort(w->byp, w->n, sizeof *w->byp, cmp_pidrank);
	return 0;
}

/* A rank of comm c as a rank of the world comm: by pid (a process with
 * several GPUs: the world rank on its CUDA device, else its lowest), else
 * the comm rank itself. */
static int32_t grank(const struct world *w, const struct nw_ras_comm *c, int rank, int pid, int dev)
{
	if (!w->c || c == w->c || pid <= 0 || !w->n) return rank;
	size_t lo = 0, hi = w->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->byp[mid].pid < pid) lo = mid + 1;
		else hi = mid;
	}
	for (size_t k = lo; dev >= 0 && k < w->n && w->byp[k].pid == pid; k++)
		if (w->byp[k].dev == dev) return w->byp[k].rank;
	return lo < w->n && w->byp[lo].pid == pid ? w->byp[lo].rank : rank;
}

static int cmp_comm_size(const void *a, const void *b)
{
	const struct nw_ras_comm *x = *(const struct nw_ras_comm *const *)a, *y = *(const struct nw_ras_comm *const *)b;
	if (x->size != y->size) return x->size > y->size ? -1 : 1;
	if (x->nranks != y->nranks) return x->nranks > y->nranks ? -1 : 1;
	if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
	return (x > y) - (x < y);   /* the report's order: comms[0] is nw_ras_world's */
}

static void all_waiting(struct nw_jctx *x, struct nw_vwork *v, const struct world *w, const struct nw_ras_comm *c)
{
	for (size_t i = 0; i < c->nranks; i++) {
		int32_t g = grank(w, c, c->ranks[i].rank, c->ranks[i].pid, c->ranks[i].cuda_dev);
		if (!nw_rankset_has(&v->v.culprits, g))
			radd(x, &v->v.waiting, g);
	}
}

/* One evidence fact of kind `fact` about rank rk of the report (no
 * process of the job: its host named by a set of no rank). */
static void rank_evidence(struct nw_jctx *x, struct nw_vwork *v, int fact, const struct nw_ras_rank *rk,
                          uint16_t op_kind, uint64_t n)
{
	struct nw_fact f = { .kind = (uint16_t)fact, .set = nw_findings_host(x, v, rk->host), .op_kind = op_kind,
		             .n = n, .seq = NW_RAS_RANK_PID(rk->rank, rk->pid) };
	if (f.set)
		nw_verdict_evidence_fact(x, v, &f);
}

/* ---- the rules ---- */

/* ---- a text report's errors and init states ----
 * A text report (NCCL < 2.28.7) lists only its outliers by rank: it is no
 * job of processes (ras_lineup.c), so its async errors, init errors and
 * ranks in init are judged here, on the report, as before; a JSON
 * report's are facts of its processes (ras_procs.c: verdicts_fault.c,
 * verdicts_init.c). */
static void text_errors(struct nw_jctx *x, const struct world *w, const struct nw_ras_comm *c)
{
	for (int pass = 0; pass < 2; pass++) {   /* 0: async errors, 1: init errors */
		struct nw_vwork *v = NULL;
		int first = 0;
		for (size_t i = 0; i < c->nranks; i++) {
			int e = pass ? c->ranks[i].init_state : c->ranks[i].async_error;
			if (e == 0 || e == 7)
				continue;
			if (!v) {
				if (!(v = vadd(x, pass ? NW_V_INIT_STALL : NW_V_GPU_FAULT, c, 0, 0)))
					return;
				first = e;
			}
			radd(x, &v->v.culprits, grank(w, c, c->ranks[i].rank, c->ranks[i].pid, c->ranks[i].cuda_dev));
			rank_evidence(x, v, NW_F_RAS_ERROR_AT, &c->ranks[i], 0, NW_RAS_ERR(e, pass));
		}
		if (!v)
			continue;
		struct nw_fact f = { .kind = NW_F_RAS_ERROR, .set = nw_findings_set(x, v, &v->v.culprits), .n = c->hash,
			             .seq = NW_RAS_ERR(first, pass) };
		if (f.set)
			nw_verdict_summary_fact(x, v, &f);
		all_waiting(x, v, w, c);
		struct nw_fact hint = { .kind = NW_F_RAS_ERROR_HINT };
		if (!pass && first != 1)
			nw_verdict_hint_fact(x, v, &hint);
	}
}

static void text_init(struct nw_jctx *x, const struct world *w, const struct nw_ras_comm *c)
{
	size_t in_init = 0;
	for (size_t i = 0; i < c->nranks; i++)
		in_init += c->ranks[i].init_state == 7;
	if (!in_init)
		return;
	struct nw_vwork *v = vadd(x, NW_V_INIT_STALL, c, NW_OP_COMM_INIT, 0);
	if (!v)
		return;
	int minority = in_init * 2 < c->nranks;
	for (size_t i = 0; i < c->nranks; i++)
		if (c->ranks[i].init_state == 7 && minority)
			radd(x, &v->v.culprits, grank(w, c, c->ranks[i].rank, c->ranks[i].pid, c->ranks[i].cuda_dev));
	struct nw_fact f = { .kind = NW_F_RAS_IN_INIT, .n = c->hash, .seq = (uint64_t)in_init | (uint64_t)c->nranks << 32 };
	nw_verdict_summary_fact(x, v, &f);
	all_waiting(x, v, w, c);
	struct nw_fact why = { .kind = NW_F_RAS_IN_INIT_WHY };
	nw_verdict_evidence_fact(x, v, &why);
}

/* A rank of c reports an async error, is still inside c's init, its
 * init failed, or it left c (finalized, destroyed or aborted it, or
 * answered but no longer holds it): facts of its process that the
 * ordinary rules judge (verdicts_fault.c, verdicts_init.c,
 * verdicts_left.c); no verdict of counts speaks for c then. */
static int judged_elsewhere(const struct nw_ras_report *r, const struct nw_ras_comm *c)
{
	if (r->from_text)
		return 0;
	for (size_t i = 0; i < c->nranks; i++) {
		if ((c->ranks[i].async_error != 0 && c->ranks[i].async_error != 7) || c->ranks[i].init_state != 0 ||
		    c->ranks[i].abort_flag || c->ranks[i].finalize_called || c->ranks[i].destroy_flag)
			return 1;
		for (int f = 0; f < NW_RAS_NFUNCS; f++)   /* launch counts: positions, verdicts_launch.c */
			if (c->ranks[i].counts_known && c->ranks[i].counts[f])
				return 1;
	}
	return c->nmissing > 0;   /* left it, or gone (nw_rules_gone) */
}

/* The ranks whose kind-f count is behind the majority's `maj` (ahead: 0)
 * or ahead of it (ahead: 1), one verdict; 1 if made. Its summary says
 * what verdicts_launch.c says of a JSON report's counts (LAUNCH_BEHIND,
 * LAUNCH_AHEAD); the majority's line, that a text report lists only its
 * outliers by rank. */
static int counts_side(struct nw_jctx *x, const struct world *w, const struct nw_ras_comm *c, int f, uint64_t maj,
                       size_t majn, int ahead)
{
	struct nw_vwork *v = NULL;
	uint64_t low = UINT64_MAX, high = 0;
	for (size_t i = 0; i < c->nranks; i++) {
		const struct nw_ras_rank *r = &c->ranks[i];
		if (!r->counts_known || r->counts[f] == maj || (r->counts[f] > maj) != ahead)
			continue;
		if (!v && !(v = vadd(x, NW_V_MISSING_RANK, c, op_of(f), 0)))
			return 0;
		radd(x, &v->v.culprits, grank(w, c, r->rank, r->pid, r->cuda_dev));
		if (r->counts[f] < low)
			low = r->counts[f];
		if (r->counts[f] > high)
			high = r->counts[f];
		rank_evidence(x, v, NW_F_RAS_LAUNCH_AT, r, op_of(f), r->counts[f]);
	}
	if (!v)
		return 0;
	/* launch counts, never "#n": RAS counts per kind, an op number counts
	 * every collective of the comm (the preload's, for the same hang) */
	v->v.launches = ahead ? maj + 1 : maj;
	const struct nw_fset *set = nw_findings_set(x, v, &v->v.culprits);
	struct nw_fact s[3] = {
		{ .kind = ahead ? NW_F_LAUNCH_AHEAD : NW_F_LAUNCH_BEHIND, .set = set, .op_kind = op_of(f), .n = c->hash,
		  .seq = majn },
		{ .kind = NW_F_LAUNCH_THEIRS, .n = low, .seq = high },
		{ .kind = ahead ? NW_F_LAUNCH_AHEAD_END : NW_F_LAUNCH_BEHIND_END, .set = set, .n = maj, .seq = majn },
	};
	for (size_t i = 0; set && i < 3; i++)
		nw_verdict_summary_fact(x, v, &s[i]);
	struct nw_fact m[2] = { { .kind = NW_F_LAUNCH_MAJORITY, .op_kind = op_of(f), .n = majn, .seq = maj },
		                { .kind = NW_F_RAS_OUTLIERS } };
	nw_verdict_evidence_facts(x, v, m, 2);
	all_waiting(x, v, w, c);
	return 1;
}

/* A text report's counts: per collective kind, its line "N ranks have
 * launched up to operation V" is the majority, the ranks it lists by
 * rank the outliers (behind, ahead). A JSON report's counts are
 * positions of its processes, judged by verdicts_launch.c. */
static void text_counts(struct nw_jctx *x, const struct world *w, const struct nw_ras_comm *c)
{
	for (int f = 0; f < NW_RAS_NFUNCS && !x->oom; f++) {
		if (!c->text_majority_ranks[f])
			continue;
		for (int ahead = 0; ahead < 2; ahead++)
			counts_side(x, w, c, f, c->text_majority[f], (size_t)c->text_majority_ranks[f], ahead);
	}
}

static int cmp_verdict(const void *a, const void *b)
{
	const struct nw_verdict *x = a, *y = b;
	if (x->kind != y->kind) return x->kind > y->kind ? -1 : 1;
	if (x->culprits.n != y->culprits.n) return x->culprits.n > y->culprits.n ? -1 : 1;
	return 0;
}

void nw_ras_verdicts_free(struct nw_verdict *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		nw_rankset_free(&v[i].culprits);
		nw_rankset_free(&v[i].waiting);
		nw_rankset_free(&v[i].unknown);
		free(v[i].summary);
		for (size_t k = 0; k < v[i].nevidence; k++) free(v[i].evidence[k]);
		free(v[i].evidence);
		nw_findings_free(v[i].found);
	}
	free(v);
}

/* The verdicts built on x move into a fresh array (*out, NULL when
 * none), ranked; 0, or -1 out of memory. */
static int take(struct nw_jctx *x, struct nw_verdict **out, size_t *nout)
{
	struct nw_verdict *v = x->nvw && !x->oom ? malloc(x->nvw * sizeof *v) : NULL;
	int failed = x->oom || (x->nvw && !v);
	for (size_t i = 0; i < x->nvw; i++) {
		if (!failed) {
			v[i] = x->vw[i]->v;
			memset(&x->vw[i]->v, 0, sizeof x->vw[i]->v);   /* moved */
		}
		nw_vwork_free(x->vw[i]);
	}
	if (failed) {
		free(v);
		return -1;
	}
	if (x->nvw)   /* none: the facts' rules judge (an error, an init) */
		qsort(v, x->nvw, sizeof *v, cmp_verdict);
	*out = v;
	*nout = x->nvw;
	return 0;
}

/* A report's comms, largest first: a text report's rules on each, and
 * its equal counts when none of them found anything. */
static void text_rules(struct nw_jctx *x, const struct nw_ras_report *r, const struct world *w,
                       const struct nw_ras_comm **comms)
{
	if (!r->from_text)
		return;
	for (size_t k = 0; k < r->ncomms; k++) {
		text_errors(x, w, comms[k]);
		text_init(x, w, comms[k]);
		text_counts(x, w, comms[k]);
	}
	/* a comm with gone ranks gets no "equal counts" verdict; one whose
	 * ranks all agree says so (rule_equal) */
	if (x->nvw == 0)
		vsaid(x, NW_V_TRANSPORT_STALL, comms[0], 0, NW_F_RAS_EQUAL);
}

int nw_ras_verdicts(const struct nw_ras_report *r, const char *note, struct nw_verdict **out, size_t *nout,
                    int32_t *world_size)
{
	struct nw_jctx x = { 0 };
	const struct nw_ras_comm **comms = calloc(r->ncomms ? r->ncomms : 1, sizeof *comms);
	if (!comms) return -1;
	for (size_t i = 0; i < r->ncomms; i++) comms[i] = &r->comms[i];
	qsort(comms, r->ncomms, sizeof *comms, cmp_comm_size);
	/* the adapter's world comm (ras_lineup.c), the one ranks are lined up by:
	 * comms[0] by the same order */
	struct world w = { .c = nw_ras_world(r) };
	*world_size = w.c ? w.c->size : -1;
	if (world_index(&w)) { free(comms); return -1; }
	if (!r->ncomms) {
		struct nw_vwork *v = vsaid(&x, NW_V_INIT_STALL, NULL, NW_OP_COMM_INIT, NW_F_RAS_NO_COMM);
		struct nw_fact why = { .kind = NW_F_RAS_NO_COMM_WHY };
		if (v)
			nw_verdict_evidence_fact(&x, v, &why);
	} else {
		text_rules(&x, r, &w, comms);
	}
	int faults = 0;
	for (size_t k = 0; k < r->ncomms; k++)
		faults |= judged_elsewhere(r, &r->comms[k]);
	if (x.nvw == 0 && !x.oom && !faults)
		vsaid(&x, NW_V_HEALTHY, NULL, 0, NW_F_RAS_HEALTHY);
	struct nw_fact f = { .kind = NW_F_SOURCE_NOTE, .name = note };
	for (size_t i = 0; note && i < x.nvw && !x.oom; i++)
		nw_verdict_evidence_fact(&x, x.vw[i], &f);
	free(comms);
	free(w.byp);
	int rc = take(&x, out, nout);
	free(x.vw);
	return rc;
}

int nw_ras_add_job(struct nw_analysis *a, const struct nw_ras_report *r, const char *name)
{
	struct nw_verdict *v;
	size_t n;
	int32_t ws;
	/* what the source cannot tell, the last line of each verdict: the job
	 * has no process to carry it as its source note (verdicts.c) */
	if (nw_ras_verdicts(r, NW_RAS_SOURCE_NOTE, &v, &n, &ws)) return -1;
	struct nw_job *jobs = realloc(a->jobs, (a->njobs + 1) * sizeof *jobs);
	if (!jobs) { nw_ras_verdicts_free(v, n); return -1; }
	a->jobs = jobs;
	struct nw_job *j = &jobs[a->njobs];
	memset(j, 0, sizeof *j);
	j->name = strdup(name);
	if (!j->name) { nw_ras_verdicts_free(v, n); return -1; }
	j->world_size = ws;
	j->timeout_s = 5;   /* RAS's own threshold: a process that does not answer within its
	                     * collective leg timeout (5 s x NCCL_RAS_TIMEOUT_FACTOR) is unresponsive */
	j->verdicts = v;
	j->nverdicts = n;
	a->njobs++;
	return 0;
}
