/* verdicts_launch: collective positions that are launch counts
 * (nw_proc.launch, NW_CAP_LAUNCH_ONLY: NCCL RAS counts each collective
 * kind a rank launched on a comm; completion unknown, no send/receive).
 *
 * Per comm and kind, the ranks grouped by their count: the strict
 * majority (majority.c) is the program as written, the others deviate:
 * behind it, they never launched the op the others launched last; ahead
 * of it, they launched one the others never launched. MISSING_RANK with
 * the op as a launch count of its kind (nw_verdict.launches, "AllReduce
 * launches=6"), never an op number "#n": a kind's count is no position in
 * the comm's stream of collectives. No strict majority: the verdict names
 * no culprit and says so (a tie stays one even when stacks show the ranks
 * below the highest count idle outside NCCL: the others may as well have
 * run one collective too many, past a host-side barrier or the program's
 * end). A rank a strict majority of another of its comms
 * launched past casts no vote (mark_waited: it is waited for there, not
 * at the program's end). Every count equal, every rank of the comm
 * there: TRANSPORT_STALL "launch counts equal; RAS cannot see completion"
 * (equal_counts).
 *
 * Launch-only positions never prove completion, so a rank behind is named
 * only when it cannot be waiting in an op the counts do not show: its
 * stack waits in NCCL outside that collective's call and its sources see
 * no send/receive (launch_only.c, nw_launch_hidden_wait): then it waits,
 * said so. Evidence of the comm as the source names it (RAS's hash).
 *
 * What it finds are facts (facts.h's NW_F_LAUNCH_*); their words are
 * words/launch_words.c's. */
#include "decide.h"   /* first: it configures uthash */
#include "majority.h"

#include <stdlib.h>

/* One launch-only position: process `proc` (its job index) launched
 * kind `kind` `launches` times on comm `comm`. */
struct lpos {
	uint64_t comm;
	uint64_t launches;
	uint32_t proc;
	uint16_t kind;
	int32_t crank, csize;
	uint8_t behind;     /* a strict majority of the comm launched this kind more often */
	uint8_t waited;     /* behind on another of its comms: its count is no vote here */
};

