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
#include "analysis_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const char *nw_verdict_name(int kind)
{
	static const char *const names[] = {
		[NW_V_HEALTHY] = "HEALTHY",
		[NW_V_IDLE] = "IDLE",
		[NW_V_TRANSPORT_STALL] = "TRANSPORT_STALL",
		[NW_V_STREAM_BLOCKED] = "STREAM_BLOCKED",
		[NW_V_MISSING_RANK] = "MISSING_RANK",
		[NW_V_P2P_UNMATCHED] = "P2P_UNMATCHED",
		[NW_V_P2P_DEADLOCK] = "P2P_DEADLOCK",
		[NW_V_MISMATCH] = "MISMATCH",
		[NW_V_INIT_STALL] = "INIT_STALL",
		[NW_V_GPU_FAULT] = "GPU_FAULT",
	};
	return kind >= 0 && kind < (int)(sizeof names / sizeof names[0]) ? names[kind] : "UNKNOWN";
}

/* DESIGN.md's hint column. */
const char *nw_verdict_hint(int kind)
{
	switch (kind) {
	case NW_V_MISSING_RANK:
		return "the code path differs on those ranks";
	case NW_V_TRANSPORT_STALL:
		return "P2P or NVLink trouble: try NCCL_P2P_DISABLE=1 to confirm, NCCL_P2P_LEVEL=NVL, "
		       "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P,NET; compare driver versions across ranks";
	case NW_V_P2P_UNMATCHED:
	case NW_V_P2P_DEADLOCK:
		return "pipeline schedule mismatch";
	case NW_V_INIT_STALL:
		return "launch, rendezvous address, network interface";
	case NW_V_GPU_FAULT:
		return "Xid / ECC; the error string";
	case NW_V_IDLE:
		return "compile / data loading / checkpoint";
	default:
		return "";
	}
}

int nw_analysis_worst(const struct nw_analysis *a)
{
	int w = NW_V_HEALTHY;
	for (size_t j = 0; j < a->njobs; j++)
		for (size_t i = 0; i < a->jobs[j].nverdicts; i++)
			if (a->jobs[j].verdicts[i].kind > w)
				w = a->jobs[j].verdicts[i].kind;
	return w;
}

/* ---- building verdicts ---- */

struct nw_vwork *nw_verdict_new(struct nw_jctx *x, int kind, const struct nw_comm_view *view,
                                uint16_t op_kind, uint64_t seq)
{
	if (x->nvw == x->capvw) {
		size_t cap = x->capvw ? x->capvw * 2 : 8;
		struct nw_vwork **v = realloc(x->vw, cap * sizeof *v);
		if (!v) {
			x->oom = 1;
			return NULL;
		}
		x->vw = v;
		x->capvw = cap;
	}
	struct nw_vwork *w = calloc(1, sizeof *w);
	if (!w) {
		x->oom = 1;
		return NULL;
	}
	w->v.kind = kind;
	w->v.comm_id = view ? view->id : 0;
	w->v.comm_nranks = view ? view->nranks : 0;
	w->v.op_kind = op_kind;
	w->v.seq = seq;
	w->v.hint = nw_verdict_hint(kind);
	x->vw[x->nvw++] = w;
	return w;
}

void nw_verdict_summary(struct nw_jctx *x, struct nw_vwork *w, const char *fmt, ...)
{
	struct nw_buf b = { 0 };
	va_list ap;
	va_start(ap, fmt);
	nw_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	char *s = nw_buf_take(&b);
	if (!s) {
		x->oom = 1;
		return;
	}
	free(w->v.summary);
	w->v.summary = s;
}

static void add_evidence(struct nw_jctx *x, struct nw_vwork *w, char *line)
{
	if (!line) {
		x->oom = 1;
		return;
	}
	char **e = realloc(w->v.evidence, (w->v.nevidence + 1) * sizeof *e);
	if (!e) {
		free(line);
		x->oom = 1;
		return;
	}
	w->v.evidence = e;
	e[w->v.nevidence++] = line;
}

