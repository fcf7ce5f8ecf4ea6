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
 */
#include "decide.h"   /* first: it configures uthash */
#include "verdicts_ras.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ncclwatch/segment.h>


struct vl {
	struct nw_verdict *v;
	size_t n, cap;
	int oom;
};

/* A verdict about comm c; `launches`: the op as a launch count of its
 * kind (RAS has no op numbers: analysis.h, nw_verdict.launches). */
static struct nw_verdict *vadd(struct vl *l, int kind, const struct nw_ras_comm *c, uint16_t op, uint64_t launches)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		struct nw_verdict *n = realloc(l->v, cap * sizeof *n);
		if (!n) { l->oom = 1; return NULL; }
		l->v = n;
		l->cap = cap;
	}
	struct nw_verdict *v = &l->v[l->n++];
	memset(v, 0, sizeof *v);
	v->kind = kind;
	v->comm_id = c ? c->hash : 0;
	v->comm_nranks = c ? c->size : 0;
	v->op_kind = op;
	v->launches = launches;
	v->hint = nw_verdict_hint(kind);
	return v;
}

static void vsummary(struct vl *l, struct nw_verdict *v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void vsummary(struct vl *l, struct nw_verdict *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	free(v->summary);
	if (vasprintf(&v->summary, fmt, ap) < 0) { v->summary = NULL; l->oom = 1; }
	va_end(ap);
}

static void vevidence(struct vl *l, struct nw_verdict *v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void vevidence(struct vl *l, struct nw_verdict *v, const char *fmt, ...)
{
	char **n = realloc(v->evidence, (v->nevidence + 1) * sizeof *n);
	if (!n) { l->oom = 1; return; }
	v->evidence = n;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&n[v->nevidence], fmt, ap) < 0) l->oom = 1;
	else v->nevidence++;
	va_end(ap);
}

static void radd(struct vl *l, struct nw_rankset *s, int32_t r)
{
	if (nw_rankset_add(s, r)) l->oom = 1;
}

static uint16_t op_of(int f)
{
	return nw_ras_func_ops[f];
}