static int cmp_lpos(const void *a, const void *b)
{
	const struct lpos *x = a, *y = b;
	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return (x->proc > y->proc) - (x->proc < y->proc);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* One (comm, kind): its positions g[0..n), in process order. */
struct group {
	const struct lpos *g;
	size_t n;
	uint64_t maj;       /* the majority's count */
	size_t majn;        /* its ranks */
};

static struct nw_vwork *lverdict(struct nw_jctx *x, const struct group *gr, uint64_t launches)
{
	struct nw_vwork *w = nw_verdict_new(x, NW_V_MISSING_RANK, NULL, gr->g[0].kind, 0);
	if (!w)
		return NULL;
	w->v.comm_id = gr->g[0].comm;
	w->v.comm_nranks = gr->g[0].csize;
	w->v.launches = launches;
	w->launch_only = 1;
	return w;
}

static void all_waiting(struct nw_jctx *x, struct nw_vwork *w, const struct group *gr)
{
	for (size_t i = 0; i < gr->n; i++) {
		const struct nw_proc *p = x->job->procs[gr->g[i].proc];
		if (!nw_rankset_has(&w->v.culprits, p->rank))
			nw_verdict_waiting(x, w, p);
	}
}

/* No strict majority: nobody can be named from the counts. */
static void undecided(struct nw_jctx *x, const struct group *gr)
{
	struct nw_vwork *w = lverdict(x, gr, 0);
	if (!w)
		return;
	struct nw_fact f = { .kind = NW_F_LAUNCH_UNDECIDED, .op_kind = gr->g[0].kind, .n = gr->g[0].comm };
	nw_verdict_summary_fact(x, w, &f);
	for (size_t i = 0; i < gr->n && !x->oom; i++) {
		struct nw_fact r = { .kind = NW_F_LAUNCH_RANK, .proc = x->job->procs[gr->g[i].proc],
			             .op_kind = gr->g[i].kind, .n = gr->g[i].launches,
			             .seq = (uint32_t)gr->g[i].crank };
		nw_verdict_evidence_fact(x, w, &r);
	}
	all_waiting(x, w, gr);
}

/* Behind: a culprit whose process may wait in an op the counts do not
 * show waits instead (nw_launch_hidden_wait); 1 if so. */
static int hidden_wait(struct nw_jctx *x, struct nw_vwork *w, const struct lpos *lp, const struct nw_proc *p,
                       uint64_t maj)
{
	const char *entry;
	if (!nw_launch_hidden_wait(p, lp->comm, lp->kind, maj, &entry))
		return 0;
	nw_verdict_waiting(x, w, p);
	struct nw_fact f = { .kind = NW_F_LAUNCH_HIDDEN, .proc = p, .op_kind = lp->kind, .n = lp->comm, .seq = maj };
	nw_verdict_evidence_fact(x, w, &f);
	return 1;
}

/* Every rank behind the majority may wait in a send/receive: counts alone
 * cannot name one. */
static void all_hidden(struct nw_jctx *x, struct nw_vwork *w, const struct nw_rankset *hid)
{
	struct nw_fact f = { .kind = NW_F_LAUNCH_ALL_HIDDEN, .set = nw_findings_set(x, w, hid),
		             .op_kind = w->v.op_kind, .n = w->v.comm_id, .seq = w->v.launches };
	struct nw_fact hint = { .kind = NW_F_LAUNCH_HIDDEN_HINT };
	if (!f.set)
		return;
	nw_verdict_summary_fact(x, w, &f);
	nw_verdict_hint_fact(x, w, &hint);
}

static void evidence_waited(struct nw_jctx *x, struct nw_vwork *w, const struct group *gr);

/* The ranks behind the majority (ahead: 0) or ahead of it (ahead: 1), one
 * verdict; why the count to be behind of is the majority's when another
 * rule than the plain vote made it so: why (0 none, NW_F_LAUNCH_WAITED). */
static void side(struct nw_jctx *x, const struct group *gr, int ahead, int why)
{
	struct nw_vwork *w = NULL;
	struct nw_rankset hid = { 0 };
	uint64_t low = UINT64_MAX, high = 0, maj = gr->maj;
	size_t majn = gr->majn, named = 0;
	for (size_t i = 0; i < gr->n && !x->oom; i++) {
		const struct lpos *lp = &gr->g[i];
		if (lp->launches == maj || (lp->launches > maj) != ahead)
			continue;
		if (!w && !(w = lverdict(x, gr, ahead ? maj + 1 : maj)))
			return;
		const struct nw_proc *p = x->job->procs[lp->proc];
		if (lp->launches < low)
			low = lp->launches;
		if (lp->launches > high)
			high = lp->launches;
		struct nw_fact r = { .kind = NW_F_LAUNCH_RANK_AT, .proc = p, .op_kind = lp->kind, .n = lp->launches,
			             .seq = (uint32_t)lp->crank };
		nw_verdict_evidence_fact(x, w, &r);
		if (!ahead && hidden_wait(x, w, lp, p, maj)) {
			nw_set_add(x, &hid, p->rank);
			continue;
		}
		nw_verdict_culprit(x, w, p);
		named++;
	}
	if (!w)
		return;
	if (!named) {
		all_hidden(x, w, &hid);
	} else {
		/* who, their counts (low-high), the majority's */
		const struct nw_fset *set = nw_findings_set(x, w, &w->v.culprits);
		struct nw_fact f[3] = {
			{ .kind = ahead ? NW_F_LAUNCH_AHEAD : NW_F_LAUNCH_BEHIND, .set = set, .op_kind = gr->g[0].kind,
			  .n = gr->g[0].comm, .seq = majn },
			{ .kind = NW_F_LAUNCH_THEIRS, .n = low, .seq = high },
			{ .kind = ahead ? NW_F_LAUNCH_AHEAD_END : NW_F_LAUNCH_BEHIND_END, .set = set, .n = maj, .seq = majn },
		};
		for (size_t i = 0; set && i < 3; i++)
			nw_verdict_summary_fact(x, w, &f[i]);
	}
	struct nw_fact m = { .kind = NW_F_LAUNCH_MAJORITY, .op_kind = gr->g[0].kind, .n = majn, .seq = maj };
	nw_verdict_evidence_fact(x, w, &m);
	if (why == NW_F_LAUNCH_WAITED) {
		evidence_waited(x, w, gr);
	}
	all_waiting(x, w, gr);
	nw_rankset_free(&hid);
}

/* Ranks whose counts cast no vote (lpos.waited): a strict majority of
 * another of their comms launched past them, so they wait to be caught up
 * with there, and where they stopped is not the program as written on any
 * comm (the segments' reading, verdicts_coll.c's behind_majority: seed
 * 9262, ranks 4-5 paused 2 of 3 in their tp comm while the world's
 * majority waited for them; rank 3, ahead of them in the tp comm, was
 * blamed). One evidence line. */
static void evidence_waited(struct nw_jctx *x, struct nw_vwork *w, const struct group *gr)
{
	struct nw_rankset set = { 0 };
	for (size_t i = 0; i < gr->n; i++)
		if (gr->g[i].waited)
			nw_set_add(x, &set, x->job->procs[gr->g[i].proc]->rank);
	const struct nw_fset *fs = set.n ? nw_findings_set(x, w, &set) : NULL;
	struct nw_fact f = { .kind = NW_F_LAUNCH_WAITED, .set = fs, .op_kind = gr->g[0].kind, .n = gr->g[0].comm };
	if (fs)
		nw_verdict_evidence_fact(x, w, &f);
	nw_rankset_free(&set);
}

/* One (comm, kind): the counts grouped, judged by the one majority rule;
 * the counts of ranks waited for on another comm cast no vote, unless
 * nobody else has one. */
static void judge(struct nw_jctx *x, struct group *gr, uint64_t *vals, uint32_t *votes, uint64_t *val)
{
	if (gr->n < 2)
		return;
	size_t nv = 0, nwaited = 0;
	int differ = 0;
	for (size_t i = 0; i < gr->n; i++) {
		differ |= gr->g[i].launches != gr->g[0].launches;
		nwaited += gr->g[i].waited;
		if (!gr->g[i].waited)
			vals[nv++] = gr->g[i].launches;
	}
	if (!differ)
		return;   /* every count equal: nothing deviates */
	if (!nv) {
		nwaited = 0;
		for (size_t i = 0; i < gr->n; i++)
			vals[nv++] = gr->g[i].launches;
	}
	qsort(vals, nv, sizeof *vals, cmp_u64);
	uint32_t ng = 0, ntop = 0;
	for (size_t i = 0; i < nv;) {
		size_t m = 1;
		while (i + m < nv && vals[i + m] == vals[i])
			m++;
		val[ng] = vals[i];
		votes[ng++] = (uint32_t)m;
		i += m;
	}
	uint32_t top = nw_vote_top(votes, ng, &ntop);
	if (ntop > 1) {
		undecided(x, gr);
		return;
	}
	gr->maj = val[top];
	gr->majn = votes[top];
	side(x, gr, 0, nwaited ? NW_F_LAUNCH_WAITED : 0);
	side(x, gr, 1, nwaited ? NW_F_LAUNCH_WAITED : 0);
}

/* lpos.behind of each position (its (comm, kind) in all[0..n), sorted),
 * then lpos.waited: behind on a comm other than its own. */
static int mark_waited(struct lpos *all, size_t n, size_t nprocs)
{
	uint64_t *on = calloc(nprocs ? nprocs : 1, sizeof *on);   /* a comm it is behind on */
	uint8_t *several = calloc(nprocs ? nprocs : 1, 1);         /* behind on two comms or more */
	uint64_t *sorted = malloc((n ? n : 1) * sizeof *sorted);   /* one group's counts, ascending */
	if (!on || !several || !sorted) {
		free(on);
		free(several);
		free(sorted);
		return -1;
	}
	for (size_t i = 0; i < n;) {
		size_t m = 1;
		while (i + m < n && all[i + m].comm == all[i].comm && all[i + m].kind == all[i].kind)
			m++;
		uint32_t size = all[i].csize > 0 && (size_t)all[i].csize >= m ? (uint32_t)all[i].csize : (uint32_t)m;
		/* who launched more than each: counted in the sorted counts, not
		 * pair by pair (a world comm of a RAS report holds every rank) */
		for (size_t a = 0; a < m; a++)
			sorted[a] = all[i + a].launches;
		qsort(sorted, m, sizeof *sorted, cmp_u64);
		for (size_t a = i; a < i + m; a++) {
			size_t lo = 0, hi = m;          /* the first count above it */
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (sorted[mid] <= all[a].launches)
					lo = mid + 1;
				else
					hi = mid;
			}
			uint32_t votes[2] = { (uint32_t)(m - lo), 0 };   /* launched more than it, not */
			votes[1] = size - votes[0];
			all[a].behind = nw_majority(votes, 2) == 0;
			uint32_t p = all[a].proc;
			if (all[a].behind && on[p] && on[p] != all[a].comm)
				several[p] = 1;
			else if (all[a].behind)
				on[p] = all[a].comm;
		}
		i += m;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t p = all[i].proc;
		all[i].waited = on[p] && (several[p] || on[p] != all[i].comm);
	}
	free(on);
	free(several);
	free(sorted);
	return 0;
}