void nw_verdict_evidence(struct nw_jctx *x, struct nw_vwork *w, const char *fmt, ...)
{
	struct nw_buf b = { 0 };
	va_list ap;
	va_start(ap, fmt);
	nw_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	add_evidence(x, w, nw_buf_take(&b));
}

void nw_verdict_evidence_flush(struct nw_jctx *x, struct nw_vwork *w)
{
	if (w->ev.len || w->ev.oom)
		add_evidence(x, w, nw_buf_take(&w->ev));
}

void nw_verdict_blame(struct nw_jctx *x, struct nw_vwork *w, uint32_t node)
{
	if (w->nblame == w->capblame) {
		size_t cap = w->capblame ? w->capblame * 2 : 8;
		uint32_t *b = realloc(w->blame, cap * sizeof *b);
		if (!b) {
			x->oom = 1;
			return;
		}
		w->blame = b;
		w->capblame = cap;
	}
	w->blame[w->nblame++] = node;
}

void nw_set_add(struct nw_jctx *x, struct nw_rankset *s, int32_t rank)
{
	if (rank >= 0 && nw_rankset_add(s, rank))
		x->oom = 1;
}

void nw_verdict_culprit(struct nw_jctx *x, struct nw_vwork *w, const struct nw_proc *p)
{
	nw_set_add(x, &w->v.culprits, p->rank);
	nw_verdict_blame(x, w, p->job_index);
}

void nw_verdict_waiting(struct nw_jctx *x, struct nw_vwork *w, const struct nw_proc *p)
{
	nw_set_add(x, &w->v.waiting, p->rank);
}

static void vwork_free(struct nw_vwork *w)
{
	nw_rankset_free(&w->v.culprits);
	nw_rankset_free(&w->v.waiting);
	nw_rankset_free(&w->v.unknown);
	free(w->v.summary);
	for (size_t i = 0; i < w->v.nevidence; i++)
		free(w->v.evidence[i]);
	free(w->v.evidence);
	free(w->blame);
	nw_buf_free(&w->ev);
	free(w);
}

/* ---- evidence grouped across ranks ---- */

struct nw_egroup {
	char *text;
	uint64_t age_lo, age_hi;
	struct nw_rankset ranks;
	size_t others;                  /* processes without a global rank */
	char other[128];                /* the first of them */
	UT_hash_handle hh;
};

char *nw_age_fill(const char *text, uint64_t lo, uint64_t hi)
{
	struct nw_buf b = { 0 };
	char l[32], h[32];
	nw_fmt_age(lo, l);
	nw_fmt_age(hi, h);
	const char *ls = strrchr(l, ' '), *hs = strrchr(h, ' ');
	for (const char *t = text; *t; t++) {
		if (*t != NW_AGE[0]) {
			nw_buf_printf(&b, "%c", *t);
		} else if (lo == NW_NO_AGE) {
			nw_buf_puts(&b, "?");
		} else if (!strcmp(l, h)) {
			nw_buf_puts(&b, l);
		} else if (ls && hs && !strcmp(ls, hs)) {
			nw_buf_printf(&b, "%.*s-%s", (int)(ls - l), l, h);   /* "1.9-2.0 s" */
		} else {
			nw_buf_printf(&b, "%s-%s", l, h);
		}
	}
	return nw_buf_take(&b);
}

void nw_eg_add(struct nw_jctx *x, struct nw_egroups *eg, const struct nw_proc *p, const char *text,
               uint64_t age)
{
	struct nw_egroup *g;
	HASH_FIND_STR(eg->h, text, g);
	if (!g) {
		if (eg->n == eg->cap) {
			size_t cap = eg->cap ? eg->cap * 2 : 8;
			struct nw_egroup **o = realloc(eg->order, cap * sizeof *o);
			if (!o) {
				x->oom = 1;
				return;
			}
			eg->order = o;
			eg->cap = cap;
		}
		if (!(g = calloc(1, sizeof *g)) || !(g->text = strdup(text))) {
			free(g);
			x->oom = 1;
			return;
		}
		g->age_lo = NW_NO_AGE;
		g->age_hi = 0;
		HASH_ADD_KEYPTR(hh, eg->h, g->text, strlen(g->text), g);
		if (nw_hash_oom_taken()) {
			free(g->text);
			free(g);
			x->oom = 1;
			return;
		}
		eg->order[eg->n++] = g;
	}
	if (age != NW_NO_AGE) {
		if (age < g->age_lo)
			g->age_lo = age;
		if (age > g->age_hi)
			g->age_hi = age;
	}
	if (p->rank >= 0)
		nw_set_add(x, &g->ranks, p->rank);
	else if (g->others++ == 0)
		nw_proc_label(p, g->other);
}

