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
	[HF_HOSTFN] = "hostfn", [HF_REDOP] = "redop",
};
const char *hf_fault_name(enum hf_fault f) { return f < HF_NFAULTS ? fault_names[f] : "?"; }

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

int hf_color(const struct hf_plan *p, enum hf_comm c, int r)
{
	if (!comm_exists(p, c))
		return NCCL_SPLIT_NOCOLOR;
	return c == HF_TP ? r / p->tp : c == HF_DP ? r % p->tp : 0;
}

int hf_comm_rank(const struct hf_plan *p, enum hf_comm c, int r)
{
	if (!comm_exists(p, c))
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
	for (int g = 2; g < p->nranks; g++)
		if (p->nranks % g == 0)
			div[nd++] = g;
	p->tp = nd && pick(s, 10) < 6 ? div[pick(s, nd)] : 0;
	p->dp = p->tp && pick(s, 2);
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

/* Can fault f hit op j with victim v? Each condition is what makes the
 * construction's answer the only right one: a mismatch or a deviating
 * order needs a majority (3 or more ranks) to be told from the rest. */
static int applicable(const struct hf_plan *p, enum hf_fault f, int j, int v)
{
	const struct hf_op *o = &p->ops[j];
	int size = hf_comm_size(p, o->comm, v);
	int last = j == p->nops - 1;
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
		return !last && o->comm != HF_WORLD && !is_p2p(o->kind) && o->stream == 0 && p->nranks >= 3 &&
		       !(p->rpp > 1 && !p->threaded);
	case HF_SEND_PEER: case HF_RECV_PEER:
		return o->kind == HF_RING && size >= 3;
	case HF_DIE_INSIDE:
		return !is_p2p(o->kind);
	case HF_REDOP:
		return (o->kind == HF_ALLREDUCE || o->kind == HF_REDUCE || o->kind == HF_REDUCESCATTER) && size >= 3;
	default:
		return 0;
	}
}

int hf_plan_build(struct hf_plan *p, uint64_t seed, int nranks)
{
	uint64_t s = seed * 0x2545f4914f6cdd1dULL + 1;
	memset(p, 0, sizeof *p);
	p->seed = seed;
	build_shape(p, &s, nranks);
	build_step(p, &s);
	build_processes(p, seed); /* a stream of its own: before the fault, which depends on it */
	/* one seed in 8 healthy; otherwise a random fault that fits */
	p->fault = HF_NONE;
	p->victim = -1;
	if (pick(&s, 8) != 0) {
		/* a fault first, then an op it fits: every kind of fault
		 * as likely as the next wherever the shape allows it */
		for (int k = 0; k < 64 && p->fault == HF_NONE; k++) {
			enum hf_fault f = (enum hf_fault)(1 + pick(&s, HF_NDRAWN - 1));
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
	p->count = p->fault == HF_COUNT || p->fault == HF_DTYPE ? 32768 : 4096;
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
	case HF_DIE_BEFORE: case HF_DIE_INSIDE: case HF_EXIT: case HF_EXIT_DESTROY:
		return 1;
	case HF_SLEEP: case HF_LOCK: /* the thread that drives the rank stops */
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
	case HF_HOSTFN: k = "STREAM_BLOCKED"; break;
	case HF_REDOP: /* nothing waits: the records' disagreement is the finding */
		k = "MISMATCH";
		a->hangs = 0;
		a->keep = 1;
		break;
	default: /* the rank is gone or idle before op j */
		k = ring_from(p, p->at) ? "MISSING_RANK,P2P_UNMATCHED" : "MISSING_RANK";
		break;
	}
	snprintf(a->kinds, sizeof a->kinds, "%s", k);
}

void hf_plan_describe(const struct hf_plan *p, FILE *f)
{
	fprintf(f, "seed %llu: %d ranks", (unsigned long long)p->seed, p->nranks);
	if (p->tp)
		fprintf(f, ", tp groups of %d%s", p->tp, p->dp ? " and dp groups" : "");
	if (p->rpp > 1)
		fprintf(f, ", %d processes of %d ranks (%s)", p->nranks / p->rpp, p->rpp,
		        p->threaded ? "a thread per rank" : "one thread, ops grouped");
	fprintf(f, ", %d stream%s, %d warm-up steps, %ld elements\n", p->nstreams, p->nstreams > 1 ? "s" : "",
	        p->warm, p->count);
	for (int i = 0; i < p->nops; i++) {
		const struct hf_op *o = &p->ops[i];
		fprintf(f, "  op %d: %s on %s, stream %d", i, hf_op_name(o->kind), hf_comm_name(o->comm), o->stream);
		if (o->kind == HF_BROADCAST || o->kind == HF_REDUCE)
			fprintf(f, ", root %d", o->root);
		fputc('\n', f);
	}
	if (p->fault == HF_NONE)
		fprintf(f, "  no fault: %d steps and a clean end\n", p->warm + 2);
	else
		fprintf(f, "  fault at step %d: rank %d, %s, op %d\n", p->warm + 1, p->victim, hf_fault_name(p->fault), p->at);
}
