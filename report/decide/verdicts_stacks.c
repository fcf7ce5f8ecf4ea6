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
 * them. */
#include "decide.h"
#include "majority.h"

#include <inttypes.h>
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

#define WHERE_FRAMES 8
#define STACK_FRAMES 8

static const char *const NO_OPS =
	"from stacks: no op numbers (attach's snapshots hold no ring): which collective the waiting ranks are "
	"in, and whether the others ever issued it, is not known";
static const char *const ONE_CAPTURE =
	"from stacks: one capture per process; a job that is only slow can look the same: attach again after a "
	"while, a rank that stays where it is is the one";

/* "ncclAllReduce" or the frame the process waits in. */
static const char *entry_of(const struct sproc *s)
{
	return s->entry ? s->entry : "?";
}

static void where_text(struct nw_buf *b, char **f, uint32_t n)
{
	for (uint32_t i = 0; i < n && i < WHERE_FRAMES; i++)
		nw_buf_printf(b, "%s%s", i ? " < " : "", f[i]);
	if (n > WHERE_FRAMES)
		nw_buf_puts(b, " < ...");
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
	struct nw_egroups eg = { 0 };
	for (size_t i = 0; i < n && !x->oom; i++) {
		if (sp[i].cls != S_WAIT)
			continue;
		struct nw_buf b = { 0 };
		nw_buf_printf(&b, "from stacks: waits in %s: ", entry_of(&sp[i]));
		nw_buf_frames(&b, sp[i].t, STACK_FRAMES);
		if (b.s && !b.oom)
			nw_eg_add(x, &eg, sp[i].p, b.s, NW_NO_AGE);
		else
			x->oom = 1;
		nw_buf_free(&b);
	}
	nw_eg_flush(x, w, &eg, 4);
}

/* Evidence: the other processes (elsewhere, gone with a stack, no stack). */
static void evidence_others(struct nw_jctx *x, struct nw_vwork *w, const struct sproc *sp, size_t n, int cls)
{
	struct nw_egroups eg = { 0 };
	for (size_t i = 0; i < n && !x->oom; i++) {
		const struct sproc *s = &sp[i];
		if (s->cls != cls)
			continue;
		struct nw_buf b = { 0 };
		char hb[128];
		if (cls == S_GONE) {
			nw_buf_printf(&b, "process gone: pid %" PRId64 " on %s no longer runs", s->p->hdr.pid,
			              s->p->hdr.host[0] ? s->p->hdr.host : "?");
			if (s->t) {
				nw_buf_puts(&b, "; its main thread when attach saw it: ");
				nw_buf_frames(&b, s->t, STACK_FRAMES);
			}
		} else if (cls == S_NOSTACK) {
			nw_buf_printf(&b, "no stack (%s): not judged", nw_proc_label(s->p, hb));
		} else {
			nw_buf_puts(&b, "from stacks: not inside NCCL: main thread: ");
			nw_buf_frames(&b, s->t, STACK_FRAMES);
		}
		if (b.s && !b.oom)
			nw_eg_add(x, &eg, s->p, b.s, NW_NO_AGE);
		else
			x->oom = 1;
		nw_buf_free(&b);
	}
	nw_eg_flush(x, w, &eg, 8);
}

static void ranks_phrase(struct nw_buf *b, const struct nw_rankset *s, size_t without_rank)
{
	if (s->n) {
		nw_buf_puts(b, s->n == 1 ? "rank " : "ranks ");
		nw_buf_rankset(b, s);
		if (without_rank)
			nw_buf_printf(b, " and %zu process%s without rank", without_rank, without_rank == 1 ? "" : "es");
	} else {
		nw_buf_printf(b, "%zu process%s without rank", without_rank, without_rank == 1 ? "" : "es");
	}
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
			if (sp[k].cls == S_WAIT && entry_of(&sp[k]) == entry_of(&sp[i]))
				break;
		d += k == i;
	}
	return d;
}

/* Whether another process of the job on p's host still runs: a process
 * gone while its job goes on is gone; a job whose processes are all gone
 * was torn down (its snapshots read afterwards), and each is judged as
 * attach saw it. */