void nw_eg_flush(struct nw_jctx *x, struct nw_vwork *w, struct nw_egroups *eg, size_t max)
{
	for (size_t i = 0; i < eg->n; i++) {
		struct nw_egroup *g = eg->order[i];
		if (i < max) {
			if (g->ranks.n) {
				nw_buf_puts(&w->ev, g->ranks.n == 1 ? "rank " : "ranks ");
				nw_buf_rankset(&w->ev, &g->ranks);
				if (g->others)
					nw_buf_printf(&w->ev, " and %zu process%s without rank", g->others,
					              g->others == 1 ? "" : "es");
			} else if (g->others == 1) {
				nw_buf_puts(&w->ev, g->other);
			} else {
				nw_buf_printf(&w->ev, "%zu processes without rank", g->others);
			}
			char *t = nw_age_fill(g->text, g->age_lo, g->age_hi);
			if (!t)
				x->oom = 1;
			nw_buf_printf(&w->ev, ": %s", t ? t : "");
			free(t);
			nw_verdict_evidence_flush(x, w);
		}
		HASH_DEL(eg->h, g);
		nw_rankset_free(&g->ranks);
		free(g->text);
		free(g);
	}
	if (eg->n > max)
		nw_verdict_evidence(x, w, "... %zu more groups", eg->n - max);
	free(eg->order);
	memset(eg, 0, sizeof *eg);
}

/* ---- communicator helpers ---- */

int nw_view_identity(const struct nw_comm_view *v)
{
	int any = 0;
	for (int32_t r = 0; r < v->nranks; r++) {
		const struct nw_proc *p = v->members[r].proc;
		if (!p)
			continue;
		if (p->rank != r)
			return 0;
		any = 1;
	}
	return any;
}

void nw_view_unknown(struct nw_jctx *x, const struct nw_comm_view *v, struct nw_vwork *w)
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
		nw_buf_puts(&w->ev, cranks.n == 1 ? "comm rank " : "comm ranks ");
		nw_buf_rankset(&w->ev, &cranks);
		nw_buf_puts(&w->ev, ": no file (their global ranks are not known)");
		nw_verdict_evidence_flush(x, w);
	}
	nw_rankset_free(&cranks);
}

uint32_t nw_member_slot(const struct nw_member *m)
{
	return (uint32_t)(m->comm - m->proc->comms);
}

void nw_member_ops(struct nw_jctx *x, const struct nw_member *m, uint32_t **idx, size_t *n)
{
	const struct nw_pctx *pc = &x->pc[m->proc->job_index];
	uint32_t s = nw_member_slot(m);
	*idx = pc->order + pc->slot_off[s];
	*n = pc->slot_off[s + 1] - pc->slot_off[s];
}

static int op_class(uint16_t kind)
{
	return NW_OP_IS_COLL(kind) ? 0 : NW_OP_IS_P2P(kind) ? 1 : 2;
}

const struct nw_seg_op *nw_member_coll(struct nw_jctx *x, const struct nw_member *m, uint64_t seq)
{
	uint32_t *idx;
	size_t n;
	nw_member_ops(x, m, &idx, &n);
	const struct nw_seg_op *ops = m->proc->ops, *found = NULL;
	/* Collectives come first in a slot's range, sorted by seq. */
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct nw_seg_op *o = &ops[idx[mid]];
		if (op_class(o->kind) == 0 && o->seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n; lo++) {
		const struct nw_seg_op *o = &ops[idx[lo]];
		if (op_class(o->kind) != 0 || o->seq != seq)
			break;
		if (o->state != NW_ST_DISCARDED)
			found = o;   /* the newest ticket of that seq */
	}
	return found;
}

