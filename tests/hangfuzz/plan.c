/* The hang generator's plan and oracle (plan.h). Only the seed decides:
 * every rank of a job and the harness that judges it build the same plan.
 */
#include "plan.h"

#include <nccl.h>
#include <string.h>

/* splitmix64: small, good enough, the same everywhere. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}
static int pick(uint64_t *s, int n) { return (int)(next(s) % (uint64_t)n); }

static const char *const fault_names[HF_NFAULTS] = {
	[HF_NONE] = "none", [HF_SKIP] = "skip", [HF_EXTRA] = "extra", [HF_COUNT] = "count",
	[HF_DTYPE] = "dtype", [HF_ROOT] = "root", [HF_ORDER] = "order", [HF_SEND_PEER] = "send-peer",
	[HF_RECV_PEER] = "recv-peer", [HF_DIE_BEFORE] = "die-before", [HF_DIE_INSIDE] = "die-inside",
	[HF_EXIT] = "exit", [HF_EXIT_DESTROY] = "exit-destroy", [HF_SLEEP] = "sleep", [HF_LOCK] = "lock",
	[HF_HOSTFN] = "hostfn", [HF_REDOP] = "redop", [HF_G_SKIP] = "graph-skip", [HF_G_OTHER] = "graph-other",
	[HF_G_HOSTFN] = "graph-hostfn", [HF_G_NOLAUNCH] = "graph-nolaunch", [HF_G_DIE] = "graph-die",
	[HF_G_PEER] = "graph-peer", [HF_KIND] = "kind", [HF_DIE_GROUP] = "die-group",
	[HF_NOSPLIT] = "nosplit",
};
const char *hf_fault_name(enum hf_fault f) { return f < HF_NFAULTS ? fault_names[f] : "?"; }

const char *hf_gdev_name(const struct hf_plan *p)
{
	static const char *const other[] = { "count", "dtype", "redop", "order" }, *const peer[] = { "recv", "send" };
	if (p->fault == HF_G_OTHER && p->gdev >= 0 && p->gdev < 4)
		return other[p->gdev];
	if (p->fault == HF_G_PEER && p->gdev >= 0 && p->gdev < 2)
		return peer[p->gdev];
	return "-";
}

const char *hf_comm_name(enum hf_comm c)
{
	static const char *const n[HF_NCOMMS] = { "world", "tp", "dp" };
	return c < HF_NCOMMS ? n[c] : "?";
}

const char *hf_op_name(enum hf_op_kind k)
{
	static const char *const n[] = { "AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter",
	                                  "ring send/recv (group)", "pipeline stage send/recv (no group)" };
	return k <= HF_PIPE ? n[k] : "?";
}

/* ---- membership: TP groups are consecutive ranks, DP groups the same TP
 * position ------------------------------------------------------------------ */

static int comm_exists(const struct hf_plan *p, enum hf_comm c)
{
	return c == HF_WORLD || (c == HF_TP && p->tp) || (c == HF_DP && p->dp);
}

/* Is r left out of c's split (NCCL_SPLIT_NOCOLOR)? */
static int left_out(const struct hf_plan *p, enum hf_comm c, int r)
{
	return c == HF_TP && p->tp_nocolor && r >= p->nranks - p->tp;
}

int hf_color(const struct hf_plan *p, enum hf_comm c, int r)
{
	if (!comm_exists(p, c) || left_out(p, c, r))
		return NCCL_SPLIT_NOCOLOR;
	return c == HF_TP ? r / p->tp : c == HF_DP ? r % p->tp : 0;
}

int hf_comm_rank(const struct hf_plan *p, enum hf_comm c, int r)
{
	if (!comm_exists(p, c) || left_out(p, c, r))
		return -1;
	return c == HF_TP ? r % p->tp : c == HF_DP ? r / p->tp : r;
}

int hf_comm_size(const struct hf_plan *p, enum hf_comm c, int r)
{
	(void)r; /* every group of a split has the same size here */
	if (!comm_exists(p, c))
		return 0;
	return c == HF_TP ? p->tp : c == HF_DP ? p->nranks / p->tp : p->nranks;
}