/* The thread of p that runs a CUDA host function (load.c), or NULL. */
static const struct nw_thread_stack *host_fn_thread(const struct nw_proc *p)
{
	for (uint32_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].host_fn)
			return &p->threads[i];
	return NULL;
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
		if (host_fn_thread(sp[i].p)) {
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
		w->v.hint = "the host function (cuLaunchHostFunc, a stream callback): what it waits for (a lock, "
		            "another rank, I/O); a host function must not wait on the GPU or on other ranks";
		const struct nw_thread_stack *t0 = NULL;
		for (size_t i = 0; i < n; i++) {
			if (sp[i].cls == S_HOSTFN) {
				nw_verdict_culprit(x, w, sp[i].p);
				if (!t0)
					t0 = host_fn_thread(sp[i].p);
			} else if (sp[i].cls == S_WAIT) {
				nw_verdict_waiting(x, w, sp[i].p);
			}
		}
		struct nw_buf b = { 0 };
		char lb[128];
		if (!hf.n && nhf == 1) {
			for (size_t i = 0; i < n; i++)
				if (sp[i].cls == S_HOSTFN)
					nw_buf_puts(&b, nw_proc_label(sp[i].p, lb));
		} else {
			ranks_phrase(&b, &hf, hf_norank);
		}
		nw_buf_printf(&b, ": a CUDA host function has not returned (%s, on a thread of the CUDA driver): "
		              "the work queued behind it on its stream, NCCL ops too, cannot start", t0->host_fn);
		if (nwait) {
			nw_buf_puts(&b, "; ");
			ranks_phrase(&b, &wait, wait_norank);
			nw_buf_puts(&b, nwait == 1 ? " waits" : " wait");
			nw_buf_puts(&b, " inside NCCL or on the GPU (from stacks)");
		}
		if (!(w->v.summary = nw_buf_take(&b)))
			x->oom = 1;
		struct nw_egroups eg = { 0 };
		for (size_t i = 0; i < n && !x->oom; i++) {
			if (sp[i].cls != S_HOSTFN)
				continue;
			const struct nw_thread_stack *t = host_fn_thread(sp[i].p);
			struct nw_buf e = { 0 };
			nw_buf_printf(&e, "from stacks: thread %u \"%s\" runs a host function: ", t->tid, t->name);
			nw_buf_frames(&e, t, STACK_FRAMES);
			if (e.s && !e.oom)
				nw_eg_add(x, &eg, sp[i].p, e.s, NW_NO_AGE);
			else
				x->oom = 1;
			nw_buf_free(&e);
		}
		nw_eg_flush(x, w, &eg, 4);
		evidence_waiting(x, w, sp, n);
		nw_verdict_evidence(x, w, "%s", NO_OPS);
		nw_verdict_evidence(x, w, "%s", ONE_CAPTURE);
	}
	nw_rankset_free(&hf);
	nw_rankset_free(&wait);
	return nhf > 0;
}

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
	w->v.hint = "a process that died: its log and exit status, the kernel's log (OOM killer, GPU Xid "
	            "errors)";
	for (size_t i = 0; i < n; i++) {
		if (sp[i].cls == S_GONE)
			nw_verdict_culprit(x, w, sp[i].p);
		else if (sp[i].cls == S_WAIT)
			nw_verdict_waiting(x, w, sp[i].p);
	}
	for (uint32_t k = 0; k < job->missing.n; k++)
		nw_set_add(x, &w->v.culprits, job->missing.v[k]);
	struct nw_buf b = { 0 };
	ranks_phrase(&b, &c->gone, c->gone_norank);
	nw_buf_puts(&b, ": process gone");
	if (c->nwait) {
		nw_buf_puts(&b, "; ");
		ranks_phrase(&b, &c->wait, c->wait_norank);
		nw_buf_puts(&b, c->nwait == 1 ? " waits" : " wait");
		nw_buf_puts(&b, " inside NCCL or on the GPU (from stacks)");
	} else {
		nw_buf_puts(&b, "; no other rank waits inside NCCL (from stacks)");
	}
	if (!(w->v.summary = nw_buf_take(&b)))
		x->oom = 1;
	if (job->missing.n) {
		nw_buf_puts(&w->ev, job->missing.n == 1 ? "rank " : "ranks ");
		nw_buf_rankset(&w->ev, &job->missing);
		nw_buf_printf(&w->ev, ": no snapshot and no segment (world size %d): attach found no such process: "
		              "it is gone, or its host was not attached", (int)job->world_size);
		nw_verdict_evidence_flush(x, w);
	}
	evidence_others(x, w, sp, n, S_GONE);
	evidence_waiting(x, w, sp, n);
	evidence_others(x, w, sp, n, S_ELSE);
	nw_verdict_evidence(x, w, "%s", NO_OPS);
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
	const struct nw_thread_stack *t0 = sp[g->first].t;
	uint32_t common = group_common(sp, n, g);
	uint32_t shown = common - g->nwhere + 3 < common ? common - g->nwhere + 3 : common;
	struct nw_buf b = { 0 };
	char lb[128];
	if (!g->ranks.n && g->n == 1)
		nw_buf_puts(&b, nw_proc_label(sp[g->first].p, lb));
	else
		ranks_phrase(&b, &g->ranks, g->n - g->ranks.n);
	nw_buf_puts(&b, g->n == 1 ? " is in " : " are in ");
	where_text(&b, t0->frames + (t0->nframes - common), shown);
	if (shown < common && shown <= WHERE_FRAMES)
		nw_buf_puts(&b, " < ...");
	nw_buf_puts(&b, ", not inside NCCL, while ");
	ranks_phrase(&b, &c->wait, c->wait_norank);
	nw_buf_printf(&b, " %s inside NCCL or on the GPU (from stacks): the code path differs on %s",
	              c->nwait == 1 ? "waits" : "wait", g->n == 1 ? "it" : "them");
	if (!(w->v.summary = nw_buf_take(&b)))
		x->oom = 1;
}