const struct nw_seg_peer *nw_proc_peer(const struct nw_proc *p, uint32_t slot, int32_t peer)
{
	size_t lo = 0, hi = p->npeers;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct nw_seg_peer *e = &p->peers[mid];
		if (e->comm_slot < slot || (e->comm_slot == slot && e->peer < peer))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->npeers && p->peers[lo].comm_slot == slot && p->peers[lo].peer == peer)
		return &p->peers[lo];
	return NULL;
}

/* ---- where a process is ---- */

const struct nw_seg_op *nw_previous_work(const struct nw_proc *p, const struct nw_seg_op *op)
{
	const struct nw_seg_op *found = NULL;
	for (size_t i = 0; i < p->nops; i++) {
		const struct nw_seg_op *o = &p->ops[i];
		if (o == op || o->commit >= op->commit)
			break;
		if (o->stream == op->stream && (NW_OP_IS_COLL(o->kind) || NW_OP_IS_P2P(o->kind)) &&
		    (nw_op_pending(o->state) || o->state == NW_ST_FAILED) &&
		    !(o->group_id && o->group_id == op->group_id))
			found = o;
	}
	return found;
}

const struct nw_comm_view *nw_view_of(struct nw_jctx *x, uint64_t id)
{
	struct nw_comm_view *v;
	HASH_FIND(hh, x->job->comms, &id, sizeof id, v);
	return v;
}

/* "AllReduce #5 on comm X", "Send #3 to rank 6 on comm X", "CommInit of comm X". */
void nw_describe_op(struct nw_jctx *x, const struct nw_seg_op *op, struct nw_buf *b)
{
	char kb[NW_NAME_BUF], cb[128];
	const struct nw_comm_view *v = nw_view_of(x, op->comm_id);
	const char *kind = nw_op_kind_name(op->kind, kb);
	const char *comm = nw_comm_label(op->comm_id, v ? v->name : NULL, cb);
	if (NW_OP_IS_COLL(op->kind)) {
		nw_buf_printf(b, "%s #%" PRIu64 " on %s", kind, op->seq, comm);
	} else if (NW_OP_IS_P2P(op->kind)) {
		const struct nw_proc *peer = v && op->root >= 0 && op->root < v->nranks ? v->members[op->root].proc
		                                                                       : NULL;
		char pb[128];
		nw_buf_printf(b, "%s #%" PRIu64 " %s %s on %s", kind, op->seq, op->kind == NW_OP_SEND ? "to" : "from",
		              peer ? nw_proc_label(peer, pb) : "comm rank", comm);
		if (!peer)
			nw_buf_printf(b, " (comm rank %d)", (int)op->root);
	} else if (op->comm_id) {
		nw_buf_printf(b, "%s of %s", kind, comm);
	} else {
		nw_buf_puts(b, kind);
	}
}

uint64_t nw_where(struct nw_jctx *x, const struct nw_proc *p, struct nw_buf *b, int with_stack)
{
	uint64_t age = NW_NO_AGE;
	char sb[NW_NAME_BUF];
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
	if (stuck) {
		nw_buf_puts(b, stuck->state == NW_ST_INIT_ENTERED ? "inside " : "in ");
		nw_describe_op(x, stuck, b);
		nw_buf_printf(b, " (%s for " NW_AGE ")", nw_op_state_name(stuck->state, sb));
		age = nw_age(p, stuck->enqueue_ns);
	} else if (last) {
		nw_buf_puts(b, "last NCCL call ");
		nw_describe_op(x, last, b);
		nw_buf_printf(b, " (%s)", nw_op_state_name(last->state, sb));
	} else {
		nw_buf_puts(b, "no NCCL op recorded");
	}
	if (!stuck) {
		uint64_t idle = nw_age(p, p->last_activity_ns);
		if (idle > x->timeout_ns) {
			nw_buf_puts(b, "; idle: no NCCL call for " NW_AGE);
			age = idle;
		}
	}
	if (p->alive == 0)
		nw_buf_puts(b, (p->hdr.flags & NW_SEG_F_EXITED) ? "; exited" : "; process gone");
	else if (p->hdr.flags & NW_SEG_F_EXITED)
		nw_buf_puts(b, p->alive > 0 ? "; exiting" : "; exited");
	if ((p->hdr.flags & (NW_SEG_F_EXITED | NW_SEG_F_EXIT_STATUS)) == (NW_SEG_F_EXITED | NW_SEG_F_EXIT_STATUS))
		nw_buf_printf(b, " with status %d", (int)p->hdr.exit_status);
	if (with_stack) {
		const struct nw_thread_stack *t = nw_main_thread(p);
		if (t) {
			nw_buf_puts(b, "; main thread: ");
			nw_buf_frames(b, t, 8);
		}
	}
	return age;
}