static const char *err_name(int e)
{
	switch (e) {
	case 1: return "ncclUnhandledCudaError";
	case 2: return "ncclSystemError";
	case 3: return "ncclInternalError";
	case 4: return "ncclInvalidArgument";
	case 5: return "ncclInvalidUsage";
	case 6: return "ncclRemoteError";
	case 7: return "ncclInProgress";
	default: return "an unknown ncclResult_t";
	}
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

static void all_waiting(struct vl *l, struct nw_verdict *v, const struct world *w, const struct nw_ras_comm *c)
{
	for (size_t i = 0; i < c->nranks; i++) {
		int32_t g = grank(w, c, c->ranks[i].rank, c->ranks[i].pid, c->ranks[i].cuda_dev);
		if (!nw_rankset_has(&v->culprits, g)) radd(l, &v->waiting, g);
	}
}

/* ---- the rules ---- */

/* ---- a text report's errors and init states ----
 * A text report (NCCL < 2.28.7) lists only its outliers by rank: it is no
 * job of processes (ras_lineup.c), so its async errors, init errors and
 * ranks in init are judged here, on the report, as before; a JSON
 * report's are facts of its processes (ras_procs.c: verdicts_fault.c,
 * verdicts_init.c). */
static void text_errors(struct vl *l, const struct world *w, const struct nw_ras_comm *c)
{
	for (int pass = 0; pass < 2; pass++) {   /* 0: async errors, 1: init errors */
		struct nw_verdict *v = NULL;
		int first = 0;
		for (size_t i = 0; i < c->nranks; i++) {
			int e = pass ? c->ranks[i].init_state : c->ranks[i].async_error;
			if (e == 0 || e == 7) continue;
			if (!v) {
				if (!(v = vadd(l, pass ? NW_V_INIT_STALL : NW_V_GPU_FAULT, c, 0, 0))) return;
				first = e;
			}
			radd(l, &v->culprits, grank(w, c, c->ranks[i].rank, c->ranks[i].pid, c->ranks[i].cuda_dev));
			vevidence(l, v, "rank %d (pid %d on %s): %s %d (%s)", c->ranks[i].rank, c->ranks[i].pid, c->ranks[i].host,
			          pass ? "init error" : "async error", e, err_name(e));
		}
		if (!v) continue;
		char set[256];
		nw_rankset_format(&v->culprits, set, sizeof set);
		vsummary(l, v, "rank%s %s of comm 0x%016" PRIx64 " reported %s %s", v->culprits.n == 1 ? "" : "s", set, c->hash,
		         pass ? "the init error" : "the async error", err_name(first));
		all_waiting(l, v, w, c);
		if (!pass && first != 1) v->hint = "the error string: NCCL_DEBUG=WARN on that rank says where it came from";
	}
}

static void text_init(struct vl *l, const struct world *w, const struct nw_ras_comm *c)
{
	size_t in_init = 0;
	for (size_t i = 0; i < c->nranks; i++) in_init += c->ranks[i].init_state == 7;
	if (!in_init) return;
	struct nw_verdict *v = vadd(l, NW_V_INIT_STALL, c, NW_OP_COMM_INIT, 0);
	if (!v) return;
	int minority = in_init * 2 < c->nranks;
	for (size_t i = 0; i < c->nranks; i++)
		if (c->ranks[i].init_state == 7 && minority) radd(l, &v->culprits, grank(w, c, c->ranks[i].rank, c->ranks[i].pid, c->ranks[i].cuda_dev));
	vsummary(l, v, "%zu of %zu ranks of comm 0x%016" PRIx64 " are still inside its init (%s)", in_init, c->nranks, c->hash,
	         minority ? "a minority: they are named" : "no minority to blame: the comm itself");
	all_waiting(l, v, w, c);
	vevidence(l, v, "RAS lists a comm once its ranks exchanged their peer info: these ranks are past the rendezvous, "
	                "in the connection setup");
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
 * or ahead of it (ahead: 1), one verdict; 1 if made. */
static int counts_side(struct vl *l, const struct world *w, const struct nw_ras_comm *c, int f, uint64_t maj,
                       size_t majn, int ahead, int from_text)
{
	struct nw_verdict *v = NULL;
	uint64_t low = UINT64_MAX, high = 0;
	for (size_t i = 0; i < c->nranks; i++) {
		const struct nw_ras_rank *r = &c->ranks[i];
		if (!r->counts_known || r->counts[f] == maj || (r->counts[f] > maj) != ahead) continue;
		if (!v && !(v = vadd(l, NW_V_MISSING_RANK, c, op_of(f), 0))) return 0;
		radd(l, &v->culprits, grank(w, c, r->rank, r->pid, r->cuda_dev));
		if (r->counts[f] < low) low = r->counts[f];
		if (r->counts[f] > high) high = r->counts[f];
		vevidence(l, v, "rank %d (pid %d on %s): %s launched %" PRIu64 " times", r->rank, r->pid,
		          r->host[0] ? r->host : "?", nw_ras_func_names[f], r->counts[f]);
	}
	if (!v) return 0;
	char set[256];
	nw_rankset_format(&v->culprits, set, sizeof set);
	const char *fn = nw_ras_func_names[f];
	/* launch counts, never "#n": RAS counts per kind, an op number counts
	 * every collective of the comm (the preload's, for the same hang) */
	char theirs[48];
	if (low == high) snprintf(theirs, sizeof theirs, "%" PRIu64, low);
	else snprintf(theirs, sizeof theirs, "%" PRIu64 "-%" PRIu64, low, high);
	if (!ahead) {
		v->launches = maj;
		vsummary(l, v, "rank%s %s never launched the %s the others launched last on comm 0x%016" PRIx64
		         " (RAS: %s launches=%s there, launches=%" PRIu64 " on %zu peer%s); the others wait in it",
		         v->culprits.n == 1 ? "" : "s", set, fn, c->hash, fn, theirs, maj, majn, majn == 1 ? "" : "s");
	} else {
		v->launches = maj + 1;
		vsummary(l, v, "rank%s %s launched the %s the other %zu rank%s never launched on comm 0x%016" PRIx64
		         " (RAS: %s launches=%s there, launches=%" PRIu64 " on the others): %s went past where the "
		         "others are",
		         v->culprits.n == 1 ? "" : "s", set, fn, majn, majn == 1 ? "" : "s", c->hash, fn, theirs, maj,
		         v->culprits.n == 1 ? "it" : "they");
	}
	vevidence(l, v, "%zu rank%s launched %s %" PRIu64 " times%s", majn, majn == 1 ? "" : "s", fn, maj,
	          from_text ? " (text report: only the outliers are listed by rank)" : "");
	all_waiting(l, v, w, c);
	return 1;
}

/* A text report's counts: per collective kind, its line "N ranks have
 * launched up to operation V" is the majority, the ranks it lists by
 * rank the outliers (behind, ahead). A JSON report's counts are
 * positions of its processes, judged by verdicts_launch.c. */
static void text_counts(struct vl *l, const struct world *w, const struct nw_ras_comm *c)
{
	for (int f = 0; f < NW_RAS_NFUNCS && !l->oom; f++) {
		if (!c->text_majority_ranks[f])
			continue;
		for (int ahead = 0; ahead < 2; ahead++)
			counts_side(l, w, c, f, c->text_majority[f], (size_t)c->text_majority_ranks[f], ahead, 1);
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
	}
	free(v);
}

int nw_ras_verdicts(const struct nw_ras_report *r, struct nw_verdict **out, size_t *nout, int32_t *world_size)
{
	struct vl l = { 0 };
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
		struct nw_verdict *v = vadd(&l, NW_V_INIT_STALL, NULL, NW_OP_COMM_INIT, 0);
		if (v) {
			vsummary(&l, v, "RAS reports no communicator: no init of this job got past its rendezvous (or no NCCL "
			         "communicator exists)");
			vevidence(&l, v, "RAS lists a comm only once every rank exchanged its peer info: a rank that never "
			                 "arrived cannot be named from RAS; thread stacks can");
		}
	} else {
		for (size_t k = 0; k < r->ncomms; k++) {
			const struct nw_ras_comm *c = comms[k];
			if (r->from_text) {
				text_errors(&l, &w, c);
				text_init(&l, &w, c);
			}
			if (r->from_text)
				text_counts(&l, &w, c);
		}
		/* a comm with gone ranks gets no "equal counts" verdict; one whose
		 * ranks all agree says so (rule_equal) */
		if (l.n == 0 && r->from_text) {
			struct nw_verdict *v = vadd(&l, NW_V_TRANSPORT_STALL, comms[0], 0, 0);
			if (v) {
				vsummary(&l, v, "launch counts equal; RAS cannot see completion: the text report shows no mismatch, "
				         "error or missing process");
			}
		}
	}
	int faults = 0;
	for (size_t k = 0; k < r->ncomms; k++)
		faults |= judged_elsewhere(r, &r->comms[k]);
	if (l.n == 0 && !l.oom && !faults) {
		struct nw_verdict *v = vadd(&l, NW_V_HEALTHY, NULL, 0, 0);
		if (v) {
			vsummary(&l, v, "nothing RAS can see is wrong: every rank answered, no error, no launch count differs "
			         "(RAS cannot see completion, nor send/receive)");
		}
	}
	free(comms);
	free(w.byp);
	if (l.oom) { nw_ras_verdicts_free(l.v, l.n); return -1; }
	if (l.n)   /* none: the facts' rules judge (an error, an init) */
		qsort(l.v, l.n, sizeof *l.v, cmp_verdict);
	*out = l.v;
	*nout = l.n;
	return 0;
}

int nw_ras_add_job(struct nw_analysis *a, const struct nw_ras_report *r, const char *name)
{
	struct nw_verdict *v;
	size_t n;
	int32_t ws;
	if (nw_ras_verdicts(r, &v, &n, &ws)) return -1;
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
	/* what the source cannot tell, once per verdict: the job has no
	 * process to carry it as its source note (ras_merge.c) */
	for (size_t i = 0; i < n; i++) {
		char **e = realloc(v[i].evidence, (v[i].nevidence + 1) * sizeof *e);
		if (!e || !(e[v[i].nevidence] = strdup(NW_RAS_SOURCE_NOTE))) {
			if (e)
				v[i].evidence = e;
			return -1;
		}
		v[i].evidence = e;
		v[i].nevidence++;
	}
	return 0;
}
