/* verdicts: the per-job pass. Indexes each process's kept ops, runs the
 * rule files in order (faults, communicator creation, collectives,
 * point-to-point: each adds verdicts and wait-for edges), freezes the
 * wait-for graph, derives the verdicts that need it (deadlock cycles,
 * blocked streams, who waits for whom), falls back to IDLE or HEALTHY, and
 * ranks the verdicts: by kind (highest first), then by the number of ranks
 * concerned.
 *
 * `waiting` of a verdict = the processes from which one of its blamed
 * nodes is reachable in the wait-for graph (they wait for its culprits,
 * directly or through others), plus those the rule itself named, minus
 * its culprits. */
#include "decide.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pass ---- */

static int cmp_order(const void *a, const void *b, void *arg)
{
	const struct nw_proc *p = arg;
	const struct nw_seg_op *x = &p->ops[*(const uint32_t *)a], *y = &p->ops[*(const uint32_t *)b];
	uint32_t sx = x->comm_slot < p->ncomms ? x->comm_slot : p->ncomms;
	uint32_t sy = y->comm_slot < p->ncomms ? y->comm_slot : p->ncomms;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	int cx = nw_op_class(x->kind), cy = nw_op_class(y->kind);
	if (cx != cy)
		return cx < cy ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return nw_cmp_u64(x->commit, y->commit);
}

static int index_proc(struct nw_pctx *pc, struct nw_proc *p)
{
	pc->p = p;
	pc->order = malloc((p->nops ? p->nops : 1) * sizeof *pc->order);
	pc->slot_off = calloc((size_t)p->ncomms + 2, sizeof *pc->slot_off);
	if (!pc->order || !pc->slot_off)
		return -1;
	for (size_t i = 0; i < p->nops; i++)
		pc->order[i] = (uint32_t)i;
	qsort_r(pc->order, p->nops, sizeof *pc->order, cmp_order, p);
	for (size_t i = 0; i < p->nops; i++) {
		uint32_t s = p->ops[i].comm_slot < p->ncomms ? p->ops[i].comm_slot : p->ncomms;
		pc->slot_off[s + 1]++;
	}
	for (uint32_t s = 0; s <= p->ncomms; s++)
		pc->slot_off[s + 1] += pc->slot_off[s];
	return 0;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

/* Waiting sets from the graph; `explained` marks every process some
 * verdict names (culprit or waiting). */
static int fill_waiting(struct nw_jctx *x, uint8_t *explained)
{
	struct nw_graph *g = &x->g;
	uint32_t *reached = malloc(((size_t)g->nnodes + 1) * sizeof *reached);
	int32_t *ranks = malloc((2 * (size_t)x->job->nprocs + 1) * sizeof *ranks);   /* reached + named */
	if (!reached || !ranks) {
		free(reached);
		free(ranks);
		return -1;
	}
	for (size_t i = 0; i < x->nvw && !x->oom; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped)
			continue;
		size_t n = 0, nr = w->nblame ? nw_graph_reaching(g, w->blame, w->nblame, reached) : 0;
		for (size_t k = 0; k < nr; k++) {
			if (reached[k] >= g->nprocs)
				continue;   /* a junction */
			const struct nw_proc *p = x->job->procs[reached[k]];
			if (p->rank >= 0 && !nw_rankset_has(&w->v.culprits, p->rank))
				ranks[n++] = p->rank;
		}
		/* Merge with the rule's own waiting set, drop culprits. */
		for (uint32_t k = 0; k < w->v.waiting.n; k++)
			if (!nw_rankset_has(&w->v.culprits, w->v.waiting.v[k]))
				ranks[n++] = w->v.waiting.v[k];
		qsort(ranks, n, sizeof *ranks, cmp_i32);
		nw_rankset_clear(&w->v.waiting);
		for (size_t k = 0; k < n; k++)
			if (k == 0 || ranks[k] != ranks[k - 1])
				nw_set_add(x, &w->v.waiting, ranks[k]);
	}
	free(ranks);
	free(reached);
	/* What the verdicts explain: processes they name (by rank; one
	 * without a rank cannot be named). */
	for (size_t i = 0; i < x->nvw; i++) {
		const struct nw_vwork *w = x->vw[i];
		if (w->dropped)
			continue;
		for (int set = 0; set < 2; set++) {
			const struct nw_rankset *rs = set ? &w->v.waiting : &w->v.culprits;
			for (uint32_t k = 0; k < rs->n; k++) {
				size_t at = nw_proc_by_rank(x->job, rs->v[k]);
				if (at < x->job->nprocs)
					explained[at] = 1;
			}
		}
	}
	return x->oom ? -1 : 0;
}