/* ---- building -------------------------------------------------------------- */

static void build_shape(struct hf_plan *p, uint64_t *s, int nranks)
{
	int chosen = 2 + pick(s, 7); /* drawn either way: the rest of the plan follows the seed alone */
	p->nranks = nranks > 0 ? nranks : chosen;
	int div[HF_MAX_RANKS], nd = 0;
	for (int g = 2; g < p->nranks + p->wide; g++) /* wide: a tp group may span the world */
		if (p->nranks % g == 0)
			div[nd++] = g;
	p->tp = nd && pick(s, 10) < 6 ? div[pick(s, nd)] : 0;
	p->dp = p->tp && pick(s, 2) && p->tp < p->nranks;
	p->nstreams = pick(s, 10) < 3 ? 2 : 1;
	p->warm = 2 + pick(s, 3);
}

static void build_step(struct hf_plan *p, uint64_t *s)
{
	enum hf_comm avail[HF_NCOMMS];
	int na = 0;
	for (int c = 0; c < HF_NCOMMS; c++)
		if (comm_exists(p, (enum hf_comm)c))
			avail[na++] = (enum hf_comm)c;
	int before = 1 + pick(s, na < 3 ? na : 3);
	p->nops = 0;
	for (int i = 0; i < before; i++) { /* each comm once among them: shuffle */
		int k = i + pick(s, na - i);
		enum hf_comm t = avail[i];
		avail[i] = avail[k], avail[k] = t;
		struct hf_op *o = &p->ops[p->nops++];
		o->comm = avail[i];
		int kind = pick(s, HF_RING + 3); /* rings three times as likely as each collective */
		o->kind = kind > HF_RING ? HF_RING : (enum hf_op_kind)kind;
		o->root = pick(s, hf_comm_size(p, o->comm, 0));
		o->stream = p->nstreams > 1 ? pick(s, 2) : 0;
	}
	/* the step closes with the world's AllReduce on the main stream (the
	 * loss), so every rank's step depends on every other's */
	p->ops[p->nops++] = (struct hf_op){ HF_WORLD, HF_ALLREDUCE, 0, 0 };
}

/* Processes that drive several ranks (JAX: one process per host for all
 * its GPUs), from a stream of their own so that the rest of a seed's plan
 * does not change with them. One job in three where the size allows. */
static void build_processes(struct hf_plan *p, uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 7;
	p->rpp = 1;
	p->threaded = 0;
	if (pick(&s, 3) != 0 || p->nranks < 4 || p->nranks % 2)
		return;
	p->rpp = p->nranks == 8 && pick(&s, 2) ? 4 : 2;
	p->threaded = pick(&s, 2);
}

static int is_p2p(enum hf_op_kind k) { return k == HF_RING || k == HF_PIPE; }

/* The wide jobs' shapes (HF_WIDE_SEEDS), from a stream of their own: the
 * last tp group left out of the split, one job in 3 with 2 tp groups or
 * more; the split comms re-created every step, one job in 3 with a split. */
static void build_wide_shape(struct hf_plan *p, uint64_t seed)
{
	uint64_t s = seed * 0xe7037ed1a0b428dbULL + 31;
	p->tp_nocolor = p->tp && p->tp < p->nranks && pick(&s, 3) == 0;
	p->resplit = (p->tp || p->dp) && pick(&s, 3) == 0;
}

/* Can fault f hit op j with victim v? Each condition is what makes the
 * construction's answer the only right one: a mismatch or a deviating
 * order needs a majority (3 or more ranks) to be told from the rest. */