/* Whether member p of comm `comm` holds it created and without an error
 * (a process with op numbers has its own comm table, under its own ids:
 * its own rules judge it). */
static int runs(const struct nw_proc *p, uint64_t comm)
{
	if (p->caps & NW_CAP_OPNUMS)
		return 1;
	for (uint32_t s = 0; s < p->ncomms; s++)
		if (p->comms[s].comm_id == comm)
			return p->comms[s].state == NW_COMM_INIT_DONE &&
			       (p->comms[s].async_error == 0 || p->comms[s].async_error == 7);
	return 0;
}

/* Every rank of the comm whose positions are a[0..n) (sorted by kind)
 * holds it, and launched each kind as often as the others, something at
 * all: launch-only positions cannot tell a rank inside a collective from
 * one past it, nor a stuck transfer from a healthy job. TRANSPORT_STALL
 * of the comm, marked so, its op the last kind the source lists with a
 * count, no culprit. */
static void equal_counts(struct nw_jctx *x, const struct lpos *a, size_t n)
{
	int32_t size = a[0].csize;
	int any = 0;
	for (size_t i = 0, k = 0; i < n; i = k) {
		for (k = i; k < n && a[k].kind == a[i].kind; k++)
			if (a[k].launches != a[i].launches)
				return;
		if ((int32_t)(k - i) != size)
			return;
		any |= a[i].launches != 0;
	}
	if (!any || size < 2)
		return;
	for (size_t i = 0; i < (size_t)size; i++)
		if (!runs(x->job->procs[a[i].proc], a[0].comm))
			return;
	const struct nw_proc *p0 = x->job->procs[a[0].proc];
	struct nw_vwork *w = nw_verdict_new(x, NW_V_TRANSPORT_STALL, NULL, 0, 0);
	if (!w)
		return;
	w->v.comm_id = a[0].comm;
	w->v.comm_nranks = size;
	w->launch_only = 1;
	for (uint32_t k = 0; k < p0->nlaunch; k++) {   /* the source's order of kinds: the last one counted */
		const struct nw_launch_pos *lp = &p0->launch[k];
		if (lp->comm_id != a[0].comm || !lp->launches)
			continue;
		w->v.op_kind = lp->kind;
		w->v.launches = lp->launches;
	}
	struct nw_fact f = { .kind = NW_F_LAUNCH_EQUAL, .proc = p0, .n = a[0].comm, .seq = (uint32_t)size };
	nw_verdict_summary_fact(x, w, &f);
	for (size_t i = 0; i < (size_t)size; i++)
		nw_verdict_waiting(x, w, x->job->procs[a[i].proc]);
	struct nw_fact same = { .kind = NW_F_LAUNCH_EQUAL_SAME }, order = { .kind = NW_F_LAUNCH_EQUAL_ORDER };
	nw_verdict_evidence_fact(x, w, &same);
	nw_verdict_evidence_fact(x, w, &order);
}