/* Processes that wait for nothing: those that exited, those a source saw
 * gone while the others answered (gone_how: NCCL RAS; a segment's own
 * records say where it is), and those whose
 * process is gone while the job went on without them: another process on
 * its host was seen alive well after its last sign of life (a live one:
 * the reader's clock now; a dead one: its own last heartbeat). "Well
 * after" is a few of its watchdog's heartbeats: processes killed together
 * (a job torn down, its files read after) stopped within one heartbeat of
 * each other and are no sinks: their records say who waited for whom
 * when it stopped. A process that died first is, however short before
 * the others (a rank killed 1 ms into an op, its peers torn down seconds
 * later). A process whose watchdog started (its header has the poll
 * period) but never beat died within a poll period of its first NCCL
 * call, when the watchdog's thread started: that dates it. One whose
 * watchdog never started cannot be dated: no sink. Clocks are compared on
 * one host only. */
static uint64_t sink_grace_ns(const struct nw_jctx *x, const struct nw_proc *p)
{
	uint64_t poll_ns = (uint64_t)(p->hdr.poll_ms ? p->hdr.poll_ms : 100) * 1000000ull;
	uint64_t grace = 3 * poll_ns + 500000000ull;
	return grace < x->timeout_ns ? grace : x->timeout_ns;
}

/* The last moment p is known to have been alive (its clock), 0 unknown. */
static uint64_t last_alive_ns(const struct nw_proc *p)
{
	if (p->hdr.heartbeat_ns)
		return p->now_ns;
	if (!p->hdr.poll_ms)
		return 0;
	uint64_t first = UINT64_MAX;
	for (uint32_t i = 0; i < p->ncomms; i++)
		if (p->comms[i].init_enter_ns && p->comms[i].init_enter_ns < first)
			first = p->comms[i].init_enter_ns;
	if (p->nops && p->ops[0].enqueue_ns && p->ops[0].enqueue_ns < first)
		first = p->ops[0].enqueue_ns;
	if (first == UINT64_MAX)
		return 0;
	/* the thread's set-up (libunwind, the driver) before its first sleep: 1 s at most */
	uint64_t bound = first + (uint64_t)p->hdr.poll_ms * 1000000ull + 1000000000ull;
	return bound > p->now_ns ? bound : p->now_ns;
}

static void find_sinks(struct nw_jctx *x)
{
	const struct nw_job *job = x->job;
	for (size_t i = 0; i < job->nprocs; i++) {
		const struct nw_proc *p = job->procs[i];
		if ((p->hdr.flags & NW_SEG_F_EXITED) || (p->gone_how && !(p->caps & NW_CAP_OPNUMS))) {
			x->sink[i] = 1;
			continue;
		}
		/* A dump is a copy taken at a request: the process went on after it */
		uint64_t last = p->alive == 0 && !p->is_dump ? last_alive_ns(p) : 0;
		if (!last)
			continue;
		uint64_t grace = sink_grace_ns(x, p);
		int early = 0;
		for (size_t k = 0; k < job->nprocs && !early; k++) {
			const struct nw_proc *q = job->procs[k];
			early = q->hdr.pid != p->hdr.pid && !strcmp(q->hdr.host, p->hdr.host) &&
			        q->now_ns > last + grace;
		}
		x->sink[i] = (uint8_t)early;
	}
}

static size_t concerned(const struct nw_verdict *v)
{
	return (size_t)v->culprits.n + v->waiting.n + v->unknown.n;
}

/* Ranked: by kind (highest first), then by the number of ranks concerned,
 * then by the first culprit, then in the order the rules made them (which
 * follows ranks and comm creation order, never the random comm ids): the
 * same files give the same order. */
static int cmp_vwork(const void *a, const void *b)
{
	const struct nw_vwork *wx = *(struct nw_vwork *const *)a, *wy = *(struct nw_vwork *const *)b;
	const struct nw_verdict *x = &wx->v, *y = &wy->v;
	if (x->kind != y->kind)
		return x->kind > y->kind ? -1 : 1;
	size_t cx = concerned(x), cy = concerned(y);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	uint32_t fx = x->culprits.n ? (uint32_t)x->culprits.v[0] : UINT32_MAX;
	uint32_t fy = y->culprits.n ? (uint32_t)y->culprits.v[0] : UINT32_MAX;
	if (fx != fy)
		return fx < fy ? -1 : 1;
	return wx->created < wy->created ? -1 : wx->created > wy->created;
}

static void ctx_free(struct nw_jctx *x)
{
	for (size_t i = 0; i < x->nvw; i++)
		nw_vwork_free(x->vw[i]);
	free(x->vw);
	for (size_t i = 0; i < x->job->nprocs && x->pc; i++) {
		free(x->pc[i].order);
		free(x->pc[i].slot_off);
	}
	free(x->pc);
	for (size_t i = 0; i < x->nsets; i++) {
		nw_rankset_free(x->sets[i]);
		free(x->sets[i]);
	}
	free(x->sets);
	free(x->sblocks);
	free(x->pairs);
	free(x->sink);
	nw_graph_free(&x->g);
}