/* One elsewhere group's verdict: its processes are the culprits, the
 * waiting ones wait. Returns -1 when the verdict could not be made. */
static int group_verdict(struct nw_jctx *x, const struct sproc *sp, size_t n, const struct egrp *g,
                         const struct tally *c)
{
	struct nw_vwork *w = nw_verdict_new(x, NW_V_MISSING_RANK, NULL, 0, 0);
	if (!w)
		return -1;
	w->v.hint = "the code path differs on those ranks (where they are: the stack); for op numbers, "
	            "run with the preload or ask NCCL RAS (ncclwatch ras)";
	for (size_t i = 0; i < n; i++) {
		if (sp[i].cls == S_ELSE && sp[i].where == g->where)
			nw_verdict_culprit(x, w, sp[i].p);
		else if (sp[i].cls == S_WAIT)
			nw_verdict_waiting(x, w, sp[i].p);
	}
	group_summary(x, w, sp, n, g, c);
	struct nw_egroups eg = { 0 };
	for (size_t i = 0; i < n && !x->oom; i++) {
		if (sp[i].cls != S_ELSE || sp[i].where != g->where)
			continue;
		struct nw_buf t = { 0 };
		nw_buf_puts(&t, "from stacks: not inside NCCL: main thread: ");
		nw_buf_frames(&t, sp[i].t, STACK_FRAMES);
		if (t.s && !t.oom)
			nw_eg_add(x, &eg, sp[i].p, t.s, NW_NO_AGE);
		nw_buf_free(&t);
	}
	nw_eg_flush(x, w, &eg, 4);
	evidence_waiting(x, w, sp, n);
	nw_verdict_evidence(x, w, "%s", NO_OPS);
	nw_verdict_evidence(x, w, "%s", ONE_CAPTURE);
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
	struct nw_buf b = { 0 };
	if (!c->nelse) {
		nw_buf_puts(&b, c->nno ? "every rank with a stack (" : "every rank (");
		if (c->wait.n)
			nw_buf_rankset(&b, &c->wait);
		else
			nw_buf_printf(&b, "%zu processes without rank", c->wait_norank);
		nw_buf_puts(&b, ") waits inside NCCL or on the GPU (from stacks): stacks cannot tell which "
		            "collective each is in or who is behind: a rank that skipped a collective, mismatched "
		            "arguments and a stuck transfer all look like this");
	} else {
		ranks_phrase(&b, &c->wait, c->wait_norank);
		nw_buf_printf(&b, " %s inside NCCL or on the GPU and %zu other%s %s elsewhere (from stacks): no "
		              "minority stands out: ranks that went past the others into one more collective look "
		              "like this, and so do ranks that are only slower to arrive", c->nwait == 1 ? "waits" : "wait",
		              c->nelse, c->nelse == 1 ? "" : "s", c->nelse == 1 ? "is" : "are");
	}
	if (!(w->v.summary = nw_buf_take(&b)))
		x->oom = 1;
	if (distinct_entries(sp, n) > 1)
		nw_verdict_evidence(x, w, "from stacks: the waiting ranks are not all in the same call (below): a "
		                    "desync or a mismatch is likely; which ranks deviate, only op numbers tell");
	evidence_waiting(x, w, sp, n);
	evidence_others(x, w, sp, n, S_ELSE);
	nw_verdict_evidence(x, w, "%s", NO_OPS);
	nw_verdict_evidence(x, w, "what would decide: NCCL's RAS counts of each rank's collectives "
	                    "(ncclwatch ras), or op numbers from the preload (ncclwatch run, LD_PRELOAD)");
	return 0;
}