/* ---- the pass ---- */

static int cmp_order(const void *a, const void *b, void *arg)
{
	const struct nw_proc *p = arg;
	const struct nw_seg_op *x = &p->ops[*(const uint32_t *)a], *y = &p->ops[*(const uint32_t *)b];
	uint32_t sx = x->comm_slot < p->ncomms ? x->comm_slot : p->ncomms;
	uint32_t sy = y->comm_slot < p->ncomms ? y->comm_slot : p->ncomms;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	int cx = op_class(x->kind), cy = op_class(y->kind);
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

/* The index of the process with global rank `rank` (procs are sorted by
 * rank), or nprocs. */
static size_t proc_by_rank(const struct nw_job *job, int32_t rank)
{
	size_t lo = 0, hi = job->nprocs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((uint32_t)job->procs[mid]->rank < (uint32_t)rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < job->nprocs && job->procs[lo]->rank == rank ? lo : job->nprocs;
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
				size_t at = proc_by_rank(x->job, rs->v[k]);
				if (at < x->job->nprocs)
					explained[at] = 1;
			}
		}
	}
	return x->oom ? -1 : 0;
}

static size_t concerned(const struct nw_verdict *v)
{
	return (size_t)v->culprits.n + v->waiting.n + v->unknown.n;
}

static int cmp_verdict(const void *a, const void *b)
{
	const struct nw_verdict *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind > y->kind ? -1 : 1;
	size_t cx = concerned(x), cy = concerned(y);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	if (x->comm_id != y->comm_id)
		return x->comm_id < y->comm_id ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	uint32_t fx = x->culprits.n ? (uint32_t)x->culprits.v[0] : UINT32_MAX;
	uint32_t fy = y->culprits.n ? (uint32_t)y->culprits.v[0] : UINT32_MAX;
	return fx < fy ? -1 : fx > fy;
}

static void ctx_free(struct nw_jctx *x)
{
	for (size_t i = 0; i < x->nvw; i++)
		vwork_free(x->vw[i]);
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
	nw_graph_free(&x->g);
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

	nw_rules_fault(&x);
	nw_rules_init(&x);
	nw_rules_coll(&x);
	nw_rules_p2p(&x);
	if (x.oom || nw_graph_freeze(&x.g))
		goto fail;
	nw_rules_p2p_verdicts(&x);
	nw_rules_stream(&x);
	if (x.oom)
		goto fail;
	uint8_t *explained = calloc(job->nprocs + 1, 1);
	if (!explained || fill_waiting(&x, explained)) {
		free(explained);
		goto fail;
	}
	nw_rules_unexplained(&x, explained);
	free(explained);
	nw_rules_idle(&x);
	if (x.oom)
		goto fail;

	/* The public array, ranked. */
	size_t n = 0;
	for (size_t i = 0; i < x.nvw; i++)
		n += !x.vw[i]->dropped;
	job->verdicts = calloc(n ? n : 1, sizeof *job->verdicts);
	if (!job->verdicts)
		goto fail;
	for (size_t i = 0; i < x.nvw; i++) {
		struct nw_vwork *w = x.vw[i];
		if (w->dropped)
			continue;
		if (!w->v.summary)
			w->v.summary = strdup("");
		job->verdicts[job->nverdicts++] = w->v;
		memset(&w->v, 0, sizeof w->v);   /* moved */
	}
	qsort(job->verdicts, job->nverdicts, sizeof *job->verdicts, cmp_verdict);
	ctx_free(&x);
	return 0;
fail:
	ctx_free(&x);
	return -1;
}