static int applicable(const struct hf_plan *p, enum hf_fault f, int j, int v)
{
	const struct hf_op *o = &p->ops[j];
	int size = hf_comm_size(p, o->comm, v);
	int last = j == p->nops - 1;
	if (f != HF_NONE && hf_comm_rank(p, o->comm, v) < 0)
		return 0; /* the victim is no member of op j's comm: it never issues op j */
	switch (f) {
	case HF_NONE: case HF_SKIP: case HF_DIE_BEFORE: case HF_EXIT: case HF_EXIT_DESTROY:
	case HF_SLEEP: case HF_LOCK: case HF_HOSTFN:
		return 1;
	case HF_EXTRA:
		return p->nranks >= 3;
	case HF_COUNT: case HF_DTYPE:
		return !is_p2p(o->kind) && size >= 3;
	case HF_ROOT:
		return (o->kind == HF_BROADCAST || o->kind == HF_REDUCE) && size >= 3;
	case HF_ORDER: /* not where one thread issues each op for all its ranks in one group:
	                * the two ops of the victim then share a group, whose ops progress
	                * together (no order between them, as in NCCL's fused launch) */
		return !last && o->comm != HF_WORLD && !is_p2p(o->kind) && o->stream == 0 &&
		       (p->nranks >= 3 || p->wide) && !(p->rpp > 1 && !p->threaded);
	case HF_SEND_PEER: case HF_RECV_PEER:
		return o->kind == HF_RING && size >= 3;
	case HF_DIE_INSIDE: /* wide: a grouped ring too (its halves started) */
		return !is_p2p(o->kind) || (p->wide && o->kind == HF_RING);
	case HF_KIND:
		return p->wide && !is_p2p(o->kind) && size >= 3;
	case HF_DIE_GROUP:
		return p->wide && o->kind == HF_RING;
	case HF_REDOP:
		return (o->kind == HF_ALLREDUCE || o->kind == HF_REDUCE || o->kind == HF_REDUCESCATTER) && size >= 3;
	default:
		return 0;
	}
}

static int is_reduction(enum hf_op_kind k) { return k == HF_ALLREDUCE || k == HF_REDUCE || k == HF_REDUCESCATTER; }

/* Can graph fault f (with deviation gdev) hit the plan's graph? *op: the
 * graph's op that differs (HF_G_OTHER but order, HF_G_PEER), drawn from s.
 * As for eager faults, a mismatch needs a majority (3 or more ranks). */
static int graph_fits(const struct hf_plan *p, enum hf_fault f, int gdev, int *op, uint64_t *s)
{
	int fits[HF_MAX_OPS], nf = 0;
	const struct hf_op *a = &p->ops[p->g0], *b = &p->ops[p->g1];
	switch (f) {
	case HF_G_SKIP: case HF_G_HOSTFN: case HF_G_DIE:
		return 1;
	case HF_G_NOLAUNCH: /* a capture of its own at the fault step */
		return p->graph == HF_GRAPH_PER_STEP;
	case HF_G_OTHER:
		if (gdev == HF_GD_ORDER) /* the graph's first and last op swapped: a cycle */
			return p->g1 > p->g0 && !is_p2p(a->kind) && !is_p2p(b->kind) && a->comm != b->comm &&
			       p->nranks >= 3;
		for (int j = p->g0; j <= p->g1; j++) {
			const struct hf_op *o = &p->ops[j];
			if (hf_comm_size(p, o->comm, 0) >= 3 && !is_p2p(o->kind) &&
			    (gdev != HF_GD_REDOP || is_reduction(o->kind)))
				fits[nf++] = j;
		}
		break;
	case HF_G_PEER:
		for (int j = p->g0; j <= p->g1; j++)
			if (p->ops[j].kind == HF_RING && hf_comm_size(p, p->ops[j].comm, 0) >= 3)
				fits[nf++] = j;
		break;
	default:
		return 0;
	}
	if (nf)
		*op = fits[pick(s, nf)];
	return nf > 0;
}

/* A graph job (seeds from HF_GRAPH_SEEDS on): ops g0..g1 of the step go
 * into a CUDA graph, and a graph fault (or none) replaces the eager one.
 * Processes of several ranks run a thread per rank, each capturing its own
 * rank's ops, or (HF_ONE_THREAD_SEEDS on) one thread that captures and
 * launches a graph per rank. */