/* Nobody waits in NCCL: nothing from stacks says the job is stuck.
 * Returns -1 when the verdict could not be made. */
static int quiet_verdict(struct nw_jctx *x, const struct sproc *sp, size_t n, const struct tally *c)
{
	struct nw_vwork *w = nw_verdict_new(x, c->nelse ? NW_V_HEALTHY : NW_V_UNDECIDED, NULL, 0, 0);
	if (!w)
		return -1;
	if (c->nelse)
		nw_verdict_summary(x, w, "from stacks: no rank waits inside NCCL or on the GPU (%zu process%s, one "
		                   "capture each): nothing in their stacks says the job is stuck in NCCL", n,
		                   n == 1 ? "" : "es");
	else
		nw_verdict_summary(x, w, "no process has a stack (%zu snapshot%s): nothing to judge", n,
		                   n == 1 ? "" : "s");
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
	if (ended && x->nvw > first_vw && !x->oom)
		nw_verdict_evidence(x, x->vw[first_vw], "from stacks: %zu process%s of this host no longer run%s, and none "
		                    "of the job does (read after the job ended): judged as attach saw them", ended,
		                    ended == 1 ? "" : "es", ended == 1 ? "s" : "");
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
		struct nw_egroups eg = { 0 };
		struct nw_rankset promote = { 0 };
		const struct nw_thread_stack *first = NULL;
		const struct nw_rankset *sets[3] = { &w->v.culprits, &w->v.unknown, &w->v.waiting };
		for (int s = 0; s < 3; s++) {
			for (uint32_t k = 0; k < sets[s]->n && !x->oom; k++) {
				size_t at = nw_proc_by_rank(x->job, sets[s]->v[k]);
				if (at >= x->job->nprocs || (x->job->procs[at]->caps & NW_CAP_OPNUMS))
					continue;
				const struct nw_proc *p = x->job->procs[at];
				const struct nw_thread_stack *t = nw_main_thread(p);
				struct nw_buf b = { 0 };
				const char *e = NULL;
				int waits = t && t->nframes && nw_stack_waits(t, &e) != NW_FC_OTHER;
				nw_buf_puts(&b, "from stacks (attached, no preload): ");
				if (p->alive == 0)
					nw_buf_puts(&b, "process gone; ");
				if (!t || !t->nframes) {
					nw_buf_puts(&b, "no stack");
				} else {
					if (waits)
						nw_buf_printf(&b, "waits in %s: ", e);
					else
						nw_buf_puts(&b, "not inside NCCL: ");
					nw_buf_frames(&b, t, STACK_FRAMES);
				}
				if (b.s && !b.oom)
					nw_eg_add(x, &eg, p, b.s, NW_NO_AGE);
				else
					x->oom = 1;
				nw_buf_free(&b);
				if (s == 1 && !w->v.culprits.n && w->v.waiting.n && w->v.kind != NW_V_HEALTHY &&
				    (p->alive == 0 || (t && t->nframes && !waits))) {
					nw_set_add(x, &promote, p->rank);
					if (!first && p->alive != 0)
						first = t;
				}
			}
		}
		nw_eg_flush(x, w, &eg, 8);
		if (promote.n && !x->oom) {
			struct nw_rankset left = { 0 };
			for (uint32_t k = 0; k < w->v.unknown.n; k++)
				if (!nw_rankset_has(&promote, w->v.unknown.v[k]))
					nw_set_add(x, &left, w->v.unknown.v[k]);
			nw_rankset_free(&w->v.unknown);
			w->v.unknown = left;
			for (uint32_t k = 0; k < promote.n; k++)
				nw_set_add(x, &w->v.culprits, promote.v[k]);
			/* its summary may be findings: a suffix, not read (facts.h) */
			struct nw_buf b = { 0 };
			nw_buf_puts(&b, "; from stacks: ");
			ranks_phrase(&b, &promote, 0);
			nw_buf_puts(&b, promote.n == 1 ? " (no segment) is not inside NCCL" : " (no segment) are not inside NCCL");
			if (first && promote.n == 1) {
				nw_buf_puts(&b, " (");
				nw_buf_frames(&b, first, WHERE_FRAMES);
				nw_buf_puts(&b, ")");
			}
			nw_buf_puts(&b, promote.n == 1 ? ": the culprit" : ": the culprits");
			if (b.s && !b.oom)
				nw_verdict_summary_suffix(x, w, b.s);
			else
				x->oom = 1;
			nw_buf_free(&b);
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