/* What the job's sources cannot tell (e.g. Flight Recorder dumps: no
 * stacks, late states), once per verdict: the limits of its evidence. */
static void source_notes(struct nw_jctx *x)
{
	struct nw_job *job = x->job;
	const char *seen[4] = { 0 };   /* the job's notes: found once, not per verdict */
	size_t nseen = 0;
	for (size_t k = 0; k < job->nprocs && nseen < 4; k++) {
		const char *note = job->procs[k]->source_note;
		size_t j = 0;
		while (note && j < nseen && seen[j] != note)
			j++;
		if (!note || j < nseen)
			continue;
		seen[nseen++] = note;
	}
	for (size_t i = 0; i < x->nvw && !x->oom; i++)
		for (size_t j = 0; j < nseen; j++) {
			struct nw_fact f = { .kind = NW_F_SOURCE_NOTE, .name = seen[j] };
			nw_verdict_evidence_fact(x, x->vw[i], &f);
		}
}

/* The public array, ranked: the verdicts left standing move into the job. */
static int publish(struct nw_jctx *x)
{
	struct nw_job *job = x->job;
	qsort(x->vw, x->nvw, sizeof *x->vw, cmp_vwork);
	size_t n = 0;
	for (size_t i = 0; i < x->nvw; i++)
		n += !x->vw[i]->dropped;
	job->verdicts = calloc(n ? n : 1, sizeof *job->verdicts);
	if (!job->verdicts)
		return -1;
	for (size_t i = 0; i < x->nvw; i++) {
		struct nw_vwork *w = x->vw[i];
		if (w->dropped)
			continue;
		job->verdicts[job->nverdicts++] = w->v;
		memset(&w->v, 0, sizeof w->v);   /* moved */
	}
	return 0;
}

/* What a joined source says of the job (how many of its ranks are the
 * job's), on the first verdict left standing. */
static void joined_line(struct nw_jctx *x)
{
	for (size_t i = 0; i < x->nvw && !x->oom && x->joined_line.kind; i++)
		if (!x->vw[i]->dropped) {
			nw_verdict_evidence_fact(x, x->vw[i], &x->joined_line);
			break;
		}
}

int nw_job_verdicts(struct nw_analysis *a, struct nw_job *job, struct nw_intern *in)
{
	struct nw_jctx x = { .a = a, .job = job, .in = in };
	x.timeout_ns = (uint64_t)(job->timeout_s * 1e9);
	x.g.nprocs = x.g.nnodes = (uint32_t)job->nprocs;
	x.pc = calloc(job->nprocs ? job->nprocs : 1, sizeof *x.pc);
	if (!x.pc)
		goto fail;
	for (size_t i = 0; i < job->nprocs; i++)
		if (index_proc(&x.pc[i], job->procs[i]))
			goto fail;
	if (!(x.sink = calloc(job->nprocs + 1, 1)))
		goto fail;
	find_sinks(&x);
	x.g.sink = x.sink;

	nw_rules_fault(&x);
	nw_rules_init(&x);
	nw_rules_coll(&x);
	nw_rules_left(&x);
	nw_rules_graph(&x);
	nw_rules_order(&x);
	nw_rules_p2p(&x);
	nw_rules_graph_held(&x);
	if (x.oom || nw_graph_freeze(&x.g))
		goto fail;
	nw_rules_p2p_verdicts(&x);
	nw_rules_stream(&x);
	nw_rules_thread_fate(&x);
	nw_rootcause(&x);
	nw_rules_process_fate(&x);
	nw_fold_same_culprits(&x);
	/* launch-only positions add no edge to the graph: judged beside the
	 * root causes, not folded into them (with segments, RAS's counts are a
	 * line on their verdicts: nw_fold_launch_only) */
	nw_rules_launch(&x);
	nw_rules_gone(&x);
	if (x.oom)
		goto fail;
	uint8_t *explained = calloc(job->nprocs + 1, 1);
	if (!explained || fill_waiting(&x, explained)) {
		free(explained);
		goto fail;
	}
	nw_rules_unexplained(&x, explained);
	free(explained);
	nw_fold_shifted(&x);
	x.nfacts = x.nvw;
	nw_rules_stacks(&x);
	x.nstacks = x.nvw;
	/* a source that joins the job's processes (a NCCL RAS report: its own
	 * verdicts, launch_only, and x.joined), then one verdict set */
	if (a->hook && a->hook->verdicts)
		a->hook->verdicts(a->hook->arg, &x);
	nw_rules_stacks_weigh(&x);
	nw_fold_launch_only(&x);
	joined_line(&x);
	nw_rules_idle(&x);
	nw_rules_lost(&x);
	if (x.oom)
		goto fail;

	source_notes(&x);
	if (x.oom || publish(&x))
		goto fail;
	ctx_free(&x);
	return 0;
fail:
	ctx_free(&x);
	return -1;
}