static void build_graph(struct hf_plan *p, uint64_t seed)
{
	uint64_t s = seed * 0xa0761d6478bd642fULL + 22;
	p->graph = pick(&s, 2) ? HF_GRAPH_REPLAY : HF_GRAPH_PER_STEP;
	p->g0 = pick(&s, p->nops - 1);
	p->g1 = p->g0 + pick(&s, p->nops - 1 - p->g0);
	for (int j = p->g0; j <= p->g1; j++)
		p->ops[j].stream = 0;
	if (p->rpp > 1)
		p->threaded = 1;
	/* from a stream of its own: the plans of seeds pinned before it stay */
	uint64_t sc = seed * 0x9e3779b97f4a7c15ULL + 23;
	p->serial_capture = p->rpp > 1 && pick(&sc, 2);
	/* One thread drives all the ranks of its process (JAX/XLA: a command
	 * buffer per device, one thread; single-process multi-GPU programs):
	 * one job in 2 with processes of several ranks, from HF_ONE_THREAD_SEEDS
	 * on, from a stream of its own (the seeds judged before keep their plans). */
	uint64_t ot = seed * 0xbf58476d1ce4e5b9ULL + 24;
	if (seed >= HF_ONE_THREAD_SEEDS && p->rpp > 1 && pick(&ot, 2)) {
		p->threaded = 0, p->serial_capture = 0;
		p->rank_major = pick(&ot, 2);
		p->launch_reversed = pick(&ot, 2);
	}
	p->fault = HF_NONE, p->victim = -1, p->at = 0, p->gop = p->g0, p->gdev = 0;
	if (pick(&s, 8) == 0)
		return;
	for (int k = 0; k < 64 && p->fault == HF_NONE; k++) {
		enum hf_fault f = (enum hf_fault)(HF_G_SKIP + pick(&s, HF_G_LAST + 1 - HF_G_SKIP));
		int gdev = f == HF_G_OTHER ? pick(&s, 4) : f == HF_G_PEER ? pick(&s, 2) : 0, op = p->g0;
		if (graph_fits(p, f, gdev, &op, &s))
			p->fault = f, p->gdev = gdev, p->gop = op, p->victim = pick(&s, p->nranks), p->at = p->g0;
	}
	if (p->fault == HF_NONE) /* always fits */
		p->fault = HF_G_SKIP, p->victim = 0, p->at = p->g0;
}