void nw_rules_launch(struct nw_jctx *x)
{
	const struct nw_job *job = x->job;
	size_t n = 0;
	for (size_t i = 0; i < job->nprocs; i++)
		n += job->procs[i]->nlaunch;
	if (!n)
		return;
	struct lpos *all = malloc(n * sizeof *all);
	uint64_t *vals = NULL, *val = NULL;
	uint32_t *votes = NULL;
	if (!all) {
		x->oom = 1;
		return;
	}
	n = 0;
	for (size_t i = 0; i < job->nprocs; i++) {
		const struct nw_proc *p = job->procs[i];
		for (uint32_t k = 0; k < p->nlaunch; k++)
			all[n++] = (struct lpos){ .comm = p->launch[k].comm_id, .launches = p->launch[k].launches,
			                          .proc = (uint32_t)i, .kind = p->launch[k].kind,
			                          .crank = p->launch[k].comm_rank, .csize = p->launch[k].comm_size };
	}
	qsort(all, n, sizeof *all, cmp_lpos);
	size_t most = 1;   /* the largest (comm, kind): room to count its votes */
	for (size_t i = 0, m = 1; i < n; i++, m++) {
		if (i + 1 == n || all[i + 1].comm != all[i].comm || all[i + 1].kind != all[i].kind) {
			most = m > most ? m : most;
			m = 0;
		}
	}
	vals = malloc(most * sizeof *vals);
	val = malloc(most * sizeof *val);
	votes = malloc(most * sizeof *votes);
	if (!vals || !val || !votes || mark_waited(all, n, job->nprocs) < 0) {
		x->oom = 1;
		goto out;
	}
	for (size_t i = 0; i < n && !x->oom;) {
		size_t m = 1;
		while (i + m < n && all[i + m].comm == all[i].comm && all[i + m].kind == all[i].kind)
			m++;
		struct group gr = { .g = &all[i], .n = m };
		judge(x, &gr, vals, votes, val);
		i += m;
	}
	for (size_t i = 0; i < n && !x->oom;) {   /* per comm: every count equal */
		size_t m = 1;
		while (i + m < n && all[i + m].comm == all[i].comm)
			m++;
		equal_counts(x, &all[i], m);
		i += m;
	}
out:
	free(all);
	free(vals);
	free(val);
	free(votes);
}