int hf_plan_build(struct hf_plan *p, uint64_t seed, int nranks)
{
	uint64_t s = seed * 0x2545f4914f6cdd1dULL + 1;
	memset(p, 0, sizeof *p);
	p->seed = seed;
	p->wide = seed >= HF_WIDE_SEEDS;
	build_shape(p, &s, nranks);
	if (p->wide)
		build_wide_shape(p, seed);
	build_step(p, &s);
	build_processes(p, seed); /* a stream of its own: before the fault, which depends on it */
	/* one seed in 8 healthy; otherwise a random fault that fits */
	p->fault = HF_NONE;
	p->victim = -1;
	if (pick(&s, 8) != 0) {
		/* a fault first, then an op it fits: every kind of fault
		 * as likely as the next wherever the shape allows it */
		/* wide jobs: the menu and its new kinds */
		static const enum hf_fault wide[] = { HF_KIND, HF_DIE_GROUP };
		int nmenu = HF_NDRAWN - 1 + (p->wide ? (int)(sizeof wide / sizeof wide[0]) : 0);
		for (int k = 0; k < 64 && p->fault == HF_NONE; k++) {
			int m = pick(&s, nmenu);
			enum hf_fault f = m < HF_NDRAWN - 1 ? (enum hf_fault)(1 + m) : wide[m - (HF_NDRAWN - 1)];
			int fits[HF_MAX_OPS], nf = 0, v = pick(&s, p->nranks);
			for (int j = 0; j < p->nops; j++)
				if (applicable(p, f, j, v))
					fits[nf++] = j;
			if (nf)
				p->fault = f, p->at = fits[pick(&s, nf)], p->victim = v;
		}
		if (p->fault == HF_NONE) /* always fits: skip the closing op */
			p->fault = HF_SKIP, p->at = p->nops - 1, p->victim = 0;
	}
	/* A pipeline stage instead of a grouped ring, from a stream of its own
	 * (no other seed's plan changes; the salt spares the seeds of
	 * test-hangfuzz-seeds.sh): one seed in 6 with a ring whose fault, if
	 * it is at that ring, fits a pipeline too. */
	uint64_t q = seed * 0x9fb21c651e98df25ULL + 95;
	if (pick(&q, 6) == 0) {
		int rings[HF_MAX_OPS], nr = 0;
		for (int j = 0; j < p->nops; j++) {
			if (p->ops[j].kind != HF_RING)
				continue;
			p->ops[j].kind = HF_PIPE;
			if (p->fault == HF_NONE || j != p->at || applicable(p, p->fault, j, p->victim))
				rings[nr++] = j;
			p->ops[j].kind = HF_RING;
		}
		if (nr)
			p->ops[rings[pick(&q, nr)]].kind = HF_PIPE;
	}
	/* A wrong reduction op, from a stream of its own so that adding it
	 * changed no other seed's plan (a seed it takes is redop now: about 6%;
	 * the salt spares the seeds of test-hangfuzz-seeds.sh): one seed in 12
	 * where a reduction of 3 or more ranks is in the step. */
	uint64_t r = seed * 0xd1342543de82ef95ULL + 20;
	if (pick(&r, 12) == 0) {
		int v = pick(&r, p->nranks), fits[HF_MAX_OPS], nf = 0;
		for (int j = 0; j < p->nops; j++)
			if (applicable(p, HF_REDOP, j, v))
				fits[nf++] = j;
		if (nf)
			p->fault = HF_REDOP, p->at = fits[pick(&r, nf)], p->victim = v;
	}
	/* Wide jobs: a mismatch on a comm of 2 ranks made once (no majority:
	 * the comm's history decides), from a stream of its own: one seed in 6
	 * where one fits; a split never made, one resplit job in 6. */
	uint64_t m = seed * 0x94d049bb133111ebULL + 63;
	if (p->wide && pick(&m, 6) == 0) {
		static const enum hf_fault mis[] = { HF_COUNT, HF_DTYPE, HF_ROOT, HF_KIND };
		enum hf_fault f = mis[pick(&m, 4)];
		int v = pick(&m, p->nranks), fits[HF_MAX_OPS], nf = 0;
		for (int j = 0; j < p->nops; j++) {
			const struct hf_op *o = &p->ops[j];
			if (hf_comm_size(p, o->comm, v) == 2 && hf_comm_rank(p, o->comm, v) >= 0 && !is_p2p(o->kind) &&
			    (o->comm == HF_WORLD || !p->resplit) &&
			    (f != HF_ROOT || o->kind == HF_BROADCAST || o->kind == HF_REDUCE))
				fits[nf++] = j;
		}
		if (nf)
			p->fault = f, p->at = fits[pick(&m, nf)], p->victim = v;
	}
	if (p->wide && p->resplit && pick(&m, 6) == 0)
		p->fault = HF_NOSPLIT, p->at = 0, p->victim = pick(&m, p->nranks);
	/* Wide jobs: an order swap (rare on the menu: it needs a split's
	 * collective on stream 0 before the closing op), from a stream of its
	 * own: one seed in 6 where it fits, 2-rank jobs and pair comms too. */
	uint64_t w = seed * 0x8ebc6af09c88c6e3ULL + 57;
	if (p->wide && pick(&w, 6) == 0) {
		int v = pick(&w, p->nranks), fits[HF_MAX_OPS], nf = 0;
		for (int j = 0; j < p->nops; j++)
			if (applicable(p, HF_ORDER, j, v))
				fits[nf++] = j;
		if (nf)
			p->fault = HF_ORDER, p->at = fits[pick(&w, nf)], p->victim = v;
	}
	if (seed >= HF_GRAPH_SEEDS && !p->wide)
		build_graph(p, seed);
	p->count = p->fault == HF_COUNT || p->fault == HF_DTYPE ||
	           (p->fault == HF_G_OTHER && (p->gdev == HF_GD_COUNT || p->gdev == HF_GD_DTYPE)) ? 32768 : 4096;
	return 0;
}

/* ---- the oracle ------------------------------------------------------------ */

static int ring_from(const struct hf_plan *p, int j)
{
	for (int i = j; i < p->nops; i++)
		if (is_p2p(p->ops[i].kind))
			return 1;
	return 0;
}

static int comm_again(const struct hf_plan *p, int j)
{
	for (int i = j + 1; i < p->nops; i++)
		if (p->ops[i].comm == p->ops[j].comm)
			return 1;
	return 0;
}

int hf_fault_takes_process(const struct hf_plan *p)
{
	switch (p->fault) {
	case HF_DIE_BEFORE: case HF_DIE_INSIDE: case HF_EXIT: case HF_EXIT_DESTROY: case HF_G_DIE:
	case HF_DIE_GROUP:
		return 1;
	case HF_SLEEP: case HF_LOCK: case HF_NOSPLIT: /* the thread that drives the rank stops or skips */
		return !p->threaded;
	default:
		return 0;
	}
}

void hf_plan_answer(const struct hf_plan *p, struct hf_answer *a)
{
	memset(a, 0, sizeof *a);
	a->hangs = p->fault != HF_NONE;
	if (!a->hangs) {
		strcpy(a->kinds, "HEALTHY");
		strcpy(a->culprits, "-");
		return;
	}
	int first = p->victim - p->victim % p->rpp;
	if (p->rpp > 1 && hf_fault_takes_process(p))
		snprintf(a->culprits, sizeof a->culprits, "%d-%d", first, first + p->rpp - 1);
	else
		snprintf(a->culprits, sizeof a->culprits, "%d", p->victim);
	const char *k = "MISSING_RANK";
	const struct hf_op *o = &p->ops[p->at];
	switch (p->fault) {
	case HF_SKIP:
		/* a skipped op on a comm used again later in the step is
		 * matched with the next one: a mismatch when they differ */
		k = is_p2p(o->kind) ? "P2P_UNMATCHED,MISSING_RANK"
		    : comm_again(p, p->at) ? "MISSING_RANK,MISMATCH" : ring_from(p, p->at + 1) ? "MISSING_RANK,P2P_UNMATCHED" : "MISSING_RANK";
		break;
	case HF_EXTRA: k = "MISSING_RANK"; break;
	case HF_COUNT: case HF_DTYPE: a->may_complete = 1; /* fall through */
	case HF_ROOT: k = "MISMATCH"; break;
	case HF_ORDER:
		/* the closing world op moved before op j: if a world op lies between,
		 * the moved op takes its position on the world, a mismatch too */
		k = "STREAM_BLOCKED";
		for (int i = p->at; i < p->nops - 1; i++)
			if (p->ops[i].comm == HF_WORLD)
				k = "STREAM_BLOCKED,MISMATCH";
		break;
	case HF_SEND_PEER: case HF_RECV_PEER: k = "P2P_UNMATCHED"; break;
	case HF_KIND: k = "MISMATCH"; break;
	case HF_NOSPLIT: k = "INIT_STALL,MISSING_RANK"; break;
	case HF_HOSTFN: k = "STREAM_BLOCKED"; break;
	case HF_REDOP: /* nothing waits: the records' disagreement is the finding */
		k = "MISMATCH";
		a->hangs = 0;
		a->keep = 1;
		break;
	case HF_G_SKIP: case HF_G_NOLAUNCH:
		/* the victim's next ops on the graph's comms are matched with the
		 * peers' replay (NCCL orders a comm's ops as issued, eager or
		 * replayed): a mismatch where they differ; it launched the graph
		 * (its ops) one time fewer */
		k = ring_from(p, p->g0) ? "MISSING_RANK,MISMATCH,P2P_UNMATCHED" : "MISSING_RANK,MISMATCH";
		break;
	case HF_G_OTHER:
		if (p->gdev == HF_GD_REDOP) { /* completes, as the eager one */
			k = "MISMATCH";
			a->hangs = 0;
			a->keep = 1;
		} else if (p->gdev == HF_GD_ORDER) {
			k = "STREAM_BLOCKED,MISMATCH,MISSING_RANK";
		} else {
			k = "MISMATCH,MISSING_RANK";
			a->may_complete = 1;
		}
		break;
	case HF_G_HOSTFN: k = "STREAM_BLOCKED"; break;
	case HF_G_DIE: k = ring_from(p, p->g0) ? "MISSING_RANK,P2P_UNMATCHED" : "MISSING_RANK"; break;
	case HF_G_PEER: k = "P2P_UNMATCHED"; break;
	default: /* the rank is gone or idle before op j */
		/* a fault that takes a process of a thread per rank stops the
		 * victim's mates wherever their threads were in the fault step,
		 * before op j too (seed 202203: rank 3 had not posted the step's
		 * ring when rank 2 died before op 1) */
		k = ring_from(p, p->threaded && hf_fault_takes_process(p) ? 0 : p->at) ? "MISSING_RANK,P2P_UNMATCHED"
		                                                                     : "MISSING_RANK";
		break;
	}
	snprintf(a->kinds, sizeof a->kinds, "%s", k);
}

void hf_plan_describe(const struct hf_plan *p, FILE *f)
{
	fprintf(f, "seed %llu: %d ranks", (unsigned long long)p->seed, p->nranks);
	if (p->tp)
		fprintf(f, ", tp groups of %d%s%s%s", p->tp, p->tp == p->nranks ? " (one, the whole world)" : "",
		        p->tp_nocolor ? " (the last one passes NCCL_SPLIT_NOCOLOR)" : "", p->dp ? " and dp groups" : "");
	if (p->resplit)
		fprintf(f, ", split comms made and destroyed every step");
	if (p->rpp > 1 && !p->threaded && p->graph != HF_EAGER) {
		fprintf(f, ", %d processes of %d ranks (", p->nranks / p->rpp, p->rpp);
		for (int r = 0; r < p->nranks; r += p->rpp)
			fprintf(f, "%s %d-%d", r ? ", one" : "one thread drives ranks", r, r + p->rpp - 1);
		fprintf(f, ": ops grouped, a graph captured per rank %s, launched %s)",
		        p->rank_major ? "rank by rank in one group" : "op by op, a group each",
		        p->launch_reversed ? "last rank first" : "in rank order");
	} else if (p->rpp > 1) {
		fprintf(f, ", %d processes of %d ranks (%s)", p->nranks / p->rpp, p->rpp,
		        p->threaded ? (p->serial_capture ? "a thread per rank, capturing one at a time" : "a thread per rank")
		                    : "one thread, ops grouped");
	}
	fprintf(f, ", %d stream%s, %d warm-up steps, %ld elements\n", p->nstreams, p->nstreams > 1 ? "s" : "",
	        p->warm, p->count);
	for (int i = 0; i < p->nops; i++) {
		const struct hf_op *o = &p->ops[i];
		fprintf(f, "  op %d: %s on %s, stream %d", i, hf_op_name(o->kind), hf_comm_name(o->comm), o->stream);
		if (o->kind == HF_BROADCAST || o->kind == HF_REDUCE)
			fprintf(f, ", root %d", o->root);
		fputc('\n', f);
	}
	if (p->graph != HF_EAGER)
		fprintf(f, "  ops %d-%d in a CUDA graph launched on stream 0, %s\n", p->g0, p->g1,
		        p->graph == HF_GRAPH_REPLAY ? "captured once, replayed every step" : "captured and launched every step");
	if (p->fault == HF_NONE)
		fprintf(f, "  no fault: %d steps and a clean end\n", p->warm + 2);
	else if (p->fault >= HF_G_SKIP && p->fault <= HF_G_LAST)
		fprintf(f, "  fault at step %d: rank %d, %s%s%s, graph op %d\n", p->warm + 1, p->victim,
		        hf_fault_name(p->fault), p->fault == HF_G_OTHER || p->fault == HF_G_PEER ? " " : "",
		        p->fault == HF_G_OTHER || p->fault == HF_G_PEER ? hf_gdev_name(p) : "", p->gop);
	else
		fprintf(f, "  fault at step %d: rank %d, %s, op %d\n", p->warm + 1, p->victim, hf_fault_name(p->fault), p->at);
}
